"""``dpu-designer export FILE [--cabling OUT.csv] [--bom OUT.csv] [--elevation OUT.svg|.png]``.

What a planner orders and installs from: the cabling plan (one row per cable, its ends and ports,
cable type and length class: ``designer.services.cabling``), the bill of materials with cables and
transceivers (``designer.services.bom.planner_rows``) and the rack elevation picture
(``designer.report.elevation``). Every file is checked before any work (not a folder, device, pipe
or the design itself; no two outputs the same) and written atomically (``designer.safeio``).
``--cabling -`` or ``--bom -`` writes that table to standard output; what the command says about
its outputs then goes to standard error. ``FILE`` ``-`` reads the design from standard input.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys

from designer.commands import COMMANDS
from designer.console import shown
from designer.errors import UsageError

#: most pixels of an elevation PNG (larger drawings are scaled down; SVG is vector and not capped)
MAX_PNG_SIDE = 16000
#: most racks in one elevation picture (derived: 32 rows of 16 racks; each rack is ~90 SVG
#: elements, so 512 racks stay a ~5 MB SVG; larger designs pick racks with --racks)
MAX_ELEVATION_RACKS = 512
MAX_PNG_PIXELS = 64_000_000  # as designer.report.export.MAX_PIXELS


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export", help=COMMANDS["export"],
        description="Write what a planner needs: the cabling plan (one row per cable: ends, ports, "
                    "medium, speed, DAC/AOC/optics by length class, estimated length), the bill of "
                    "materials with cables and transceivers, and the rack elevation picture.")
    p.add_argument("file", help="design file (.json); - reads it from standard input")
    p.add_argument("--cabling", metavar="OUT.csv", help="cabling plan, one row per cable (- for standard output)")
    p.add_argument("--bom", metavar="OUT.csv", help="bill of materials incl. cables and optics (- for standard output)")
    p.add_argument("--elevation", metavar="OUT.svg", help="rack elevation picture (.svg or .png)")
    p.add_argument("--racks", metavar="ID,ID", help="racks of the elevation (default: all)")
    p.set_defaults(func=run)


def _outputs(args) -> dict[str, str]:
    from designer.safeio import check_output_path, is_console, is_stdin, stream_name

    outs = {opt: getattr(args, opt) for opt in ("cabling", "bom", "elevation")
            if getattr(args, opt) is not None}
    if not outs:
        raise UsageError("export: give at least one of --cabling OUT.csv, --bom OUT.csv, "
                         "--elevation OUT.svg")
    seen: dict[str, str] = {}
    for opt, path in outs.items():
        target = check_output_path(path, inputs=[] if is_stdin(args.file) else [args.file], what=f"--{opt}")
        console = is_console(path)
        if opt in ("cabling", "bom") and not console and not str(path).lower().endswith(".csv"):
            raise UsageError(f"--{opt} {path}: the {opt} is a CSV table; name the file .csv")
        if opt == "elevation":
            from designer.report.export import FORMATS

            if console:
                raise UsageError(f"--elevation {path}: the picture's format comes from its file name; "
                                 "give a file name ending .svg or .png")
            if os.path.splitext(str(path))[1].lower() not in FORMATS:
                raise UsageError(f"--elevation {path}: name the picture .svg or .png")
        if str(target) in seen:
            what = stream_name(path) if console else f"the same file {path}"
            raise UsageError(f"--{opt} and --{seen[str(target)]} both name {what}; "
                             "give each output its own file")
        seen[str(target)] = opt
    return outs


def write_csv(path: str, header, rows, *, inputs) -> int:
    """Write ``rows`` (an iterable, consumed as it goes) under ``header`` atomically; row count."""
    from designer.safeio import atomic_output

    n = 0
    with atomic_output(path, inputs=inputs, what="export") as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            for row in rows:
                writer.writerow(row)
                n += 1
    return n


def run(args: argparse.Namespace) -> int:
    from designer.services import cabling
    from designer.services.bom import PLAN_COLUMNS, bill_of_materials, planner_rows
    from designer.topology.catalog import load_catalog, report_problems

    from designer.commands.run import load_design
    from designer.safeio import console_target, is_stdin

    outs = _outputs(args)
    rack_ids = [r.strip() for r in args.racks.split(",") if r.strip()] if args.racks else None
    design = load_design(args.file)
    catalog = load_catalog()
    report_problems(catalog)
    _check_models(design, catalog)
    inputs = [] if is_stdin(args.file) else [args.file]
    kinds = {cid: c.kind for cid, c in design.topology.components.items()}
    lines = []
    summary = None
    if "cabling" in outs:
        tally = cabling.Tally()

        def rows():
            for c in cabling.cables(design, catalog):
                tally.add(c.type, c.speed_Gbps, c.medium, c.length_class_m, c.a_kind, c.b_kind)
                yield cabling.csv_row(c, kinds)

        n = write_csv(outs["cabling"], cabling.CSV_COLUMNS, rows(), inputs=inputs)
        summary = tally.summary()
        lines.append(f"{_name(outs['cabling'])}: {n} cables")
    if "bom" in outs:
        summary = summary or cabling.summary_of(design, catalog)
        plan = planner_rows(design, catalog, bill_of_materials(design, catalog), summary)
        n = write_csv(outs["bom"], PLAN_COLUMNS, ([r[c] for c in PLAN_COLUMNS] for r in plan), inputs=inputs)
        lines.append(f"{_name(outs['bom'])}: {n} lines, {summary.total_cables} cables, "
                     f"{summary.total_transceivers} transceivers")
    if "elevation" in outs:
        lines.append(_elevation(design, catalog, outs["elevation"], rack_ids, inputs))
    if summary is not None:
        too_long = sum(n for (kind, *_), n in summary.cables.items() if kind == "too long")
        if too_long:
            lines.append(f"warning: {too_long} cables run longer than 2 km (no optic reaches): "
                         f"move their racks closer on the canvas")
    # the summary goes to the stream no output takes; with data on both, it is left out
    taken = {console_target(p) for p in outs.values()}
    out = next((s for fd, s in ((1, sys.stdout), (2, sys.stderr)) if fd not in taken), None)
    if out is not None:
        print("\n".join(map(shown, lines)), file=out)
    return 0


def _name(path: str) -> str:
    """An output as the summary names it."""
    from designer.safeio import stream_name

    return stream_name(path) or path


def _check_models(design, catalog) -> None:
    """Every component's model is in the catalog (else one line naming it)."""
    from designer.topology.kinds import CATALOG_KIND, KIND_LABEL

    seen = set()
    for c in design.topology.components.values():
        key = (c.kind, c.model)
        if key in seen:
            continue
        seen.add(key)
        if c.model:
            try:
                catalog.get(CATALOG_KIND[c.kind], c.model)
            except KeyError as exc:
                raise UsageError(f"{KIND_LABEL[c.kind]} '{c.id}': {exc.args[0]}") from None


def _elevation(design, catalog, path: str, rack_ids, inputs) -> str:
    from designer.commands.report import qt_application

    app = qt_application()  # noqa: F841 - must live while the picture is drawn
    from PySide6.QtCore import QSize

    from designer.report.elevation import draw_racks, elevations, natural_size
    from designer.report.export import save_picture

    racks = elevations(design, catalog, rack_ids)
    if not racks:
        raise UsageError("--elevation: the design has no racks to draw")
    if len(racks) > MAX_ELEVATION_RACKS:
        raise UsageError(f"--elevation: {len(racks):,} racks are more than one picture shows "
                         f"({MAX_ELEVATION_RACKS}); choose some with --racks {racks[0].id},{racks[1].id},...")
    w, h = natural_size(racks)
    scale = 1.0 if path.lower().endswith(".svg") else 2.0
    scale = min(scale, MAX_PNG_SIDE / w, MAX_PNG_SIDE / h, (MAX_PNG_PIXELS / (w * h)) ** 0.5) \
        if not path.lower().endswith(".svg") else scale
    size = QSize(max(16, round(w * scale)), max(16, round(h * scale)))
    save_picture(lambda p, r: draw_racks(p, r, racks), size, path, title="Rack elevation", inputs=inputs)
    return f"{path}: {len(racks)} racks, {size.width()}x{size.height()}"
