"""The editor's run panels: chat, and the output dock's tabs (steps, iteration detail, run log, node data)."""
