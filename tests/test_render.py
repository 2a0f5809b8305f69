"""bv.render: DOT states, colours and clusters per step; a fixed layout across steps; real
SVG through Graphviz; collapsed and expanded large graphs; the pure-Python fallback."""
import re
import shutil
import subprocess
import warnings
import xml.etree.ElementTree as ET

import graphviz
import pytest

import batchviz as bv
from batchviz.examples import figure1
from batchviz.viz.dot import BatchGraph
from batchviz.viz.dotcheck import DotMissingWarning
from batchviz.viz.palette import STATE_FILL
from batchviz.viz.svg import _layout

from test_explain import build_rnn_minibatch

HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"
NODE = re.compile(r'^\s*([ng][0-9_]+) \[(.*)\]$')
ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def dot_nodes(source: str) -> dict:
    """{DOT node name: {attribute: value}} from DOT source."""
    nodes = {}
    for line in source.splitlines():
        m = NODE.match(line)
        if m:
            nodes[m.group(1)] = {k: v.strip('"') for k, v in ATTR.findall(m.group(2))}
    return nodes


@pytest.fixture
def fig1():
    g, loss, _ = figure1("agenda")
    return g, bv.trace(loss)


def test_states_and_colours_at_several_steps(fig1):
    g, t = fig1
    for step in (0, 3, 5, 12, 22, 23):
        d = bv.render(t, step=step)
        assert isinstance(d, graphviz.Digraph) and isinstance(d, BatchGraph)
        nodes = dot_nodes(d.source)
        states = t.states(step)
        scheduled = [i for i in range(len(g.ops)) if i not in g.param_of_node]
        assert sorted(nodes) == sorted(f"n{i}" for i in scheduled)  # parameters hidden
        for i in scheduled:
            attrs = nodes[f"n{i}"]
            assert attrs["fillcolor"] == STATE_FILL[states[i]], (step, i)
            assert attrs["penwidth"] == ("3" if states[i] == "batch" else "1.5")
            assert attrs["label"] == f"{g.ops[i].name}\\n#{i} \u00b7 " + (
                "1" if g.shapes[i] == () else "x".join(map(str, g.shapes[i])) + ("x1" if len(g.shapes[i]) == 1 else ""))
        in_batch = sorted(int(k[1:]) for k, a in nodes.items() if a["fillcolor"] == STATE_FILL["batch"])
        assert in_batch == (sorted(t.steps[step].batch) if step < len(t) else [])
    caption = '>step 5/23: 3 \u00d7 add<BR ALIGN="LEFT"/>why: the only signature on the agenda<BR'
    assert caption in bv.render(t, step=5).source
    assert "step 23/23: all 61 nodes done" in bv.render(t, step=23).source


def test_signature_outlines_and_legend(fig1):
    g, t = fig1
    d = bv.render(t, step=4)
    nodes = dot_nodes(d.source)
    colour_of = {}
    for key, attrs in nodes.items():
        colour_of.setdefault(g.sigs[int(key[1:])], set()).add(attrs["color"])
    assert all(len(c) == 1 for c in colour_of.values())          # one colour per signature
    assert len({c.pop() for c in colour_of.values()}) == len(colour_of)  # all different
    for label in ("done", "in this step&#39;s batch", "on the agenda", "waiting"):
        assert label in d.source or label.replace("&#39;", "'") in d.source
    for name in ("tanh", "matmul-W#3-7x1", "squared_distance-1-2x1-2x1"):
        assert name in d.source


def test_clusters_by_signature(fig1):
    g, t = fig1
    d = bv.render(t, step=2, clusters=True)
    clusters = re.findall(r"subgraph (cluster_s(\d+)) \{(.*?)\n\t\}", d.source, flags=re.S)
    assert {int(s) for _, s, _ in clusters} == {g.sigs[i] for i in range(len(g.ops))
                                               if i not in g.param_of_node}
    for _, sig, body in clusters:
        members = [int(n) for n in re.findall(r"^\s*n(\d+) \[", body, flags=re.M)]
        assert members and all(g.sigs[i] == int(sig) for i in members)


def test_parameters_on_request(fig1):
    g, t = fig1
    nodes = dot_nodes(bv.render(t, step=0, parameters=True).source)
    assert len(nodes) == len(g.ops)
    assert nodes["n3"]["label"] == "W\\n4x7" and nodes["n3"]["fillcolor"] == STATE_FILL["done"]


def test_same_structure_at_every_step(fig1):
    """Only attribute values change between steps: same statements, same order."""
    g, t = fig1
    changing = r'(fillcolor|fontcolor|penwidth|style|tooltip)=("[^"]*"|\S+)'

    def skeleton(step):
        src = re.sub(changing, r"\1=_", bv.render(t, step=step).source)
        return re.sub(r'(HEIGHT="46">).*?(</TD>)', r"\1_\2", src)  # the caption's text

    first = skeleton(0)
    assert all(skeleton(k) == first for k in range(1, len(t) + 1))


@needs_dot
def test_layout_is_fixed_across_steps(fig1):
    g, t = fig1

    def positions(step):
        plain = subprocess.run(["dot", "-Tplain"], input=bv.render(t, step=step).source,
                               capture_output=True, text=True, check=True).stdout
        return [line.split()[:6] for line in plain.splitlines() if line.startswith(("graph", "node"))]

    first = positions(0)
    assert len(first) == 62
    for step in (1, 9, 22, 23):
        assert positions(step) == first


@needs_dot
def test_real_svg(fig1):
    g, t = fig1
    d = bv.render(t, step=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # dot is present: no fallback warning
        svg = d.svg()
    root = ET.fromstring(svg)
    nodes = [el for el in root.iter(f"{SVG}g") if el.get("class") == "node"]
    assert len(nodes) == 61
    titles = {el.find(f"{SVG}title").text for el in nodes}
    assert titles == {f"n{i}" for i in range(len(g.ops)) if i not in g.param_of_node}
    fills = [p.get("fill") for el in nodes for p in el.iter(f"{SVG}path")]
    assert fills.count(STATE_FILL["batch"]) == 3  # the batch of three adds
    assert "image/svg+xml" in d._repr_mimebundle_()
    png = d.pipe(format="png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_an_expression_directly():
    g, loss, _ = figure1("depth")
    d = bv.render(loss, step=-1, strategy="depth")
    assert "batchviz \u00b7 strategy depth (dry run) \u00b7 61 nodes \u00b7 29 batches" in d.source
    assert {a["fillcolor"] for a in dot_nodes(d.source).values()} == {STATE_FILL["done"]}
    with pytest.raises(IndexError, match="out of range"):
        bv.render(loss, step=30)


# --- large graphs --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big():
    g, loss = build_rnn_minibatch(12, seed=4)
    return g, bv.trace(loss)


def test_large_graphs_render_collapsed(big):
    g, t = big
    scheduled = len(g.ops) - len(g.param_of_node)
    assert scheduled > 300
    step = 30
    d = bv.render(t, step=step)
    nodes = dot_nodes(d.source)
    assert nodes and all(k.startswith("g") for k in nodes) and len(nodes) <= 60
    counts = [int(re.search(r"\u00d7(\d+)", a["label"]).group(1)) for a in nodes.values()]
    assert sum(counts) == scheduled
    states = t.states(step)
    total_batch = 0
    for key, attrs in nodes.items():
        # striped boxes: one stripe per state present, fractions summing to one
        if attrs["style"] == "striped":
            parts = [p.split(";") for p in attrs["fillcolor"].split(":")]
            assert sum(float(f) for _, f in parts) == pytest.approx(1, abs=0.01)
        n_batch = int(re.search(r"(\d+) in this step's batch", attrs["tooltip"]).group(1)) \
            if "in this step's batch" in attrs["tooltip"] else 0
        total_batch += n_batch
        assert (attrs["penwidth"] == "3") == (n_batch > 0)
    assert total_batch == states.count("batch") == len(t.steps[step].batch)
    assert "render(..., expand=dict(depth=(a, b)))" in d.source


def test_expand_a_region(big):
    g, t = big
    d = bv.render(t, step=10, expand=dict(depth=(2, 5)))
    nodes = dot_nodes(d.source)
    single = {int(k[1:]) for k in nodes if k.startswith("n")}
    assert single == {i for i in range(len(g.ops))
                      if 2 <= g.depths[i] <= 5 and i not in g.param_of_node}
    boxed = sum(int(re.search(r"\u00d7(\d+)", a["label"]).group(1))
                for k, a in nodes.items() if k.startswith("g"))
    assert boxed + len(single) == len(g.ops) - len(g.param_of_node)
    by_sig = dot_nodes(bv.render(t, step=10, expand=dict(signature="tanh", depth=(0, 9))).source)
    assert {g.ops[int(k[1:])].name for k in by_sig if k.startswith("n")} == {"tanh"}
    with pytest.raises(ValueError, match="no signature named 'tan'"):
        bv.render(t, expand=dict(signature="tan"))
    with pytest.raises(ValueError, match="unknown key"):
        bv.render(t, expand=dict(layer=3))
    with pytest.raises(ValueError, match="at most 2000"):
        bv.render(build_big_trace(), expand=dict(depth=(0, 10_000)))


def build_big_trace():
    g, loss = build_rnn_minibatch(60, seed=1)
    return bv.trace(loss)


@needs_dot
def test_collapsed_layout_is_fixed_too(big):
    g, t = big

    def positions(step):
        plain = subprocess.run(["dot", "-Tplain"], input=bv.render(t, step=step).source,
                               capture_output=True, text=True, check=True).stdout
        return [line.split()[:6] for line in plain.splitlines() if line.startswith("node")]

    assert positions(0) == positions(40) == positions(len(t))


# --- without dot ---------------------------------------------------------------------------


def test_fallback_when_dot_is_missing(fig1, monkeypatch, tmp_path):
    g, t = fig1
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on PATH
    d = bv.render(t, step=5)
    with pytest.warns(DotMissingWarning, match="apt-get install graphviz"):
        svg = d.svg()
    root = ET.fromstring(svg)
    texts = [el.text for el in root.iter(f"{SVG}text")]
    assert {"add", "#6 \u00b7 4x1", "esum", "#64 \u00b7 1"} <= set(texts)
    assert "`brew install graphviz`" in " ".join(x or "" for x in texts)
    boxes = [el for el in root.iter(f"{SVG}g") if el.find(f"{SVG}title") is not None]
    assert len(boxes) == 61
    in_batch = [el.find(f"{SVG}title").text for el in boxes
                if any(r.get("fill") == STATE_FILL["batch"] for r in el.iter(f"{SVG}rect"))]
    assert sorted(in_batch) == sorted(f"node {i}: add, depth {g.depths[i]}" for i in t.steps[5].batch)
    with pytest.warns(DotMissingWarning):
        bundle = d._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg") and "conda" in bundle["text/plain"]
    with pytest.raises(graphviz.ExecutableNotFound):
        d.pipe(format="svg")  # explicit Graphviz calls still say what is missing


@pytest.mark.parametrize("collapse", [False, True])
def test_fallback_layout_puts_arguments_above_users(fig1, big, collapse):
    g, t = big if collapse else fig1
    scene = bv.render(t, step=0).scene
    rows = _layout(scene)
    assert set(rows) == {sn.key for sn in scene.nodes}
    for tail, head, _ in scene.edges:
        if collapse:
            assert rows[tail][1] <= rows[head][1]
        else:
            assert rows[tail][1] < rows[head][1]


def test_fallback_draws_large_graphs(big):
    g, t = big
    d = bv.render(t, step=30)
    root = ET.fromstring(d.fallback_svg())
    boxes = [el for el in root.iter(f"{SVG}g") if el.find(f"{SVG}title") is not None]
    assert len(boxes) == len(d.scene.nodes)
    assert d.copy().fallback_svg() == d.fallback_svg()
