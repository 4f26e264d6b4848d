"""The README's "Supported node types" table cannot drift: every registered node type has one
row, and its versions (plus the versions it refuses by name) are exactly the type's versions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.versions import known_versions
from nodes import BUILTIN_NODE_CLASSES, load_class

README = Path(__file__).parents[1] / "README.md"
VERSION = r"\d+(?:\.\d+)?"
REFUSED = re.compile(rf"\bv({VERSION})(?:–v({VERSION}))? \(refused\)")


def table_rows() -> dict[str, tuple[str, str]]:
    """type id -> (versions column, not-supported column) of the table under "## Supported node types"."""
    section = README.read_text(encoding="utf-8").split("\n## Supported node types\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) != 4 or cells[0] in ("node", "---"):
            continue
        type_id = cells[1].strip("`")
        assert type_id not in rows, f"{type_id} has two rows"
        rows[type_id] = (cells[2], cells[3])
    return rows


def within(low: str, high: str | None, declared: tuple[float, ...], type_id: str) -> set[float]:
    """The declared versions a range covers; each end must be one of them."""
    ends = (float(low), float(high if high is not None else low))
    assert set(ends) <= set(declared), f"{type_id}: the range {low}–{high} names a version the type does not have"
    return {v for v in declared if ends[0] <= v <= ends[1]}


def test_every_registered_type_has_one_row_and_no_row_is_unknown() -> None:
    rows = table_rows()
    assert sorted(set(BUILTIN_NODE_CLASSES) - set(rows)) == []
    assert sorted(set(rows) - set(BUILTIN_NODE_CLASSES)) == []


@pytest.mark.parametrize("type_id", sorted(BUILTIN_NODE_CLASSES))
def test_the_row_gives_the_types_versions(type_id: str) -> None:
    versions_cell, unsupported_cell = table_rows()[type_id]
    declared = known_versions(load_class(BUILTIN_NODE_CLASSES[type_id]))
    runs: set[float] = set()
    for token in versions_cell.split(","):
        found = re.fullmatch(rf"({VERSION})(?:–({VERSION}))?", token.strip())
        assert found, f"{type_id}: versions {versions_cell!r} are not 'a, b–c'"
        runs |= within(found[1], found[2], declared, type_id)
    refused: set[float] = set()
    for low, high in REFUSED.findall(unsupported_cell):
        refused |= within(low, high or None, declared, type_id)
    assert not runs & refused, f"{type_id}: versions both run and refused"
    assert runs | refused == set(declared), f"{type_id}: the README says {versions_cell!r}, the type has {declared}"
