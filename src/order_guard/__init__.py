"""Order Guard: idempotent queue and workflow workers for AWS Lambda.

The deployed package (``CodeUri: src/``). Handlers:

- ``order_guard.queue_worker.lambda_handler``: SQS event source mapping, partial batch
  response.
- ``order_guard.workflow_worker.lambda_handler``: Step Functions ``lambda:invoke`` task.
"""
