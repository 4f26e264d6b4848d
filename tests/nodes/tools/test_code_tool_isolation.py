"""Code Tool sandbox: one test per attack a hostile tool (or a model talked into writing one) tries.

Each attack's target is readable or reachable by ordinary permissions (world-readable files in a
world-readable folder, a loopback port, a process of ours), so only the sandbox stands between.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterator

import pytest

from engine.store import ExecutionStore
from nodes.tools.code_tool import CodeToolError, run_code, warn_missing
from tests.nodes.tools.processes import NAME_A_PROCESS, kill_all, processes_named

ROOT = Path(__file__).resolve().parents[3]
SECRET = "sk-test-" + "s3cr3t" * 4
TRY_READ = """
try:
    with open(query) as f:
        return 'READ: ' + f.read(200)
except OSError as exc:
    return 'blocked: ' + type(exc).__name__
"""


def run(code: str, query: object = "", **limits: float) -> str:
    result, _missing = asyncio.run(
        run_code(code, query, limits.get("time", 10), int(limits.get("memory", 256)), int(limits.get("processes", 16)))
    )
    return result


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder anyone may read and write (like a careless home or project), outside the test's own."""
    folder = Path(tempfile.mkdtemp(prefix="mini-n8n-victim-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_environment_keys_are_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HOME", str(ROOT))
    result = run("import json, os\nreturn json.dumps(dict(os.environ))")
    env = json.loads(result)
    assert SECRET not in result
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_CTYPE", "PYTHONIOENCODING"}
    assert env["HOME"] != str(ROOT) and env["HOME"] == env["TMPDIR"]


def test_the_environment_of_our_process_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = run(TRY_READ, f"/proc/{os.getpid()}/environ")
    assert result.startswith("blocked"), result


def test_the_credentials_file_cannot_be_read(open_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    credentials = open_folder / ".config" / "mini-n8n" / "credentials.json"
    credentials.parent.mkdir(parents=True)
    credentials.parent.parent.chmod(0o755)
    credentials.parent.chmod(0o755)
    credentials.write_text(json.dumps({"openAiApi": {"apiKey": SECRET}}))
    credentials.chmod(0o644)  # a careless mode: only the sandbox protects it
    monkeypatch.setenv("HOME", str(open_folder))
    assert run(TRY_READ, str(credentials)).startswith("blocked")
    via_home = "import os\n" + TRY_READ.replace("open(query)", "open(os.path.expanduser('~/.config/mini-n8n/credentials.json'))")
    assert run(via_home).startswith("blocked")


def test_the_execution_store_cannot_be_read(open_folder: Path) -> None:
    path = open_folder / "executions.sqlite"
    ExecutionStore(path).close()
    path.chmod(0o644)
    result = run(TRY_READ.replace("open(query)", "open(query, 'rb')").replace("f.read(200)", "repr(f.read(16))"), str(path))
    assert result.startswith("blocked"), result


def test_the_project_files_cannot_be_read_or_written(open_folder: Path) -> None:
    assert run(TRY_READ, str(ROOT / "README.md")).startswith("blocked")
    target = open_folder / "planted.txt"
    code = "try:\n    open(query, 'w').write('x')\n    return 'wrote'\nexcept OSError as exc:\n    return 'blocked: ' + type(exc).__name__"
    assert run(code, str(target)).startswith("blocked")
    assert not target.exists()


def test_the_work_folder_is_fresh_writable_and_removed_afterwards() -> None:
    code = "import os\nopen('out.txt', 'w').write('kept')\nreturn os.getcwd() + ' ' + str(os.listdir('.'))"
    cwd, listing = run(code).split(" ", 1)
    assert listing == "['out.txt']"
    assert not Path(cwd).exists()


def test_no_network_not_even_a_loopback_server_of_ours() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    accepted: list[object] = []

    def accept() -> None:
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    listener = threading.Thread(target=accept, daemon=True)
    listener.start()
    code = (
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', query), timeout=3).sendall(b'hi')\n"
        "    return 'connected'\nexcept OSError as exc:\n    return 'blocked: ' + type(exc).__name__"
    )
    try:
        result = run(code, server.getsockname()[1])
    finally:
        server.close()
        listener.join()
    assert result.startswith("blocked"), result
    assert accepted == []


def test_no_unix_socket_of_this_machine_can_be_reached(open_folder: Path) -> None:
    """Like a database's socket (PostgreSQL trusts local connections): anyone may connect to it."""
    path = open_folder / ".s.PGSQL.5432"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    path.chmod(0o777)
    server.listen()
    code = (
        "import socket\ntry:\n    socket.socket(socket.AF_UNIX).connect(query)\n    return 'connected'\n"
        "except OSError as exc:\n    return 'blocked: ' + type(exc).__name__"
    )
    try:
        result = run(code, str(path))
    finally:
        server.close()
    assert result.startswith("blocked"), result


def test_the_code_cannot_kill_the_process_that_runs_it() -> None:
    script = (
        "import asyncio\nfrom nodes.tools.code_tool import run_code\n"
        "code = 'import os, signal\\nos.kill(os.getppid(), signal.SIGKILL)\\nreturn \"tried\"'\n"
        "try:\n    print(asyncio.run(run_code(code, '', 10, 256))[0])\n"
        "except Exception as exc:\n    print('tool error:', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in ("tried", "tool error: the code process ended without an answer (exit code -9)")


def test_the_code_cannot_signal_our_other_processes() -> None:
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        code = "import os\ntry:\n    os.kill(query, 9)\n    return 'killed'\nexcept OSError as exc:\n    return 'blocked: ' + type(exc).__name__"
        assert run(code, victim.pid).startswith("blocked")
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


FORK_BOMB = """
import ctypes, os, time
libc = ctypes.CDLL(None)
started = 0
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.setsid()
        libc.prctl(15, query.encode(), 0, 0, 0)
        time.sleep(60)
        os._exit(0)
    started += 1
return str(started)
"""


def test_a_detached_fork_bomb_is_capped_and_gone_after_the_call() -> None:
    name = "bomb" + secrets.token_hex(4)
    try:
        started = int(run(FORK_BOMB, name, processes=8))
        survivors = processes_named(name)
    finally:
        kill_all(processes_named(name))  # bounded clean-up, should the sandbox have failed
    assert started < 8
    assert survivors == []


def test_a_background_child_is_gone_after_the_call() -> None:
    name = "bg" + secrets.token_hex(4)
    child = NAME_A_PROCESS.format(name=name) + "; import time; print('named', flush=True); time.sleep(60)"
    code = (
        f"import subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', {child!r}], start_new_session=True,"
        " stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\nreturn 'started' if child.stdout.readline() else 'no child'"
    )
    try:
        assert run(code) == "started"
        survivors = processes_named(name)
    finally:
        kill_all(processes_named(name))
    assert survivors == []


def test_the_limits_hold_inside_the_sandbox() -> None:
    with pytest.raises(CodeToolError, match="time limit of 0.5 s"):
        run("while True:\n    pass", time=0.5)
    with pytest.raises(CodeToolError, match="memory limit of 64 MB"):
        run("data = bytearray(1024 ** 3)\nreturn 'got it'", memory=64)


def test_missing_protections_are_logged_once_naming_the_node(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="nodes.tools.code_tool"):
        for _ in range(2):
            warn_missing("Tool X", ["PID and network namespaces (Operation not permitted)"])
        warn_missing("Tool Y", [])
    assert [r.getMessage() for r in caplog.records] == [
        'Code Tool "Tool X" ran without: PID and network namespaces (Operation not permitted)'
    ]


def test_this_machine_gives_every_protection() -> None:
    """Linux with user namespaces and Landlock (CI's kind): nothing is missing."""
    _, missing = asyncio.run(run_code("return 'x'", "", 10, 256))
    assert missing == []

