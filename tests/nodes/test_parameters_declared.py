"""Never silent: every parameter n8n's node descriptions give a flow, data or trigger node (facts recorded
from n8n 1.123 by tests/fixtures/n8n_parameters/extract.js) is either read by our node type or
declared unsupported with the error a workflow using it gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.registry import builtin_registry

FACTS = {type_id: versions for path in sorted((Path(__file__).parents[1] / "fixtures" / "n8n_parameters").glob("*_nodes.json"))
         for type_id, versions in json.loads(path.read_text()).items()}


@pytest.mark.parametrize("type_id", sorted(FACTS))
def test_every_n8n_parameter_is_implemented_or_declared_unsupported(type_id: str) -> None:
    node_type = builtin_registry().get(type_id)
    n8n = set().union(*map(set, FACTS[type_id].values()))
    implemented, unsupported = node_type.implemented_parameters, node_type.unsupported_parameters
    assert not n8n - implemented - set(unsupported), f"{type_id}: neither implemented nor declared unsupported"
    assert not (implemented | set(unsupported)) - n8n, f"{type_id}: declared parameters n8n does not have"
    assert not implemented & set(unsupported) and all(unsupported.values())


@pytest.mark.parametrize("type_id", sorted(FACTS))
def test_every_n8n_version_is_known(type_id: str) -> None:
    versions = {float(v) for v in FACTS[type_id]}
    known = set(builtin_registry().get(type_id).versions or (builtin_registry().get(type_id).version,))
    assert versions <= {float(v) for v in known}
