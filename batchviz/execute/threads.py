"""How many threads NumPy's BLAS may use for a pass: the cores the rest of the machine
leaves free.

A matrix product split over threads ends when its slowest thread does. When another
program keeps a core busy, the thread on that core runs at half speed or less and the
product takes longer than on one thread alone: on a 2-core machine with one busy
neighbour, the Tree-LSTM's training ran at 348 trees/s with the BLAS on two threads and at
600 on one (750 on two when the machine was quiet). So before a forward or backward pass
the executor looks at how much CPU time the rest of the machine used lately (Linux's
``/proc/stat``, less this process's own time, sampled at most ten times a second) and
lets the BLAS use the cores left free: at least one, at most as many as it would use
anyway. Small products need no rule of ours: OpenBLAS runs them on one thread by itself.
After the pass the BLAS gets its own setting back, so the user's own NumPy code is left as
it was. Elsewhere than on Linux, or without a BLAS that threadpoolctl can set, nothing
changes.
"""
from __future__ import annotations

import math
import os
import time

#: how often the machine's load is sampled, at most (seconds)
SAMPLE_EVERY = 0.1
#: the part of a core that other programs may use without taking it (system chores)
NOISE = 0.3


class FreeCores:
    """The cores the rest of the machine left free over the last sample period."""

    def __init__(self, stat_path: str = "/proc/stat", cores: int | None = None):
        self.stat_path = stat_path
        self.cores = cores or os.cpu_count() or 1
        self._last = self._sample()
        # until the first period has passed: the runnable processes of the last minute,
        # none of them this one yet (a program's first passes come right after its start)
        self.free = float(max(0, self.cores - math.ceil(max(0.0, _load_average() - NOISE)))
                          if self._last else self.cores)

    def _sample(self):
        """``(wall seconds, machine's busy CPU seconds, this process's CPU seconds)``, or
        None where ``/proc/stat`` cannot be read."""
        try:
            with open(self.stat_path, "rb") as f:
                fields = f.readline().split()[1:]
        except OSError:
            return None
        # user nice system idle iowait irq softirq steal (a guest's time, after them, is
        # counted in user already)
        ticks = [int(x) for x in fields[:8]]
        busy = sum(ticks) - ticks[3] - (ticks[4] if len(ticks) > 4 else 0)  # less idle, iowait
        return time.monotonic(), busy / _TICKS_PER_SECOND, time.process_time()

    def now(self) -> float:
        """The free cores, sampled again when the last sample is old enough."""
        last = self._last
        if last is None or time.monotonic() - last[0] < SAMPLE_EVERY:
            return self.free
        sample = self._sample()
        if sample is None:
            return self.free
        wall = sample[0] - last[0]
        others = (sample[1] - last[1]) - (sample[2] - last[2])  # CPU seconds not ours
        # a core counts as taken from a third of it on: a neighbour that competes with our
        # threads gets less than a whole core, and must not look like a passing burst
        taken = math.ceil(max(0.0, others / wall - NOISE))
        self.free = float(min(self.cores, max(0, self.cores - taken)))
        self._last = sample
        return self.free


_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _load_average() -> float:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


class BlasThreads:
    """Sets the BLAS's threads for a pass and puts its own setting back afterwards
    (threadpoolctl, found on first use)."""

    def __init__(self):
        self._libraries = None
        self._load = None

    def _find(self) -> list:
        if self._libraries is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self._libraries = []
            else:
                self._libraries = ThreadpoolController().select(user_api="blas").lib_controllers
            self._load = FreeCores()
        return self._libraries

    def for_pass(self):
        """``with blas_threads.for_pass():`` inside the block, the BLAS uses at most the
        cores that other programs left free (at least one)."""
        return _Pass(self)

    def _limit(self) -> list:
        """Let the BLAS use at most the free cores (at least one); ``(library, its own
        threads)`` of every library whose setting changed, to be put back."""
        libraries = self._find()
        if not libraries or self._load._last is None:
            return []
        wanted = max(1, int(self._load.now()))
        own = [lib.get_num_threads() for lib in libraries]
        changed = [(lib, n) for lib, n in zip(libraries, own) if wanted < n]
        for lib, _ in changed:
            lib.set_num_threads(wanted)
        return changed


class _Pass:
    """One pass's setting of the BLAS's threads (:meth:`BlasThreads.for_pass`), put back on
    leaving the block, whether the pass ends or fails. A class with ``__enter__`` and
    ``__exit__`` rather than a ``contextlib.contextmanager`` generator: every forward and
    backward pass enters one, and a generator's context manager costs several calls more."""

    __slots__ = ("blas", "changed")

    def __init__(self, blas: BlasThreads):
        self.blas, self.changed = blas, []

    def __enter__(self) -> "_Pass":
        self.changed = self.blas._limit()
        return self

    def __exit__(self, kind, error, traceback) -> None:
        for lib, n in self.changed:
            lib.set_num_threads(n)


#: the executor's (one per process: the BLAS is one per process)
BLAS_THREADS = BlasThreads()
