"""Short display names of signatures (batchviz/signature_names.py): the op and what tells it
apart, one name per signature in every table, picture and report of a graph, the full
description on hover and in the details."""
import re

import pytest

import batchviz as bv
from batchviz.examples import figure1
from batchviz.signature_names import SEPARATOR, display_names
from batchviz.trace import Trace

from models import load_tutorial_graphs, lstm_models_loss

S = SEPARATOR


@pytest.fixture
def fig1():
    graph, loss, _ = figure1("agenda")
    yield graph, loss
    graph.finish()


def names_by_full(graph) -> dict:
    return {graph.signature_name(s): n for s, n in display_names(graph, set(graph.sigs)).items()}


def test_figure1_names_are_the_op_and_what_tells_it_apart(fig1):
    graph, _ = fig1
    assert names_by_full(graph) == {
        "tanh": "tanh", "add": "add", "zeros-4x1": "zeros", "esum-1": "esum",
        "input-3x1": f"input{S}3x1", "input-2x1": f"input{S}2x1",  # two inputs: the shape tells
        "concatenate-4x1+3x1": "concatenate", "squared_distance-1-2x1-2x1": "squared_distance",
        "matmul-W#3-7x1": f"matmul{S}W", "matmul-U#13-4x1": f"matmul{S}U",  # the shared weight
        "parameter-W#3": f"parameter{S}W", "parameter-b#5": f"parameter{S}b",
        "parameter-U#13": f"parameter{S}U", "parameter-c#15": f"parameter{S}c"}


def test_builders_parameters_stand_for_their_builder():
    with bv.Graph() as graph:
        lstm_models_loss()
        names = names_by_full(graph)
    tree = {full: short for full, short in names.items() if full.startswith("lstm_step-h3-K")
            and "tree." in full}
    # a Tree-LSTM's leaf and inner steps: the builder "tree", told apart by their cells
    assert sorted(tree.values()) == [f"lstm_step{S}tree{S}K0", f"lstm_step{S}tree{S}K2"]
    first_steps = [short for full, short in names.items() if full.startswith("lstm_step")
                   and "bilstm.f0.l0" in full]
    assert sorted(first_steps) == [f"lstm_step{S}bilstm.f0.l0{S}3x1", f"lstm_step{S}bilstm.f0.l0{S}cell"]


@pytest.mark.parametrize("build", ["figure1_extended", "tree_lstm", "parser", "random_dag",
                                   "mixed_ops"])
def test_every_graph_gets_one_short_name_per_signature(build):
    graph = getattr(load_tutorial_graphs(), build)()[0]
    names = display_names(graph, set(graph.sigs))
    assert len(set(names.values())) == len(names)  # no two signatures share a name
    for s, name in names.items():
        full = graph.signature_name(s)
        assert name.split(S)[0] == graph.sigtab[s].key[0]  # the op first
        assert len(name) <= max(len(full), 40)
    graph.finish()


def test_one_name_everywhere_and_the_full_tuple_on_hover(fig1):
    graph, loss = fig1
    short = display_names(graph, set(graph.sigs))
    t = bv.trace(loss, "depth")
    assert t.display_names == {s: short[s] for s in set(graph.sigs)}
    assert Trace.from_json(t.to_json()).display_names == t.display_names
    stepper = bv.Stepper(t, step=12, prefetch=False)
    row = re.search(r'<td class="bv-sig" title="([^"]+)"><span[^>]*></span>([^<]+)</td>',
                    stepper.agenda_view.value)
    assert row.group(1) == "matmul-U#13-4x1" and row.group(2) == f"matmul{S}U"
    assert f"signature <code>matmul-U#13-4x1</code>" in stepper.details_view.value
    assert f"1 \u00d7 matmul{S}U" in stepper.header_view.value
    legend = re.search(r"label=<<TABLE.*?</TABLE>>", bv.render(t, step=12).source, re.S).group(0)
    assert f"matmul{S}U" in legend and "matmul-U#13-4x1" not in legend
    e = bv.explain(loss)
    assert {r.display_name for r in e.rows} <= set(short.values())
