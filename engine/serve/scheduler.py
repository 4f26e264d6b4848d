"""The one scheduler of a server: fires each served Schedule Trigger's rules in the serve main
process (never in a worker, so a rule fires once however many workers run), each firing a new
execution (n8n's mode "trigger") handed to the runner.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import NodeOperationError
from .jobs import Job
from .workflows import ScheduleEntry

log = logging.getLogger("mini_n8n.serve")


@dataclass
class _Planned:
    entry: ScheduleEntry
    index: int
    rule: Any  # nodes.triggers.schedule_trigger.Rule
    zone: ZoneInfo
    zone_name: str
    check: Any  # nodes.triggers.schedule_trigger.RecurrenceCheck, one per trigger
    due: datetime


class Scheduler:
    """Plans every rule of the given triggers; `run()` fires them until cancelled."""

    def __init__(self, entries: list[ScheduleEntry], runner: Any) -> None:
        from nodes.triggers.schedule_trigger import RecurrenceCheck, rules, timezone_name

        self.runner = runner
        self.warnings: list[str] = []
        self.fired = 0
        self._planned: list[_Planned] = []
        for entry in entries:
            node = entry.trigger
            zone_name = timezone_name(entry.workflow)
            try:
                zone = ZoneInfo(zone_name)
                planned = rules(node.parameters, float(node.typeVersion), node.name)
            except NodeOperationError as exc:
                detail = f" ({exc.description})" if exc.description else ""
                self.warnings.append(f'{entry.source}: the Schedule Trigger "{node.name}" is not scheduled: {exc}{detail}')
                continue
            except (ValueError, KeyError) as exc:
                self.warnings.append(f'{entry.source}: the Schedule Trigger "{node.name}" is not scheduled: unknown timezone '
                                     f'"{zone_name}" ({exc})')
                continue
            if not planned:
                self.warnings.append(f'{entry.source}: the Schedule Trigger "{node.name}" has no rules; not scheduled')
            check = RecurrenceCheck()
            now = datetime.now(zone)
            for index, rule in enumerate(planned):
                try:
                    due = rule.cron.next_after(now)
                except ValueError as exc:
                    self.warnings.append(f'{entry.source}: rule {index + 1} of the Schedule Trigger "{node.name}" is not '
                                         f"scheduled: {exc}")
                    continue
                self._planned.append(_Planned(entry, index, rule, zone, zone_name, check, due))

    @property
    def rules(self) -> int:
        return len(self._planned)

    def describe(self) -> list[str]:
        return [f'{p.entry.trigger.name} ({p.entry.workflow.name}): "{p.rule.cron.expression}" in {p.zone_name}, '
                f"next at {p.due.isoformat()}" for p in self._planned]

    async def run(self) -> None:
        while self._planned:
            soonest = min(self._planned, key=lambda p: p.due)
            wait = (soonest.due - datetime.now(soonest.zone)).total_seconds()
            if wait > 0:
                await asyncio.sleep(min(wait, 60.0))  # looked at again at least each minute (clock changes)
                continue
            try:
                soonest.due = soonest.rule.cron.next_after(max(datetime.now(soonest.zone), soonest.due))
            except ValueError as exc:  # a rule with no time left to fire at: dropped, said so
                log.error("schedule %s of %s stops: %s", soonest.entry.trigger.name, soonest.entry.source, exc)
                self._planned.remove(soonest)
            await self._fire(soonest)

    async def _fire(self, planned: _Planned) -> None:
        from nodes.triggers.schedule_trigger import schedule_item

        moment = datetime.now(planned.zone)
        if not planned.check.should_fire(planned.index, planned.rule, moment):
            return
        entry = planned.entry
        job = Job.new(entry.workflow, entry.trigger.name, [schedule_item(moment, planned.zone_name)],
                      uuid.uuid4().hex[:12], mode="trigger")
        try:
            await self.runner.start(job)
            self.fired += 1
            log.info("schedule %s of %s fired: execution %s", entry.trigger.name, entry.source, job.execution_id)
        except Exception as exc:  # the broker is away: this firing is lost, as n8n loses a missed one
            log.error("schedule %s of %s could not start an execution: %s", entry.trigger.name, entry.source, exc)
