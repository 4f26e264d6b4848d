"""Environment variables read on hot paths: every model call reads a few (credential file, keys,
reply cap)."""

from __future__ import annotations

import os


def env_value(name: str) -> str | None:
    """`os.environ.get(name)`. There a name that is not set costs two exceptions raised and caught
    (about 8k instructions, twice a set one's); read here from the mapping os.environ keeps its
    values in (every change to os.environ goes there), as os.environ itself reads it."""
    environ = os.environ
    data = getattr(environ, "_data", None)
    if type(data) is not dict:  # not CPython's os.environ (replaced by a plain mapping, say)
        return environ.get(name)
    raw = data.get(environ.encodekey(name))
    return None if raw is None else environ.decodevalue(raw)
