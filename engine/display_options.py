"""n8n's `displayOptions`: whether a parameter is shown, given the values of the other parameters.

A parameter declares `{"show": {name: [allowed values]}, "hide": {name: [values]}}` (in its
`json_schema_extra`). A name is a sibling at the same level, `/name` a top-level parameter,
`@version` the node's typeVersion. As in n8n: the parameter is shown only if every `show` name
has one of its values, and hidden if any `hide` name has one of its values. A value may be a
condition `{"_cnd": {"gte": 1.2}}` (eq, not, gte, lte, gt, lt, between, startsWith, endsWith,
includes, regex, exists). n8n declares some parameters twice under one name with different
options (a version's own prompt field); such a parameter lists the alternatives and is shown
when any of them shows it.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

_ABSENT = object()
VERSION_KEY = "@version"


def _condition_holds(condition: Mapping[str, Any], value: Any) -> bool:
    """One `_cnd` test of n8n's (unknown tests never hold)."""
    (test, wanted), = condition.items() if len(condition) == 1 else ((None, None),)
    if test == "exists":
        return value is not _ABSENT and value is not None and value != ""
    if value is _ABSENT:
        return False
    try:
        if test == "eq":
            return value == wanted
        if test == "not":
            return value != wanted
        if test == "gte":
            return value >= wanted
        if test == "lte":
            return value <= wanted
        if test == "gt":
            return value > wanted
        if test == "lt":
            return value < wanted
        if test == "between":
            return wanted["from"] <= value <= wanted["to"]
        if test == "startsWith":
            return str(value).startswith(wanted)
        if test == "endsWith":
            return str(value).endswith(wanted)
        if test == "includes":
            return wanted in str(value)
        if test == "regex":
            return re.search(wanted, str(value)) is not None
    except (TypeError, KeyError, re.error):
        return False
    return False


def _matches(value: Any, allowed: Sequence[Any]) -> bool:
    """Whether `value` (or, for a list, any element of it) is one of the allowed values or conditions."""
    candidates = value if isinstance(value, list) else [value]
    for wanted in allowed:
        if isinstance(wanted, Mapping) and "_cnd" in wanted:
            if any(_condition_holds(wanted["_cnd"], v) for v in candidates):
                return True
        elif any(v is not _ABSENT and _same(v, wanted) for v in candidates):
            return True
    return False


def _same(value: Any, wanted: Any) -> bool:
    if isinstance(value, bool) or isinstance(wanted, bool):
        return value is wanted
    if isinstance(value, (int, float)) and isinstance(wanted, (int, float)):
        return float(value) == float(wanted)
    return value == wanted


def _lookup(name: str, siblings: Mapping[str, Any], root: Mapping[str, Any], version: float,
            defaults: Mapping[str, Any]) -> Any:
    if name == VERSION_KEY:
        return version
    if name.startswith("/"):
        key = name[1:]
        return root.get(key, defaults.get(key, _ABSENT))
    return siblings.get(name, defaults.get(name, _ABSENT))


def is_displayed(display_options: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None, siblings: Mapping[str, Any],
                 root: Mapping[str, Any], version: float, defaults: Mapping[str, Any] | None = None) -> bool:
    """Whether a parameter with these `displayOptions` is shown. `siblings`: the values at its level,
    `root`: the node's parameters, `defaults`: values a sibling has when the file leaves it out."""
    if not display_options:
        return True
    if isinstance(display_options, Sequence):  # the alternatives of a parameter n8n declares twice
        return any(is_displayed(one, siblings, root, version, defaults) for one in display_options)
    defaults = defaults or {}
    for name, allowed in (display_options.get("show") or {}).items():
        if not _matches(_lookup(name, siblings, root, version, defaults), list(allowed)):
            return False
    for name, values in (display_options.get("hide") or {}).items():
        if _matches(_lookup(name, siblings, root, version, defaults), list(values)):
            return False
    return True
