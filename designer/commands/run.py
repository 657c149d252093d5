"""``dpu-designer run FILE``: run the performance engine on a design file."""

from __future__ import annotations

import json
import math

from designer.errors import UsageError


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="predict iteration time, throughput and bottlenecks of a design",
                              description="Run the performance engine on a design file.")
    p.add_argument("file", help="design file (.json)")
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
    p.add_argument("--seed", type=int, default=None, help="seed (default: the design's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


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


def _workload_arg(text: str | None):
    if not text or not text.endswith(".json"):
        return text
    try:
        with open(text, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise UsageError(f"--workload: cannot read {text}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--workload: {text} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise UsageError(f"--workload: {text} must hold one JSON object of workload fields")
    return data


def load_design(path: str):
    from designer.topology import fileformat

    return fileformat.load(path)


def run(args) -> int:
    from designer.engine.pipeline import run as engine_run
    from designer.topology.catalog import load_catalog

    design = load_design(args.file)
    scenario = {"routing": args.routing} if args.routing else {}
    seed = args.seed if args.seed is not None else int(design.scenario.get("seed", 0))
    result = engine_run(design, load_catalog(), scenario=scenario, seed=seed,
                        workload=_workload_arg(args.workload), tp=args.tp, pp=args.pp, dp=args.dp,
                        micro_batch=args.micro_batch, global_batch=args.global_batch, seq_len=args.seq,
                        interleave=args.interleave, tokens=args.tokens,
                        tflops_per_gpu=args.tflops_per_gpu, placement=args.placement)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
        return 0
    print(format_table(result))
    return 0


def format_table(r) -> str:
    w = r.workload
    lines = [f"workload   {w['name']}  (tp={w['tp']} pp={w['pp']} dp={w['dp']}, {r.gpus} GPUs, "
             f"{r.parameters / 1e9:.1f}B parameters)",
             f"placement  {r.placement['order']}, {r.placement['servers_used']} servers",
             "",
             f"iteration time      {r.iteration_time_s:10.3f} s"]
    for k, v in r.breakdown_s.items():
        share = 100 * v / r.iteration_time_s if r.iteration_time_s else 0.0
        lines.append(f"  {k:<17} {v:10.3f} s  {share:5.1f}%")
    lines += [f"TFLOP/s per GPU     {r.tflops_per_gpu:10.1f}   ({r.percent_of_peak:.0f}% of peak, "
              f"MFU {100 * r.mfu:.0f}%)",
              f"tokens/s            {r.tokens_per_s:10.4g}",
              f"training time       {r.training_time_days:10.1f} days  ({w['tokens']:.3g} tokens)",
              "", f"{'collective':<18} {'algorithm':<13} {'bytes':>10} {'time':>10} {'algbw':>9} {'busbw':>9}"]
    for c in r.collectives:
        lines.append(f"{c.name:<18} {c.algorithm:<13} {_size(c.bytes):>10} {c.time_s * 1e3:8.3f}ms "
                     f"{c.algbw_GBps:7.1f}GB/s {c.busbw_GBps:6.1f}GB/s")
    busy = [l for l in r.top_links(5) if l.utilization > 0]
    if busy:
        lines += ["", "busiest links"] + [f"  {l.id:<28} {100 * l.utilization:5.1f}%  ({l.phase})"
                                          for l in busy]
    if r.bottlenecks:
        lines += ["", "bottlenecks"] + [f"  {i + 1}. {b}" for i, b in enumerate(r.bottlenecks[:5])]
    for warn in r.warnings:
        lines.append(f"warning: {warn}")
    return "\n".join(lines)


def _size(n: float) -> str:
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return f"{n:.0f}B"
