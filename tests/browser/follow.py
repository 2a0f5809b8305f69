"""Step a stepper (or a compare) through every step inside the page, and measure what its
pictures show at each step.

One ``evaluate`` per widget: the JavaScript clicks *back* down to step 0, *forward* up to
the last step (every pane of a compare to its own last step), then *back* to ``target``;
after each click it waits until every pane's header names the step it must show now, and
measures, per pane:

* ``hidden``: the boxes of the step's batch (``g.node.bv-batch``, by ``data-key``) of which
  no drawing is visible: a box counts as seen when its bounding rectangle, cut to what the
  ``<svg>`` elements around it show (a strip of the picture is a nested ``<svg>``) and to
  the picture's box (``.bv-graph``), is not empty;
* ``smallest``: the smallest text of its pictures on screen (computed font size times the
  SVG's screen scale);
* ``box``: the height of the picture's box (CSS px).

It works the same on a widget in JupyterLab (the clicks go to the kernel and back) and on a
page written by ``save_html`` (the clicks run the page's own script).
"""
from __future__ import annotations

STEP_THROUGH = r"""async (root, opts) => {
  const panes = root.matches('.bv-compare') || root.matches('body')
      ? [...root.querySelectorAll('.bv-stepper, .bv-pane')] : [root];
  const stepOf = p => {
    const m = p.querySelector('.bv-header-view').textContent.match(/step (\d+)\/(\d+)/);
    return m ? [Number(m[1]), Number(m[2])] : null;
  };
  const cut = (a, b) => ({left: Math.max(a.left, b.left), top: Math.max(a.top, b.top),
                          right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom)});
  const seen = r => r.right > r.left && r.bottom > r.top;
  // what an <svg> shows on screen: the outermost one its CSS box; a nested one (a strip) its
  // x, y, width, height in its parent's units (its getBoundingClientRect is its content's)
  const viewport = s => {
    const outer = s.parentElement ? s.parentElement.closest('svg') : null;
    if (!outer) return s.getBoundingClientRect();
    const m = outer.getScreenCTM();
    const x = s.x.baseVal.value, y = s.y.baseVal.value;
    const w = s.width.baseVal.value, h = s.height.baseVal.value;
    return {left: m.e + m.a * x, top: m.f + m.d * y, right: m.e + m.a * (x + w), bottom: m.f + m.d * (y + h)};
  };
  const measure = p => {
    const box = p.querySelector('.bv-graph').getBoundingClientRect();
    const shown = new Map();
    for (const g of p.querySelectorAll('.bv-graph g.node.bv-batch')) {
      let r = g.getBoundingClientRect();
      for (let s = g.closest('svg'); s; s = s.parentElement ? s.parentElement.closest('svg') : null) {
        r = cut(r, viewport(s));
      }
      const key = g.getAttribute('data-key');
      shown.set(key, shown.get(key) || seen(cut(r, box)));
    }
    const sizes = [...p.querySelectorAll('.bv-graph svg text')].map(
        t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
    const [step, n] = stepOf(p);
    return {step, n, batch: shown.size, box: box.height,
            hidden: [...shown].filter(([, v]) => !v).map(([k]) => k),
            smallest: sizes.length ? Math.min(...sizes) : null};
  };
  const ends = panes.map(p => stepOf(p)[1]);
  const results = [];
  const failures = [];
  const settle = async (want) => {     // every pane at its wanted step, then measure
    const t0 = performance.now();
    while (!panes.every((p, i) => stepOf(p)[0] === want[i])) {
      if (performance.now() - t0 > opts.timeout) {
        failures.push(`timed out waiting for steps ${want}, shown ${panes.map(p => stepOf(p)[0])}`);
        return false;
      }
      await new Promise(r => setTimeout(r, 10));
    }
    await new Promise(r => requestAnimationFrame(() => r()));   // laid out
    results.push(panes.map(measure));
    return true;
  };
  // linked panes follow the one clicked, each up to its own last step
  const linkOn = () => {
    const b = root.querySelector('button.bv-link, input.bv-link');
    return !!b && (b.matches('input') ? b.checked : b.classList.contains('mod-active'));
  };
  const click = async (pane, name, to) => {
    pane.querySelector(name).click();
    const want = panes.map((p, i) => (p === pane || linkOn()) ? Math.min(to, ends[i]) : stepOf(p)[0]);
    return settle(want);
  };
  await settle(panes.map(p => stepOf(p)[0]));
  const lead = panes[0];
  for (let k = stepOf(lead)[0] - 1; k >= 0; k--) if (!await click(lead, '.bv-step-back', k)) return {results, failures};
  for (let k = 1; k <= ends[0]; k++) if (!await click(lead, '.bv-step-forward', k)) return {results, failures};
  for (const [i, p] of panes.entries()) {           // a pane with more steps than the first
    for (let k = stepOf(p)[0] + 1; k <= ends[i]; k++) if (!await click(p, '.bv-step-forward', k)) return {results, failures};
  }
  for (let k = stepOf(lead)[0] - 1; k >= opts.target; k--) if (!await click(lead, '.bv-step-back', k)) return {results, failures};
  return {results, failures};
}"""


def step_through(root, target: int = 0, timeout_ms: int = 20_000) -> dict:
    """Run :data:`STEP_THROUGH` on ``root`` (a ``.bv-stepper``, a ``.bv-compare``, or the
    ``body`` of a saved page); ``{"results": [[per pane], ...], "failures": [...]}``."""
    return root.evaluate(STEP_THROUGH, {"target": target, "timeout": timeout_ms})


def problems(measured: dict, what: str, min_text: float, max_box: float) -> list:
    """What went wrong in a :func:`step_through`: timeouts, batch boxes out of view, text
    under ``min_text`` px, a picture box taller than ``max_box`` px."""
    out = [f"{what}: {f}" for f in measured["failures"]]
    for panes in measured["results"]:
        for p, m in enumerate(panes):
            where = f"{what}, pane {p}, step {m['step']}/{m['n']}"
            if m["step"] < m["n"] and m["batch"] == 0:
                out.append(f"{where}: no box drawn as the batch")
            if m["hidden"]:
                out.append(f"{where}: batch boxes out of view: {m['hidden']}")
            if m["smallest"] is not None and m["smallest"] < min_text - 0.01:
                out.append(f"{where}: text of {m['smallest']:.2f} px")
            if m["box"] > max_box:
                out.append(f"{where}: the picture's box is {m['box']:.0f} px tall")
    return out
