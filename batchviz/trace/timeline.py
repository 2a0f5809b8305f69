"""Node states over the steps of a trace: done, in this step's batch, on the agenda, waiting.

Two numbers per node are enough to answer "what state is node i in at step k": the step that
runs it, and the step from which all its arguments are computed (it joins the agenda then).
The renderer and the widgets ask this for every node at every step, so it is computed once.
"""
from __future__ import annotations

import numpy as np

DONE, BATCH, AGENDA, WAITING = "done", "batch", "agenda", "waiting"
#: in the order a picture's legend lists them
STATES = (DONE, BATCH, AGENDA, WAITING)


class Timeline:
    """``run_at[i]``: the step computing node i (-1 for parameters, done from the start);
    ``ready_at[i]``: the first step at which all of node i's arguments are computed."""

    def __init__(self, trace):
        nodes = trace.nodes
        n = len(nodes)
        self.n_steps = len(trace.steps)
        run_at = [-1] * n
        for step in trace.steps:
            for i in step.batch:
                run_at[i] = step.index
        ready_at = [0] * n
        for node in nodes:
            latest = 0
            for a in node.args:
                if run_at[a] + 1 > latest:
                    latest = run_at[a] + 1
            ready_at[node.id] = latest
        self.run_at = run_at
        self.ready_at = ready_at
        self._run = np.asarray(run_at, dtype=np.int64)
        self._ready = np.asarray(ready_at, dtype=np.int64)

    def check_step(self, step) -> int:
        """``step`` as an index in ``0..n_steps`` (``n_steps``: after the last batch);
        negative values count from the end like Python indexes over that range."""
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError(f"step must be an int, got {type(step).__name__}")
        last = self.n_steps
        if step < 0:
            step += last + 1
        if not 0 <= step <= last:
            raise IndexError(
                f"step {step} is out of range: this trace has {last} steps (0..{last - 1}), "
                f"and step {last} shows the graph after the last one")
        return step

    def state(self, node: int, step: int) -> str:
        run = self.run_at[node]
        if run < step:
            return DONE          # parameters (run -1) are done from the start
        if run == step:
            return BATCH
        return AGENDA if self.ready_at[node] <= step else WAITING

    def state_codes(self, step: int) -> np.ndarray:
        """Per node, the index of its state in :data:`STATES` (vectorized :meth:`state`)."""
        step = self.check_step(step)
        run, ready = self._run, self._ready
        return np.where(run < step, 0, np.where(run == step, 1, np.where(ready <= step, 2, 3)))

    def states(self, step: int) -> list:
        step = self.check_step(step)
        state = self.state
        return [state(i, step) for i in range(len(self.run_at))]
