"""``dpu-designer sweep FILE --param P --values V1,V2,... [--json] [--out points.csv] [--workers N]
[--scheduler tcp://HOST:PORT] [--seed S]``.

Runs the engine for every value in the three offload modes (host-managed, SmartNIC-offloaded,
DPU-offloaded), on all local cores (or a Dask cluster), and prints training time and MFU per value
(a table, or JSON with ``--json``). ``--out`` streams each point's CSV row as it finishes.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys

from designer.commands import COMMANDS
from designer.commands.run import design_seed, seed_arg
from designer.engine.sweep import METRICS, SCENARIOS, parse_values
from designer.errors import UsageError
from designer.services.sweeping import sweep


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "sweep", help=COMMANDS["sweep"],
        description="Run the engine for each value of one parameter, host-managed, "
                    "SmartNIC-offloaded and DPU-offloaded, in parallel on the local cores "
                    "(or a Dask cluster).",
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
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                        help="run the points on this Dask cluster (the design is sent once)")
    parser.add_argument("--out", metavar="POINTS.csv", default=None,
                        help="write each point's row to this CSV as it finishes (in finishing "
                             "order, its value in the first column)")
    parser.add_argument("--seed", type=seed_arg, default=None,
                        help="random seed of every point (default: the design's scenario seed)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from designer.topology.fileformat import load

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers: must be 1 or more")
    if args.out:
        from designer.safeio import check_output_path

        check_output_path(args.out, inputs=[args.file], what="--out")
    design = load(args.file)
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            bar = "#" * (30 * done // total)
            print(f"\r[{bar:<30}] {done}/{total} points", end="" if done < total else "\n", file=sys.stderr)

    options = dict(seed=design_seed(design, args.seed), workers=args.workers,
                   scheduler=args.scheduler, progress=progress)
    if args.out:
        result, written = _write_csv(args, design, options)
        print(f"{written} of {len(args.values)} points written to {args.out}")
    else:
        result = sweep(design, args.param, args.values, **options)
        if args.json:
            print(json.dumps(result.to_json(), indent=2))
            return 0
        sys.stdout.write(table(result))
    for note in result.notes:
        print(f"refit  {note}")
    return 0


def csv_header(param: str) -> list[str]:
    """The CSV's columns: the parameter's value, then ``MODE METRIC`` for every mode and metric."""
    return [param] + [f"{s} {m}" for s in SCENARIOS for m in METRICS]


def _write_csv(args, design, options):
    """Write each point's row as it finishes (no row is kept); the file appears atomically
    (designer.safeio) when the sweep ends, or on Ctrl-C with the rows so far (then the interrupt
    goes on, exit 130)."""
    from designer.safeio import atomic_output
    from designer.textsafe import csv_row

    values = args.values
    written = 0
    interrupted = False
    with atomic_output(args.out, inputs=[args.file], what="--out") as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(csv_row(csv_header(args.param)))

            def write(index: int, row: dict) -> None:
                nonlocal written
                out.writerow(csv_row([values[index]] + [row[s][m] for s in SCENARIOS for m in METRICS]))
                fh.flush()
                written += 1

            try:
                result = sweep(design, args.param, values, on_point=write, keep=False, **options)
            except KeyboardInterrupt:
                interrupted = True
    if interrupted:
        print(f"sweep: cancelled; {args.out} keeps the {written} point(s) finished", file=sys.stderr)
        raise KeyboardInterrupt
    return result, written


def table(result) -> str:
    """Plain-text table: value, then training days and MFU per mode, then the DPU-offloaded
    speed-up over host-managed (host days / DPU days)."""
    from designer.services.style import SCENARIO_SHORT, figure  # the report's names, one precision per fact

    head = [result.param] + [f"{SCENARIO_SHORT[s]} {m}" for s in SCENARIOS for m in ("days", "MFU")] + ["DPU speed-up"]
    lines = [head]
    for value, row in zip(result.values, result.rows):
        host, dpu = row["host"]["training_time_days"], row["dpu"]["training_time_days"]
        cells = [f"{value:g}"]
        for s in SCENARIOS:
            d = row[s]["training_time_days"]
            cells += [figure("days", d) if abs(d) < 1e7 else f"{d:.3g}", f"{figure('percent', 100 * row[s]['mfu'])}%"]
        cells.append(f"{host / dpu:.3f}x" if dpu > 0 else "-")
        lines.append(cells)
    widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
    return "".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) + "\n" for r in lines)
