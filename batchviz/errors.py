"""Exceptions raised by batchviz.

Every error names what was wrong (the op, the shapes, the strategy name, ...) and is raised
while the user's own line is on the stack: shapes are checked when a node is *built*, not
later when the lazy graph runs, so the traceback points at the line that made the mistake.
"""


class BatchvizError(Exception):
    """Base class of every error batchviz raises on purpose."""


class ShapeError(BatchvizError, ValueError):
    """An op was given arguments whose shapes it cannot combine."""


class GraphFinishedError(BatchvizError, RuntimeError):
    """An expression of a graph that has been finished (a newer graph replaced it)."""


class GraphMismatchError(BatchvizError, ValueError):
    """Expressions from two different graphs were combined in one op."""


class BackendError(BatchvizError, RuntimeError):
    """The requested array backend (CuPy) or device is not available."""


class ScheduleError(BatchvizError, RuntimeError):
    """A strategy returned a schedule that is not valid (missing nodes, broken dependencies,
    batches mixing signatures)."""


class NoGraphError(BatchvizError, RuntimeError):
    """An expression was built while no graph was open: there is no hidden global graph,
    so that a forgotten ``with bv.Graph():`` never grows one graph across minibatches."""


class NumericsError(BatchvizError, FloatingPointError):
    """A batch produced NaN or infinity while numerics were checked (``bv.check_numerics``)."""


class ModelFileError(BatchvizError, ValueError):
    """``Model.load`` was given a file that is not a model saved by ``Model.save`` (a
    ``.npz`` archive of arrays of numbers), or one saved from a model of other parameters."""
