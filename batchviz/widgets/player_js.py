"""The static page's controls in plain JavaScript (no libraries, no network).

It reads the page's JSON (``static_html.py``): a pool of strings and, per pane, per step,
the indexes of the picture's pieces and of the header, counts, agenda and details HTML.
Each pane has play/pause, back, forward, a slider, a speed menu and a "whole graph" box
(the whole picture instead of the window around the batch); with a "link" checkbox
(``bv.compare``) moving one pane moves the others to the same step (or their last one).
"""

PLAYER_JS = r"""
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("bv-data").textContent);
  const pool = data.pool;
  const link = document.querySelector("input.bv-link");
  const summary = document.querySelector("table.bv-summary");
  const panes = data.panes.map(function (d, p) {
    const root = document.querySelector('.bv-pane[data-pane="' + p + '"]');
    const q = function (cls) { return root.querySelector("." + cls); };
    return {d: d, root: root, k: 0, timer: null,
            graph: q("bv-graph"), header: q("bv-header-view"), counts: q("bv-counts"),
            agenda: q("bv-agenda-table"), details: q("bv-batch-details"),
            slider: q("bv-slider"), label: q("bv-step-label"), play: q("bv-play"),
            back: q("bv-step-back"), forward: q("bv-step-forward"), speed: q("bv-speed"),
            whole: q("bv-whole")};
  });

  function linked() { return !!(link && link.checked); }

  function escapeText(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function drawSummary() {
    if (!summary) return;
    const rows = panes.map(function (pane) {
      const s = pane.d.summary[pane.k];
      return "<tr><td><b>" + escapeText(pane.d.strategy) + "</b></td><td>" + pane.k + "/" +
        pane.d.n + "</td><td>" + escapeText(s[0]) + "</td><td class=\"bv-num\">" + s[1] +
        "</td><td class=\"bv-num\">" + s[2] + "</td></tr>";
    });
    summary.innerHTML = data.summary_head + "<tbody>" + rows.join("") + "</tbody>";
  }

  function show(pane, k, following) {
    k = Math.max(0, Math.min(pane.d.n, k));
    const step = pane.d.steps[k];
    pane.k = k;
    const pieces = pane.whole.checked ? step[5] : step[0];
    pane.graph.innerHTML = pieces.map(function (i) { return pool[i]; }).join("");
    pane.header.innerHTML = pool[step[1]];
    pane.counts.innerHTML = pool[step[2]];
    pane.agenda.innerHTML = pool[step[3]];
    pane.details.innerHTML = pool[step[4]];
    pane.slider.value = String(k);
    pane.label.textContent = k + "/" + pane.d.n;  // the step as every label names it
    pane.back.disabled = k === 0;
    pane.forward.disabled = k === pane.d.n;
    if (!following && linked()) {
      panes.forEach(function (other) { if (other !== pane) show(other, k, true); });
    }
    drawSummary();
  }

  function stop(pane) {
    if (pane.timer !== null) clearInterval(pane.timer);
    pane.timer = null;
    pane.play.innerHTML = "&#9654; play";
    pane.root.removeAttribute("data-playing");
  }

  function start(pane) {
    if (pane.k >= pane.d.n) show(pane, 0, false);
    pane.timer = setInterval(function () {
      if (pane.k >= pane.d.n) { stop(pane); return; }
      show(pane, pane.k + 1, false);
    }, Number(pane.speed.value));
    pane.play.innerHTML = "&#10074;&#10074; pause";
    pane.root.setAttribute("data-playing", "true");
  }

  panes.forEach(function (pane) {
    pane.slider.max = String(pane.d.n);
    const speeds = data.speeds.slice();
    if (!speeds.some(function (s) { return s[1] === data.interval; })) {
      speeds.push([(1000 / data.interval).toPrecision(3) + " steps/s", data.interval]);
    }
    speeds.forEach(function (s) {
      const o = document.createElement("option");
      o.textContent = s[0];
      o.value = String(s[1]);
      o.selected = s[1] === data.interval;
      pane.speed.appendChild(o);
    });
    pane.back.addEventListener("click", function () { show(pane, pane.k - 1, false); });
    pane.forward.addEventListener("click", function () { show(pane, pane.k + 1, false); });
    pane.slider.addEventListener("input", function () { show(pane, Number(pane.slider.value), false); });
    pane.play.addEventListener("click", function () {
      if (pane.timer === null) start(pane); else stop(pane);
    });
    pane.whole.addEventListener("change", function () {
      pane.graph.classList.toggle("bv-whole-graph", pane.whole.checked);
      show(pane, pane.k, true);
    });
    pane.speed.addEventListener("change", function () {
      if (pane.timer !== null) { stop(pane); start(pane); }
    });
    show(pane, 0, true);
  });
  if (link) {
    link.addEventListener("change", function () { if (linked()) show(panes[0], panes[0].k, false); });
  }
  drawSummary();
})();
"""
