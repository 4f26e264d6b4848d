"""Cron expressions as n8n's scheduler reads them: five fields (minute hour day-of-month month
day-of-week) or six with seconds first; `*`, lists, ranges, steps, month and weekday names
(Sunday is 0 or 7). When both day fields are restricted a day matching either fires, as cron does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

_MONTHS = {name: i + 1 for i, name in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DAYS = {name: i for i, name in enumerate("sun mon tue wed thu fri sat".split())}
# (lowest, highest, names) per field, seconds first
_FIELDS = ((0, 59, {}), (0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, _MONTHS), (0, 7, _DAYS))


class CronError(ValueError):
    """The expression is not a cron expression; the message says which part."""


def _number(text: str, names: dict[str, int], lo: int, hi: int, expression: str) -> int:
    value = names.get(text.lower()) if not text.isdigit() else int(text)
    if value is None or not lo <= value <= hi:
        raise CronError(f'"{text}" in "{expression}" is not a value from {lo} to {hi}')
    return value


def _field(text: str, lo: int, hi: int, names: dict[str, int], expression: str) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        spec, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) < 1:
                raise CronError(f'the step "{step_text}" in "{expression}" is not a whole number above 0')
            step = int(step_text)
        if spec in ("*", "?"):
            start, end = lo, hi
        elif "-" in spec:
            first, _, last = spec.partition("-")
            start, end = _number(first, names, lo, hi, expression), _number(last, names, lo, hi, expression)
            if end < start:
                raise CronError(f'the range "{spec}" in "{expression}" ends before it starts')
        else:
            start = _number(spec, names, lo, hi, expression)
            end = hi if step_text else start
        values.update(range(start, end + 1, step))
    return frozenset(values)


@dataclass(frozen=True)
class Cron:
    expression: str
    seconds: frozenset[int]
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day-of-month is "*"
    any_weekday: bool

    @classmethod
    def parse(cls, expression: str) -> "Cron":
        parts = str(expression).split()
        if len(parts) == 5:
            parts = ["0", *parts]
        if len(parts) != 6:
            raise CronError(f'"{expression}" has {len(parts)} fields; a cron expression has 5 or 6')
        fields = [_field(p, lo, hi, names, expression) for p, (lo, hi, names) in zip(parts, _FIELDS)]
        weekdays = frozenset(d % 7 for d in fields[5])
        return cls(expression, *fields[:5], weekdays, parts[3] in ("*", "?"), parts[5] in ("*", "?"))

    def _day_matches(self, day: datetime) -> bool:
        if day.month not in self.months:
            return False
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def next_after(self, moment: datetime) -> datetime:
        """The first time after `moment` (timezone-aware) that the expression matches, in its zone."""
        tz = moment.tzinfo
        start = moment.replace(microsecond=0) + timedelta(seconds=1)
        day = start.replace(hour=0, minute=0, second=0)
        for _ in range(366 * 8):
            if self._day_matches(day):
                today = day.date() == start.date()
                for hour in sorted(self.hours):
                    if today and hour < start.hour:
                        continue
                    for minute in sorted(self.minutes):
                        if today and hour == start.hour and minute < start.minute:
                            continue
                        for second in sorted(self.seconds):
                            candidate = datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=tz)
                            if candidate >= start:
                                return candidate
            day = (day + timedelta(days=1)).replace(hour=0, minute=0, second=0)
        raise CronError(f'"{self.expression}" never matches')
