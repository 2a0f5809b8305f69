""":class:`BatchPlan`: the plan of one batch, as the planner writes it and the executor reads it.

A module of its own so that the planner, the reads (:mod:`~batchviz.plan.reads`, which
reads earlier batches' segments) and the executor can all name its C type (``batch.pxd``)
without their ``.pxd`` files importing one another in a cycle.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchPlan:
    """One batch: its nodes, where their outputs go, and how each argument is read.

    (Compiled, its fields are C fields, ``batch.pxd``: the executor reads a dozen of them
    for every batch it runs, the planner more, and each read of a named tuple's field is a
    lookup by name.)"""

    index: int          # the batch's number, over every run of the graph
    signature: int
    op: object          # the Op whose kernel computes the batch
    nodes: tuple        # node ids, in batch order (the order of the outputs)
    attrs: tuple        # each node's attributes, in batch order (what kernels receive)
    arena: int          # the outputs: arena, first element, and their values' length
    start: int
    length: int
    sizes: object       # each node's size: one int when all are the same, else a list
    out_shape: tuple    # the kernel's output array: (n,) + shape; (blocks, n) + shape; or
                        # flat, for an element-wise op
    block_stride: int   # 0, or how far apart each node's blocks are (Op.storage_blocks):
                        # the values of its run of such batches (plan.layout)
    reads: tuple        # per argument position (one for them all when ``together``)
    in_shapes: tuple    # per read, the shape the kernel sees its block in (None: shared)
    needs: tuple        # per read: whether gradients must flow back there
    origins: tuple      # per read: the batches that computed its arguments
    sources: tuple      # per read: the batch whose outputs it reads whole, in the shape that
                        # batch's kernel wrote them (its block is then that batch's own
                        # output array, and its gradient that batch's), else -1
    requires_grad: bool
    together: bool      # one read of every argument, node after node (Op.one_gather)
    counts: object      # with ``together``: each node's number of arguments when they
                        # differ (Op.any_arity), else None

    @property
    def stop(self) -> int:
        """Where the batch's values end (a batch that keeps further blocks has them
        ``block_stride`` apart from its values, after those of the rest of its run)."""
        return self.start + self.length
