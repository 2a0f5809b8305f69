# distutils: define_macros=CYTHON_USE_TYPE_SPECS=1
# (compiled, Expression is a C type made from a spec, as Python classes are: such a type
# takes the operators of its Python base, Operators; a static C type would not)
"""Expression: the user's handle on one node of a lazy graph, with operator overloading.

An Expression is two fields, ``graph`` and ``node`` (its creation-order id); all node data
lives in the graph's parallel lists. The operators are the op constructors
(``x + y`` is :func:`~batchviz.ops.elementwise.add`), so this module sits above the ops.
Parameters get the same operators (:mod:`batchviz.model`), so ``W @ h`` works whether
``W`` is a model parameter or an expression.
"""
from __future__ import annotations

import numbers

import numpy as np

from .errors import BatchvizError
from .graph import ExpressionBase, RemovedNodes
from .parameters import ParameterBase
from .ops import api as op_api
from .ops.elementwise import add, cdiv, cmult, neg, sub
from .ops.linalg import matmul
from .ops.scalar import scale, shift
from .ops.structure import pick, pick_range, transpose


def is_number(x) -> bool:
    """Whether ``x`` is a real number (a Python or a NumPy one), not an expression or a
    parameter. Asked on every operator: the common cases are answered before
    ``numbers.Real``'s abstract-class check, which costs several times more."""
    kind = type(x)
    if kind is float or kind is int:
        return True
    if isinstance(x, (ExpressionBase, ParameterBase)):
        return False
    return isinstance(x, numbers.Real)


class Operators:
    """Operator overloading shared by Expression and Parameters.

    ``+ - @`` between expressions, ``*`` and ``/`` by a Python number (``*`` between two
    expressions is element-wise, like ``bv.cmult``), unary ``-``, ``x[i]`` (pick) and
    ``x[a:b]`` (pick_range)."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's hook (NEP 13) for a ufunc given an expression: ``np.tanh(x)``, and also
        ``array + x`` and ``np.float64(2) * x``, which NumPy's operators turn into ufuncs.

        The ufuncs of Python's operators go to this class's operators, so those mean what
        they mean without NumPy (``array + x`` gets the error that says to wrap the array
        with ``bv.input``; without the hook NumPy would loop over the array and return an
        object array of expressions, silently). Any other ufunc cannot compute a node of a
        lazy graph: its error names the batchviz function to call instead."""
        methods = _OPERATOR_UFUNCS.get(ufunc.__name__)
        if methods is None or method != "__call__" or kwargs:
            raise TypeError(_ufunc_refusal(ufunc, method, kwargs))
        if len(inputs) == 1:
            return getattr(self, methods[0])()
        left, right = inputs
        own, other = (methods[0], right) if left is self else (methods[1], left)
        result = getattr(self, own, _no_operator)(other)
        if result is NotImplemented:
            raise TypeError(f"unsupported operand types for np.{ufunc.__name__}: "
                            f"{type(left).__name__} and {type(right).__name__}")
        return result

    def __add__(self, other):
        if is_number(other):
            return shift(self, other)
        return add(self, other)

    def __radd__(self, other):
        if is_number(other):
            return shift(self, other)
        return add(other, self)

    def __sub__(self, other):
        if is_number(other):
            return shift(self, -other)
        return sub(self, other)

    def __rsub__(self, other):
        if is_number(other):
            return shift(neg(self), other)
        return sub(other, self)

    def __mul__(self, other):
        if is_number(other):
            return scale(self, other)
        return cmult(self, other)

    def __rmul__(self, other):
        if is_number(other):
            return scale(self, other)
        return cmult(other, self)

    def __truediv__(self, other):
        if is_number(other):
            if other == 0:
                raise ZeroDivisionError("division of an expression by zero")
            return scale(self, 1.0 / other)
        return cdiv(self, other)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __neg__(self):
        return neg(self)

    def __pos__(self):
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise IndexError("expression slices must have step 1")
            shape = self.shape
            n = shape[0] if shape else 0
            start = 0 if index.start is None else index.start
            stop = n if index.stop is None else index.stop
            # negative bounds count from the end, as in Python (x[-2:], x[:-1]); bounds
            # outside the rows are an error, not clipped: x[2:9] of 4 rows is a mistake
            if -n <= start < 0:
                start += n
            if -n <= stop < 0:
                stop += n
            return pick_range(self, start, stop)
        return pick(self, index)

    # Comparisons would silently build nothing useful; make the mistake loud.
    def __bool__(self):
        raise TypeError(
            "an expression has no truth value before it is computed; use expr.value()"
        )


#: ufuncs that NumPy's operators call -> (our method, our reflected method)
_OPERATOR_UFUNCS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"), "divide": ("__truediv__", "__rtruediv__"),
    "matmul": ("__matmul__", "__rmatmul__"), "negative": ("__neg__",), "positive": ("__pos__",),
}
#: ufuncs (NumPy's or SciPy's) whose batchviz function has another name
_BATCHVIZ_FOR_UFUNC = {"maximum": "bv.relu(x) for np.maximum(x, 0)", "expit": "bv.logistic(x)",
                       "arcsin": "bv.asin(x)", "arccos": "bv.acos(x)", "arctan": "bv.atan(x)",
                       "arcsinh": "bv.asinh(x)", "arccosh": "bv.acosh(x)",
                       "arctanh": "bv.atanh(x)"}


def _no_operator(other):
    return NotImplemented


def _ufunc_refusal(ufunc, method, kwargs) -> str:
    """The error for a ufunc called on an expression: which batchviz function builds that
    node instead, where there is one."""
    name = ufunc.__name__
    call = (f"np.{name}" if getattr(np, name, None) is ufunc else name) + (
        "" if method == "__call__" else f".{method}")
    if kwargs:
        return (f"{call}(..., {', '.join(f'{k}=' for k in kwargs)}...) cannot take a batchviz "
                "expression: NumPy cannot put an expression in an array; build the node with "
                "batchviz's operators and wrap NumPy data with bv.input(...)")
    if name in _BATCHVIZ_FOR_UFUNC:
        hint = f"use {_BATCHVIZ_FOR_UFUNC[name]}"
    elif name not in _OPERATOR_UFUNCS and hasattr(op_api, name):
        hint = f"use bv.{name}(x), which adds the node to the graph"
    else:
        hint = "write it with batchviz's ops (bv.tanh, bv.exp, ...: see the API reference)"
    return (f"{call} does not work on a batchviz expression (an expression is a node of a "
            f"lazy graph, not an array); {hint}")


class Expression(ExpressionBase, Operators):
    """A node of a lazy graph. Nothing is computed until :meth:`value` is called.

    (Compiled, it is a C type, ``expression.pxd``: one is made and freed for every node.
    A C type's first base is the one with its fields, ExpressionBase.)"""

    __slots__ = ()

    # --- inspection (no computation) ---
    def dim(self) -> tuple:
        """The shape (DyNet's name)."""
        return self.graph.shapes[self.node]

    @property
    def op(self) -> str:
        return self.graph.ops[self.node].name

    @property
    def T(self) -> "Expression":
        return transpose(self)

    # --- computation ---
    def npvalue(self):
        """The value as a NumPy array (a copy). Runs the pending part of the graph first."""
        return self.graph.value_of(self.node)

    def value(self):
        """The value: a Python float for a scalar, else a NumPy array (a copy).

        Runs, in batches, every node added to the graph since the last run."""
        v = self.npvalue()
        return float(v) if v.ndim == 0 else v

    def scalar_value(self) -> float:
        v = self.npvalue()
        if v.size != 1:
            raise BatchvizError(f"scalar_value() of an expression of shape {v.shape}")
        return float(v.reshape(()))

    def forward(self):
        """Compute this expression (and everything else pending); returns its value."""
        return self.value()

    def backward(self) -> None:
        """Accumulate d(self)/d(p) into ``p.grad`` for every parameter ``p`` it depends on.

        ``self`` must be a scalar (a loss). Runs the batched backward pass over the schedule
        that the forward pass used."""
        g = self.graph
        g.check_alive()
        shape = g.shapes[self.node]
        if shape not in ((), (1,)):
            raise BatchvizError(
                f"backward() needs a scalar loss, but node {self.node} ({g.ops[self.node].name}) "
                f"has shape {shape}; reduce it first, e.g. with bv.sum_elems(...)"
            )
        g.backward(self.node)

    def __repr__(self) -> str:
        g = self.graph
        if isinstance(g, RemovedNodes):
            return f"<Expression node {self.node}: removed by revert()>"
        return f"<Expression node {self.node}: {g.ops[self.node].name} {g.shapes[self.node]}>"
