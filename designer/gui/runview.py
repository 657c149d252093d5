"""The run view: run the design host-managed and DPU-offloaded, watch both timelines live.

The engine and the timeline run in a :class:`~designer.gui.worker.GeneratorWorker`; the worker's
items arrive in :meth:`RunView._on_item` (a method of this GUI-thread object, so it runs in the GUI
thread). The plots redraw on their own timer. Cancel stops the generator between two batches and
waits for the thread.

``result_ready(host_result, dpu_result)`` is emitted as soon as the steady-state engine results are
known (before the timelines have run). The view then emits ``overlay_changed(mean, marked, peak)``
for the canvas (``DesignScene.show_utilization``): the scenario chosen in "Canvas colours" (None
when off): each link's utilization averaged over the iteration (``Result.link_mean_utilization``),
the bottleneck links and components the engine names, and each link's busiest-phase utilization
(``Result.links``). :meth:`RunView.show_figures`
fills ``figures_panel`` ("Run figures") for the canvas selection. :func:`make_run_view` is what the main window
docks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html import escape
from typing import Any, Iterable, Iterator

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFrame, QHBoxLayout, QHeaderView, QLabel,
                               QProgressBar, QPushButton, QScrollArea, QSizePolicy, QSplitter, QTableWidget,
                               QTableWidgetItem, QTabWidget, QTextBrowser, QVBoxLayout, QWidget)

from designer.engine.compare import LABEL as RUN_LABEL
from designer.engine.cache import EngineCache
from designer.engine.compare import MIN_DIFFERENCE, Comparison, compare, loading
from designer.engine.resources import INFRA_TASKS
from designer.engine.result import BREAKDOWN_LABEL
from designer.engine.timeline import TimelineInputs, TimelineRun, TimelineSummary, inputs_of
from designer.gui.messages import gui_words
from designer.report.names import (ENERGY, HIDDEN_BY_OVERLAP, TFLOPS, MEMORY_PER_GPU, NO_TYPICAL, STEADY_DAYS, TIMELINE_DAYS,
                                   TIMELINE_ITERATION, activations_text, assumed_share_line, engine_label,
                                   engine_load_notes, fits_text, has_typical, memory_rows,
                                   optimizer_offload_text, planner_words, power_rows,
                                   tco_part_rows)
from designer.gui.plots import SCENARIO_COLOR, SCENARIO_LABEL, LivePlots
from designer.gui.worker import GeneratorWorker, RetiredWorkers, WorkerOwner
from designer.services.style import PART_LABEL, delta, figure
from designer.topology.kinds import KIND_LABEL

SCENARIOS = ("host", "dpu")
_SUMMARY_ROWS = ((TIMELINE_DAYS, lambda s: f"{s.training_time_days:,.1f}" if s.finished
                  else f"> {s.training_time_days:,.0f} (does not finish)"),
                 ("Goodput", lambda s: f"{100 * s.goodput:.1f}%"),
                 (TIMELINE_ITERATION, lambda s: figure("seconds", s.mean_iteration_s)),
                 ("Failures", lambda s: f"{s.failures:,}"),
                 # the report's name; 'Checkpoints' alone is the iteration's part in seconds
                 ("Checkpoints written", lambda s: f"{s.checkpoints:,}"),
                 ("Lost work (h)", lambda s: f"{s.time_s['lost'] / 3600:.1f}"))
_SUMMARY_TIPS = {
    TIMELINE_DAYS: "the whole run played out with jitter, data stalls, checkpoints and failures; "
                   f"Engine results' '{STEADY_DAYS}' is the token budget at the steady iteration rate",
    TIMELINE_ITERATION: "the iterations run (their drawn stragglers) and their data stalls, divided by "
                        "the iterations; the checkpoint writes are left out (the timeline counts them "
                        "apart). Engine results' 'Iteration time (s)' is one steady-state step with the "
                        "writes spread over the iterations ('Checkpoints' part), so it can be the higher"}


def _header(name: str) -> str:
    """A long column name on lines of at most 30 characters (two lines for the longest), so the
    table stays narrow and no heading is cut at the default window width."""
    import textwrap

    return "\n".join(textwrap.wrap(name, 30)) if len(name) > 30 else name


#: short names of the iteration parts for the engine-results table (the full
#: ``BREAKDOWN_LABEL`` is the row's tooltip), so the figures keep room in a narrow dock: the names
#: the CLI's tables print too (``designer.services.style.PART_LABEL``)
SHORT_PART = PART_LABEL
#: most cables listed in "Run figures" (the busiest first)
FIGURE_ROWS = 40
_ARC = re.compile(r"([\w.:-]+) → ([\w.:-]+)")


def bottleneck_marks(result: Any, topology: Any) -> set[str]:
    """What the canvas outlines as bottlenecks: only what the engine names in its bottleneck
    sentences (``"link leaf-1 → spine-2 saturates ..."``: the cables joining leaf-1 and spine-2;
    ``"oversubscription 2:1 at leaf-1"``: leaf-1). A busy cable the engine does not name limits
    nothing (max-min fair sharing fills many links to 100 % while one decides the rate)."""
    marked: set[str] = set()
    pairs: set[frozenset] = set()
    for sentence in result.bottlenecks:
        for a, b in _ARC.findall(sentence):
            if a in topology.components and b in topology.components:
                pairs.add(frozenset((a, b)))
        words = (w.strip(",.;:()'\"") for w in sentence.split())
        marked.update(w for w in words if w in topology.components)
    for pair in pairs:
        a = next(iter(pair))
        marked.update(l.id for l in topology.links_of(a) if frozenset((l.a, l.b)) == pair)
    return marked


def natural_key(text: str) -> tuple:
    """Sort key that orders numbers inside names by value ("dpu-2" before "dpu-10")."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def cables_of(topology: Any, ident: str) -> list[str]:
    """The cable itself, or the cables of a component and of everything inside it."""
    if ident in topology.links:
        return [ident]
    found, todo = [], [ident]
    while todo:
        cid = todo.pop()
        found += [l.id for l in topology.links_of(cid) if l.id not in found]
        todo += [c.id for c in topology.children(cid)]
    return found


def _interleave(runs: dict[str, TimelineRun]) -> Iterator[tuple]:
    """Round-robin over the scenarios' batches so both curves grow together."""
    streams = {s: run.batches() for s, run in runs.items()}
    while streams:
        for scenario in list(streams):
            batch = next(streams[scenario], None)
            if batch is None:
                del streams[scenario]
                yield ("summary", scenario, runs[scenario].summary)
            else:
                yield ("samples", scenario, batch, runs[scenario].progress)


def timeline_stream(inputs: dict[str, TimelineInputs], *, seed: int = 0,
                    target_samples: int = 20000, batch_rows: int = 512) -> Iterator[tuple]:
    """Worker generator for given timeline inputs (one per scenario)."""
    runs = {s: TimelineRun(i, seed=seed, target_samples=target_samples, batch_rows=batch_rows)
            for s, i in inputs.items()}
    for scenario, inp in inputs.items():
        yield ("start", scenario, inp.token_budget, dict(inp.breakdown_s))
    yield from _interleave(runs)


def design_stream(design: Any, catalog: Any, *, seed: int = 0, cache: EngineCache | None = None,
                  **kw: Any) -> Iterator[tuple]:
    """Worker generator: the engine for both scenarios (the same runs and comparison as
    ``dpu-designer compare``; ``cache``: the document's :class:`EngineCache`, so a second Run of
    an unchanged fabric reuses its routes), the costs of every mode (``services.cost.costs``, as
    ``compare`` prints them; None with a message when the design cannot be priced), then the
    timelines."""
    cmp = compare(design, catalog, seed=seed, cache=cache)
    yield ("results", cmp.runs["host"], cmp.runs["dpu"], cmp, costs_of(design, catalog, cmp))
    inputs = {s: inputs_of(cmp.runs[s], design, s) for s in SCENARIOS}
    yield from timeline_stream(inputs, seed=seed, **kw)


# --- the engine's figures, host vs DPU
@dataclass(frozen=True)
class EngineRow:
    """One row of the "Engine results" table: a group heading (``values`` empty) or a figure of
    each run with the engine's DPU − host difference (``delta``, ``change``; "" where the compare
    table has none)."""

    label: str
    values: tuple[str, ...] = ()
    delta: str = ""
    change: str = ""
    tip: str = ""
    indent: bool = False
    #: a sentence across the table (no values), in plain type, not a group heading
    note: bool = False

    @property
    def is_group(self) -> bool:
        return not self.values


def _delta_cells(d: dict | None, fmt: str, scale: float = 1.0) -> tuple[str, str]:
    """(DPU − host, change in % of host) of a ``Comparison.deltas`` entry, as ``compare`` prints."""
    if d is None or d["delta"] is None or not math.isfinite(d["delta"]):
        return "", ""
    pct = d.get("percent")
    change = "" if pct is None or not math.isfinite(pct) else f"{pct:+.1f}%"
    return fmt.format(scale * d["delta"]), change


def _fact_cells(cmp: Comparison, fact: str, get: Any, scale: float = 1.0, unit: str = "",
                suffix: str = "") -> tuple[list[str], tuple[str, str]]:
    """A figure of each run at the fact's one precision (``services.style.figure``, as
    ``dpu-designer compare`` prints it) and (DPU − host, change): the difference of the two shown
    figures, "equal" when they read the same (no change then)."""
    runs = cmp.runs
    cells = [figure(fact, scale * get(r)) + ("" if figure(fact, scale * get(r)) == "–" else suffix)
             for r in runs.values()]
    if "host" not in runs or "dpu" not in runs:
        return cells, ("", "")
    host, dpu = scale * get(runs["host"]), scale * get(runs["dpu"])
    d = delta(fact, host, dpu, unit)
    change = f"{100 * (dpu - host) / host:+.1f}%" if d not in ("", "equal") and host else ""
    return cells, (d, change)


def _or_dash(value: Any, fmt: str) -> str:
    missing = value is None or (isinstance(value, float) and not math.isfinite(value))
    return "–" if missing else fmt.format(value)


def engine_rows(cmp: Comparison, costs: Any = None) -> list[EngineRow]:
    """The rows of ``dpu-designer compare``'s table (:func:`designer.commands.compare.format_table`)
    for the GUI, grouped, plus the jobs sharing the fabric when there are several. Every figure is
    a ``Result``'s or ``cmp.deltas``'; nothing is recomputed here. With ``costs``
    (``services.cost.costs`` of ``cmp``), a "Costs" group ends the table (:func:`cost_rows`)."""
    runs = list(cmp.runs.values())
    D = cmp.deltas
    rows: list[EngineRow] = []

    def add(label: str, values: Iterable[str], delta: tuple[str, str] = ("", ""), tip: str = "",
            indent: bool = False) -> None:
        rows.append(EngineRow(label, tuple(values), *delta, tip=tip, indent=indent))

    rows.append(EngineRow("Iteration"))
    add("Iteration time (s)", *_fact_cells(cmp, "seconds", lambda r: r.iteration_time_s),
        "one training step; the parts below add up to it")
    for key, d in D["breakdown_s"].items():
        if any(r.breakdown_s.get(key, 0.0) for r in runs):
            parts = next((r.optimizer_offload for r in runs if key == "optimizer_offload" and r.optimizer_offload), None)
            add(SHORT_PART.get(key, key), *_fact_cells(cmp, "seconds", lambda r: r.breakdown_s.get(key, 0.0)),
                f"{BREAKDOWN_LABEL.get(key, key)} (s per iteration)"
                + (f": {optimizer_offload_text(parts)}" if parts else ""),
                indent=True)
    dims = [d for d in ("tp", "cp", "ep", "pp", "dp") if any(r.hidden_s.get(d, 0.0) > 0 for r in runs)]
    for d in dims:
        add(f"{d} {HIDDEN_BY_OVERLAP}", (figure("seconds", r.hidden_s.get(d, 0.0)) for r in runs),
            tip=f"{d.upper()} communication per iteration that overlap hides behind compute (s; "
                "Result.hidden_s): not in the iteration time, beside the exposed parts above",
            indent=True)
    jobs = [r.tenants or {} for r in runs]
    if any(t.get("jobs", 1) > 1 for t in jobs):  # next to the iteration its sharing slows down
        rows += _job_rows(jobs)
    rows.append(EngineRow("Throughput, time and energy"))
    add(TFLOPS, *_fact_cells(cmp, "tflops", lambda r: r.tflops_per_gpu),
        "achieved model TFLOP/s per GPU")
    add("MFU", *_fact_cells(cmp, "percent", lambda r: r.mfu, 100, " pts", "%"),
        "model FLOPs utilization")
    add(STEADY_DAYS, *_fact_cells(cmp, "days", lambda r: r.training_time_days),
        "steady state: the token budget at this iteration rate; the Timelines tab's "
        f"'{TIMELINE_DAYS}' adds checkpoints, failures and the work they lose")
    add(ENERGY, *_fact_cells(cmp, "MWh", lambda r: r.energy_kwh, 1e-3),
        "the whole training run at training-load power")
    rows += _memory_rows(runs)
    rows.append(EngineRow("Host CPU (share of its cycles)"))
    add("Infrastructure stacks", *_fact_cells(cmp, "percent", lambda r: r.host_cpu.get("infra_fraction", 0.0),
                                              100, " pts", "%"),
        f"{', '.join(INFRA_TASKS)}: what a DPU can take over; {cmp.vendor_claim()['text']}")
    tasks = dict.fromkeys(t for r in runs for t in r.host_cpu.get("by_task", {}))
    for task in (t for t in tasks if t in INFRA_TASKS):
        if any(r.host_cpu["by_task"].get(task, 0.0) for r in runs):
            add(task, (f"{100 * r.host_cpu['by_task'].get(task, 0.0):.1f}%" for r in runs), indent=True)
    if "data_loading" in tasks:
        add("Data loading", (f"{100 * r.host_cpu['by_task'].get('data_loading', 0.0):.1f}%"
                             for r in runs),
            tip="the data loaders decoding and augmenting samples; it stays on the host in both runs")
    loads = [loading(r) for r in runs]
    if any(loads):
        add("Loader cores need / free", ("–" if g is None else
                                         f"{g['load_cores_needed']:.1f} / {g['load_cores_free']:.1f}"
                                         for g in loads),
            tip="cores per server the data loaders need / cores left for them after the training "
                "processes and the infrastructure stacks (the tightest server group); need above "
                "free stalls the step")
    engines = sorted({e for r in runs for e in r.dpu})
    if engines:
        rows.append(EngineRow("Adapter engines (demand / capacity)"))
        for e in engines:
            add(engine_label(e), (f"{100 * r.dpu[e]:.0f}%" if e in r.dpu else "no engine" for r in runs),
                tip=f"demand / capacity of the adapters' '{e}' engine, the busiest adapter's; above "
                    "100% the engine is over-subscribed and its work takes that many times as "
                    "long; 'no engine': this mode's adapters have none", indent=True)
        rows += [EngineRow(n[:1].upper() + n[1:] + ".", tip=n, note=True)
                 for n in engine_load_notes(cmp.runs, RUN_LABEL)]
    modes = [cmp.modes.get(name) for name in cmp.runs]
    rows.append(EngineRow("Power"))
    for label, values, tip in power_rows(runs):
        add(label, values, tip=tip)
    if not has_typical(runs):
        rows.append(EngineRow(NO_TYPICAL[:1].upper() + NO_TYPICAL[1:] + ".", note=True))
    if all(m and math.isfinite(m["energy_cost"]) for m in modes):
        add("Energy cost of the run (USD)", (f"{m['energy_cost']:,.0f}" if m["energy_cost"] >= 100 else
                                  f"{m['energy_cost']:.3g}" for m in modes),
            tip="the run's energy at the price in models/costs/energy.toml (US dollars: U.S. EIA "
                "average industrial tariff, 2023)")
    rows.append(EngineRow("Storage"))
    if any(r.storage.get("read_demand_GBps") for r in runs):
        add("Read achieved / needed (GB/s)",
            (f"{_or_dash(r.storage.get('read_achieved_GBps'), '{:.3g}')} / "
             f"{_or_dash(r.storage.get('read_demand_GBps'), '{:.3g}')}" for r in runs))
    add("Checkpoint write (s)", (_or_dash(r.storage.get("checkpoint_write_s"), "{:.3g}") for r in runs),
        tip="'–': no storage in the design, checkpoints are not written")
    if isinstance(costs, Exception):
        rows += [EngineRow("Costs"), EngineRow(f"Not priced: {costs}", note=True)]
    elif costs is not None and list(costs.modes) == list(cmp.runs):
        rows += cost_rows(costs)
    return rows


def _memory_rows(runs: list) -> list[EngineRow]:
    """The "Memory per GPU" group: ``report.names.memory_rows`` of each run (the names and values
    ``dpu-designer run`` prints), a part shown when some run shows it; none without an estimate."""
    per_run = [{name: (value, tip, indent) for name, value, tip, indent in memory_rows(r)} for r in runs]
    if not any(per_run):
        return []
    names = list(dict.fromkeys(name for rows in per_run for name in rows))
    rows = [EngineRow(MEMORY_PER_GPU[:1].upper() + MEMORY_PER_GPU[1:])]
    for name in names:
        tip, indent = next((rows_[name][1], rows_[name][2]) for rows_ in per_run if name in rows_)
        rows.append(EngineRow(name[:1].upper() + name[1:] if not indent else name,
                              tuple(rows_.get(name, ("0.0" if indent else "–",))[0] for rows_ in per_run),
                              tip=tip, indent=indent))
    return rows


def costs_of(design: Any, catalog: Any, cmp: Comparison) -> Any:
    """``services.cost.costs`` of the comparison's modes, or the ``CostError`` that says why the
    design's own cost figures cannot be used (the Costs group then shows that sentence, the one
    ``dpu-designer cost`` prints)."""
    from designer.services.cost import CostError, costs

    try:
        return costs(design, catalog, cmp)
    except CostError as err:
        return err


def cost_rows(c: Any) -> list[EngineRow]:
    """The "Costs" group: ``services.cost.figure_rows`` and the TCO's parts, then the paybacks,
    with the names and values ``dpu-designer compare`` prints under its table."""
    from designer.services.cost import figure_rows, payback_lines

    rows = [EngineRow(f"Costs ({c.currency})")]
    figures = figure_rows(c)
    parts = [(label, values, tip, True) for label, values, tip in tco_part_rows(c)]
    for label, values, tip, *indent in [*((*f, False) for f in figures[:2]), *parts,
                                         *((*f, False) for f in figures[2:])]:
        rows.append(EngineRow(label, tuple(values), tip=tip, indent=bool(indent and indent[0])))
    share = assumed_share_line(c)
    if share:
        rows.append(EngineRow("CapEx " + share, tip="the price basis of each line of the bill "
                              "(dpu-designer cost FILE lists them)", note=True))
    if c.management is not None and c.management.switches:
        text = c.management.text()
        rows.append(EngineRow(text[0].upper() + text[1:], tip="the bill's Management lines (dpu-designer "
                              "cost FILE lists them); it carries no training traffic", note=True))
    lines = payback_lines(c, RUN_LABEL)
    if lines:
        rows.append(EngineRow("Payback of the adapters"))
        rows += [EngineRow(t, tip=t, indent=True, note=True) for t in lines]
    return rows


def _job_rows(jobs: list[dict]) -> list[EngineRow]:
    """The "Jobs" group: how the servers are split and what sharing the fabric costs the slowest
    job against itself alone (``Result.tenants``)."""
    first = next(t for t in jobs if t.get("jobs", 1) > 1)
    rows = [EngineRow(f"Jobs: {first['jobs']} share the fabric; every figure in this table is the "
                      f"slowest job's")]

    def add(label: str, fmt, tip: str = "") -> None:
        rows.append(EngineRow(label, tuple(fmt(t) if t else "–" for t in jobs), tip=tip, indent=True))

    add("Servers per job, placement", lambda t: f"{t['servers_per_job']}, {t['placement']}"
        + (f", {t['idle_servers']} idle" if t.get("idle_servers") else ""),
        "scattered: server i goes to job i mod jobs; packed: consecutive servers")
    add("Slowest job", lambda t: f"job {t['slowest_job']}")
    add("DP rate shared / alone (GB/s)",
        lambda t: f"{_or_dash(t.get('dp_rate_shared_GBps'), '{:.3g}')} / "
                  f"{_or_dash(t.get('dp_rate_alone_GBps'), '{:.3g}')}",
        "the slowest job's worst data-parallel group, with every job's traffic / with its own only")
    add("Iteration shared (s)", lambda t: f"{t['iteration_shared_s']:.4g}")
    add("Iteration alone (s)", lambda t: f"{t['iteration_alone_s']:.4g}",
        "the slowest job with the other jobs' traffic removed, same routes")
    add("Slowdown from sharing", lambda t: f"{t['slowdown_pct']:+.1f}%")
    return rows


def engine_notes_html(cmp: Comparison) -> str:
    """Why the runs differ (``cmp.reasons``), the vendor claim, how the runs were modelled, and
    each run's bottleneck sentences and warnings (once when both runs give the same)."""
    def items(texts: Iterable[str], tag: str = "ul") -> str:
        return f"<{tag}>" + "".join(f"<li>{escape(planner_words(t))}</li>" for t in texts) + f"</{tag}>"

    out = ["<h3>Why host-managed and DPU-offloaded differ</h3>"]
    out.append(items(cmp.reasons) if cmp.reasons else
               f"<p>No part of the iteration differs by more than {100 * MIN_DIFFERENCE:g}% "
               "between the two runs.</p>")
    for pair, texts in (cmp.mode_reasons or {}).items():
        if pair == "dpu_vs_host" or not texts:  # that one is cmp.reasons above
            continue
        a, b = pair.split("_vs_")
        first = RUN_LABEL[a][:1].upper() + RUN_LABEL[a][1:]  # "SmartNIC", not "Smartnic"
        out += [f"<h3>{escape(first)} vs {escape(RUN_LABEL[b])}</h3>", items(texts)]
    claim = cmp.vendor_claim()
    out.append(f"<p>{escape(claim['text'])}.</p><p><b>Verdict:</b> {escape(claim['verdict'])}.</p>")
    out += [f"<p><i>Note: {escape(planner_words(n))}.</i></p>" for n in cmp.notes]
    out += _memory_html(cmp)
    for title, field, tag in (("Bottlenecks", "bottlenecks", "ol"), ("Warnings", "warnings", "ul")):
        lists = {name: list(getattr(r, field)) for name, r in cmp.runs.items()}
        if not any(lists.values()):
            continue
        if all(v == lists["host"] for v in lists.values()):
            out += [f"<h3>{title} (both runs)</h3>", items(lists["host"], tag)]
            continue
        for name, texts in lists.items():
            out += [f"<h3>{title}, {escape(RUN_LABEL[name])}</h3>",
                    items(texts, tag) if texts else "<p>none</p>"]
    return "".join(out)


def _memory_html(cmp: Comparison) -> list[str]:
    """The memory estimate in a sentence per run, or one for all when they read the same: memory
    per GPU against the GPU's memory, whether it fits, how the activations are counted (the
    names and values of ``report.names.memory_rows``)."""
    from designer.services.style import figure

    texts = {}
    for name, r in cmp.runs.items():
        if r.memory_per_gpu_GB is None:
            continue
        acts = activations_text(r)
        texts[name] = (f"{MEMORY_PER_GPU} {figure('GB', r.memory_per_gpu_GB)} GB of "
                       f"{figure('GB', r.gpu_memory_GB)} GB GPU memory (fits: {fits_text(r)})"
                       + (f"; {acts}" if acts else ""))
    if not texts:
        return []
    if len(set(texts.values())) == 1:
        return [f"<h3>{escape(MEMORY_PER_GPU[:1].upper() + MEMORY_PER_GPU[1:])}</h3>",
                f"<p>{escape(next(iter(texts.values())))}.</p>"]
    return [f"<h3>{escape(MEMORY_PER_GPU[:1].upper() + MEMORY_PER_GPU[1:])}</h3>"] + [
        f"<p>{escape(RUN_LABEL[name])}: {escape(t)}.</p>" for name, t in texts.items()]


class EngineResults(QWidget):
    """The engine's figures of the last run, host vs DPU (:func:`engine_rows`), beside why they
    differ, the bottlenecks and the warnings (:func:`engine_notes_html`)."""

    PLACEHOLDER = ("Run the design (F5) to see the engine's figures here: host-managed vs "
                   "DPU-offloaded, why they differ, and each run's bottlenecks and warnings.")
    #: the table takes the width it needs up to this share of the area, or more while the text
    #: beside it keeps ``TEXT_CHARS`` characters (until the user moves the divider)
    TABLE_SHARE = 0.62
    TEXT_CHARS = 40

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comparison: Comparison | None = None
        self.costs: Any = None  #: ``services.cost.Costs`` of the comparison, when priced
        self.rows: list[EngineRow] = []
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        self.table.setWordWrap(True)  # a narrow dock wraps the labels instead of cutting them
        self.table.setTextElideMode(Qt.ElideNone)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.horizontalHeader().sectionResized.connect(self._label_width_changed)
        #: one rewrap after a burst of label-column resizes (owned here: it dies with the view)
        self._rewrap = QTimer(self)
        self._rewrap.setSingleShot(True)
        self._rewrap.setInterval(0)
        self._rewrap.timeout.connect(self._rewrap_rows)
        self._fitted_widths: set[int] = set()  # label widths the rows were fitted to (these rows)
        self.rewraps = 0  # rewraps done (tests watch it)
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        self.text.setMinimumWidth(20 * self.fontMetrics().averageCharWidth())
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.text)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 4)
        self.splitter.setChildrenCollapsible(False)
        self._user_split = False
        self.splitter.splitterMoved.connect(self._split_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.clear()

    def clear(self) -> None:
        self.comparison, self.costs, self.rows = None, None, []
        self.table.clear()
        self.table.clearSpans()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.text.setHtml(f"<p>{escape(self.PLACEHOLDER)}</p>")

    def show_comparison(self, cmp: Comparison, costs: Any = None) -> None:
        self.comparison, self.costs, self.rows = cmp, costs, engine_rows(cmp, costs)
        names = list(cmp.runs)
        heads = ["", *[RUN_LABEL[n] for n in names], "DPU − host", "change"]
        self.table.clear()
        self.table.clearSpans()
        self.table.setColumnCount(len(heads))
        self.table.setRowCount(len(self.rows))
        for col, text in enumerate(heads):
            head = QTableWidgetItem(text)
            run = names[col - 1] if 1 <= col <= len(names) else None
            if run in SCENARIO_COLOR:  # the plots' colours
                head.setForeground(QColor(SCENARIO_COLOR[run]))
            self.table.setHorizontalHeaderItem(col, head)
        bold = QFont(self.font())
        bold.setBold(True)
        shade = self.palette().brush(QPalette.AlternateBase)
        for i, row in enumerate(self.rows):
            label = QTableWidgetItem(("    " if row.indent else "") + row.label)
            label.setToolTip(row.tip or row.label)
            if row.is_group:
                if not row.note:
                    label.setFont(bold)
                    label.setBackground(shade)
                self.table.setItem(i, 0, label)
                self.table.setSpan(i, 0, 1, len(heads))
                continue
            self.table.setItem(i, 0, label)
            for col, text in enumerate((*row.values, row.delta, row.change), 1):
                cell = QTableWidgetItem(text)
                cell.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                if row.tip:
                    cell.setToolTip(row.tip)
                self.table.setItem(i, col, cell)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.Stretch)
        for col in range(1, len(heads)):
            header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
        self.text.setHtml(engine_notes_html(cmp))
        self._fit_split()
        self._fitted_widths = {self.table.columnWidth(0)}
        self.table.resizeRowsToContents()

    def table_width(self) -> int:
        """Width the table needs to show every label on one line and every figure."""
        t = self.table
        fm = t.fontMetrics()
        label = max((fm.horizontalAdvance(t.item(i, 0).text())
                     for i, r in enumerate(self.rows) if not r.is_group), default=0)
        return (label + 2 * fm.averageCharWidth()  # the cell's margins
                + sum(max(t.horizontalHeader().sectionSizeHint(c), t.sizeHintForColumn(c))
                      for c in range(1, t.columnCount()))
                + t.verticalScrollBar().sizeHint().width() + 2 * t.frameWidth())

    def _fit_split(self) -> None:
        """Give the table the width it needs (see ``TABLE_SHARE``), unless the user has placed the
        divider."""
        total = self.splitter.width() - self.splitter.handleWidth()
        if self._user_split or not self.rows or total <= 0:
            return
        text = self.TEXT_CHARS * self.text.fontMetrics().averageCharWidth()
        left = min(self.table_width(), max(int(self.TABLE_SHARE * total), total - text))
        self.splitter.setSizes([left, total - left])

    def _split_moved(self, *_args: Any) -> None:
        self._user_split = True
        self._fitted_widths.clear()

    def _label_width_changed(self, column: int, _old: int, _new: int) -> None:
        if column == 0:  # labels wrap onto more or fewer lines, once the widths have settled
            self._rewrap.start()

    def _rewrap_rows(self) -> None:
        """Fit the rows to their wrapped labels, once per label width until the view is resized
        or its divider moved: the rows' new heights can show or hide the scroll bar, which
        resizes the label column again; a width already fitted since (the other side of that
        toggle) is not fitted again, so that cannot loop."""
        width = self.table.columnWidth(0)
        if width in self._fitted_widths:
            return
        self._fitted_widths.add(width)
        self.rewraps += 1
        self.table.resizeRowsToContents()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self._fitted_widths.clear()
        self._fit_split()

    def row_of(self, label: str) -> int:
        """Index of the first row labelled ``label`` (-1 if none)."""
        return next((i for i, r in enumerate(self.rows) if r.label == label), -1)


class RunView(WorkerOwner, QWidget):
    """Run / Cancel, a progress bar, the canvas colouring choice; tab "Timelines": a summary table
    of both scenarios' training runs and the live plots; tab "Engine results": the engine's
    figures (:class:`EngineResults`); and the run's figures of the canvas selection."""

    result_ready = Signal(object, object)  #: (host Result, DPU Result) of the steady-state engine
    run_finished = Signal(object)  #: {scenario: TimelineSummary} when both timelines are done
    #: the status line a run ended with, once per run whichever way it ends ("Done…", "Error: …",
    #: "Cancelled"): what a caller waits for instead of polling the worker's thread
    run_ended = Signal(str)
    #: (link id -> utilization 0..1, or None to clear; ids of bottleneck links and components)
    overlay_changed = Signal(object, object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.design: Any = None
        self.catalog: Any = None
        self.cache = EngineCache()
        self.worker: GeneratorWorker | None = None
        self._retired = RetiredWorkers(self)  #: cancelled, finishing their current step
        self.summaries: dict[str, TimelineSummary] = {}
        self.results: dict[str, Any] = {}  #: steady-state engine Result per scenario
        self._progress: dict[str, float] = {}
        self._figure_ids: list[str] = []
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the engine and the training timeline, host-managed and "
                                   "DPU-offloaded (F5)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.progress.setMaximumWidth(220)
        self.status = QLabel()
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # the dock can narrow
        #: why the last run failed, whole and wrapped, in the window's words (hidden otherwise)
        self.error_box = QLabel()
        self.error_box.setObjectName("run-error")
        self.error_box.setWordWrap(True)
        self.error_box.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.error_box.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
        self.error_box.setStyleSheet("QLabel#run-error { background: #fdecea; color: #7f1d1d; "
                                     "border: 1px solid #f5c2c0; border-radius: 4px; padding: 6px; }")
        self.error_box.hide()
        self.overlay = QComboBox()
        for scenario in SCENARIOS:
            self.overlay.addItem(SCENARIO_LABEL[scenario], scenario)
        self.overlay.addItem("off", None)
        self.overlay.setToolTip("Colour the canvas cables by their utilization in this scenario; "
                                "bottlenecks are marked")
        self.overlay.currentIndexChanged.connect(self._emit_overlay)
        self.plots = LivePlots()  # keeps its readable height: the timelines tab scrolls
        self.table = QTableWidget(len(SCENARIOS), len(_SUMMARY_ROWS))
        self.table.setVerticalHeaderLabels([SCENARIO_LABEL[s] for s in SCENARIOS])
        self.table.setHorizontalHeaderLabels([_header(name) for name, _ in _SUMMARY_ROWS])
        for col, (name, _) in enumerate(_SUMMARY_ROWS):
            self.table.horizontalHeaderItem(col).setToolTip(_SUMMARY_TIPS.get(name, name))
        self.figures_title = QLabel()
        self.figures_title.setWordWrap(True)
        self.figures = QTableWidget(0, 1 + len(SCENARIOS))
        self.figures.setHorizontalHeaderLabels(["Link"] + [SCENARIO_LABEL[s] for s in SCENARIOS])
        self.figures.verticalHeader().hide()
        for table in (self.table, self.figures):
            table.setEditTriggers(QAbstractItemView.NoEditTriggers)
            table.setWordWrap(False)
            table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
            header = table.horizontalHeader()
            header.setSectionResizeMode(QHeaderView.Stretch)
        for col, (name, _) in enumerate(_SUMMARY_ROWS):  # a wrapped heading keeps its whole width
            if "\n" in _header(name):
                self.table.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeToContents)
        self.figures.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        for col in range(1, 1 + len(SCENARIOS)):
            self.figures.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeToContents)
        self.table.setFixedHeight(self.table.horizontalHeader().sizeHint().height()
                                  + len(SCENARIOS) * self.table.verticalHeader().defaultSectionSize()
                                  + 2 * self.table.frameWidth())
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        #: "Run figures" of the canvas selection; the main window docks it beside the inspector
        self.figures_panel = QWidget()
        flay = QVBoxLayout(self.figures_panel)
        flay.setContentsMargins(6, 6, 6, 6)
        flay.addWidget(self.figures_title)
        flay.addWidget(self.figures, 1)
        bar = QHBoxLayout()
        for w in (self.run_button, self.cancel_button, self.progress):
            bar.addWidget(w)
        bar.addWidget(self.status, 1)
        bar.addWidget(QLabel("Canvas colours:"))
        bar.addWidget(self.overlay)
        #: the engine's figures host vs DPU, why they differ, bottlenecks ("Engine results" tab)
        self.engine = EngineResults()
        timelines = QWidget()
        tlay = QVBoxLayout(timelines)
        tlay.setContentsMargins(0, 4, 0, 0)
        tlay.addWidget(self.table)
        tlay.addWidget(self.plots, 1)
        scroll = QScrollArea()  # a low dock scrolls the plots instead of squeezing them flat
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setWidget(timelines)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(scroll, "Timelines")
        self.tabs.addTab(self.engine, "Engine results")
        self.tabs.setTabToolTip(0, "The training run played out over time: failures, checkpoints, "
                                   "stalls (live while it runs)")
        self.tabs.setTabToolTip(1, "The engine's steady-state figures, host-managed vs "
                                   "DPU-offloaded, why they differ, bottlenecks and warnings "
                                   "(as 'dpu-designer compare' prints them)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.error_box)
        layout.addWidget(self.tabs, 1)
        self.set_status("Ready: press Run (F5) to run the design")
        self.show_figures([], None)
        self.run_button.clicked.connect(self.run_design)
        self.cancel_button.clicked.connect(self.cancel)

    def wanted_height(self) -> int:
        """Height (px) at which the Timelines tab shows its table and both rows of plots whole,
        without scrolling: the window sizes the run dock to it (:meth:`MainWindow.run`)."""
        content = self.tabs.widget(0).widget()
        bar = max(self.run_button.sizeHint().height(), self.overlay.sizeHint().height())
        margins = self.layout().contentsMargins()
        return (content.minimumSizeHint().height() + self.tabs.tabBar().sizeHint().height() + bar
                + margins.top() + margins.bottom() + 3 * self.layout().spacing() + 8)

    def set_status(self, text: str) -> None:
        """The status line (its tooltip too: a narrow dock cuts the line)."""
        self.status.setText(text)
        self.status.setToolTip(text)

    # --- starting and stopping
    def set_design(self, design: Any, catalog: Any) -> None:
        """Run ``design`` from now on; another document stops a running run and drops its results."""
        if design is not self.design:
            self.cancel()
            self.clear_results()
            if self.design is not None:  # the last document's run says nothing about this one
                self._clear_run()
                self.set_status("Ready: press Run (F5) to run the design")
            #: the document's engine cache: a second Run of an unchanged fabric reuses its routes
            self.cache = EngineCache()
        self.design, self.catalog = design, catalog

    def _clear_run(self) -> None:
        """Plots, summaries, progress, the timeline table and the error box as before any run."""
        self.plots.clear()
        self.summaries.clear()
        self._progress.clear()
        self.table.clearContents()
        self.progress.setValue(0)
        self.error_box.hide()

    def run_design(self) -> None:
        """Run the current design (a copy, so edits during the run do not race the engine)."""
        if self.design is None:
            self.set_status("No design to run")
            return
        self._start(design_stream, self.design.copy(), self.catalog,
                    seed=int(self.design.scenario.get("seed", 0)), cache=self.cache)

    def run_inputs(self, inputs: dict[str, TimelineInputs], **kw: Any) -> None:
        """Run timelines for given inputs (no engine; for what-if studies and tests)."""
        self._start(timeline_stream, inputs, **kw)

    def _start(self, func, *args: Any, **kw: Any) -> None:
        self.cancel()
        self.clear_results()
        self._clear_run()
        self.set_status("Running the engine…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.worker = self._retired.start(func, *args, on_item=self._on_item,
                                          on_finished=self._on_finished,
                                          on_aborted=self._on_aborted, on_error=self._on_error, **kw)

    def cancel(self, wait: bool = False) -> None:
        """Stop a running run. The timeline stops within one batch; an engine run in progress
        cannot be interrupted, so its worker is kept (``_retired``) until it ends, and with
        ``wait`` it is waited for (the window does that when it closes)."""
        worker, self.worker = self.worker, None
        cancelled = worker is not None and worker.is_running()
        if cancelled:
            self._retired.retire(worker)
            self.plots.stop()
            self.set_status("Cancelled")
        if wait:
            self._retired.wait()
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if cancelled:
            self.run_ended.emit("Cancelled")

    # --- worker items (GUI thread)
    def _on_item(self, item: tuple) -> None:
        if not self._from_current():
            return  # a cancelled run's last items
        kind = item[0]
        if kind == "samples":
            _, scenario, batch, fraction = item
            self.plots.append(scenario, batch)
            self._progress[scenario] = fraction
            self.progress.setValue(int(1000 * sum(self._progress.values()) / len(SCENARIOS)))
        elif kind == "start":
            _, scenario, budget, breakdown = item
            self.plots.start(scenario, budget, breakdown)
            self.set_status("Simulating the training run…")
        elif kind == "summary":
            self.summaries[item[1]] = item[2]
            self._show_summary(item[1], item[2])
        elif kind == "results":
            self.results = {"host": item[1], "dpu": item[2]}
            self.plots.name_engines({s: max(r.dpu, key=r.dpu.get) if r.dpu else ""
                                     for s, r in self.results.items()})
            if len(item) > 3 and item[3] is not None:
                self.engine.show_comparison(item[3], item[4] if len(item) > 4 else None)
            else:
                self.engine.clear()
            self.result_ready.emit(item[1], item[2])
            self._emit_overlay()
            self._refresh_figures()
        elif kind == "engine":
            self.set_status(f"Engine: {SCENARIO_LABEL[item[1]]} done")

    def _show_summary(self, scenario: str, summary: TimelineSummary) -> None:
        row = SCENARIOS.index(scenario)
        for col, (_, fmt) in enumerate(_SUMMARY_ROWS):
            cell = QTableWidgetItem(fmt(summary))
            cell.setTextAlignment(Qt.AlignCenter)
            cell.setToolTip(summary.unfinished_text())
            self.table.setItem(row, col, cell)

    def _on_finished(self) -> None:
        if not self._from_current():
            return
        stopped = [f"{SCENARIO_LABEL[k]}: {v.unfinished_text()}" for k, v in self.summaries.items()
                   if not v.finished]
        self._ended("Done. " + " ".join(stopped) if stopped else "Done")
        self.progress.setValue(1000)
        self.run_finished.emit(dict(self.summaries))
        self.run_ended.emit(self.status.text())

    def _on_aborted(self) -> None:
        if self._from_current():
            self.set_status("Cancelled")

    def _on_error(self, message: str) -> None:
        if self._from_current():
            text = gui_words(message)
            self._ended(f"Error: {text}")
            self.error_box.setText(f"<b>The run stopped.</b> {escape(text)}")
            self.error_box.show()
            self.run_ended.emit(self.status.text())

    def _ended(self, status: str) -> None:
        self.worker.stop()  # the generator has ended: this only joins the thread
        self.plots.stop()
        self.set_status(status)
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    # --- results on the canvas
    def clear_results(self) -> None:
        """Forget the engine results (the canvas colours go, the figures and the engine results
        empty)."""
        self.results = {}
        self.engine.clear()
        self._emit_overlay()
        self._refresh_figures()

    def overlay_scenario(self) -> str | None:
        return self.overlay.currentData()

    def set_overlay(self, scenario: str | None) -> None:
        """Colour the canvas by ``"host"`` or ``"dpu"`` utilizations, or not at all (None)."""
        self.overlay.setCurrentIndex(self.overlay.findData(scenario))

    def _emit_overlay(self, *_args: Any) -> None:
        result = self.results.get(self.overlay_scenario())
        if result is None or self.design is None:
            self.overlay_changed.emit(None, set(), None)
            return
        # the colours show the time-averaged utilization (a cable busy in one short phase is not
        # a busy cable); the busiest phase's figures go along for the View menu's toggle
        mean = dict(zip(result.links.ids, result.link_mean_utilization().tolist()))
        peak = {l.id: float(l.utilization) for l in result.links}
        self.overlay_changed.emit(mean, bottleneck_marks(result, self.design.topology), peak)

    def show_figures(self, ids: Iterable[str], topology: Any) -> None:
        """Fill "Run figures" with the run's utilization and phase of the cables of ``ids``
        (a cable, or a component's cables and its NICs'/DPUs' cables)."""
        self._figure_ids = list(ids)
        self._refresh_figures(topology)

    def _refresh_figures(self, topology: Any = None) -> None:
        topology = topology or (self.design.topology if self.design is not None else None)
        ids = [i for i in self._figure_ids
               if topology is not None and (i in topology.components or i in topology.links)]
        self.figures.setRowCount(0)
        if not self.results:
            self.figures_title.setText("Run the design, then select a link or a switch to see its "
                                       "utilization here.")
            return
        if not ids:
            self.figures_title.setText("Select a link or a switch to see its utilization.")
            return
        by_id = {s: {l.id: l for l in r.links} for s, r in self.results.items()}
        means = {s: dict(zip(r.links.ids, r.link_mean_utilization().tolist())) for s, r in self.results.items()}
        cables = [c for i in ids for c in cables_of(topology, i)]
        cables = sorted(dict.fromkeys(cables), key=lambda c: (-max(
            (by_id[s][c].utilization for s in by_id if c in by_id[s]), default=-1.0),
            natural_key(f"{topology.links[c].a} {topology.links[c].b}")))
        self.figures_title.setText(self._figures_heading(ids, topology, cables, by_id))
        shown = cables[:FIGURE_ROWS]
        self.figures.setRowCount(len(shown))
        for row, cid in enumerate(shown):
            link = topology.links[cid]
            name = QTableWidgetItem(f"{link.a} – {link.b}")
            name.setToolTip(f"{cid}: {link.medium}, {link.lanes}× {link.speed_Gbps:g} Gb/s")
            self.figures.setItem(row, 0, name)
            for col, s in enumerate(SCENARIOS, 1):
                found = by_id.get(s, {}).get(cid)
                # the canvas's figure (averaged over the iteration) first, then the busiest phase's
                text = (f"{100 * means[s][cid]:.0f}% · {100 * found.utilization:.0f}%"
                        + (f" {found.phase}" if found.phase else "") if found else "not in the run")
                cell = QTableWidgetItem(text)
                cell.setToolTip("averaged over the iteration (what the canvas colours by) · "
                                "in the phase that loads the link most")
                cell.setTextAlignment(Qt.AlignCenter)
                self.figures.setItem(row, col, cell)

    @staticmethod
    def _figures_heading(ids: list[str], topology: Any, cables: list[str], by_id: dict) -> str:
        if len(ids) == 1 and ids[0] in topology.links:
            what = f"Link {ids[0]}"
        elif len(ids) == 1:
            comp = topology.components[ids[0]]
            what = f"{KIND_LABEL[comp.kind]} {comp.label}"
        else:
            what = f"{len(ids)} selected"
        if not cables:
            return f"{what}: no links"
        busiest = [f"{SCENARIO_LABEL[s]} {100 * max((m[c].utilization for c in cables if c in m), default=0):.0f}%"
                   for s, m in by_id.items()]  # in the busiest phase (the cells: average · peak)
        more = f", the busiest {FIGURE_ROWS} listed" if len(cables) > FIGURE_ROWS else ""
        return f"<b>{what}</b>: {len(cables):,} link{'s' if len(cables) != 1 else ''}{more}; busiest phase peak: {', '.join(busiest)}; cells: average over the iteration · peak"


def make_run_view(window: Any) -> RunView:
    """The run view the main window docks, running the window's design with its catalog."""
    view = RunView()
    view.set_design(window.design, window.catalog)
    return view
