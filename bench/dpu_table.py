"""The README table "where a DPU beats a SmartNIC", built from runs (issue 21).

    python bench/dpu_table.py            # print the Markdown table
    python bench/dpu_table.py --json     # the rows as JSON (what tests/test_dpu_table.py reads)

Each row runs one design host-managed, SmartNIC-offloaded and DPU-offloaded through
:func:`designer.engine.compare.compare` (the same numbers as ``dpu-designer compare``) and names
the limit that decides the SmartNIC and the DPU runs: the engine or element that slows the
iteration (the storage read limit of a data stall, the over-subscribed adapter engine of a DPU
slowdown, the host task of a host-CPU slowdown), else the most loaded adapter engine. Each limit
is given with its figure, its kind (measured / datasheet / derived / assumed, from its catalog or
cost-file source line: :func:`designer.topology.catalog.figure_kind`) and its source. The
designs are small rail-optimized clusters of DGX H100 servers with one BlueField-3 per GPU (the
SmartNIC run prices each as the ConnectX-7 of the same line rate).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))

from designer.engine.compare import compare  # noqa: E402
from designer.engine.resources_adapter import CRYPTO_FIELD, nic_for_dpu  # noqa: E402
from designer.topology.catalog import figure_kind, load_catalog  # noqa: E402
from designer.topology.templates import rail_optimized  # noqa: E402

DPU_MODEL = "bluefield-3"


def _no_rdma(servers: int):
    """Tenant services over kernel TCP: the adapters' RDMA is off (cloud VMs/containers)."""
    d = rail_optimized(servers=servers, dpu=DPU_MODEL)
    for c in [c for c in d.topology.components.values() if c.kind == "dpu"]:
        d.topology.set_prop(c.id, "rdma", False)
    return d


#: (row name, design factory, compare keywords)
CASES: list[tuple[str, Callable[[], Any], dict[str, Any]]] = [
    ("cloud multi-tenant: 64-byte packets over TCP, overlay through the virtual switch, firewall, node agents",
     lambda: _no_rdma(4),
     dict(workload="llama3-8b", global_batch=64,
          scenario={"tenants": 2, "isolation": "overlay", "tenant_packet_bytes": 64, "vswitch": "kernel",
                    "firewall_conntrack": True, "k8s_agents": True})),
    ("NVMe/TCP storage emulation: 3D U-Net reading 147 MB samples over NVMe/TCP",
     lambda: rail_optimized(servers=4, dpu=DPU_MODEL, storage_count=8),
     dict(workload="unet3d-kits19", scenario={"storage_transport": "tcp"})),
    ("TLS object store: 3D U-Net samples over HTTPS, kTLS offload",
     lambda: rail_optimized(servers=4, dpu=DPU_MODEL, storage_count=8),
     dict(workload="unet3d-kits19", scenario={"object_store_tls": True, "crypto_offload": "ktls"})),
    ("encrypted fabric: Llama 3 8B, TP8 PP2 (pipeline sends cross servers) under IPsec crypto offload",
     lambda: rail_optimized(servers=8, dpu=DPU_MODEL),
     dict(workload="llama3-8b", global_batch=128, tp=8, pp=2, scenario={"encryption": True})),
]

#: adapter engine -> catalog figure (crypto: per protocol, CRYPTO_FIELD)
ENGINE_FIELD = {"line": "max_bandwidth_Gbps", "arm": "arm_tcp_Gbps", "dram": "dram_GBps",
                "eswitch": "eswitch_Mpps"}
#: storage read limit -> (catalog kind or "costs", figure)
READ_FIELD = {"DPU Arm cores": ("dpu", "arm_tcp_Gbps"), "DPU line rate": ("dpu", "max_bandwidth_Gbps"),
              "DPU memory": ("dpu", "dram_GBps"), "DPU storage emulation": ("dpu", "snap_{transport}_kiops"),
              "host CPU": ("costs", "tcp_cycles_per_byte"), "DPU crypto": ("dpu", "{crypto}"),
              "SmartNIC crypto": ("nic", "{crypto}"), "DPU eSwitch": ("dpu", "eswitch_Mpps"),
              "SmartNIC eSwitch": ("nic", "eswitch_Mpps")}
#: host task -> the cost figure that sets it
TASK_FIGURE = {"network": "tcp_cycles_per_byte", "crypto": "aes_gcm_cycles_per_byte",
               "virtualization": "vswitch_cycles_per_packet", "storage": "tcp_cycles_per_byte",
               "firewall": "conntrack_cycles_per_packet", "agents": "k8s_agent_cores",
               "filesystem": "pfs_client_cycles_per_byte"}


def task_figure(task: str, scenario: dict[str, Any], catalog) -> str:
    """The cost figure that sets a host task: for the kernel TCP stack in packets smaller than
    a TSO/GRO aggregate, the per-packet figure when it outweighs the per-byte one
    (:func:`designer.engine.hostcpu.tcp_packet_cycles_per_byte`)."""
    pkt = float(scenario.get("tenant_packet_bytes") or 0)
    if task in ("network", "storage") and pkt > 0:
        costs = {k: float(v["value"]) for k, v in catalog.costs("host_cpu").items()}
        if costs["tcp_cycles_per_packet"] * (1 / pkt - 1 / costs["vswitch_packet_bytes"]) > costs["tcp_cycles_per_byte"]:
            return "tcp_cycles_per_packet"
    return TASK_FIGURE[task]


def _catalog_limit(catalog, kind: str, model: str, field: str, what: str) -> dict[str, Any]:
    entry = catalog.get(kind, model)
    if kind == "nic" and field == "crypto_Gbps" and not entry.get("crypto_Gbps"):
        # a SmartNIC without a crypto rate of its own runs at its crypto-enabled part's: the
        # measured fraction of its line rate (resources_adapter.smartnic_crypto_Gbps)
        table = catalog.costs("dpu")["inline_crypto_fraction_of_line"]
        return {"limit": what, "model": model, "figure": "inline_crypto_fraction_of_line x max_bandwidth_Gbps",
                "value": table["value"] * float(entry["max_bandwidth_Gbps"]),
                "kind": figure_kind(table["source"]), "source": table["source"]}
    src = catalog.source_of(kind, model, field)
    return {"limit": what, "model": model, "figure": field, "value": entry.get(field),
            "kind": figure_kind(src), "source": src}


def _storage_limit(catalog, design, limit: str) -> dict[str, Any]:
    """A read limit outside the adapters: the storage systems' read rate or the fabric."""
    models = sorted({c.model for c in design.topology.components.values() if c.kind == "storage"})
    if limit == "storage target" and models:
        return {**_catalog_limit(catalog, "storage", models[0], "read_GBps", f"storage read: {limit}")}
    return {"limit": f"storage read: {limit}", "model": "", "figure": "", "value": None, "kind": "",
            "source": "the design's storage network links"}


def _cost_limit(catalog, name: str, what: str) -> dict[str, Any]:
    table = catalog.costs("host_cpu")[name]
    return {"limit": what, "model": "host CPU", "figure": name, "value": table["value"],
            "kind": figure_kind(table["source"]), "source": table["source"]}


def deciding_limit(r, mode: str, catalog, scenario: dict[str, Any], design=None) -> dict[str, Any]:
    """The limit that decides run ``r`` (mode "smartnic" or "dpu"), with figure, kind and source."""
    model = DPU_MODEL if mode == "dpu" else str(nic_for_dpu(catalog, catalog.get("dpu", DPU_MODEL), None)["id"])
    kind = "dpu" if mode == "dpu" else "nic"
    crypto = CRYPTO_FIELD[str(scenario.get("crypto_offload", "ipsec-crypto"))]
    b, res = r.breakdown_s, r.resources or {}
    groups = res.get("groups", [])
    if b.get("data_stall", 0.0) > 0 and groups:
        limit = next(g["read_limit"] for g in groups if g.get("read_limit"))
        where, field = READ_FIELD.get(limit, ("", ""))
        field = field.format(transport=scenario.get("storage_transport", "rdma"), crypto=crypto)
        if where == "costs":
            return _cost_limit(catalog, field, f"storage read: {limit}")
        if where:
            return _catalog_limit(catalog, kind if where in ("dpu", "nic") else where, model, field,
                                  f"storage read: {limit}")
        return _storage_limit(catalog, design, limit)
    engines = dict(r.dpu)
    if b.get("dpu_slowdown", 0.0) > 0 and engines:
        e = max(engines, key=engines.__getitem__)
        return _catalog_limit(catalog, kind, model, crypto if e == "crypto" else ENGINE_FIELD[e],
                              f"{e} engine over-subscribed {engines[e]:.2f}x")
    tasks = {t: v for t, v in r.host_cpu.get("by_task", {}).items() if t in TASK_FIGURE and v > 0}
    if b.get("host_cpu_slowdown", 0.0) > 0 and tasks:
        t = max(tasks, key=tasks.__getitem__)
        return _cost_limit(catalog, task_figure(t, scenario, catalog),
                           f"host CPU: {t} {100 * tasks[t]:.1f}% of cycles")
    if mode == "smartnic" and tasks and max(tasks.values()) >= 0.01:
        # nothing binds: what the SmartNIC leaves on the host is the larger load
        t = max(tasks, key=tasks.__getitem__)
        return _cost_limit(catalog, task_figure(t, scenario, catalog), f"no limit binds; the host keeps "
                                                                       f"{t} at {100 * tasks[t]:.1f}% of cycles")
    if engines:
        e = max(engines, key=engines.__getitem__)
        return _catalog_limit(catalog, kind, model, crypto if e == "crypto" else ENGINE_FIELD[e],
                              f"no limit binds; most loaded: {e} engine {100 * engines[e]:.0f}%")
    return {"limit": "no limit binds", "model": model, "figure": "", "value": None, "kind": "", "source": ""}


def row(name: str, design, kwargs: dict[str, Any], catalog) -> dict[str, Any]:
    cmp = compare(design, catalog, **kwargs)
    scen = {**design.scenario, **kwargs.get("scenario", {})}
    it = {m: cmp.runs[m].iteration_time_s for m in ("host", "smartnic", "dpu")}
    energy = {m: cmp.runs[m].energy_kwh for m in ("host", "smartnic", "dpu")}
    d_it = 100 * (it["dpu"] / it["smartnic"] - 1)
    d_en = 100 * (energy["dpu"] / energy["smartnic"] - 1) if energy["smartnic"] else math.nan
    return {"case": name, "iteration_s": it, "energy_kwh": energy,
            "dpu_vs_smartnic_iteration_pct": d_it, "dpu_vs_smartnic_energy_pct": d_en,
            "dpu_beats_smartnic": d_it < -0.05,
            "infra_fraction": {m: cmp.runs[m].host_cpu.get("infra_fraction", 0.0) for m in it},
            "limits": {m: deciding_limit(cmp.runs[m], m, catalog, scen, design) for m in ("smartnic", "dpu")},
            "dpu_engines": dict(cmp.runs["dpu"].dpu),
            "verdict": cmp.vendor_claim()["verdict"]}


def rows(catalog=None) -> list[dict[str, Any]]:
    catalog = catalog or load_catalog()
    return [row(name, make(), kwargs, catalog) for name, make, kwargs in CASES]


def _limit_cell(lim: dict[str, Any]) -> str:
    if not lim.get("figure"):
        return f"{lim['limit']} ({lim.get('source') or 'none'})"
    src = lim["source"]
    short = src if len(src) <= 160 else src[:157] + "..."
    return f"{lim['limit']}: {lim['model']} {lim['figure']} = {lim['value']:g} ({lim['kind']}; {short})"


def markdown(data: list[dict[str, Any]]) -> str:
    lines = ["| case | iteration s: host / SmartNIC / DPU | DPU vs SmartNIC | host infra share: host / SmartNIC / DPU "
             "| deciding limit, SmartNIC run | deciding limit, DPU run | DPU engine loads |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in data:
        it, sh = r["iteration_s"], r["infra_fraction"]
        verdict = ("DPU faster" if r["dpu_beats_smartnic"] else "no faster") + \
            f": iteration {r['dpu_vs_smartnic_iteration_pct']:+.1f}%, energy {r['dpu_vs_smartnic_energy_pct']:+.1f}%"
        lines.append(f"| {r['case']} | {it['host']:.4g} / {it['smartnic']:.4g} / {it['dpu']:.4g} | {verdict} "
                     f"| {100 * sh['host']:.1f}% / {100 * sh['smartnic']:.1f}% / {100 * sh['dpu']:.1f}% "
                     f"| {_limit_cell(r['limits']['smartnic'])} | {_limit_cell(r['limits']['dpu'])} "
                     f"| {', '.join(f'{e} {100 * v:.0f}%' for e, v in r['dpu_engines'].items())} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    data = rows()
    print(json.dumps(data, indent=1, default=str) if "--json" in argv else markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
