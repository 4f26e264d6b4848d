"""An expression parameter split into its text and `{{ code }}` parts, as n8n splits it.

A parameter that is exactly one `{{ }}` (nothing before or after, not even a space) keeps its
value's type; any text around the segments makes the result a string. Simple `$json` paths are
also recognised here so the evaluator can read them without entering the JavaScript engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

_JSON_PATH = re.compile(
    r"""^\s*\$json(?P<rest>(?:\s*(?:\.[A-Za-z_$][\w$]*|\[\s*\d+\s*\]|\[\s*'[^'\\]*'\s*\]|\[\s*"[^"\\]*"\s*\]))*)\s*$"""
)
_STEP = re.compile(r"""\s*(?:\.(?P<attr>[A-Za-z_$][\w$]*)|\[\s*(?P<index>\d+)\s*\]|\[\s*(?P<q>['"])(?P<key>[^'"\\]*)(?P=q)\s*\])""")

Path = tuple[str | int, ...]


@dataclass
class Template:
    """Text and code parts of one expression string (the leading `=` removed)."""

    source: str
    parts: list[tuple[bool, str]]  # (is_code, text)
    paths: list[Path | None] = field(default_factory=list)  # per part: a plain `$json` path, if it is one

    @property
    def single(self) -> bool:
        """One code part and nothing else: the result keeps its type."""
        return len(self.parts) == 1 and self.parts[0][0]

    def segment(self, index: int) -> str:
        return "{{" + self.parts[index][1] + "}}"


def split(body: str) -> list[tuple[bool, str]]:
    """`Hello {{ $json.name }}!` -> [(False, "Hello "), (True, " $json.name "), (False, "!")]."""
    parts: list[tuple[bool, str]] = []
    pos = 0
    while True:
        start = body.find("{{", pos)
        if start < 0:
            break
        end = body.find("}}", start + 2)
        if end < 0:
            break  # an unclosed `{{` stays text
        if start > pos:
            parts.append((False, body[pos:start]))
        parts.append((True, body[start + 2:end]))
        pos = end + 2
    if pos < len(body) or not parts:
        parts.append((False, body[pos:]))
    return parts


def json_path(code: str) -> Path | None:
    """The steps of a plain `$json.a[0]["b c"]` read, or None for anything else."""
    match = _JSON_PATH.match(code)
    if match is None:
        return None
    steps: list[str | int] = []
    for step in _STEP.finditer(match.group("rest")):
        if step.group("attr") is not None:
            steps.append(step.group("attr"))
        elif step.group("index") is not None:
            steps.append(int(step.group("index")))
        else:
            steps.append(step.group("key"))
    return tuple(steps)


@lru_cache(maxsize=4096)
def parse(value: str) -> Template:
    """The template of an expression string such as `={{ $json.x }} items` (cached by text)."""
    body = value[1:]
    parts = split(body)
    return Template(body, parts, [json_path(text) if is_code else None for is_code, text in parts])
