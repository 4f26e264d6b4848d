"""JavaScript's own answers where Python's would differ: regular expressions (`new RegExp`) and
n8n's date parsing (Luxon's ISO, HTTP, RFC 2822 and SQL formats, then `Date.parse`). Both run in
the embedded engine expressions use, in the workflow's time zone, as n8n runs them."""

from __future__ import annotations

from typing import Any

from engine.expressions import Scope, evaluate
from engine.run_data import ExecutionState

# n8n's parseRegexPattern: "/body/flags" or a bare pattern; ignoreCase adds the i flag
_REGEX = ("={{ (() => { const v = $json; try { const m = String(v.p ?? '').match(/^\\/(.*?)\\/([gimusy]*)$/); "
          "let re; if (!m) { re = new RegExp(String(v.p ?? ''), v.i ? 'i' : ''); } "
          "else { let f = m[2]; if (v.i && !f.includes('i')) f += 'i'; re = new RegExp(m[1], f); } "
          "return { ok: v.m ? !!String(v.s ?? '').match(re) : re.test(v.s) }; "
          "} catch (e) { return { error: String(e && e.message || e) }; } })() }}")

# n8n's tryToParseDateTime for a value that is not already a DateTime: milliseconds, or null
_DATE = ("={{ (() => { const s = String($json.v).trim(); const o = { setZone: true }; "
         "for (const d of [DateTime.fromISO(s, o), DateTime.fromHTTP(s, o), DateTime.fromRFC2822(s, o), "
         "DateTime.fromSQL(s, o), DateTime.fromMillis(Date.parse(s))]) { if (d.isValid) return d.toMillis(); } "
         "return null; })() }}")

# IF v1 / Switch v1-v2: `new Date(value).getTime()` (NaN comes back as null)
_JS_DATE = "={{ (() => { const t = new Date($json.v).getTime(); return isNaN(t) ? null : t; })() }}"


class JsValues:
    """Regex tests and date parsing for one node run, in its workflow's time zone."""

    def __init__(self, state: ExecutionState | None) -> None:
        self._state = state

    def _run(self, template: str, data: dict[str, Any]) -> Any:
        scope = Scope(items=[{"json": data}], state=self._state)
        return evaluate(template, scope=scope, item_index=0)

    def regex_test(self, pattern: Any, text: Any, ignore_case: bool, *, match: bool = False) -> bool:
        """`re.test(text)` (or `!!String(text).match(re)` with `match`); a bad pattern raises
        ValueError with JavaScript's message."""
        reply = self._run(_REGEX, {"p": pattern, "s": text, "i": ignore_case, "m": match})
        if isinstance(reply, dict) and "error" in reply:
            raise ValueError(reply["error"])
        return bool(isinstance(reply, dict) and reply.get("ok"))

    def date_millis(self, value: Any) -> float | None:
        """The value read as n8n's filter reads a date; None when it is not one."""
        return self._run(_DATE, {"v": value})

    def js_date_millis(self, value: Any) -> float | None:
        """`new Date(value).getTime()`; None for an invalid date."""
        return self._run(_JS_DATE, {"v": value})
