"""Node signatures (the paper's §3.2 and Appendix A), interned to small integers.

A *signature* is the full tuple of everything that must match for two nodes to be computed
by one batched kernel: the op, and - depending on the op - the shapes of its arguments, the
node id of an argument that all nodes of the batch share (``W`` in ``W @ h_i``), or slice
bounds. Nodes with equal signatures are guaranteed to be batchable once their inputs are
ready.

The paper computes signatures as integer hashes (App. B) to compare them fast. We intern
the full tuple in a dict instead: the integer is just as cheap to compare, and two different
tuples can never collide on the same integer (a 32-bit hash can, and then merges ops that
must not be batched together).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SignatureInfo:
    """What the executor and the strategies need to know about one signature."""

    key: tuple            # the full tuple; key[0] is the op's name
    op: object            # the Op instance that computes nodes of this signature
    shared: tuple         # argument positions that every node of the batch shares (same node)
    cheap: bool           # the paper's tie-break: cheap (element-wise) before heavy (matmul)
    #: ``{position: block}``: argument positions at which the batch reads another block of
    #: what the argument nodes keep than their value (:meth:`batchviz.ops.base.Op.block_reads`)
    reads: dict = field(default_factory=dict)
    #: how many blocks of its value's shape each node keeps, its value being block 0
    #: (:meth:`batchviz.ops.base.Op.storage_blocks`)
    blocks: int = 1
    #: how many arguments every node of the signature has (a batch reads them position by
    #: position, so they must agree); -1 when not recorded, or for an ``Op.any_arity`` op
    arity: int = -1

    def describe(self, graph=None) -> str:
        """A readable form such as ``matmul-W#3-64x1`` or ``tanh``."""
        return self.op.describe_signature(self.key, graph)


class SignatureTable:
    """Interns signature tuples of one graph to consecutive integers.

    Signature keys may contain node ids (shared arguments), which only mean something inside
    one graph, so every graph has its own table. Signatures that never depend on the graph
    (those of element-wise ops) are interned in the same order in every table, so an op can
    keep its fixed integer in ``op.fixed_signature``.
    """

    def __init__(self, fixed: list[SignatureInfo]):
        self.infos: list[SignatureInfo] = list(fixed)
        self.ids: dict[tuple, int] = _ids_of(fixed).copy()

    def intern(self, key: tuple, op, shared: tuple = (), shape: tuple = (), attrs=None,
               arity: int = -1) -> int:
        """The integer of ``key``; a new one for a key not seen before, whose node of
        ``shape`` and ``attrs`` tells what every node of the signature keeps in memory, and
        of ``arity`` how many arguments each has."""
        if op.any_arity:
            arity = -1  # its nodes may have any number of arguments
        sig = self.ids.get(key)
        if sig is not None:
            known = self.infos[sig].arity
            if arity != known and arity >= 0 and known >= 0:
                raise TypeError(f"{op.name}: its signature() gives nodes of {known} and of "
                                f"{arity} arguments the same key {key!r}; a batch reads its "
                                "nodes' arguments position by position, so the key must tell "
                                "them apart (include len(args))")
        else:
            sig = len(self.infos)
            self.ids[key] = sig
            self.infos.append(signature_info(key, op, shared, shape, attrs, arity))
        return sig

    def truncate(self, n: int) -> None:
        """Forget every signature but the first ``n`` (a graph cut back to a checkpoint:
        the keys interned since may hold the ids of removed nodes, which new nodes reuse)."""
        if n < len(self.infos):
            for info in self.infos[n:]:
                del self.ids[info.key]
            del self.infos[n:]

    def __len__(self) -> int:
        return len(self.infos)

    def __getitem__(self, sig: int) -> SignatureInfo:
        return self.infos[sig]


def _ids_of(fixed: list) -> dict:
    """``{key: position}`` of the signatures ``fixed`` (``FIXED_SIGNATURES``, which only
    grows, as ops register), made again only when the list is another or has grown: every
    graph starts its table with it."""
    global _fixed_ids
    kept, length, ids = _fixed_ids
    if kept is not fixed or length != len(fixed):
        ids = {info.key: i for i, info in enumerate(fixed)}
        _fixed_ids = (fixed, len(fixed), ids)
    return ids


#: (the list of fixed signatures, its length, its ``{key: position}``), see :func:`_ids_of`
_fixed_ids: tuple = (None, 0, {})

#: the :class:`SignatureInfo` of every signature interned so far, by what determines it
#: (attributes only through the blocks they keep); tables of different graphs share them.
#: A program that builds a graph per instance (a tree, a sentence) interns the same
#: signatures in every graph, its parameters' nodes and its layers' shared weights at the
#: same node ids: an info made once and checked once is then a dict lookup. (Emptied when
#: it grows past ``_INFOS_KEPT``, which a program whose node ids vary from graph to graph
#: may reach.)
_INFOS: dict[tuple, SignatureInfo] = {}
_INFOS_KEPT = 20000


def signature_info(key: tuple, op, shared: tuple, shape: tuple, attrs, arity: int):
    """The :class:`SignatureInfo` of a new signature ``key`` of ``op`` (see
    :meth:`SignatureTable.intern`), after checking what ``op`` declares about its memory."""
    # (a node's attributes may change how many blocks it keeps, and nothing else here: a
    # broadcast's, a lookup's, a pick's signature is found again in every graph)
    blocks = None if attrs is None else op.storage_blocks(shape, attrs)
    known = (key, op, shared, shape, arity, blocks) if type(blocks) is int or blocks is None \
        else None
    info = _INFOS.get(known) if known is not None else None
    if info is not None:
        return info
    if blocks is None:
        blocks = op.storage_blocks(shape, attrs)
    if type(blocks) is not int or blocks < 1:
        raise TypeError(f"{op.name}: storage_blocks() must be a positive int (the "
                        f"value is block 0), got {blocks!r}")
    if blocks != 1 and (op.elementwise or not op.writes_output):
        raise TypeError(f"{op.name}: keeps {blocks} blocks; only an op that is not "
                        "element-wise and writes its output may keep more than its "
                        "value (one block)")
    if op.one_gather and not op.elementwise:
        raise TypeError(f"{op.name}: only an element-wise op may read all its "
                        "arguments with one gather (one_gather)")
    if op.any_arity and not op.one_gather:
        raise TypeError(f"{op.name}: only an op that reads all its arguments with "
                        "one gather (one_gather) may batch nodes of any number of "
                        "arguments (any_arity)")
    info = SignatureInfo(key, op, shared, op.cheap, op.block_reads(key), blocks, arity)
    if known is not None:
        if len(_INFOS) >= _INFOS_KEPT:
            _INFOS.clear()
        _INFOS[known] = info
    return info


def shape_text(shape: tuple) -> str:
    """``(64,)`` -> ``64x1`` (column vectors, as the paper writes them); ``()`` -> ``1``."""
    if len(shape) == 0:
        return "1"
    if len(shape) == 1:
        return f"{shape[0]}x1"
    return "x".join(str(d) for d in shape)


_SIZES: dict[tuple, int] = {}


def size_of(shape: tuple) -> int:
    """The number of elements of a node of ``shape`` (remembered per shape: the layout asks
    for every node of every run)."""
    size = _SIZES.get(shape)
    if size is None:
        size = 1
        for d in shape:
            size *= d
        _SIZES[shape] = size
    return size
