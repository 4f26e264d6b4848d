"""Code Tool: Python the user writes, run for the model in a separate, limited process.

n8n's `toolCode` parameters. The code is the body of a function that gets `query` (the model's
text, or its arguments as a dict when an input schema is declared) and returns text. It runs in
`python -I code_runner.py`, in a fresh work folder removed afterwards, with a minimal
environment, and sandboxes itself (isolation.py: namespaces, Landlock, resource limits) before
the code runs. A wall-clock time limit kills it; so a runaway or hostile tool costs a tool
error, not the editor, the user's files or keys. Protections the machine lacks are logged (the editor shows them).
"""

import asyncio
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from engine.chat import ToolSpec
from engine.connection_types import AI_TOOL, PortSpec
from engine.context import NodeContext, SupplyContext
from engine.errors import NodeOperationError
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item
from engine.workflow import Node

from .naming import node_name_to_tool_name

RUNNER = str(Path(__file__).with_name("code_runner.py"))
MAX_RESULT_CHARS = 100_000
DEFAULT_CODE = "# `query` holds the model's input; return text for the model\nreturn query.upper()\n"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
log = logging.getLogger(__name__)


class CodeToolOptions(NodeParams):
    timeLimit: float = Field(10, gt=0, le=600, title="Time Limit (s)", description="Wall-clock time before the code is stopped")
    memoryLimit: int = Field(256, ge=32, le=16384, title="Memory Limit (MB)", description="Address space the code may use")
    processLimit: int = Field(16, ge=1, le=1024, title="Process Limit", description="Processes and threads the code may run at once")


class CodeToolParams(NodeParams):
    name: str = Field("", title="Name", description="Tool name the model sees; the node name when empty")
    description: str = Field("", title="Description", json_schema_extra={"multiline": True})
    language: Literal["python", "javaScript"] = Field("python", title="Language")
    pythonCode: str = Field(DEFAULT_CODE, title="Python", json_schema_extra={
        "multiline": True, "code": "python", "displayOptions": {"show": {"language": ["python"]}}})
    jsCode: str = Field("", title="JavaScript", json_schema_extra={
        "multiline": True, "code": "javascript", "displayOptions": {"show": {"language": ["javaScript"]}}})
    specifyInputSchema: bool = Field(False, title="Specify Input Schema")
    schemaType: Literal["fromJson", "manual"] = Field("fromJson", title="Schema Type", json_schema_extra={
        "displayOptions": {"show": {"specifyInputSchema": [True]}}})
    jsonSchemaExample: str = Field("", title="JSON Example", json_schema_extra={
        "multiline": True, "displayOptions": {"show": {"specifyInputSchema": [True], "schemaType": ["fromJson"]}}})
    inputSchema: str = Field("", title="Input Schema", json_schema_extra={
        "multiline": True, "displayOptions": {"show": {"specifyInputSchema": [True], "schemaType": ["manual"]}}})
    options: CodeToolOptions = Field(default_factory=CodeToolOptions, title="Options")


class CodeToolError(Exception):
    """Why the code gave no result; shown to the model as `There was an error: "..."`.
    `missing`: the protections the machine could not give the code, when it got that far."""

    def __init__(self, message: str, missing: list[str] | None = None) -> None:
        super().__init__(message)
        self.missing = missing or []


def sandbox_environment(workdir: str) -> dict[str, str]:
    """All the code's process sees of ours: no keys, no HOME of the user, no proxies."""
    return {"PATH": SANDBOX_PATH, "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}


_warned: set[str] = set()


def warn_missing(node: str, missing: list[str]) -> None:
    """Say once per node and gap which protections this machine could not give the code."""
    key = f"{node}\n{missing}"
    if missing and key not in _warned:
        _warned.add(key)
        log.warning('Code Tool "%s" ran without: %s', node, "; ".join(missing))


def schema_from_example(example: Any, every_field_required: bool = True) -> dict[str, Any]:
    """A JSON schema that `example` fits, arrays by their first item; objects with every key required
    (n8n from v1.3 on) or none."""
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, (int, float)):
        return {"type": "number"}
    if isinstance(example, str):
        return {"type": "string"}
    if isinstance(example, list):
        return {"type": "array", "items": schema_from_example(example[0], every_field_required)} if example else {"type": "array"}
    if isinstance(example, dict):
        schema = {"type": "object", "properties": {k: schema_from_example(v, every_field_required) for k, v in example.items()}}
        return {**schema, "required": list(example)} if every_field_required else schema
    return {}


def input_schema(params: CodeToolParams, node: str, version: float = 1.3) -> dict[str, Any]:
    if not params.specifyInputSchema:
        return {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "The input for the tool"}},
            "required": ["query"],
        }
    source, label = (
        (params.jsonSchemaExample, "JSON Example") if params.schemaType == "fromJson" else (params.inputSchema, "Input Schema")
    )
    try:
        parsed = json.loads(source)
    except json.JSONDecodeError as exc:
        raise NodeOperationError(f'The {label} of node "{node}" is not valid JSON: {exc.msg} (line {exc.lineno})', node=node) from None
    schema = schema_from_example(parsed, version >= 1.3) if params.schemaType == "fromJson" else parsed
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise NodeOperationError(f'The {label} of node "{node}" must describe a JSON object', node=node)
    return schema


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the code's own children go too
        except ProcessLookupError:
            pass


async def _read_capped(stream: asyncio.StreamReader, limit: int) -> bytes:
    data = bytearray()
    while chunk := await stream.read(65536):
        data += chunk
        if len(data) > limit:
            raise CodeToolError(f"the code wrote more than {limit} bytes of output")
    return bytes(data)


async def run_code(code: str, query: Any, time_limit: float, memory_mb: int, max_processes: int = 16) -> tuple[str, list[str]]:
    """Run `code` in a fresh sandboxed process: its result text and the protections the machine
    could not give, or a CodeToolError saying why there is no result."""
    answer, missing = await run_request({
        "code": code, "query": query, "memoryLimitBytes": memory_mb * 1024 * 1024,
        "cpuSeconds": int(time_limit) + 2, "maxProcesses": max_processes, "maxResultChars": MAX_RESULT_CHARS,
    }, time_limit)
    if not answer.get("ok"):
        raise CodeToolError(str(answer.get("error", "unknown error")), missing)
    return str(answer["result"]), missing


async def run_request(request: dict[str, Any], time_limit: float, max_answer_bytes: int = MAX_RESULT_CHARS * 4 + 4096
                      ) -> tuple[dict[str, Any], list[str]]:
    """One request to the runner in a fresh sandboxed process and a fresh work folder: its answer
    and the protections the machine could not give; a CodeToolError when there is no answer."""
    workdir = tempfile.mkdtemp(prefix="mini-n8n-code-")
    try:
        out, returncode = await _exchange(json.dumps(request).encode(), workdir, time_limit, max_answer_bytes)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    try:
        answer = json.loads(out.decode("utf-8", errors="replace").strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        if returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            raise CodeToolError("the code used more CPU time than its limit and was stopped") from None
        raise CodeToolError(f"the code process ended without an answer (exit code {returncode})") from None
    return answer, [str(m) for m in answer.get("missing", [])]


async def _exchange(request: bytes, workdir: str, time_limit: float, max_answer_bytes: int) -> tuple[bytes, int | None]:
    """Start the runner in `workdir`, send the request, read its answer: (stdout, exit code)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-I", RUNNER, cwd=workdir, env=sandbox_environment(workdir),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None

    async def exchange() -> bytes:
        process.stdin.write(request)  # type: ignore[union-attr]
        await process.stdin.drain()  # type: ignore[union-attr]
        process.stdin.close()  # type: ignore[union-attr]
        out = await _read_capped(process.stdout, max_answer_bytes)  # type: ignore[arg-type]
        await process.wait()
        return out

    try:
        out = await asyncio.wait_for(exchange(), time_limit)
    except asyncio.TimeoutError:
        raise CodeToolError(f"the code did not finish within the time limit of {time_limit:g} s and was stopped") from None
    except (BrokenPipeError, ConnectionResetError):
        out = b""
    finally:
        _kill(process)
        await process.wait()
    return out, process.returncode


class CodeTool(NodeType):
    type = "@n8n/n8n-nodes-langchain.toolCode"
    version = 1.3
    versions = (1, 1.1, 1.2, 1.3)  # up to v1.1 the tool's name is its `name` parameter, then the node's name
    display_name = "Code Tool"
    description = "Python the agent can call; runs in a sandbox without network, keys or your files"
    group = "Tools"
    icon = "code"
    default_name = "Code Tool"
    inputs = ()
    outputs = (PortSpec(AI_TOOL, "Tool"),)
    Params = CodeToolParams
    supplies_once = True
    implemented_parameters = frozenset({"name", "description", "language", "pythonCode", "specifyInputSchema", "schemaType",
                                        "jsonSchemaExample", "inputSchema"})
    unsupported_parameters = {
        "jsCode": "JavaScript code is refused with an error naming it (the Code Tool runs Python)",
    }

    async def supply_data(self, ctx: SupplyContext) -> ToolSpec:
        params: CodeToolParams = ctx.params()
        self._check_language(params, ctx.node)
        version = float(ctx.node.typeVersion)
        return ToolSpec(
            name=node_name_to_tool_name((params.name if version <= 1.1 else "") or ctx.node.name),
            description=params.description or "Runs Python code on the input and returns its result",
            parameters=input_schema(params, ctx.node.name, version),
        )

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        out = []
        for i, item in enumerate(ctx.items):
            params: CodeToolParams = ctx.params(i)
            self._check_language(params, ctx.node)
            args = dict(item.get("json", {}))
            query = args if params.specifyInputSchema else args.get("query", args.get("input", ""))
            try:
                result, missing = await run_code(
                    params.pythonCode, query, params.options.timeLimit, params.options.memoryLimit, params.options.processLimit
                )
            except CodeToolError as exc:
                self._report_missing(ctx, exc.missing)
                raise NodeOperationError(f'There was an error: "{exc}"', node=ctx.node.name) from None
            self._report_missing(ctx, missing)
            out.append({"json": {"response": result}})
        return [out]

    @staticmethod
    def _report_missing(ctx: NodeContext, missing: list[str]) -> None:
        """Protections this machine could not give: a note on the node run's run-log line, and stderr."""
        if missing:
            ctx.note("ran without: " + "; ".join(missing))
        warn_missing(ctx.node.name, missing)

    @staticmethod
    def _check_language(params: CodeToolParams, node: Node) -> None:
        raw = node.parameters
        # n8n leaves its default language (JavaScript) out of exported files: such a node has jsCode only.
        javascript_by_default = "language" not in raw and bool(raw.get("jsCode")) and not raw.get("pythonCode")
        if params.language != "python" or javascript_by_default:
            raise NodeOperationError(
                f'Node "{node.name}" is set to JavaScript; mini-n8n runs Python code only (set Language to Python)',
                node=node.name,
            )
