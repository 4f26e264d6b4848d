"""Schedule Trigger: starts a workflow on a schedule, as n8n's node (v1–v1.3).

Its rules (`rule.interval`: every N seconds, minutes, hours, days, weeks, months, or a cron
expression) become cron expressions as n8n makes them (`crons`); `mini-n8n serve` fires them
from one scheduler in the main process. Run by hand (editor, `mini-n8n run`) it starts with
the item for now, as n8n's manual run does. The item (`schedule_item`) is n8n's: timestamp,
readable date and time, day of week, ... in the workflow's timezone.
"""

import os
import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from engine.workflow import Workflow

from .cron import Cron, CronError

DEFAULT_TIMEZONE = "America/New_York"  # n8n's when neither the workflow nor GENERIC_TIMEZONE names one
_LIMITS = {"seconds": (1, 59, "Seconds must be in range 1-59"), "minutes": (1, 59, "Minutes must be in range 1-59"),
           "hours": (1, 23, "Hours must be in range 1-23"), "days": (1, 31, "Days must be in range 1-31")}


class ScheduleParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    rule: Any = Field(default_factory=lambda: {"interval": [{"field": "days"}]}, title="Trigger Rules",
                      json_schema_extra={"multiline": True})


def timezone_name(workflow: Workflow) -> str:
    """The workflow's timezone (settings.timezone), else $GENERIC_TIMEZONE, else n8n's default."""
    name = workflow.settings.get("timezone")
    if not isinstance(name, str) or not name or name == "DEFAULT":
        name = os.environ.get("GENERIC_TIMEZONE") or DEFAULT_TIMEZONE
    return name


def zone(name: str, node: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise NodeOperationError(f'Unknown timezone "{name}"', node=node) from None


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _offset(moment: datetime) -> str:
    minutes = int(moment.utcoffset().total_seconds() // 60)  # type: ignore[union-attr]
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def schedule_item(moment: datetime, timezone: str) -> Item:
    """The item n8n's Schedule Trigger emits at `moment` (aware, in `timezone`), formatted as moment.js does."""
    hour12 = moment.hour % 12 or 12
    time_text = f"{hour12}:{moment.minute:02d}:{moment.second:02d} {'am' if moment.hour < 12 else 'pm'}"
    offset = _offset(moment)
    return {"json": {
        "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}{offset}",
        "Readable date": f"{_MONTH_NAMES[moment.month - 1]} {_ordinal(moment.day)} {moment.year}, {time_text}",
        "Readable time": time_text,
        "Day of week": _DAY_NAMES[moment.weekday()],
        "Year": f"{moment.year:04d}",
        "Month": _MONTH_NAMES[moment.month - 1],
        "Day of month": f"{moment.day:02d}",
        "Hour": f"{moment.hour:02d}",
        "Minute": f"{moment.minute:02d}",
        "Second": f"{moment.second:02d}",
        "Timezone": f"{timezone} (UTC{offset})",
    }}


@dataclass(frozen=True)
class Rule:
    """One rule of the node: its cron expression, and for an every-N hours/days/weeks/months rule
    (N > 1) the recurrence n8n checks when the cron fires."""

    cron: Cron
    every: int = 1
    unit: str | None = None  # hours, days, weeks, months when every > 1


def _intervals(parameters: dict[str, Any]) -> list[dict[str, Any]]:
    rule = parameters.get("rule", {"interval": [{"field": "days"}]})
    intervals = rule.get("interval") if isinstance(rule, dict) else None
    return [i for i in intervals if isinstance(i, dict)] if isinstance(intervals, list) else []


def _whole(value: Any, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except (TypeError, ValueError):
        return default


def rules(parameters: dict[str, Any], version: float, node: str) -> list[Rule]:
    """The node's rules as n8n builds them (toCronExpression, intervalToRecurrence); a time left to
    chance in n8n (the second of a minutes rule) is drawn at random as there. Invalid rules and
    cron expressions are errors in n8n's words."""
    out: list[Rule] = []
    for index, interval in enumerate(_intervals(parameters)):
        field = interval.get("field", "days")
        amount = {"seconds": _whole(interval.get("secondsInterval"), 30), "minutes": _whole(interval.get("minutesInterval"), 5),
                  "hours": _whole(interval.get("hoursInterval"), 1), "days": _whole(interval.get("daysInterval"), 1),
                  "weeks": _whole(interval.get("weeksInterval"), 1), "months": _whole(interval.get("monthsInterval"), 1)}
        if version >= 1.3 and field in _LIMITS:
            lo, hi, message = _LIMITS[field]
            if not lo <= amount[field] <= hi:
                raise NodeOperationError("Invalid interval", node=node, description=message)
        if version >= 1.3 and field == "months" and amount["months"] < 1:
            raise NodeOperationError("Invalid interval", node=node, description="Months must be larger than 0")
        second = random.randint(0, 59)
        minute = _whole(interval.get("triggerAtMinute"), 0)
        hour = _whole(interval.get("triggerAtHour"), 0)
        if field == "cronExpression":
            expression = str(interval.get("expression", ""))
        elif field == "seconds":
            expression = f"*/{amount['seconds']} * * * * *"
        elif field == "minutes":
            expression = f"{second} */{amount['minutes']} * * * *"
        elif field == "hours":
            expression = f"{second} {minute} */{amount['hours']} * * *"
        elif field == "days":
            expression = f"{second} {minute} {hour} * * *"
        elif field == "weeks":
            days = interval.get("triggerAtDay", [0])
            days = days if isinstance(days, list) else [days]
            expression = f"{second} {minute} {hour} * * {','.join(str(d) for d in days) or '*'}"
        elif field == "months":
            day = _whole(interval.get("triggerAtDayOfMonth"), 1)
            expression = f"{second} {minute} {hour} {day} */{amount['months']} *"
        else:
            raise NodeOperationError(f'Schedule rule {index + 1} has the interval "{field}", which n8n does not have',
                                     node=node)
        try:
            cron = Cron.parse(expression)
        except CronError as exc:
            raise NodeOperationError("Invalid cron expression", node=node,
                                     description=f"{exc}. More information on how to build them at https://crontab.guru/") from None
        every = amount.get(field, 1) if field in ("hours", "days", "weeks", "months") else 1
        out.append(Rule(cron, every, field if every != 1 else None))
    return out


class RecurrenceCheck:
    """n8n's recurrenceCheck: an every-N hours/days/weeks/months rule fires when N units passed
    since it last fired (kept per rule, for the life of the scheduler)."""

    def __init__(self) -> None:
        self.last: dict[int, int] = {}

    def should_fire(self, index: int, rule: Rule, moment: datetime) -> bool:
        if rule.unit is None:
            return True
        if rule.unit == "hours":
            value, size = moment.hour, 24
        elif rule.unit == "days":
            value, size = moment.timetuple().tm_yday, 365
        elif rule.unit == "weeks":
            value, size = _locale_week(moment), 52
        else:
            value, size = moment.month - 1, 12
        last = self.last.get(index)
        if last is None or value == (rule.every + last) % size or (rule.unit == "weeks" and value == last):
            self.last[index] = value
            return True
        return False


def _locale_week(moment: datetime) -> int:
    """moment.js's week() in the default (en) locale: weeks start on Sunday; week 1 holds 1 January."""
    jan1 = moment.replace(month=1, day=1)
    first_sunday_offset = (jan1.isoweekday() % 7)  # days since the Sunday starting week 1
    return (moment.timetuple().tm_yday - 1 + first_sunday_offset) // 7 + 1


class ScheduleTrigger(NodeType):
    type = "n8n-nodes-base.scheduleTrigger"
    version = 1.3
    versions = (1, 1.1, 1.2, 1.3)
    display_name = "Schedule Trigger"
    default_name = "Schedule Trigger"
    description = "Starts the workflow on a schedule (fired by `mini-n8n serve`)"
    group = "Triggers"
    icon = "schedule"
    inputs = ()
    outputs = (PortSpec(MAIN),)
    is_trigger = True
    Params = ScheduleParams
    implemented_parameters = frozenset({"rule"})

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        node = ctx.node.name
        version = float(ctx.node.typeVersion)
        rules(ctx.node.parameters, version, node)  # a run by hand checks them as n8n's does
        if ctx.items and ctx.items != [{"json": {}}]:  # fired by the scheduler, or given (--input, pinned)
            return [[{**item, "json": dict(item.get("json", {}))} for item in ctx.items]]
        name = timezone_name(ctx.workflow)
        return [[schedule_item(datetime.now(zone(name, node)), name)]]
