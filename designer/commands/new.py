"""``dpu-designer new --template NAME [options] -o FILE``: generate a design from a template.

The options come from the templates' option specs (``designer.topology.templates.TEMPLATES``); an
option that the chosen template does not take is refused.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from designer.commands import COMMANDS
from designer.console import shown
from designer.errors import UsageError

if TYPE_CHECKING:
    from designer.topology.templates import Option

_TYPES = {"int": int, "float": float, "str": str, "choice": str}


def _all_options() -> dict[str, Option]:
    from designer.topology.templates import TEMPLATES

    seen: dict[str, Option] = {}
    for template in TEMPLATES.values():
        for opt in template.options:
            seen.setdefault(opt.name, opt)
    return seen


def register(subparsers: argparse._SubParsersAction) -> None:
    from designer.topology.templates import TEMPLATES

    p = subparsers.add_parser("new", help=COMMANDS["new"],
                              description="Generate a design from a template and save it.")
    p.add_argument("--template", required=True, choices=list(TEMPLATES),
                   help="; ".join(f"{t.name}: {t.help}" for t in TEMPLATES.values()))
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="design file to write (- for standard output: the command's own lines "
                        "then go to standard error)")
    p.add_argument("--workload", default=None, metavar="ID",
                   help="catalog workload saved with the design, its published global batch kept "
                        "and a layout saved that divides it on the design's GPUs (tp and cp as "
                        "published, pp at least the published one, dp x micro-batch dividing the "
                        "batch, fewest GPUs idle and least pipeline bubble) "
                        "(default: the one the template suggests: "
                        + _grouped({t.name: t.workload for t in TEMPLATES.values()})
                        + "; see 'dpu-designer catalog workload')")
    for name, opt in _all_options().items():
        defaults = {t.name: o.default for t in TEMPLATES.values() for o in t.options if o.name == name}
        only = "" if len(defaults) == len(TEMPLATES) else f"{', '.join(defaults)} only"
        # an option whose help says its default already ("(default: the server model's)", "(0: ...)")
        # gets no second one; '' reads "none"; templates with the same default are named together
        said = "(default:" in opt.help or "(0:" in opt.help
        tail = "; ".join(x for x in ("" if said else f"default: {_grouped(defaults)}", only) if x)
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=_TYPES[opt.type], default=None,
                       choices=opt.choices or None, metavar=None if opt.choices else opt.type.upper(),
                       help=f"{opt.help} ({tail})" if tail else opt.help)
    p.set_defaults(func=run)


def _grouped(defaults: dict[str, Any]) -> str:
    """Templates' defaults of one option as help text: one value when they agree, else each value
    with the templates that have it ("llama3-8b (leaf-spine, fat-tree, rail-optimized), llama3-70b
    (nvl72)"); an empty text reads "none"."""
    def shown(v: Any) -> str:
        return "none" if v == "" else f"{v:g}" if isinstance(v, float) else str(v)

    groups: dict[str, list[str]] = {}
    for template, value in defaults.items():
        groups.setdefault(shown(value), []).append(template)
    if len(groups) == 1:
        return next(iter(groups))
    return ", ".join(f"{v} ({', '.join(ts)})" for v, ts in groups.items())


def check_numbers(template, given: dict[str, Any], catalog) -> None:
    """Every numeric option is a finite number within its template minimum, and no count option
    makes a design that the file format cannot hold (so that nothing is built for minutes before
    being refused): a count beyond :data:`fileformat.MAX_COMPONENTS` components is refused, and
    ``--storage-count`` also when its appliances' ports alone need more links than
    :data:`fileformat.MAX_LINKS` (derived: each appliance is one component and is cabled on every
    port, ``ports`` from the catalog)."""
    import math

    from designer.topology.fileformat import MAX_COMPONENTS, MAX_LINKS

    for opt in template.options:
        value = given.get(opt.name)
        if opt.type not in ("int", "float") or value is None:
            continue
        flag = "--" + opt.name.replace("_", "-")
        if not math.isfinite(value):
            raise UsageError(f"{flag} {value}: must be a finite number"
                             + (f" of at least {opt.min:g}" if opt.min is not None else ""))
        if opt.min is not None and value < opt.min:
            raise UsageError(f"{flag} {value:g}: must be at least {opt.min:g} ({opt.help})")
        if opt.type == "int" and value > MAX_COMPONENTS:
            raise UsageError(f"{flag} {value:,}: more than a design file holds ({MAX_COMPONENTS:,} "
                             f"components); use a smaller number")
    count = given.get("storage_count")
    if count:
        model = given.get("storage_model") or next(
            (o.default for o in template.options if o.name == "storage_model"), "")
        try:
            ports = int(catalog.get("storage", model).get("ports") or 1)
        except (KeyError, TypeError, ValueError):
            ports = 1  # an unknown model is named by the template
        if count * ports > MAX_LINKS:
            raise UsageError(f"--storage-count {count:,}: {count:,} appliances of {ports} ports need "
                             f"{count * ports:,} links, more than a design file holds ({MAX_LINKS:,}); "
                             f"use fewer storage appliances")


def run(args: argparse.Namespace) -> int:
    """:func:`_run` with Python's cycle collector paused: the design's hundreds of thousands of
    objects hold no cycles and live till the command ends, and the collector's passes over them
    while the design is built, saved and checked cost about a tenth of a 131k-GPU ``new``."""
    from designer.gcpause import collector_paused

    with collector_paused():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from designer.safeio import check_output_path, is_console
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog
    from designer.topology.management import switches_text
    from designer.topology.templates import TEMPLATES
    from designer.topology.validation import validate

    template = TEMPLATES[args.template]
    names = {o.name for o in template.options}
    given = {n: getattr(args, n) for n in _all_options() if getattr(args, n) is not None}
    wrong = sorted(set(given) - names)
    if wrong:
        raise UsageError(f"the {template.name} template takes no --{wrong[0].replace('_', '-')} "
                         f"(its options: {', '.join('--' + n.replace('_', '-') for n in sorted(names))})")
    check_output_path(args.output, what="--output")  # before minutes of building, not after
    catalog = load_catalog()
    check_numbers(template, given, catalog)
    # a new design gets these options' defaults (the management network), which a builder
    # called in code without them does not draw
    given = {**{o.name: o.default for o in template.options if o.fill}, **given}
    design = template(**given)
    from designer.services import workloads

    design.workload = (workloads.fitted_workload(args.workload, design, catalog) if args.workload
                       else workloads.suggested_workload(design, catalog))
    fileformat.save(design, args.output)
    problems = validate(design)
    errors = sum(p.severity == "error" for p in problems)
    topo = design.topology
    # the design on standard output (-o -) is data: the command's own lines go to stderr then
    out = sys.stderr if is_console(args.output) else sys.stdout
    where = "standard output" if is_console(args.output) else shown(args.output)
    print(f"wrote {where}: {len(topo.servers()):,} servers, {switches_text(topo)}, "
          f"{len(topo.links):,} links ({errors} design errors, {len(problems) - errors} warnings)", file=out)
    w = design.workload
    from designer.engine.fit import design_gpus, layout_of

    gpus, _ = design_gpus(design, catalog)
    if gpus and catalog.workload(w["preset"]).get("global_batch"):
        lay = layout_of(w, catalog, gpus)
        print(f"workload {shown(w['preset'])}: global batch {w['global_batch']}, layout {lay.label()} "
              f"on {lay.gpus} of {gpus} GPUs ('dpu-designer plan' searches the others)", file=out)
    return 0
