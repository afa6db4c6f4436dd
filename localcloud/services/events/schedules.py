"""Schedules that fire: EventBridge rules with a ``ScheduleExpression`` (SAM's
``Schedule``) and EventBridge Scheduler schedules (``AWS::Scheduler::Schedule``, SAM's
``ScheduleV2``), in real time while the local cloud runs (:class:`Clock`, one thread that
looks every second), or at once when asked (:func:`fire`, the CLI's ``localcloud
schedule fire``).

Expressions, as EventBridge documents them ("Schedule types on EventBridge Scheduler",
"Creating a rule that runs on a schedule"):

- ``rate(N unit)``: ``minute``/``hour``/``day`` for 1, the plural otherwise; the first
  firing ``N`` units after the schedule is seen, then every ``N`` units;
- ``cron(minutes hours day-of-month month day-of-week year)``: six fields, one of the two
  day fields ``?``; day-of-week ``1``-``7`` is Sunday-Saturday (or ``SUN``-``SAT``);
  ``L`` (the month's last day, or ``6L`` its last Friday) and ``#`` (``6#3``, the third
  Friday); a year, range, list or step (``*/2``) up to 2199; ``W`` is refused by name
  (croniter has no nearest-weekday rule);
- ``at(yyyy-mm-ddThh:mm:ss)`` (Scheduler only): once.

A rule's target receives the scheduled event (``detail-type`` ``Scheduled Event``, source
``aws.events``, the rule's ARN in ``resources``, ``detail`` ``{}``), or the input the
target makes of it (:func:`~localcloud.services.events.delivery.target_input`). A
Scheduler target receives its ``Input`` with the context attributes
``<aws.scheduler.schedule-arn>``, ``<aws.scheduler.scheduled-time>``,
``<aws.scheduler.execution-id>`` and ``<aws.scheduler.attempt-number>`` filled in, or
``{}`` without one.
"""

from __future__ import annotations

import datetime
import re
import threading
import uuid
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from croniter import croniter

from localcloud.services.events import delivery
from localcloud.text import say

_RATE: Final = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_CRON: Final = re.compile(r"^cron\((.+)\)$")
_AT: Final = re.compile(r"^at\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\)$")
_UNITS: Final = {"minute": 60, "hour": 3600, "day": 86400}
TICK_S: Final = 1.0
"""How often the clock looks for a due schedule (seconds)."""


class ScheduleError(ValueError):
    """An expression EventBridge would refuse, or one the local cloud cannot schedule;
    the message names it and why."""


@dataclass(frozen=True)
class Expression:
    """A parsed schedule expression; :meth:`next_after` is its next firing."""

    text: str
    rate_s: int | None = None
    cron: str | None = None
    year: str | None = None
    at: datetime.datetime | None = None

    def next_after(self, moment: datetime.datetime, zone: str = "UTC") -> datetime.datetime | None:
        """The first firing strictly after ``moment`` (aware, UTC), or ``None`` (an ``at``
        that passed)."""
        tz = zoneinfo.ZoneInfo(zone)
        if self.rate_s is not None:
            return moment + datetime.timedelta(seconds=self.rate_s)
        if self.at is not None:
            once = self.at.replace(tzinfo=tz).astimezone(datetime.UTC)
            return once if once > moment else None
        assert self.cron is not None
        local = moment.astimezone(tz)
        for year in _years(self.year or "*", local.year):
            start = (
                local
                if year == local.year
                else datetime.datetime(year, 1, 1, tzinfo=tz) - datetime.timedelta(seconds=1)
            )
            when = croniter(self.cron, start).get_next(datetime.datetime)
            if when.year == year:
                return when.astimezone(datetime.UTC)  # type: ignore[no-any-return]
        return None


LAST_YEAR: Final = 2199
"""The last year a cron expression's year field may name (EventBridge: 1970-2199)."""


def _years(field: str, first: int) -> Iterator[int]:
    """The years from ``first`` on that a cron year field (``*``, ``2027``, ``2027-2029``,
    ``*/2``, ``2026/4``, lists of these) names, in order."""
    wanted: set[int] = set()
    for part in field.split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if base in ("*", "?"):
            low, high = (1970 if step_text else first), LAST_YEAR
        elif "-" in base:
            low_text, _, high_text = base.partition("-")
            low, high = int(low_text), int(high_text)
        else:
            low = int(base)
            high = LAST_YEAR if step_text else low
        wanted.update(range(low, high + 1, step))
    yield from sorted(year for year in wanted if first <= year <= LAST_YEAR)


def _day_of_week(field: str) -> str:
    """EventBridge's day-of-week (1 = Sunday) as croniter's (0 = Sunday)."""

    def shift(match: re.Match[str]) -> str:
        number = int(match.group(0))
        if not 1 <= number <= 7:
            raise ScheduleError(f"day-of-week {number} is not 1-7 (SUN-SAT)")
        return str(number - 1)

    last = re.fullmatch(r"(\d)L", field)
    if last:  # the last such day of the month: croniter writes it L<day>
        return f"L{shift(re.match(r'\d', last.group(1)))}"  # type: ignore[arg-type]
    head, sep, nth = field.partition("#")
    return re.sub(r"\d+", shift, head) + sep + nth


def parse(text: str) -> Expression:
    """The expression ``text`` (see the module docstring).

    Raises:
        ScheduleError: not a rate, cron or at expression as EventBridge writes them.
    """
    if match := _RATE.match(text):
        value, unit = int(match.group(1)), match.group(2)
        if value < 1:
            raise ScheduleError(f"{text}: the rate must be a positive number")
        if (value == 1) != (not unit.endswith("s")):
            raise ScheduleError(f"{text}: write {'the singular' if value == 1 else 'the plural'}")
        return Expression(text, rate_s=value * _UNITS[unit.rstrip("s")])
    if match := _AT.match(text):
        return Expression(text, at=datetime.datetime.fromisoformat(match.group(1)))
    if match := _CRON.match(text):
        fields = match.group(1).split()
        if len(fields) != 6:
            raise ScheduleError(f"{text}: a cron expression has 6 fields, not {len(fields)}")
        minutes, hours, day, month, weekday, year = fields
        if (day == "?") == (weekday == "?"):
            raise ScheduleError(f"{text}: exactly one of day-of-month and day-of-week is ?")
        if "W" in day:
            raise ScheduleError(f"{text}: W (nearest weekday) is not scheduled locally")
        weekday = "*" if weekday == "?" else _day_of_week(weekday)
        cron = " ".join([minutes, hours, "*" if day == "?" else day, month, weekday])
        if not croniter.is_valid(cron):
            raise ScheduleError(f"{text}: not a cron expression EventBridge takes")
        try:
            list(_years(year, 1970))
        except ValueError:
            raise ScheduleError(
                f"{text}: the year field {year!r} is not a year, range or step"
            ) from None
        return Expression(text, cron=cron, year=year)
    raise ScheduleError(f"{text!r} is not rate(…), cron(…) or at(…)")


def scheduled_event(rule: Any, account_id: str, region: str) -> dict[str, Any]:
    """The event a schedule rule's target receives."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": account_id,
        "time": now,
        "region": region,
        "resources": [rule.arn],
        "detail": {},
    }


def scheduler_input(schedule: Any, scheduled: datetime.datetime) -> str:
    """A Scheduler target's input with its context attributes filled in."""
    text = str(schedule.target.get("Input") or "{}")
    values = {
        "aws.scheduler.schedule-arn": schedule.arn,
        "aws.scheduler.scheduled-time": scheduled.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "aws.scheduler.execution-id": str(uuid.uuid4()),
        "aws.scheduler.attempt-number": "1",
    }
    for name, value in values.items():
        text = text.replace(f"<{name}>", value)
    return text


def _rules(account_id: str) -> Iterator[tuple[str, Any]]:
    from moto.events.models import events_backends

    for region, backend in list(events_backends[account_id].items()):
        default = backend.event_buses.get("default")
        for rule in list(default.rules.values()) if default is not None else []:
            if rule.scheduled_expression and rule.state == "ENABLED":
                yield region, rule


def _schedules(account_id: str) -> Iterator[tuple[str, Any]]:
    from moto.scheduler.models import scheduler_backends

    for region, backend in list(scheduler_backends[account_id].items()):
        for group in list(backend.schedule_groups.values()):
            for schedule in list(group.schedules.values()):
                if schedule.state == "ENABLED":
                    yield region, schedule


def fire_rule(rule: Any, account_id: str, region: str) -> None:
    """Send each of the rule's targets the scheduled event (or its input)."""
    event = scheduled_event(rule, account_id, region)
    for target in list(rule.targets):
        delivery.deliver(rule, dict(target), event)


def fire_schedule(schedule: Any, scheduled: datetime.datetime | None = None) -> None:
    """Send the schedule's target its input (with its ``SqsParameters`` and
    ``DeadLetterConfig``)."""
    when = scheduled or datetime.datetime.now(datetime.UTC)
    target = {
        key: value
        for key, value in schedule.target.items()
        if key in ("Arn", "SqsParameters", "DeadLetterConfig")
    }
    delivery.deliver(schedule, {**target, "Input": scheduler_input(schedule, when)}, {})


def fire(account_id: str, name: str, *, group: str | None = None) -> str:
    """Fire the schedule rule or Scheduler schedule named ``name`` now (a rule first; a
    Scheduler schedule of ``group``, ``default`` if none); what was fired, its ARN.

    Raises:
        KeyError: no enabled schedule of that name.
    """
    for region, rule in _rules(account_id):
        if rule.name == name and group is None:
            fire_rule(rule, account_id, region)
            return str(rule.arn)
    for _, schedule in _schedules(account_id):
        if schedule.name == name and schedule.group_name == (group or "default"):
            fire_schedule(schedule)
            return str(schedule.arn)
    raise KeyError(f"no enabled schedule rule or Scheduler schedule is named {name}")


class Clock:
    """The thread that fires every due schedule of the account (see the module
    docstring); :meth:`stop` ends it."""

    def __init__(self, account_id: str, tick_s: float = TICK_S) -> None:
        self.account_id = account_id
        self.tick_s = tick_s
        self._due: dict[tuple[str, str], datetime.datetime | None] = {}
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="schedules", daemon=True)
        self.problems: list[str] = []
        """Expressions that could not be scheduled, one line each (said once)."""

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(5)

    def tick(self, now: datetime.datetime | None = None) -> int:
        """Fire what is due at ``now`` (default: now; a test passes a later moment); how
        many fired. A schedule seen for the first time is due from ``now`` on."""
        with self._lock:
            return self._tick(now or datetime.datetime.now(datetime.UTC))

    def _tick(self, now: datetime.datetime) -> int:
        fired = 0
        seen: set[tuple[str, str]] = set()
        for region, rule in _rules(self.account_id):
            key = (str(rule.arn), str(rule.scheduled_expression))
            seen.add(key)
            if self._due_now(key, str(rule.scheduled_expression), "UTC", now):
                fire_rule(rule, self.account_id, region)
                fired += 1
        for _, schedule in _schedules(self.account_id):
            key = (str(schedule.arn), str(schedule.schedule_expression))
            seen.add(key)
            zone = str(schedule.schedule_expression_timezone or "UTC")
            if self._due_now(key, str(schedule.schedule_expression), zone, now):
                fire_schedule(schedule, now)
                fired += 1
        for gone in set(self._due) - seen:
            del self._due[gone]
        return fired

    def _due_now(self, key: tuple[str, str], text: str, zone: str, now: datetime.datetime) -> bool:
        if key not in self._due:
            try:
                self._due[key] = parse(text).next_after(now, zone)
            except ScheduleError as exc:
                self._due[key] = None
                self.problems.append(f"{key[0]}: {exc}")
                say(f"[schedules] {key[0]}: {exc}; it does not fire locally")
            return False
        due = self._due[key]
        if due is None or due > now:
            return False
        self._due[key] = parse(text).next_after(max(due, now), zone)
        return True

    def _run(self) -> None:
        while not self._stopped.wait(self.tick_s):
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - the clock keeps going; said once
                problem = f"schedules: {type(exc).__name__}: {exc}"
                if problem not in self.problems:
                    self.problems.append(problem)
                    say(f"[{problem}] (said once; the clock keeps going)")


__all__ = [
    "TICK_S",
    "Clock",
    "Expression",
    "ScheduleError",
    "fire",
    "fire_rule",
    "fire_schedule",
    "parse",
    "scheduled_event",
    "scheduler_input",
]
