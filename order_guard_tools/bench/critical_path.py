"""Where a 10-new-order batch's time goes under a round trip, outside the emulator.

The batch figure measured in the emulator (``bench.batch_round_trips``) mixes three
causes: the worker's own code, the AWS SDK's work per request in the worker's process,
and the emulator, all on one machine's cores. Here the emulator is replaced by
:data:`STAND_IN`, a DynamoDB stand-in in a process of its own (off the worker's GIL), and
the same batch runs through the queue worker's own ``handle_batch`` twice:

- with its real DynamoDB client (botocore: serialise, sign, send, read, parse), and
- with :class:`AnsweringClient`, which only waits the round trip (no SDK at all), so what
  is above one round trip there is the worker's own code: parsing, grouping, its threads,
  the ``RESULT`` lines and metrics.

The SDK's CPU per request is read from the calling thread's CPU clock between botocore's
own events (:class:`SdkClock`); the worker's own CPU per batch is the process's CPU over
a batch with :class:`AnsweringClient`. Figures are medians over ``repeats`` batches (one
warm-up batch dropped); wall times in round trips.
"""

from __future__ import annotations

import io
import logging
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from botocore.config import Config

STAND_IN = """
import http.server, json, sys, time
trip = float(sys.argv[1])
class Answer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stall
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(trip)
        body = json.dumps({"ConsumedCapacity": {"TableName": request["TableName"],
                                                "CapacityUnits": 1.0}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
print(server.server_port, flush=True)
server.serve_forever()
"""
"""A stand-in for DynamoDB in a process of its own: every request waits the round trip,
then answers as a ``PutItem`` that succeeded (with the ``ConsumedCapacity`` the worker
requires). The worker's client does all its own work (serialise, sign, send, parse), as
against AWS; only the service's side is off this process (and off its GIL)."""


class AnsweringClient:
    """A DynamoDB client with no SDK: ``put_item`` waits ``round_trip_s`` (releasing the
    GIL, as a socket read does) and answers as a ``PutItem`` that succeeded."""

    def __init__(self, round_trip_s: float) -> None:
        self.round_trip_s = round_trip_s

    def put_item(self, **request: Any) -> dict[str, Any]:
        time.sleep(self.round_trip_s)
        return {"ConsumedCapacity": {"TableName": request["TableName"], "CapacityUnits": 1.0}}


class SdkClock:
    """The SDK's CPU per ``PutItem``, in seconds: the calling thread's CPU clock from
    botocore's ``provide-client-params`` event to its ``after-call`` event on one client
    (build, validate, serialise, sign, the HTTP stack's send and read, parse). A thread
    waiting on the socket uses no CPU, so the round trip and the stand-in's work are not
    in it."""

    def __init__(self, client: Any) -> None:
        self.requests: list[float] = []
        self._local = threading.local()
        self._lock = threading.Lock()
        client.meta.events.register("provide-client-params.dynamodb.PutItem", self._start)
        client.meta.events.register("after-call.dynamodb.PutItem", self._end)

    def _start(self, **_: Any) -> None:
        self._local.started = time.thread_time()

    def _end(self, **_: Any) -> None:
        spent = time.thread_time() - self._local.started
        with self._lock:
            self.requests.append(spent)


def _batches(
    environment: Mapping[str, str],
    client: Any,
    batch: Callable[[str], dict[str, Any]],
    repeats: int,
) -> tuple[list[float], list[float]]:
    """Wall and process CPU seconds of ``repeats`` batches (``batch(prefix)``: an SQS
    event of new orders whose ids start with ``prefix``) through the queue worker's
    ``handle_batch`` with ``client`` and record threads kept across batches, as
    ``queue_worker.dependencies`` builds them; one warm-up batch first, not counted."""
    from order_guard import queue_worker
    from order_guard.config import QueueWorkerSettings

    settings = QueueWorkerSettings.from_environ({**environment, "ORDERS_TABLE_NAME": "orders"})
    threads = ThreadPoolExecutor(settings.record_concurrency, thread_name_prefix="record")
    deps = queue_worker.Dependencies(dynamodb=client, settings=settings, record_threads=threads)
    handler = queue_worker.logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    stream = handler.setStream(io.StringIO())  # the RESULT lines are written, not shown
    walls: list[float] = []
    cpus: list[float] = []
    try:
        for i in range(-1, repeats):  # one batch first to warm up (connections, imports)
            event = batch(f"w{i}-{uuid.uuid4().hex[:6]}")
            cpu, started = time.process_time(), time.perf_counter()
            response = queue_worker.handle_batch(event, None, deps)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            assert response == {"batchItemFailures": []}, response
            queue_worker.metrics.clear_metrics()  # the handler flushes them after the batch
            if i >= 0:
                walls.append(wall)
                cpus.append(cpu)
    finally:
        handler.setStream(stream)
        threads.shutdown()
    return walls, cpus


SDK_CONFIGS: dict[str, Config] = {
    "as deployed": Config(),
    "parameter_validation=False": Config(parameter_validation=False),
    "user_agent set (no SDK metadata)": Config(user_agent="order-guard"),
    "both": Config(parameter_validation=False, user_agent="order-guard"),
}
"""The client as the worker builds it (``DYNAMODB_CLIENT_CONFIG``), and with the two
documented botocore settings that take work off each request (measured, not adopted:
validation keeps a malformed request a local ``ParamValidationError``, and the SDK's
user agent is how AWS tells SDK traffic apart)."""


def worker_round_trips(
    environment: Mapping[str, str],
    round_trip_s: float,
    batch: Callable[[str], dict[str, Any]],
    repeats: int,
) -> dict[str, Any]:
    """A batch of new orders (``batch``, as for :func:`_batches`) through the queue
    worker's own code, outside the emulator.

    Returns:
        ``wall``: round trips with the real DynamoDB client against :data:`STAND_IN`;
        ``sdk_cpu_ms``: that client's CPU per request (:class:`SdkClock`, median,
        milliseconds); ``sdk_configs``: both for each of :data:`SDK_CONFIGS`
        (``wall`` and ``sdk_cpu_ms`` are its ``"as deployed"``); ``worker_alone``:
        round trips with :class:`AnsweringClient` (the worker's own code and the round
        trip, no SDK); ``worker_cpu_ms``: the worker's own CPU per batch with no SDK
        (median, milliseconds).
    """
    from order_guard.config import DYNAMODB_CLIENT_CONFIG

    server = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed program
        [sys.executable, "-c", STAND_IN, str(round_trip_s)], stdout=subprocess.PIPE, text=True
    )
    configs: dict[str, dict[str, float]] = {}
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        for name, config in SDK_CONFIGS.items():
            client = boto3.client(
                "dynamodb",
                endpoint_url=f"http://127.0.0.1:{port}",
                region_name="us-east-1",
                aws_access_key_id="bench",
                aws_secret_access_key="bench",  # noqa: S106 - a stand-in checks no signature
                config=DYNAMODB_CLIENT_CONFIG.merge(config),
            )
            clock = SdkClock(client)
            walls, _ = _batches(environment, client, batch, repeats)
            counted = clock.requests[len(clock.requests) // (repeats + 1) :]  # no warm-up
            configs[name] = {
                "wall": round(statistics.median(walls) / round_trip_s, 2),
                "sdk_cpu_ms": round(statistics.median(counted) * 1000, 3),
            }
    finally:
        server.terminate()
        server.wait()
    alone, alone_cpu = _batches(environment, AnsweringClient(round_trip_s), batch, repeats)
    return {
        **configs["as deployed"],
        "sdk_configs": configs,
        "worker_alone": round(statistics.median(alone) / round_trip_s, 2),
        "worker_cpu_ms": round(statistics.median(alone_cpu) * 1000, 2),
    }
