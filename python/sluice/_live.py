"""The loaders still open: closed at exit, and given fresh locks in a forked child."""
from __future__ import annotations

import atexit
import os
import threading
import weakref

# Closed at exit: a worker thread that calls a user function (Lambda) while the interpreter shuts
# down would otherwise be stopped inside C++ (and abort the process).
LIVE: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for loader in list(LIVE):
        loader.close()


def _after_fork_in_child() -> None:
    # A thread of the parent may have held a loader's lock at the fork: the child gets fresh ones,
    # and the C++ loader tells it that it cannot iterate.
    for loader in list(LIVE):
        loader._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
