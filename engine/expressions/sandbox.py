"""The JavaScript engine expressions run in: QuickJS (the `quickjs-ng` package), one context per thread.

The context has no file, network or process access (QuickJS without its std/os modules); each
evaluation has a time limit and the context a memory limit. n8n's runtime (engine/expressions/js)
and Luxon and jmespath (installed from the npm registry by `make venv`) are loaded once per
context; each template is compiled once and then run per item.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import threading
import unicodedata
from datetime import datetime, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .template import Template

JS_DIR = Path(__file__).with_name("js")
DEFAULT_TIMEZONE = "America/New_York"  # n8n's default GENERIC_TIMEZONE
TIME_LIMIT_S = float(os.environ.get("MINI_N8N_EXPRESSION_TIMEOUT_MS", "2000")) / 1000.0
MEMORY_LIMIT_MB = int(os.environ.get("MINI_N8N_EXPRESSION_MEMORY_MB", "128"))
# (file inside node_modules, what it provides) loaded when present
MAX_REQUEST_ROUNDS = 100
MAX_TEMPLATES = 5000
MEMORY_MESSAGE = f"the expression needed more than the {MEMORY_LIMIT_MB} MB of memory an expression may use"
LIBRARIES = (("luxon/build/global/luxon.js", "DateTime, Duration, $now, $today"), ("jmespath/jmespath.js", "$jmespath"))


class Interrupted(Exception):
    """The engine stopped an evaluation: it ran out of time or memory."""


def instance_timezone() -> str:
    """The zone a workflow without `settings.timezone` uses: GENERIC_TIMEZONE, else n8n's default."""
    return os.environ.get("GENERIC_TIMEZONE") or DEFAULT_TIMEZONE


def js_module_dirs() -> list[Path]:
    """Where Luxon and jmespath are looked for: MINI_N8N_JS_MODULES, then the venv's js/node_modules."""
    dirs = [Path(p) for p in os.environ.get("MINI_N8N_JS_MODULES", "").split(os.pathsep) if p]
    dirs.append(Path(sys.prefix) / "js" / "node_modules")
    return dirs


def _library(relative: str) -> str | None:
    for base in js_module_dirs():
        path = base / relative
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None


_WEEK_S = 7 * 24 * 3600
_TABLE_FROM = -4102444800  # 1840-01-01T00:00:00Z: local mean times (LMT) of most zones are still in force
_TABLE_TO = 4102444800  # 2100-01-01T00:00:00Z
_EARLIEST_MS = -8_640_000_000_000_000  # JavaScript's earliest date: the first period reaches back to it


def _period(zone: tzinfo, epoch_s: float) -> tuple[float, str]:
    """The UTC offset in minutes (fractional for LMT's seconds, as V8's Intl gives Luxon) and abbreviation."""
    local = datetime.fromtimestamp(epoch_s, zone)
    offset = local.utcoffset()
    seconds = int(offset.total_seconds()) if offset is not None else 0
    return (seconds // 60 if seconds % 60 == 0 else seconds / 60), (local.tzname() or "")


@lru_cache(maxsize=64)
def zone_table(name: str) -> str | None:
    """A zone's periods up to 2100 as JSON, [[start ms, UTC offset in minutes, abbreviation]],
    from Python's tz database; None for a zone that does not exist."""
    if name.upper() in ("UTC", "ETC/UTC", "GMT", "Z"):
        return json.dumps([[_EARLIEST_MS, 0, "UTC"]])
    try:
        zone: tzinfo = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    periods = [[_EARLIEST_MS, *_period(zone, _TABLE_FROM)]]
    t = _TABLE_FROM
    while t < _TABLE_TO:  # weekly steps, then bisection to the second of each change
        nxt = t + _WEEK_S
        current = _period(zone, nxt)
        if current != tuple(periods[-1][1:]):
            lo, hi = t, nxt
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _period(zone, mid) == tuple(periods[-1][1:]):
                    lo = mid
                else:
                    hi = mid
            periods.append([hi * 1000, *current])
        t = nxt
    return json.dumps(periods)


def util(op: str, text: str, arg: str) -> str:
    """String helpers the runtime asks the host for: hashing, base64, transliteration."""
    if op == "hash":
        algo = {"sha3": "sha3_512"}.get(arg, arg)
        if algo == "base64":
            return base64.b64encode(text.encode()).decode()
        if algo not in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_512", "ripemd160"):
            return ""
        return hashlib.new(algo, text.encode()).hexdigest()
    if op == "base64Encode":
        return base64.b64encode(text.encode()).decode()
    if op == "base64Decode":
        return base64.b64decode(text.encode() + b"===").decode("utf-8", errors="replace")
    if op == "transliterate":
        decomposed = unicodedata.normalize("NFKD", text)
        return "".join(c for c in decomposed if not unicodedata.combining(c)).encode("ascii", "ignore").decode()
    return ""


class Runtime:
    """One QuickJS context with n8n's runtime loaded; templates compiled once, run per item."""

    def __init__(self) -> None:
        import quickjs  # here: loading the JS engine waits for the first expression that needs it

        self._error = quickjs.JSException
        ctx = quickjs.Context()
        ctx.eval((JS_DIR / "intl.js").read_text(encoding="utf-8"))
        self.missing: list[str] = []
        for relative, provides in LIBRARIES:
            source = _library(relative)
            if source is None:
                self.missing.append(f"{relative.split('/')[0]} ({provides})")
            else:
                ctx.eval(source)
        ctx.eval((JS_DIR / "runtime.js").read_text(encoding="utf-8"))
        ctx.eval((JS_DIR / "extensions.js").read_text(encoding="utf-8"))
        self._compile = ctx.eval("__n8n.compile")
        self._run = ctx.eval("__n8n.run")
        self._set_item = ctx.eval("__n8n.setItem")
        self._enter = ctx.eval("__n8n.enter")
        self._provide = ctx.eval("__n8n.provide")
        self._forget = ctx.eval("__n8n.forget")
        self._compile_body = ctx.eval("__n8n.compileBody")
        self._run_body = ctx.eval("__n8n.runBody")
        self._body_result = ctx.eval("__n8n.bodyResult")
        ctx.eval("delete globalThis.__n8n")
        ctx.set_memory_limit(MEMORY_LIMIT_MB * 1024 * 1024)
        ctx.set_time_limit(TIME_LIMIT_S)
        self._ctx = ctx
        self.compiled: dict[str, int] = {}
        self._zones: set[str] = set()  # zones whose tables the context holds
        self.scope: Any = None  # the scope last entered (engine.expressions.scope.Scope)
        self.item_key: Any = None
        self.item_index = -1
        self.generation = 0

    def enter(self, scope: Any, meta_json: str, zone: str) -> None:
        """Make `scope` the one expressions read from (its node, run, workflow and time zone)."""
        self.scope = scope
        self.generation = scope.generation
        self.item_key = None
        self.item_index = -1
        self._call(self._enter, meta_json, zone)
        if zone not in self._zones:
            self.provide(f"tz\u0000{zone}", self._zone_reply(zone))

    def forget(self, generation: int) -> None:
        """Drop the answers read so far in this scope (the run has moved on since)."""
        self.generation = generation
        self._call(self._forget)

    def set_item(self, key: Any, item_json: str, item_index: int) -> None:
        self.item_key = key
        self.item_index = item_index
        self._call(self._set_item, item_json, item_index)

    def provide(self, key: str, reply: str) -> None:
        if key.startswith("tz\u0000"):
            self._zones.add(key[3:])
        self._call(self._provide, key, reply)

    def run(self, template: Template, answer: Callable[[str, list[Any]], str]) -> str:
        """Evaluate a template against the current scope and item: the runtime's encoded result.
        Data the template asks for is answered by `answer(op, args)` and the template run again."""
        tid = self.compiled.get(template.source)
        if tid is None:
            parts = json.dumps([[1 if is_code else 0, text] for is_code, text in template.parts])
            tid = self.compiled[template.source] = self._call(self._compile, parts)
        for _ in range(MAX_REQUEST_ROUNDS):
            reply: str = self._call(self._run, tid)
            if not reply.startswith("n"):
                return reply
            self._answer_needs(reply, answer)
        raise Interrupted(f"the expression kept asking for new data ({MAX_REQUEST_ROUNDS} rounds)")

    def run_body(self, body: str, per_item: bool, answer: Callable[[str, list[Any]], str], time_limit_s: float) -> str:
        """Run a Code node's JavaScript (a function body, awaited) against the current scope and
        item, within `time_limit_s`: "u" (undefined), or JSON text of {value, logs} or {error}."""
        key = ("body-each\u0000" if per_item else "body-all\u0000") + body
        tid = self.compiled.get(key)
        if tid is None:
            tid = self.compiled[key] = self._call(self._compile_body, body, per_item)
        self._ctx.set_time_limit(time_limit_s)
        try:
            return self._body_rounds(tid, answer)
        except Interrupted as exc:
            text = str(exc)
            if text.startswith("the expression ran longer"):
                text = f"the code ran longer than {time_limit_s * 1000:.0f} ms (an endless loop?)"
            raise Interrupted(text.replace("an expression may use", "the code may use")) from None
        finally:
            self._ctx.set_time_limit(TIME_LIMIT_S)

    def _body_rounds(self, tid: int, answer: Callable[[str, list[Any]], str]) -> str:
        for _ in range(MAX_REQUEST_ROUNDS):
            self._call(self._run_body, tid)
            while self._call(self._ctx.execute_pending_job):
                pass
            reply: str = self._call(self._body_result)
            if reply == "w":
                raise Interrupted("the code awaits something that never settles")
            if not reply.startswith("n"):
                return reply
            self._answer_needs(reply, answer)
        raise Interrupted(f"the code kept asking for new data ({MAX_REQUEST_ROUNDS} rounds)")

    def _answer_needs(self, reply: str, answer: Callable[[str, list[Any]], str]) -> None:
        """Provide what a run asked for ("n" and a JSON list of needs): time zones and n8n's
        helpers here, everything else (node data, $fromAI...) through `answer`."""
        for need in json.loads(reply[1:]):
            op, args = need["op"], need["args"]
            if op == "tz":
                found = self._zone_reply(str(args[0]))
            elif op == "util":
                found = "j" + json.dumps(util(*(str(a) for a in args)))
            else:
                found = answer(op, args)
            self.provide(need["key"], found)

    @staticmethod
    def _zone_reply(zone: str) -> str:
        table = zone_table(zone)
        if table is None:
            return "e" + json.dumps({"message": f"Invalid time zone specified: {zone}"})
        return "j" + table

    def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except self._error as exc:
            text = str(exc).splitlines()[0] if str(exc) else "InternalError"
            if "out of memory" in text:
                self._ctx.gc()
                raise Interrupted(MEMORY_MESSAGE) from None
            if "interrupted" in text:
                raise Interrupted(f"the expression ran longer than {TIME_LIMIT_S * 1000:.0f} ms (an endless loop?)") from None
            raise Interrupted(text) from None


class _PerThread(threading.local):
    runtime: Runtime | None = None


_local = _PerThread()


def runtime() -> Runtime:
    """This thread's runtime (a QuickJS context is used from the thread that made it); a new one
    once the compiled templates of this one fill MAX_TEMPLATES (they live as long as it does)."""
    if _local.runtime is None or len(_local.runtime.compiled) >= MAX_TEMPLATES:
        _local.runtime = Runtime()
    return _local.runtime
