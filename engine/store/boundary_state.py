"""What a boundary holds beside the stack: the runs of nodes with several main inputs that wait for
the inputs still missing (ExecutionState.waiting) and what nodes keep between their runs in the
execution (ExecutionState.node_context: Loop Over Items' batches). Without them a resumed Merge
would have lost the input that came first, and a resumed loop its place.

A boundary whose execution holds neither is written as before: the stack's JSON list. One that
holds either is {"stack": [...], "state": {"waiting": [...], "nodeContext": {...}}}; as a delta,
the stack part is the stack's delta and the state part json_delta's encoding of the state (a
loop's processed items grow by a batch a boundary: only the batch is written).
"""

from __future__ import annotations

from typing import Any

from ..json_delta import decode, encode
from .deltas import REFERENCES

STACK = "stack"
STATE = "state"


def state_json(fields: dict[str, Any]) -> dict[str, Any] | None:
    """The waiting runs and node context of an execution (its ExecutionState's __dict__), or None
    when it has neither. Each node's context and its lists are copied: changed in place later,
    they differ from this copy and are written again at the next boundary (json_delta compares
    by identity); the items in them are shared (never changed in place)."""
    waiting, context = fields["waiting"], fields["node_context"]
    if not waiting and not context:
        return None
    return {
        "waiting": [entry.to_json(for_store=True) for entry in waiting],
        "nodeContext": {node: {key: list(value) if type(value) is list else value for key, value in kept.items()}
                        for node, kept in context.items()},
    }


def split(boundary: Any) -> tuple[list[Any], dict[str, Any] | None]:
    """A boundary's stack and state (None when it holds none)."""
    if type(boundary) is dict and STACK in boundary:
        return boundary[STACK], boundary.get(STATE)
    return boundary, None


def joined(stack: list[Any], state: dict[str, Any] | None) -> Any:
    """The boundary of this stack and state, as `split` reads it."""
    return stack if state is None else {STACK: stack, STATE: state}


def state_delta(state: dict[str, Any] | None, before: dict[str, Any] | None) -> dict[str, Any] | None:
    """The state as written in a delta from a boundary whose state was `before`."""
    if state is None or before is None:
        return state
    return encode(state, before)


def decode_boundary(value: Any, before: Any) -> Any:
    """The boundary a stored delta `value` was made from, given the boundary before it (decoded);
    its references are left for deltas.resolve_references."""
    stack, state = split(value)
    before_stack, before_state = split(before)
    return joined(decode(stack, before_stack, REFERENCES), decode(state, before_state, REFERENCES) if state is not None else None)
