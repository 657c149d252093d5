"""``dpu-designer catalog [KIND] [--json]``: list the catalog entries with key figures and sources."""

from __future__ import annotations

import argparse
import json

from designer.errors import UsageError
from designer.topology import catalog as cat

#: figures shown in the table for each kind (every figure is in --json)
KEY_FIGURES = {
    "gpu": ("memory_GB", "bf16_dense_tflops", "nvlink_GBps", "tdp_W", "gemm_efficiency"),
    "cpu": ("cores", "all_core_GHz", "tdp_W"),
    "server": ("gpu_model", "gpu_count", "nic_model", "nic_count", "dpu_model", "dpu_count",
               "base_power_W"),
    "dpu": ("max_bandwidth_Gbps", "arm_cores", "crypto_Gbps", "power_W"),
    "nic": ("port_speed_Gbps", "pcie_gen", "power_W"),
    "switch": ("ports", "port_speed_Gbps", "latency_ns", "sharp_trees", "medium"),
    "storage": ("read_GBps", "write_GBps", "capacity_TB", "ports", "port_speed_Gbps"),
    "rack": ("rack_units", "power_budget_kW"),
    cat.WORKLOAD: ("kind", "params_B", "gpus", "tp", "pp", "published_tflops_per_gpu",
                   "bytes_per_sample"),
}
_SOURCE_WIDTH = 70
#: ``catalog costs``: the engine's cost figures (models/costs/<file>.toml), each with its kind
COSTS = "costs"
COST_FILES = ("host_cpu", "dpu", "storage", "jitter", "energy")
#: the limits the engine reads of each adapter kind, listed one per line with kind and source
LIMITS = {
    "dpu": ("max_bandwidth_Gbps", "crypto_Gbps", "ipsec_packet_Gbps", "ktls_Gbps", "eswitch_Mpps",
            "arm_cores", "arm_GHz", "arm_tcp_Gbps", "dram_GBps", "snap_tcp_kiops", "snap_rdma_kiops",
            "power_W", "typical_power_W"),
    "nic": ("max_bandwidth_Gbps", "crypto_Gbps", "ipsec_packet_Gbps", "ktls_Gbps", "eswitch_Mpps",
            "power_W", "typical_power_W"),
}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "catalog", help="list hardware and workload catalog entries",
        description="List catalog entries (packaged and user catalogs) with key figures and sources.")
    parser.add_argument("kind", nargs="?", metavar="KIND",
                        help=f"one of {', '.join(cat.ALL_KINDS)} (default: all), or {COSTS}: "
                             f"the engine's cost figures (host CPU, DPU, storage, jitter, energy) "
                             f"with their kind and source")
    parser.add_argument("--json", action="store_true", help="print every figure and source as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.kind is not None and args.kind.lower() == COSTS:
        return _run_costs(cat.load_catalog(), args.json)
    kinds = _kinds(args.kind)
    catalog = cat.load_catalog()
    cat.report_problems(catalog)
    if args.json:
        data = {kind: [_with_kinds(kind, e) for e in catalog.entries(kind)] for kind in kinds}
        print(json.dumps(data[kinds[0]] if args.kind else data, indent=2))
        return 0
    for n, kind in enumerate(kinds):
        if n:
            print()
        print(_table(kind, catalog.entries(kind)))
        if kind in LIMITS:
            print(_limits(kind, catalog.entries(kind)))
    return 0


#: the kind column fits the longest kind a source can give ("datasheet, tuning limit")
KIND_WIDTH = max(len(k) for k in cat.FIGURE_KINDS) + len(", tuning limit")


def _limits(kind: str, entries: list[dict]) -> str:
    """Each limit of each entry on its own line: figure, kind (measured / datasheet / derived /
    assumed, and whether a tuning limit) and the whole source."""
    lines = ["", f"{kind} limits (figure, kind, source)"]
    width = max(len(f) for f in LIMITS[kind])
    for e in entries:
        lines.append(f"  {e['id']}")
        for f in LIMITS[kind]:
            if f not in e:
                continue
            src = _limit_source(e, f)
            lines.append(f"    {f:<{width}}  {_fmt(e[f]):>7}  {cat.figure_kind(src):<{KIND_WIDTH}}  {src}")
    return "\n".join(lines)


def cost_figures(catalog) -> dict[str, dict[str, dict]]:
    """Every cost figure of ``COST_FILES``: file -> name -> value, kind (measured / datasheet /
    derived / assumed, from its source line) and source. Tables without a value and a source
    (none in the packaged files) are left out."""
    out: dict[str, dict[str, dict]] = {}
    for name in COST_FILES:
        try:
            table = catalog.costs(name)
        except KeyError:
            continue
        out[name] = {k: {"value": v["value"], "kind": cat.figure_kind(str(v.get("source", ""))),
                         "source": str(v.get("source", ""))}
                     for k, v in table.items() if isinstance(v, dict) and "value" in v}
    return out


def _run_costs(catalog, as_json: bool) -> int:
    figures = cost_figures(catalog)
    if as_json:
        print(json.dumps(figures, indent=2))
        return 0
    lines = ["costs (models/costs: figure, value, kind, source)"]
    for name, table in figures.items():
        lines.append(f"  {name}")
        width = max((len(k) for k in table), default=0)
        for k, f in table.items():
            lines.append(f"    {k:<{width}}  {_fmt(f['value']):>9}  {f['kind']:<{KIND_WIDTH}}  {f['source']}")
    print("\n".join(lines))
    return 0


def _limit_source(e: dict, figure: str) -> str:
    return e.get("sources", {}).get(figure) or e.get("source", "")


def _with_kinds(kind: str, e: dict) -> dict:
    """An entry as ``--json`` prints it: for an adapter, ``kinds`` gives each limit's kind
    (measured / datasheet / derived / assumed, tuning limit), the column the text prints."""
    if kind not in LIMITS:
        return e
    return {**e, "kinds": {f: cat.figure_kind(_limit_source(e, f)) for f in LIMITS[kind] if f in e}}


def _kinds(kind: str | None) -> tuple[str, ...]:
    if kind is None:
        return cat.ALL_KINDS
    aliases = {"gpu_server": "server", "workloads": cat.WORKLOAD}
    kind = aliases.get(kind.lower(), kind.lower())
    if kind not in cat.ALL_KINDS:
        raise UsageError(f"unknown kind '{kind}'; choose one of {', '.join(cat.ALL_KINDS)} or {COSTS}")
    return (kind,)


def _table(kind: str, entries: list[dict]) -> str:
    rows = [("ID", "NAME", "KEY FIGURES", "SOURCE")]
    for e in entries:
        figures = "  ".join(f"{f}={_fmt(e[f])}" for f in KEY_FIGURES[kind] if f in e)
        source = e.get("source", "")
        if len(source) > _SOURCE_WIDTH:
            source = source[: _SOURCE_WIDTH - 3] + "..."
        rows.append((e["id"], e["name"], figures, source))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{kind} ({len(entries)})"]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3] for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
