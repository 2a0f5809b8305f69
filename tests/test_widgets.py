"""bv.Stepper and bv.compare driven from Python: the widget models, not a browser.

Every assertion compares what the widgets display with the trace they show (computed
independently with ``bv.trace``): the highlighted boxes are the step's batch, the agenda
table has the step's agenda groups, the details name the step's argument reads, the counts
are sums over the trace's steps. The browser tests (tests/browser/test_stepper.py) check the
same things in JupyterLab and in the saved pages.
"""
import re
import subprocess
import sys
import warnings

import graphviz
import ipywidgets as widgets
import pytest
from ipywidgets.widgets.widget_link import Link

import batchviz as bv
from batchviz.examples import figure1
from batchviz.schedule import AgendaBatching
from batchviz.viz.dotcheck import DotMissingWarning
from batchviz.widgets import pictures as pictures_module
from batchviz.widgets.compare import Compare
from batchviz.widgets.static_html import read_page_data, step_svg
from batchviz.widgets.stepper import Stepper
from batchviz.widgets.svgtext import clean_svg, split_pieces

from helpers import FewestFirst
from test_explain import build_rnn_minibatch

needs_dot = pytest.mark.skipif(
    __import__("shutil").which("dot") is None, reason="Graphviz's dot is not installed")

BOX = re.compile(r'class="node([^"]*)" data-key="([^"]+)"')
ROW = re.compile(r'<tr class="(bv-chosen|bv-waits)" data-signature="(\d+)">(.*?)</tr>')
SHAPE = re.compile(r'<title>([ng][0-9_]+)</title>\s*<g id="a_node\d+"><a [^>]*>\s*<(?:path|polygon) '
                   r'[^>]*?(?:d|points)="([^"]+)"')


def boxes(svg: str) -> dict:
    """``{DOT node name: set of state classes}`` of a widget picture."""
    return {key: set(cls.split()) for cls, key in BOX.findall(svg)}


def batch_keys(svg: str) -> set:
    return {key for key, cls in boxes(svg).items() if "bv-batch" in cls}


def box_of(stepper, node: int) -> str:
    """The DOT name of the box that draws ``node`` in ``stepper``'s pictures."""
    scene = stepper.frames.pictures.first.scene
    return scene.nodes[scene.index_of_node[node]].key


def rows(html: str) -> list:
    return [(kind, int(sig), body) for kind, sig, body in ROW.findall(html)]


@pytest.fixture
def fig1():
    graph, loss, _ = figure1("agenda")
    yield graph, loss
    graph.finish()


# --- the package ---------------------------------------------------------------------------
def test_import_batchviz_stays_free_of_ipywidgets():
    code = ("import sys, batchviz as bv; assert 'ipywidgets' not in sys.modules; "
            "bv.Stepper; assert 'ipywidgets' in sys.modules; print(bv.compare.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "compare"
    assert bv.Stepper is Stepper and "Stepper" in bv.__all__ and "compare" in bv.__all__
    with pytest.raises(AttributeError, match="no attribute 'Stepperr'"):
        bv.Stepperr


# --- one Stepper -----------------------------------------------------------------------------
@needs_dot
@pytest.mark.parametrize("strategy", ["agenda", "depth", "none"])
def test_every_step_shows_the_traces_batch_agenda_and_arguments(fig1, strategy):
    _, loss = fig1
    t = bv.trace(loss, strategy)
    s = bv.Stepper(loss, strategy=strategy)
    assert isinstance(s, widgets.VBox) and "bv-stepper" in s._dom_classes
    assert s.n_steps == len(t) and s.slider.max == len(t) and s.play.max == len(t)
    pictures = set()
    visited = sorted(set(range(0, len(t), 3)) | {len(t) - 1})
    for k in visited:
        s.slider.value = k  # what the browser's slider (or Play, through jslink) does
        step = t.steps[k]
        svg = s.graph_view.value
        pictures.add(svg)
        assert batch_keys(svg) == {f"n{i}" for i in step.batch}
        states = t.states(k)
        for key, cls in boxes(svg).items():
            assert f"bv-{states[int(key[1:])]}" in cls
        table = rows(s.agenda_view.value)
        assert [sig for _, sig, _ in table] == [g.signature for g in step.agenda]
        assert [sig for kind, sig, _ in table if kind == "bv-chosen"] == [step.signature]
        assert f"<b>batch {k}</b>: {len(step.batch)} \u00d7" in s.details_view.value
        kinds = re.findall(r'<td class="bv-kind">(\w+)</td>', s.details_view.value)
        assert kinds == [a.kind for a in step.arguments]
        assert f"step {k}/{len(t)}" in s.header_view.value  # k batches have run before it
        assert f"batches run: <b>{k}</b> of {len(t)}" in s.counts_view.value
        launches = sum(x.kernels for x in t.steps[:k])
        assert f"kernel launches: <b>{launches}</b> of {t.kernels}" in s.counts_view.value
    assert len(pictures) == len(visited)  # the picture changes with every step

    s.step = len(t)  # after the last batch: everything done, nothing highlighted
    assert batch_keys(s.graph_view.value) == set()
    assert all(cls == {"bv-done"} for cls in boxes(s.graph_view.value).values())
    assert "The agenda is empty" in s.agenda_view.value
    assert f"All {len(t)} batches have run" in s.details_view.value


@needs_dot
def test_details_name_every_argument_a_sum_reads_at_once(fig1):
    """esum reads its three arguments with one read: one row, for positions 0-2, naming
    the three losses."""
    graph, loss = fig1
    t = bv.trace(loss)
    k = next(k for k, step in enumerate(t.steps) if step.signature_name == "esum-1")
    s = bv.Stepper(loss, step=k)
    cells = re.findall(r"<tr class=\"bv-(\w+)\"><td>([^<]*)</td><td>([^<]*)</td>",
                       s.details_view.value)
    losses = graph.args[t.steps[k].batch[0]]
    assert cells == [("view", "0\u20132", ", ".join(f"#{a}" for a in losses))]


def test_buttons_step_and_stop_at_both_ends(fig1):
    _, loss = fig1
    s = bv.Stepper(loss, "agenda")
    assert s.step == 0 and s.back_button.disabled and not s.forward_button.disabled
    s.back_button.click()
    assert s.step == 0
    for _ in range(3):
        s.forward_button.click()
    assert s.step == 3 and s.slider.value == 3 and not s.back_button.disabled
    s.back_button.click()
    assert s.step == 2
    s.step = s.n_steps
    assert s.forward_button.disabled
    s.forward_button.click()
    assert s.step == s.n_steps


def test_play_speed_and_classes(fig1):
    _, loss = fig1
    s = bv.Stepper(loss, "agenda", interval=250)
    link = s.play_link
    assert isinstance(link, Link)
    assert (link.source, link.target) == ((s.play, "value"), (s.slider, "value"))
    assert s.play.interval == 250 and s.speed.value == 250
    s.speed.value = 125
    assert s.play.interval == 125
    for w, cls in ((s.play, "bv-play"), (s.slider, "bv-slider"), (s.back_button, "bv-step-back"),
                   (s.forward_button, "bv-step-forward"), (s.speed, "bv-speed"),
                   (s.graph_view, "bv-graph"), (s.agenda_view, "bv-agenda-table"),
                   (s.details_view, "bv-batch-details"), (s.counts_view, "bv-counts")):
        assert cls in w._dom_classes
    odd = bv.Stepper(loss, "agenda", interval=300)  # not one of the menu's speeds: added
    assert odd.speed.value == 300 and ("3.33 steps/s", 300) in odd.speed.options


def test_bad_input_gets_clear_errors(fig1):
    _, loss = fig1
    s = bv.Stepper(loss, "agenda")
    with pytest.raises(IndexError, match=r"step 99 is out of range: this trace has 23 steps"):
        s.step = 99
    with pytest.raises(ValueError, match="unknown strategy 'agendaa'"):
        bv.Stepper(loss, "agendaa")
    with pytest.raises(TypeError, match="expected an expression"):
        bv.Stepper([1, 2, 3])
    with pytest.raises(ValueError, match="interval must be a positive number of milliseconds"):
        bv.Stepper(loss, interval=0)
    with pytest.raises(ValueError, match="orientation must be one of"):
        bv.Stepper(loss, orientation="diagonal")
    with pytest.raises(TypeError, match="expand must be a dict"):
        bv.Stepper(loss, expand="tanh")
    with pytest.raises(TypeError, match="not a Trace"):
        bv.compare(bv.trace(loss), "depth", "agenda")
    with pytest.raises(ValueError, match="at least two strategies"):
        bv.compare(loss, "agenda")
    with pytest.raises(ValueError, match="ending in .html"):
        s.save_html("steps.txt")


def test_a_trace_or_a_graph_can_be_stepped(fig1):
    graph, loss = fig1
    t = bv.trace(loss, "depth")
    assert bv.Stepper(t, strategy="agenda").trace is t  # a trace is shown as it is
    assert len(bv.Stepper(graph, "depth").trace) == len(t)


@needs_dot
def test_why_the_other_signatures_wait(fig1):
    _, loss = fig1
    agenda = bv.Stepper(loss, "agenda", step=11)
    by_name = {r["name"]: r for r in agenda.agenda_rows()}  # the signatures' short names
    assert {r["full_name"] for r in agenda.agenda_rows()} == {"concatenate-4x1+3x1", "matmul-U#13-4x1"}
    assert by_name["concatenate"]["chosen"] and by_name["concatenate"]["in_batch"] == 2
    assert by_name["matmul\u00b7U"]["why"] == "waits: higher average depth (13.00 > 5.44)"
    depth = bv.Stepper(loss, "depth", step=12)
    by_name = {r["name"]: r for r in depth.agenda_rows()}
    assert by_name["matmul\u00b7U"]["why"] == "depth 9" and by_name["matmul\u00b7U"]["chosen"]
    assert by_name["matmul\u00b7W"]["why"] == "waits: its nodes here are deeper (depth 10 > 9)"
    none = bv.Stepper(loss, "none", step=0)
    waits = [r["why"] for r in none.agenda_rows() if not r["chosen"]]
    assert waits and all(w.startswith("waits: creation order (its first node #") for w in waits)


class BiggestGroupFirst(bv.Strategy):
    """A user-written strategy: run the signature with the most nodes on the agenda."""

    name = "biggest-first"

    def schedule(self, view):
        users = view.users()
        waiting = {i: len(view.pending_args(i)) for i in view.nodes}
        agenda = {}
        for i in view.nodes:
            if waiting[i] == 0:
                agenda.setdefault(view.signature[i], []).append(i)
        batches = []
        while agenda:
            sig = max(agenda, key=lambda s: (len(agenda[s]), -s))
            batch = agenda.pop(sig)
            batches.append(batch)
            for i in batch:
                for u in users.get(i, ()):
                    waiting[u] -= 1
                    if waiting[u] == 0:
                        agenda.setdefault(view.signature[u], []).append(u)
        return batches


@needs_dot
def test_user_written_strategy(fig1):
    _, loss = fig1
    s = bv.Stepper(loss, strategy=BiggestGroupFirst())
    t = bv.trace(loss, BiggestGroupFirst())
    assert s.strategy == "biggest-first" and s.trace.batches == t.batches
    assert len(t.batches[0]) == 9  # greedy: the nine input vectors first
    s.step = 0
    table = s.agenda_rows()
    assert [r["why"] for r in table if r["chosen"]] == ["chosen by biggest-first"]
    assert {r["why"] for r in table if not r["chosen"]} == {"not chosen by biggest-first"}
    assert batch_keys(s.graph_view.value) == {f"n{i}" for i in t.batches[0]}
    # a subclass of a built-in strategy that changes its priority is shown with its own
    # priority: the strategy records the keys it chose by, nothing re-derives them
    class Deepest(AgendaBatching):
        name = "deepest"

        def priority(self, view):
            return {s: (-p[0],) + p[1:] for s, p in super().priority(view).items()}

    deepest = bv.Stepper(loss, Deepest(), step=11)
    rows_ = deepest.agenda_rows()
    assert [r["key"][0] for r in rows_] == sorted(r["key"][0] for r in rows_)
    assert rows_[0]["chosen"] and all(r["key"][0] <= 0 for r in rows_)
    # a strategy written as a rule over the agenda shows its own key and words
    fewest = bv.Stepper(loss, FewestFirst(), step=0)
    assert fewest.trace.key_names == ("nodes on the agenda",)
    rows_ = fewest.agenda_rows()
    # step 0: 3 zeros and 3 target inputs tie; 9 input vectors wait
    assert [r["key"] for r in rows_] == [(3,), (3,), (9,)]
    assert rows_[0]["chosen"] and rows_[0]["why"] == "tie on every key broken by the lower signature id"
    assert all(r["why"].startswith("waits: higher nodes on the agenda") for r in rows_[1:]
               if r["key"] != rows_[0]["key"])
    assert "nodes on the agenda</th>" in fewest.frames.panels.agenda_html(0)


# --- pictures: fixed layout, drawn once -----------------------------------------------------
@needs_dot
def test_layout_never_moves_between_steps(fig1):
    _, loss = fig1
    s = bv.Stepper(loss, "depth")
    svgs = s.frames.pictures.render_all()
    shapes = [dict(SHAPE.findall(svg)) for svg in svgs]
    assert len(shapes[0]) == 61
    assert all(sh == shapes[0] for sh in shapes)


@needs_dot
def test_each_step_is_drawn_once_and_many_per_dot_run(fig1, monkeypatch):
    _, loss = fig1
    s = bv.Stepper(loss, "agenda", prefetch=False)
    pics = s.frames.pictures
    assert pics.cached_steps() == [0] and pics.dot_runs == 1
    for k in (1, 2, 3, 2, 1, 0, 3):
        s.step = k
    assert pics.cached_steps() == [0, 1, 2, 3] and pics.dot_runs == 4  # revisits are cached
    monkeypatch.setattr(pictures_module, "CHUNK", 8)
    pics.render_all()
    assert pics.dot_runs == 4 + 3  # the 20 remaining steps in runs of at most 8
    one_by_one = [bv.render(s.trace, step=k).svg() for k in (5, 17)]
    for k, text in zip((5, 17), one_by_one):  # piping many graphs through one dot: same picture
        assert dict(SHAPE.findall(pics.svg(k))) == dict(SHAPE.findall(clean_svg(text)))


@needs_dot
def test_next_steps_are_drawn_ahead_in_one_dot_run(fig1):
    _, loss = fig1
    s = bv.Stepper(loss, "agenda")  # prefetch is on by default
    pics = s.frames.pictures
    pics.wait()
    ahead = pictures_module.AHEAD
    assert pics.cached_steps() == list(range(ahead + 1)) and pics.dot_runs == 2
    s.step = 5      # drawn already; most of the next steps too: nothing to start
    pics.wait()
    assert pics.dot_runs == 2
    s.step = 7      # steps 13..19 are missing now: one more run draws them all
    pics.wait()
    assert pics.cached_steps() == list(range(7 + ahead + 1)) and pics.dot_runs == 3
    assert batch_keys(s.svg(19)) == {f"n{i}" for i in s.trace.steps[19].batch}


@needs_dot
def test_whole_graph_shows_the_whole_picture_and_back(fig1):
    _, loss = fig1
    s = bv.Stepper(loss, "agenda", step=12, prefetch=False)
    window = s.graph_view.value
    whole = s.frames.pictures.whole(12)
    assert len(boxes(whole)) == 61 and window != whole
    # the same boxes, a window of them: as wide, less tall
    assert re.search(r'width="[^"]+"', window).group(0) == re.search(r'width="[^"]+"', whole).group(0)
    assert window.count('class="bv-strip"') >= 1 and 'class="bv-strip"' not in whole
    s.whole.value = True
    assert "bv-whole-graph" in s.graph_view._dom_classes and s.graph_view.value == whole
    s.forward()  # stays whole while stepping
    assert s.graph_view.value == s.frames.pictures.whole(13)
    s.whole.value = False
    assert "bv-whole-graph" not in s.graph_view._dom_classes
    assert s.graph_view.value == s.frames.pictures.svg(13) != s.frames.pictures.whole(13)


def test_pictures_fall_back_without_dot(fig1, monkeypatch):
    _, loss = fig1

    def missing(*args, **kwargs):
        raise graphviz.ExecutableNotFound(["dot"])

    monkeypatch.setattr(graphviz, "pipe", missing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = bv.Stepper(loss, "agenda", step=3)
    assert any(issubclass(w.category, DotMissingWarning) for w in caught)
    t = s.trace
    assert batch_keys(s.graph_view.value) == {f"n{i}" for i in t.steps[3].batch}
    assert len(boxes(s.graph_view.value)) == 61


@needs_dot
def test_large_graph_is_drawn_collapsed_and_steps_quickly():
    graph, loss = build_rnn_minibatch(6, seed=1)
    s = bv.Stepper(loss, "agenda")
    t = s.trace
    assert t.scheduled_nodes > 300
    pics = s.frames.pictures
    assert pics.collapsed
    scene = pics.first.scene
    for k in (0, 5, len(t) // 2):
        s.step = k
        shown = boxes(s.graph_view.value)
        assert len(shown) == len(scene.nodes) <= 60
        assert all("bv-group" in cls for cls in shown.values())
        expected = {scene.nodes[scene.index_of_node[i]].key for i in t.steps[k].batch}
        assert batch_keys(s.graph_view.value) == expected
    pics.wait()
    runs = pics.dot_runs
    for k in (5, 0, len(t) // 2):
        s.step = k
    assert pics.dot_runs == runs  # every one of them drawn before: nothing drawn again
    graph.finish()


# --- compare -------------------------------------------------------------------------------
@needs_dot
def test_compare_linked_then_unlinked(fig1):
    _, loss = fig1
    c = bv.compare(loss, "depth", "agenda")
    assert isinstance(c, Compare) and "bv-compare" in c._dom_classes and c.linked
    depth, agenda = c.panes
    assert (depth.strategy, agenda.strategy) == ("depth", "agenda")
    depth.slider.value = 12
    assert agenda.step == 12
    # half a notebook cell each, the panes draw one box per signature and depth
    assert batch_keys(depth.graph_view.value) == {box_of(depth, 14)}  # the short sequence's output layer, alone
    assert batch_keys(agenda.graph_view.value) == {box_of(agenda, 32), box_of(agenda, 52)}  # the RNN goes on
    assert "bv-agenda" in boxes(agenda.graph_view.value)[box_of(agenda, 14)]  # ...while 14 waits
    summary = c.summary_view.value
    assert "1 \u00d7 matmul\u00b7U" in summary and "2 \u00d7 matmul\u00b7W" in summary

    agenda.forward_button.click()
    assert depth.step == 13
    depth.step = 27  # past agenda's end: it stops at its own last step
    assert agenda.step == agenda.n_steps == 23

    c.link_toggle.value = False
    depth.step = 3
    assert agenda.step == 23
    agenda.step = 10
    assert depth.step == 3
    c.linked = True  # linking again brings every pane to the first pane's step
    assert agenda.step == 3


@needs_dot
def test_compare_counts_batches_and_launches(fig1):
    _, loss = fig1
    c = bv.compare(loss, "depth", "agenda", link=False)
    depth, agenda = c.panes
    depth.step, agenda.step = 28, 22  # each pane at its last batch: all the others have run
    cells = re.findall(r'<td class="bv-num">(\d+)</td>', c.summary_view.value)
    t_depth, t_agenda = depth.trace, agenda.trace
    assert [int(x) for x in cells] == [28, t_depth.kernels - t_depth.steps[-1].kernels,
                                       22, t_agenda.kernels - t_agenda.steps[-1].kernels]
    depth.step, agenda.step = 29, 23  # the end of each
    cells = re.findall(r'<td class="bv-num">(\d+)</td>', c.summary_view.value)
    assert [int(x) for x in cells] == [29, t_depth.kernels, 23, t_agenda.kernels]
    assert (t_depth.kernels, t_agenda.kernels) == (39, 31)  # bv.explain's "kernel launches"


@needs_dot
def test_compare_draws_the_same_layout_in_every_pane(fig1):
    _, loss = fig1
    c = bv.compare(loss, "depth", "agenda", "none")
    shapes = [dict(SHAPE.findall(p.frames.pictures.whole(p.n_steps))) for p in c.panes]
    scene = c.panes[0].frames.pictures.first.scene
    assert len(shapes[0]) == len(scene.nodes) and shapes[0] == shapes[1] == shapes[2]
    # drawn node by node, Figure 1 is too wide for half a notebook cell: collapsed until it fits
    assert scene.collapsed
    width = float(re.search(r'width="([0-9.]+)pt"', c.panes[0].svg()).group(1))
    assert width <= pictures_module.PANE_MAX_WIDTH


# --- save_html -----------------------------------------------------------------------------
@needs_dot
def test_saved_stepper_page_holds_every_step_and_no_url(fig1, tmp_path):
    _, loss = fig1
    s = bv.Stepper(loss, "depth")
    path = s.save_html(tmp_path / "out" / "steps.html")
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"https?:", text)
    assert "<link" not in text and not re.search(r"<script[^>]*\bsrc=", text)
    data = read_page_data(text)
    (pane,) = data["panes"]
    assert pane["strategy"] == "depth" and pane["n"] == len(s.trace) == 29
    assert len(pane["steps"]) == 30
    for k in range(30):
        f = s.frame(k)
        assert step_svg(data, 0, k) == f.svg
        _, header, counts, agenda, details, whole = pane["steps"][k]
        assert "".join(data["pool"][i] for i in whole) == s.frames.pictures.whole(k)
        assert [data["pool"][i] for i in (header, counts, agenda, details)] == [
            f.header, f.counts, f.agenda, f.details]
    # the pool stores repeated pieces once: far smaller than 30 full pictures
    assert len(text) < 0.5 * sum(len(s.svg(k)) for k in range(30))
    assert data["interval"] == s.play.interval and data["linked"] is None


@needs_dot
def test_saved_compare_page_holds_both_panes_and_the_link(fig1, tmp_path):
    _, loss = fig1
    c = bv.compare(loss, "depth", "agenda", link=False)
    text = c.save_html(tmp_path / "cmp.html").read_text(encoding="utf-8")
    assert not re.search(r"https?:", text)
    data = read_page_data(text)
    assert [p["strategy"] for p in data["panes"]] == ["depth", "agenda"]
    assert data["linked"] is False and 'class="bv-link"' in text
    for p, pane in enumerate(c.panes):
        assert all(step_svg(data, p, k) == pane.svg(k) for k in range(pane.n_steps + 1))
        assert data["panes"][p]["summary"][12][0] == pane.frames.panels.batch_text(12)


def test_split_pieces_is_lossless():
    svg = ('<svg class="bv-svg"><g id="graph0" class="graph"><g id="node1" class="node"><title>n0</title>'
           '</g>\n<g id="edge1" class="edge"><title>n0&#45;&gt;n2</title></g></g></svg>\n')
    pieces = split_pieces(svg)
    assert len(pieces) == 3 and "".join(pieces) == svg
    assert clean_svg('<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "x" "http://a">\n<!-- c -->\n'
                     '<svg width="1pt" xmlns="http://www.w3.org/2000/svg" '
                     'xmlns:xlink="http://www.w3.org/1999/xlink"><g/></svg>') == \
        '<svg class="bv-svg" style="min-width:2px" width="1pt"><g/></svg>\n'  # 11 px text: 1.33 px


def test_a_batch_of_sums_of_different_lengths_is_detailed():
    """esum nodes of 2, 3 and 4 terms run as one batch, read in one gather: the details list
    every term once (the batch's read covers 4 positions; the first nodes have fewer)."""
    g = bv.Graph("agenda")
    with bv.graph_scope(g):
        xs = [bv.input([float(k)]) for k in range(9)]
        sums = [bv.esum(xs[0:2]), bv.esum(xs[2:5]), bv.esum(xs[5:9])]
        loss = bv.esum([bv.tanh(s) for s in sums])
    s = bv.Stepper(loss, "agenda", prefetch=False)
    step = next(k for k, st in enumerate(s.trace.steps) if len(st.batch) == 3 and "esum" in st.signature_name)
    s.step = step
    details = s.details_view.value
    terms = {f"#{x.node}" for x in xs}
    listed = details.split('<table class="bv-args">')[1]
    shown = set(re.findall(r"#\d+", listed))
    assert len(shown) == 8 and shown < terms and "and 1 more" in listed  # 9 terms, 8 by name
    for k in range(s.n_steps + 1):  # every step draws
        s.step = k
    g.finish()


@needs_dot
def test_a_dynet_programs_widgets_name_what_the_program_wrote():
    """Pictures, keys, headers, tables and the saved page of a DyNet program name its
    parameters and ops as the program wrote them, never DyNet's internal ``/_0``."""
    from test_dynet_names import _program

    _, _, loss = _program()
    s = bv.Stepper(loss.x, "agenda", prefetch=False)
    c = bv.compare(loss.x, "depth", "agenda")
    shown = [c.summary_view.value, s.to_html(), c.to_html()]
    for st in [s, *c.panes]:
        shown.append(st.legend_view.value)
        for k in range(st.n_steps + 1):
            f = st.frame(k)
            shown += [f.svg, f.header, f.counts, f.agenda, f.details]
    text = "\n".join(shown)
    assert not re.search(r"/_\d|/W\b", text)
    for name in ("logistic(b + W * x)", "V * x", "lookup(E)"):
        assert name in s.legend_view.value and name in s.svg(0)
