"""One owner per execution, across machines: a session-level advisory lock per execution.

The owner holds pg_try_advisory_lock of a 64-bit key of the execution's id for as long as it
runs it. The lock lives exactly as long as the owner's connection: a killed process, or a
machine that vanished (noticed by TCP keepalives), frees it at once, with no heartbeat interval
to tune and no clock to trust. (A lease with an expiry would have to be renewed by every
running node, long model calls included, and would let a stalled owner and its successor run
the same execution when the clocks or the renewals slip.)
"""

from __future__ import annotations

import hashlib
from typing import Any


def lock_key(execution_id: str) -> int:
    """The advisory-lock key of an execution: 64 bits of a hash of its id, as a signed bigint."""
    digest = hashlib.sha256(b"mini-n8n execution " + execution_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class Leases:
    """The executions one connection owns (their locks, each taken once)."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self.held: set[str] = set()

    def take(self, execution_id: str) -> bool:
        """Own the execution; False while another connection does."""
        if execution_id in self.held:
            return True
        if not self._db.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(execution_id),)).fetchone()[0]:
            return False
        self.held.add(execution_id)
        return True

    def give_up(self, execution_id: str) -> None:
        if execution_id in self.held:
            self.held.discard(execution_id)
            self._db.execute("SELECT pg_advisory_unlock(%s)", (lock_key(execution_id),))

    def forget(self, execution_id: str) -> None:
        """The connection is gone, and the lock with it."""
        self.held.discard(execution_id)

    def owned_elsewhere(self, execution_id: str) -> bool:
        """Whether another connection owns the execution (probing leaves the lock as it was)."""
        if execution_id in self.held:
            return False
        key = lock_key(execution_id)
        if not self._db.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
            return True
        self._db.execute("SELECT pg_advisory_unlock(%s)", (key,))
        return False

    def free_for_this_transaction(self, execution_id: str) -> bool:
        """Inside a transaction: hold the execution until it ends, if no connection owns it."""
        return bool(self._db.execute("SELECT pg_try_advisory_xact_lock(%s)", (lock_key(execution_id),)).fetchone()[0])
