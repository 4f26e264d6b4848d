"""n8n parameters a node type does not use: a run-log note naming the node and the parameter when
a workflow sets one (n8n leaves defaults out of its files, so a parameter present is one set).

`names` are the node type's `unsupported_parameters` keys that are neither refused nor otherwise
noted; `options.<name>` is an entry of the `options` collection."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.context import NodeContext, SupplyContext

_UNSET = object()


def parameters_set(parameters: Mapping[str, Any], names: Iterable[str],
                   defaults: Mapping[str, Any] | None = None) -> list[str]:
    """Those of `names` the parameters set to something other than their default (or absent)."""
    defaults = defaults or {}
    options = parameters.get("options")
    found = []
    for name in names:
        if name.startswith("options."):
            value = options.get(name[len("options."):], _UNSET) if isinstance(options, dict) else _UNSET
        else:
            value = parameters.get(name, _UNSET)
        if value is not _UNSET and value != defaults.get(name, _UNSET):
            found.append(name)
    return found


def note_ignored(ctx: NodeContext | SupplyContext, unsupported: Mapping[str, str], names: Iterable[str],
                 defaults: Mapping[str, Any] | None = None) -> None:
    """A note on the node's run-log line for each of `names` the node sets: what happens to it."""
    for name in parameters_set(ctx.node.parameters, names, defaults):
        ctx.note(f'Node "{ctx.node.name}" sets the parameter "{name}", which mini-n8n does not implement: '
                 f"{unsupported[name]}")
