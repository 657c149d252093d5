"""Plain-language list of what limits an iteration, biggest first."""

from __future__ import annotations

import numpy as np

from designer.engine import network as net

#: a rail reaching less than this share of its NIC line rate is reported
SLOW_RAIL = 0.9


def _oversubscription(fab: net.Fabric, topo, switch: int) -> float:
    """Capacity towards endpoints / capacity towards other switches of one switch."""
    out = fab.out_arc[fab.out_ptr[switch]:fab.out_ptr[switch + 1]]
    cap = np.array([topo.links[fab.link_ids[fab.arc_link[a]]].capacity_Gbps for a in out])
    to_sw = fab.is_switch[fab.arc_dst[out]]
    up = cap[to_sw].sum()
    return float(cap[~to_sw].sum() / up) if up > 0 else float("inf")


def _tier(topo, node: str) -> str:
    c = topo.components[node]
    return c.props.get("tier", "leaf") if c.kind == "switch" else c.kind.replace("gpu_server", "server")


def _network_reason(label: str, info: dict, fab: net.Fabric, topo, phase) -> str | None:
    line, worst = info.get("line_GBps", 0.0), info.get("worst_rate_GBps", 0.0)
    if not line or worst >= SLOW_RAIL * line:
        return None
    pct = 100.0 * worst / line
    arc = info.get("bottleneck_arc", -1)
    if arc < 0:
        return f"{label} reaches only {pct:.0f}% of NIC line rate"
    a, b = fab.nodes[fab.arc_src[arc]], fab.nodes[fab.arc_dst[arc]]
    ta, tb = _tier(topo, a), _tier(topo, b)
    util = phase.sol.arc_utilization
    if fab.is_switch[fab.arc_src[arc]] and fab.is_switch[fab.arc_dst[arc]]:
        s = fab.arc_src[arc]
        sib = fab.out_arc[fab.out_ptr[s]:fab.out_ptr[s + 1]]
        sib = sib[fab.is_switch[fab.arc_dst[sib]]]
        ratio = _oversubscription(fab, topo, s)
        if len(sib) > 1 and util[sib].min() < 0.5 * util[arc]:
            idle = int((util[sib] < 0.5 * util[arc]).sum())
            return (f"ECMP hash collisions on {a} uplinks ({idle} of {len(sib)} idle or half used) "
                    f"limit {label} to {pct:.0f}% of NIC line rate; adaptive routing would spread them")
        if ratio > 1.0 + 1e-6:
            return (f"{ta}-{tb} oversubscription {ratio:.3g}:1 at {a} limits {label} to {pct:.0f}% "
                    f"of NIC line rate")
        return (f"{label} crosses the {ta}-{tb} links ({a} → {b}), which saturate: "
                f"{pct:.0f}% of NIC line rate (rails not aligned?)")
    return f"link {a} → {b} saturates and limits {label} to {pct:.0f}% of NIC line rate"


def explain(result, w, fab: net.Fabric, topo, phases: dict, shapes: dict, infos: dict,
            res_report) -> list[str]:
    it = result.iteration_time_s
    items: list[tuple[float, str]] = []
    names = {"dp": "DP all-reduce" if not w.optimizer_sharded else "DP reduce-scatter/all-gather",
             "pp": "pipeline send/receive", "tp": "TP all-reduce"}
    for dim, key in (("dp", "dp_exposed"), ("pp", "pp_comm"), ("tp", "tp_comm")):
        if dim in phases:
            why = _network_reason(names[dim], infos[dim], fab, topo, phases[dim])
            if why:
                items.append((result.breakdown_s[key] / it + 0.5, why))
    b = result.breakdown_s
    if b["bubble"] / it > 0.05:
        items.append((b["bubble"] / it, f"pipeline bubble takes {100 * b['bubble'] / it:.0f}% of the "
                      f"iteration (pp={w.pp}, {w.micro_batches} micro-batches, interleave {w.interleave}); "
                      f"more micro-batches or interleaving shrink it"))
    if b["tp_comm"] / it > 0.05:
        items.append((b["tp_comm"] / it, f"TP all-reduces take {100 * b['tp_comm'] / it:.0f}% of the "
                      f"iteration (tp={w.tp}, {'inside' if shapes['tp'].nodes == 1 else 'across'} servers)"))
    if b["pp_comm"] / it > 0.05:
        items.append((b["pp_comm"] / it, f"pipeline send/receive takes {100 * b['pp_comm'] / it:.0f}% "
                      f"of the iteration"))
    if b["dp_exposed"] / it > 0.05:
        items.append((b["dp_exposed"] / it, f"exposed DP gradient communication takes "
                      f"{100 * b['dp_exposed'] / it:.0f}% of the iteration (dp={w.dp})"))
    if res_report is not None:
        for i, text in enumerate(res_report.bottlenecks):
            items.append((0.3 - 0.01 * i, text))
    items.sort(key=lambda x: -x[0])
    return [t for _, t in items]
