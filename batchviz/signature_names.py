"""Short display names of signatures: ``matmul·W``, ``lstm_step·tree·K2``, ``tanh``.

A signature's full description (:meth:`batchviz.ops.base.Op.describe_signature`) names every
part of its tuple, as ``lstm_step-h8-K2-tree.b#7-tree.U_L#8-8x1-tree.U_R#9-8x1-cell-cell``:
exact, but too long for a table cell or a box in a picture. The display name keeps what a
reader tells signatures apart by:

* the op's name;
* the parameters the batch shares (``W`` in ``W @ h_i``), each by its owner: a dotted name
  such as ``tree.U_L`` (a builder's parameter) stands for its builder, ``tree``;
* only when two signatures of the graph would still get the same name: the first parts of
  their full descriptions that tell them apart (``input·3x1`` and ``input·2x1``,
  ``lstm_step·tree·K0`` and ``lstm_step·tree·K2``).

A DyNet program's graph (:mod:`batchviz.dynet` marks it, ``graph.names_ops_as ==
"dynet"``) names its ops as the program wrote them: ``logistic(b + W * x)``, ``V * x``,
``lookup(E)``, ``x + y``, where batchviz's own names would be ``affine_logistic·b,W``,
``matmul·V``, ``lookup·E``, ``add``.

The names are computed once per graph, over all its signatures, so one signature has one
name in every table, picture, trace and report of that graph. The full description stays
where there is room: on hover (a ``title`` attribute) and in the batch details.
"""
from __future__ import annotations

#: joins the parts of a display name
SEPARATOR = "\u00b7"


def display_names(graph, signatures) -> dict:
    """``{signature: display name}`` for ``signatures`` (integers of ``graph``'s table);
    pass all the graph's signatures (``set(graph.sigs)``) so that every view of the graph
    uses the same names."""
    signatures = sorted(set(signatures))
    name_of = _dynet_name if getattr(graph, "names_ops_as", None) == "dynet" else _base_name
    base = {s: name_of(graph, graph.sigtab[s].key) for s in signatures}
    groups: dict = {}
    for s in signatures:
        groups.setdefault(base[s], []).append(s)
    names = {}
    for name, members in groups.items():
        if len(members) == 1:
            names[members[0]] = name
            continue
        parts = {s: graph.signature_name(s).split("-")[1:] for s in members}
        for s in members:
            names[s] = SEPARATOR.join([name] + _telling_parts(parts, s))
    return names


def _base_name(graph, key: tuple) -> str:
    """The op's name and the owners of the parameters its batches share; a parameter's
    own signature (``("parameter", "node", id)``) is named by the parameter's full name."""
    if len(key) == 3 and key[1] == "node" and isinstance(key[2], int):
        return SEPARATOR.join([str(key[0]), _owner(graph, key[2], whole=True)])
    owners = []
    for part in key[1:]:
        if isinstance(part, tuple) and len(part) == 2 and part[0] == "node":
            owner = _owner(graph, part[1])
            if owner not in owners:
                owners.append(owner)
    return SEPARATOR.join([str(key[0])] + ([",".join(owners)] if owners else []))


#: batchviz ops that a DyNet program writes as an operator
_DYNET_OPERATORS = {"add": "x + y", "sub": "x - y", "cdiv": "x / y", "neg": "-x",
                    "shift": "x + c", "scale": "c * x"}


def _dynet_name(graph, key: tuple) -> str:
    """A signature's name as a DyNet program writes the op: ``logistic(b + W * x)`` for
    ``affine_logistic`` with parameters ``b`` and ``W``, ``W * x`` for ``matmul`` of
    parameter ``W``, ``lookup(E)``, ``parameter(W)``, ``x + y``; the other ops keep their
    names, which are DyNet's (``tanh``, ``cmult``, ``esum``)."""
    op = str(key[0])
    if len(key) == 3 and key[1] == "node" and isinstance(key[2], int):
        return f"{op}({_owner(graph, key[2], whole=True)})"
    if op in ("affine", "affine_batch") or op.startswith("affine_") and op != "affine_batch":
        activation = "" if op in ("affine", "affine_batch") else op.removeprefix("affine_")
        weights = key[2::2]
        xs = ["x"] if len(weights) == 1 else [f"x{k}" for k in range(1, len(weights) + 1)]
        terms = [_factor(graph, key[1], "c")] + [f"{_factor(graph, w, 'A')} * {x}"
                                                  for w, x in zip(weights, xs)]
        text = " + ".join(terms)
        return f"{activation}({text})" if activation else text
    if op == "matmul":
        return f"{_factor(graph, key[1], 'A')} * x"
    if op in ("lookup", "lookup_batch") and len(key) > 1:
        return f"{op}({_factor(graph, key[1], 'E')})"
    return _DYNET_OPERATORS.get(op) or _base_name(graph, key)


def _factor(graph, part, otherwise: str) -> str:
    """A parameter's name for a signature part ``("node", id)``; ``otherwise`` for a part
    that is no parameter (a shape: any expression of it)."""
    if isinstance(part, tuple) and len(part) == 2 and part[0] == "node":
        name = _owner(graph, part[1], whole=True)
        return otherwise if name.startswith("#") else name
    return otherwise


def _owner(graph, node: int, whole: bool = False) -> str:
    """``W`` for a parameter named ``W``, ``tree`` for ``tree.U_L`` (``whole``: the name
    itself), ``#12`` for a node that is no named parameter."""
    param = graph.param_of_node.get(node)
    name = getattr(param, "name", None)
    if not name:
        return f"#{node}"
    if whole or "." not in name.strip("."):
        return name
    return name.rsplit(".", 1)[0]


def _telling_parts(parts: dict, s: int) -> list:
    """The fewest parts of ``s``'s full description, taken in order, that no other
    signature of its group shares at the same places."""
    mine = parts[s]
    others = [p for t, p in parts.items() if t != s]  # those not told apart yet
    chosen = []
    for k, word in enumerate(mine):
        if not others:
            break
        still = [p for p in others if k < len(p) and p[k] == word]
        if len(still) < len(others):
            chosen.append(word)
            others = still
    if others:  # nothing tells them apart in words (never seen): the number does
        chosen.append(f"#{s}")
    return chosen
