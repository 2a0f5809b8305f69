"""Exercise 5: executing a batch (the paper's §3.3, "Forward-backward Graph Execution").

The executor keeps node values in one flat array, the *arena*: a node of size ``s`` stored at
*address* ``a`` occupies ``arena[a:a + s]``, and each batch writes its outputs into one
contiguous segment, node after node in batch order. To run a batch, the executor must hand
the kernel each argument position as one ``(n, s)`` block (the ``H`` of ``W @ H``). When the
arguments already lie back to back in batch order, that block is a *view* of the arena: no
copy ("in other cases the inputs are already contiguous and in the correct order, and in
these cases we can omit the memory copy"). Otherwise one gather copies them. The backward
pass goes the other way: it *scatters* each block of gradients back to where the arguments
live, adding (a node used twice receives both gradients).

Pure NumPy: no batchviz needed. Run ``pytest tutorials/05_execute``; the tests compare your
functions with NumPy oracles and with what the runtime's executor did on real graphs
(``graph.layout.batches``: for every batch and argument position, how the runtime read
it, a view or a copy).
"""
import numpy as np


def is_contiguous(addresses, size):
    """True if the nodes at ``addresses`` (each ``size`` long) lie back to back in batch
    order: node ``k + 1`` starts where node ``k`` ends."""
    raise NotImplementedError(
        "Exercise 5: return True when every addresses[k + 1] == addresses[k] + size")


def gather(arena, addresses, size):
    """The ``(n, size)`` block whose row ``k`` is ``arena[addresses[k]:addresses[k] + size]``,
    and whether it is a view. Return ``(block, is_view)``.

    Contiguous: return a view of the arena (slicing and reshaping never copy). Otherwise build
    the block with a *single* fancy-indexing gather (an index array of all ``n * size``
    positions), not a Python loop of ``n`` copies: on a GPU each copy is a kernel launch.
    """
    raise NotImplementedError(
        "Exercise 5: if is_contiguous, return (arena[a:a + n*size].reshape(n, size), True); "
        "else gather all rows with one index array and return (block, False)")


def scatter_add(grad_arena, addresses, size, grads):
    """Add ``grads[k]`` (a ``size``-vector) to ``grad_arena[addresses[k]:addresses[k] + size]``
    for every ``k``, in place. Addresses may repeat (one node used by two nodes of a batch):
    then both gradients must be added. Hint: ``grad_arena[index] += values`` does *not* add
    twice for a repeated index; look at ``np.add.at``."""
    raise NotImplementedError(
        "Exercise 5: build the index of every position like in gather, and add the gradients "
        "with np.add.at so that repeated addresses accumulate")


def execute_batch(arena, argument_addresses, size, kernel, out_start):
    """Run one batch of an element-wise op whose nodes and arguments all have ``size``
    elements.

    ``argument_addresses[j]`` lists the addresses of argument ``j`` of every node of the batch
    (in batch order). Gather each argument position into a block, call ``kernel(*blocks)``
    once (it returns the ``(n, size)`` outputs), and write them into the batch's segment
    ``arena[out_start:out_start + n * size]``. Return the number of argument positions that
    had to be copied (the gathers that were not views).
    """
    raise NotImplementedError(
        "Exercise 5: gather every argument position, call kernel once on the blocks, store the "
        "result at arena[out_start:...] and return how many gathers copied")
