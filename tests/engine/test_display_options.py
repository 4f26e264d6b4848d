"""n8n's displayOptions semantics: every `show` name must match, any `hide` name hides;
`/name` reads the top level, `@version` the node's version, `_cnd` conditions compare."""

from __future__ import annotations

from engine.display_options import is_displayed
from engine.registry import builtin_registry


def test_show_needs_every_name_to_match() -> None:
    options = {"show": {"sendBody": [True], "specifyBody": ["json"]}}
    assert is_displayed(options, {"sendBody": True, "specifyBody": "json"}, {}, 1)
    assert not is_displayed(options, {"sendBody": True, "specifyBody": "keypair"}, {}, 1)
    assert not is_displayed(options, {"specifyBody": "json"}, {}, 1)  # absent and no default: not shown
    assert is_displayed(options, {"specifyBody": "json"}, {}, 1, defaults={"sendBody": True})


def test_hide_on_any_match_and_root_names() -> None:
    options = {"hide": {"/includeOtherFields": [False], "mode": ["raw"]}}
    assert not is_displayed(options, {"mode": "manual"}, {"includeOtherFields": False}, 3.4)
    assert not is_displayed(options, {"mode": "raw"}, {"includeOtherFields": True}, 3.4)
    assert is_displayed(options, {"mode": "manual"}, {"includeOtherFields": True}, 3.4)


def test_version_values_and_conditions() -> None:
    assert is_displayed({"show": {"@version": [1, 1.1]}}, {}, {}, 1.1)
    assert not is_displayed({"show": {"@version": [1]}}, {}, {}, 1.2)
    newer = {"show": {"@version": [{"_cnd": {"gte": 1.1}}]}}
    assert is_displayed(newer, {}, {}, 1.2) and not is_displayed(newer, {}, {}, 1)
    assert is_displayed({"show": {"@version": [{"_cnd": {"between": {"from": 1, "to": 2}}}]}}, {}, {}, 1.5)
    assert not is_displayed({"show": {"@version": [{"_cnd": {"unknownTest": 1}}]}}, {}, {}, 1.5)


def test_alternatives_show_when_any_does() -> None:
    prompt = [{"show": {"promptType": ["define"]}}, {"show": {"@version": [{"_cnd": {"lte": 1.2}}]}}]
    assert is_displayed(prompt, {"promptType": "define"}, {}, 3)
    assert not is_displayed(prompt, {"promptType": "auto"}, {}, 3)
    assert is_displayed(prompt, {"promptType": "auto"}, {}, 1.1)


def test_booleans_are_not_numbers_and_lists_match_any_element() -> None:
    assert not is_displayed({"show": {"flag": [True]}}, {"flag": 1}, {}, 1)
    assert is_displayed({"show": {"tags": ["b"]}}, {"tags": ["a", "b"]}, {}, 1)


def test_declared_options_name_parameters_that_exist() -> None:
    """Every displayOptions name a built-in node declares is a parameter of that node (or @version)."""
    registry = builtin_registry()
    checked = 0
    for node_type in registry.types():
        type_id = node_type.type
        schema = node_type.Params.model_json_schema()
        levels = [schema, *schema.get("$defs", {}).values()]
        for level in levels:
            names = set(level.get("properties", {}))
            for prop in level.get("properties", {}).values():
                declared = prop.get("displayOptions") or {}
                alternatives = declared if isinstance(declared, list) else [declared]
                for rule in (r for alternative in alternatives for r in alternative.values()):
                    for name in rule:
                        checked += 1
                        if name == "@version":
                            continue
                        top = set(schema.get("properties", {}))
                        assert (name[1:] in top) if name.startswith("/") else (name in names), (type_id, name)
    assert checked >= 20


def test_set_node_input_fields_per_version() -> None:
    from nodes.core.set_fields import SetParams

    props = SetParams.model_json_schema()["properties"]

    def shown(name: str, values: dict, version: float) -> bool:
        return is_displayed(props[name].get("displayOptions"), values, values, version,
                            {"includeOtherFields": False, "include": "all"})

    assert shown("include", {}, 3.2) and not shown("includeOtherFields", {}, 3.2)
    assert shown("includeFields", {"include": "selected"}, 3.1)
    assert not shown("include", {}, 3.4) and shown("includeOtherFields", {}, 3.4)
    assert not shown("includeFields", {"include": "selected"}, 3.4)
    assert shown("includeFields", {"include": "selected", "includeOtherFields": True}, 3.4)
    assert shown("excludeFields", {"include": "except", "includeOtherFields": True}, 3.3)
