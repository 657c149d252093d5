"""``dpu-designer validate FILE [--json]``: check a design file, its design rules and its own cost
figures (``meta.costs``: the price and site overrides; a figure that is not a finite number of 0 or
more, out of range, or under an unknown key is an error of code ``costs`` naming the key; a price
of a model the catalog lacks a warning).

``FILE`` ``-`` reads the design from standard input. Exit 0: no errors (warnings are printed); 1:
the design breaks rules (each printed); 2: the file cannot be read (one line:
``error: FILE: json.path: message``).

``--json`` prints one JSON object instead of lines (its form is stable; fields are only ever
added): ``{"file", "components", "links", "errors", "warnings", "problems": [{"severity",
"code", "message", "hint", "component", "link"}, ...]}``, ``component``/``link`` null where the
problem is not about one; the exit code is the same. A file that cannot be read is still one
``error:`` line on stderr and exit 2 (there is no design to report on).
"""

from __future__ import annotations

import argparse
import json

from designer.commands import COMMANDS
from designer.console import shown

#: the fields of each problem in ``--json``, in this order (``designer.topology.validation.Problem``)
PROBLEM_FIELDS = ("severity", "code", "message", "hint", "component", "link")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("validate", help=COMMANDS["validate"],
                              description="Check a design file: format, then design rules.")
    p.add_argument("file", help="design file (.json); - reads it from standard input")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: counts and the list of problems (severity, code, "
                        "message, hint, component, link)")
    p.set_defaults(func=run)


def problems_json(problems) -> list[dict]:
    """The problems as ``--json`` lists them."""
    return [{f: getattr(p, f) or (None if f in ("component", "link") else "") for f in PROBLEM_FIELDS}
            for p in problems]


def cost_problems(design) -> list:
    """The design's own cost figures (``meta.costs``) checked (``services.cost.meta_costs_problems``),
    as problems of code ``costs``, errors first."""
    from designer.services.cost import meta_costs_problems
    from designer.topology.catalog import load_catalog
    from designer.topology.validation import Problem

    found = [Problem(sev, "costs", f"{path}: {what}", hint)
             for sev, path, what, hint in meta_costs_problems(design.meta, load_catalog())]
    return sorted(found, key=lambda p: p.severity != "error")


def run(args: argparse.Namespace) -> int:
    from designer.commands.run import load_design
    from designer.topology.management import switches_text
    from designer.topology.validation import validate

    design = load_design(args.file)
    problems = sorted(validate(design) + cost_problems(design), key=lambda p: p.severity != "error")
    errors = sum(p.severity == "error" for p in problems)
    topo = design.topology
    from designer.safeio import is_stdin

    name = "standard input" if is_stdin(args.file) else args.file  # the same words in text and JSON
    if args.json:
        print(json.dumps({"file": name, "components": len(topo.components), "links": len(topo.links),
                          "errors": errors, "warnings": len(problems) - errors,
                          "problems": problems_json(problems)}, indent=1))
        return 1 if errors else 0
    for problem in problems:
        print(shown(problem))
    print(f"{shown(name)}: {len(topo.components):,} components ({len(topo.servers()):,} servers, "
          f"{switches_text(topo)}, {len(topo.storage()):,} storage), {len(topo.links):,} links: "
          f"{errors} errors, {len(problems) - errors} warnings")
    return 1 if errors else 0
