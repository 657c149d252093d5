"""``dpu-designer plan FILE``: the fastest parallel layout of the design's workload that fits in
GPU memory (``designer.engine.plan``), as a table or JSON; ``--apply`` / ``-o`` save the best one
into the design's workload."""

from __future__ import annotations

import argparse
import json
import sys

from designer.commands import COMMANDS
from designer.console import shown
from designer.errors import ResultError, UsageError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plan", help=COMMANDS["plan"],
        description="Search every legal parallel layout of the design's workload on its GPUs "
                    "(tensor, pipeline, data, context and expert parallelism, micro-batch, "
                    "interleaved stages, each also with its pipeline sends/receives overlapped, "
                    "activation recomputation), drop those that do not fit in "
                    "GPU memory, estimate the rest with the engine's compute and timing stages and "
                    "run the best estimates through the full engine on the drawn fabric.",
        epilog="The global batch, sequence length and precision stay as the workload has them "
               "(change them with --set workload.NAME=VALUE). --apply and -o save the design with "
               "the best layout in its workload (and any --set changes).")
    p.add_argument("file", help="design file (.json)")
    p.add_argument("--top", type=_count, default=5, metavar="N", help="layouts to show (default 5)")
    p.add_argument("--evaluate", type=_count, default=None, metavar="N",
                   help="layouts run through the full engine first (default: max(6, --top)); "
                        "more run while a layout left out might still beat the best, up to "
                        "twice as many")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--workers", type=_count, default=None, metavar="N",
                   help="processes the engine runs go to (default: all cores; 1: this process); "
                        "the ranking does not depend on it")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                   help="run the engine runs on this Dask cluster (the design is sent once per worker)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--apply", action="store_true",
                     help="save the best layout into FILE's workload (FILE -, read from standard "
                          "input: the design goes to standard output, the table to standard "
                          "error)")
    out.add_argument("-o", "--output", metavar="OUT.json",
                     help="save the design with the best layout to OUT.json (FILE is not changed; - for "
                          "standard output: the table then goes to standard error)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                   help="change a workload or scenario setting before the search, e.g. "
                        "--set workload.global_batch=1024 (repeatable)")
    from designer.commands.run import seed_arg

    p.add_argument("--seed", type=seed_arg, default=None, help="seed (default: the design's)")
    p.set_defaults(func=run)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise UsageError(f"expected a whole number of at least 1, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from designer.commands.run import apply_sets, design_seed, load_design
    from designer.engine import plan
    from designer.services import planning
    from designer.topology.catalog import load_catalog, report_problems

    from designer.safeio import check_output_path, is_console

    # where the design is saved: -o, or FILE itself with --apply (a design read from standard
    # input, ``-``, is written back to standard output: plan as a filter)
    target = args.output or (args.file if args.apply else None)
    to_console = target is not None and is_console(target)
    if args.output:
        check_output_path(args.output, inputs=[args.file], what="-o")
    if to_console and args.json:
        given = f"-o {shown(args.output)}" if args.output else f"--apply on {shown(args.file)}"
        raise UsageError(f"{given} and --json both write to standard output; save the design to "
                         "a file (-o OUT.json)")
    design = load_design(args.file)
    apply_sets(design, args.sets)
    catalog = load_catalog()
    report_problems(catalog)
    tty = sys.stderr.isatty()

    def progress(stage: str, done: int, total: int) -> None:
        # a bar on a terminal only: the estimates, then the engine runs as they finish
        if tty and total:
            bar = "#" * (30 * done // total)
            what = "layouts estimated" if stage == "estimate" else "engine runs"
            print(f"\r[{bar:<30}] {done}/{total} {what}\033[K", end="", file=sys.stderr)

    try:
        result = planning.search(design, catalog, top=args.top, evaluate=args.evaluate,
                                 seed=design_seed(design, args.seed), workers=args.workers,
                                 scheduler=args.scheduler, progress=progress)
    finally:
        if tty:
            print("\r\033[K", end="", file=sys.stderr)
    check_finite(result)  # before anything is saved or printed
    saved = None
    if (args.apply or args.output) and result.best is not None:
        from designer.topology.fileformat import save

        design.workload = plan.apply(design, result.best.layout)
        saved = args.file if args.apply else args.output
        save(design, saved)
    if args.json:
        data = result.to_json()
        data["saved_to"] = saved
        print(json.dumps(data, indent=2))
        return 0
    # the design on standard output (-o -) is data: the table goes to stderr then
    out = sys.stderr if to_console else sys.stdout
    out.write(table(result))
    if saved:
        where = "standard output" if to_console else shown(saved)
        print(f"saved {result.best.label} to {where}", file=out)
    elif result.best is not None and not result.best.current:
        print("save it with --apply (into the file) or -o OUT.json", file=out)
    return 0


def check_finite(result) -> None:
    """:func:`designer.commands.run.check_finite` on every layout run through the engine (the
    ranking the plan prints is made of them) and the design's own, and on their memory figure;
    the one-line error names the layout. A NaN iteration time would be ranked anywhere (a NaN
    compares false) and printed as ``nan`` with exit 0."""
    import math

    from designer.commands import run as run_cmd

    for c in [*result.ranked, *([result.current] if result.current not in result.ranked else [])]:
        if c is None:
            continue
        try:
            run_cmd.check_finite(c)
            if c.memory_GB is not None and not math.isfinite(c.memory_GB):
                raise ResultError("the result is not a finite number for memory_GB, so it is not "
                                  "printed; check the workload (--set) and the design "
                                  "(dpu-designer validate FILE)")
        except ResultError as exc:
            raise ResultError(f"layout {c.label}: {exc}") from None


def table(result) -> str:
    """The plan as text: header, the ranked layouts (one row per distinct outcome,
    ``PlanResult.groups``: the layouts the engine gives the same figures are named below the
    table), what was left out and why. Design text (the workload's name, a dropped layout's
    engine message) goes through :func:`shown`: one line each."""
    from designer.services.style import figure  # one precision per fact, as run and compare

    lines = [f"plan      {shown(result.workload)} on {result.gpus} GPUs"
             + (f" of {result.design_gpus}" if result.gpus < result.design_gpus else "")
             + f", {result.memory_cap_GB:.1f} GB per GPU",
             f"searched  {result.searched} layouts: {result.fit} fit in memory, {len(result.ranked)} "
             f"run through the engine ({result.seconds:.1f} s)", ""]
    head = ["#", "layout", "GPUs", "iteration s", "MFU", "GB/GPU", "tokens/s"]
    rows = [head]
    alike = []
    for c in result.shown:
        rank = str(result.rank(c))
        twins = result.alike(c)
        mine = c.current or any(t.current for t in twins)
        rows.append([rank, c.label + ("  (design)" if mine else "") + (f"  (+{len(twins)} alike)" if twins else ""),
                     str(c.gpus), figure("seconds", c.iteration_time_s),
                     f"{figure('percent', 100 * c.mfu)}%", f"{c.memory_GB:.1f}" if c.memory_GB is not None else "-",
                     figure("tokens_per_s", c.tokens_per_s)])
        if twins:
            alike.append(f"  {rank}: the engine gives {', '.join(t.label for t in twins)} the same figures")
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i == 1 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    if alike:
        lines += ["alike", *alike]
    best, mine = result.best, result.current
    lines.append("")
    if best is not None and mine is not None and mine is not best and mine.iteration_time_s:
        gain = 100 * (mine.iteration_time_s / best.iteration_time_s - 1)
        lines.append(f"best      {best.label}: {gain:.1f}% more iterations per second than the "
                     f"design's layout")
    elif best is not None and best.current:
        lines.append(f"best      {best.label}: the design's own layout")
    else:
        lines.append(f"best      {best.label}")
    if result.current_note:
        lines.append(f"note      {shown(result.current_note)}")
    from designer.services.planning import settled

    lines.append(f"checked   {settled(result)}")
    if result.dropped:
        lines.append("dropped")
        from designer.engine.plan import REASONS

        for key, n in result.dropped.most_common():
            ex = result.examples.get(key)
            lines.append(f"  {n:>7}  {REASONS[key]}" + (f" (e.g. {shown(ex)})" if ex else ""))
    return "\n".join(lines) + "\n"
