"""``dpu-designer report FILE -o OUT.pdf [--png-dir DIR]``: the design report as PDF, headless.

Runs the engine for the host-managed and the DPU-offloaded scenario, then writes the A4 report
(``designer.report.build``). Works without a display: Qt's offscreen platform is chosen when no
DISPLAY / WAYLAND_DISPLAY is set.
"""

from __future__ import annotations

import argparse
import os
import sys

from designer.commands import COMMANDS
from designer.commands.run import design_seed, seed_arg
from designer.console import shown


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help=COMMANDS["report"],
        description="Run the engine (host-managed and DPU-offloaded) and write an A4 PDF report: "
                    "topology, bill of materials, workload, results, utilization, comparison, "
                    "bottlenecks and the sources of every catalog figure used.")
    p.add_argument("file", help="design file (.json); - reads it from standard input")
    p.add_argument("-o", "--output", required=True, metavar="OUT.pdf",
                   help="PDF file to write (- for standard output, when it is not a terminal)")
    p.add_argument("--png-dir", metavar="DIR",
                   help="also write the figures (topology, breakdown, utilization) as PNGs here")
    p.add_argument("--png-size", default="1600x1000", metavar="WxH",
                   help="size of the PNG figures in pixels (default 1600x1000)")
    p.add_argument("--seed", type=seed_arg, default=None,
                   help="random seed of the engine and timeline (default: the design's scenario seed)")
    p.set_defaults(func=run)


def qt_application():
    """The running QApplication, or a new one (offscreen when there is no display)."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication(["dpu-designer"])


def run(args: argparse.Namespace) -> int:
    from designer.commands.run import load_design
    from designer.errors import UsageError
    from designer.safeio import check_output_path, console_target, is_console, is_stdin
    from designer.topology.catalog import load_catalog, report_problems

    console = is_console(args.output)
    if not console and not args.output.lower().endswith(".pdf"):
        raise UsageError(f"-o {args.output}: the report is a PDF; name the file .pdf")
    inputs = [] if is_stdin(args.file) else [args.file]
    check_output_path(args.output, inputs=inputs, what="-o")  # before the engine runs
    if console:
        stream = sys.stdout if console_target(args.output) == 1 else sys.stderr
        if stream is None or stream.isatty():
            raise UsageError(f"-o {args.output}: the report is a PDF, binary data; redirect "
                             "standard output (> report.pdf, | program) or give a file name")
    design = load_design(args.file)
    app = qt_application()  # noqa: F841 - must live while the report is drawn
    from designer.report.build import build_report
    from designer.report.export import parse_size

    try:
        size = parse_size(args.png_size)
    except UsageError as exc:  # the one line names the option it came from
        raise UsageError(f"--png-size {shown(args.png_size)}: {exc}") from None
    catalog = load_catalog()
    report_problems(catalog)
    from designer.gui.scene import DesignScene  # the canvas draws the report's topology

    info = build_report(design, catalog, args.output, png_dir=args.png_dir, png_size=size,
                        seed=design_seed(design, args.seed), inputs=inputs, canvas=DesignScene)
    out = sys.stderr if console else sys.stdout
    name = "standard output" if console else info.pdf
    print("\n".join(map(shown, [f"{name}: {info.pages} pages", *map(str, info.pngs)])), file=out)
    return 0
