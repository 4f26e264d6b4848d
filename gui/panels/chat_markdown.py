"""A chat reply's Markdown as rich text for a bubble: code blocks, lists, links, as n8n's chat shows.

Raw HTML in a reply is shown as text, never interpreted (Qt's Markdown reader without HTML);
links and code blocks take their colours from the theme so they stay readable in dark mode.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

MARKDOWN = QTextDocument.MarkdownFeature.MarkdownDialectGitHub | QTextDocument.MarkdownFeature.MarkdownNoHTML
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.DOTALL)
OPENABLE_SCHEMES = ("http", "https", "mailto")  # links a click may hand to the system


def markdown_document(text: str, link: QColor, code_fill: QColor) -> QTextDocument:
    """The reply as a document: Markdown read, raw HTML kept as text, links and code themed."""
    doc = QTextDocument()
    doc.setMarkdown(text, MARKDOWN)
    cursor = QTextCursor(doc)
    block = doc.begin()
    while block.isValid():
        if block.blockFormat().nonBreakableLines():  # a fenced or indented code block
            fill = QTextBlockFormat()
            fill.setBackground(code_fill)
            cursor.setPosition(block.position())
            cursor.mergeBlockFormat(fill)
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().isAnchor():
                themed = QTextCharFormat()
                themed.setForeground(link)
                cursor.setPosition(fragment.position())
                cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(themed)
            it += 1
        block = block.next()
    return doc


def markdown_html(text: str, link: QColor, code_fill: QColor) -> str:
    """The reply's rich text as an HTML fragment to put inside a bubble."""
    found = _BODY.search(markdown_document(text, link, code_fill).toHtml())
    return found.group(1).strip() if found else ""
