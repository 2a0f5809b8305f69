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
    """A batch produced NaN or infinity while numerics were checked (``bv.check_numerics``).

    Besides its message it carries what it names: ``node`` (the node id), ``op``,
    ``signature`` (the signature's short name), ``batch`` (the batch's number over every run
    of the graph), ``source`` (the user's ``file:line`` that built the node, when recorded)
    and ``pass_`` (``"forward"`` or ``"backward"``)."""

    def __init__(self, message: str, *, node=None, op=None, signature=None, batch=None,
                 source=None, pass_=None):
        super().__init__(message)
        self.node, self.op, self.signature = node, op, signature
        self.batch, self.source, self.pass_ = batch, source, pass_


class NumericsWarning(RuntimeWarning):
    """A run made NaN or infinity and numerics were not checked: NumPy noticed it in a
    kernel. The warning points at the user's ``value()`` or ``backward()`` call and says how
    to find the node (``bv.check_numerics``)."""


class ModelFileError(BatchvizError, ValueError):
    """``Model.load`` was given a file that is not a model saved by ``Model.save`` (a
    ``.npz`` archive of arrays of numbers), or one saved from a model of other parameters."""
