"""The PySide6 editor. Reaches the engine only through gui/bridge.py."""
