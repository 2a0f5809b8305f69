"""Traces: every scheduling decision of a strategy, recorded as plain data.

``bv.trace(loss, strategy="agenda")`` returns a :class:`Trace` (JSON round-trippable) that
``bv.explain``, ``bv.render`` and the widgets read. Import the classes from here
(``from batchviz.trace import Trace``): ``bv.trace`` itself is the function.
"""
from .data import AgendaGroup, ArgumentRead, NodeInfo, SignatureSummary, Step, Trace
from .record import trace
from .timeline import AGENDA, BATCH, DONE, STATES, WAITING, Timeline

__all__ = ["trace", "Trace", "Step", "NodeInfo", "SignatureSummary", "AgendaGroup",
           "ArgumentRead", "Timeline", "STATES", "DONE", "BATCH", "AGENDA", "WAITING"]
