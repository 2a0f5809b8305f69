"""What a DyNet program's user sees named: the parameters as the program named them (or the
variables it assigned them to), the ops as the program wrote them, and dimension errors as
a ShapeError (a ValueError, as DyNet's) naming both dimensions and the user's line."""
import os
import re

import pytest

import batchviz as bv
import batchviz.dynet as dy
from batchviz.errors import ShapeError


def _program():
    pc = dy.ParameterCollection()
    W = pc.add_parameters((3, 2), name="W")
    b = pc.add_parameters(3, name="b")
    V = pc.add_parameters((3, 3))                 # no name: the variable's
    E = pc.add_lookup_parameters((10, 2))
    dy.renew_cg()
    losses = []
    for i in range(3):
        h = dy.logistic(b + W * E[i])
        losses.append(dy.sum_elems(dy.cmult(V * h, h)))
    return pc, E, dy.esum(losses)


def test_explain_and_picture_name_parameters_and_ops_as_the_program_does():
    _, _, loss = _program()
    report = str(bv.explain(loss.x))
    dot = bv.render(bv.trace(loss.x), 2).source
    for text in (report, dot):
        assert not re.search(r"/_\d", text), text        # no DyNet-internal names
        assert "/W" not in text and "/b" not in text
    for name in ("logistic(b + W * x)", "V * x", "lookup(E)"):
        assert name in report and name in dot
    assert "affine_logistic·" not in report and "matmul·" not in report


def test_dynet_names_stay_dynets():
    pc, E, _ = _program()
    assert [p.name() for p in pc.parameters_list()] == ["/W", "/b", "/_0"]
    assert E.name() == "/_1"


def test_out_of_range_names_the_users_table():
    _, E, _ = _program()
    with pytest.raises(IndexError, match=r"out of range for E, which has 10 rows"):
        dy.lookup(E, 20)


def test_a_dimension_mismatch_is_a_shape_error_naming_both_and_the_line():
    dy.renew_cg()
    with pytest.raises(ValueError) as caught:   # what DyNet raises: a ValueError
        dy.inputVector([1, 2]) + dy.inputVector([1, 2, 3])
    assert isinstance(caught.value, ShapeError)  # batchviz's own kind of it
    message = str(caught.value)
    assert "((2,), 1)" in message and "((3,), 1)" in message
    assert f"{os.path.basename(__file__)}:" in message

    pc = dy.ParameterCollection()
    W = pc.add_parameters((3, 2))
    with pytest.raises(ShapeError, match=r"x \* y: mismatched dimensions \(\(3, 2\), 1\) and "
                                         r"\(\(3,\), 1\).*test_dynet_names\.py:\d+"):
        W * dy.inputVector([1, 2, 3])
