"""The child process of the Code Tool: runs model-facing Python code in a sandbox.

Started as `python -I code_runner.py` in a fresh work folder with a minimal environment; reads
one JSON request on stdin (`code`, `query`, `memoryLimitBytes`, `cpuSeconds`, `maxProcesses`,
`maxResultChars`), enters the sandbox (isolation.py), forks the process that runs the code as
the body of a function, and writes one JSON line (`{"ok": true, "result": "..."}` or
`{"ok": false, "error": "..."}`, with `missing`: protections this machine could not give).
A request of `kind` "items" is a Python Code node's: the code gets n8n's globals built from
`context` (python_items.py) and the answer is its returned value as JSON (`value`), what it
printed (`logs`), or the error as n8n's Python sandbox words it (`TypeName: message`).
Imports nothing from mini-n8n: it must start fast and carry no state of the editor.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import textwrap
import traceback
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import isolation  # noqa: E402 - a sibling module, found through the line above
import python_items  # noqa: E402

WORKDIR = "."  # the work folder, by the handle we hold: a mount may cover its path, as nobody we may not walk it


def as_function(code: str) -> str:
    """The user's code as the body of `_tool(query, _query)`, so `return` gives the result."""
    body = textwrap.indent(code if code.strip() else "pass", "    ")
    return f"def _tool(query, _query):\n{body}\n"


def user_line(exc: BaseException) -> str:
    """`(line N)` of the innermost frame in the user's code, if any."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == "<code>":
            return f" (line {frame.lineno - 1})"
    return ""


def run_items(request: dict[str, Any]) -> dict[str, Any]:
    """A Code node's code, as the body of a function over n8n's globals; its value and prints."""
    body = textwrap.indent(request["code"] if request["code"].strip() else "pass", "  ")
    try:
        compiled = compile(f"async def __main():\n{body}\n", "<exec>", "exec")
    except SyntaxError as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc.msg}\n"}
    namespace: dict[str, Any] = {"__name__": "__main__", **python_items.globals_for(request.get("context") or {})}
    logs: list[str] = []

    class Printed:
        def write(self, text: str) -> int:
            logs.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    real_stdout = sys.stdout
    sys.stdout = Printed()  # type: ignore[assignment]
    try:
        exec(compiled, namespace)
        value = _finish(namespace["__main"](), "await" in request["code"])
        native = bool((request.get("context") or {}).get("native"))
        converted = python_items.UNDEFINED if value is None else python_items.to_json(value, native=native)
    except MemoryError:
        memory = int(request.get("memoryLimitBytes", 0))
        return {"ok": False, "error": f"MemoryError: the code needed more than the memory limit of {memory // (1024 * 1024)} MB"}
    except BaseException as exc:  # the code's error, as n8n's Python sandbox words it (Pyodide's ends in a line break)
        said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        native = bool((request.get("context") or {}).get("native"))
        return {"ok": False, "error": said if native else said + "\n", "logs": "".join(logs).splitlines()}
    finally:
        sys.stdout = real_stdout
    return {"ok": True, "value": converted, "logs": "".join(logs).splitlines()}


def _finish(coroutine: Any, awaits: bool) -> Any:
    """The value of the code's coroutine: driven by hand unless it awaits (asyncio costs a start)."""
    if awaits:
        import asyncio
        return asyncio.run(coroutine)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the code awaited outside an event loop")


def run(request: dict[str, Any]) -> dict[str, Any]:
    if request.get("kind") == "items":
        return run_items(request)
    memory = int(request.get("memoryLimitBytes", 0))
    try:
        compiled = compile(as_function(request["code"]), "<code>", "exec")
    except SyntaxError as exc:
        return {"ok": False, "error": f"SyntaxError: {exc.msg} (line {(exc.lineno or 1) - 1})"}
    namespace: dict[str, Any] = {"__name__": "__tool__"}
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # print() in the code must not corrupt the answer line
    try:
        exec(compiled, namespace)
        query = request.get("query")
        result = namespace["_tool"](query, query)
    except MemoryError:
        return {"ok": False, "error": f"MemoryError: the code needed more than the memory limit of {memory // (1024 * 1024)} MB"}
    except RecursionError as exc:
        return {"ok": False, "error": f"RecursionError: {exc}{user_line(exc)}"}
    except BaseException as exc:  # anything the code raises is the tool's error, reported as text
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}{user_line(exc)}"}
    finally:
        sys.stdout = real_stdout
    if result is None:
        return {"ok": False, "error": "the code returned nothing; end it with `return <text>`"}
    if not isinstance(result, str):
        try:
            result = json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError):
            return {"ok": False, "error": f"the code returned a {type(result).__name__}, which is not text or JSON"}
    limit = int(request.get("maxResultChars", 0))
    if limit and len(result) > limit:
        result = result[:limit] + f"\n[result cut: only the first {limit} characters are shown]"
    return {"ok": True, "result": result}


def sandboxed(request: dict[str, Any], missing: list[str], alive_fd: int) -> None:
    """The first process of the sandbox: confine itself, run the code, write the answer, exit."""
    missing = missing + isolation.confine(
        WORKDIR, int(request.get("memoryLimitBytes", 0)), int(request.get("cpuSeconds", 0)),
        int(request.get("maxProcesses", 0)), alive_fd,
    )
    try:
        answer = run(request)
    except MemoryError:
        answer = {"ok": False, "error": "MemoryError: the code needed more than the memory limit"}
    answer["missing"] = missing
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: the code may have left threads or huge objects


def main() -> None:
    request = json.loads(sys.stdin.read())
    missing = isolation.enter_namespaces()
    alive_read, alive_write = os.pipe()  # closes when this process dies: the sandbox then stops
    pid = os.fork()
    if pid == 0:
        os.close(alive_write)
        sandboxed(request, missing, alive_read)
    os.close(alive_read)
    _, status = os.waitpid(pid, 0)
    # Report the sandbox's end as this process's own, so a kill by the CPU limit reads as one.
    if os.WIFSIGNALED(status):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the signal is news, not a crash to dump
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main()
