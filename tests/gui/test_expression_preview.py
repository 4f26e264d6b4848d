"""The inspector shows an expression's value under its field for the last run's input, and the error when it fails."""

from __future__ import annotations

import os
from pathlib import Path

from tests.builders import agent_workflow


def shot(widget, folder: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """With MINI_N8N_SCREENSHOTS set, save what the widget shows, to be looked at."""
    if os.environ.get("MINI_N8N_SCREENSHOTS"):
        widget.grab().save(str(folder / f"{name}.png"))
        print(folder / f"{name}.png")


def test_preview_under_the_field_after_a_run(run_window, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    workflow = agent_workflow([{"text": "done"}], tools=[], trigger="manual", agent_params={
        "promptType": "define", "text": "={{ $('Start').isExecuted ? 'ran' : 'not yet' }} with {{ $json.keys().length }} fields"})
    window, controller = run_window(workflow)
    window.scene.select_names(["AI Agent"])
    inspector = window.inspector
    qtbot.waitUntil(lambda: inspector.builder is not None and ("text",) in inspector.builder.rows)
    assert inspector.builder.rows[("text",)].preview is None  # no run yet: no input data, no preview

    with qtbot.waitSignal(controller.run_shown, timeout=10_000) as finished:
        controller.run_workflow()
    assert finished.args[0].status == "success"
    qtbot.waitUntil(lambda: inspector.builder.rows[("text",)].preview is not None)
    preview = inspector.builder.rows[("text",)].preview
    assert preview.text() == "Result: ran with 0 fields"
    assert preview.objectName() == "fieldHint"
    shot(inspector, tmp_path, "preview")

    window.set_parameter("AI Agent", ("text",), "={{ $('Nope').item.json.topic }}")
    window.confirm_discard = lambda: True  # the edit is not to be saved when the test closes the window
    qtbot.waitUntil(lambda: inspector.builder.rows[("text",)].preview is not None
                    and inspector.builder.rows[("text",)].preview.objectName() == "fieldError")
    failed = inspector.builder.rows[("text",)].preview
    assert failed.text() == "ERROR: Referenced node doesn't exist"  # n8n's words
    shot(inspector, tmp_path, "preview-error")
