"""Jupyter widgets that step through a schedule: :class:`Stepper` and :func:`compare`.

``bv.Stepper(loss, strategy="agenda")`` shows one strategy batch by batch: the graph (fixed
layout, the step's batch highlighted), the agenda table and the batch's details.
``bv.compare(loss, "depth", "agenda")`` puts strategies side by side on the same graph.
Both write a self-contained page with ``save_html(path)`` that steps without Jupyter.

This package imports ipywidgets, so ``import batchviz`` does not import it: ``bv.Stepper``
and ``bv.compare`` load it on first use.
"""
from .compare import Compare, compare
from .frames import Frame, StepFrames
from .stepper import Stepper

__all__ = ["Stepper", "Compare", "compare", "Frame", "StepFrames"]
