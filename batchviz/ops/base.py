"""The Op protocol: what every operation declares, written once for NumPy and CuPy.

An op is a stateless object that knows five things:

* ``infer_shape`` - its output shape, checked when the node is *built* so that a mistake is
  reported at the user's own line with both shapes named;
* ``signature`` - the tuple that decides which nodes may be batched with it (App. A):
  element-wise ops need only their name, dimension-sensitive ops add shapes, and ops with a
  shared argument (``W @ h_i``) add that argument's node id;
* ``forward`` / ``backward`` - batched kernels. They receive the arguments of *all* nodes of
  a batch stacked along a leading batch axis (``n`` rows), except shared arguments, which
  arrive once, unstacked. Element-wise ops receive flat 1-D arrays instead, so that nodes of
  different shapes can still share one kernel (the paper: "tanh" batches with any "tanh");
* ``cheap`` - the agenda's tie-break runs cheap ops before heavy ones.

Kernels use the array namespace ``xp`` they are given (NumPy or CuPy), never ``numpy``.
"""
from __future__ import annotations

from ..errors import ShapeError
from ..signature import SignatureInfo, shape_text

#: Every op instance, in registration order. ``Op.__init_subclass__`` does not register:
#: an op registers when its single instance is created with ``register``.
REGISTRY: dict[str, "Op"] = {}
#: Signatures that do not depend on the graph (element-wise ops), reserved in every table.
FIXED_SIGNATURES: list[SignatureInfo] = []


class Op:
    """Base class of all ops. Subclasses override what differs."""

    name: str = "?"
    #: the agenda strategy's tie-break: cheap (element-wise) ops run before heavy ones
    cheap: bool = True
    #: element-wise ops get flat 1-D inputs and may batch nodes of different shapes
    elementwise: bool = False
    #: an unbatchable op gets a signature unique to each node (App. A, last class)
    batchable: bool = True
    #: number of arguments, or None for variadic ops (esum, concatenate, affine_transform)
    arity: int | None = 1
    #: set for fixed-arity element-wise ops: their signature integer, the same in every graph
    fixed_signature: int | None = None
    #: ``forward`` takes ``out=``, the batch's own segment of the arena shaped ``(n,) +
    #: shape``, and writes the outputs there (it returns ``out``); otherwise the executor
    #: copies the array ``forward`` returns into that segment
    writes_output: bool = False
    #: ``backward`` takes ``into=``: per argument position, None or the place in the
    #: gradient buffer where that position's gradient goes, still zero and shaped like the
    #: position's block (the executor hands one out where no gradient has reached those
    #: arguments yet). The kernel may write the gradient there and return that very array
    #: for the position: one pass, where a new array added into zeros would be two. Called
    #: without targets, ``into`` is None
    writes_gradients: bool = False
    #: a batch reads all its arguments with *one* gather, node after node, instead of one
    #: gather per argument position (element-wise ops only, when the batch's values are all
    #: one size). For variadic sums: a sentence's or a tree's loss adds dozens of losses,
    #: and one read of them all beats dozens of small ones, forward and backward. Such a
    #: batch runs :meth:`forward_together` and :meth:`backward_together` on the gathered
    #: block, shaped ``(n, k, size)``
    one_gather: bool = False
    #: a ``one_gather`` op whose nodes batch whatever their number of arguments (its
    #: signature leaves the number out: an element-wise sum is one operation, §3's rule for
    #: element-wise ops). A batch whose nodes have different numbers of arguments gets
    #: them as rows, node after node, and runs :meth:`forward_segments` and
    #: :meth:`backward_segments`
    any_arity: bool = False

    # -- construction -------------------------------------------------------------------
    def infer_shape(self, shapes: list[tuple], attrs) -> tuple:
        raise NotImplementedError

    def signature(self, graph, args: tuple, attrs, shape: tuple) -> tuple[tuple, tuple]:
        """Return ``(key, shared_positions)``.

        The default is *dimension-sensitive*: the op's name, its output shape and every
        argument's shape. Ops with shared arguments or extra attributes override it."""
        shapes = graph.shapes
        return (self.name, shape) + tuple(shapes[a] for a in args), ()

    def memo_key(self, graph, args: tuple, attrs):
        """A key that fully determines this node's shape *and* signature, or None.

        Ops that define it (matmul, affine_transform, concatenate) have their shape check
        and signature computed once per distinct key per graph, then looked up: an LSTM
        builds the same ``W @ x`` shape thousands of times."""
        return None

    def block_reads(self, key: tuple) -> dict:
        """``{position: block}`` for the argument positions at which a batch of signature
        ``key`` reads not the argument nodes' values but another *block* of what they keep
        (:meth:`storage_blocks`; block 0 is the value). Every block has the value's shape,
        so the read is as large as a value read; the executor gathers (and scatters
        gradients back to) block ``block`` of every node. ``lstm_step`` reads the cell,
        block 1 of the previous step's node, this way. Default: values everywhere."""
        return {}

    def storage_blocks(self, shape: tuple, attrs) -> int:
        """How many blocks of the value's ``shape`` each node of this op keeps: its value
        (block 0) followed by what the op's own backward pass or a later node needs
        (DyNet's auxiliary memory per node). Default 1: the node keeps only its value.

        The executor lays a batch of ``n`` such nodes out *block by block*: all ``n``
        values back to back, then all ``n`` second blocks, and so on, and the kernel
        (which must write its output, ``writes_output``) gets its segment as one
        ``(blocks, n) + shape`` array. The values of a batch are then one contiguous
        block for every reader, and every block is a contiguous ``(n,) + shape`` array
        for the kernel: no strided or transposed memory. ``lstm_step`` keeps ``K + 5``
        blocks ``[h, c, i, f_1..f_K, o, u]``; the next step reads the cell ``c`` through
        :meth:`block_reads`. The number must be the same for every node of a signature
        (it is computed once, from a signature's first node), and element-wise ops keep
        one block (their batches are read as flat blocks of values)."""
        return 1

    def error(self, message: str) -> ShapeError:
        return ShapeError(f"{self.name}: {message}")

    # -- execution ----------------------------------------------------------------------
    def forward(self, xp, ins: list, attrs: list, n: int):
        """Compute ``n`` nodes at once. ``attrs`` holds each node's attributes, in batch order."""
        raise NotImplementedError

    def backward(self, xp, ins: list, out, gout, attrs: list, n: int, needs: list) -> list:
        """Gradients with respect to each argument position (``None`` where ``needs`` is
        false). A shared argument's gradient is summed over the batch."""
        raise NotImplementedError

    def forward_together(self, xp, block, attrs: list, n: int):
        """:meth:`forward` of a ``one_gather`` batch whose ``k`` arguments per node were read
        with one gather: ``block[:, j]`` is position ``j`` of every node. By default the
        kernel runs on those ``k`` views; an op that can treat the block whole (a sum over
        axis 1) overrides this and saves a call per argument."""
        return self.forward(xp, [block[:, j] for j in range(block.shape[1])], attrs, n)

    def backward_together(self, xp, block, out, gout, attrs: list, n: int):
        """:meth:`backward` of such a batch: the gradient of the whole block, one array that
        is ``block``'s shape or broadcasts to it. (``out`` and ``gout`` come flat, as for any
        element-wise batch; the default kernel sees them ``(n, size)``, like the views.)"""
        k = block.shape[1]
        grads = self.backward(xp, [block[:, j] for j in range(k)], out.reshape(n, -1),
                              gout.reshape(n, -1), attrs, n, [True] * k)
        return xp.stack([grad.reshape(n, -1) for grad in grads], axis=1)

    def forward_segments(self, xp, rows, counts: list, attrs: list, n: int):
        """:meth:`forward_together` of an ``any_arity`` batch whose nodes have different
        numbers of arguments: ``rows`` is ``(sum(counts), size)``, node ``i``'s arguments
        being the next ``counts[i]`` rows. Returns ``(n, size)``."""
        raise NotImplementedError(f"{self.name}: any_arity needs forward_segments")

    def backward_segments(self, xp, rows, counts: list, out, gout, attrs: list, n: int):
        """:meth:`backward_together` of such a batch: the gradient of ``rows``, one array of
        ``rows``' shape. (``out`` and ``gout`` come flat.)"""
        raise NotImplementedError(f"{self.name}: any_arity needs backward_segments")

    # -- presentation -------------------------------------------------------------------
    def describe_signature(self, key: tuple, graph=None) -> str:
        """Readable signature, e.g. ``matmul-W#3-64x1``; used by traces and reports."""
        parts = [self.name]
        for part in key[1:]:
            if isinstance(part, tuple) and all(isinstance(d, int) for d in part):
                parts.append(shape_text(part))
            elif isinstance(part, tuple) and part and part[0] == "node":
                parts.append(_node_text(part[1], graph))
            else:
                parts.append(str(part))
        return "-".join(parts)


def _node_text(node: int, graph) -> str:
    """``W#3``: the shared argument's parameter name (when known) and node id."""
    name = None
    if graph is not None:
        param = graph.param_of_node.get(node)
        if param is not None:
            name = param.name
    return f"{name}#{node}" if name else f"node{node}"


def shared_node(node: int) -> tuple:
    """The part of a signature key that names a shared argument node."""
    return ("node", node)


def register(op: Op) -> Op:
    """Register an op instance under its name; element-wise ops get their fixed signature."""
    if op.name in REGISTRY:
        raise ValueError(f"an op named {op.name!r} is already registered")
    REGISTRY[op.name] = op
    if op.elementwise and op.batchable and op.arity is not None:
        op.fixed_signature = len(FIXED_SIGNATURES)
        FIXED_SIGNATURES.append(SignatureInfo((op.name,), op, (), op.cheap, arity=op.arity))
    return op


def same_shapes(op: Op, shapes: list[tuple]) -> tuple:
    """The shared shape of all arguments of an element-wise op (no broadcasting)."""
    first = shapes[0]
    for s in shapes[1:]:
        if s != first:
            raise op.error(
                f"arguments must have the same shape, got {' and '.join(str(x) for x in shapes)}"
                " (batchviz does not broadcast; use bv.scale/bv.shift for scalars)"
            )
    return first
