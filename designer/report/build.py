"""The design report: runs the engine in the three offload modes and writes an A4 PDF (and PNG
figures).

:func:`gather` runs :func:`designer.engine.compare.compare` (the engine with offload "host",
"smartnic" and "dpu", the differences and their reasons, the power and energy cost of each mode, as
``dpu-designer compare`` prints them) and plays the host-managed and DPU-offloaded runs out with
:mod:`designer.engine.timeline` (the utilization-over-time pages compare those two; the SmartNIC
run is in every table), so every figure in the report is the engine's.
:func:`build_report` lays the sections out (each on a new page) and prints them with
:mod:`designer.report.pdf`.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field, replace
from html import escape as _esc
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QSize

from designer.engine.compare import MIN_DIFFERENCE, Comparison, compare, loading
from designer.engine.compare import LABEL as RUN_LABEL
from designer.engine.compare import MODES as COMPARE_MODES
from designer.engine.result import BREAKDOWN_LABEL, LinkResults, Result
from designer import __version__
from designer.engine import pipeline
from designer.engine.timeline import Samples, TimelineSummary, inputs_of, simulate
from designer.errors import UsageError
from designer.report import assumptions as assume
from designer.services.bom import Bom, bill_of_materials
from designer.services.cabling import summary_of as cable_summary_of
from designer.services.cabling import counts_text
from designer.report.names import (ENERGY, HIDDEN_BY_OVERLAP, TFLOPS, STEADY_DAYS, TIMELINE_DAYS, TIMELINE_ITERATION,
                                   assumed_share_line, cluster_power_label, collective_label, planner_words,
                                   engine_load_notes, iteration_note, power_rows, ADAPTER_POWER_TYPICAL, NO_TYPICAL, has_typical,
                                   tco_part_rows)
from designer.report.charts import Chart, Series, line_plot, stacked_bars
from designer.report.export import save_picture
from designer.report.html import (STYLE, Markup, breakable, days, heading, image, num, para, percent,
                                  table)
from designer.report.pdf import (DPI, PdfDocument, check_target, heading_pages, page_geometry,
                                 write_pdf)
from designer.report.remedies import BREAKDOWN_REMEDY, remedy
from designer.report.topology_picture import paint_scene, topology_image, topology_scene
from designer.services.style import SCENARIO_SHORT, delta, figure, shown_value, SCENARIO_COLOR, SCENARIO_LABEL
from designer.topology.design import Design
from designer.topology.validation import validate

#: the runs played out over time (the timelines and their charts): host-managed and DPU-offloaded
SCENARIOS = ("host", "dpu")
#: the offload modes in the tables (``designer.engine.compare.MODES``)
MODES = COMPARE_MODES
LABEL = {s: SCENARIO_LABEL[s][0].upper() + SCENARIO_LABEL[s][1:] for s in MODES}
#: short column titles of the three-mode tables
SHORT = SCENARIO_SHORT

#: catalog kinds as the assumptions section names them
KIND_TITLE = {"workload": "Workload", "server": "GPU server", "gpu": "GPU", "cpu": "CPU", "dpu": "DPU",
              "nic": "NIC", "switch": "Switch", "storage": "Storage", "rack": "Rack"}
#: section titles in report order; each starts a page
SECTIONS = ("Summary", "Topology", "Bill of materials", "Workload and parallelism", "Results",
            "Utilization over time", "Host vs SmartNIC vs DPU", "Costs", "Bottlenecks",
            "Assumptions and sources")
#: the busiest links of the host-managed run listed under the bottlenecks
BUSIEST_LINKS = 10
#: timeline samples plotted per scenario (time-weighted bins of the whole run)
PLOT_BINS = 300
DEFAULT_PNG_SIZE = QSize(1600, 1000)


@dataclass
class ReportData:
    design: Design
    catalog: Any
    date: str
    seed: int
    results: dict[str, dict]                 #: mode (MODES) -> Result.to_json() (:func:`result_json`)
    timelines: dict[str, tuple[Samples, TimelineSummary]]  #: SCENARIOS (host, dpu) only
    bom: Bom
    #: the engine's comparison of the two runs (reasons, data loading); None: not gathered
    comparison: Comparison | None = None
    #: cables and optics (``designer.services.cabling.summarize``); made when the document first needs it
    cable_summary: Any = None
    #: ``services.cost.costs`` of the comparison's modes; None: not gathered or not priced
    costs: Any = None
    #: why the design could not be priced (shown in the Costs section), when ``costs`` is None
    costs_error: str = ""


@dataclass
class ReportInfo:
    """What :func:`build_report` wrote."""

    pdf: Path
    pages: int
    pngs: list[Path] = field(default_factory=list)
    data: ReportData | None = None


# ------------------------------------------------------------------------------------ engine runs
def gather(design: Design, catalog, *, seed: int | None = None, date: str | None = None) -> ReportData:
    """Run the engine in the three modes and the timeline of the host-managed and DPU-offloaded
    runs; UsageError if the design cannot run."""
    errors = [p for p in validate(design, catalog) if p.severity == "error"]
    if errors:
        first = errors[0]
        raise UsageError(f"the design has {len(errors)} error(s), e.g. {first.message}; "
                         "fix them first (see 'dpu-designer validate FILE')")
    seed = pipeline.design_seed(design, seed)  # None: the design's scenario seed
    cmp = compare(design, catalog, seed=seed)
    results = {s: result_json(cmp.runs[s]) for s in MODES}
    # the same timeline as the app and `run --timeline` play (same inputs, seed and blocks), so
    # the report's wall time and goodput are theirs; the plots bin it
    timelines = {s: simulate(inputs_of(cmp.runs[s], design, s), seed=seed) for s in SCENARIOS}
    from designer.services.cost import costs as costs_of

    try:
        priced, why = costs_of(design, catalog, cmp), ""
    except (ValueError, KeyError, LookupError) as exc:  # a price book the design cannot use
        priced, why = None, str(exc)
    return ReportData(design, catalog, date or _dt.date.today().isoformat(), seed, results,
                      timelines, bill_of_materials(design, catalog), cmp, costs=priced, costs_error=why)


def _busy(utilization) -> float:
    """How busy a link is for the busiest-links table: its utilization, none (not finite) as 0."""
    return utilization if utilization is not None and math.isfinite(utilization) else 0.0


def result_json(r: Result) -> dict[str, Any]:
    """``r.to_json()`` with ``links`` only the :data:`BUSIEST_LINKS` busiest, busiest first (ties
    in link order, as a stable sort of them all gives): all the report shows of the links. Each
    run of a 250k-component design has 500k links, whose dicts cost ~0.4 s a run to make."""
    links = r.links
    if isinstance(links, LinkResults):
        util = links.utilization
        busy = np.where(np.isfinite(util), util, 0.0)
        top = np.argsort(-busy, kind="stable")[:BUSIEST_LINKS].tolist()
        r = replace(r, links=LinkResults([links.ids[i] for i in top], util[top],
                                         [links.phase[i] for i in top]))
        return r.to_json()
    out = r.to_json()
    out["links"] = sorted(out["links"], key=lambda l: -_busy(l["utilization"]))[:BUSIEST_LINKS]
    return out


def binned(samples: Samples, column: str, bins: int = PLOT_BINS) -> tuple[np.ndarray, np.ndarray]:
    """Time-weighted mean of ``column`` over ``bins`` equal slices of the run: (mid time in days,
    mean). Checkpoint writes and restarts count as the zeros the samples hold for them."""
    t, dt, y = samples["t_s"], samples["dt_s"], samples[column]
    if not len(t):
        return np.zeros(0), np.zeros(0)
    start = t - dt
    edges = np.linspace(start.min(), t.max(), bins + 1)
    slot = np.clip(np.searchsorted(edges, start + dt / 2, side="right") - 1, 0, bins - 1)
    weight = np.bincount(slot, dt, bins)
    total = np.bincount(slot, dt * np.nan_to_num(y), bins)
    keep = weight > 0
    mid = (edges[:-1] + edges[1:]) / 2 / 86400.0
    return mid[keep], total[keep] / weight[keep]


# ------------------------------------------------------------------------------------- charts
def breakdown_chart(data: ReportData) -> Chart:
    bars = []
    shown = {k for s in MODES for k, v in data.results[s]["breakdown_s"].items() if (v or 0) > 0}
    for s in MODES:
        parts = data.results[s]["breakdown_s"]
        bars.append((LABEL[s], [(BREAKDOWN_LABEL.get(k, k), float(v or 0.0))
                                for k, v in parts.items() if k in shown]))
    return stacked_bars(bars, title="Iteration time breakdown", unit="s",
                        total_text=lambda v: f"{figure('seconds', v)} s")  # as the tables print it


def utilization_charts(data: ReportData) -> dict[str, Chart]:
    gpu, cpu = [], []
    for s in SCENARIOS:
        samples = data.timelines[s][0]
        x, y = binned(samples, "gpu_util")
        gpu.append(Series(LABEL[s], x, 100 * y, SCENARIO_COLOR[s]))
        x, y = binned(samples, "host_cpu_util")
        cpu.append(Series(f"{LABEL[s]}: host CPU", x, 100 * y, SCENARIO_COLOR[s]))
        if s == "dpu":
            x, y = binned(samples, "dpu_util")
            cpu.append(Series(f"{LABEL[s]}: adapters (busiest engine)", x, 100 * y, SCENARIO_COLOR[s],
                              dashed=True))
    return {
        "gpu-utilization": line_plot(gpu, title="GPU utilization over the training run",
                                     x_label="simulated time (days)", y_label="utilization (%)",
                                     y_range=(0, 100), height=340),
        "cpu-dpu-utilization": line_plot(cpu, title="Host CPU and adapter engine utilization",
                                         x_label="simulated time (days)",
                                         y_label="utilization (%)", y_range=(0, 100), height=340),
    }


# ------------------------------------------------------------------------------------- sections
def _resources(result: dict) -> dict:
    return result.get("resources") or {}


def _host_infra(result: dict) -> float | None:
    host = _resources(result).get("host_cpu") or {}
    return host.get("infra_fraction")


def _dpu_peak(result: dict) -> float | None:
    dpu = _resources(result).get("dpu") or {}
    return max(dpu.values()) if dpu else None


def _power_kW(result: dict) -> float | None:
    power = (_resources(result).get("energy") or {}).get("power_W") or {}
    return power["total"] / 1000.0 if "total" in power else None


def _run_MWh(result: dict) -> float | None:
    energy = _resources(result).get("energy") or {}
    return energy["run_kWh"] / 1000.0 if energy.get("run_kWh") else None


#: characters of the design name in the report's title (three lines at 24 pt on an A4 page); a
#: longer name is cut at a word with "…" and printed in full (up to :data:`NAME_WHOLE`) below it
TITLE_CHARS = 100
#: characters of a name printed in full (the PDF's title and footer too); beyond, cut with "…"
NAME_WHOLE = 2000


def capped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with "…" when longer."""
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def title_name(name: str) -> str:
    """The design name as the report's title: whole up to :data:`TITLE_CHARS` characters, else
    cut at the last space of the first ``TITLE_CHARS`` (or at ``TITLE_CHARS`` when that space
    comes early, a name without spaces) with "…"."""
    if len(name) <= TITLE_CHARS:
        return name
    head = name[:TITLE_CHARS]
    cut = head.rfind(" ")
    return (head[:cut] if cut >= TITLE_CHARS * 0.6 else head).rstrip(" ,;:-") + "…"


def comparison_rows(data: ReportData) -> list[tuple[str, dict[str, Any], bool | None]]:
    """``(metric, {mode: value}, lower is better)`` for the comparison table, one value per mode of
    ``MODES``; a value may be text (no change is computed; "–" where a mode has no figure, e.g. the
    timeline rows of the SmartNIC run, which the report does not play out), and None for "lower is
    better" means none is better."""
    r = data.results
    tl = {s: data.timelines[s][1] for s in SCENARIOS}

    def per_mode(fn) -> dict[str, Any]:
        return {s: fn(r[s]) for s in MODES}

    def timeline(fn) -> dict[str, Any]:
        return {s: fn(tl[s]) if s in tl else "–" for s in MODES}

    rows = [
        ("Iteration time (s)", per_mode(lambda x: x["iteration_time_s"]), True),
        (STEADY_DAYS, per_mode(lambda x: x["training_time_days"]), True),
        (TIMELINE_DAYS, timeline(lambda t: t.training_time_days), True),
        ("Goodput (%)", timeline(lambda t: 100 * t.goodput), False),
        ("Throughput (tokens/s)", per_mode(lambda x: x["tokens_per_s"]), False),
        (TFLOPS, per_mode(lambda x: x["tflops_per_gpu"]), False),
        ("MFU (%)", per_mode(lambda x: 100 * x["mfu"]), False),
        ("Host CPU cycles on infrastructure (%)", per_mode(lambda x: _pct(_host_infra(x))), True),
        *_loading_rows(data),
        ("Busiest adapter engine load (% of capacity)", per_mode(lambda x: _pct(_dpu_peak(x))), True),
        (cluster_power_label([_resources(r[s]).get("energy") or {} for s in MODES]), per_mode(_power_kW), True),
        (ENERGY, per_mode(_run_MWh), True),
    ]
    return [row for row in rows if any(v is not None for v in row[1].values())]


def row_fact(metric: str) -> str | None:
    """The fact (``services.style.FIGURE_FORMAT``) a comparison row shows, so its figures, its
    DPU − host and its Best read at the one precision every view prints it in; None for a row
    without one (text rows)."""
    if metric.startswith("Cluster power (kW"):
        return "kW"
    return {"Iteration time (s)": "seconds", STEADY_DAYS: "days", TIMELINE_DAYS: "days",
            "Goodput (%)": "percent", "Throughput (tokens/s)": "tokens_per_s",
            TFLOPS: "tflops", "MFU (%)": "percent",
            "Host CPU cycles on infrastructure (%)": "percent",
            "Host CPU cycles on data loading (%)": "percent",
            "Busiest adapter engine load (% of capacity)": "percent",
            ENERGY: "MWh"}.get(metric)


def best_mode(values: dict[str, Any], lower_better: bool | None, fact: str | None = None) -> str:
    """The mode(s) whose figure is best: every mode within ``MIN_DIFFERENCE`` (the compare's
    threshold for a difference worth a reason) of the best figure, joined ("SmartNIC, DPU" when
    two share it); "all equal" when every mode with a figure does; "" (nothing to rank) for a
    figure where neither direction is better, for text figures and for fewer than two figures.
    With ``fact``, the figures are compared as shown (``services.style.figure``): "all equal" only
    when they read the same, and a mode is best only when its shown figure is."""
    nums = {s: v for s, v in values.items() if isinstance(v, (int, float)) and math.isfinite(v)}
    if lower_better is None or len(nums) < 2:
        return ""
    if fact is not None:
        nums = {s: shown_value(fact, v) for s, v in nums.items()}
    best = min(nums.values()) if lower_better else max(nums.values())
    tied = ([s for s in nums if nums[s] == best] if fact is not None else
            [s for s in nums if abs(nums[s] - best) <= MIN_DIFFERENCE * max(abs(nums[s]), abs(best))])
    if len(tied) == len(nums):
        return "all equal"
    return ", ".join(SHORT[s] for s in MODES if s in tied)


def _pct(fraction: float | None) -> float | None:
    return None if fraction is None else 100 * fraction


def _loading_share(result: dict) -> float | None:
    return ((result.get("host_cpu") or {}).get("by_task") or {}).get("data_loading")


def _loading_rows(data: ReportData) -> list[tuple[str, dict[str, Any], bool | None]]:
    """Host data loading: its share of host cycles, and the cores the loaders need against the
    cores left for them (``compare.loading``: the tightest server group; offloading the stacks
    hands their cores to the loaders). Rows only when some server loads data on its CPU."""
    runs = data.comparison.runs if data.comparison is not None else {}
    groups = {s: loading(runs[s]) if s in runs else None for s in MODES}
    if not any(groups.values()):
        return []
    cores = {s: "–" if g is None else f"{g['load_cores_needed']:.1f} / {g['load_cores_free']:.1f}"
             for s, g in groups.items()}
    # a faster run loads more samples per second: neither share is "better"
    return [("Host CPU cycles on data loading (%)",
             {s: _pct(_loading_share(data.results[s])) for s in MODES}, None),
            ("Data-loader cores needed / free per server", cores, None)]


def delta_text(host: float | None, dpu: float | None) -> tuple[str, str]:
    """(DPU − host, relative change) as printed in the comparison table; "–" for text figures."""
    if isinstance(host, str) or isinstance(dpu, str):
        return "–", "–"
    if host is None or dpu is None or not (math.isfinite(host) and math.isfinite(dpu)):
        return "–", "–"
    diff = dpu - host
    rel = f"{100 * diff / host:+.1f} %" if host else "–"
    return (("+" if diff > 0 else "") + num(diff)), rel


def _summary(data: ReportData, contents: list[tuple[str, int]]) -> str:
    d, h = data.design, data.results["host"]
    r = data.results
    top = data.design.topology
    out = [
        '<p style="font-size: 11pt; color: #555555;">DPU Cluster Designer — design report</p>',
        f'<p style="font-size: 24pt; font-weight: bold; color: #1f3a5f;">{_esc(title_name(d.name))}</p>',
        *([f'<p style="font-size: 8pt; color: #555555;">Design name in full: '
           f'{_esc(capped(d.name, NAME_WHOLE))}</p>'] if title_name(d.name) != d.name else []),
        f'<p style="color: #555555;">{_esc(data.date)} · dpu-designer {__version__} · engine seed '
        f'{data.seed}</p>',
        "<h2>Key figures</h2>",
        table(["", *[LABEL[s] for s in MODES]], [
            ("Training time (steady state)", *[days(r[s]["training_time_days"]) for s in MODES]),
            ("Iteration time", *[f"{figure('seconds', r[s]['iteration_time_s'])} s" for s in MODES]),
            ("MFU", *[percent(r[s]["mfu"]) for s in MODES]),
            ("Throughput", *[f"{figure('tokens_per_s', r[s]['tokens_per_s'])} tokens/s" for s in MODES]),
            *_mode_power_rows(data),
        ], [31, 23, 23, 23], "lrrr"),
        table(["Design", ""], [
            ("GPU servers", len(top.servers())),
            ("GPUs (used by the workload)", f"{data.bom.count('gpu'):,} ({h['gpus']:,})"),
            ("DPUs / NICs", f"{data.bom.count('dpu'):,} / {data.bom.count('nic'):,}"),
            ("Switches", len(top.switches())),
            ("Storage systems", len(top.storage())),
            ("Racks", data.bom.racks),
            ("Workload", f"{h['workload'].get('name', '')}, {num(h['parameters'] / 1e9)} B parameters"),
        ], [40, 60], "lr"),
        "<h2>Contents</h2>",
        table(["Section", "Page"], [(t, p) for t, p in contents], [85, 15], "lr"),
    ]
    return "".join(out)


def _topology(data: ReportData, picture: tuple[float, float]) -> str:
    top = data.design.topology
    by_medium: dict[tuple[str, float], int] = {}
    for link in top.links.values():
        key = (link.medium, link.speed_Gbps)
        by_medium[key] = by_medium.get(key, 0) + link.lanes
    rows = [(m, f"{num(s)} Gb/s", n) for (m, s), n in sorted(by_medium.items())]
    return "".join([
        heading("Topology"),
        image("topology", *picture, DPI),
        para("As drawn on the canvas: racks with their servers, switches and storage; NICs and "
             "DPUs are the badges on the servers; lines are network links.", small=True),
        "<h2>Links</h2>",
        table(["Medium", "Speed per cable", "Cables"], rows, [40, 35, 25], "lrr"),
    ])


def _bom(data: ReportData) -> str:
    b = data.bom
    rows = [(r.label, r.model, r.name, r.count, num(r.unit_power_W) if r.unit_power_W else "–",
             num(r.power_kW) if r.unit_power_W else "–", r.unit_U or "–", r.rack_U or "–")
            for r in b.rows]
    rows.append((Markup("<b>Total</b>"), "", "", "", "", Markup(f"<b>{num(b.power_kW)}</b>"), "",
                 Markup(f"<b>{b.rack_U}</b>")))
    return "".join([
        heading("Bill of materials"),
        table(["Part", "Model", "Name", "Count", "Power each (W)", "Power (kW)", "U each", "U"],
              rows, [11, 13, 34, 8, 10, 9, 7, 8], "lllrrrrr", small=True),
        para("Power is the catalog's maximum (nameplate) figure of each part. A server's own line "
             "excludes its GPUs, NICs and DPUs, which have lines of their own; CPU power is inside "
             "the server's line."),
        table(["Rack space and power", ""], [
            ("Racks", b.racks),
            ("Rack space (U used / available)", f"{b.rack_U} / {b.rack_capacity_U}"),
            ("Nameplate power (kW) / rack power budget (kW)",
             f"{num(b.power_kW)} / {num(b.rack_power_budget_kW)}"),
        ], [60, 40], "lr"),
        _cables(data),
    ])


def _cables(data: ReportData) -> str:
    """Cables by type, speed and length class, and the transceivers they need
    (``designer.services.cabling``: lengths estimated from the rack positions)."""
    summary = data.cable_summary
    if summary is None:  # once: the document is laid out twice (for the contents' page numbers)
        summary = data.cable_summary = cable_summary_of(data.design, data.catalog)
    if not summary.cables:
        return para("No network cables: the design has no Ethernet or InfiniBand links.")
    rows = [(kind, f"{speed:g}", medium, f"{length:g}", n)
            for (kind, speed, medium, length), n in summary.cables.items()]
    rows.append((Markup("<b>Total cables</b>"), "", "", "", Markup(f"<b>{summary.total_cables:,}</b>")))
    optics = [(kind, f"{speed:g}", "switch" if end == "switch" else "NIC / DPU / storage", n)
              for (kind, speed, end), n in summary.transceivers.items()]
    return "".join([
        "<h2>Cables and optics</h2>",
        table(["Cable", "Gb/s", "Medium", "Length class (m)", "Count"], rows, [25, 15, 25, 20, 15],
              "lrlrr", small=True),
        table(["Transceivers", "Gb/s", "Port", "Count"], optics or [("none", "", "", 0)], [30, 20, 30, 20],
              "lrlr", small=True),
        para(f"The canvas's {counts_text(data.design.topology)}: one cable per link lane; NVLink "
             "and PCIe links inside a server are not cabled. Lengths are estimated from the rack positions on the canvas "
             "(0.6 m per rack along a row, 2.4 m between rows, overhead tray, 10% slack) and rounded "
             "up to orderable lengths; 1GbE management ports on RJ45 twisted pair to 100 m, DAC up to 3 m (5 m below 200 Gb/s), AOC to 100 m below "
             "400 Gb/s, multimode SR optics to 50 m at 400 Gb/s and above, single-mode DR to 500 m "
             "and FR to 2 km (NVIDIA LinkX cable guides). One transceiver per optical cable end; at "
             "twin-port OSFP switches (Quantum-2, Spectrum-4) one 2x400G module serves two switch ports. "
             "'dpu-designer export FILE --cabling plan.csv --bom bom.csv' writes every cable and "
             "the whole bill.", small=True),
    ])


_WORKLOAD_FIELDS = (("name", "Workload"), ("kind", "Kind"), ("layers", "Layers"),
                    ("hidden", "Hidden size"), ("heads", "Attention heads"), ("seq_len", "Sequence length"),
                    ("vocab", "Vocabulary"), ("global_batch", "Global batch (sequences)"),
                    ("micro_batch", "Micro-batch"), ("precision", "Precision"),
                    ("recompute", "Activation recomputation"), ("tokens", "Training tokens"))
_PARALLEL_FIELDS = (("tp", "Tensor parallel (tp)"), ("pp", "Pipeline parallel (pp)"),
                    ("dp", "Data parallel (dp)"), ("interleave", "Interleaved stages per GPU"),
                    ("optimizer_sharded", "Sharded optimizer (ZeRO-1)"))


def _workload(data: ReportData) -> str:
    h = data.results["host"]
    w = h["workload"]
    rows = [(label, w[k]) for k, label in _WORKLOAD_FIELDS if k in w]
    rows.insert(3, ("Parameters", f"{num(h['parameters'] / 1e9)} billion"))
    par = [(label, w[k]) for k, label in _PARALLEL_FIELDS if k in w]
    par.append(("GPUs used (tp × pp × dp) / in the design", f"{h['gpus']:,} / {data.bom.count('gpu'):,}"))
    if w.get("dp") and w.get("micro_batch"):
        par.append(("Micro-batches per pipeline per iteration",
                    w["global_batch"] // (w["dp"] * w["micro_batch"])))
    placement = [(_key_label(k), _plain(v)) for k, v in (h.get("placement") or {}).items()]
    out = [heading("Workload and parallelism"),
           table(["Workload", ""], rows, [55, 45], "lr"),
           table(["Parallelism", ""], par, [55, 45], "lr")]
    if placement:
        out.append(table(["Placement", ""], placement, [55, 45], "lr"))
    return "".join(out)


#: words of a result key written as the reader knows them (parallel dimensions, NVLink)
_KEY_WORDS = {"tp": "TP", "pp": "PP", "dp": "DP", "cp": "CP", "ep": "EP", "nvlink": "NVLink",
              "gpu": "GPU", "gpus": "GPUs"}


def _key_label(key: Any) -> str:
    """A result key as a table label: ``tp_inside_nvlink_domain`` -> "TP inside NVLink domain"."""
    words = [_KEY_WORDS.get(w, w) for w in str(key).split("_")]
    if words and words[0] == words[0].lower():
        words[0] = words[0].capitalize()
    return " ".join(words)


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    return num(value)


def _results(data: ReportData, chart: tuple[float, float]) -> str:
    r = data.results
    h = r["host"]
    rows = [
        ("Iteration time (s)", *[figure("seconds", r[s]["iteration_time_s"]) for s in MODES]),
        ("Training time, steady state", *[days(r[s]["training_time_days"]) for s in MODES]),
        ("Throughput (tokens/s)", *[figure("tokens_per_s", r[s]["tokens_per_s"]) for s in MODES]),
        (TFLOPS, *[figure("tflops", r[s]["tflops_per_gpu"]) for s in MODES]),
        ("MFU", *[percent(r[s]["mfu"]) for s in MODES]),
        ("Percent of dense peak", *[f"{r[s]['percent_of_peak']:.1f} %" for s in MODES]),
    ]
    total = {s: r[s]["iteration_time_s"] for s in MODES}
    parts = list(dict.fromkeys(k for s in MODES for k in r[s]["breakdown_s"]))
    brk = [(BREAKDOWN_LABEL.get(k, k),
            *[figure("seconds", r[s]["breakdown_s"].get(k)) for s in MODES],
            *[percent((r[s]["breakdown_s"].get(k) or 0) / total[s]) for s in MODES])
           for k in parts if _meaningful_part(k, r)]
    hidden = [d for d in ("tp", "cp", "ep", "pp", "dp")
              if any((r[s].get("hidden_s") or {}).get(d, 0.0) > 0 for s in MODES)]
    brk += [(f"{d} {HIDDEN_BY_OVERLAP}", *[figure("seconds", (r[s].get("hidden_s") or {}).get(d, 0.0)) for s in MODES],
             "", "", "") for d in hidden]
    out = [heading("Results"),
           table(["", *[LABEL[s] for s in MODES]], rows, [31, 23, 23, 23], "lrrr"),
           *_jobs(data),
           *_memory(data),
           "<h2>Iteration breakdown (s)</h2>",
           table(["Part", *[SHORT[s] for s in MODES], *[f"share, {SHORT[s]}" for s in MODES]], brk,
                 [28, 12, 12, 12, 12, 12, 12], "lrrrrrr", small=True),
           *([para(f"'{HIDDEN_BY_OVERLAP}': communication per iteration that overlaps compute "
                   "(Result.hidden_s); it is not part of the iteration time, the exposed parts "
                   "above are.", small=True)] if hidden else []),
           *_optimizer_offload(data),
           image("breakdown", *chart, DPI)]
    colls = h.get("collectives") or []
    if colls:
        out += ["<h2>Collectives (host-managed)</h2>",
                table(["Collective", "Algorithm", "Bytes per call", "Calls", "Time per call (s)",
                       "Bus bandwidth (GB/s)"],
                      [(collective_label(c["name"]), f"{c['algorithm']}/{c['protocol']}", c["bytes"],
                        c["calls_per_iteration"], c["time_s"], c["busbw_GBps"]) for c in colls],
                      [22, 20, 16, 10, 16, 16], "llrrrr", small=True)]
    return "".join(out)


def _optimizer_offload(data: ReportData) -> list[str]:
    """The CPU optimizer step by its parts, in the words ``dpu-designer run`` prints under its row
    (``names.optimizer_offload_text`` of the host-managed run; the step is the same in every mode)."""
    from designer.report.names import optimizer_offload_text

    o = data.results["host"].get("optimizer_offload") or {}
    if not o:
        return []
    from designer.services.style import part_label

    return [para(f"{part_label('optimizer_offload')}: {optimizer_offload_text(o)}.", small=True)]


def _memory(data: ReportData) -> list[str]:
    """Memory per GPU, its parts, the GPU's memory and whether it fits, per mode, with the names
    and values of ``dpu-designer run`` (``names.memory_rows``), and how the activations are
    counted; nothing when the estimate is not known."""
    from designer.report.names import MEMORY_PER_GPU, activations_text, memory_rows

    per_mode = {s: {n: (v, i) for n, v, _tip, i in memory_rows(data.results[s])} for s in MODES}
    names = list(dict.fromkeys(n for s in MODES for n in per_mode[s]))
    if not names:
        return []
    indent = {n: i for s in MODES for n, (_v, i) in per_mode[s].items()}
    rows = [(Markup("&nbsp;" * 4 + _esc(n)) if indent[n] else n[:1].upper() + n[1:],
             *[per_mode[s].get(n, ("0.0" if indent[n] else "–",))[0] for s in MODES]) for n in names]
    acts = activations_text(data.results["host"])
    return [f"<h2>{_esc(MEMORY_PER_GPU[:1].upper() + MEMORY_PER_GPU[1:])}</h2>",
            table(["", *[LABEL[s] for s in MODES]], rows, [31, 23, 23, 23], "lrrr", small=True),
            para("The estimate of the busiest GPU by its parts (GB of 10^9 bytes), against the GPU's "
                 "memory as vendors quote it (GiB) in the same unit"
                 + (f"; {acts}" if acts else "") + ".", small=True)]


#: breakdown parts that exist only with a parallel dimension above 1 (as ``dpu-designer run``)
_LAYOUT_PARTS = {"cp_comm": "cp", "ep_comm": "ep"}


def _meaningful_part(key: str, results: dict[str, dict]) -> bool:
    """False for a part that is zero in every mode and belongs to a parallel dimension the layout
    does not use (cp_comm without context parallelism, ep_comm without expert parallelism)."""
    from designer.engine.result import SWITCH_PARTS

    if any(results[s]["breakdown_s"].get(key) for s in MODES):
        return True
    if key in SWITCH_PARTS:  # offload not asked for
        return bool(results["host"]["workload"].get(SWITCH_PARTS[key]))
    if key not in _LAYOUT_PARTS:
        return True
    return int(results["host"]["workload"].get(_LAYOUT_PARTS[key], 1) or 1) > 1


def _mode_power_rows(data: ReportData) -> list[tuple]:
    """Adapter power at maxima, cluster power on the energy's basis
    (:func:`designer.report.names.power_rows`, as ``dpu-designer compare`` prints them) and energy
    cost of each mode (``Comparison.modes``)."""
    modes = data.comparison.modes if data.comparison is not None else {}
    if not all(s in modes for s in MODES):
        return []
    m = modes
    runs = [data.comparison.runs[s] for s in MODES]
    # the title page has room for two: adapters at maxima and the cluster on the energy's basis
    # (the typical row is in "Power and energy cost of the three modes")
    rows = [(label, *values) for label, values, _ in power_rows(runs)
            if label != ADAPTER_POWER_TYPICAL]
    if all(math.isfinite(m[s]["energy_cost"]) for s in MODES):
        rows.append(("Energy cost of the run (USD)", *[_usd(m[s]["energy_cost"]) for s in MODES]))
    return rows


def _usd(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else num(value)


def _utilization(data: ReportData, charts: dict[str, tuple[float, float]]) -> str:
    rows = []
    for key, label in (("training_time_days", TIMELINE_DAYS), ("mean_iteration_s", TIMELINE_ITERATION),
                       ("goodput", "Goodput"),
                       ("failures", "Failures"), ("checkpoints", "Checkpoints written"),
                       ("iterations_run", "Iterations run (incl. lost work)")):
        vals = [getattr(data.timelines[s][1], key) for s in SCENARIOS]
        shown = {"goodput": percent, "mean_iteration_s": lambda v: figure("seconds", v),
                 "training_time_days": lambda v: figure("days", v)}.get(key, lambda v: v)
        rows.append((label, *[shown(v) for v in vals]))
    steady, tl_host = data.results["host"], data.timelines["host"][1]
    ckpt = (steady.get("breakdown_s") or {}).get("checkpoint", 0.0)
    # the two iterations differ by the checkpoint writes: said where there are any
    why = [para(f"{LABEL['host']}: {iteration_note(steady['iteration_time_s'], ckpt, tl_host.mean_iteration_s)}.",
                small=True)] if ckpt > 0 and tl_host.finished else []
    return "".join([
        heading("Utilization over time"),
        para("The whole run played out in simulated time with jitter, data loading, checkpoints "
             f"and failures (seed {data.seed}); each point is the time-weighted mean of one of "
             f"{PLOT_BINS} equal slices of the run. These pages play out the host-managed and "
             "DPU-offloaded runs; the SmartNIC-offloaded run appears in the tables of the other "
             "sections (its steady-state figures), not over time."),
        *[image(name, *size, DPI) for name, size in charts.items()],
        table(["Run", LABEL["host"], LABEL["dpu"]], rows, [40, 30, 30], "lrr"),
        *why,
        *[para(f"{LABEL[s]}: {data.timelines[s][1].unfinished_text()}.") for s in SCENARIOS
          if not data.timelines[s][1].finished],
    ])


def _comparison(data: ReportData) -> str:
    rows = []
    for metric, values, lower_better in comparison_rows(data):
        host, dpu = values["host"], values["dpu"]
        fact = row_fact(metric)
        if fact is None:
            diff, rel = delta_text(host, dpu)
            cells = [values[s] for s in MODES]
        else:  # at the fact's one precision, the difference of the shown figures
            diff = delta(fact, host, dpu) or "–"
            rel = "–" if diff in ("–", "equal") else delta_text(host, dpu)[1]
            cells = [figure(fact, v) if isinstance(v, (int, float)) else v for s, v in values.items()]
        rows.append((metric, *cells, diff, rel, best_mode(values, lower_better, fact)))
    h, n, d = (data.results[s] for s in MODES)
    change = delta("days", h["training_time_days"], d["training_time_days"])
    verdict = ((f"Offloading the infrastructure stacks to the DPUs leaves the steady-state training "
                f"time at {days(h['training_time_days'])} (equal at a tenth of a day)"
                if change == "equal" else
                f"Offloading the infrastructure stacks to the DPUs changes the steady-state "
                f"training time from {days(h['training_time_days'])} to "
                f"{days(d['training_time_days'])} ({change} days)")
               + f"; with SmartNICs it is {days(n['training_time_days'])}.")
    return "".join([
        heading("Host vs SmartNIC vs DPU"),
        para("The same design run three times: host-managed (plain NICs; the host CPUs run the "
             "network, storage, crypto and virtualization stacks), SmartNIC-offloaded (the adapters "
             "as ConnectX SmartNICs: inline crypto and virtual-switch offload, RDMA kept, no Arm "
             "services; the host CPUs run the rest) and DPU-offloaded (the servers' DPUs run the "
             "stacks). Change is DPU − host; Best names the mode with the best figure."),
        table(["Metric", *[SHORT[s] for s in MODES], "DPU − host", "Change (%)", "Best"], rows,
              [31, 11, 11, 11, 12, 12, 12], "lrrrrrl", small=True),
        *[para(f"{n[:1].upper()}{n[1:]}.", small=True) for n in
          (engine_load_notes(data.comparison.runs, LABEL) if data.comparison is not None else [])],
        para(verdict),
        *_modes_table(data),
        *_reasons(data),
    ])


def _modes_table(data: ReportData) -> list[str]:
    """Power and cost of the three modes side by side (``Comparison.modes``)."""
    cmp = data.comparison
    if cmp is None or not all(s in cmp.modes for s in MODES):
        return []
    m = cmp.modes
    energy = [m[s]["energy_kwh"] for s in MODES]
    unit, div = ("MWh", 1e3) if max(energy) >= 1e3 else ("kWh", 1.0)
    costs = all(math.isfinite(m[s]["energy_cost"]) for s in MODES)
    power = power_rows([cmp.runs[s] for s in MODES])
    rows = [(LABEL[s], *[values[i] for _, values, _ in power],
             (figure("MWh", m[s]["energy_kwh"] / div) if div > 1 else num(m[s]["energy_kwh"]))
             if math.isfinite(m[s]["energy_kwh"]) else "–",
             _usd(m[s]["energy_cost"]) if costs else "–", figure("seconds", m[s]["iteration_time_s"]),
             percent(m[s]["infra_fraction"])) for i, s in enumerate(MODES)]
    return ["<h2>Power and energy cost of the three modes</h2>",
            table(["Mode", *[label for label, _, _ in power], f"Energy ({unit})", "Energy cost (USD)",
                   "Iteration (s)", "Host infra share"], rows,
                  [20, *[(80 - 47) // len(power)] * len(power), 11, 13, 11, 12], "l" + "r" * (len(power) + 4),
                  small=True),
            para("Power at training load: adapters at their catalog maxima and at their datasheet "
                 "typical power" + ("" if has_typical([cmp.runs[s] for s in MODES]) else f" ({NO_TYPICAL})")
                 + "; the cluster power on the basis the energy counts (scenario "
                 "adapter_power; 'max' or 'typical' in its name). The host-managed and SmartNIC runs "
                 "price each drawn DPU as the ConnectX of the same line rate. Energy cost = energy "
                 "of the run × the electricity price of the engine's cost figures "
                 "(models/costs/energy.toml).", small=True)]


def _costs(data: ReportData) -> str:
    """The priced bill (basis per line), the site's TCO figures, the TCO's parts and the cost
    figures per mode, the paybacks and how much of the CapEx rests on which price basis: the
    names and values of ``dpu-designer cost`` (``services.cost.figure_rows``,
    ``payback_lines``)."""
    from designer.services.cost import figure_rows, money, payback_lines

    c = data.costs
    if c is None:
        return "".join([heading("Costs"), para("The design could not be priced"
                                               + (f": {data.costs_error}" if data.costs_error else "")
                                               + ". 'dpu-designer cost FILE' says what is missing.")])
    bill = c.bill
    lines = [(f"{ln.category} {ln.model}", f"{ln.count:,}", money(ln.unit_USD), money(ln.total_USD),
              ln.basis, f"{ln.date} {ln.source}".strip()) for ln in bill.lines]
    lines.append((Markup("<b>CapEx (as drawn)</b>"), "", "", Markup(f"<b>{_esc(money(bill.capex_USD))}</b>"),
                  "", ""))
    share = assumed_share_line(c)
    names = list(c.modes)
    heads = [f"Costs ({c.currency})", *[SHORT[n] if n in SHORT else LABEL.get(n, n) for n in names]]
    figures = figure_rows(c)
    per_mode = ([(label, *values) for label, values, _ in figures[:2]]
                + [(Markup(f"&nbsp;&nbsp;{_esc(label)}"), *values) for label, values, _ in tco_part_rows(c)]
                + [(label, *values) for label, values, _ in figures[2:]])
    width = max(10, 60 // max(1, len(names)))
    site = [(k, f"{f.value:g}", f.source if f.source.startswith(f.basis) else f"{f.basis}: {f.source}")
            for k, f in c.site.items()]
    out = [heading("Costs"),
           para("The priced bill of materials as drawn, each line with the basis of its price "
                "(list, street, derived, assumed; design or component: a price set for this design "
                "or for one component in the app's inspector) and its date and source; then what each mode "
                "costs over the site's lifetime. The same figures as 'dpu-designer cost' and the end "
                "of 'dpu-designer compare'."),
           "<h2>Priced bill of materials</h2>",
           table(["Item", "Count", "Unit", "Total", "Basis", "Date, source"], lines,
                 [21, 9, 11, 12, 11, 36], "lrrrll", small=True)]
    if share:
        out.append(para(f"CapEx {share} (the basis of each line's price); the more of it rests on "
                        "assumed prices, the less the totals below are worth."))
    if bill.missing:
        out.append(para("Not priced (left out of the CapEx): " + ", ".join(bill.missing) + "."))
    if c.management is not None and c.management.switches:
        out.append(para(c.management.text()[0].upper() + c.management.text()[1:] + ": its switches, "
                        "cables and transceivers are the bill's Management lines; it carries no "
                        "training traffic."))
    out += ["<h2>Site figures of the TCO</h2>",
            table(["Figure", "Value", "Basis, source"], site, [30, 12, 58], "lrl", small=True),
            "<h2>Cost per mode</h2>",
            table(heads, per_mode, [100 - width * len(names), *[width] * len(names)],
                  "l" + "r" * len(names), small=True)]
    for x in c.modes.values():
        out += [para(f"{LABEL.get(x.mode, x.mode)}: {s}.", small=True) for s in x.swaps]
    backs = payback_lines(c, RUN_LABEL)  # the CLI's sentences, word for word
    if backs:
        out += ["<h2>Payback of the adapters</h2>",
                "<ul>" + "".join(f"<li>{_esc(t)}</li>" for t in backs) + "</ul>"]
    return "".join(out)


def _reasons(data: ReportData) -> list[str]:
    """Why the runs differ: the engine comparison's reason sentences (DPU vs host, then SmartNIC
    vs host and DPU vs SmartNIC) and the vendor claim."""
    cmp = data.comparison
    if cmp is None:
        return []
    out = ["<h2>Why they differ</h2>", "<h3>DPU-offloaded vs host-managed</h3>"]
    if cmp.reasons:
        out.append("<ul>" + "".join(f"<li>{_esc(planner_words(r))}</li>" for r in cmp.reasons) + "</ul>")
    else:
        out.append(para(f"No part of the iteration differs by more than {100 * MIN_DIFFERENCE:g} % "
                        "between the two runs."))
    for key, title in (("smartnic_vs_host", "SmartNIC-offloaded vs host-managed"),
                       ("dpu_vs_smartnic", "DPU-offloaded vs SmartNIC-offloaded")):
        if key not in cmp.mode_reasons:
            continue
        out.append(f"<h3>{title}</h3>")
        reasons = cmp.mode_reasons[key]
        out.append("<ul>" + "".join(f"<li>{_esc(planner_words(r))}</li>" for r in reasons) + "</ul>" if reasons else
                   para(f"No part of the iteration differs by more than {100 * MIN_DIFFERENCE:g} %, "
                        "and the adapters draw the same power."))
    claim, said = cmp.vendor_claim()["text"], cmp.vendor_claim()["verdict"]
    out.append(para(f"{claim[0].upper()}{claim[1:]}. Verdict: {said}."))
    out += [para(f"Note: {planner_words(n)}.", small=True) for n in cmp.notes]
    return out


def _jobs(data: ReportData) -> list[str]:
    """Several jobs on the fabric (``Result.tenants``): how the servers are split and what sharing
    costs the slowest job against itself alone; nothing for one job."""
    jobs = {s: data.results[s].get("tenants") or {} for s in MODES}
    t = jobs["host"]
    if t.get("jobs", 1) <= 1:
        return []
    idle = f", {t['idle_servers']} servers idle" if t.get("idle_servers") else ""
    rows = [(label, *[fmt(jobs[s]) for s in MODES]) for label, fmt in (
        ("Data-parallel group rate, shared (GB/s)", lambda j: j.get("dp_rate_shared_GBps")),
        ("Data-parallel group rate, alone (GB/s)", lambda j: j.get("dp_rate_alone_GBps")),
        ("Iteration time, shared (s)", lambda j: j.get("iteration_shared_s")),
        ("Iteration time, alone (s)", lambda j: j.get("iteration_alone_s")),
        ("Slowdown from sharing", lambda j: "–" if j.get("slowdown_pct") is None
         else f"{j['slowdown_pct']:+.1f} %"))]
    return ["<h2>Jobs sharing the fabric</h2>",
            para(f"{t['jobs']} jobs of {t['servers_per_job']} servers each, {t['placement']} "
                 f"placement{idle}. Every figure of this report is the slowest job's (job "
                 f"{t['slowest_job']}). Alone: the same job with the other jobs' traffic removed, "
                 f"on the same routes."),
            table(["", *[LABEL[s] for s in MODES]], rows, [37, 21, 21, 21], "lrrr")]


def _bottlenecks(data: ReportData) -> str:
    out = [heading("Bottlenecks")]
    for s in MODES:
        r = data.results[s]
        found = list(r.get("bottlenecks") or [])
        parts = {k: v for k, v in r["breakdown_s"].items() if k != "compute" and (v or 0) > 0}
        out.append(f"<h2>{LABEL[s]}</h2>")
        if parts:
            worst = max(parts, key=parts.get)
            share = parts[worst] / r["iteration_time_s"]
            out.append(para(f"Largest part of the iteration besides compute: "
                            f"{BREAKDOWN_LABEL.get(worst, worst).lower()}, {num(parts[worst])} s "
                            f"({percent(share)}). {BREAKDOWN_REMEDY.get(worst, '')}"))
        if found:
            out.append(table(["Bottleneck (engine)", "What would relieve it"],
                             [(planner_words(b), planner_words(remedy(b) or "–")) for b in found],
                             [55, 45], small=True))
        elif not parts:
            out.append(para("The iteration is all compute: nothing in the cluster holds the GPUs back."))
    links = sorted(data.results["host"].get("links") or [], key=lambda l: -_busy(l["utilization"]))
    if links:
        cables = data.design.topology.links

        def ends(link_id: str) -> str:
            cable = cables.get(link_id)
            return f"{cable.a} – {cable.b}" if cable else ""

        out += ["<h2>Busiest links (host-managed)</h2>",
                table(["Link", "Between", "Peak utilization", "Phase"],
                      [(l["id"], ends(l["id"]), percent(l["utilization"]), l["phase"])
                       for l in links[:BUSIEST_LINKS]],
                      [20, 40, 20, 20], "llrl", small=True)]
    return "".join(out)


def _grouped_overrides(overrides) -> list[tuple[str, str, str]]:
    """One row per (figure, value) with the components that set it: a 16,000-switch design sets
    ``tier`` on every switch, which as one row each ran to hundreds of pages."""
    groups: dict[tuple[str, str], list[str]] = {}
    for comp, f in overrides:
        groups.setdefault((f.name, _plain(f.value)), []).append(comp)
    rows = []
    for (name, value), comps in groups.items():
        who = ", ".join(comps) if len(comps) <= 3 else f"{len(comps):,} components: {comps[0]}, {comps[1]} … {comps[-1]}"
        rows.append((who, name, value))
    return rows


def _assumptions(data: ReportData) -> str:
    workload = data.design.workload or {}
    preset = workload.get("preset") or workload.get("id")
    if preset not in data.catalog.ids("workload"):
        preset = None
    out = [heading("Assumptions and sources"),
           para("Every catalog figure the design uses, with its source. An entry's source covers "
                "all its figures unless a figure has its own line.")]
    for e in assume.catalog_assumptions(data.design, data.catalog, preset):
        figures = ", ".join(f"{breakable(f.name)}\u00a0=\u00a0{_plain(f.value)}" for f in e.figures)
        out.append(f"<h3>{_esc(KIND_TITLE.get(e.kind, e.kind))}: {_esc(e.name)} ({_esc(e.id)})</h3>")
        out.append(para(f"Source: {e.source}", small=True))
        out.append(para(figures, small=True))
        own = e.own_sources
        if own:
            out.append(table(["Figure", "Value", "Source"],
                             [(breakable(f.name), _plain(f.value), f.source) for f in own],
                             [24, 12, 64], "lrl", small=True))
    overrides = _grouped_overrides(assume.design_overrides(data.design))
    if overrides:
        out += ["<h2>Figures set in the design</h2>",
                table(["Components", "Figure", "Value"], [(c, breakable(n), v) for c, n, v in overrides],
                      [50, 30, 20], "llr", small=True)]
    costs = assume.cost_assumptions(data.catalog)
    if costs:
        out += ["<h2>Engine cost figures</h2>",
                table(["Table", "Figure", "Value", "Source"],
                      [(breakable(t), breakable(f.name), _plain(f.value), f.source) for t, f in costs],
                      [11, 24, 11, 54], "llrl", small=True)]
    return "".join(out)


# ------------------------------------------------------------------------------------- assembly
def _sections(data: ReportData, sizes: dict) -> list[str]:
    """The HTML of every section after the summary (laid out once: only the summary's contents
    change between the two layouts :func:`build_report` makes)."""
    return [_topology(data, sizes["topology"]),
            _bom(data),
            _workload(data),
            _results(data, sizes["breakdown"]),
            _utilization(data, {k: sizes[k] for k in ("gpu-utilization", "cpu-dpu-utilization")}),
            _comparison(data),
            _costs(data),
            _bottlenecks(data),
            _assumptions(data)]


def _document(data: ReportData, images: dict, sections: list[str],
              contents: list[tuple[str, int]]) -> PdfDocument:
    body = [STYLE, "<body>", _summary(data, contents), *sections, "</body>"]
    return PdfDocument(f"{capped(data.design.name, NAME_WHOLE)} — design report", "".join(body), images,
                       f"dpu-designer {__version__}")


def build_report(design: Design, catalog, out_pdf: str | Path, *, png_dir: str | Path | None = None,
                 png_size: QSize = DEFAULT_PNG_SIZE, seed: int | None = None, date: str | None = None,
                 inputs=(), canvas=None) -> ReportInfo:
    """Write the report of ``design`` to ``out_pdf`` (and its figures as PNGs into ``png_dir``).

    ``canvas``: the scene class that draws the topology as the canvas does (the GUI's
    ``DesignScene``, given by the caller: the report does not import the GUI), else the overview
    picture (``topology_picture.topology_scene``).

    Every file is written atomically (``designer.safeio``) and none may be one of ``inputs`` (the
    design file): an error, a full disk or a kill leaves the old files or none."""
    out_pdf = check_target(out_pdf, inputs=inputs)
    if png_dir is not None:
        png_folder = Path(png_dir)
        if png_folder.exists() and not png_folder.is_dir():
            raise UsageError(f"--png-dir {png_folder}: is not a folder; give a folder for the PNGs")
    data = gather(design, catalog, seed=seed, date=date)
    page = page_geometry()
    width = round(page.width)
    scene = topology_scene(design, catalog, canvas)
    charts = {"breakdown": breakdown_chart(data), **utilization_charts(data)}
    images = {"topology": topology_image(scene, width, round(page.height * 0.55))}
    images.update({name: chart.image(width) for name, chart in charts.items()})
    sizes = {name: (img.width(), img.height()) for name, img in images.items()}
    sections = _sections(data, sizes)
    doc = _document(data, images, sections, [(t, 0) for t in SECTIONS[1:]])
    contents = [(t, p) for t, p in heading_pages(doc)]
    doc = _document(data, images, sections, contents)
    pages = write_pdf(doc, out_pdf, inputs=inputs)
    pngs = []
    if png_dir is not None:
        folder = Path(png_dir)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--png-dir {folder}: cannot create the folder ({exc.strerror})") from None
        pngs.append(save_picture(lambda p, r: paint_scene(scene, p, r), png_size,
                                 folder / "topology.png", title="Topology", inputs=inputs))
        for name, chart in charts.items():
            pngs.append(save_picture(chart.paint, png_size, folder / f"{name}.png", title=name,
                                     inputs=inputs))
    return ReportInfo(out_pdf, pages, pngs, data)
