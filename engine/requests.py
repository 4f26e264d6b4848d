"""The EngineRequest / EngineResponse protocol: a node asks the engine to run nodes for it.

A node (the Agent) returns an EngineRequest instead of items; the engine runs each action's
node as an ordinary node run, then calls the node again with an EngineResponse. Everything
here is plain JSON so that a paused execution can be stored and resumed in another process
(an agent's steps in metadata are, in memory, a window on a shared log: a list once dumped).
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from .defaults import new_list
from .shared_log import copied, plain


class Action(BaseModel):
    """Run node `node_name` with `input` as its one item; `id` is the model's tool call id."""

    model_config = ConfigDict(populate_by_name=True)

    action_type: Literal["ExecutionNodeAction"] = Field("ExecutionNodeAction", alias="actionType")
    node_name: str = Field(alias="nodeName")
    input: dict[str, Any] = Field(default_factory=dict)
    type: str = "ai_tool"
    id: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    def to_json(self, *, shared: bool = False) -> dict[str, Any]:
        """As `model_dump(mode="json", by_alias=True)`: a copy, or (`shared`) sharing `input` and `metadata`."""
        fields = self.__dict__  # read directly: each attribute of a model goes through its __getattr__ hook
        if shared:
            return {"actionType": fields["action_type"], "nodeName": fields["node_name"], "input": fields["input"],
                    "type": fields["type"], "id": fields["id"], "metadata": fields["metadata"]}
        return {"actionType": fields["action_type"], "nodeName": fields["node_name"], "input": copied(fields["input"]),
                "type": fields["type"], "id": fields["id"], "metadata": copied(fields["metadata"])}


class EngineRequest(BaseModel):
    """Actions for the engine to run, and the requesting node's state, carried as JSON."""

    model_config = ConfigDict(populate_by_name=True)

    actions: list[Action] = Field(default_factory=new_list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("metadata")
    def _plain_metadata(self, value: dict[str, Any]) -> dict[str, Any]:
        return plain(value)  # an agent's steps are a window on its log in memory, a list in JSON


class ActionResponse(BaseModel):
    """One action and the run data of the node run that answered it (a TaskData as JSON)."""

    model_config = ConfigDict(populate_by_name=True)

    action: Action
    data: dict[str, Any]


class EngineResponse(BaseModel):
    """What the engine hands back to a requesting node: the answers and its own metadata."""

    model_config = ConfigDict(populate_by_name=True)

    action_responses: list[ActionResponse] = Field(default_factory=new_list, alias="actionResponses")
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("metadata")
    def _plain_metadata(self, value: dict[str, Any]) -> dict[str, Any]:
        return plain(value)
