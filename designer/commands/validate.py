"""``dpu-designer validate FILE``: check a design file and its design rules.

Exit 0: no errors (warnings are printed); 1: the design breaks rules (each printed); 2: the file cannot
be read (one line: ``error: FILE: json.path: message``).
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("validate", help="check a design file",
                              description="Check a design file: format, then design rules.")
    p.add_argument("file", help="design file (.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from designer.topology import fileformat
    from designer.topology.validation import validate

    design = fileformat.load(args.file)
    problems = validate(design)
    for problem in problems:
        print(problem)
    errors = sum(p.severity == "error" for p in problems)
    topo = design.topology
    print(f"{args.file}: {len(topo.components)} components ({len(topo.servers())} servers, "
          f"{len(topo.switches())} switches, {len(topo.storage())} storage), {len(topo.links)} links: "
          f"{errors} errors, {len(problems) - errors} warnings")
    return 1 if errors else 0
