"""``dpu-designer run FILE``: run the performance engine on a design file."""

from __future__ import annotations

import gc
import json
import math
import os
from dataclasses import fields

from designer.commands import COMMANDS
from designer.console import shown
from designer.errors import ResultError, UsageError
from designer.engine.resources import INFRA_TASKS
from designer.engine.result import SWITCH_PARTS
from designer.topology.design import SCENARIO_SPEC, Setting


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help=COMMANDS["run"],
                              description="Run the performance engine on a design file.")
    add_engine_options(p)
    p.add_argument("--timeline", metavar="OUT.csv",
                   help="also simulate the whole run (failures, checkpoints, stalls) and write its "
                        "timeline as CSV (- for standard output: the table then goes to standard "
                        "error); --json then carries its summary as 'timeline'")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def add_engine_options(p) -> None:
    """The design file and the workload/scenario options ``run`` and ``compare`` share."""
    p.add_argument("file", help="design file (.json); - reads it from standard input")
    p.add_argument("--workload", help="catalog workload id (see 'dpu-designer catalog') or a JSON file")
    for opt, help_ in (("--tp", "tensor-parallel size"), ("--pp", "pipeline-parallel size"),
                       ("--dp", "data-parallel size (default: fill the design)"),
                       ("--micro-batch", "micro-batch size"), ("--global-batch", "global batch size"),
                       ("--seq", "sequence length"), ("--interleave", "virtual stages per GPU")):
        p.add_argument(opt, type=_positive_int, help=help_)
    p.add_argument("--tokens", type=_positive_float, help="training token budget (e.g. 300e9)")
    p.add_argument("--tflops-per-gpu", type=_positive_float,
                   help="use this achieved TFLOP/s per GPU for the training time (paper eq. 4)")
    p.add_argument("--placement", help="rank nesting order, innermost first (default tp,pp,dp)")
    p.add_argument("--routing", choices=("ecmp", "adaptive"), help="override the design's routing")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                   help="change a scenario or workload setting for this run, e.g. "
                        "--set scenario.encryption=true --set scenario.tenants=4 "
                        "--set workload.global_batch=1024 (repeatable; the file is not changed)")
    p.add_argument("--seed", type=seed_arg, default=None, help="seed (default: the design's)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise UsageError(f"expected a positive whole number, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"expected a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise UsageError(f"expected a positive number, got {text!r}")
    return value


#: largest workload JSON file read (a workload is a few dozen fields: ~2 kB; 1 MiB is ample)
MAX_WORKLOAD_BYTES = 1024 * 1024


def _workload_arg(text: str | None):
    """A catalog workload id as given, or the object of a ``.json`` workload file. The file is
    checked to be a regular file before it is read (a FIFO would block, /dev/zero never end)."""
    from designer.safeio import open_input_text

    if not text:
        return text
    if not text.endswith(".json") and not (os.sep in text and os.path.lexists(text)):
        return text
    raw = open_input_text(text, what="--workload", max_bytes=MAX_WORKLOAD_BYTES)
    try:
        data = json.loads(raw)
    except RecursionError:
        raise UsageError(f"--workload: {text} is nested too deeply; a workload is one flat JSON object") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--workload: {text} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise UsageError(f"--workload: {text} must hold one JSON object of workload fields")
    if "components" in data or "format" in data:
        raise UsageError(f"--workload: {text} is a design file, not a workload; give it as the "
                         f"design (the first argument), or pass a catalog workload id (see "
                         f"'dpu-designer catalog workload') or a JSON object of workload fields")
    return data


def load_design(path: str):
    """The design in file ``path``; ``-`` (or ``/dev/stdin``) reads it from standard input, with
    the design file's size cap (``fileformat.MAX_FILE_BYTES``). Every command that reads a
    design takes it from here."""
    from designer.safeio import is_stdin, read_stdin_bytes
    from designer.topology import fileformat

    if not is_stdin(path):
        return fileformat.load(path)
    raw = read_stdin_bytes(what="design", max_bytes=fileformat.MAX_FILE_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fileformat.DesignFileError("<stdin>", [("", f"not a text (UTF-8) file (byte {exc.start})")]) from None
    return fileformat.loads(text, source="<stdin>")


def nonfinite_figures(data, where: str = "") -> list[str]:
    """The dotted names of every figure in ``data`` (a ``to_json()``-style tree of dicts, lists,
    numbers) that is a float but not a finite number; a list item is named ``name[i]``."""
    found: list[str] = []
    stack = [(where, data)]
    while stack:
        name, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                found.append(name)
        elif isinstance(value, dict):
            stack.extend((f"{name}.{k}" if name else str(k), v) for k, v in reversed(value.items()))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{name}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return found


#: the figures of a Result checked by :func:`check_finite` (what the table and --json show; the
#: links are arrays checked at once, the optional ones may be None)
_RESULT_FIGURES = ("iteration_time_s", "breakdown_s", "tflops_per_gpu", "mfu", "percent_of_peak",
                   "tokens_per_s", "training_time_days", "parameters", "collectives", "storage",
                   "host_cpu", "dpu", "power_W", "samples_per_s", "memory_per_gpu_GB", "memory_parts_GB", "gpu_memory_GB", "tenants",
                   "hidden_s")


def check_finite(result) -> None:
    """Raise :class:`ResultError` (exit 1) naming the figures of ``result`` that are NaN or
    infinite: printed, they would be ``nan`` in the table and ``null`` in the JSON with exit 0,
    a result that looks like one. ``energy_kwh`` is left out: it is NaN by design where the
    power of a part is not known (the table prints ``-``)."""
    from dataclasses import asdict, is_dataclass

    import numpy as np

    bad: list[str] = []
    for name in _RESULT_FIGURES:
        value = getattr(result, name, None)
        if isinstance(value, list):
            value = [asdict(v) if is_dataclass(v) else v for v in value]
        bad += nonfinite_figures(_plain(value), name)
    links = getattr(result, "links", None)
    util = getattr(links, "utilization", None)
    if util is not None:
        util = np.asarray(util, dtype=float)
        if not np.isfinite(util).all():
            bad.append(f"links.utilization ({int((~np.isfinite(util)).sum())} links)")
    else:
        for i, link in enumerate(links or []):
            if not math.isfinite(float(link.utilization)):
                bad.append(f"links[{i}].utilization")
    if bad:
        shown_names = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise ResultError(f"the result is not a finite number for {shown_names}, so it is not "
                          f"printed; check the options and the workload (e.g. --tflops-per-gpu, "
                          f"--tokens, --set) and the design (dpu-designer validate FILE)")


def _plain(value):
    """numpy scalars as Python numbers, for :func:`nonfinite_figures`."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, tuple, str)):
        try:
            return value.item()
        except (ValueError, TypeError):
            return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


#: scenario keys --set accepts besides the design file's own (``designer.topology.design``)
EXTRA_SCENARIO_KEYS = {"nic_as_dpu": Setting("nic_as_dpu", bool, False,
                                             "servers without a drawn DPU use their NICs as DPUs in "
                                             "DPU-offloaded runs")}


def apply_sets(design, sets: list[str]) -> dict:
    """Apply ``--set section.key=value`` to ``design`` (values are JSON: true, 4, 2.5, "x"; a bare
    word is a string). Unknown keys and values the design file could not hold are refused.
    Returns the workload values set (``--workload`` replaces the design's workload; these go on
    top of it)."""
    from designer.engine.workload import Workload
    from designer.topology.fileformat import workload_problem

    scenario_keys = {**SCENARIO_SPEC, **EXTRA_SCENARIO_KEYS}
    workload_keys = {f.name for f in fields(Workload)} | {"preset", "placement", "ep_within_domain"}
    workload_sets: dict = {}
    for item in sets:
        key, eq, text = item.partition("=")
        section, _, name = key.strip().partition(".")
        if not eq or not name or section not in ("scenario", "workload"):
            raise UsageError(f"--set {item}: write scenario.NAME=VALUE or workload.NAME=VALUE, "
                             f"e.g. --set scenario.encryption=true")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text.strip()
        if section == "scenario":
            if name not in scenario_keys:
                raise UsageError(f"--set {item}: unknown scenario setting '{name}' "
                                 f"(known: {', '.join(sorted(scenario_keys))})")
            problem = scenario_keys[name].problem(value)
            if problem:
                raise UsageError(f"--set {item}: {problem}")
            design.scenario[name] = int(value) if scenario_keys[name].type is int else value
        else:
            if name not in workload_keys:
                raise UsageError(f"--set {item}: unknown workload setting '{name}' "
                                 f"(known: {', '.join(sorted(workload_keys))})")
            problem = workload_problem(name, value)
            if problem:
                raise UsageError(f"--set {item}: workload.{name} {problem}")
            design.workload[name] = value
            workload_sets[name] = value
    return workload_sets


def seed_arg(text: str) -> int:
    """argparse type of ``--seed``: a whole number the design's scenario seed could hold."""
    spec = SCENARIO_SPEC["seed"]
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or spec.problem(value):
        shown = text if text.isprintable() else repr(text)  # a line end would split the one line
        raise UsageError(f"--seed {shown}: must be {spec.allowed()}")
    return value


def design_seed(design, seed: int | None) -> int:
    """``seed``, or the design's scenario seed when it is None."""
    return seed if seed is not None else int(design.scenario.get("seed", 0))


def prepare(args):
    """``(design, catalog, seed, engine keyword arguments)`` from the shared options."""
    from designer.topology.catalog import load_catalog, report_problems

    design = load_design(args.file)
    workload_sets = apply_sets(design, args.sets)
    if args.routing:
        design.scenario["routing"] = args.routing
    seed = design_seed(design, args.seed)
    workload = _workload_arg(args.workload)
    if workload and workload_sets:  # --set workload.X=... goes on top of --workload
        workload = {**({"preset": workload} if isinstance(workload, str) else workload), **workload_sets}
    kwargs = dict(workload=workload, tp=args.tp, pp=args.pp, dp=args.dp,
                  micro_batch=args.micro_batch, global_batch=args.global_batch, seq_len=args.seq,
                  interleave=args.interleave, tokens=args.tokens,
                  tflops_per_gpu=args.tflops_per_gpu, placement=args.placement)
    catalog = load_catalog()
    report_problems(catalog)
    return design, catalog, seed, kwargs


def run(args) -> int:
    """The command. The loaded design's objects (~600k at 131k GPUs) are made with the cycle
    collector paused (``designer.gcpause``) and then frozen (``gc.freeze``): they hold no cycles,
    and a collector pass over them when it is switched back on, and in the engine's full passes,
    is time spent for nothing (~0.3 s of a 131k-GPU run). They are unfrozen when the command
    ends, whichever way (``main`` may run in a longer-lived process, such as the tests)."""
    from designer.gcpause import collector_paused
    from designer.safeio import console_target, is_stdin

    inputs = [args.file] + ([args.workload] if args.workload and os.path.lexists(args.workload) else [])
    if args.timeline is not None:  # refuse a bad output path before the engine runs
        from designer.safeio import check_output_path

        check_output_path(args.timeline, inputs=[p for p in inputs if not is_stdin(p)], what="--timeline")
        if console_target(args.timeline) == 1 and args.json:
            raise UsageError(f"--timeline {args.timeline} and --json both write to standard output; "
                             "write the timeline to a file (--timeline OUT.csv)")
    freeze = gc.isenabled() and not gc.get_freeze_count()
    try:
        with collector_paused():
            try:
                design, catalog, seed, kwargs = prepare(args)
            finally:
                if freeze:
                    gc.freeze()
        return _run(args, design, catalog, seed, kwargs, [p for p in inputs if not is_stdin(p)])
    finally:
        if freeze:
            gc.unfreeze()


def _run(args, design, catalog, seed, kwargs, inputs) -> int:
    """``run`` once the design is loaded: solve, check every figure is a number, then print the
    table (on stderr when the timeline CSV takes stdout) or the JSON."""
    import sys

    from designer.engine.pipeline import run as engine_run
    from designer.safeio import console_target, stream_name

    result = engine_run(design, catalog, seed=seed, **kwargs)
    check_finite(result)
    extra = {}
    if args.timeline:
        from designer.engine.timeline import TimelineRun, inputs_of, write_csv

        tl = TimelineRun(inputs_of(result, design), seed=seed)
        rows = write_csv(tl.batches(), args.timeline, inputs=inputs)  # the summary is made as it goes
        summary = tl.summary.to_json()
        bad = nonfinite_figures(summary, "timeline")
        if bad:
            raise ResultError(f"the timeline's summary is not a number for {', '.join(bad[:5])} "
                              f"(its CSV is written); check the design's failure and checkpoint settings")
        extra["timeline"] = summary
        extra["timeline"]["csv"], extra["timeline"]["rows"] = args.timeline, rows
    if args.json:
        print(result.json_text(extra, indent=1))  # json.dumps' text, its links written from arrays
        return 0
    out = sys.stderr if args.timeline and console_target(args.timeline) == 1 else sys.stdout
    print(format_table(result, design), file=out)
    if args.timeline:
        t = extra["timeline"]
        where = stream_name(args.timeline) or args.timeline
        print(file=out)
        print(shown(f"timeline            {rows} rows written to {where}: "
                    f"{t['training_time_days']:.1f} days wall time, goodput {100 * t['goodput']:.1f}%, "
                    f"{t['failures']} failures, {t['checkpoints']} checkpoints"), file=out)
        if not tl.summary.finished:
            print(f"warning: {shown(tl.summary.unfinished_text())}", file=out)
        if tl.summary.note:
            print(f"note: {shown(tl.summary.note)}", file=out)
    return 0


#: breakdown parts that exist only with a parallel dimension above 1: a zero row of a layout
#: without that dimension says nothing and is not printed
_LAYOUT_PARTS = {"cp_comm": "cp", "ep_comm": "ep"}


def format_table(r, design=None) -> str:
    """The readable result; with the design, links are shown with their two ends. The iteration's
    parts are named as the app names them (``services.style.PART_LABEL``)."""
    from designer.services.style import figure, part_label

    w = r.workload
    extra = "".join(f" {d}={w[d]}" for d in ("cp", "ep") if int(w.get(d, 1) or 1) > 1)
    lines = [f"workload   {w['name']}  (tp={w['tp']} pp={w['pp']} dp={w['dp']}{extra}, {r.gpus} GPUs, "
             f"{r.parameters / 1e9:.1f}B parameters)",
             f"placement  {r.placement['order']}, {r.placement['servers_used']} servers",
             "",
             f"iteration time             {r.iteration_time_s:10.3f} s"]
    for k, v in r.breakdown_s.items():
        if v == 0 and k in _LAYOUT_PARTS and int(w.get(_LAYOUT_PARTS[k], 1) or 1) <= 1:
            continue  # e.g. cp_comm of a layout without context parallelism (the JSON keeps it)
        if v == 0 and k in SWITCH_PARTS and not w.get(SWITCH_PARTS[k]):
            continue  # activation or optimizer offload not asked for (the JSON keeps the zero)
        share = 100 * v / r.iteration_time_s if r.iteration_time_s else 0.0
        lines.append(f"  {part_label(k):<24} {v:10.3f} s  {share:5.1f}%")
        if k == "optimizer_offload" and getattr(r, "optimizer_offload", None):
            from designer.report.names import optimizer_offload_text

            lines.append("    " + optimizer_offload_text(r.optimizer_offload))
    hidden = [f"{d} {v:.3f} s" for d, v in (r.hidden_s or {}).items() if v > 0]
    if hidden:
        lines.append("  hidden by overlap: " + ", ".join(hidden))
    lines += [f"TFLOP/s per GPU            {figure('tflops', r.tflops_per_gpu):>10}   "
              f"({figure('percent', r.percent_of_peak)}% of peak, MFU {figure('percent', 100 * r.mfu)}%)",
              (f"tokens/s                   {figure('tokens_per_s', r.tokens_per_s):>10}" if w.get("kind") != "vision"
               else f"samples/s                  {r.samples_per_s:10.4g}"),
              f"training time              {_days(r.training_time_days)}  ({_budget(w)})",
              f"energy                     {_kwh(r.energy_kwh):>10}  ({figure('kW', r.power_W.get('total', 0) / 1e3)} kW)",
              *memory_lines(r), "", *resource_lines(r), *job_lines(r)]
    lines += ["", f"{'collective':<18} {'algorithm':<13} {'bytes':>10} {'time':>10} {'algbw':>9} {'busbw':>9}"]
    for c in r.collectives:
        lines.append(f"{c.name:<18} {c.algorithm:<13} {_size(c.bytes):>10} {c.time_s * 1e3:8.3f}ms "
                     f"{c.algbw_GBps:7.1f}GB/s {c.busbw_GBps:6.1f}GB/s")
    busy = [l for l in r.top_links(5) if l.utilization > 0]
    if busy:
        links = design.topology.links if design is not None else {}

        def name(link_id: str) -> str:
            link = links.get(link_id)
            return f"{link_id} ({link.a} - {link.b})" if link else link_id

        lines += ["", "busiest links"] + [f"  {name(l.id):<34} {100 * l.utilization:5.1f}%  ({l.phase})"
                                          for l in busy]
    from designer.report.names import planner_words  # the words the app and the report use

    if r.bottlenecks:
        lines += ["", "bottlenecks"] + [f"  {i + 1}. {planner_words(b)}" for i, b in enumerate(r.bottlenecks[:5])]
    for warn in r.warnings:
        lines.append(f"warning: {planner_words(warn)}")
    return "\n".join(map(shown, lines))  # one printable line each, whatever the design's names hold


def memory_lines(r) -> list[str]:
    """The memory estimate per GPU (``Result.memory_per_gpu_GB``) and its parts
    (``Result.memory_parts_GB``, the names of the JSON), how the activations are counted and the
    GPU's memory with whether the estimate fits, when the parameters are known: the names and
    values of ``report.names.memory_rows``, which the app and the report show."""
    from designer.report.names import (GPU_MEMORY, MEMORY_PER_GPU, activations_text, fits_text,
                                       memory_part_name, memory_parts_shown)
    from designer.services.style import figure

    if r.memory_per_gpu_GB is None:
        return []
    shown = ", ".join(f"{memory_part_name(k)} {figure('GB', v)}" for k, v in memory_parts_shown(r))
    lines = [f"{MEMORY_PER_GPU:<26} {figure('GB', r.memory_per_gpu_GB):>10} GB" + (f"  ({shown})" if shown else "")]
    acts = activations_text(r)
    if acts:
        lines.append(f"  {acts}")
    cap = getattr(r, "gpu_memory_GB", None)
    if cap:
        lines.append(f"{GPU_MEMORY:<26} {figure('GB', cap):>10} GB  (fits: {fits_text(r)})")
    return lines


def resource_lines(r) -> list[str]:
    """Host CPU, adapter (SmartNIC/DPU) engine and storage lines of the readable table."""
    h = r.host_cpu
    by_task = h.get("by_task", {})
    tasks = ", ".join(f"{t} {100 * v:.1f}%" for t, v in by_task.items() if v > 0 and t in INFRA_TASKS)
    loading = by_task.get("data_loading", 0.0)
    lines = [f"host CPU                   {h.get('cores_total', 0):10d} cores, infrastructure "
             f"{100 * h.get('infra_fraction', 0.0):.1f}% of cycles" + (f" ({tasks})" if tasks else "")
             + (f"; data loading {100 * loading:.1f}%" if loading > 0 else "")]
    if r.dpu:
        over = any(v > 1 for v in r.dpu.values())
        lines.append("adapter engine load        " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in r.dpu.items())
                     + ("  (demand / capacity; above 100% = over-subscribed)" if over else ""))
    st = r.storage
    write = st.get("checkpoint_write_s")
    lines.append(f"storage                    read {_num(st.get('read_achieved_GBps'))} of "
                 f"{_num(st.get('read_demand_GBps'))} GB/s needed; "
                 + (f"checkpoint write {write:.3g} s" if write is not None
                    else "no storage: checkpoints not written"))
    return lines


def job_lines(r) -> list[str]:
    """The jobs sharing the fabric (``Result.tenants``), when there are several: how the servers
    are split and what sharing costs the slowest job against itself alone."""
    t = getattr(r, "tenants", None) or {}
    if t.get("jobs", 1) <= 1:
        return []
    idle = f", {t['idle_servers']} idle" if t.get("idle_servers") else ""
    lines = ["", f"jobs                       {t['jobs']:10d} x {t['servers_per_job']} servers, "
                 f"{t['placement']}{idle}; figures above are the slowest job's (job {t['slowest_job']})"]
    shared, alone = t.get("dp_rate_shared_GBps"), t.get("dp_rate_alone_GBps")
    if shared is not None and alone is not None:
        lines.append(f"  DP group rate            {shared:10.3g} GB/s shared, {alone:.3g} GB/s alone")
    lines.append(f"  iteration                {t['iteration_shared_s']:10.3f} s shared, "
                 f"{t['iteration_alone_s']:.3f} s alone: {t['slowdown_pct']:+.1f}% from sharing")
    return lines


def _days(days: float) -> str:
    """Days with one decimal, or hours/seconds for short runs (a vision epoch can take minutes);
    beyond a million days (a token budget of 1e300) in powers of ten, not 300 digits."""
    if days >= 1e6:
        return f"{days:10.3g} days"
    if days >= 1:
        return f"{days:10.1f} days"
    if days * 24 >= 1:
        return f"{days * 24:10.1f} hours"
    return f"{days * 86400:10.0f} s"


def _budget(w: dict) -> str:
    if w.get("kind") == "vision":
        samples = w.get("dataset_samples") or 0
        return f"{w.get('epochs', 1):g} epochs of {samples:,.0f} samples" if samples else "see warnings"
    tokens = w["tokens"]
    # as the report's 'Training tokens' (no 1.5e+13); beyond 10^18 in powers of ten, not 300 digits
    return f"{tokens:,.0f} tokens" if tokens < 1e18 else f"{tokens:.3g} tokens"


def _num(value) -> str:  # also used by compare
    """A figure for the table, '-' where the engine has none."""
    return "-" if value is None else f"{value:.3g}"


def _kwh(v: float) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    from designer.services.style import figure

    return f"{figure('MWh', v / 1e3)} MWh" if v >= 1e4 else f"{v:.4g} kWh"


def _size(n: float) -> str:
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return f"{n:.0f}B"
