"""DyNet's ``StackedRNNState``: builders stacked by hand, each reading the output of the one
below, moved along a sequence together."""
from __future__ import annotations

from .expression import as_expression
from .rnn import states_after


class StackedRNNState:
    """A position in a sequence read by several builders stacked by hand, DyNet's
    ``StackedRNNState``: the first builder reads the input, each next one the output of the
    one below. Made from the builders' states, usually their initial states::

        stack = dy.StackedRNNState([lower.initial_state(), upper.initial_state()])
        top = stack.add_input(x).output()      # upper's output after lower's

    Why stack by hand rather than ask one builder for several layers: the builders may be
    of different kinds or sizes (a GRU over an LSTM), or one of them may be shared. It
    adds no computation of its own: ``add_input`` is each state's ``add_input`` in turn,
    so the nodes are those of the builders, batched as theirs are."""

    __slots__ = ("states", "_prev")

    def __init__(self, states, prev=None):
        states = list(states) if isinstance(states, (list, tuple)) else states
        if not isinstance(states, list) or not states:
            raise TypeError(f"StackedRNNState needs a list of states (one per builder, the "
                            f"lowest first), got {states!r}")
        for k, state in enumerate(states):
            if not (hasattr(state, "add_input") and hasattr(state, "output")):
                raise TypeError(f"StackedRNNState: entry {k} of the states is a "
                                f"{type(state).__name__}, not a builder's state (make one "
                                "with builder.initial_state())")
        if prev is not None and not isinstance(prev, StackedRNNState):
            raise TypeError(f"StackedRNNState: prev must be a StackedRNNState or None, got "
                            f"{type(prev).__name__}")
        self.states, self._prev = states, prev

    def add_input(self, x) -> "StackedRNNState":
        """The stack after reading ``x``: each builder reads what the one below output."""
        x = as_expression(x, "StackedRNNState.add_input")
        next_states = []
        for state in self.states:
            state = state.add_input(x)
            next_states.append(state)
            x = state.output()
        return StackedRNNState(next_states, self)

    def add_inputs(self, xs) -> list:
        """The stacks after each input of ``xs``, read one after another."""
        return states_after(self, xs)

    def output(self):
        """The top builder's output (None before the first input)."""
        return self.states[-1].output()

    def prev(self):
        """The stack before the last input (None for the one made directly)."""
        return self._prev

    def h(self) -> list:
        """Each builder's ``h()`` (the outputs of its layers), the lowest first."""
        return [state.h() for state in self.states]

    def s(self) -> list:
        """Each builder's ``s()`` (its whole state), the lowest first."""
        return [state.s() for state in self.states]


__all__ = ["StackedRNNState"]
