"""The engine: workload → placement → traffic → network (+ collectives) → resources → result.

Iteration model (Narayanan et al. SC'21 §2.2 and §3): with m micro-batches per pipeline,
    t_iteration = m·t_mb + bubble + exposed DP communication + resources-stage extras
    t_mb        = compute (GEMM + memory-bound) + TP all-reduces + PP send/receive
    bubble      = (p − 1)/v · t_mb
The DP gradient all-reduce overlaps the backward pass of the last micro-batch (gradient buckets
are reduced as they complete); only what is left over is exposed. The resources stage adds collectives
slowed by a saturated host CPU or DPU engine, data stalls, stragglers and amortized checkpoints
(``breakdown_s`` names each; see ``designer.engine.result.BREAKDOWN_KEYS``).

Several training jobs (``scenario.tenants``) share the fabric: :func:`run` places them all, solves
their flows together (:func:`_network`) and evaluates the stages after placement (:func:`_evaluate`)
for all jobs, then for the slowest job alone on the same routes (:func:`_alone`) to measure what
sharing costs it.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, Callable, cast

import numpy as np

from designer.engine import collectives as coll
from designer.engine import congestion
from designer.engine import energy
from designer.engine import network as net
from designer.engine import resources_adapter
from designer.engine import timing
from designer.engine import traffic as tr
from designer.engine.cache import EngineCache
from designer.engine.placement import (Placement, attached_all, components_by_kind, ep_block, ep_within_domain,
                                      job_servers, parse_order, place, place_jobs, servers_of, usable_gpus,
                                      workload_order)
from designer.engine.result import BREAKDOWN_KEYS, CollectiveResult, LinkResults, Result
from designer.engine.workload import (DEFAULT_DATASET_SAMPLES, Workload, bubble_s, compute, from_dict,
                                      host_link_GBps, optimizer_offload_times,
                                      GPU_MEMORY_GB_BYTES, gpu_memory_GB, memory_parts, model_flops_per_iteration, model_state_GB, parameters, short,
                                      shrunk_ep_warning,
                                      training_time_s)
from designer.errors import UsageError
from designer.gcpause import collector_paused
from designer.topology.design import SCENARIO_CHOICES, SCENARIO_SPEC
from designer.topology.validation import Resolver

#: keyword overrides ``run`` accepts (workload fields, plus ``workload`` = preset id or dict and
#: ``placement`` = nesting order)
OVERRIDES = ("tp", "pp", "dp", "cp", "ep", "micro_batch", "global_batch", "seq_len", "tokens", "tflops_per_gpu",
             "interleave", "recompute", "optimizer_sharded", "flash_attention", "precision")


def workload_data(design, catalog, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The workload's fields as one dict: design workload (``preset`` = catalog id, plus fields)
    ← ``workload`` override (preset id or dict) ← field overrides (``OVERRIDES``)."""
    overrides = overrides or {}
    data: dict[str, Any] = {}
    spec = overrides.get("workload")
    base = dict(design.workload or {})
    preset = base.pop("preset", None)
    if isinstance(spec, dict):
        base, preset = dict(spec), spec.get("preset")
    elif isinstance(spec, str) and spec:
        base, preset = {}, spec
    if preset:
        try:
            data.update(catalog.workload(preset))
        except KeyError as exc:
            raise UsageError(f"workload: {exc.args[0]}") from None
    data.update(base)
    for key in OVERRIDES:
        if overrides.get(key) is not None:
            data[key] = overrides[key]
    if any(overrides.get(k) is not None for k in ("tp", "pp")) and overrides.get("dp") is None:
        data.pop("dp", None)
        data.pop("gpus", None)
    return data


def resolve_workload(design, catalog, total_gpus: int, gpu: dict[str, Any],
                     overrides: dict[str, Any], domain: int = 0) -> Workload:
    """The workload of :func:`workload_data` checked for ``total_gpus`` GPUs. ``domain``: GPUs
    per NVLink domain of the servers (0: not checked)."""
    data = workload_data(design, catalog, overrides)
    try:
        return from_dict(data, total_gpus, gpu=gpu)
    except UsageError as exc:
        hint = tp_domain_problem(data.get("tp"), domain)
        raise UsageError(f"workload: {hint}; and {str(exc).removeprefix('workload: ')}" if hint
                         else str(exc)) from None


def tp_domain_problem(tp: Any, domain: int) -> str | None:
    """Why ``tp`` does not fit servers with ``domain`` GPUs per NVLink domain, or None.

    A tensor-parallel group fits when tp divides the domain (all on NVLink) or is a multiple of
    it (whole servers; the all-reduces cross the network, which the engine costs). Any other tp
    splits groups unevenly over servers: allowed and costed, but rarely meant. A bad tp (not a
    positive whole number) is left to ``from_dict`` to name.
    """
    if not isinstance(tp, int) or isinstance(tp, bool) or tp < 1 or domain < 1:
        return None
    if domain % tp == 0 or tp % domain == 0:
        return None
    fits = ", ".join(str(d) for d in range(1, domain + 1) if domain % d == 0)
    return (f"tp {tp} does not divide the {domain} GPUs of a server's NVLink domain, so tensor-"
            f"parallel groups straddle servers and their all-reduces cross the network; use tp "
            f"{fits} to keep them on NVLink (a multiple of {domain} spans whole servers)")


@dataclass
class _Phase:
    name: str
    flows: tr.FlowSet
    routes: net.Routes | None = None
    sol: net.Solution | None = None
    idx_src: np.ndarray | None = None

    def solved(self) -> tuple[net.Routes, net.Solution]:
        """Routes and rates of a phase :func:`_solve_phase` has solved."""
        if self.routes is None or self.sol is None:
            raise RuntimeError(f"the {self.name} phase has not been solved")
        return self.routes, self.sol


def _solve_phase(fab: net.Fabric, cap: np.ndarray, ph: _Phase, routing: str, seed: int) -> None:
    n = len(ph.flows.src)
    # node index of each end; -1 for an end that is not on the network (None or unlinked)
    src = fab.node_indices(ph.flows.src)
    dst = fab.node_indices(ph.flows.dst)
    if n and (src.min() < 0 or dst.min() < 0):
        raise UsageError(f"{ph.name} traffic must leave a server that has no network link; "
                         f"connect its NICs/DPUs to a switch")
    ph.idx_src = src
    ph.routes = net.route(fab, src, dst, routing, seed)
    lost = np.flatnonzero(~ph.routes.routed & (src != dst))
    if len(lost):
        a, b = ph.flows.src[lost[0]], ph.flows.dst[lost[0]]
        raise UsageError(f"{ph.name} traffic from '{a}' to '{b}' has no network path (only switches "
                         f"forward traffic); link both to switches of the same fabric")
    ph.sol = net.max_min(ph.routes, cap, ph.flows.demand)


def _check_storage_reach(pl: Placement, read_GBps: float) -> None:
    """Samples to read need a storage system on a network of every server that trains."""
    servers = pl.servers
    blind = [servers[k].id for k in net.sorted_unique(pl.server).tolist() if not servers[k].storage_targets]
    if not blind:
        return
    if not any(s.storage_targets for s in pl.servers):
        raise UsageError(f"the workload reads {read_GBps:.3g} GB/s of samples but the design has no "
                         f"storage target reachable from the servers; add storage linked to the "
                         f"servers' network, or set the workload's bytes_per_sample to 0")
    more = f" (and {len(blind) - 1} more)" if len(blind) > 1 else ""
    raise UsageError(f"the workload reads {read_GBps:.3g} GB/s of samples but server '{blind[0]}'"
                     f"{more} has no network path to a storage system; link one of its NICs/DPUs to "
                     f"the storage network")


def check_scenario(scen: dict[str, Any]) -> None:
    """Scenario settings the engine reads (``designer.topology.design.SCENARIO_DEFAULTS``)."""
    for key, choices in SCENARIO_CHOICES.items():
        if scen.get(key, choices[0]) not in choices:
            raise UsageError(f"scenario {key} must be one of {', '.join(choices)}, got {scen[key]!r}")
    per_server = scen.get("per_server") or {}
    bad = [(k, v) for k, v in per_server.items() if v not in SCENARIO_CHOICES["offload"]] \
        if isinstance(per_server, dict) else [("", per_server)]
    if bad:
        raise UsageError(f"scenario per_server must map server ids to one of "
                         f"{', '.join(SCENARIO_CHOICES['offload'])}; got {bad[0][1]!r} for '{bad[0][0]}'")
    for key, spec in SCENARIO_SPEC.items():
        if spec.type is bool and not isinstance(scen.get(key, False), bool):
            raise UsageError(f"scenario {key} must be true or false, got {short(scen[key])}")
    tenants = scen.get("tenants", 1)
    if isinstance(tenants, bool) or not isinstance(tenants, (int, float)) or not math.isfinite(tenants) \
            or not float(tenants).is_integer() or tenants < 1:
        raise UsageError(f"scenario tenants must be a whole number of at least 1, got {short(tenants)}")
    interval = scen.get("checkpoint_interval_s")
    if interval is not None and (isinstance(interval, bool) or not isinstance(interval, (int, float))
                                 or not math.isfinite(interval) or interval < 0):
        raise UsageError(f"scenario checkpoint_interval_s must be a finite number of seconds "
                         f"(0: no checkpoints), got {short(interval)}")


_adapters, _gpu, _gpus, _nvlink_domain = (attrgetter("adapters"), attrgetter("gpu"), attrgetter("gpus"),
                                          attrgetter("nvlink_domain"))


def usable_capacity_GBps(fab: net.Fabric, topology, scen: dict[str, Any]) -> np.ndarray:
    """Each arc's line rate times the share its flow and congestion control leave usable
    (``congestion.capacity_factors``: credit-based InfiniBand keeps the line rate, RoCE under
    DCQCN/PFC loses a sourced share unless adaptive routing spreads it). The network stage routes
    every flow itself, so ECMP collisions are already in the max-min sharing, not in this factor."""
    routing = scen.get("routing", "ecmp")
    links = net._links_in_order(fab, topology)
    n = len(links)
    lanes = [x.lanes for x in links]
    try:  # every speed and lane count a plain number (array's C conversion, faster than numpy's)
        speed = np.frombuffer(array("d", [x.speed_Gbps for x in links]), dtype=float)
        many = None if lanes.count(1) == n else np.frombuffer(array("d", lanes), dtype=float)
    except (TypeError, OverflowError):
        speed = None
    if speed is None or not n:
        # not all plain numbers (or no links): the network stage's own reading, which names a bad link
        cap = net.arc_capacity_GBps(fab, topology)
        if not len(cap):
            return cap
        return cast(np.ndarray, cap * congestion.capacity_factors(net.link_media(fab, topology), routing)[fab.arc_link])
    # the same figures as ``network.arc_capacity_GBps`` (speed x lanes / 8 per link; x 1 changes
    # nothing) and ``congestion.capacity_factors`` per link, each field read in one comprehension;
    # the factor is asked once per distinct medium (a design has one or two)
    cap = (speed if many is None else speed * many) / 8.0
    if not np.isfinite(cap).all() or not (cap > 0).all():
        net.arc_capacity_GBps(fab, topology)  # names the link that carries nothing
    media = [x.medium for x in links]
    if media.count(media[0]) == n:
        cap = cap * congestion.capacity_factors(media[:1], routing)[0]
    else:
        distinct = list(dict.fromkeys(media))
        factor = dict(zip(distinct, congestion.capacity_factors(distinct, routing).tolist()))
        cap = cap * np.fromiter(map(factor.__getitem__, media), dtype=float, count=n)
    return cast(np.ndarray, cap[fab.arc_link])


def _line_GBps(topology, endpoint: str, fab: net.Fabric) -> float:
    return cast(float, sum(l.capacity_Gbps for l in net.links_of(fab, topology, endpoint)) / 8.0)


def _min_line_GBps(topology, endpoints: list[str], fab: net.Fabric) -> float:
    """``min(_line_GBps(topology, e, fab) for e in endpoints)`` (not empty). An endpoint with one
    link (the usual NIC) has that link's rate: those are read once per distinct link, found with
    numpy over the fabric's arcs when it holds every link of the topology; the rest one by one."""
    idx = fab.node_indices(endpoints)
    if len(fab.link_ids) != len(topology.links) or (idx < 0).any():
        return min(_line_GBps(topology, e, fab) for e in endpoints)
    start = fab.out_ptr[idx]
    one = fab.out_ptr[idx + 1] - start == 1
    links, ids = topology.links, fab.link_ids
    rates = [sum([links[ids[k]].capacity_Gbps]) / 8.0
             for k in net.sorted_unique(fab.arc_link[fab.out_arc[start[one]]]).tolist()]
    rates += [_line_GBps(topology, endpoints[i], fab) for i in np.flatnonzero(~one).tolist()]
    return cast(float, min(rates))


def _median(x: np.ndarray) -> float:
    """``np.median`` of a 1-D float array without NaN (nan when empty): the middle value, or the
    mean of the two middle ones, of the sorted values. (``np.median``'s first call imports
    ``numpy.ma``, ~25 ms of a run.)"""
    s = np.sort(x)
    m = len(s) // 2
    if not len(s):
        return math.nan
    return float(s[m]) if len(s) % 2 else float((s[m - 1] + s[m]) / 2.0)


def _group_shape(pl: Placement, dim: str, ph: _Phase | None, topology, catalog,
                 fab: net.Fabric | None, job: int | None = None,
                 no_sharp: str | None = None) -> tuple[coll.GroupShape, dict[str, Any]]:
    """Communicator shape of the slowest group of ``dim`` on the solved phase; with ``job``, of
    that job's groups only (the phase then carries only its flows, see :func:`_alone`).
    ``no_sharp``: why the servers cannot join SHARP trees (:func:`sharp_transport_problem`)."""
    groups = pl.groups[dim]
    ranks = groups.shape[1]
    srv0 = pl.servers[int(pl.server[groups[0][0]])]
    nodes = pl.nodes_spanned(dim)
    per_node = max(1, ranks // nodes)
    nvlink = float(srv0.gpu.get("nvlink_GBps") or 0.0) if srv0.nvlink_domain >= min(per_node, ranks) \
        and srv0.nvlink_domain > 1 else 0.0
    gen = int(srv0.gpu.get("nvlink_gen") or 0)  # the catalog's generation, not one guessed from the rate
    nvls = bool(srv0.nvswitch and gen >= 4)
    info: dict[str, Any] = {}
    shape: dict[str, Any] = dict(ranks=ranks, nodes=nodes, nvlink_GBps=nvlink, pcie_gen=srv0.pcie_gen,
                                 nvswitch=srv0.nvswitch, nvls=nvls, nvlink_gen=gen)
    worst = 0  # the slowest group; without a solved phase every group stands for the others
    if nodes > 1 and ph is not None and ph.sol is not None and fab is not None:
        routes, sol = ph.solved()
        mask = ph.flows.group >= 0
        if job is not None:
            mask &= ph.flows.job == job
        grp = ph.flows.group[mask]
        rate = sol.rate_GBps[mask]
        per_group = np.full(len(groups), np.inf)
        np.minimum.at(per_group, grp, rate)
        worst = int(np.argmin(per_group))
        eps0 = [e for e in pl.endpoint(groups[worst]) if e]
        line = _min_line_GBps(topology, eps0, fab) if eps0 else 0.0
        fl = np.flatnonzero(mask)[grp == worst]
        nics = len(set(pl.endpoint(groups[worst][pl.server[groups[worst]] == pl.server[groups[worst][0]]])))
        # switches the group's flows cross: SHARP capability, depth, latency
        on = np.zeros(len(mask), dtype=bool)
        on[fl] = True
        on = on[routes.flow]  # the entries of the group's flows
        heads = net.sorted_unique(fab.arc_dst[routes.arc[on]])
        heads = heads[fab.is_switch[heads]]
        sw = [fab.nodes[h] for h in heads]
        resolve = Resolver(catalog)  # once per switch model and overrides
        figs = [resolve(topology.components[s]) for s in sw]
        sharp = bool(figs) and all(f.get("sharp") for f in figs)
        if sharp and no_sharp:
            sharp = False
            info["sharp_transport"] = no_sharp
        if sharp:
            info.update(_sharp_trees(ph, mask, heads, sw, figs, fab, topology, pl.group_job(dim)))
            sharp = "sharp_switch" not in info
        depth = max(1, math.ceil((int(routes.hops[fl].max()) - 1) / 2)) if len(fl) else 1
        lat = max((float(f.get("latency_ns") or 0) for f in figs), default=500.0) / 1000.0
        shape.update(net_GBps=float(per_group[worst]) * coll.NET_EFFICIENCY, net_line_GBps=line,
                     nics_per_node=max(1, nics), sharp=sharp, tree_depth=depth, switch_latency_us=lat)
        info.update(worst_rate_GBps=float(per_group[worst]), line_GBps=line,
                    median_rate_GBps=_median(per_group[np.isfinite(per_group)]),
                    bottleneck_arc=int(sol.bottleneck_arc[fl[np.argmin(sol.rate_GBps[fl])]]),
                    hops=int(routes.hops[fl].max()) if len(fl) else 0,
                    worst_group=worst, worst_job=int(pl.group_job(dim)[worst]))
    # fewest of the slowest group's ranks on one server (8 + 1 GPUs: 1), for the uneven
    # all-to-all (``collectives.GroupShape.min_local``)
    c = np.bincount(pl.server[groups[worst]])
    shape["min_local"] = int(c[c > 0].min())
    return coll.GroupShape(**shape), info


def sharp_transport_problem(design, catalog, scen: dict[str, Any], servers: list) -> str | None:
    """Why the servers' collectives cannot join SHARP aggregation trees, or None.

    NCCL reaches SHARP through its CollNet interface (the nccl-rdma-sharp-plugins), which runs
    over InfiniBand/RoCE verbs. A server whose collectives take the kernel TCP path cannot join
    a tree: host-managed encryption (kernel IPsec/kTLS, which RDMA bypasses; the same rule as
    ``hostcpu.collective_paths``) or network adapters without RDMA.
    """
    topo = design.topology
    rdma_of: dict[tuple, bool] = {}
    per_server = scen.get("per_server") or {}
    adapters_of: Callable[[Any], Any]
    if all(getattr(s, "adapters", None) is not None for s in servers):
        adapters_of = _adapters  # servers_of found them already
    else:
        found = attached_all(topo, {s.id for s in servers})
        adapters_of = lambda s: found.get(s.id, ())  # noqa: E731
    if not scen.get("encryption") or not any(per_server.get(s.id, scen.get("offload", "host")) == "host"
                                             for s in servers):
        # no server on the kernel path: only an adapter without RDMA can rule SHARP out; ask
        # the catalog once per distinct adapter, and walk the servers only if one lacks it.
        # Servers alike (``ServerInfo.alike``, numbered by servers_of) have alike adapters: one
        # server of each stands for them
        numbers = [getattr(s, "alike", -1) for s in servers]
        some = dict(zip(numbers, servers)).values() if min(numbers, default=0) >= 0 else servers
        kinds = {(a.kind, a.model, repr(sorted(a.props.items())) if a.props else ""): a
                 for s in some for a in adapters_of(s)}
        if all(catalog.resolve(a).get("rdma", True) for a in kinds.values()):
            return None
    for s in servers:
        mode = per_server.get(s.id, scen.get("offload", "host"))
        if scen.get("encryption") and mode == "host":
            return (f"host-managed encryption on '{s.id}' sends the collectives through the kernel "
                    f"TCP stack, and SHARP runs over RDMA only; encrypting on DPUs (offload) "
                    f"keeps RDMA and SHARP")
        for a in adapters_of(s):
            key = (a.kind, a.model, repr(sorted(a.props.items())) if a.props else "")
            if key not in rdma_of:
                rdma_of[key] = bool(catalog.resolve(a).get("rdma", True))
            if not rdma_of[key] and a.id in s.rails:
                return (f"'{a.id}' ({a.model}) of '{s.id}' has no RDMA, and SHARP runs over "
                        f"RDMA only; use RDMA-capable NICs or DPUs")
    return None


def _sharp_trees(ph: _Phase, mask: np.ndarray, heads: np.ndarray, names: list[str],
                 figs: list[dict[str, Any]], fab: net.Fabric, topology,
                 group_job: np.ndarray) -> dict[str, Any]:
    """Aggregation trees needed at each switch the slowest group crosses, against the switch's
    ``sharp_trees``: every group of the phase that crosses a switch (``mask``: the groups of every
    job on the fabric, or of one) needs its own streaming-aggregation tree through it (NVIDIA
    SHARP Rev 3.13 General Information: Quantum runs one active tree per switch, Quantum-2 one
    per port). Storage reads need none. Names the switch most over its limit, if any, and how
    many jobs (``group_job``: job of each group) those groups belong to."""
    routes = ph.solved()[0]
    on = mask[routes.flow]
    grp = ph.flows.group[routes.flow[on]]
    width = int(grp.max()) + 1 if len(grp) else 1
    dst = fab.arc_dst[routes.arc[on]]
    at_head = np.zeros(len(fab.nodes), dtype=bool)
    at_head[heads] = True
    keep = at_head[dst]  # only the switches asked about are counted
    key = net.sorted_unique(dst[keep] * width + grp[keep])  # (switch, group), sorted
    pairs = (key // width, key % width)
    need = np.bincount(pairs[0], minlength=len(fab.nodes))[heads]
    limit = np.array([int(f.get("sharp_trees") or 0) for f in figs])
    out: dict[str, Any] = {"sharp_groups_per_switch": int(need.max()), "sharp_trees": int(limit.min())}
    over = need - limit
    if over.max() > 0:
        i = int(np.argmax(over))
        there = pairs[1][pairs[0] == heads[i]]
        out.update(sharp_switch=names[i], sharp_switch_model=topology.components[names[i]].model,
                   sharp_switch_trees=int(limit[i]), sharp_switch_groups=int(need[i]),
                   sharp_switch_jobs=len(net.sorted_unique(group_job[there])))
    return out


#: largest seed: the routing hash adds it to 64-bit unsigned values
MAX_SEED = 2 ** 63 - 1


def design_seed(design, seed: int | None = None, scenario: dict[str, Any] | None = None) -> int:
    """``seed``, or the design's scenario ``seed`` (``scenario`` overrides first) when None;
    UsageError unless it is a whole number from 0 to MAX_SEED."""
    if seed is None:
        seed = {**design.scenario, **(scenario or {})}.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, (int, float)) or not math.isfinite(seed) \
            or not float(seed).is_integer() or not 0 <= seed <= MAX_SEED:
        raise UsageError(f"seed must be a whole number from 0 to {MAX_SEED}, got {short(seed)} "
                         f"(--seed, or the design's scenario seed)")
    return int(seed)


@dataclass
class _Run:
    """What every evaluation of the stages after placement shares: the design and scenario, the
    fabric, one job's workload, its compute and traffic volumes, and every job's storage reads."""

    design: Any
    catalog: Any
    scen: dict[str, Any]
    seed: int
    fab: net.Fabric
    cap: np.ndarray  #: arc capacities (GB/s)
    w: Workload
    ct: Any  #: ``workload.compute`` of one micro-batch
    vol: tr.Volumes
    stor: tr.FlowSet  #: storage reads of every job's servers
    read_GB: float  #: one job's samples per iteration
    servers: list  #: ``placement.ServerInfo`` of every GPU server
    no_sharp: str | None = None  #: why the servers' transport rules SHARP out (None: it does not)
    kinds: dict[str, list] | None = None  #: the design's components by kind (``components_by_kind``)


@dataclass
class _Outcome:
    """The stages after placement, evaluated for every job together or for one job alone."""

    job: int  #: the job described: the slowest, or the one alone
    phases: dict[str, _Phase]
    shapes: dict[str, coll.GroupShape]
    infos: dict[str, dict[str, Any]]
    colls: list[CollectiveResult]
    breakdown: dict[str, float]
    hidden: dict[str, float]  #: per iteration, what each dimension's overlap hides (``Timing.hidden_s``)
    iteration: float  #: after the resources stage
    rep: Any  #: ``resources.ResourceReport``
    storage: dict[str, Any]


def run(design, catalog, *, scenario: dict[str, Any] | None = None, seed: int | None = None,
        cache: EngineCache | None = None, **overrides: Any) -> Result:
    """Run every stage for ``design`` and return the Result (see module docstring). ``seed``
    None: the design's scenario seed (:func:`design_seed`). ``cache``: the caller's
    :class:`~designer.engine.cache.EngineCache` (the fabric and its routes of an earlier run of
    the same structure are reused); None: nothing is kept after the run.

    Several jobs (``scenario.tenants`` = T > 1; servers split as ``placement.place_jobs`` says):
    every job's traffic is solved together (links, ``Result.links``, are the fabric's) and the
    Result is the slowest job's, the slowest group of each kind over all jobs: its iteration and
    breakdown, TFLOP/s and MFU per GPU, tokens and samples per second, ``gpus``, training time
    (its token budget at its rate), its servers' host CPU and DPU loads, its storage reads and
    checkpoints (with 1/T of the storage systems' rates, as all jobs read and write together),
    and its power and energy: its servers' plus 1/T of the switches' and storage systems', so the
    whole machine uses about T times that (exactly T times when all servers are alike).
    ``Result.tenants`` compares the slowest job with itself alone on the fabric.

    Python's cycle collector is paused meanwhile (``designer.gcpause``): a big design is millions
    of objects, and every full collection the engine's own allocations set off walks all of them
    (about a third of a 131k-GPU solve); the engine makes no reference cycles that need
    collecting meanwhile.
    """
    with collector_paused():
        # the stages in a call of their own: their temporaries are freed when it returns, before
        # the collector is back on (it would otherwise walk them all in its first pass)
        return _run(design, catalog, scenario, seed, cache, overrides)


def _run(design, catalog, scenario: dict[str, Any] | None, seed: int | None, cache: EngineCache | None,
         overrides: dict[str, Any]) -> Result:
    """:func:`run`'s stages: set-up, every job together, then the slowest job alone on the same
    routes, and the Result."""
    scen = {**design.scenario, **(scenario or {})}
    check_scenario(scen)
    seed = design_seed(design, seed, scenario)
    setup = _setup(design, catalog, scen, seed, net.fabric_of(design.topology, cache), overrides)
    r = setup.run
    shared = _evaluate(r, setup.pl, _network(r, setup.pl))
    solo = (_evaluate(r, setup.pl, _alone(shared.phases, shared.job, r.cap), job=shared.job)
            if setup.jobs > 1 else None)
    return _result(setup, shared, solo)


@dataclass
class _Setup:
    """What :func:`_setup` makes: the shared inputs of the stages after placement, the stacked
    placement of every job and the warnings so far."""

    run: _Run
    pl: Placement
    jobs: int
    how: str  #: ``scenario.tenant_placement``
    split: list[np.ndarray]  #: each job's servers
    gpu: dict[str, Any]  #: the first server's GPU figures
    warnings: list[str]


def _setup(design, catalog, scen: dict[str, Any], seed: int, fab: net.Fabric,
           overrides: dict[str, Any]) -> _Setup:
    """Servers, the workload of one job, the placement of every job, compute, traffic volumes and
    the storage reads: everything the network stage and the evaluations take."""
    topo = design.topology
    kinds = components_by_kind(topo)
    servers = servers_of(design, catalog, fab, kinds)
    if not servers:
        raise UsageError("the design has no GPU server; add one before running the engine")
    jobs, how = int(scen.get("tenants", 1)), scen.get("tenant_placement", "packed")
    split = job_servers(len(servers), jobs, how)
    data = workload_data(design, catalog, overrides)
    order = overrides.get("placement") or workload_order(data)
    within = ep_within_domain(data)
    w, ep_note, job_gpus, domain = _job_workload(design, catalog, servers, split, overrides, order, within)
    pl = place_jobs(w, servers, order, jobs, how, within)
    pl.groups.update(tr.derived_groups(pl, w))
    warnings = _placement_warnings(w, pl, servers, split, job_gpus, domain)
    if within and (note := _idle_edge_note(w, servers, split, order)):
        warnings.insert(0, note)
    if ep_note:
        warnings.append(ep_note)
    ct = compute(w, servers[0].gpu, host_memory_per_gpu_GBps(design, catalog, servers[0].id)
                 if w.optimizer_cpu_offload else None)
    _check_finite("the compute stage's micro-batch time", ct.micro_batch_s)
    vol = tr.volumes(w)
    # storage reads: the global batch's bytes every iteration. The storage flows of the network
    # phases ask for them at the compute-only pace (the fastest the GPUs could consume them); the
    # demand reported is per iteration of the steady state (resources stage)
    read_GB = w.global_batch * w.bytes_per_sample / 1e9
    compute_only = w.micro_batches * ct.micro_batch_s + bubble_s(w, ct.micro_batch_s)
    if read_GB > 0:
        _check_storage_reach(pl, read_GB / compute_only)
    job_servers_used = len(net.sorted_unique(pl.server[pl.job == 0]))
    stor = tr.storage_flows(pl, read_GB / compute_only / job_servers_used)
    used = [servers[i] for i in net.sorted_unique(pl.server).tolist()]
    r = _Run(design=design, catalog=catalog, scen=scen, seed=seed, fab=fab,
             cap=usable_capacity_GBps(fab, topo, scen), w=w, ct=ct, vol=vol, stor=stor, read_GB=read_GB,
             servers=servers, no_sharp=sharp_transport_problem(design, catalog, scen, used), kinds=kinds)
    return _Setup(run=r, pl=pl, jobs=jobs, how=how, split=split, gpu=servers[0].gpu, warnings=warnings)


def host_memory_per_gpu_GBps(design, catalog, server_id: str) -> float:
    """Host memory bandwidth per GPU of a GPU server: its catalog CPU's sustained STREAM TRIAD
    bandwidth × sockets where the catalog has a measurement (``memory_stream_GBps``), else its peak
    (``hostcpu.memory_GBps``: sockets × channels × MT/s × 8 bytes; an upper bound, so the step a
    lower bound), each figure with its source in models/hardware/cpu.toml, over the server's GPUs,
    which all step their CPU optimizers at once (``workload.optimizer_offload_times``); 0 when the
    CPU has no memory figures."""
    from designer.engine import hostcpu

    f = catalog.resolve(design.topology.components[server_id])
    cpu = catalog.get("cpu", f["cpu_model"])
    sockets = int(f.get("cpu_sockets", 1))
    stream = float(cpu.get("memory_stream_GBps") or 0.0)
    bw = sockets * stream if stream > 0 else hostcpu.memory_GBps(
        sockets, int(cpu.get("memory_channels", 0) or 0), float(cpu.get("memory_MTps", 0) or 0))
    return bw / max(1, int(f.get("gpu_count", 1) or 1))


def _job_workload(design, catalog, servers: list, split: list[np.ndarray], overrides: dict[str, Any],
                  order: str | None = None, within: bool = False) -> tuple[Workload, str | None, int, int]:
    """The workload resolved for one job's GPUs (the smallest job's), the note when its expert
    parallelism was shrunk to fit, that job's GPUs and the smallest NVLink domain of a server.
    ``within`` (``ep_within_domain``): the job's GPUs are those :func:`usable_gpus` leaves in
    use with rank order ``order``, and the workload is resolved again for them."""
    jobs = len(split)
    server_gpus = np.fromiter(map(_gpus, servers), dtype=np.int64, count=len(servers))
    job_gpus = min(int(server_gpus[idx].sum()) for idx in split)
    domain = int(np.minimum(np.fromiter(map(_nvlink_domain, servers), dtype=np.int64, count=len(servers)),
                            server_gpus).min())
    try:
        w = resolve_workload(design, catalog, job_gpus, servers[0].gpu, overrides, domain)
        if within and w.ep > 1:
            usable = min(sum(map(len, usable_gpus([servers[int(i)] for i in idx], w, order))) for idx in split)
            if usable < job_gpus:
                job_gpus = usable
                w = resolve_workload(design, catalog, job_gpus, servers[0].gpu, overrides, domain)
        ep_note = shrunk_ep_warning(workload_data(design, catalog, overrides), w)
    except UsageError as exc:
        if jobs == 1:
            raise
        raise UsageError(f"{exc} (scenario tenants {jobs}: each job runs the workload on "
                         f"{len(split[0])} servers, {job_gpus} GPUs)") from None
    return w, ep_note, job_gpus, domain


def _idle_edge_note(w: Workload, servers: list, split: list[np.ndarray], order: str | None) -> str | None:
    """The warning of an ``ep_within_domain`` job that leaves GPUs idle at NVLink-domain edges
    (None when it leaves none)."""
    if w.ep <= 1:
        return None
    mine = [servers[int(i)] for i in split[0]]
    used, total = sum(map(len, usable_gpus(mine, w, order))), sum(map(_gpus, mine))
    if used == total:
        return None
    srv = mine[0]
    dom = max(1, min(int(srv.nvlink_domain), int(srv.gpus)))
    per = len(usable_gpus([srv], w, order)[0])
    block = ep_block(w, parse_order(order))
    return (f"ep_within_domain: {total - used} of the job's {total} GPUs stay idle ({srv.id}: {per} of "
            f"{dom} per NVLink domain, whole runs of {block} ranks), so that no expert-parallel group "
            f"of {w.ep} crosses a domain edge")


def _check_finite(what: str, value: float, inputs: str = "") -> None:
    """Refuse a figure that is not a finite number where it is made (NaN or infinity from
    extreme inputs would otherwise reach every figure after it and print as a result, exit 0).
    ``inputs``: the inputs it was made from, for the message."""
    if not math.isfinite(value):
        made = f" from {inputs}" if inputs else ""
        raise UsageError(f"{what} came out as {value}{made}: a workload or scenario value is too "
                         f"extreme (check tokens, seq_len, batch sizes, tflops_per_gpu and the "
                         f"hardware figures overridden in the design)")


def _result(setup: _Setup, shared: _Outcome, solo: _Outcome | None) -> Result:
    """The Result of the evaluations: throughput, training time, memory, links, power, energy,
    warnings and the bottleneck sentences."""
    r, w, ct, rep = setup.run, setup.run.w, setup.run.ct, shared.rep
    iteration = shared.iteration
    _check_finite("the iteration time", iteration, f"a micro-batch of {ct.micro_batch_s:g} s")
    warnings = setup.warnings
    warnings.extend(rep.warnings)
    if rep.storage.checkpoint_write_s is None:
        warnings.append("no storage in the design: checkpoints are not written (checkpoint_write_s "
                        "is None); add a storage system to model them")
    rate = _throughput(w, ct, iteration, warnings)
    _check_finite("the training time", rate["train_s"],
                  f"{w.tokens:g} tokens at {w.tflops_per_gpu:g} TFLOP/s per GPU" if w.tflops_per_gpu > 0
                  and w.kind == "transformer" else f"{w.training_samples:g} samples at "
                  f"{rate['samples_per_s']:g} samples/s")
    parts = memory_parts(w)
    mem_GB = None if parts is None else parts.total
    cap_GB = gpu_memory_GB(setup.gpu)
    if mem_GB is not None and cap_GB > 0 and mem_GB > cap_GB:
        warnings.append(memory_warning(w, mem_GB, model_state_GB(w) or 0.0, cap_GB))
    topo = r.design.topology
    resources = rep.to_dict()
    result = Result(
        iteration_time_s=iteration, breakdown_s=shared.breakdown, tflops_per_gpu=rate["tflops"],
        mfu=rate["mfu"], percent_of_peak=100.0 * rate["tflops"] / ct.peak_tflops,
        tokens_per_s=rate["tokens_per_s"], samples_per_s=rate["samples_per_s"], memory_per_gpu_GB=mem_GB,
        memory_parts_GB={} if parts is None else parts.to_dict(),
        memory_activations={} if parts is None or w.kind != "transformer" else {
            "recompute": parts.recompute, "in_flight": parts.in_flight, "kept_layers": parts.kept_layers},
        gpu_memory_GB=cap_GB if cap_GB > 0 else None,
        optimizer_offload=_optimizer_offload(setup),
        training_time_days=rate["train_s"] / 86400.0, gpus=w.gpus, parameters=rate["params"],
        workload=w.to_dict(), placement=setup.pl.only(shared.job).summary(), collectives=shared.colls,
        links=_link_results(r.fab, topo, shared.phases), bottlenecks=[], storage=shared.storage,
        resources=resources, warnings=warnings, host_cpu=resources["host_cpu"], dpu=rep.dpu,
        power_W=rep.energy.power_W, energy_kwh=energy.kwh(rep.energy.power_W["total"], rate["train_s"]),
        tenants=_tenants(setup.jobs, setup.how, setup.split, len(r.servers), shared, solo),
        hidden_s=shared.hidden)
    from designer.engine.bottlenecks import explain
    result.bottlenecks = explain(result, w, r.fab, topo, shared.phases, shared.shapes, shared.infos, rep,
                                 alone_infos=solo.infos if solo else None, catalog=r.catalog)
    return result


def _optimizer_offload(setup: _Setup) -> dict[str, Any]:
    """``Result.optimizer_offload``: the CPU optimizer step by its parts, as the compute stage
    charged it ({} without ``optimizer_cpu_offload``)."""
    r = setup.run
    if not r.w.optimizer_cpu_offload:
        return {}
    host = host_memory_per_gpu_GBps(r.design, r.catalog, r.servers[0].id)
    t = optimizer_offload_times(r.w, setup.gpu, host)
    return {"params": t.params, "d2h_s": t.d2h_s, "cpu_step_s": t.cpu_step_s, "h2d_s": t.h2d_s,
            "overlapped": r.w.overlap_cpu_optimizer_d2h_h2d, "host_link_GBps": host_link_GBps(setup.gpu),
            "host_memory_GBps": host}


def _throughput(w: Workload, ct: Any, iteration: float, warnings: list[str]) -> dict[str, float]:
    """TFLOP/s and MFU per GPU, samples and tokens per second, parameters and training time.

    TFLOP/s count the recomputed forward pass (Narayanan et al. SC'21 eq. 3); MFU counts only the
    model's own FLOPs, without recomputation (Chowdhery et al. 2023, App. B). Training time: the
    token budget at the GPUs' sustained TFLOP/s when the workload gives one
    (``workload.training_time_s``), else the training samples at the engine's sample rate."""
    n = w.gpus
    tflops = model_flops_per_iteration(w) / (iteration * n) / 1e12
    mfu = model_flops_per_iteration(w, recompute=False) / (iteration * n * ct.peak_tflops * 1e12)
    samples_per_s = w.global_batch / iteration
    tokens_per_s = samples_per_s * w.seq_len if w.kind == "transformer" else 0.0
    P = parameters(w)
    if w.tflops_per_gpu > 0 and w.kind == "transformer":
        train_s = training_time_s(w.tokens, P, n, w.tflops_per_gpu, w.recompute)
    else:
        train_s = w.training_samples / samples_per_s
    if w.kind == "vision":
        if not w.dataset_samples:
            warnings.append(f"the vision workload gives no dataset_samples: training time assumes "
                            f"{DEFAULT_DATASET_SAMPLES:,} samples (ImageNet-1k) x {w.epochs:g} epochs")
        if P <= 0:
            warnings.append("the vision workload gives no parameter count (params): no gradient "
                            "all-reduce, checkpoint or GPU memory is modelled")
    return {"tflops": tflops, "mfu": mfu, "samples_per_s": samples_per_s, "tokens_per_s": tokens_per_s,
            "params": P, "train_s": train_s}


def _placement_warnings(w: Workload, pl: Placement, servers: list, split: list[np.ndarray],
                        job_gpus: int, domain: int) -> list[str]:
    """What the user may not have meant: a TP group off its NVLink domain, idle GPUs or servers,
    mixed GPU models."""
    jobs, total = len(split), sum(map(_gpus, servers))
    warnings = [problem] if (problem := tp_domain_problem(w.tp, domain)) else []
    idle = len(servers) - jobs * len(split[0])
    if idle:
        names = ", ".join(servers[i].id for i in range(len(servers) - idle, len(servers))[:3])
        lower = max(d for d in range(1, jobs) if len(servers) % d == 0) if jobs > 1 else 1
        upper = next(d for d in range(jobs + 1, len(servers) + 1) if len(servers) % d == 0)
        warnings.append(f"{jobs} jobs do not split the {len(servers)} GPU servers evenly: each job "
                        f"gets {len(split[0])} servers and {idle} stay idle ({names}"
                        f"{', ...' if idle > 3 else ''}); tenants {lower} or {upper} uses them all")
    if w.gpus < job_gpus:
        fill = job_gpus // (w.tp * w.pp * w.cp)
        why = (f"tp x pp = {w.tp * w.pp} does not divide {job_gpus}" if fill == w.dp else
               f"dp {w.dp} from the workload's settings, e.g. a preset's published layout; pass "
               f"--dp {fill} to use {fill * w.tp * w.pp}")
        whose = f"the design's {total}" if jobs == 1 else f"each job's {job_gpus}"
        warnings.append(f"the workload uses {w.gpus} of {whose} GPUs ({why})")
    models = dict(zip(map(id, map(_gpu, servers)), map(_gpu, servers))).values()  # one per GPU dict
    if len({g.get("id") for g in models}) > 1:
        warnings.append("servers have different GPU models; compute uses the first server's GPU")
    if pl.nodes_spanned("tp") > 1 and not problem:
        warnings.append(f"a tensor-parallel group of {w.tp} GPUs spans {pl.nodes_spanned('tp')} "
                        f"servers: its all-reduces cross the network; a tp that divides the GPUs "
                        f"per server keeps them on NVLink")
    return warnings


def _network(r: _Run, pl: Placement) -> dict[str, _Phase]:
    """Network stage: every communication phase's flows (all jobs', with the storage reads),
    routed and shared max-min fairly."""
    w, vol = r.w, r.vol
    phases: dict[str, _Phase] = {}
    # a phase exists only when its collective moves bytes (a vision model without a parameter
    # count has no gradient all-reduce, so no DP traffic loads the links)
    for dim, flows in (("dp", tr.ring_flows(pl, "dp") if w.dp_ranks > 1 and vol.dp_bytes > 0 else tr.empty()),
                       ("pp", tr.pipeline_flows(pl) if vol.pp_sends_per_micro_batch else tr.empty()),
                       ("tp", tr.ring_flows(pl, "tp") if vol.tp_calls_per_micro_batch else tr.empty()),
                       ("cp", tr.ring_flows(pl, "cp") if "cp" in pl.groups and vol.cp_bytes else tr.empty()),
                       ("ep", tr.alltoall_flows(pl, "ep") if "ep" in pl.groups and vol.ep_bytes else tr.empty())):
        if flows.src:
            phases[dim] = _Phase(dim, flows.extend(r.stor))
    if r.stor.src and "dp" not in phases:
        phases["storage"] = _Phase("storage", r.stor)
    routing = r.scen.get("routing", "ecmp")
    for ph in phases.values():
        _solve_phase(r.fab, r.cap, ph, routing, r.seed)
    return phases


def _alone(phases: dict[str, _Phase], job: int, cap: np.ndarray) -> dict[str, _Phase]:
    """The solved phases re-shared with only ``job``'s flows carrying data: the other jobs'
    demand is 0 and every flow keeps its route (ECMP hashes a flow, not its neighbours)."""
    out = {}
    for name, ph in phases.items():
        demand = np.where(ph.flows.job == job, ph.flows.demand, 0.0)
        routes = ph.solved()[0]
        out[name] = _Phase(name, replace(ph.flows, demand=demand), routes,
                           net.max_min(routes, cap, demand), ph.idx_src)
    return out


def _slowest_job(infos: dict[str, dict[str, Any]]) -> int:
    """Job of the slowest group across servers: data-parallel first (the gradient all-reduce moves
    the most bytes), then pipeline, then tensor parallel; job 0 when no group crosses servers."""
    for dim in ("dp", "pp", "tp"):
        if "worst_job" in infos[dim]:
            return cast(int, infos[dim]["worst_job"])
    return 0


def _evaluate(r: _Run, pl: Placement, phases: dict[str, _Phase], job: int | None = None) -> _Outcome:
    """Collectives, timing, storage rates and resources on solved ``phases``: with every job of
    ``pl`` on the fabric (``job`` None; the slowest job's figures) or with job ``job`` alone
    (phases from :func:`_alone`)."""
    topo = r.design.topology
    shapes, infos = {}, {}
    for dim in ("tp", "pp", "dp") + tuple(d for d in ("cp", "ep") if d in pl.groups):
        shapes[dim], infos[dim] = _group_shape(pl, dim, phases.get(dim), topo, r.catalog, r.fab, job,
                                               r.no_sharp)
    t = timing.timing_of(r.w, r.ct, r.vol, shapes)
    colls, breakdown, iteration, overlap = t.collectives, t.breakdown, t.iteration_s, t.overlap_s
    timing.sharp_saving(colls, shapes, infos)
    k = _slowest_job(infos) if job is None else job
    storage, alone, converged, write = _storage_rates(r, phases, k, others=job is None)
    rep = _resources(r, pl.only(k), pl.jobs, iteration, colls, alone, converged, overlap,
                     others=job is None, write=write)
    breakdown.update(_resource_terms(rep))
    breakdown = {k: breakdown[k] for k in BREAKDOWN_KEYS if k in breakdown}  # the result's order
    storage.update(read_demand_GBps=rep.storage.read_demand_GBps,
                   read_achieved_GBps=rep.storage.read_achieved_GBps,
                   checkpoint_GB=rep.storage.checkpoint_GB,
                   checkpoint_write_s=rep.storage.checkpoint_write_s)
    return _Outcome(job=k, phases=phases, shapes=shapes, infos=infos, colls=colls, breakdown=breakdown,
                    hidden=t.hidden_s(r.w), iteration=rep.iteration_s, rep=rep, storage=storage)


def _storage_rates(r: _Run, phases: dict[str, _Phase], job: int, others: bool
                   ) -> tuple[dict[str, Any], dict[str, float], bool, dict[str, float]]:
    """Job ``job``'s storage read rate under the training traffic (converged fabric) and without
    it (with the other jobs' reads when ``others``), in total and per server, whether its reads
    share links with training traffic, and per server the rate the fabric gives its checkpoint
    writes.

    The write rate is the fabric's storage capacity, not the read rate: the same storage paths
    solved max-min fair with elastic demand (every flow takes what it gets; with the other jobs
    writing too when ``others``, as they checkpoint to the same systems). The read flows ask
    only for the samples the GPUs consume, so their rate says nothing about how fast a
    checkpoint can go (a workload reading little would write its checkpoints at its read rate).
    derived: a write runs the read route backwards; fabric links are full duplex with the same
    capacity each way, so max-min over the read routes with elastic demand gives the write
    rates (the reverse direction's own ECMP hash choices aside)."""
    storage = {"read_GB_per_iteration": r.read_GB, "read_under_training_GBps": 0.0,
               "read_alone_GBps": 0.0}
    alone: dict[str, float] = {}
    write: dict[str, float] = {}
    converged = False
    stor = r.stor
    if stor.src:
        mine = stor.job == job
        if not others:
            stor = replace(stor, demand=np.where(mine, stor.demand, 0.0))
        sph = phases.get("dp") or phases["storage"]
        is_st = sph.flows.group < 0
        my_st = is_st & (sph.flows.job == job)
        s_routes, s_sol = sph.solved()
        storage["read_under_training_GBps"] = float(s_sol.rate_GBps[my_st].sum())
        solo = _Phase("storage alone", stor)
        _solve_phase(r.fab, r.cap, solo, r.scen.get("routing", "ecmp"), r.seed)
        solo_routes, solo_sol = solo.solved()
        storage["read_alone_GBps"] = float(solo_sol.rate_GBps[mine].sum())
        owner = {e: s.id for s in r.servers for e in s.endpoints}
        writers = mine if not others else np.ones(len(mine), dtype=bool)
        elastic = net.max_min(solo_routes, r.cap, np.where(writers, np.inf, 0.0))
        mine_dst = np.array(stor.dst, dtype=object)[mine]
        for dst, rate, wrate in zip(mine_dst, solo_sol.rate_GBps[mine], elastic.rate_GBps[mine]):
            alone[owner[dst]] = alone.get(owner[dst], 0.0) + float(rate)
            write[owner[dst]] = write.get(owner[dst], 0.0) + float(wrate)
        live = sph.flows.demand[s_routes.flow] > 0
        st_arcs = np.zeros(len(r.cap), dtype=bool)
        st_arcs[s_routes.arc[my_st[s_routes.flow]]] = True
        converged = bool(st_arcs[s_routes.arc[~is_st[s_routes.flow] & live]].any())
    return storage, alone, converged, write


def _resources(r: _Run, pl: Placement, jobs: int, iteration: float, colls: list[CollectiveResult],
               alone: dict[str, float], converged: bool, overlap: float, others: bool,
               write: dict[str, float] | None = None):
    """Resources stage (host CPU, DPU, storage stalls, stragglers, checkpoints, energy) of the one
    job ``pl`` holds, one of ``jobs``. It draws 1/jobs of the switches' and storage systems'
    power; with the ``others`` running it also gets 1/jobs of the storage systems' read and write
    rates (every job reads its samples and writes its checkpoints to them)."""
    try:
        inputs = resources_adapter.build_inputs(r.design, r.catalog, r.scen, r.w, pl, iteration, colls,
                                                alone, converged, overlap, jobs=jobs,
                                                storage_sharers=jobs if others else 1,
                                                storage_write_GBps=write, kinds=r.kinds, fab=r.fab)
        return resources_adapter.assess(inputs)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _tenants(jobs: int, how: str, split: list[np.ndarray], servers: int, shared: _Outcome,
             solo: _Outcome | None) -> dict[str, Any]:
    """``Result.tenants``: the jobs, and the slowest one shared vs alone on the fabric."""
    alone = solo or shared
    it, it_alone = shared.iteration, alone.iteration
    return {"jobs": jobs, "placement": how, "servers_per_job": len(split[0]),
            "idle_servers": servers - jobs * len(split[0]),
            "slowest_job": shared.job,
            "dp_rate_shared_GBps": shared.infos["dp"].get("worst_rate_GBps"),
            "dp_rate_alone_GBps": alone.infos["dp"].get("worst_rate_GBps"),
            "iteration_shared_s": it, "iteration_alone_s": it_alone,
            "slowdown_pct": 100.0 * (it / it_alone - 1.0) if solo and it_alone > 0 else 0.0}


def memory_warning(w: Workload, need_GB: float, state_GB: float, have_GB: float) -> str:
    """What to change when the estimate (:func:`memory_per_gpu_GB`) exceeds a GPU's memory. The
    model state alone over the memory is certain not to fit; activations over it only may not:
    their estimate sums every part at its peak (``workload.memory_parts``) and counts only the
    recomputation, offload and framework settings the workload names."""
    fixes = [f"more pipeline stages (--pp, now {w.pp})", f"more tensor parallelism (--tp, now {w.tp})"]
    if not w.optimizer_sharded:
        fixes.append("a sharded optimizer (--set workload.optimizer_sharded=true)")
    if not w.recompute and w.kind == "transformer":
        fixes.append("activation recomputation (--set workload.recompute=true)")
    if not w.offload_layers and w.kind == "transformer" and state_GB <= have_GB:
        fixes.append("activation offload to the host (--set workload.offload_layers=N, charged in time)")
    if not w.optimizer_cpu_offload:
        fixes.append("the optimizer on the host CPU (--set workload.optimizer_cpu_offload=true, charged in time)")
    if state_GB > have_GB:
        return (f"each GPU needs about {state_GB:.0f} GB for weights, gradients and Adam state "
                f"(18 bytes per parameter of the busiest shard, as Megatron counts) but has {have_GB:.1f} GB ({have_GB * 1e9 / GPU_MEMORY_GB_BYTES:.0f} GiB): the job does not "
                f"fit; use " + ", ".join(fixes))
    return (f"each GPU may need about {need_GB:.0f} GB ({state_GB:.0f} GB model state, "
            f"{need_GB - state_GB:.0f} GB activations, an upper estimate) but has {have_GB:.1f} GB ({have_GB * 1e9 / GPU_MEMORY_GB_BYTES:.0f} GiB): "
            f"the job may not fit; if it does not, use " + ", ".join(fixes))


def _resource_terms(rep) -> dict[str, float]:
    """The resources stage's extra seconds as named breakdown parts (they add up to what it adds:
    ``rep.iteration_s`` = input iteration + these)."""
    extra = rep.network_extra_s
    return {"host_cpu_slowdown": extra if rep.network_extra_cause == "host_cpu" else 0.0,
            "dpu_slowdown": extra if rep.network_extra_cause == "dpu" else 0.0,
            "data_stall": rep.data_stall_s, "straggler": rep.straggler_s,
            "checkpoint": rep.checkpoint_s}


def _link_results(fab: net.Fabric, topo, phases: dict[str, _Phase]) -> LinkResults:
    """Each link's busier direction, highest over the phases (capped at 1), and that phase
    (the first one on a tie; "" when no phase loads it). Arc i and arc i + links are the two
    directions of link i (``network.fabric_of``). A tie is utilizations within ``network.UTIL_TIE`` of
    each other (relative): two phases that both fill a link read 1 give or take rounding (a rate
    is worked out as ``(c - F) / S`` by ``network.max_min``), which must not pick the phase."""
    nl = len(fab.link_ids)
    best = np.zeros(nl)
    where = np.zeros(nl, dtype=np.int64)  # 0: no phase, k: the k-th phase
    names = [""]
    for name, ph in phases.items():
        util = ph.solved()[1].arc_utilization
        per_link = np.maximum(np.maximum(0.0, util[:nl]), util[nl:])
        better = per_link > best * (1.0 + net.UTIL_TIE)
        best[better] = per_link[better]
        names.append(name)
        where[better] = len(names) - 1
    return LinkResults.from_codes(fab.link_ids, np.minimum(best, 1.0), names, where)  # phases as numbers


def group_shape_for(design, catalog, gpus: int | None = None, *,
                    scenario: dict[str, Any] | None = None, seed: int | None = None,
                    cache: EngineCache | None = None) -> coll.GroupShape:
    """Communicator of the first ``gpus`` GPUs of the design (all by default), with the rail rate
    its per-rail rings get on the drawn fabric (for ``dpu-designer collective``)."""
    scen = {**design.scenario, **(scenario or {})}
    seed = design_seed(design, seed, scenario)
    fab = net.fabric_of(design.topology, cache)
    servers = servers_of(design, catalog, fab)
    total = sum(s.gpus for s in servers)
    if not servers:
        raise UsageError("the design has no GPU server; add one first")
    n = total if gpus is None else gpus
    if n > total:
        raise UsageError(f"--gpus {n} is more than the design's {total} GPUs")
    pl = place(Workload(tp=1, pp=1, dp=n, global_batch=n), servers)
    ph = None
    flows = tr.ring_flows(pl, "dp")
    if flows.src:
        ph = _Phase("dp", flows)
        _solve_phase(fab, usable_capacity_GBps(fab, design.topology, scen), ph,
                     scen.get("routing", "ecmp"), seed)
    return _group_shape(pl, "dp", ph, design.topology, catalog, fab)[0]
