"""Parity of sub-node runs the main-path comparison does not see.

- The Structured Output Parser: the exact text it was given (the model's final-response call
  as JSON text; with SHOWREQ that text holds the system message and the tool schema the Agent
  sent, so the schema we show the model is compared with n8n's) and what it returned or the
  error it failed with.
- Chat Models under an Agent with a fallback model: which model ran, how often, and whether
  each call failed or succeeded.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.parity.test_parity import NAMES, peer_url, recorded, run_ours  # noqa: F401  (peer_url: a fixture)

PARSER = "Structured Output Parser"
PARSER_CASES = [n for n in NAMES if n.startswith(("sop-", "autofix-")) or (n.startswith("chain-") and "parser" in n)]
FALLBACK_CASES = [n for n in NAMES if n.startswith("fallback-") or n == "chain-v17-fallback"]
MODELS = ("Broken Model", "Broken Too", "Fallback Model", "OpenAI Chat Model")


def _parser_run(task: dict[str, Any]) -> tuple[Any, Any]:
    """(the text parsed, the response or the error message) of one parser run."""
    given = (task.get("inputOverride") or task.get("input") or {}).get("ai_outputParser", [[{}]])[0][0].get("json", {})
    if task.get("error"):
        return given.get("text"), ("error", task["error"].get("message"))
    return given.get("text"), task["data"]["ai_outputParser"][0][0]["json"].get("response")


@pytest.mark.parametrize("name", PARSER_CASES)
def test_output_parser_runs_as_n8n(name: str, peer_url: str) -> None:  # noqa: F811
    for parser in (PARSER, "Auto-fixing Output Parser"):
        theirs = recorded(name)["data"]["resultData"]["runData"].get(parser, [])
        ours = run_ours(name, peer_url).run_data.get(parser, [])
        want = [_parser_run(t) for t in theirs]
        got = [_parser_run(t.to_json()) for t in ours]
        assert got == want, json.dumps({"node": parser, "ours": got, "n8n": want}, indent=1, ensure_ascii=False)[:6000]


@pytest.mark.parametrize("name", FALLBACK_CASES)
def test_model_runs_as_n8n_with_a_fallback(name: str, peer_url: str) -> None:  # noqa: F811
    theirs = recorded(name)["data"]["resultData"]["runData"]
    ours = run_ours(name, peer_url).run_data
    for model in MODELS:
        want = [t.get("executionStatus") for t in theirs.get(model, [])]
        got = [t.execution_status for t in ours.get(model, [])]
        assert got == want, f"{model}: ours {got}, n8n {want}"
