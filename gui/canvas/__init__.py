"""The workflow canvas: a QGraphicsScene that mirrors the document, and the view around it."""
