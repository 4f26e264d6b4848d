"""The globals a Python Code node's code sees, as n8n's Pyodide sandbox gives them, built in the
Code Tool's child process from plain JSON (imports nothing from mini-n8n).

n8n hands the code JavaScript objects that read both ways (`item.json.name`, `item["json"]["name"]`)
and its `$` globals renamed `_`: `_input` (all, first, last, item), `_json`, `_binary`,
`_('Node')` (all, first, last, item), `_runIndex`, `_itemIndex`, `_prevNode`, `_workflow`,
`_execution`, and `items` (Run Once for All Items) or `item` (Run Once for Each Item). What
the code returns goes back as JavaScript would see it: a Python `None` is `undefined` (a key
holding it is dropped), the objects n8n gave keep their nulls.
"""

from __future__ import annotations

from typing import Any

UNDEFINED = {"__undefined__": True}  # the top-level value `undefined`, on the wire


class JsObject(dict):  # type: ignore[type-arg]
    """A JavaScript object as Pyodide shows it: a mapping whose keys are also attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None


def from_json(value: Any) -> Any:
    if isinstance(value, dict):
        return JsObject((k, from_json(v)) for k, v in value.items())
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value


class NodeData:
    """`_input` or `_('Node')`: a node's output items (first output, last run)."""

    def __init__(self, name: str, items: list[Any] | None, paired: Any = None, problem: str | None = None) -> None:
        self._name = name
        self._items = items
        self._paired = paired
        self._problem = problem

    def _all(self) -> list[Any]:
        if self._items is None:
            raise ReferenceError(self._problem or f"Referenced node is unexecuted: {self._name}")
        return self._items

    def all(self) -> list[Any]:
        return self._all()

    def first(self) -> Any:
        items = self._all()
        return items[0] if items else None

    def last(self) -> Any:
        items = self._all()
        return items[-1] if items else None

    @property
    def item(self) -> Any:
        self._all()
        if self._paired is None:
            raise ReferenceError(self._problem or f"No paired item from {self._name} for this item")
        return self._paired


class Unavailable:
    """A global of n8n's Python sandbox mini-n8n does not give: any use of it says so."""

    def __init__(self, name: str, what: str) -> None:
        object.__setattr__(self, "_message", f"{name} ({what}) is not available in mini-n8n's Python Code node")

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise NotImplementedError(object.__getattribute__(self, "_message"))

    __call__ = __getitem__ = __str__ = __repr__ = __iter__ = __bool__ = _refuse

    def __getattr__(self, _name: str) -> Any:
        self._refuse()


UNAVAILABLE = {"_now": "Luxon's DateTime", "_today": "Luxon's DateTime", "_jmespath": "JMESPath",
               "_getWorkflowStaticData": "workflow static data"}


def globals_for(context: dict[str, Any]) -> dict[str, Any]:
    """The code's globals from the request's `context`."""
    index = int(context.get("itemIndex") or 0)
    per_item = bool(context.get("perItem"))
    if context.get("native"):  # n8n's native Python runner: plain dictionaries, one global
        plain = context.get("items") or []
        return {"_item": plain[index] if 0 <= index < len(plain) else None} if per_item else {"_items": plain}
    items = from_json(context.get("items") or [])
    current = items[index] if 0 <= index < len(items) else None
    nodes: dict[str, NodeData] = {}
    for name, data in (context.get("nodes") or {}).items():
        nodes[name] = NodeData(name, from_json(data.get("items")), from_json(data.get("item")), data.get("problem"))

    def node(name: str) -> NodeData:
        if name not in nodes:
            raise ReferenceError(f"Referenced node doesn't exist: {name}")
        return nodes[name]

    scope: dict[str, Any] = {
        "_input": NodeData("input", items, current),
        "_": node,
        "_json": current.get("json") if current is not None else None,
        "_binary": current.get("binary") if current is not None else None,
        "_itemIndex": index,
        "_runIndex": context.get("runIndex", 0),
        "_prevNode": from_json(context.get("prevNode") or {}),
        "_workflow": from_json(context.get("workflow") or {}),
        "_execution": from_json(context.get("execution") or {}),
    }
    scope.update({name: Unavailable(name, what) for name, what in UNAVAILABLE.items()})
    if per_item:
        scope["item"] = current
    else:
        scope["items"] = items
    return scope


def to_json(value: Any, given: bool = False, native: bool = False) -> Any:
    """A returned value as JavaScript sees it once Pyodide converted it (`None` in a dict of the
    code's own is `undefined`: the key goes; in a list it is `null`); the native runner sends
    JSON, where `None` is `null`."""
    if native:
        return _plain_json(value)
    if isinstance(value, JsObject):
        return {str(k): to_json(v, True) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items() if v is not None or given}
    if isinstance(value, (list, tuple)):
        return [to_json(v, given) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"the code returned a {type(value).__name__}, which is not JSON")


def _plain_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"the code returned a {type(value).__name__}, which is not JSON")
