"""``dpu-designer optimize``: search server models, adapters (NIC / SmartNIC / DPU), switch models and
oversubscription (with the planner's layout) for a workload on N GPUs; print the Pareto front of
CapEx, training time and energy, stream every point to CSV or Parquet (``--out``), write the front's
designs. In memory: the front, and for ``--report``'s chart the bounded sample of
:class:`designer.services.optimize.Chart` (the app's plot keeps the same).

The search is :func:`designer.services.optimize.optimize`: a local process pool by default, a
Dask cluster with ``--scheduler tcp://HOST:PORT``.
"""

from __future__ import annotations

import json
import math
import sys
import threading

from designer.commands import COMMANDS
from designer.errors import UsageError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "optimize", help=COMMANDS["optimize"],
        description="Build the rail-optimized design for every combination of server model, adapters "
                    "(nic, smartnic, dpu), switch and oversubscription, run each with the planner's "
                    "layout, price it, and print the designs no other beats on CapEx, training time "
                    "and energy among those that meet the target.")
    p.add_argument("--workload", required=True, help="catalog workload id, e.g. gpt3-175b")
    p.add_argument("--gpus", type=int, required=True, help="GPUs of the cluster")
    p.add_argument("--days", type=float, help="target: finish the token budget within this many days")
    p.add_argument("--budget", type=float, metavar="USD", help="target: CapEx at most this")
    p.add_argument("--tokens", type=float, help="token budget (default: the workload's)")
    p.add_argument("--server-models", default="dgx-h100,hgx-b200", help="comma-separated server models")
    p.add_argument("--adapters", default="nic,smartnic,dpu", help="comma-separated: nic, smartnic, dpu")
    p.add_argument("--switches", default="qm9700,sn5600", help="comma-separated switch models")
    p.add_argument("--oversubscription", default="1,2", help="comma-separated ratios (1 = non-blocking)")
    p.add_argument("--seed", type=int, default=0, help="engine seed (default 0)")
    p.add_argument("--workers", type=int, help="local worker processes (default: all cores; 1 = in this process)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the points on this Dask cluster")
    p.add_argument("--out", metavar="OUT.csv", help="write every design's row, in search order, to this .csv or "
                                                    ".parquet file as the designs finish")
    p.add_argument("--write-front", metavar="DIR", help="write each design on the front as DIR/front-N.json")
    p.add_argument("--report", metavar="OUT.pdf", help="also write a PDF: the target, the front and a chart of the designs "
                                                      "(every one up to 20,000, an even sample beyond)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _list(text: str, what: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise UsageError(f"{what}: give at least one value")
    return items


def target_of(args):
    from designer.services.optimize import Target

    for name in ("days", "budget", "tokens"):
        v = getattr(args, name)
        if v is not None and not (math.isfinite(v) and v > 0):
            raise UsageError(f"--{name} must be a number above 0")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be 1 or more")
    try:
        over = tuple(float(x) for x in _list(args.oversubscription, "--oversubscription"))
    except ValueError as exc:
        raise UsageError(f"--oversubscription {args.oversubscription}: write numbers like 1,2") from exc
    if not all(math.isfinite(x) and x >= 1 for x in over):
        raise UsageError("--oversubscription values must be 1 or more")
    return Target(args.workload, args.gpus, args.days, args.budget, args.tokens,
                  _list(args.server_models, "--server-models"), _list(args.adapters, "--adapters"),
                  _list(args.switches, "--switches"), over, args.seed)


def run(args) -> int:
    from designer.services.optimize import columns, design_of, optimize, point_count, point_of
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    target = target_of(args)
    catalog = load_catalog()
    try:
        catalog.workload(args.workload)
    except KeyError:
        raise UsageError(f"--workload {args.workload}: not a catalog workload (see 'dpu-designer catalog workloads')")
    if args.out:
        from designer.safeio import check_output_path
        from designer.services.rowfile import out_format

        out_format(args.out)
        check_output_path(args.out, what="--out")
    if args.report:
        from designer.report.pdf import check_target

        check_target(args.report)
    cancel = threading.Event()
    tty = sys.stderr.isatty()
    done = 0

    def progress(n: int, total: int) -> None:
        nonlocal done
        done = n
        if tty:
            bar = "#" * (30 * n // total)
            print(f"\r[{bar:<30}] {n}/{total} designs", end="" if n < total else "\n", file=sys.stderr)

    from designer.services.optimize import Chart

    #: what --report charts: the front and an even sample of the designs (services.optimize.Chart,
    #: as the app's plot); the rows themselves go to --out, not to memory
    chart = Chart()

    def keep(row) -> None:
        if args.report:
            chart.add(row)

    def search(on_row):
        return optimize(target, catalog, workers=args.workers, scheduler=args.scheduler, on_row=on_row,
                        progress=progress, cancel=cancel)

    total = point_count(target)
    if args.out:
        from designer.services.rowfile import row_file

        interrupted = False
        with row_file(args.out, columns()) as out:
            def on_row(row):
                out.write(row)
                keep(row)

            try:
                outcome = search(on_row)
            except KeyboardInterrupt:
                interrupted = True
        if interrupted:
            print(f"optimize: cancelled (Ctrl-C); {args.out} keeps the first {out.count:,} of the {total:,} "
                  "designs (in search order); no front was printed and no design or report written",
                  file=sys.stderr)
            raise KeyboardInterrupt
    else:
        try:
            outcome = search(keep)
        except KeyboardInterrupt:
            print(f"optimize: cancelled (Ctrl-C) after {done:,} of {total:,} designs; nothing was kept "
                  "(--out FILE.csv keeps every design as it finishes)", file=sys.stderr)
            raise
    if args.write_front:
        from pathlib import Path

        folder = Path(args.write_front)
        if not folder.is_dir():
            raise UsageError(f"--write-front {folder}: no such folder (create it first)")
        for i, row in enumerate(outcome.front):
            path = folder / f"front-{i + 1}.json"
            fileformat.save(design_of(point_of(row, outcome.layouts), target, catalog), path)
            row["file"] = str(path)
    if args.report:
        from designer.commands.report import qt_application

        qt_application()  # the drawing needs one
        from designer.report import front

        front.build(outcome, chart, args.report)
    if args.json:
        print(json.dumps(outcome.to_json(), indent=1))
    else:
        print(format_front(outcome))
    return 0


def format_front(o) -> str:
    from designer.services.style import figure  # one precision per fact (days as run and compare)
    from designer.services.optimize import ADAPTER_WORDS, layout_words, target_words

    lines = [f"target: {target_words(o.target)}; {o.evaluated} designs run, {o.feasible} meet it, "
             f"{len(o.front)} on the front (CapEx, training time, energy)"]
    for server, layout in o.layouts.items():
        lines.append(f"  layout on {server} (planner): {layout_words(layout)}")
    if not o.front:
        lines.append("no design meets the target: raise --days or --budget, or add server models")
        return "\n".join(lines)
    lines += ["", f"{'#':>3} {'server':<12}{'adapters':<10}{'switch':<9}{'over':>5}{'CapEx':>10}"
                  f"{'TCO':>10}{'days':>8}{'MWh':>8}{'tokens/$':>11}{'MFU':>7}  file"]
    for i, r in enumerate(o.front):
        lines.append(f"{i + 1:>3} {r['server']:<12}{ADAPTER_WORDS.get(r['adapters'], r['adapters']):<10}{r['switch']:<9}{r['oversubscription']:>4g}:1"
                     f"{r['capex_USD'] / 1e6:>9.2f}M{r['tco_USD'] / 1e6:>9.2f}M{figure('days', r['training_time_days']):>8}"
                     f"{r['energy_MWh']:>8.1f}{r['tokens_per_USD']:>11,.0f}{100 * r['mfu']:>6.1f}%  {r.get('file', '')}")
    lines.append("(costs: models/costs/prices.toml, each price with its basis; `dpu-designer cost FILE` "
                 "shows a design's bill; training time is steady state, without failures)")
    return "\n".join(lines)
