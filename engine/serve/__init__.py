"""Serving workflows: `mini-n8n serve` (HTTP: chat, REST API) and `mini-n8n worker` (Celery).

Nothing here is imported by the desktop: Starlette, uvicorn and Celery come with the `server` extra."""
