"""Reference solution of exercise 2 (node signatures, Appendix A)."""

SUMS = {"esum", "average"}


def elementwise_signature(op_name, output_shape):
    if op_name in SUMS:
        return (op_name, tuple(output_shape))
    return (op_name,)


def dimension_sensitive_signature(op_name, output_shape, argument_shapes, bounds=None):
    return (op_name, tuple(output_shape), tuple(tuple(s) for s in argument_shapes), bounds)


def shared_argument_signature(op_name, argument_keys):
    return (op_name,) + tuple(argument_keys)


SHAREABLE_POSITIONS = {
    "matmul": lambda n_args: {0},
    "lookup": lambda n_args: {0},
    "affine": lambda n_args: {0} | set(range(1, n_args, 2)),
}


def signature(graph, node):
    op = graph.ops[node]
    args = graph.args[node]
    if op.elementwise:
        return elementwise_signature(op.name, graph.shapes[node])
    if op.name in SHAREABLE_POSITIONS:
        shareable = SHAREABLE_POSITIONS[op.name](len(args))
        keys = []
        for position, arg in enumerate(args):
            if position in shareable and arg in graph.param_of_node:
                keys.append(("node", arg))
            else:
                keys.append(graph.shapes[arg])
        return shared_argument_signature(op.name, keys)
    bounds = graph.attrs[node] if op.name == "pick_range" else None
    return dimension_sensitive_signature(op.name, graph.shapes[node],
                                         [graph.shapes[a] for a in args], bounds)
