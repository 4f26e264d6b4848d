"""Node data while a long run goes on: deep JSON rows made when opened, run titles added as runs come."""

from __future__ import annotations

from engine.run_data import TaskData
from gui.panels.json_tree import OPEN_LEVELS, JsonTree
from gui.panels.node_data import RunSelector


def test_deep_containers_get_their_rows_when_opened(qtbot) -> None:
    tree = JsonTree()
    qtbot.addWidget(tree)
    messages = [{"role": "user", "content": f"message {i}", "meta": {"tokens": i}} for i in range(300)]
    tree.set_value({"ai_languageModel": {"item 0": {"messages": messages}}})
    model = tree.model()
    first = model.index(0, 0, model.index(0, 0, model.index(0, 0, model.index(0, 0))))  # messages -> 0
    assert model.data(first) == "0" and model.rowCount(first) == 1  # only the row that makes it openable
    assert model.data(model.index(0, 0, first)) == ""
    assert tree.isExpanded(first.parent()) and not tree.isExpanded(first)  # OPEN_LEVELS levels open
    assert OPEN_LEVELS == 3
    tree.expand(first)
    assert [model.data(model.index(r, 0, first)) for r in range(model.rowCount(first))] == ["role", "content", "meta"]
    assert tree.value_at("ai_languageModel", "item 0", "messages", "7", "content") == "message 7"  # read without opening
    assert tree.value_at("ai_languageModel", "item 0", "messages", "299", "meta", "tokens") == "299"
    assert tree.value_at("ai_languageModel", "item 0", "messages", "7", "meta") == "{1 key}"


def _task(ms: float) -> TaskData:
    return TaskData(startTime=0, executionTime=ms, data={"main": [[{"json": {}}]]})


def test_run_titles_are_added_as_runs_come_and_brought_up_to_date_when_listed(qtbot) -> None:
    selector = RunSelector()
    qtbot.addWidget(selector)
    runs = [_task(1.0), _task(2.0)]
    selector.show_runs(list(runs))
    added: list[int] = []
    selector.model().rowsInserted.connect(lambda _p, first, last: added.append(last - first + 1))
    runs.append(_task(3.0))
    selector.show_runs(list(runs))
    assert added == [1]  # the two listed runs stay
    assert selector.itemText(2).startswith("Run 3 of 3") and selector.itemText(0).startswith("Run 1 of 2")
    selector.showPopup()
    assert [selector.itemText(i)[:10] for i in range(3)] == ["Run 1 of 3", "Run 2 of 3", "Run 3 of 3"]
    selector.hidePopup()
    selector.show_runs([_task(9.0)])  # another node's runs
    assert selector.count() == 1 and "9.0 ms" in selector.itemText(0)
