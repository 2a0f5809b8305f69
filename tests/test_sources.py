"""Why not batched, at the user's own lines: graphs that record where their nodes were built,
``bv.explain`` naming the lines whose nodes were split (terminal, HTML, ``to_dict``), and the
stepper showing the line of the chosen batch.

The script is written here, so the lines it builds its nodes on are known: the test finds
them by the markers at their ends, and the report must name exactly those lines."""
import inspect
import json
import textwrap

import numpy as np
import pytest

import batchviz as bv
from batchviz.cli import main
from batchviz.graph import graph_scope
from batchviz.sourcelines import where_text

# Figure 1's RNN over sequences of lengths 2, 3 and 4: depth batching runs each sequence's
# output layer and loss as soon as that sequence ends, three batches where one would do
SCRIPT = textwrap.dedent('''\
    import numpy as np
    import batchviz as bv

    model = bv.Model(seed=0)
    W = model.add_parameters((4, 7), name="W")
    U = model.add_parameters((2, 4), name="U")
    rng = np.random.default_rng(0)
    losses = []
    for n in (2, 3, 4):
        h = bv.zeros(4)
        for t in range(n):
            x = bv.input(rng.standard_normal(3))
            h = bv.tanh(W @ bv.concatenate([h, x]))  # STEP
        y = U @ h  # OUTPUT
        losses.append(bv.squared_distance(y, bv.input(np.zeros(2))))  # LOSS
    loss = bv.esum(losses)
    print(loss.value())
''')


def line_of(marker: str) -> int:
    return next(k for k, line in enumerate(SCRIPT.splitlines(), 1) if line.endswith(f"# {marker}"))


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "rnn_script.py"
    path.write_text(SCRIPT)
    return path


def waited_depths(script, op: str) -> str:
    """The depths of the arguments the ``op`` nodes of the output layer wait on, read off
    the script's graph: ``U @ h`` waits on each sequence's last ``tanh``, the loss on
    ``U @ h`` (the other arguments are leaves, at depth 0)."""
    graph, _ = run_script_in_a_graph(script, record=False)
    users = [i for i, o in enumerate(graph.ops) if o.name == op and graph.shapes[i] in ((2,), ())]
    depths = sorted(max(graph.depths[a] for a in graph.args[i]) for i in users)
    graph.finish()
    return f"{depths[0]}\u2013{depths[-1]}"


def test_batchviz_explain_names_the_scripts_lines(script, capsys):
    assert main(["explain", "--strategies", "depth,agenda", str(script)]) == 0
    text = capsys.readouterr().out
    output, loss = line_of("OUTPUT"), line_of("LOSS")
    assert "depth: the lines of your code whose nodes took more batches than their chain needs" in text
    assert (f"rnn_script.py:{output}, `bv.matmul` (matmul\u00b7U): 3 nodes in 3 batches "
            f"(their chain needs 1); they wait on `tanh` at depths {waited_depths(script, 'matmul')}"
            ) in text
    assert (f"rnn_script.py:{loss}, `bv.squared_distance`: 3 nodes in 3 batches (their chain "
            f"needs 1); they wait on `matmul\u00b7U` at depths "
            f"{waited_depths(script, 'squared_distance')}") in text
    assert "agenda: the lines" not in text  # agenda batches them at their chain's length
    assert "were not recorded" not in text


def test_the_lines_in_json_and_html(script, tmp_path, capsys):
    page = tmp_path / "report.html"
    assert main(["explain", "--json", "--html", str(page), str(script)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sources_recorded"] is True
    notes = {n["path"]: n for n in data["split_by_line"]["depth"]}
    loss = notes[f"{script}:{line_of('LOSS')}"]
    lo, hi = map(int, waited_depths(script, "squared_distance").split("\u2013"))
    assert loss == {"source": f"rnn_script.py:{line_of('LOSS')}", "path": f"{script}:{line_of('LOSS')}",
                    "call": "bv.squared_distance", "signature": "squared_distance", "nodes": 3,
                    "batches": 3, "chain_bound": 1, "waits_on": "matmul\u00b7U",
                    "wait_depths": [lo, hi]}
    assert data["split_by_line"]["agenda"] == []
    html = page.read_text(encoding="utf-8")
    assert f"rnn_script.py:{line_of('OUTPUT')}, `bv.matmul` (matmul\u00b7U): 3 nodes" in html


def run_script_in_a_graph(script, record: bool):
    """The script's graph, built here (with or without recording) rather than by the CLI."""
    graph = bv.Graph("agenda", record_source=record)
    namespace: dict = {}
    with graph_scope(graph):
        exec(compile(SCRIPT.replace("print(loss.value())", ""), str(script), "exec"), namespace)
    return graph, namespace["loss"]


def test_each_node_remembers_its_line_only_when_recording(script):
    graph, loss = run_script_in_a_graph(script, record=True)
    sources = {graph.ops[i].name: graph.sources[i] for i in range(len(graph.ops))
               if i not in graph.param_of_node}
    assert sources["tanh"] == f"{script}:{line_of('STEP')}"
    assert sources["squared_distance"] == f"{script}:{line_of('LOSS')}"
    trace = bv.trace(loss, "depth")
    assert {n.source for n in trace.nodes if n.op == "matmul" and n.shape == (2,)} == {
        f"{script}:{line_of('OUTPUT')}"}
    graph.finish()
    plain, loss = run_script_in_a_graph(script, record=False)
    assert plain.sources is None  # nothing recorded, nothing paid
    e = bv.explain(loss, ["depth", "agenda"])
    assert not e.sources_recorded and e.split["depth"] == []
    assert "were not recorded: build the graph as bv.Graph(record_source=True)" in str(e)


def test_recording_sources_turns_recording_on_for_graphs_made_inside():
    with bv.recording_sources():
        recorded = bv.Graph()
        declined = bv.Graph(record_source=False)
        with bv.recording_sources():  # blocks nest
            nested = bv.Graph()
        after_nested = bv.Graph()
    outside = bv.Graph()
    assert recorded.sources == [] and nested.sources == [] and after_nested.sources == []
    assert declined.sources is None and outside.sources is None
    with recorded:
        x, line = bv.input(np.ones(2)), inspect.currentframe().f_lineno
        bv.tanh(x)
    assert [where_text(s) for s in recorded.sources] == [f"test_sources.py:{line}",
                                                         f"test_sources.py:{line + 1}"]


def test_the_stepper_shows_the_line_of_the_chosen_batch(script):
    graph, loss = run_script_in_a_graph(script, record=True)
    stepper = bv.Stepper(loss, "depth", prefetch=False)
    t = stepper.trace
    step = next(s.index for s in t.steps if t.nodes[s.batch[0]].op == "squared_distance")
    stepper.step = step
    assert (f'built at <code title="{script}:{line_of("LOSS")}">rnn_script.py:{line_of("LOSS")}'
            "</code>") in stepper.details_view.value
    graph.finish()
    graph, loss = run_script_in_a_graph(script, record=False)
    details = bv.Stepper(loss, "depth", prefetch=False).details_view.value
    assert "lines not recorded" in details and "bv.Graph(record_source=True)" in details
    graph.finish()
