"""Plain-language list of what limits an iteration, biggest first."""

from __future__ import annotations

from typing import cast

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
    return cast(str, c.props.get("tier", "leaf") if c.kind == "switch" else c.kind.replace("gpu_server", "server"))


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
        half = 0.5 * util[arc] * (1.0 + net.UTIL_TIE)  # half used counts, give or take rounding
        if len(sib) > 1 and util[sib].min() <= half:
            idle = int((util[sib] <= half).sum())
            return (f"ECMP hash collisions on {a} uplinks ({idle} of {len(sib)} idle or half used) "
                    f"limit {label} to {pct:.0f}% of NIC line rate; adaptive routing would spread them")
        if ratio > 1.0 + 1e-6:
            return (f"{ta}-{tb} oversubscription {ratio:.3g}:1 at {a} limits {label} to {pct:.0f}% "
                    f"of NIC line rate")
        return (f"{label} crosses the {ta}-{tb} links ({a} → {b}), which saturate: "
                f"{pct:.0f}% of NIC line rate (rails not aligned?)")
    return f"link {a} → {b} saturates and limits {label} to {pct:.0f}% of NIC line rate"


#: sharing the fabric with other jobs is reported when it slows the slowest job by more than this
SHARED_SLOWDOWN = 0.01


def _sharing_reason(result, names: dict, infos: dict, alone: dict, fab: net.Fabric, topo,
                    phases: dict) -> tuple[float, str] | None:
    """Where several jobs meet and what it costs the slowest one (``result.tenants``): the
    dimension whose worst group lost the most rate against the same job alone, the link its
    slowest flow is limited by, and how many jobs' flows cross that link. None when sharing costs
    little, or when it only costs SHARP (:func:`_sharp_reason` says so)."""
    ten = result.tenants or {}
    pct = ten.get("slowdown_pct") or 0.0
    if ten.get("jobs", 1) <= 1 or pct <= 100 * SHARED_SLOWDOWN:
        return None
    weight = 0.5 + pct / (100 + pct)
    others = ten["jobs"] - 1
    lost = [(infos[d]["worst_rate_GBps"] / alone[d]["worst_rate_GBps"], d) for d in ("dp", "pp", "tp")
            if infos[d].get("worst_rate_GBps") is not None and alone[d].get("worst_rate_GBps")]
    ratio, dim = min(lost, default=(1.0, ""))
    arc = infos[dim].get("bottleneck_arc", -1) if dim else -1
    if ratio >= 1 - SHARED_SLOWDOWN or arc < 0:
        if any("sharp_time_s" in infos[d] and "sharp_switch" not in alone[d] for d in ("dp", "tp")):
            return None
        return weight, (f"sharing the fabric with {others} other job{'s' * (others > 1)} makes the "
                        f"slowest job's iterations {pct:.1f}% longer ({ten['iteration_alone_s']:.3g} s "
                        f"alone, {ten['iteration_shared_s']:.3g} s shared): its storage reads and "
                        f"checkpoint writes share the storage systems with theirs")
    ph = phases[dim]
    on = ph.routes.flow[(ph.routes.arc == arc) & (ph.sol.rate_GBps[ph.routes.flow] > 0)]
    jobs = len(np.unique(ph.flows.job[on]))
    a, b = fab.nodes[fab.arc_src[arc]], fab.nodes[fab.arc_dst[arc]]
    fix = ("packed placement (scenario tenant_placement=packed) or fewer jobs per leaf avoids it"
           if ten.get("placement") == "scattered" else
           "fewer jobs per leaf, jobs of whole leaves or more uplinks avoid it")
    return weight, (f"jobs meet on {_tier(topo, a)}-{_tier(topo, b)} links ({a} → {b} carries "
                    f"traffic of {jobs} job{'s' * (jobs != 1)}): the slowest job's {names[dim]} gets "
                    f"{infos[dim]['worst_rate_GBps']:.3g} GB/s shared vs {alone[dim]['worst_rate_GBps']:.3g} "
                    f"GB/s alone, {pct:.1f}% longer iterations; {fix}")


def _sharp_reason(result, names: dict, info: dict, dim: str, switch: str,
                  alone: dict | None) -> tuple[float, str]:
    """SHARP off for a group because a switch it crosses has fewer aggregation trees than the
    groups (of every job) crossing it; with several jobs, whether the job alone would run it."""
    ten = result.tenants or {}
    jobs, groups = info.get("sharp_switch_jobs", 1), info["sharp_switch_groups"]
    whose = (f"the {jobs} jobs' {dim.upper()} groups ({groups} in all)" if jobs > 1 else
             f"{groups} {dim.upper()} groups")
    saved = (info["fallback_time_s"] - info["sharp_time_s"]) * info["sharp_calls"]
    pct = ten.get("slowdown_pct") or 0.0
    alone_runs = alone is not None and "sharp_switch" not in alone.get(dim, {})
    cost = (f"; alone the job would run SHARP: sharing makes its iterations {pct:.1f}% longer"
            if alone_runs and pct > 0 else "")
    return (0.5 + saved / result.iteration_time_s,
            f"SHARP off for the {names[dim]}: {whose} cross {info['sharp_switch']} ({switch}), which "
            f"holds {info['sharp_switch_trees']} aggregation tree{'s' * (info['sharp_switch_trees'] != 1)} "
            f"(catalog sharp_trees); the all-reduce falls back to {info['sharp_fallback']}, "
            f"{1e3 * info['fallback_time_s']:.3g} ms instead of {1e3 * info['sharp_time_s']:.3g} ms per "
            f"call{cost}; fewer {'jobs' if jobs > 1 else 'groups'} per switch would let SHARP run")


def explain(result, w, fab: net.Fabric, topo, phases: dict, shapes: dict, infos: dict,
            res_report, alone_infos: dict | None = None, catalog=None) -> list[str]:
    """``alone_infos``: the slowest job's group figures without the other jobs' traffic (several
    jobs only); ``catalog`` names switch models in the SHARP sentence."""
    it = result.iteration_time_s
    items: list[tuple[float, str]] = []
    names = {"dp": "DP all-reduce" if not w.optimizer_sharded else "DP reduce-scatter/all-gather",
             "pp": "pipeline send/receive", "tp": "TP all-reduce"}
    for dim, key in (("dp", "dp_exposed"), ("pp", "pp_comm"), ("tp", "tp_comm")):
        if dim in phases:
            why = _network_reason(names[dim], infos[dim], fab, topo, phases[dim])
            if why:
                items.append((result.breakdown_s[key] / it + 0.5, why))
    if alone_infos is not None and (shared := _sharing_reason(result, names, infos, alone_infos, fab,
                                                               topo, phases)):
        items.append(shared)
    for dim in ("dp", "tp"):
        reduce = [c for c in result.collectives if c.name == f"{dim}_allreduce"]
        if "sharp_transport" in infos[dim] and dim in phases and reduce:  # SHARP reduces all-reduces
            used = reduce[0].algorithm
            items.append((0.4, f"SHARP off for the {names[dim]}: {infos[dim]['sharp_transport']} "
                               f"(the switches could reduce in-network; it runs as {used})"))
        if "sharp_time_s" in infos[dim]:
            model = topo.components[infos[dim]["sharp_switch"]].model
            name = catalog.get("switch", model).get("name", "") if catalog is not None else ""
            label = f"{model}, {name.split(' (')[0]}" if name else model
            items.append(_sharp_reason(result, names, infos[dim], dim, label, alone_infos))
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
