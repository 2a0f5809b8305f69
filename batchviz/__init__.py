"""batchviz: on-the-fly operation batching for dynamic computation graphs, made visible.

Write the naive per-instance computation; batchviz builds the graph lazily, groups nodes by
signature, schedules them into batches (none / depth / agenda, or your own strategy) and
runs each batch as one kernel, forward and backward (Neubig, Goldberg & Dyer, 2017).
"""
from . import compiled as _compiled

_compiled.install()  # before the compiled modules are imported: see batchviz/compiled.py

from .backend import get_backend, get_dtype, set_backend, set_dtype
from .errors import (BackendError, BatchvizError, GraphFinishedError, GraphMismatchError,
                     ModelFileError, NumericsError, NumericsWarning, ScheduleError, ShapeError)
from .execute import last_run_stats
from .expression import Expression
from .model import LookupParameters, Model, Parameters
from .graph import graph_scope
from .execute.numerics import check_numerics
from .sourcelines import recording_sources
from .runtime import Graph, current_graph, new_graph
from .ops.api import *  # noqa: F401,F403
from .ops.api import __all__ as _op_names
from .schedule import (AgendaStrategy, PendingView, Rule, Strategy, register_strategy,
                       validate_schedule)

renew_cg = new_graph  # DyNet's name

__version__ = "0.1.0"

__all__ = [
    "Model", "Parameters", "LookupParameters", "Graph", "new_graph", "renew_cg", "graph_scope",
    "current_graph", "Expression", "Strategy", "AgendaStrategy", "Rule", "PendingView",
    "register_strategy",
    "validate_schedule", "set_backend", "get_backend", "set_dtype", "get_dtype",
    "last_run_stats", "BatchvizError", "ShapeError", "GraphFinishedError",
    "GraphMismatchError", "BackendError", "ScheduleError", "ModelFileError",
    "NumericsError", "NumericsWarning", "check_numerics", "recording_sources",
] + list(_op_names)

# --- the window: traces, explanations, pictures (issue 4) ---------------------------------
# ``bv.trace`` and ``bv.explain`` are the functions; their classes live in the packages of the
# same name (``from batchviz.trace import Trace``). ``bv.optimal_schedule``, the fewest
# batches exactly (OR-Tools, the ``optimum`` extra), is explain's too.
from .trace import trace  # noqa: E402
from .explain import explain, optimal_schedule  # noqa: E402
from .viz import render  # noqa: E402

__all__ += ["trace", "explain", "optimal_schedule", "render"]

# --- the widgets (issue 5) ------------------------------------------------------------------
# ``bv.Stepper`` and ``bv.compare`` live in batchviz.widgets, which imports ipywidgets; they are
# loaded on first use so that ``import batchviz`` stays fast.
_WIDGET_NAMES = ("Stepper", "compare")


def __getattr__(name):
    if name in _WIDGET_NAMES:
        from . import widgets

        return getattr(widgets, name)
    raise AttributeError(f"module 'batchviz' has no attribute {name!r}")


__all__ += list(_WIDGET_NAMES)
