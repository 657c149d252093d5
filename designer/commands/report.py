"""``dpu-designer report FILE -o OUT.pdf [--png-dir DIR]``: the design report as PDF, headless.

Runs the engine for the host-managed and the DPU-offloaded scenario, then writes the A4 report
(``designer.report.build``). Works without a display: Qt's offscreen platform is chosen when no
DISPLAY / WAYLAND_DISPLAY is set.
"""

from __future__ import annotations

import argparse
import os
import sys

from designer.commands.run import design_seed, seed_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help="write the design report (PDF, optionally PNG figures)",
        description="Run the engine (host-managed and DPU-offloaded) and write an A4 PDF report: "
                    "topology, bill of materials, workload, results, utilization, comparison, "
                    "bottlenecks and the sources of every catalog figure used.")
    p.add_argument("file", help="design file (.json)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.pdf", help="PDF file to write")
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
    from designer.errors import UsageError
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog, report_problems

    from designer.safeio import check_output_path

    if not args.output.lower().endswith(".pdf"):
        raise UsageError(f"-o {args.output}: the report is a PDF; name the file .pdf")
    check_output_path(args.output, inputs=[args.file], what="-o")  # before the engine runs
    design = fileformat.load(args.file)
    app = qt_application()  # noqa: F841 - must live while the report is drawn
    from designer.report.build import build_report
    from designer.report.export import parse_size

    size = parse_size(args.png_size)
    catalog = load_catalog()
    report_problems(catalog)
    from designer.gui.scene import DesignScene  # the canvas draws the report's topology

    info = build_report(design, catalog, args.output, png_dir=args.png_dir, png_size=size,
                        seed=design_seed(design, args.seed), inputs=[args.file], canvas=DesignScene)
    print(f"{info.pdf}: {info.pages} pages" + "".join(f"\n{p}" for p in info.pngs),
          file=sys.stdout)
    return 0
