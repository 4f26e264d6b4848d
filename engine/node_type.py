"""The node-type contract: what every node type declares and implements.

A node type is a class with class attributes for the registry and the GUI (type id, version,
names, palette group, ports, a pydantic `Params` model) and async methods for the engine:
main nodes `execute(ctx, response)`, sub-nodes `supply_data(ctx)`. Instances hold no state
between calls; whatever must survive between calls lives in run data or request metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from .connection_types import MAIN, PortSpec
from .errors import NodeOperationError
from .requests import EngineRequest, EngineResponse
from .run_data import Item

if TYPE_CHECKING:
    from .context import NodeContext, SupplyContext


class NodeParams(BaseModel):
    """Base of every `Params` model: n8n files may carry parameters we do not model."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class NodeType:
    """Base class of node types; subclasses set the class attributes and override methods."""

    type: ClassVar[str]
    version: ClassVar[float] = 1  # the newest typeVersion, given to new nodes
    versions: ClassVar[tuple[float, ...]] = ()  # every typeVersion it maps (engine/versions.py); () = (version,)
    display_name: ClassVar[str]
    description: ClassVar[str] = ""
    group: ClassVar[str] = "AI"  # palette group: Triggers, AI, Models, Memory, Tools, Notes
    icon: ClassVar[str] = "node"  # resources/icons/<icon>.svg
    default_name: ClassVar[str | None] = None  # name given to a new node; display_name if None
    inputs: ClassVar[tuple[PortSpec, ...]] = (PortSpec(MAIN),)
    outputs: ClassVar[tuple[PortSpec, ...]] = (PortSpec(MAIN),)
    Params: ClassVar[type[NodeParams]] = NodeParams
    credential_types: ClassVar[tuple[str, ...]] = ()  # n8n credential types it reads (the GUI's picker)
    # n8n's parameters of this type (every version) it reads, and those it refuses with a message
    # saying when (tests compare both with n8n's node descriptions)
    implemented_parameters: ClassVar[frozenset[str]] = frozenset()
    unsupported_parameters: ClassVar[dict[str, str]] = {}
    is_trigger: ClassVar[bool] = False
    is_chat_trigger: ClassVar[bool] = False  # starts a run with a chat message (the Chat panel, `--message`)
    # a trigger that starts a run only with the request it received (Webhook, Form): from the
    # editor or the CLI only with an item given or pinned for it; `mini-n8n serve` serves it
    starts_with_request: ClassVar[bool] = False
    runnable: ClassVar[bool] = True  # False for notes: never executed
    supported: ClassVar[bool] = True
    # a tool whose supply_data is a function of its node (name, version) and parameters alone,
    # read with ctx.params(): with no expression among them (its parameters then validated once
    # per execution, Execution.params_cache), an execution supplies it once and hands the same
    # tools to every later round (an Agent asks for its tools at each of its rounds, as n8n's does)
    supplies_once: ClassVar[bool] = False

    async def execute(self, ctx: "NodeContext", response: EngineResponse | None = None) -> list[list[Item]] | EngineRequest:
        raise NodeOperationError(f'Node type "{self.type}" cannot run as a main node', node=ctx.node.name)

    async def supply_data(self, ctx: "SupplyContext") -> Any:
        raise NodeOperationError(f'Node type "{self.type}" supplies no data to other nodes', node=ctx.node.name)

    @classmethod
    def n8n_parameters(cls, parameters: dict[str, Any], version: float) -> dict[str, Any]:
        """The parameters as n8n holds them once it loaded the workflow (defaults of the parameters
        its form shows filled in): what `$parameter` and `$('Node').params` read. As written here
        unless the type knows n8n's form."""
        return parameters

    def ports_for(self, parameters: dict[str, Any], version: float) -> tuple[tuple[PortSpec, ...], tuple[PortSpec, ...]]:
        """The (inputs, outputs) a node with these parameters has: as declared, unless the type's
        ports follow its parameters (a Switch's rules, a Merge's number of inputs, the Agent's
        Output Parser input)."""
        return self.shown_inputs(parameters, version), self.outputs

    @classmethod
    def example_output(cls) -> dict[str, Any] | None:
        """An output item's JSON a user may start a run with from this trigger (None: nothing typical)."""
        return None

    @classmethod
    def required_inputs(cls, parameters: dict[str, Any]) -> int | list[int] | None:
        """n8n's `requiredInputs` of a node with several main inputs: how many (or which) inputs
        need items before a run that waits for the others may start without them; None: any one."""
        return None

    @classmethod
    def shown_inputs(cls, parameters: dict[str, Any], version: float) -> tuple[PortSpec, ...]:
        """The input ports the editor shows for these parameters (n8n's `inputs` expression)."""
        return cls.inputs

    @classmethod
    def needs_credential(cls, parameters: dict[str, Any]) -> bool:
        """Whether a run with these parameters fails without one of `credential_types` (warned before it)."""
        return False

    @classmethod
    def input_spec(cls, conn_type: str) -> PortSpec | None:
        for spec in cls.inputs:
            if spec.type == conn_type:
                return spec
        return None

    @classmethod
    def output_types(cls) -> set[str]:
        return {spec.type for spec in cls.outputs}


class UnsupportedNodeType(NodeType):
    """A placeholder for a type id mini-n8n does not know: kept in files, fails when run."""

    supported = False
    display_name = "Unsupported node"
    description = "A node of a type mini-n8n does not support; it is kept unchanged in the file."
    group = "Unsupported"
    icon = "unsupported"

    def __init__(self, type_id: str) -> None:
        self.type = type_id

    def _fail(self, node_name: str) -> NodeOperationError:
        return NodeOperationError(
            f'Node "{node_name}" has type "{self.type}", which mini-n8n does not support',
            node=node_name,
        )

    async def execute(self, ctx: "NodeContext", response: EngineResponse | None = None) -> list[list[Item]]:
        raise self._fail(ctx.node.name)

    async def supply_data(self, ctx: "SupplyContext") -> Any:
        raise self._fail(ctx.node.name)
