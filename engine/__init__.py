"""Headless core of mini-n8n: workflow document, node-type contract, executor, hooks.

Nothing in this package imports Qt; it runs in a CLI, a test or a worker process alike.
"""
