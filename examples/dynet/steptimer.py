"""Timing of the example programs' training steps, the same under DyNet and batchviz.dynet.

A step has four phases, timed apart so that a comparison of two systems shows *where* one
is slower, not only that it is:

- ``build``: everything up to the loss expression (the minibatch, ``renew_cg``, the graph),
- ``forward``: ``loss.value()``, which runs the graph (both systems are lazy: the batches
  are formed and computed here),
- ``backward``: ``loss.backward()``,
- ``update``: ``trainer.update()``.

Nothing here imports DyNet or batchviz: the programs run unchanged under either.
"""
import time

PHASES = ("build", "forward", "backward", "update")


class StepTimer:
    """Times the steps after the first ``warmup`` ones; counts what they processed in
    ``unit`` (``"sentences"``). In a step: :meth:`start`, then :meth:`lap` after each of
    the first three phases, then :meth:`stop`."""

    def __init__(self, warmup: int, unit: str):
        self.warmup, self.unit = warmup, unit
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.steps = self.items = 0
        self._marks = []

    def start(self) -> None:
        self._marks = [time.perf_counter()]

    def lap(self) -> None:
        self._marks.append(time.perf_counter())

    def stop(self, step: int, items: int) -> None:
        """End step number ``step`` (from 0), which processed ``items``."""
        self.lap()
        if len(self._marks) != len(PHASES) + 1:
            raise RuntimeError(f"a step has {len(PHASES)} phases {PHASES}: call start(), "
                               f"lap() after each of the first {len(PHASES) - 1}, then stop(); "
                               f"got {len(self._marks) - 2} laps")
        if step >= self.warmup:
            for phase, begin, end in zip(PHASES, self._marks, self._marks[1:]):
                self.seconds[phase] += end - begin
            self.steps += 1
            self.items += items

    def report(self) -> None:
        """Print the rate (``640 sentences in 1.234 s: 518.6 sentences/s``) and the
        milliseconds per step of each phase, to the microsecond (``ms per step: build 29.012,
        ...``): a step of a small graph takes a fraction of a millisecond."""
        if not self.steps:
            return
        total = sum(self.seconds.values())
        print(f"{self.items} {self.unit} in {total:.3f} s: "
              f"{self.items / total:.1f} {self.unit}/s")
        print("ms per step: " + ", ".join(f"{phase} {seconds / self.steps * 1000:.3f}"
                                          for phase, seconds in self.seconds.items()))
