"""The text beside the picture: the agenda table, the batch's details, the running counts.

Everything here is a pure function of a trace and a step, returning plain data or an HTML
fragment. The Jupyter widgets and the static page (``save_html``) show the very same
fragments, so what a student sees offline is what the widget showed.
"""
from __future__ import annotations

from html import escape
from itertools import accumulate

from ..signature import shape_text
from ..sourcelines import where_text
from ..words import counted, step_label

#: argument nodes listed by name in the batch details before "and N more"
LIST_NODES = 8


def _nodes_text(ids) -> str:
    ids = list(ids)
    shown = ", ".join(f"#{i}" for i in ids[:LIST_NODES])
    return shown + (f" and {len(ids) - LIST_NODES} more" if len(ids) > LIST_NODES else "")


def _key_text(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _range_text(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}\u2013{hi}"


class Panels:
    """HTML fragments and their data for every step of one trace.

    ``colours`` (``{signature: colour}``) gives the agenda table the same signature colours
    as the picture's outlines."""

    def __init__(self, trace, colours: dict | None = None):
        self.trace = trace
        self.n_steps = len(trace.steps)
        self.colours = colours or {}
        #: kernel launches after the first k batches (one per batch plus one per copy)
        self.launches = [0] + list(accumulate(s.kernels for s in trace.steps))
        self.total_nodes = trace.scheduled_nodes

    # --- data ---------------------------------------------------------------------------
    def check(self, step: int) -> int:
        return self.trace.timeline().check_step(step)

    def counts(self, step: int) -> dict:
        """Running totals at ``step``: what has run *before* this step's batch (at step
        ``k``, ``k`` batches: the numbering of :func:`~batchviz.words.step_label`)."""
        step = self.check(step)
        done = self.trace.steps[step].done if step < self.n_steps else self.total_nodes
        return {"batches": step, "batches_total": self.n_steps,
                "launches": self.launches[step], "launches_total": self.launches[-1],
                "nodes_done": done, "nodes_total": self.total_nodes}

    def step_text(self, step: int) -> str:
        """``"step 12/29"``."""
        return step_label(self.check(step), self.n_steps)

    def batch_text(self, step: int) -> str:
        """``"3 × tanh"`` (the signature's short name); ``"done"`` at the end."""
        step = self.check(step)
        if step == self.n_steps:
            return "done"
        s = self.trace.steps[step]
        return f"{len(s.batch)} \u00d7 {self.trace.display_name(s.signature)}"

    def sources(self, step: int) -> list:
        """The user's lines (``file:line``) that built this step's batch, most nodes first;
        empty when the graph did not record them (``record_source``)."""
        step = self.check(step)
        if step == self.n_steps:
            return []
        count: dict = {}
        for i in self.trace.steps[step].batch:
            source = self.trace.nodes[i].source
            if source:
                count[source] = count.get(source, 0) + 1
        return sorted(count, key=lambda where: (-count[where], where))

    def agenda_rows(self, step: int) -> list:
        """One dict per signature on the agenda before ``step`` runs, in the strategy's order:
        ``signature``, ``name`` (its short name), ``full_name``, ``size`` (nodes on the agenda), ``key`` (the values the
        strategy ranks by, ``trace.key_names``), ``chosen`` (bool), ``in_batch`` and ``why``
        (the strategy's own words: why it runs, or why it waits)."""
        step = self.check(step)
        if step == self.n_steps:
            return []
        s = self.trace.steps[step]
        rows = []
        for g in s.agenda:
            is_chosen = g.signature == s.signature
            rows.append({"signature": g.signature, "name": self.trace.display_name(g.signature),
                         "full_name": g.name, "size": g.size,
                         "key": g.key, "chosen": is_chosen,
                         "in_batch": len(s.batch) if is_chosen else 0, "why": g.note})
        return rows

    # --- HTML ---------------------------------------------------------------------------
    def header_html(self, step: int) -> str:
        step = self.check(step)
        name = escape(self.trace.strategy)
        if step == self.n_steps:
            what = "done: every node is computed"
        else:
            full = self.trace.steps[step].signature_name
            what = f'runs <span title="{escape(full)}">{escape(self.batch_text(step))}</span>'
        label = (f'<span class="bv-provenance" title="{escape(self.trace.provenance)}">'
                 f"({escape(self.trace.label)})</span>")
        return (f'<div class="bv-header"><b>{name}</b> {label} \u00b7 <span class="bv-where">'
                f"{self.step_text(step)} \u00b7 {what}</span></div>")

    def counts_html(self, step: int) -> str:
        c = self.counts(step)
        return ('<div class="bv-count-line">'
                f'<span class="bv-batches">batches run: <b>{c["batches"]}</b> of {c["batches_total"]}</span>'
                f' \u00b7 <span class="bv-launches">kernel launches: <b>{c["launches"]}</b>'
                f' of {c["launches_total"]}</span>'
                f' \u00b7 <span class="bv-nodes">nodes computed: {c["nodes_done"]} of {c["nodes_total"]}</span>'
                "</div>")

    def agenda_html(self, step: int) -> str:
        step = self.check(step)
        rows = self.agenda_rows(step)
        if not rows:
            return ('<table class="bv-agenda"><caption>The agenda is empty: every node is '
                    'computed.</caption><tbody></tbody></table>')
        s = self.trace.steps[step]
        body = []
        for r in rows:
            colour = self.colours.get(r["signature"], "#999999")
            chosen = (f"\u2713 {r['in_batch']}" + (f" of {r['size']}" if r["in_batch"] != r["size"] else "")
                      if r["chosen"] else "")
            keys = "".join(f'<td class="bv-num">{escape(_key_text(v))}</td>' for v in r["key"])
            body.append(
                f'<tr class="{"bv-chosen" if r["chosen"] else "bv-waits"}" data-signature="{r["signature"]}">'
                f'<td class="bv-sig" title="{escape(r["full_name"])}"><span class="bv-swatch" '
                f'style="border-color:{colour}"></span>{escape(r["name"])}</td><td class="bv-num">{r["size"]}</td>{keys}'
                f'<td class="bv-chosen-cell">{chosen}</td><td class="bv-why">{escape(r["why"])}</td></tr>')
        caption = (f"agenda at {self.step_text(step)}: {counted(s.on_agenda, 'node')} in "
                   f"{counted(len(rows), 'signature')}, {s.waiting} still waiting")
        key_heads = "".join(f'<th title="what {escape(self.trace.strategy)} ranks by (lowest '
                            f'runs first)">{escape(name)}</th>' for name in self.trace.key_names)
        return ('<table class="bv-agenda">'
                f"<caption>{caption}</caption>"
                '<thead><tr><th>signature</th><th title="nodes of this signature on the agenda">'
                f'nodes</th>{key_heads}<th>chosen</th><th>why</th></tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table>")

    def details_html(self, step: int) -> str:
        step = self.check(step)
        t = self.trace
        if step == self.n_steps:
            return (f'<div class="bv-details"><p>All {self.n_steps} batches have run: '
                    f"{self.launches[-1]} kernel launches, {t.copies} copies "
                    f"({t.bytes_copied} bytes), {t.copies_avoided} arguments read as views.</p></div>")
        s = t.steps[step]
        first = t.nodes[s.batch[0]]
        depths = [t.nodes[i].depth for i in s.batch]
        out_shapes = sorted({shape_text(t.nodes[i].shape) for i in s.batch})
        lines = [
            f"<p><b>batch {step}</b>: {escape(self.batch_text(step))} "
            f"(op <code>{escape(first.op)}</code>) run as one kernel</p>",
            f"<p>signature <code>{escape(s.signature_name)}</code></p>",
            f"<p>nodes {_nodes_text(s.batch)} \u00b7 depth {_range_text(min(depths), max(depths))}"
            f" \u00b7 output {len(s.batch)} \u00d7 {escape(', '.join(out_shapes))}</p>",
            self._sources_html(step),
        ]
        rows = []
        for a in s.arguments:
            covered = range(a.position, a.position + a.positions)  # one read may cover them all
            # ...of nodes with different numbers of arguments (esum of 2, 3, 4 terms)
            nodes = [t.nodes[i].args[p] for i in s.batch for p in covered
                     if p < len(t.nodes[i].args)]
            shapes = sorted({shape_text(t.nodes[n].shape) for n in nodes})
            who = (escape(t.nodes[nodes[0]].parameter or f"#{nodes[0]}") if a.kind == "shared"
                   else _nodes_text(nodes))
            label = a.position if a.positions == 1 else f"{covered[0]}\u2013{covered[-1]}"
            rows.append(f'<tr class="bv-{a.kind}"><td>{label}</td><td>{who}</td>'
                        f'<td class="bv-kind">{a.kind}</td><td>{escape(", ".join(shapes))}</td>'
                        f'<td class="bv-num">{a.bytes_copied}</td><td>{escape(a.detail)}</td></tr>')
        if rows:
            lines.append('<table class="bv-args"><thead><tr><th>arg</th><th>nodes</th>'
                         "<th>read as</th><th>shape</th><th>bytes copied</th><th>note</th></tr></thead>"
                         f"<tbody>{''.join(rows)}</tbody></table>")
        copies = s.copies
        lines.append("<p>kernel launches: 1 compute"
                     + (f" + {copies} cop{'y' if copies == 1 else 'ies'} = {s.kernels}" if copies else "")
                     + f" \u00b7 why this signature: {escape(s.reason)}</p>")
        return '<div class="bv-details">' + "".join(lines) + "</div>"

    def _sources_html(self, step: int) -> str:
        """Where the user's code built this batch, or how to have it recorded."""
        sources = self.sources(step)
        if not sources:
            return ('<p class="bv-source bv-no-source">built at: lines not recorded (build the '
                    "graph as <code>bv.Graph(record_source=True)</code> or inside "
                    "<code>with bv.recording_sources():</code> to see them)</p>")
        more = f" and {counted(len(sources) - 3, 'more line')}" if len(sources) > 3 else ""
        shown = ", ".join(f'<code title="{escape(where)}">{escape(where_text(where))}</code>'
                          for where in sources[:3])
        return f'<p class="bv-source">built at {shown}{more}</p>'
