"""``dpu-designer sweep FILE --param P --values V1,V2,... [--json] [--workers N] [--seed S]``.

Runs the engine for every value, host-managed and DPU-offloaded, in parallel on the local cores, and
prints training time and MFU per value (a table, or JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys

from designer.commands.run import design_seed, seed_arg
from designer.engine.sweep import SCENARIOS, parse_values, sweep
from designer.errors import UsageError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "sweep", help="training time and MFU against one design parameter, host vs DPU",
        description="Run the engine for each value of one parameter, host-managed and "
                    "DPU-offloaded, in parallel on the local cores.",
        epilog="PARAM: servers (regenerates the design from its template), a workload or scenario "
               "setting (global_batch, workload.tokens, scenario.tenants), KIND.FIELD for every "
               "component of a kind (gpu_server.gpu_count) or ID.FIELD for one component.")
    parser.add_argument("file", metavar="FILE", help="design file")
    parser.add_argument("--param", required=True, metavar="PARAM", help="what to vary")
    parser.add_argument("--values", required=True, metavar="V1,V2,...", type=parse_values,
                        help="comma-separated values")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="processes (default: all cores); the results do not depend on it")
    parser.add_argument("--seed", type=seed_arg, default=None,
                        help="random seed of every point (default: the design's scenario seed)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from designer.topology.fileformat import load

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers: must be 1 or more")
    design = load(args.file)
    result = sweep(design, args.param, args.values, seed=design_seed(design, args.seed),
                   workers=args.workers)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    sys.stdout.write(table(result))
    for note in result.notes:
        print(f"refit  {note}")
    return 0


def table(result) -> str:
    """Plain-text table: value, then training days and MFU per scenario, then the speed-up."""
    head = [result.param] + [f"{s} {m}" for s in SCENARIOS for m in ("days", "MFU")] + ["speed-up"]
    lines = [head]
    for value, row in zip(result.values, result.rows):
        days = [row[s]["training_time_days"] for s in SCENARIOS]
        cells = [f"{value:g}"]
        for s in SCENARIOS:
            d = row[s]["training_time_days"]
            cells += [f"{d:.2f}" if abs(d) < 1e7 else f"{d:.3g}", f"{100 * row[s]['mfu']:.1f}%"]
        cells.append(f"{days[0] / days[1]:.3f}x" if days[1] > 0 else "-")
        lines.append(cells)
    widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
    return "".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) + "\n" for r in lines)
