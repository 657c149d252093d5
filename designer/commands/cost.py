"""``dpu-designer cost FILE``: the priced bill of materials, CapEx, TCO and what each mode buys per
dollar, kilowatt and rack unit, with the payback of SmartNICs and DPUs.

The figures are :func:`designer.services.cost.costs` of the runs ``compare`` makes (same options).
"""

from __future__ import annotations

import json
import math
import sys

from designer.commands.run import add_engine_options, prepare
from designer.commands import COMMANDS
from designer.errors import UsageError
from designer.safeio import console_target


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "cost", help=COMMANDS["cost"],
        description="Price the design (models/costs/prices.toml, each price with its basis, date and source; "
                    "your own with --price or a user catalog), add energy, space and support over its "
                    "lifetime (TCO), and show what the host-managed, SmartNIC and DPU runs buy per dollar, "
                    "kW and rack unit, the cost of one training run and the payback of the adapters.")
    add_engine_options(p)
    p.add_argument("--price", action="append", default=[], metavar="KIND:MODEL=USD",
                   help="set a price for this run, e.g. --price nic:connectx-7=1650 --price "
                        "cable:AOC=450 --price transceiver:DR:800=1100 (repeatable)")
    for opt, key, help_ in (("--lifetime-years", "lifetime_years", "years of use the CapEx is spread over"),
                            ("--pue", "pue", "power usage effectiveness of the site"),
                            ("--price-per-kwh", "price_per_kWh", "electricity price, USD per kWh"),
                            ("--space-usd-per-kw-month", "space_USD_per_kW_month",
                             "colocation rate, USD per kW of nameplate IT power per month"),
                            ("--support-pct", "support_pct", "support contract, percent of CapEx per year")):
        p.add_argument(opt, type=_non_negative, dest=key, help=help_)
    p.add_argument("--save", action="store_true",
                   help="keep the --price and site values in the design file (meta.costs)")
    p.add_argument("--csv", metavar="OUT.csv", help="also write the priced bill as CSV")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"must be a number of 0 or more, got {text!r}")
    return value


def parse_prices(items: list[str]) -> dict[str, dict]:
    """``KIND:MODEL=USD`` items as the design's price overrides."""
    import datetime

    out: dict[str, dict] = {}
    for item in items:
        key, eq, text = item.partition("=")
        kind, colon, _model = key.partition(":")
        if not eq or not colon or not kind.strip() or not _model.strip():
            raise UsageError(f"--price {item}: write KIND:MODEL=USD, e.g. --price nic:connectx-7=1650")
        try:
            usd = _non_negative(text)
        except UsageError:
            raise UsageError(f"--price {item}: the price must be a number of 0 or more (USD), "
                             "e.g. --price nic:connectx-7=1650") from None
        out[key.strip()] = {"USD": usd, "date": datetime.date.today().isoformat(),
                            "source": "set with dpu-designer cost --price"}
    return out


def run(args) -> int:
    from designer.engine.compare import compare
    from designer.services import cost as svc

    design, catalog, seed, kwargs = prepare(args)
    given = {"lifetime_years": args.lifetime_years, "pue": args.pue, "price_per_kWh": args.price_per_kWh,
             "space_USD_per_kW_month": args.space_USD_per_kW_month,
             "support_fraction_per_year": None if args.support_pct is None else args.support_pct / 100.0}
    for key, value in given.items():
        problem = None if value is None else svc.site_problem(key, value)
        if problem and key == "support_fraction_per_year":
            raise UsageError(f"--support-pct {100 * value:g}: must be 0 to 100 (percent of CapEx a year)")
        if problem:
            raise UsageError(f"--{key.replace('_', '-').lower()} {value:g}: {problem}")
    prices = parse_prices(args.price)
    meta_costs = dict((design.meta or {}).get("costs") or {})
    if prices:
        meta_costs["prices"] = {**(meta_costs.get("prices") or {}), **prices}
        design.meta = {**(design.meta or {}), "costs": meta_costs}
    cmp = compare(design, catalog, seed=seed, **kwargs)
    result = svc.costs(design, catalog, cmp, **given)
    if args.save:
        _save(args.file, design, meta_costs, given)
    if args.csv:
        _write_csv(args.csv, result, args.file)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    elif args.csv and console_target(args.csv) == 1:
        # the bill is on standard output as CSV: the rest of the table goes to standard error,
        # without the bill a second time in other number formats
        print(format_costs(result, bill=False, site=True), file=sys.stderr)
    else:
        print(format_costs(result))
    return 0


def _save(path: str, design, meta_costs: dict, given: dict) -> None:
    from designer.services.cost import with_site
    from designer.topology import fileformat

    design.meta = with_site({**(design.meta or {}), "costs": meta_costs},
                            {k: v for k, v in given.items() if v is not None})
    fileformat.save(design, path)


def _write_csv(path: str, result, source: str) -> None:
    import csv
    import io

    from designer.safeio import atomic_write_text, check_output_path
    from designer.textsafe import csv_row

    check_output_path(path, inputs=(source,), what="--csv")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["category", "model", "name", "count", "unit_USD", "total_USD", "basis", "date", "source"])
    for line in result.bill.lines:
        w.writerow(csv_row((line.category, line.model, line.name, line.count,
                                        "" if line.unit_USD is None else f"{line.unit_USD:.2f}",
                                        "" if line.total_USD is None else f"{line.total_USD:.2f}",
                                        line.basis, line.date, line.source)))
    atomic_write_text(path, buf.getvalue())


def format_costs(c, bill: bool = True, site: bool | None = None) -> str:
    """The cost table: with ``bill``, the priced bill and the site figures first (``cost``); without,
    the modes' figures and paybacks only (``compare`` prints them under its own table); ``site``
    (default: with the bill) the site figures of the TCO."""
    from designer.engine.compare import LABEL
    from designer.services.cost import basis_share_text, figure_rows, money, payback_lines

    site = bill if site is None else site
    if not bill:
        head = _site_lines(c) + [""] if site else []
        return "\n".join(_mode_lines(c, LABEL, figure_rows, money, payback_lines, head))
    lines = [f"{'bill of materials (as drawn)':<44}{'count':>8}{'unit':>12}{'total':>14}  basis"]
    for line in c.bill.lines:
        lines.append(f"{(line.category + ' ' + line.model)[:43]:<44}{line.count:>8,}"
                     f"{money(line.unit_USD):>12}{money(line.total_USD):>14}  {line.basis}")
    lines.append(f"{'CapEx (as drawn)':<64}{money(c.bill.capex_USD):>14}")
    if c.bill.capex_USD:
        lines.append("  " + basis_share_text(c.bill))
    if c.bill.missing:
        lines.append("  not priced (left out): " + ", ".join(c.bill.missing))
    if c.management is not None and c.management.switches:
        lines.append(c.management.text())
    lines += [""] + (_site_lines(c) if site else [])
    return "\n".join(_mode_lines(c, LABEL, figure_rows, money, payback_lines, lines + [""]))


def _site_lines(c) -> list[str]:
    lines = ["site (TCO)"]
    for k, f in c.site.items():
        lines.append(f"  {k:<28}{f.value:>10g}  {f.source if f.source.startswith(f.basis) else f.basis + ': ' + f.source}")
    return lines


def _mode_lines(c, LABEL, figure_rows, money, payback_lines, lines: list[str]) -> list[str]:
    names = list(c.modes)
    W = 20
    lines += [f"{'costs (' + c.currency + ')':<34}" + "".join(f"{LABEL.get(n, n):>{W}}" for n in names)]
    m = [c.modes[n] for n in names]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"{label:<34}" + "".join(v.rjust(W) for v in values))

    from designer.report.names import tco_part_rows  # the TCO's parts as the app and the report name them

    rows = figure_rows(c)
    for label, values, _ in rows[:2]:
        row(label, values)
    for label, values, _ in tco_part_rows(c):
        row(f"  {label}", values)
    for label, values, _ in rows[2:]:
        row(label, values)
    for x in m:
        for s in x.swaps:
            lines.append(f"note ({LABEL.get(x.mode, x.mode)}): {s}")
    if c.paybacks:
        lines += ["", "payback of the adapters"] + [f"  - {t}" for t in payback_lines(c, LABEL)]
    return lines
