"""`mini-n8n run` says so when the model's answer has no text, instead of printing a blank answer."""

from __future__ import annotations

from pathlib import Path

from engine.workflow import save_workflow
from tests.builders import agent_workflow

from .test_cli import mini_n8n


def test_an_empty_answer_is_named_in_the_output(tmp_path: Path) -> None:
    path = tmp_path / "wf.json"
    save_workflow(agent_workflow([{"text": ""}], tools=[]), path)
    result = mini_n8n("run", str(path), "--message", "Say nothing.")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-2:] == ["status: success", "answer: (empty reply — the model returned no text)"]
