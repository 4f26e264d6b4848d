"""Landlock (Linux >= 5.13) through ctypes: confine this process and its children for good.

Files: only the paths given may be read (and executed) or written. Network (ABI >= 4): no TCP
bind or connect. Scopes (ABI >= 6): no signals to processes outside the sandbox and no
connection to abstract unix sockets. Needs no privilege and no installed tool; the kernel keeps
the rules across fork and exec and they cannot be lifted. Imports only the standard library:
the Code Tool's child process loads it before any user code runs.
"""

from __future__ import annotations

import ctypes
import os
import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # same numbers on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a plain file may hold
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR


def fs_rights(abi: int) -> int:
    """Every file-system right the kernel of this ABI version knows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class LandlockError(OSError):
    """Landlock is missing or refused a step; the message names the step."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The Landlock ABI version of the running kernel; 0 when Landlock is unavailable."""
    libc = _libc()
    version = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _check(result: int, step: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"Landlock {step}: {os.strerror(err)}")
    return result


def restrict(read: list[str], write: list[str], *, abi: int) -> list[str]:
    """Confine this process: `read` paths readable/executable, `write` paths fully usable, no
    TCP, no signals or abstract sockets outside. Returns the parts this kernel could not enforce."""
    if abi < 1:
        raise LandlockError(0, "Landlock is not available in this kernel")
    libc = _libc()
    handled_fs = fs_rights(abi)
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _check(libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), attr[:size], ctypes.c_size_t(size), ctypes.c_uint32(0)), "ruleset")
    try:
        for paths, rights in ((read, READ_RIGHTS), (write, handled_fs)):
            for path in paths:
                _allow(libc, ruleset, path, rights & handled_fs)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ruleset, ctypes.c_uint32(0)), "restrict_self")
    finally:
        os.close(ruleset)
    missing = []
    if not handled_net:
        missing.append("TCP blocking by Landlock (kernel too old)")
    if not scoped:
        missing.append("signal and abstract-socket scoping by Landlock (kernel too old)")
    return missing


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path this machine lacks needs no rule
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = struct.pack("=Qi", rights, fd)
        _check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ruleset, ctypes.c_int(RULE_PATH_BENEATH), rule, ctypes.c_uint32(0)), f"rule for {path}")
    finally:
        os.close(fd)
