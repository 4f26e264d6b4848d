"""The Intermediate steps model: rows from recorded runs, Qt model contract, nested agents, big tables."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QEvent, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QApplication, QWidget

from engine.executor import Engine
from engine.hooks import Hooks, NodeAfter
from engine.registry import builtin_registry
from engine.run_data import TaskData, TaskError
from engine.steps_table import StepBook, StepRow, StepsDiff
from gui.panels.steps_model import StepsFilter, StepsModel
from nodes.triggers.chat_trigger import chat_item
from tests.builders import agent_workflow, tool_call


def recorded_events(replies, **kwargs):  # type: ignore[no-untyped-def]
    """Hook events of a headless run of an agent workflow (no Qt loop involved)."""
    events: list = []

    async def run() -> None:
        await Engine(builtin_registry()).run(agent_workflow(replies, **kwargs), start="Chat",
                                             items=[chat_item("hi", "s")], hooks=Hooks(events.append))

    asyncio.run(run())
    return events


def feed(model: StepsModel, book: StepBook, events: list) -> None:
    """Fold hook events into the run's book and hand the model the diff, as a run does."""
    for event in events:
        if isinstance(event, NodeAfter):
            book.feed(event)
    model.apply(book.take_diff())


def test_rows_from_a_run_fed_in_small_batches(qtmodeltester) -> None:
    events = recorded_events(
        [{"text": "", "toolCalls": [tool_call("Calculator", {"input": "2 + 2"}),
                                    tool_call("Calculator", {"wrong": 1})]},
         {"text": "", "toolCalls": [tool_call("Nowhere", {"a": 1})]}],
    )
    model = StepsModel()
    book = StepBook()
    qtmodeltester.check(model)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    for start in range(0, len(events), 3):
        feed(model, book, events[start:start + 3])
    rows = [(r.iteration_text, r.tool, r.status, r.observation) for r in model.rows]
    assert rows == [
        ("1", "Calculator", "ok", "4"),
        # the agent never sent these to a tool: the model's next input carries the reason
        ("1", "Calculator", "error",
         "Error: the arguments for tool 'Calculator' do not fit its schema: arguments have an unknown field 'wrong'"),
        # no tool of that name: the agent takes the reply as its answer and never runs the call
        ("2", "Nowhere", "not run", "(the agent did not run this call)"),
    ]
    assert inserted[0] == (0, 1)  # both calls of iteration 1 arrive as one block
    qtmodeltester.check(model)
    model.clear()
    assert model.rowCount() == 0


def test_model_error_is_a_row() -> None:
    events = recorded_events([{"text": "", "toolCalls": [tool_call("Calculator", {"input": "1"})]},
                              {"error": "rate limited"}])
    model = StepsModel()
    book = StepBook()
    feed(model, book, events)
    assert [(r.tool, r.status, r.observation) for r in model.rows] == [
        ("Calculator", "ok", "1"), ("model error", "error", "rate limited")]


def _model_task(agent: str, iteration: int, reply: dict, parent: dict | None = None, run_index: int = 0) -> TaskData:
    meta = {"node": agent, "runIndex": run_index, "iteration": iteration, "itemIndex": 0,
            "latencyMs": 5.0, "tokenUsage": {"promptTokens": 10, "completionTokens": 2}}
    if parent:
        meta["parent"] = parent
    return TaskData(startTime=0, executionTime=5, input={"ai_languageModel": [[{"json": {"messages": []}}]]},
                    data={"ai_languageModel": [[{"json": reply}]]}, metadata=meta)


def _tool_task(agent: str, iteration: int, call_id: str, name: str, output: dict | None, parent: dict | None = None,
               error: str | None = None) -> TaskData:
    meta = {"node": agent, "runIndex": 0, "iteration": iteration, "itemIndex": 0, "toolCallId": call_id, "toolName": name}
    if parent:
        meta["parent"] = parent
    task = TaskData(startTime=0, executionTime=1, input={"ai_tool": [[{"json": {}}]]},
                    data={"ai_tool": [[{"json": output}]]} if output else {}, metadata=meta,
                    executionStatus="error" if error else "success")
    if error:
        task.error = TaskError(message=error)
    return task


def test_nested_agent_rows_sit_under_the_outer_call(qtmodeltester) -> None:
    """An agent used as a tool: its iterations go right below the outer call that ran it."""
    outer_call = {"node": "Outer", "runIndex": 0, "iteration": 1, "itemIndex": 0, "toolCallId": "o1", "toolName": "researcher"}
    model = StepsModel()
    book = StepBook()
    qtmodeltester.check(model)
    feed(model, book, [
        NodeAfter("x", "Model", 0, _model_task("Outer", 1, {"toolCalls": [
            {"id": "o1", "name": "researcher", "args": {"q": "a"}}, {"id": "o2", "name": "calc", "args": {"e": "1"}}]})),
        NodeAfter("x", "Inner model", 0, _model_task("Researcher", 1, {"toolCalls": [
            {"id": "i1", "name": "search", "args": {"q": "a"}}]}, outer_call), outer_call),
    ])
    feed(model, book, [
        NodeAfter("x", "Search", 0, _tool_task("Researcher", 1, "i1", "search", {"response": "found"}, outer_call)),
        NodeAfter("x", "Inner model", 1, _model_task("Researcher", 2, {"content": "a is found"}, outer_call), outer_call),
        NodeAfter("x", "Researcher", 0, _tool_task("Outer", 1, "o1", "researcher", {"output": "a is found"})),
        NodeAfter("x", "Calc", 0, _tool_task("Outer", 1, "o2", "calc", None, error="bad")),
    ])
    shown = [(model.index(r, 0).data(), model.index(r, 2).data(), model.index(r, 5).data()) for r in range(model.rowCount())]
    assert shown == [
        ("1", "researcher", "ok"),
        ("1 › 1", "    └ search", "ok"),
        ("1 › 2", "    └ final answer", "ok"),
        ("1", "calc", "error"),
    ]
    assert [r.index for r in model.rows] == [0, 1, 2, 3]
    assert model.index(0, 4).data() == '{"output": "a is found"}'
    qtmodeltester.check(model)


def test_cancelled_run_marks_open_calls() -> None:
    model = StepsModel()
    book = StepBook()
    feed(model, book, [NodeAfter("x", "Model", 0, _model_task("A", 1, {"toolCalls": [{"id": "c", "name": "slow", "args": {}}]}))])
    assert model.rows[0].status == "pending"
    book.finish("cancelled")
    model.apply(book.take_diff())
    assert model.rows[0].status == "cancelled" and model.rows[0].failed


def _row(i: int) -> StepRow:
    return StepRow(iterations=(i // 3 + 1,), item=0, agent="A", tool=("calc", "search", "final answer")[i % 3],
                   kind="tool", status="error" if i % 7 == 0 else "ok", observation=f"line {i}\nmore",
                   tool_input={"n": i}, tokens_in=i, tokens_out=1, tool_ms=float(i % 13))


@pytest.mark.parametrize("batches", [1, 5])
def test_proxy_passes_the_model_tester(qtmodeltester, batches: int) -> None:
    model = StepsModel()
    proxy = StepsFilter()
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy)
    rows = [_row(i) for i in range(35)]
    size = len(rows) // batches
    for b in range(batches):
        model.append_rows(rows[b * size:(b + 1) * size])
    proxy.set_status("error")
    proxy.sort(6, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(proxy)


def test_rows_arriving_while_sorted(qtmodeltester, qtbot) -> None:
    """New rows take their sorted place as they arrive."""
    model = StepsModel()
    qtmodeltester.check(model)
    model.append_rows([_row(i) for i in range(0, 30, 2)])
    model.sort(7, Qt.SortOrder.DescendingOrder)  # tokens in
    assert model.index(0, 7).data() == "28"
    model.append_rows([_row(i) for i in range(1, 30, 2)])
    assert [model.index(r, 7).data() for r in range(4)] == ["29", "28", "27", "26"]
    assert [r.tokens_in for r in model.rows][:3] == [0, 2, 4]  # the happened-order is kept underneath
    qtmodeltester.check(model)


def test_filter_and_sort_over_many_rows() -> None:
    model = StepsModel()
    proxy = StepsFilter()
    proxy.setSourceModel(model)
    for start in range(0, 7000, 1000):
        model.append_rows([_row(i) for i in range(start, start + 1000)])
    assert model.rowCount() == 7000
    proxy.set_status("error")
    assert proxy.rowCount() == 1000 and all(r.status == "error" for r in proxy.visible_rows())
    proxy.set_tool("calc")
    assert {r.tool for r in proxy.visible_rows()} == {"calc"}
    assert proxy.rowCount() == len([i for i in range(7000) if i % 7 == 0 and i % 3 == 0])
    proxy.set_tool(None)
    proxy.set_status(None)
    proxy.sort(6, Qt.SortOrder.DescendingOrder)
    assert proxy.row_at(0).tool_ms == 12.0 and proxy.row_at(proxy.rowCount() - 1).tool_ms == 0.0
    proxy.sort(7, Qt.SortOrder.DescendingOrder)
    assert proxy.row_at(0).tokens_in == 6999
    proxy.sort(-1)  # back to the order the steps happened in
    assert [proxy.row_at(r).tokens_in for r in range(3)] == [0, 1, 2]
    assert model.index(3, 4).data(Qt.ItemDataRole.ToolTipRole) == "line 3\nmore"
    assert model.index(3, 4).data() == "line 3 …"


def test_real_nested_agent_rows() -> None:
    """An AI Agent Tool run by an outer agent: its iterations are shown under the outer call."""
    from tests.engine.test_nested_agent import two_level_workflow

    events: list = []

    async def run() -> None:
        state = await Engine(builtin_registry()).run(two_level_workflow(), items=[{"json": {"chatInput": "Price?"}}],
                                                     hooks=Hooks(events.append))
        assert state.status == "success", state.error

    asyncio.run(run())
    model = StepsModel()
    book = StepBook()
    feed(model, book, events)
    shown = [(model.index(r, 0).data(), model.index(r, 2).data(), model.index(r, 5).data(), model.index(r, 4).data())
             for r in range(model.rowCount())]
    assert shown == [
        ("1", "Shop_Clerk", "ok", "They cost 425 dollars."),
        ("1 › 1", "    └ Calculator", "ok", "425"),
        ("1 › 2", "    └ final answer", "ok", "They cost 425 dollars."),
        ("2", "final answer", "ok", "17 shirts cost 425 dollars."),
    ]
    assert [r.agent for r in model.rows] == ["Outer Agent", "Shop Clerk", "Shop Clerk", "Outer Agent"]


def test_filtered_rows_follow_their_status_and_new_rows_as_they_arrive(qtmodeltester) -> None:
    """With a filter on, a pending call that fails joins the table, one that succeeds leaves it,
    and new rows show only when they pass; the summary still counts every row."""
    from gui.panels.steps_view import StepsView

    view = StepsView()
    model, proxy = view.model, view.proxy
    qtmodeltester.check(proxy)
    pending = [StepRow(iterations=(i + 1,), item=0, agent="A", tool="calc", kind="tool", tool_call_id=f"c{i}") for i in range(4)]
    model.append_rows([_row(i) for i in range(1, 7)] + pending)  # none of the six failed
    view.status_filter.setCurrentText("pending")
    assert [r.tool_call_id for r in proxy.visible_rows()] == ["c0", "c1", "c2", "c3"]
    view.status_filter.setCurrentText("error")
    assert proxy.rowCount() == 0
    pending[1].status, pending[1].observation = "error", "Error: boom"
    pending[2].status, pending[2].observation = "ok", "4"
    model.apply(StepsDiff(changed=[pending[1], pending[2]]))
    assert proxy.visible_rows() == [pending[1]]
    view.status_filter.setCurrentText("pending")
    assert [r.tool_call_id for r in proxy.visible_rows()] == ["c0", "c3"]
    pending[0].status, pending[0].observation = "ok", "1"
    model.apply(StepsDiff(changed=[pending[0]]))
    assert [r.tool_call_id for r in proxy.visible_rows()] == ["c3"]
    view.status_filter.setCurrentText("error")
    model.append_rows([_row(7), _row(8)])  # 7 failed, 8 did not
    assert [r.tool_call_id or r.tokens_in for r in proxy.visible_rows()] == ["c1", 7]
    assert view.summary.text().endswith("12 tool calls · 2 failed")  # filtered-out rows count too
    view.status_filter.setCurrentText("All")
    assert proxy.rowCount() == 12
    qtmodeltester.check(proxy)


def test_the_item_column_shows_only_when_a_run_has_several_items(qtbot) -> None:
    from gui.panels.steps_model import COL_ITEM
    from gui.panels.steps_view import StepsView

    view = StepsView()
    qtbot.addWidget(view)
    row = lambda item: StepRow(iterations=(1,), item=item, agent="AI Agent", tool="Calculator", kind="tool",  # noqa: E731
                               status="ok")
    view.model.append_rows([row(0), row(0)])
    assert view.table.isColumnHidden(COL_ITEM)  # a single-item run: the column would only say 0
    view.model.append_rows([row(1)])
    assert not view.table.isColumnHidden(COL_ITEM)
    view.model.clear()
    assert view.table.isColumnHidden(COL_ITEM)


def _shown_as_a_full_sort_would(model: StepsModel) -> list[StepRow]:
    """The rows a fresh sort of the whole book by the model's column and order would show."""
    column, order = model._sort_spec
    rows = [r for r in model.rows if not model.filtered or model._accepts(r)]
    return sorted(rows, key=lambda r: StepsModel._sort_key(r, column), reverse=order == Qt.SortOrder.DescendingOrder)


@pytest.mark.parametrize("order", [Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder])
@pytest.mark.parametrize("status", [None, "ok"])
def test_rows_arriving_and_changing_while_sorted_take_their_places(qtmodeltester, order, status) -> None:
    """Sorted (and filtered), rows that arrive in small or large batches, change their key or
    status, or go in above others (a nested agent) end where a full sort puts them, one model
    signal per change; a selected row stays selected wherever it moves."""
    model = StepsModel()
    qtmodeltester.check(model)
    model.set_filter(None, status)
    model.sort(7, order)  # tokens in: many equal keys, kept in the order they happened
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    layouts: list[int] = []
    model.layoutChanged.connect(lambda: layouts.append(1))
    pending = []
    for start, size in ((0, 3), (3, 1), (4, StepsModel.PLACED_ONE_BY_ONE + 20), (100, 9)):
        rows = [_row(i) for i in range(start, start + size)]
        for row in rows:
            row.tokens_in = (row.tokens_in or 0) % 17
        model.append_rows(rows)
        pending.append(StepRow(iterations=(99,), item=0, agent="A", tool="calc", kind="tool", tool_call_id=f"p{start}"))
        model.append_rows([pending[-1]])
        assert [model.row_at(r) for r in range(model.rowCount())] == _shown_as_a_full_sort_would(model)
    selected = model.index(model.rowCount() // 2, 0)
    held = model.row_at(selected.row())
    persistent = QPersistentModelIndex(selected)
    for n, row in enumerate(pending):  # pending rows finish: new keys, new statuses
        row.status, row.tokens_in = ("ok", 5 + n) if n % 2 else ("error", 40)
    held.tokens_in = 0 if order == Qt.SortOrder.DescendingOrder else 1000
    model.apply(StepsDiff(changed=[*pending, held]))
    assert [model.row_at(r) for r in range(model.rowCount())] == _shown_as_a_full_sort_would(model)
    if model._accepts(held) or not model.filtered:
        assert persistent.isValid() and model.row_at(persistent.row()) is held
    nested = _row(1000)
    nested.index = 2
    rows = model.rows[:2] + [nested] + model.rows[2:]
    for i, row in enumerate(rows):
        row.index = i
    model.apply(StepsDiff(inserts=[(2, [nested])]))  # went in above others: every book row moved down
    assert [model.row_at(r) for r in range(model.rowCount())] == _shown_as_a_full_sort_would(model)
    assert not resets
    assert len(layouts) == 2  # the batch too big to place row by row, and the rows that moved down
    qtmodeltester.check(model)


class _Paints(QObject):
    """Counts the paint events a widget receives."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_rows_added_below_the_shown_ones_update_the_scroll_bar_without_repainting_the_table(qtbot) -> None:
    """During a run rows keep arriving below what the table shows: only its scroll bar changes.
    Rows that go in among the shown ones, or while the table does not fill its viewport, are
    painted as before."""
    from gui.panels.steps_view import StepsView

    view = StepsView()
    qtbot.addWidget(view)
    view.resize(800, 300)
    view.show()
    qtbot.waitExposed(view)
    table, bar = view.table, view.table.verticalScrollBar()
    paints = _Paints(table.viewport())
    view.model.append_rows([_row(i) for i in range(3)])  # the table does not fill the viewport: shown at once
    qtbot.waitUntil(lambda: paints.count > 0)
    view.model.append_rows([_row(i) for i in range(3, 100)])
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    table.viewport().repaint()  # whatever is still to be painted, painted now
    QApplication.processEvents()
    shown_last = table.rowAt(table.viewport().height() - 1)
    assert 3 <= shown_last < 99
    painted = paints.count
    before = bar.maximum()
    view.model.append_rows([_row(i) for i in range(100, 150)])
    qtbot.waitUntil(lambda: bar.maximum() > before)  # laid out: the scroll bar reaches the new rows
    QApplication.processEvents()
    assert paints.count == painted  # nothing the table shows changed
    table.scrollToBottom()
    qtbot.waitUntil(lambda: paints.count > painted)
    assert table.rowAt(table.viewport().height() - 1) == 149
    assert table.model().index(149, 0).data() == _row(149).iteration_text
    view.table.sortByColumn(7, Qt.SortOrder.DescendingOrder)  # tokens in: new rows with the most go in at the top
    table.scrollToTop()
    QApplication.processEvents()
    painted = paints.count
    view.model.append_rows([_row(i) for i in range(1000, 1003)])
    qtbot.waitUntil(lambda: paints.count > painted)
    assert table.model().index(0, 0).data() == _row(1002).iteration_text


def test_the_views_sort_by_column_rearranges_the_rows_once(qapp) -> None:  # type: ignore[no-untyped-def]
    """QTableView.sortByColumn asks the model to sort twice (the header's indicator, then itself):
    the second asks for the order the rows are in already, and costs nothing."""
    from gui.panels.steps_view import StepsView

    view = StepsView()
    view.model.append_rows([_row(i) for i in range(300)])
    layouts: list[int] = []
    view.model.layoutChanged.connect(lambda *_: layouts.append(1))
    view.table.sortByColumn(7, Qt.SortOrder.DescendingOrder)
    assert len(layouts) == 1
    assert [view.proxy.row_at(r).tokens_in for r in range(3)] == [299, 298, 297]
    view.model.append_rows([_row(300)])  # placed in order as it arrives: sorting again changes nothing
    view.table.sortByColumn(7, Qt.SortOrder.DescendingOrder)
    assert len(layouts) == 1 and view.proxy.row_at(0).tokens_in == 300
    view.table.sortByColumn(7, Qt.SortOrder.AscendingOrder)
    assert len(layouts) == 2 and view.proxy.row_at(0).tokens_in == 0
