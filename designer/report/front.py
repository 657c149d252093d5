"""The optimizer's report: the target, the Pareto front as a table and a chart of the designs run
(``dpu-designer optimize ... --report OUT.pdf``; every one up to 20,000, an even sample beyond:
:class:`designer.services.optimize.Chart`), laid out like the design report (``pdf.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from designer.report.charts import Series, line_plot
from designer.report.html import STYLE, heading, image, para, table
from designer.report.pdf import DPI, PdfDocument, page_geometry, write_pdf

from designer.services.optimize import ADAPTER_WORDS, layout_words, target_words


def front_chart(points: list[tuple[float, float, bool]], front: list[dict[str, Any]], title: str):
    """Training time (days) against CapEx (M USD): designs that miss the target, meet it, the front;
    ``points`` and ``title`` are those of a :class:`designer.services.optimize.Chart` (every design
    run, or an even sample of them, and the title says which)."""
    on = {(r["training_time_days"], r["capex_USD"] / 1e6) for r in front}
    miss = [(x, y) for x, y, ok in points if not ok]
    meet = [(x, y) for x, y, ok in points if ok and (x, y) not in on]
    series = [Series("misses the target", [p[0] for p in miss], [p[1] for p in miss], "#aaaaaa", points=9),
              Series("meets it", [p[0] for p in meet], [p[1] for p in meet], "#3c6ec8", points=10),
              Series("Pareto front", [r["training_time_days"] for r in front],
                     [r["capex_USD"] / 1e6 for r in front], "#d23228", points=14)]
    return line_plot([s for s in series if s.x], title=title,
                     x_label="training time (days, steady state, no failures)", y_label="CapEx (million USD)")


def build(outcome: Any, chart: Any, path: str | Path) -> int:
    """Write the report (``chart``: the search's :class:`designer.services.optimize.Chart`); returns
    its page count."""
    t = outcome.target
    body = [STYLE, heading("The best design for a target", new_page=False),
            para(f"Target: {target_words(t)}. {outcome.evaluated} designs were run, {outcome.feasible} meet the "
                 f"target, {len(outcome.front)} are on the Pareto front of CapEx, training time and energy "
                 f"(no other design that meets the target is better on all three)."),
            para("Searched: server models " + ", ".join(t.servers) + "; adapters "
                 + ", ".join(ADAPTER_WORDS.get(a, a) for a in t.adapters) + "; switches " + ", ".join(t.switches)
                 + "; oversubscription " + ", ".join(f"{o:g}:1" for o in t.oversubscription)
                 + ". Each design is the rail-optimized template with the planner's best layout for its "
                   "server model:")]
    body.append(table(["Server model", "Layout (planner)"],
                      [[s, layout_words(lay)]
                       for s, lay in outcome.layouts.items()], [30, 70]))
    page = page_geometry()
    width = round(page.width)
    img = front_chart(chart.points(), outcome.front, chart.title()).image(width)
    body.append(image("front", img.width(), img.height(), DPI))
    rows = [[str(i + 1), r["server"], ADAPTER_WORDS.get(r["adapters"], r["adapters"]), r["switch"],
             f"{r['oversubscription']:g}:1", f"{r['capex_USD'] / 1e6:,.2f} M", f"{r['tco_USD'] / 1e6:,.2f} M",
             f"{r['training_time_days']:.2f}", f"{r['energy_MWh']:,.1f}", f"{r['tokens_per_USD']:,.0f}",
             f"{100 * r['mfu']:.1f}%"] for i, r in enumerate(outcome.front)]
    body.append(heading("The front", new_page=False))
    body.append(para("NIC: ConnectX NICs, the host runs the network, storage and security stacks; SmartNIC: the "
                     "same ConnectX with inline crypto and ASAP2 switching; DPU: BlueField DPUs run the stacks.",
                     small=True))
    if rows:
        body.append(table(["#", "Server", "Adapters", "Switch", "Over-sub.", "CapEx (USD)", "TCO (USD)", "Days",
                           "Energy (MWh)", "Tokens per USD", "MFU"], rows,
                          [4, 12, 10, 9, 9, 10, 10, 7, 10, 10, 9], "lllllrrrrrr", small=True))
    else:
        body.append(para("No design meets the target: raise the deadline or the budget, or add server models."))
    body.append(para("CapEx is the priced bill of materials (models/costs/prices.toml: each price "
                     "with its basis, date and source, many of them assumptions: `dpu-designer cost FILE` lists "
                     "them for one design); TCO adds energy at load x PUE, colocation space and support over "
                     "the lifetime; training time and energy are the engine's steady state, without failures.",
                     small=True))
    doc = PdfDocument(f"Optimize: {t.workload} on {t.gpus:,} GPUs", "".join(body), {"front": img})
    return write_pdf(doc, path)
