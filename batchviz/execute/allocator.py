"""Keeping freed memory in the process, as DyNet's memory pools do.

Every batch's kernels return fresh arrays (a Tree-LSTM's backward pass makes hundreds of
them, megabytes each). glibc's ``malloc`` serves large requests with ``mmap`` and gives
freed memory back to the operating system, so the next minibatch's arrays arrive as
untouched pages, and the first write to every page faults: on a small machine, a sizeable
part of a Tree-LSTM training step (``docs/benchmarks.md``). DyNet allocates its pools once
and resets them between
graphs; the arena pool (:class:`~batchviz.execute.memory.ArenaPool`) does that for the
arenas, and this module does it for everything else by telling ``malloc`` to serve
requests up to 32 MB from its heap and to keep up to 1 GB of freed heap.

The cost: the process keeps the memory of its largest minibatch after it is done. Set the
environment variable ``BATCHVIZ_KEEP_FREED_MEMORY=0`` before importing batchviz to leave
``malloc`` as it is. Elsewhere than Linux with glibc nothing is changed.
"""
from __future__ import annotations

import ctypes
import os
import sys

# mallopt's parameter numbers (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: requests up to this size come from the heap (glibc's largest allowed value on 64 bits)
MMAP_THRESHOLD = 32 << 20
#: freed memory at the top of the heap is given back only beyond this
TRIM_THRESHOLD = 1 << 30

#: whether :func:`keep_freed_memory` changed malloc's settings in this process
applied = False


def keep_freed_memory() -> bool:
    """Set glibc's ``malloc`` to keep freed memory for reuse (see the module docstring).
    Returns whether it did: False when ``BATCHVIZ_KEEP_FREED_MEMORY=0`` or when the C
    library is not glibc."""
    global applied
    if os.environ.get("BATCHVIZ_KEEP_FREED_MEMORY", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    # (mallopt returns 1 on success)
    applied = (mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
               and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    return applied
