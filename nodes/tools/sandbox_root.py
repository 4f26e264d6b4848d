"""A file system of a few folders for the Code Tool's sandbox: a tmpfs becomes the root.

In a private mount namespace, the tmpfs gets bind mounts of the system and Python folders (at
their own paths), /dev/null, /dev/zero, /dev/urandom, /dev/random and the work folder, then
replaces `/`. Everything else, the user's files and every unix socket (a database's, a
display's) included, is not there to open or connect to. No /proc: our processes stay unseen.
Imports only the standard library: the Code Tool's child process runs it before any user code.
"""

from __future__ import annotations

import ctypes
import os
import platform

MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
DEVICES = ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"]
STAGING = "/tmp"  # any folder will do: the tmpfs is mounted here, then made the root


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(libc: ctypes.CDLL, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    _check(libc.mount(raw(source), raw(target), raw(fstype), ctypes.c_ulong(flags), raw(data)), f"mount {target}")


def outermost(paths: list[str]) -> list[str]:
    """The paths not inside another of them, each once."""
    unique = sorted(set(paths))
    return [p for p in unique if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in unique)]


def _place(libc: ctypes.CDLL, root: str, path: str, held: int | str) -> None:
    """Put `path` into the new root: a symlink as a symlink, a folder or file as a bind mount."""
    target = root + path
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if isinstance(held, str):
        os.symlink(held, target)
        return
    if os.path.isdir(f"/proc/self/fd/{held}"):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    _mount(libc, f"/proc/self/fd/{held}", target, None, MS_BIND | MS_REC)


def enter(read_paths: list[str], workdir: str) -> None:
    """Make the root hold only `read_paths`, the devices and `workdir` (bound from the current
    directory, at its path), and go there. Needs a fresh mount namespace this process may change."""
    libc = ctypes.CDLL(None, use_errno=True)
    pivot = SYS_PIVOT_ROOT.get(platform.machine())
    if pivot is None:
        raise OSError(0, f"pivot_root is not known on {platform.machine()}")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the system's mounts
    held: dict[str, int | str] = {}
    for path in outermost([p for p in read_paths + DEVICES if os.path.lexists(p)]):
        if os.path.islink(path):
            held[path] = os.readlink(path)
        elif os.path.exists(path):
            held[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
    held[workdir] = os.open(".", os.O_PATH | os.O_CLOEXEC)
    _mount(libc, "tmpfs", STAGING, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
    try:
        for path, what in held.items():
            _place(libc, STAGING, path, what)
    finally:
        for what in held.values():
            if isinstance(what, int):
                os.close(what)
    os.chdir(STAGING)
    _check(libc.syscall(ctypes.c_long(pivot), b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir(workdir)
