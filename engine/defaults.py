"""Default factories for pydantic fields.

Pydantic reads each default factory's signature when it builds a model. For the builtin `list`
that means parsing its text signature with the tokenizer (7 ms for the first model of a
process, a quarter of a millisecond per field after); a plain function's is read at once.
"""

from __future__ import annotations

from typing import Any


def new_list() -> list[Any]:
    """A new empty list: `Field(default_factory=new_list)` (or PrivateAttr) where `list` would do."""
    return []
