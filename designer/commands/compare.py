"""``dpu-designer compare FILE``: the design host-managed, SmartNIC-offloaded and DPU-offloaded,
side by side, with each mode's adapter power and energy cost.

Same workload and scenario options as ``run``. The numbers come from
:func:`designer.engine.compare.compare`, which the GUI and the report use too.
"""

from __future__ import annotations

import json
import math

from designer.commands import COMMANDS
from designer.commands.run import _num, add_engine_options, check_finite, prepare
from designer.console import shown
from designer.engine.resources import INFRA_TASKS
from designer.errors import ResultError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare", help=COMMANDS["compare"],
        description="Run the design three times: every server host-managed (plain NICs; the host "
                    "CPU runs the network, storage, crypto and virtualization stacks), "
                    "SmartNIC-offloaded (ConnectX inline crypto and ASAP2 switching, RDMA kept, "
                    "no Arm services) and DPU-offloaded (BlueField DPUs run the stacks), plus the "
                    "design's own per-server mix if it has one; print them with power, energy "
                    "cost, the differences and their reasons.")
    add_engine_options(p)
    p.add_argument("--json", action="store_true",
                   help='print {"host": {...}, "smartnic": {...}, "dpu": {...}, "deltas": {...}, '
                        '"mode_deltas": {...}, "modes": {...}, ...} (run --json objects)')
    p.set_defaults(func=run)


def run(args) -> int:
    from designer.commands.cost import format_costs
    from designer.engine.compare import LABEL, compare
    from designer.services.cost import costs

    design, catalog, seed, kwargs = prepare(args)
    cmp = compare(design, catalog, seed=seed, **kwargs)
    for name, result in cmp.runs.items():  # each mode's run, as run checks its one
        try:
            check_finite(result)
        except ResultError as exc:
            raise ResultError(f"{LABEL.get(name, name)} run: {exc}") from None
    money = costs(design, catalog, cmp)  # the `cost` command's figures of these runs
    if args.json:
        print(json.dumps({**cmp.to_json(), "costs": money.to_json()}, indent=1))
    else:
        print(format_table(cmp) + "\n\n" + format_costs(money, bill=False))
    return 0


def _pct(v: float) -> str:
    return "" if v is None or not math.isfinite(v) else f"{v:+.1f}%"


def format_table(cmp) -> str:
    """The comparison as text, one line per figure. Every line goes through
    :func:`designer.console.shown`: the notes, differences, bottlenecks and warnings carry design
    text (component and workload names), and one of them with a line break in it would forge a
    line of its own; the table's own text has no character that ``shown`` changes."""
    from designer.engine.compare import LABEL, loading
    from designer.report.names import (ENERGY, STEADY_DAYS, TFLOPS, engine_label, engine_load_notes, memory_rows,
                                       planner_words)  # the app's and the report's words
    from designer.services.style import delta, figure, part_label

    names = list(cmp.runs)
    runs = [cmp.runs[n] for n in names]
    W = 20  # column width: "SmartNIC-offloaded" fits
    L = 44  # label width: "DPU memory bandwidth (Arm data paths) load" fits
    head = f"{'':<{L}}" + "".join(f"{LABEL[n]:>{W}}" for n in names) + f"{'DPU − host':>14}{'':>9}"
    lines = [head]

    def row(label: str, values: list[str], delta: dict | None = None, fmt: str = "{:+.3g}") -> None:
        ok = delta is not None and math.isfinite(delta["delta"])
        d = (fmt.format(delta["delta"]) if delta is not None and ok else "").rjust(14)
        lines.append(f"{label:<{L}}" + "".join(v.rjust(W) for v in values) + d
                     + (_pct(delta["percent"]).rjust(9) if delta is not None and ok else ""))

    def fact_row(label: str, fact: str, values: list[float], scale: float = 1.0, unit: str = "",
                 suffix: str = "", relative: bool = True) -> None:
        """A figure of each run at the fact's one precision (``services.style.figure``), and DPU −
        host as the difference of the two shown figures ("equal" when they read the same)."""
        cells = [figure(fact, scale * v) + suffix for v in values]
        host, dpu = values[names.index("host")], values[names.index("dpu")]
        d = delta(fact, scale * host, scale * dpu, unit) if "host" in names and "dpu" in names else ""
        rel = _pct(100 * (dpu - host) / host) if relative and d not in ("", "equal") and host else ""
        lines.append(f"{label:<{L}}" + "".join(v.rjust(W) for v in cells) + d.rjust(14) + rel.rjust(9))

    D = cmp.deltas
    fact_row("iteration time (s)", "seconds", [r.iteration_time_s for r in runs])
    for k in D["breakdown_s"]:
        if any(r.breakdown_s.get(k, 0.0) for r in runs):
            fact_row(f"  {part_label(k)}", "seconds", [r.breakdown_s.get(k, 0.0) for r in runs])
    if any(r.tflops_per_gpu > 0 for r in runs):  # a vision workload without FLOPs has neither
        fact_row(TFLOPS, "tflops", [r.tflops_per_gpu for r in runs])
        fact_row("MFU", "percent", [r.mfu for r in runs], 100, " pts", "%")
    else:
        row("samples/s", [f"{r.samples_per_s:.4g}" for r in runs])
    if min(r.training_time_days for r in runs) >= 1:
        fact_row(STEADY_DAYS[:1].lower() + STEADY_DAYS[1:], "days", [r.training_time_days for r in runs])
    else:  # a short run (e.g. an MLPerf Storage emulation) in seconds
        fact_row("training time (s)", "seconds", [r.training_time_days for r in runs], 86400)
    unit = 1e3 if max(r.energy_kwh for r in runs) >= 1e3 else 1.0  # MWh, or kWh for short runs
    fact_row("e" + ENERGY[1:].replace("MWh", "MWh" if unit > 1 else "kWh"), "MWh", [r.energy_kwh for r in runs],
             1 / unit)
    memory = [{n: (v, i) for n, v, _tip, i in memory_rows(r)} for r in runs]  # as run prints them
    for name in dict.fromkeys(n for m in memory for n in m):
        indent = any(m.get(name, ("", False))[1] for m in memory)
        row(("  " if indent else "") + name, [m.get(name, ("–",))[0] for m in memory])
    fact_row("host infra share", "percent", [r.host_cpu["infra_fraction"] for r in runs], 100, " pts", "%")
    for t in INFRA_TASKS:
        if any(r.host_cpu["by_task"].get(t, 0.0) for r in runs):
            row(f"  {t}", [f"{100 * r.host_cpu['by_task'].get(t, 0.0):.1f}%" for r in runs])
    # the agents a DPU runs instead of the host: the same task, costed on the Arm cores
    arm = [(r.resources or {}).get("arm_by_task", {}) for r in runs]
    for t in sorted({t for a in arm for t in a}):
        row(f"  {t} on Arm", [f"{a[t]:.2f} cores" if t in a else "-" for a in arm])
    loads = [loading(r) for r in runs]
    # data loading is the application's own work, not infrastructure: its own rows, shown when it
    # takes a visible share (LLM loaders slice pre-tokenized data and cost next to nothing)
    if any(r.host_cpu["by_task"].get("data_loading", 0.0) >= 0.001 for r in runs) and any(loads):
        row("host data loading", [f"{100 * r.host_cpu['by_task'].get('data_loading', 0.0):.1f}%"
                                  for r in runs])
        row("loader cores need/free", ["-" if g is None else
                                       f"{g['load_cores_needed']:.1f}/{g['load_cores_free']:.1f}"
                                       for g in loads])
    engines = sorted({e for r in runs for e in r.dpu})
    for e in engines:
        # the SmartNIC column holds the ConnectX engines, the DPU column the DPUs' (and, where the
        # design keeps ConnectX on its rails, their line and crypto engines)
        row(f"{engine_label(e)} load", [f"{100 * r.dpu[e]:.0f}%" if e in r.dpu else "-" for r in runs])
    lines += [f"  note: {n}" for n in engine_load_notes(cmp.runs, LABEL)]  # what a load above 100% means
    if any(r.storage.get("read_demand_GBps") for r in runs):
        row("storage read (GB/s)", [f"{r.storage['read_achieved_GBps']:.3g}/{r.storage['read_demand_GBps']:.3g}"
                                    for r in runs])
    row("checkpoint write (s)", [_num(r.storage.get("checkpoint_write_s")) for r in runs])
    from designer.engine.compare import mode_figures
    from designer.report.names import power_rows

    figs = [mode_figures(r) for r in runs]
    for label, values, _ in power_rows(runs):  # the app's and the report's rows and names
        row(label[:1].lower() + label[1:], values)
    if all(math.isfinite(f["energy_cost"]) for f in figs):
        row("energy cost (USD)", [f"{f['energy_cost']:,.0f}" if f["energy_cost"] >= 100 else
                                  f"{f['energy_cost']:.3g}" for f in figs])
    claim = cmp.vendor_claim()
    lines += ["", claim["text"], f"verdict: {claim['verdict']}"]
    if cmp.notes:
        lines += ["", *[f"note: {n}" for n in cmp.notes]]
    if cmp.reasons:
        lines += ["", "differences, DPU vs host"] + [f"  - {planner_words(r)}" for r in cmp.reasons]
    for key, title in (("smartnic_vs_host", "SmartNIC vs host"), ("dpu_vs_smartnic", "DPU vs SmartNIC")):
        if cmp.mode_reasons.get(key):
            lines += ["", f"differences, {title}"] + [f"  - {planner_words(r)}" for r in cmp.mode_reasons[key]]
    for n, r in zip(names, runs):
        if r.bottlenecks:
            lines += ["", f"bottlenecks, {LABEL[n]}"] + [f"  {i + 1}. {planner_words(b)}"
                                                         for i, b in enumerate(r.bottlenecks[:6])]
        lines += [f"warning ({LABEL[n]}): {planner_words(w)}" for w in r.warnings]
    return "\n".join(shown(line).rstrip() for line in lines)
