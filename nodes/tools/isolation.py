"""The Code Tool's sandbox: what its child process does to itself before any user code runs.

Two stages, both in the child (`code_runner.py`), using only the kernel (no installed tool):
1. `enter_namespaces`: new PID, network, IPC, UTS and mount namespaces, and a root file system
   of only the system and Python folders and the work folder (sandbox_root.py); root then
   leaves for user nobody; a user namespace of its own (made by unprivileged users first, to
   create the others). No network device but a loopback of its own; the code's processes see
   none of ours, and when the first process of the PID namespace exits the kernel kills the rest.
2. `confine` (in the forked first process of that namespace): resource limits (address space,
   CPU time, process count, file size), Landlock (only system and Python files readable, only the
   work folder writable, no TCP, no signals out), no capabilities, killed if its parent dies.
Each stage returns what it could not enforce, in words, so the run can say so.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import sysconfig

if __package__:
    from . import landlock, sandbox_root
else:  # run by the child as a plain module from this folder, without mini-n8n's package
    import landlock  # type: ignore[no-redef]
    import sandbox_root  # type: ignore[no-redef]

NOBODY = 65534
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
MAX_FILE_BYTES = 256 * 1024 * 1024
SYSTEM_READ = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache", "/etc/localtime", "/dev/urandom", "/dev/zero"]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> None:
    if _libc().unshare(ctypes.c_int(flags)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _write(proc_self: int, name: str, text: str) -> None:
    fd = os.open(name, os.O_WRONLY, dir_fd=proc_self)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _drop_to_nobody(workdir: str) -> None:
    """Root no longer: file access, signals and the process limit then apply as to anyone."""
    os.chown(workdir, NOBODY, NOBODY)
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    _libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # setuid cleared it; /proc/self/uid_map needs it


def _own_user_namespace(flags: int, proc_self: int) -> None:
    uid, gid = os.geteuid(), os.getegid()
    _unshare(CLONE_NEWUSER | flags)
    _write(proc_self, "setgroups", "deny")
    _write(proc_self, "uid_map", f"{NOBODY} {uid} 1")
    _write(proc_self, "gid_map", f"{NOBODY} {gid} 1")


def _own_root(workdir: str) -> list[str]:
    try:
        sandbox_root.enter(SYSTEM_READ + python_paths(), workdir)
        return []
    except OSError as exc:
        return [f"a file system of its own ({exc.strerror or exc}): unix sockets on this machine can be reached"]


def enter_namespaces() -> list[str]:
    """Stage 1, before the fork, in the work folder: namespaces, own root, unprivileged user;
    what is missing."""
    if not sys.platform.startswith("linux"):
        return ["namespaces, Landlock and the process limit (they need Linux)"]
    # /proc/self by a handle: the user namespace's maps are written after /proc left the root
    proc_self = os.open("/proc/self", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return _enter(os.getcwd(), proc_self)
    finally:
        os.close(proc_self)  # the code must not inherit a way back into /proc


def _enter(workdir: str, proc_self: int) -> list[str]:
    others = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS
    if os.geteuid() != 0:
        try:
            _own_user_namespace(others, proc_self)
        except OSError as exc:
            return [f"PID and network namespaces ({exc.strerror}): no network isolation, spawned processes may outlive the call"]
        return _own_root(workdir)
    try:
        _unshare(others)  # root may create these itself, even where user namespaces are off
    except OSError as exc:
        return [f"namespaces ({exc.strerror}): no network isolation, spawned processes may outlive the call, the code runs as root"]
    missing = _own_root(workdir)
    if missing:
        return [*missing, "the code runs as root (its Python may be unreadable to user nobody)"]
    try:
        _drop_to_nobody(".")
    except OSError as exc:  # e.g. root of a container whose user namespace does not map nobody
        return [f"user nobody ({exc.strerror}): the code runs as root"]
    try:
        _own_user_namespace(0, proc_self)  # the process limit then counts this sandbox only
    except OSError as exc:
        missing.append(f"a user namespace of its own ({exc.strerror}): the process limit counts every process of user nobody")
    return missing


def python_paths() -> list[str]:
    """Where this interpreter's code lives: the code may import any installed module."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(v for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib"))
    return sorted(paths)


def _parent_gone(alive_fd: int) -> bool:
    os.set_blocking(alive_fd, False)
    try:
        return os.read(alive_fd, 1) == b""
    except BlockingIOError:
        return False


def _drop_capabilities() -> None:
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _libc().capset(header, data)


def confine(workdir: str, memory_bytes: int, cpu_seconds: int, max_processes: int, alive_fd: int) -> list[str]:
    """Stage 2, in the sandbox's first process: limits, Landlock, no capabilities; what is missing."""
    missing: list[str] = []
    linux = sys.platform.startswith("linux")
    if linux:
        _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if _parent_gone(alive_fd):
        os._exit(1)
    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    if cpu_seconds > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if not linux:
        return missing
    if os.geteuid() == 0:
        missing.append("a process limit (the code runs as root)")
    else:
        procs = max_processes + 1  # the waiting parent counts too
        resource.setrlimit(resource.RLIMIT_NPROC, (procs, procs))
    abi = landlock.abi_version()
    try:
        missing += landlock.restrict(
            read=SYSTEM_READ + python_paths(), write=[workdir, "/dev/null"], abi=abi,
        )
    except OSError as exc:
        missing.append(f"file, TCP and signal confinement by Landlock ({exc.strerror or exc})")
    _drop_capabilities()
    return missing
