"""``dpu-designer sweep FILE --param P --values V1,V2,... [--param Q --values ...] [--json]
[--out POINTS.csv|POINTS.parquet] [--workers N] [--scheduler tcp://HOST:PORT] [--seed S]``, and
``dpu-designer sweep FILE --list``.

Runs the engine for every point of the grid (every combination of the parameters' values) in the
three offload modes (host-managed, SmartNIC-offloaded, DPU-offloaded), on all local cores (or a Dask
cluster), and prints training time and MFU per point (a table, or JSON with ``--json``) of the
points :class:`designer.engine.sweep.Summary` keeps. ``--out`` streams every point's row, in grid
order, to CSV or Parquet (:mod:`designer.services.rowfile`). ``--list`` prints the parameters the
design can sweep, grouped.
"""

from __future__ import annotations

import argparse
import json
import sys

from designer.commands import COMMANDS
from designer.commands.run import design_seed, seed_arg
from designer.engine.sweep import METRICS, SCENARIOS, make_grid, parse_values
from designer.errors import UsageError
from designer.services.sweeping import sweep


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "sweep", help=COMMANDS["sweep"],
        description="Run the engine for each value of one parameter, or each point of a grid of "
                    "several, host-managed, SmartNIC-offloaded and DPU-offloaded, in parallel on the "
                    "local cores (or a Dask cluster).",
        epilog="PARAM: servers (regenerates the design from its template), a workload or scenario "
               "setting (global_batch, workload.tokens, scenario.tenants), KIND.FIELD for every "
               "component of a kind (gpu_server.gpu_count) or ID.FIELD for one component; "
               "--list prints them. Repeat --param P --values ... for a grid.")
    parser.add_argument("file", metavar="FILE", help="design file")
    parser.add_argument("--param", action="append", metavar="PARAM",
                        help="what to vary (repeat, each with its --values, for a grid)")
    parser.add_argument("--values", action="append", metavar="V1,V2,...", type=parse_values,
                        help="comma-separated values of the --param before it")
    parser.add_argument("--list", action="store_true",
                        help="print the parameters this design can sweep, grouped, and exit")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="processes (default: all cores); the results do not depend on it")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                        help="run the points on this Dask cluster (the design is sent once)")
    parser.add_argument("--out", metavar="POINTS.csv", default=None,
                        help="write every point's row, in grid order, to this .csv or .parquet file "
                             "as the points finish (the parameters' values, then MODE METRIC columns)")
    parser.add_argument("--seed", type=seed_arg, default=None,
                        help="random seed of every point (default: the design's scenario seed)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from designer.topology.fileformat import load

    if args.list:
        from designer.engine.sweep import sweepable
        from designer.topology.catalog import load_catalog

        sys.stdout.write(listing(sweepable(load(args.file), load_catalog())))
        return 0
    grid = make_grid(args.param or [], args.values or [])
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers: must be 1 or more")
    if args.out:
        from designer.safeio import check_output_path
        from designer.services.rowfile import out_format

        out_format(args.out)
        check_output_path(args.out, inputs=[args.file], what="--out")
    design = load(args.file)
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty and (done == total or done % max(1, total // 1000) == 0):
            bar = "#" * (30 * done // total)
            print(f"\r[{bar:<30}] {done:,}/{total:,} points", end="" if done < total else "\n", file=sys.stderr)

    options = dict(seed=design_seed(design, args.seed), workers=args.workers,
                   scheduler=args.scheduler, progress=progress)
    if args.out:
        from designer.safeio import is_console

        result = _write(args, grid, design, options)
        if is_console(args.out):  # the rows are the output: nothing mixed into them
            print(f"{result.total:,} of {grid.size:,} points written", file=sys.stderr)
            return 0
        # beside --json on stderr, so standard output stays one JSON document
        print(f"{result.total:,} of {grid.size:,} points written to {args.out}",
              file=sys.stderr if args.json else sys.stdout)
    else:
        result = sweep(design, grid, **options)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    sys.stdout.write(table(result))
    if result.thinned:
        print(f"({result.thinned}{'; every row is in ' + args.out if args.out else '; --out FILE.csv writes every row'})")
    for note in result.notes:
        print(f"refit  {note}")
    return 0


def listing(groups) -> str:
    """``--list``: each group's title, then its parameters with their present value."""
    lines = []
    for title, rows in groups:
        lines.append(f"{title}:")
        width = max(len(p) for p, _ in rows)
        for param, present in rows:
            lines.append(f"  {param:<{width}}  {'now ' + format(present, 'g') if present is not None else '(not set)'}")
    return "\n".join(lines) + "\n"


def columns(params) -> list[tuple[str, str]]:
    """The row file's columns: each parameter's value, then ``MODE METRIC`` for every mode and
    metric (all numbers)."""
    return [(p, "float") for p in params] + [(f"{s} {m}", "float") for s in SCENARIOS for m in METRICS]


def _write(args, grid, design, options):
    """Write every point's row as it finishes, in grid order; the file appears atomically
    (designer.safeio) when the sweep ends, or on Ctrl-C with the rows so far (then the interrupt
    goes on, exit 130)."""
    from designer.services.rowfile import row_file

    interrupted = False
    with row_file(args.out, columns(grid.params), inputs=[args.file]) as out:
        def write(index: int, values: tuple, row: dict) -> None:
            out.write(list(values) + [row[s][m] for s in SCENARIOS for m in METRICS])

        try:
            result = sweep(design, grid, on_point=write, **options)
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        print(f"sweep: cancelled (Ctrl-C); {args.out} keeps the first {out.count:,} of the {grid.size:,} "
              f"points (in grid order), the rest were not run or not finished", file=sys.stderr)
        raise KeyboardInterrupt
    return result


def table(result) -> str:
    """Plain-text table: each parameter's value, then training days and MFU per mode, then the
    DPU-offloaded speed-up over host-managed (host days / DPU days)."""
    from designer.services.style import SCENARIO_SHORT, figure  # the report's names, one precision per fact

    head = list(result.params) + [f"{SCENARIO_SHORT[s]} {m}" for s in SCENARIOS for m in ("days", "MFU")] + ["DPU speed-up"]
    lines = [head]
    for values, row in zip(result.values, result.rows):
        host, dpu = row["host"]["training_time_days"], row["dpu"]["training_time_days"]
        cells = [f"{v:g}" for v in values]
        for s in SCENARIOS:
            d = row[s]["training_time_days"]
            cells += [figure("days", d) if abs(d) < 1e7 else f"{d:.3g}", f"{figure('percent', 100 * row[s]['mfu'])}%"]
        cells.append(f"{host / dpu:.3f}x" if dpu > 0 else "-")
        lines.append(cells)
    widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
    return "".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) + "\n" for r in lines)
