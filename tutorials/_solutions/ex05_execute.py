"""Reference solution of exercise 5 (executing a batch)."""
import numpy as np


def is_contiguous(addresses, size):
    return all(b == a + size for a, b in zip(addresses, addresses[1:]))


def _index(addresses, size):
    """Every arena position of the nodes at ``addresses``, row after row."""
    return (np.asarray(addresses, dtype=np.int64)[:, None] + np.arange(size)).reshape(-1)


def gather(arena, addresses, size):
    n = len(addresses)
    if is_contiguous(addresses, size):
        start = addresses[0]
        return arena[start:start + n * size].reshape(n, size), True
    return arena[_index(addresses, size)].reshape(n, size), False


def scatter_add(grad_arena, addresses, size, grads):
    np.add.at(grad_arena, _index(addresses, size), np.asarray(grads).reshape(-1))


def execute_batch(arena, argument_addresses, size, kernel, out_start):
    blocks, copies = [], 0
    for addresses in argument_addresses:
        block, is_view = gather(arena, addresses, size)
        blocks.append(block)
        copies += not is_view
    n = len(argument_addresses[0])
    arena[out_start:out_start + n * size] = np.asarray(kernel(*blocks)).reshape(-1)
    return copies
