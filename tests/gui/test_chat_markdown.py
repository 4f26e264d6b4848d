"""Agent replies render Markdown as n8n's chat does (code blocks, lists, links); raw HTML in a
reply is shown as text, never interpreted; links and code take the theme's colours."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument

from gui import theme
from gui.panels.chat_panel import ChatPanel

from .test_theme_contrast import shot, themed  # noqa: F401  (fixture)

REPLY = (
    "Here is the plan:\n\n"
    "- add **two** numbers\n- print them\n\n"
    "```python\nif a < b:\n    print(a + b)\n```\n\n"
    "See [the docs](https://docs.n8n.io/) and <b>not bold</b> <script>alert(1)</script>"
)


def blocks(doc: QTextDocument) -> list:  # type: ignore[type-arg]
    out, block = [], doc.begin()
    while block.isValid():
        out.append(block)
        block = block.next()
    return out


def test_reply_markdown_in_the_bubble(themed: theme.Theme, qtbot) -> None:  # type: ignore[no-untyped-def]
    chat = ChatPanel()
    qtbot.addWidget(chat)
    chat.resize(460, 520)
    chat.add_user("Plan **this**")
    chat.begin_reply()
    chat.end_reply(REPLY)
    doc = chat.view.document()
    text = doc.toPlainText()
    assert "Plan **this**" in text  # the user's own text is shown as typed
    assert "<b>not bold</b>" in text and "<script>alert(1)</script>" in text  # raw HTML stays text
    assert "**two**" not in text and "```" not in text
    listed = [b.text() for b in blocks(doc) if b.textList() is not None]
    assert listed == ["add two numbers", "print them"]
    code = [b for b in blocks(doc) if b.blockFormat().nonBreakableLines()]
    assert [b.text() for b in code] == ["if a < b:", "    print(a + b)"]
    assert all(b.blockFormat().background().color() == themed.node_fill for b in code)
    anchors = [(f.fragment().text(), f.fragment().charFormat()) for b in blocks(doc) for f in iter_fragments(b)
               if f.fragment().charFormat().isAnchor()]
    assert [(t, c.anchorHref()) for t, c in anchors] == [("the docs", "https://docs.n8n.io/")]
    assert anchors[0][1].foreground().color() == themed.link_text
    shot(chat, "chat-markdown")


def iter_fragments(block):  # type: ignore[no-untyped-def]
    it = block.begin()
    while not it.atEnd():
        yield it
        it += 1


def test_streaming_reply_is_markdown_too(qtbot) -> None:  # type: ignore[no-untyped-def]
    chat = ChatPanel()
    qtbot.addWidget(chat)
    chat.begin_reply()
    chat.stream("1. first\n2. sec")
    listed = [b.text() for b in blocks(chat.view.document()) if b.textList() is not None]
    assert listed[0] == "first" and listed[1].startswith("sec")
    chat.stream("ond\n\nthen **more**")
    last = [b for b in blocks(chat.view.document()) if b.text()][-1]
    assert last.text() == "then more ▍"  # the streaming cursor sits after the last word


def test_only_web_links_are_opened(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QUrl

    from gui.panels import chat_panel

    opened: list[str] = []
    monkeypatch.setattr(chat_panel.QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url.toString())))
    for link in ("https://docs.n8n.io/", "javascript:alert(1)", "file:///etc/passwd"):
        chat_panel.open_link(QUrl(link))
    assert opened == ["https://docs.n8n.io/"]


def test_the_reply_starts_on_the_line_after_the_name(qtbot) -> None:  # type: ignore[no-untyped-def]
    chat = ChatPanel()
    qtbot.addWidget(chat)
    chat.add_user("What is 6 times 7?")
    chat.begin_reply()
    chat.end_reply("The answer is **42**.\n\n- six\n- seven")
    lines = [b.text() for b in blocks(chat.view.document())]
    agent = lines.index("Agent")
    assert lines[agent + 1] == "The answer is 42."  # no empty line between the name and the reply
    assert "You\u2028What is 6 times 7?" in lines  # plain text: the name, a line break, the message
