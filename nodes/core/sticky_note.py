"""Sticky Note: markdown text on the canvas; never executed."""

from pydantic import Field

from engine.node_type import NodeParams, NodeType


class StickyParams(NodeParams):
    content: str = Field("## I'm a note\nDouble click to edit me.", title="Content", json_schema_extra={"multiline": True})
    height: float = Field(160, ge=40, title="Height")
    width: float = Field(240, ge=80, title="Width")
    color: int = Field(1, ge=1, le=7, title="Color")


class StickyNote(NodeType):
    type = "n8n-nodes-base.stickyNote"
    display_name = "Sticky Note"
    description = "A note on the canvas, in markdown; it does not run"
    group = "Notes"
    icon = "sticky-note"
    inputs = ()
    outputs = ()
    Params = StickyParams
    runnable = False
