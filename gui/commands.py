"""Undoable edits: one QUndoCommand per user edit, each calling the headless document API.

Every command performs its edit before it is pushed (so a refused edit never reaches the
stack), and after each redo/undo calls `target.document_edited(change)` with what it touched,
so the canvas updates those items only.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Protocol

from PySide6.QtGui import QUndoCommand

from engine.editing import copy_connections, DocumentEditor
from engine.pin_data import pin, unpin
from engine.workflow import Node

MOVE_ID = 1001


class Change(NamedTuple):
    """What one edit touched: nodes that only moved, nodes whose own values changed (parameters,
    deactivation, pinned data, credentials), or the structure (nodes added, removed or renamed,
    connections). Nothing set: a change no node shows (the workflow's name)."""

    moved: frozenset[str] = frozenset()
    nodes: frozenset[str] = frozenset()
    structure: bool = False


STRUCTURE = Change(structure=True)


class EditTarget(Protocol):
    editor: DocumentEditor

    def document_edited(self, change: Change) -> None: ...


class _Command(QUndoCommand):
    """Skips the first redo: the edit already happened when the command was made."""

    change = STRUCTURE

    def __init__(self, target: EditTarget, text: str) -> None:
        super().__init__(text)
        self.target = target
        self._done = True

    def redo(self) -> None:
        if self._done:
            self._done = False
        else:
            self.apply()
        self.target.document_edited(self.change)

    def undo(self) -> None:
        self.revert()
        self.target.document_edited(self.change)

    def apply(self) -> None:
        raise NotImplementedError

    def revert(self) -> None:
        raise NotImplementedError


class StructureCommand(_Command):
    """Adds, removes, pastes, connects or disconnects: the node list and connections before
    and after are kept, so undo and redo restore them exactly (order included)."""

    def __init__(self, target: EditTarget, text: str, edit: Callable[[DocumentEditor], Any]) -> None:
        super().__init__(target, text)
        wf = target.editor.workflow
        self._nodes_before = list(wf.nodes)
        self._links_before = copy_connections(wf.connections)
        self._pins_before = dict(wf.pinData)
        try:
            self.result = edit(target.editor)
        except BaseException:
            self._restore(self._nodes_before, self._links_before, self._pins_before)
            raise
        self._nodes_after = list(wf.nodes)
        self._links_after = copy_connections(wf.connections)
        self._pins_after = dict(wf.pinData)

    def _restore(self, nodes: list[Node], links, pins: dict[str, Any]) -> None:
        wf = self.target.editor.workflow
        wf.nodes = list(nodes)
        wf.connections = copy_connections(links)
        if pins != wf.pinData:
            wf.pinData = dict(pins)

    def apply(self) -> None:
        self._restore(self._nodes_after, self._links_after, self._pins_after)

    def revert(self) -> None:
        self._restore(self._nodes_before, self._links_before, self._pins_before)


class MoveCommand(_Command):
    """Moves nodes; consecutive moves of the same nodes merge into one step."""

    def __init__(self, target: EditTarget, before: dict[str, tuple[float, float]],
                 after: dict[str, tuple[float, float]]) -> None:
        count = len(after)
        super().__init__(target, f"Move {count} node{'s' if count != 1 else ''}")
        self.before = dict(before)
        self.after = dict(after)
        self.change = Change(moved=frozenset(after))
        target.editor.move(self.after)

    def id(self) -> int:
        return MOVE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802
        if not isinstance(other, MoveCommand) or set(other.after) != set(self.after):
            return False
        self.after = dict(other.after)
        return True

    def apply(self) -> None:
        self.target.editor.move(self.after)

    def revert(self) -> None:
        self.target.editor.move(self.before)


class ParametersCommand(_Command):
    """Any change to one node's parameters: the whole parameter dict before and after."""

    def __init__(self, target: EditTarget, text: str, name: str, edit: Callable[[DocumentEditor], Any]) -> None:
        super().__init__(target, text)
        self.name = name
        self.change = Change(nodes=frozenset({name}))
        node = target.editor.workflow.node(name)
        self.had_parameters = "parameters" in node.model_fields_set
        self.before = edit(target.editor)
        self.after = node.parameters

    def apply(self) -> None:
        self.target.editor.workflow.node(self.name).parameters = self.after

    def revert(self) -> None:
        node = self.target.editor.workflow.node(self.name)
        node.parameters = self.before
        if not self.had_parameters:
            node.model_fields_set.discard("parameters")


class RenameCommand(_Command):
    """Renames a node; connections follow (source keys and targets)."""

    def __init__(self, target: EditTarget, old: str, new: str) -> None:
        super().__init__(target, f'Rename "{old}" to "{new.strip()}"')
        self.references = target.editor.rename(old, new)  # parameters before, by node (old names)
        self.old, self.new = old, new.strip()

    def apply(self) -> None:
        self.target.editor.rename(self.old, self.new)

    def revert(self) -> None:
        self.target.editor.rename(self.new, self.old)
        for name, parameters in self.references.items():  # exactly as they were, not re-derived
            self.target.editor.workflow.node(name).parameters = parameters


class DisableCommand(_Command):
    """Deactivates or activates nodes (greyed on the canvas, skipped by runs)."""

    def __init__(self, target: EditTarget, names: list[str], disabled: bool) -> None:
        word = "Deactivate" if disabled else "Activate"
        super().__init__(target, f"{word} {len(names)} node{'s' if len(names) != 1 else ''}")
        self.names, self.disabled = list(names), disabled
        self.change = Change(nodes=frozenset(names))
        self.before = target.editor.set_disabled(self.names, disabled)

    def apply(self) -> None:
        self.target.editor.set_disabled(self.names, self.disabled)

    def revert(self) -> None:
        self.target.editor.restore_disabled(self.before)


class CredentialCommand(_Command):
    """Picks (or clears) the stored credential a node uses for one credential type."""

    def __init__(self, target: EditTarget, name: str, cred_type: str, ref: dict | None) -> None:
        super().__init__(target, f'Set credential of "{name}"')
        self.name, self.cred_type, self.ref = name, cred_type, ref
        self.change = Change(nodes=frozenset({name}))
        self.before = target.editor.set_credential(name, cred_type, ref)

    def apply(self) -> None:
        self.target.editor.set_credential(self.name, self.cred_type, self.ref)

    def revert(self) -> None:
        self.target.editor.restore_credentials(self.name, self.before)


class SettingCommand(_Command):
    """Sets or removes node settings (On Error, Retry On Fail, ...; None removes one) in one edit."""

    def __init__(self, target: EditTarget, name: str, values: dict[str, object]) -> None:
        super().__init__(target, f'Change settings of "{name}"')
        self.name, self.values = name, dict(values)
        self.change = Change(nodes=frozenset({name}))
        self.before = {key: target.editor.set_setting(name, key, value) for key, value in self.values.items()}

    def apply(self) -> None:
        for key, value in self.values.items():
            self.target.editor.set_setting(self.name, key, value)

    def revert(self) -> None:
        for key, before in reversed(list(self.before.items())):
            self.target.editor.restore_setting(self.name, key, before)


class WorkflowNameCommand(_Command):
    """Renames the workflow (its `name`, shown in the title)."""

    def __init__(self, target: EditTarget, name: str) -> None:
        super().__init__(target, f'Rename workflow to "{name.strip()}"')
        self.change = Change()
        self.new = name.strip()
        self.old = target.editor.set_name(name)

    def apply(self) -> None:
        self.target.editor.set_name(self.new)

    def revert(self) -> None:
        self.target.editor.set_name(self.old)


class PinCommand(_Command):
    """Pins items on a node (n8n's pinData) or, with `items` None, unpins it."""

    def __init__(self, target: EditTarget, node: str, items: list[dict[str, Any]] | None) -> None:
        super().__init__(target, f'{"Pin" if items is not None else "Unpin"} data of "{node}"')
        self.change = Change(nodes=frozenset({node}))
        wf = target.editor.workflow
        self._before = dict(wf.pinData)
        if items is None:
            unpin(wf, node)
        else:
            pin(wf, node, items)
        self._after = dict(wf.pinData)

    def apply(self) -> None:
        self.target.editor.workflow.pinData = dict(self._after)

    def revert(self) -> None:
        self.target.editor.workflow.pinData = dict(self._before)
