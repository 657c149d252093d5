"""Hand what the network stage knows to the resources stage (:mod:`designer.engine.resources`).

Identical servers (same model, props, attached adapters and scenario) become one ServerGroup with
a count. Per server and iteration:

* ``comm_s`` is the time of the collectives that cross servers (NVLink-only ones leave the host
  CPU and the DPUs alone);
* the network bytes are what the server's adapters send plus what they receive for those
  collectives (:func:`node_wire_bytes`);
* the DPUs are split as the placement stage split the endpoints: rail DPUs carry the collectives
  (and the storage reads on a converged fabric), DPUs on a separate storage network carry only
  the reads; engine capacities are summed adapter by adapter, each DPU with its own catalog
  figures (line, crypto, Arm cores, ``arm_tcp_Gbps``, ``dram_GBps``). Where the rails are NICs and
  the DPUs sit off the rails (DGX SuperPOD: ConnectX-7 on the compute rails, BlueField-3 for
  storage and north-south), a DPU server keeps that layout: the rail NICs work as SmartNICs
  (inline crypto, ASAP2) and the off-rail DPUs run the Arm services;
* adapter power follows the mode: a DPU server pays the DPUs' ``power_W``; a host-managed or
  SmartNIC server pays, for each drawn DPU, the ConnectX of the same line rate one would buy
  instead (:func:`nic_for_dpu`). Catalog ``power_W`` figures are maxima (see their sources);
  ``typical_power_W`` (0 = not given) the typical power, which the energy counts per scenario
  ``adapter_power`` (:func:`adapters_typical_W`, :func:`designer.engine.resources.adapter_power_basis`);
* ``port_Gbps`` is the line rate of the network links of the rail DPUs, which bounds their
  traffic in the network stage already.

Scenario keys read here: ``offload`` and ``per_server`` (``"host"``/``"smartnic"``/``"dpu"``), ``encryption``,
``tenants``, ``checkpoint_interval_s``, ``storage_transport`` (``"rdma"``/``"tcp"``, the NVMe-oF
transport of the storage traffic), ``gpudirect_storage`` (asked for; the resources stage applies it
only where the path can carry it and warns otherwise), and ``nic_as_dpu``: in a ``"dpu"`` server
WITHOUT any drawn DPU each NIC is then modelled as the catalog DPU of the same line rate
(:func:`dpu_for_nic`; the compare notes say so); a server with drawn DPUs keeps its layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from designer.engine import dpu as dpu_mod
from designer.engine import hostcpu, resources
from designer.engine import network as net
from designer.engine.placement import Placement, alike_key
from designer.engine.result import CollectiveResult
from designer.engine.workload import Workload, parameters
from designer.topology.management import traffic_links_of
from designer.topology.validation import Resolver, server_power_W


def node_wire_bytes(c: CollectiveResult) -> float:
    """Bytes one server's adapters send (and as many they receive) for one call of ``c``, per
    group of ``c`` that has ranks on the server.

    NCCL runs one channel per NIC; each channel's ring enters and leaves every server once and
    carries its share of the buffer, so a server's NICs together send 2(N−1)/N of a rank's
    buffer S for an all-reduce over N servers, (N−1)/N for a reduce-scatter or all-gather (the
    nccl-tests bus-bandwidth factors, doc/PERFORMANCE.md, with servers in place of ranks: the
    steps inside a server run on NVLink). With in-network reduction (SHARP) each server sends S
    up the tree and receives S back. A send/receive sends its buffer once.
    """
    n = max(c.servers, 1)
    if n == 1:
        return 0.0
    if c.op == "sendrecv" or c.algorithm == "sharp":
        factor = 1.0
    elif c.op == "allreduce":
        factor = 2.0 * (n - 1) / n
    else:
        factor = (n - 1) / n
    return factor * c.bytes


def dpu_for_nic(catalog, nic: dict[str, Any], preferred: str | None) -> dict[str, Any]:
    """The catalog DPU that stands in for ``nic``: the server's own ``dpu_model`` when its line
    rate equals the NIC's, else the first catalog DPU of that line rate, else the server's model
    with the NIC's line rate (a hypothetical part: the port rate stays what was drawn)."""
    rate = float(nic.get("max_bandwidth_Gbps") or 0.0)
    entries = [catalog.get("dpu", preferred)] if preferred in catalog.ids("dpu") else []
    entries += list(catalog.entries("dpu"))
    for e in entries:
        if float(e.get("max_bandwidth_Gbps") or 0.0) == rate:
            return dict(e)
    base = dict(entries[0]) if entries else {}
    return {**base, "max_bandwidth_Gbps": rate}


def run_iterations(w: Workload) -> int:
    """Iterations of the whole run: its samples over one global batch (transformers: the token
    budget over the tokens of a batch; vision: dataset samples × epochs, ``Workload.training_samples``)."""
    samples = w.training_samples
    return math.ceil(samples / w.global_batch) if samples > 0 else 0


def dpu_model_figures(catalog, entry: dict[str, Any]) -> tuple[float, float]:
    """``arm_tcp_Gbps`` and ``dram_GBps`` of a resolved DPU (catalog fields of the dpu kind,
    ``models/hardware/dpu.toml`` with their sources; a drawn DPU's props override them). A DPU
    without an Arm kernel-path figure (0) gets the BlueField-2 measurement scaled by its core-GHz
    (:func:`designer.engine.dpu.default_arm_tcp_Gbps`); without a memory figure, no DRAM limit.
    ``catalog`` is unused (kept for callers of the earlier per-id table)."""
    cores, ghz = int(entry.get("arm_cores", 0) or 0), float(entry.get("arm_GHz", 0.0) or 0.0)
    arm = float(entry.get("arm_tcp_Gbps") or 0.0) or dpu_mod.default_arm_tcp_Gbps(cores, ghz)
    return arm, float(entry.get("dram_GBps") or 0.0)


def nic_for_dpu(catalog, dpu: dict[str, Any], preferred: str | None) -> dict[str, Any]:
    """The plain NIC one would buy instead of ``dpu`` to run a server host-managed or with a
    SmartNIC: the server's own ``nic_model`` when its line rate equals the DPU's, else the first
    catalog ConnectX NIC of that line rate (ConnectX-7 for a 400 Gb/s BlueField-3), else the
    DPU's figures with no Arm complex (a hypothetical NIC of that rate)."""
    rate = float(dpu.get("max_bandwidth_Gbps") or 0.0)
    ids = catalog.ids("nic")
    entries = [catalog.get("nic", preferred)] if preferred in ids else []
    entries += [catalog.get("nic", i) for i in ids if i.startswith("connectx")]
    for e in entries:
        if float(e.get("max_bandwidth_Gbps") or 0.0) == rate:
            return dict(e)
    return {**dpu, "arm_cores": 0}


#: the catalog figure of each inline-crypto protocol (scenario ``crypto_offload``)
CRYPTO_FIELD = {"ipsec-crypto": "crypto_Gbps", "ipsec-packet": "ipsec_packet_Gbps", "ktls": "ktls_Gbps"}


def crypto_Gbps(entry: dict[str, Any], protocol: str = "ipsec-crypto") -> float:
    """Inline crypto rate of a DPU for ``protocol``: its figure for that protocol
    (``ipsec_packet_Gbps``, ``ktls_Gbps``), else ``crypto_Gbps`` (IPsec crypto offload)."""
    own = float(entry.get(CRYPTO_FIELD.get(protocol, "crypto_Gbps")) or 0.0)
    return own if own > 0 else float(entry.get("crypto_Gbps") or 0.0)


def _capacity(entries: list[dict[str, Any]], catalog=None, protocol: str = "ipsec-crypto",
              transport: str = "rdma") -> resources.DpuCapacity:
    """Engines of some DPUs together, summed DPU by DPU from their catalog figures (inline crypto
    for ``protocol``, storage-emulation IO rate for the NVMe-oF ``transport``)."""
    caps = []
    for e in entries:
        arm, dram = dpu_model_figures(catalog, e) if catalog is not None else (
            dpu_mod.default_arm_tcp_Gbps(int(e.get("arm_cores", 0)), float(e.get("arm_GHz", 0.0))), 0.0)
        caps.append(resources.DpuCapacity.of(1, float(e.get("max_bandwidth_Gbps", 0.0)),
                                             crypto_Gbps(e, protocol), int(e.get("arm_cores", 0)),
                                             float(e.get("arm_GHz", 0.0)), arm, dram,
                                             float(e.get("eswitch_Mpps") or 0.0),
                                             float(e.get(f"snap_{transport}_kiops") or 0.0)))
    return resources.DpuCapacity(sum(c.line_Bps for c in caps), sum(c.crypto_Bps for c in caps),
                                 sum(c.arm_Hz for c in caps), sum(c.arm_path_Bps for c in caps),
                                 sum(c.dram_Bps for c in caps), sum(c.eswitch_pps for c in caps),
                                 sum(c.snap_iops for c in caps))


def smartnic_crypto_Gbps(entry: dict[str, Any], fraction: float, protocol: str = "ipsec-crypto") -> float:
    """Inline crypto rate of an adapter working as a SmartNIC. IPsec crypto offload: its catalog
    ``crypto_Gbps`` when it has one, else its crypto-enabled OPN's: ``fraction``
    (models/costs/dpu.toml ``inline_crypto_fraction_of_line``, the measured 193 of 400 Gb/s) of its line
    rate. IPsec packet offload and kTLS: the generation's figure for that protocol
    (``ipsec_packet_Gbps``, ``ktls_Gbps``, crypto-enabled parts), else as IPsec crypto offload."""
    if protocol != "ipsec-crypto":
        rate = float(entry.get(CRYPTO_FIELD.get(protocol, "")) or 0.0)
        if rate > 0:
            return rate
    own = float(entry.get("crypto_Gbps") or 0.0)
    return own if own > 0 else fraction * float(entry.get("max_bandwidth_Gbps") or 0.0)


def _smartnic_capacity(entries: list[dict[str, Any]], fraction: float,
                       protocol: str = "ipsec-crypto") -> resources.DpuCapacity:
    """Line, inline-crypto and embedded-switch engines of adapters working as ConnectX SmartNICs
    (no Arm complex)."""
    line = sum(float(e.get("max_bandwidth_Gbps") or 0.0) for e in entries) * 1e9 / 8
    crypto = sum(smartnic_crypto_Gbps(e, fraction, protocol) for e in entries) * 1e9 / 8
    eswitch = sum(float(e.get("eswitch_Mpps") or 0.0) for e in entries) * 1e6
    return resources.DpuCapacity(line, crypto, 0.0, eswitch_pps=eswitch)


def eswitch_figure(entries: list[dict[str, Any]]) -> str:
    """The eSwitch packet-rate figures of some adapters for the sentences, each model once, with
    its kind and source (catalog ``eswitch_Mpps``; 0: no packet rate given, no eSwitch limit)."""
    from designer.topology.catalog import figure_kind

    parts, seen = [], set()
    for e in entries:
        key = (e.get("id", "?"), e.get("eswitch_Mpps"))
        if key in seen:
            continue
        seen.add(key)
        src = str((e.get("sources") or {}).get("eswitch_Mpps") or e.get("source", ""))
        kind = figure_kind(src)
        text = src.split(":", 1)[1].strip() if src.lower().startswith(kind.split(",")[0]) else src
        short = text if len(text) <= 200 else text[:197] + "..."
        mpps = float(e.get("eswitch_Mpps") or 0.0)
        what = f"{mpps:g} Mpps per adapter" if mpps > 0 else "no packet rate (not limited)"
        parts.append(f"{key[0]} eswitch_Mpps: {what}, {kind}: {short}")
    return "; ".join(parts)


def _server_key(srv, adapters, scenario: str) -> tuple:
    """Servers with equal keys are alike: model, overrides, adapters (kinds, models and
    overrides, in slot order; ``placement.alike_key``) and scenario."""
    return (*alike_key(srv, adapters), scenario)


@dataclass(frozen=True)
class _GroupContext:
    """What every server group of one run shares, for :func:`_group_fields`."""

    topo: Any
    catalog: Any
    scen: dict[str, Any]
    fab: Any
    resolve: Any
    crossing: list[CollectiveResult]
    comm_s: float
    dp_comm_s: float
    fraction: float
    protocol: str
    transport: str
    switches_of_scenario: dict[str, Any]
    storage_alone_GBps: dict[str, float]
    storage_write_GBps: dict[str, float]


def _group_fields(ctx: _GroupContext, info, gpus: int, mode: str, count: int) -> dict[str, Any]:
    """The ``resources.ServerGroup`` fields of one group of alike servers, by keyword."""
    topo, catalog = ctx.topo, ctx.catalog
    srv = topo.components[info.id]
    adapters = info.adapters if info.adapters is not None else topo.attached(srv.id)
    f = catalog.resolve(srv)
    cpu = catalog.get("cpu", f["cpu_model"])
    lay = _layout(catalog, ctx.scen, info, adapters, f, mode)
    # ranks of a collective's group on one server = ranks / servers; the server's GPUs hold
    # gpus / that many groups
    sent = {c.name: node_wire_bytes(c) * c.calls_per_iteration * gpus / max(1, c.ranks // c.servers)
            for c in ctx.crossing}
    net_bytes = 2.0 * sum(sent.values())  # sent + received (symmetric, see node_wire_bytes)
    port = sum(l.capacity_Gbps for e in lay.rail for l in
               (net.links_of(ctx.fab, topo, e) if ctx.fab is not None else traffic_links_of(topo, e)))
    power = server_power_W(_Attached(topo, srv.id, adapters), srv, ctx.resolve, lay.stand_ins)
    typical_W, without_typical = adapters_typical_W(adapters, ctx.resolve, lay.stand_ins)
    return dict(
        count=count, scenario=mode, gpus=gpus,
        gpu_power_W=power["gpu"] / int(f["gpu_count"]),
        cpu_cores=int(cpu.get("cores", 1)) * int(f.get("cpu_sockets", 1)),
        cpu_GHz=float(cpu.get("all_core_GHz") or cpu.get("base_GHz") or 2.0),
        base_power_W=power["server"], adapters_power_W=power["adapters"],
        adapters_typical_power_W=typical_W, adapters_without_typical=without_typical,
        **_engine_fields(catalog, lay, adapters, info, mode, ctx.fraction, ctx.protocol, ctx.transport),
        **ctx.switches_of_scenario,
        host_memory_GBps=hostcpu.memory_GBps(int(f.get("cpu_sockets", 1)),
                                             int(cpu.get("memory_channels", 0) or 0),
                                             float(cpu.get("memory_MTps", 0) or 0)),
        port_Gbps=float(port),
        rdma=lay.rdma, rdma_bytes=net_bytes if lay.rdma else 0.0,
        tcp_bytes=0.0 if lay.rdma else net_bytes,
        comm_s=ctx.comm_s, dp_comm_s=ctx.dp_comm_s,
        storage_fabric_GBps=ctx.storage_alone_GBps.get(info.id, 0.0),
        storage_fabric_write_GBps=ctx.storage_write_GBps.get(info.id, 0.0))


def build_inputs(design, catalog, scen: dict[str, Any], w: Workload, pl: Placement,
                 iteration_s: float, collectives: list[CollectiveResult],
                 storage_alone_GBps: dict[str, float], converged: bool,
                 dp_overlap_s: float, jobs: int = 1, storage_sharers: int = 1,
                 storage_write_GBps: dict[str, float] | None = None,
                 kinds: dict[str, list] | None = None, fab=None) -> resources.ResourceInputs:
    """Resource inputs of one scenario run; ``dp_overlap_s`` is the compute time the DP
    collectives hide behind (see ``designer.engine.pipeline``). ``pl`` holds one job of ``jobs``
    on the fabric: it draws 1/jobs of the switches' and storage systems' power, and
    1/``storage_sharers`` of the storage systems' read and write rates (the jobs reading and
    writing at the same time). ``storage_write_GBps``: per server, the rate the fabric gives its
    checkpoint writes (elastic demand); when None the read rate stands in for it. ``kinds``: the
    design's components by kind (``placement.components_by_kind``) and ``fab`` its
    ``network.fabric_of``, when the caller has them (a rail's links are then read from the fabric,
    without the topology's index of every component's links)."""
    topo = design.topology
    per_server_gpus = np.bincount(pl.server, minlength=len(pl.servers))
    crossing = [c for c in collectives if c.servers > 1]
    comm_s = sum(c.time_s * c.calls_per_iteration for c in crossing)
    dp_comm_s = sum(c.time_s * c.calls_per_iteration for c in crossing if c.name.startswith("dp_"))
    dp_time_s = sum(c.time_s * c.calls_per_iteration for c in collectives if c.name.startswith("dp_"))
    resolve = Resolver(catalog)
    groups: dict[str, dict[str, Any]] = {}  # first server of each group -> the group
    shared = _GroupContext(topo, catalog, scen, fab, resolve, crossing, comm_s, dp_comm_s,
                           float(resources.cost_figures(catalog)["inline_crypto_fraction_of_line"]),
                           str(scen.get("crypto_offload", "ipsec-crypto")),
                           str(scen.get("storage_transport", "rdma")), _scenario_fields(scen),
                           storage_alone_GBps, storage_write_GBps or storage_alone_GBps)
    per_server, default_mode = scen.get("per_server", {}), scen.get("offload", "host")
    for (info, gpus, mode, count) in _alike_servers(pl, per_server_gpus, per_server, default_mode, topo):
        groups[info.id] = _group_fields(shared, info, gpus, mode, count)
    stor, switches = _storage_and_switches(topo, resolve, kinds)
    interval = float(scen.get("checkpoint_interval_s") or 0.0)
    return resources.ResourceInputs(
        groups=tuple(resources.ServerGroup(**g) for g in groups.values()),
        iteration_s=iteration_s, dp_time_s=dp_time_s, dp_overlap_s=dp_overlap_s,
        samples_per_iteration=float(w.global_batch), sample_bytes=float(w.bytes_per_sample),
        preprocess_core_s_per_sample=float(w.preprocess_core_s_per_sample),
        storage_transport=str(scen.get("storage_transport", "rdma")),
        storage_read_GBps=sum(float(s.get("read_GBps", 0)) for s in stor) / storage_sharers,
        storage_write_GBps=sum(float(s.get("write_GBps", 0)) for s in stor) / storage_sharers,
        storage_converged=converged, parameters=parameters(w),
        checkpoint_every_iterations=(max(1, int(round(interval / iteration_s)))
                                     if interval > 0 and stor else 0),
        tenants=int(scen.get("tenants", 1)), iterations=run_iterations(w),
        object_store_tls=bool(scen.get("object_store_tls", False)),
        tenant_qos=bool(scen.get("tenant_qos", True)),
        packet_bytes=float(scen.get("packet_bytes", 1500)),
        read_io_bytes=float(scen["storage_io_kib"]) * 1024 if scen.get("storage_io_kib") else None,
        checkpoint_via_host=bool(scen.get("checkpoint_via_host", False)),
        checkpoint_compression=bool(scen.get("checkpoint_compression", False)),
        checkpoint_erasure_coding=bool(scen.get("checkpoint_erasure_coding", False)),
        adapter_power=str(scen.get("adapter_power", "auto")),
        switch_power_W=sum(switches) / jobs,
        storage_power_W=sum(float(s.get("power_W", 0)) for s in stor) / jobs)


@dataclass(frozen=True)
class _Layout:
    """One server's adapters as a run sees them (ids of the attached components)."""

    dpus: dict[str, dict[str, Any]]  #: adapter id -> its DPU figures (drawn, or a NIC as DPU)
    rail: list[str]  #: DPUs on the compute rails
    rail_nics: list[dict[str, Any]]  #: figures of the NICs on the rails
    store: list[str]  #: DPUs off the rails (storage network or Arm services)
    stand_ins: dict[str, dict[str, Any]]  #: adapter id -> the figures its power is priced at
    rdma: bool


def _layout(catalog, scen: dict[str, Any], info, adapters, f: dict[str, Any], mode: str) -> _Layout:
    """Which adapters are DPUs, on the rails or off them, and what each costs in power."""
    drawn = [a for a in adapters if a.kind == "dpu"]
    # the DPU run keeps a drawn layout (ConnectX on the rails, BlueField for storage and
    # north-south, as DGX SuperPOD): only a server without any DPU gets its NICs as DPUs
    as_dpu = mode == "dpu" and bool(scen.get("nic_as_dpu")) and not drawn
    dpus = {a.id: catalog.resolve(a) if a.kind == "dpu" else
            dpu_for_nic(catalog, catalog.resolve(a), f.get("dpu_model"))
            for a in adapters if a.kind == "dpu" or (as_dpu and a.kind == "nic")}
    nics = [catalog.resolve(a) for a in adapters if a.id not in dpus]
    rail = [d for d in dpus if d in info.rails]
    rail_nics = [catalog.resolve(a) for a in adapters if a.id in info.rails and a.id not in dpus]
    if not rail and not rail_nics:
        rail = list(dpus)
    # off-rail DPUs: on the storage network they carry the reads; either way they host the
    # Arm services (filesystem client, object-store proxy, agents) when the rails are NICs
    store = [d for d in dpus if d in info.storage_ports and d not in rail] or \
        ([d for d in dpus if d not in rail] if rail_nics and not rail else [])
    # what the adapters cost in power: host-managed and SmartNIC servers buy a ConnectX of
    # the same line rate instead of each drawn DPU; a DPU server buys the DPUs
    stand_ins = dict(dpus) if mode == "dpu" else {
        a.id: nic_for_dpu(catalog, catalog.resolve(a), f.get("nic_model")) for a in drawn}
    rdma = all(a.get("rdma", True) for a in list(dpus.values()) + nics) if adapters else False
    return _Layout(dpus=dpus, rail=rail, rail_nics=rail_nics, store=store, stand_ins=stand_ins, rdma=rdma)


def _engine_fields(catalog, lay: _Layout, adapters, info, mode: str, fraction: float, protocol: str,
                   transport: str) -> dict[str, Any]:
    """ServerGroup fields of the adapters' engines: DPU counts and capacities (rail, storage-only,
    SmartNIC) and the DPUs' storage-emulation and switch-offload capabilities."""
    dpus, rail, store = lay.dpus, lay.rail, lay.store
    smart = [lay.stand_ins.get(a.id) or catalog.resolve(a) for a in adapters if a.id in info.rails] or \
        [lay.stand_ins.get(a.id) or catalog.resolve(a) for a in adapters]
    return dict(
        dpus=len(dpus), rail_dpus=len(rail), storage_dpus=len(store),
        rail_capacity=(_capacity([dpus[d] for d in rail], catalog, protocol, transport) if rail else
                       _smartnic_capacity(lay.rail_nics, fraction, protocol)),
        storage_capacity=(_capacity([dpus[d] for d in store], catalog, protocol, transport)
                          if store else None),
        smartnic_capacity=(_smartnic_capacity(smart, fraction, protocol)
                           if mode == "smartnic" and adapters else None),
        dpu_storage_emulation=all(bool(dpus[d].get("storage_emulation", True)) for d in store or rail),
        dpu_ovs_offload=all(bool(dpus[d].get("ovs_offload", True)) for d in rail),
        eswitch_pps=_smartnic_capacity(smart, fraction, protocol).eswitch_pps if adapters else 0.0,
        storage_eswitch_pps=(_smartnic_capacity([lay.stand_ins.get(d) or dpus[d] for d in store],
                                                fraction, protocol).eswitch_pps if store else None),
        eswitch_figure=eswitch_figure(
            ([dpus[d] for d in (*rail, *store)] + ([] if rail else list(lay.rail_nics)))
            if mode == "dpu" and dpus else smart if adapters else []))


def _scenario_fields(scen: dict[str, Any]) -> dict[str, Any]:
    """ServerGroup fields that every server of a run takes from the scenario: the consumer
    switches, tenancy and encryption (``designer.topology.design.SCENARIO_SPEC``)."""
    return dict(
        nccl_proxy=bool(scen.get("nccl_proxy", False)),
        pfs_client=bool(scen.get("parallel_fs_client", False)),
        k8s_agents=bool(scen.get("k8s_agents", False)),
        irq=bool(scen.get("irq_handling", False)),
        kernel_copy_membw=bool(scen.get("kernel_copy_membw", False)),
        tenant_packet_bytes=float(scen.get("tenant_packet_bytes", 0) or 0),
        vswitch=str(scen.get("vswitch", "kernel")),
        firewall=bool(scen.get("firewall_conntrack", False)),
        tunnel_offload=bool(scen.get("tunnel_offload", True)),
        tunnel_rx_offload=bool(scen.get("tunnel_rx_offload", True)),
        frame_bytes=float(scen.get("packet_bytes", 1500)),
        monitoring=bool(scen.get("monitoring_agents", False)),
        provisioning_agents=bool(scen.get("provisioning_agents", False)),
        gpudirect_storage=bool(scen.get("gpudirect_storage", False)),
        encrypt=bool(scen.get("encryption", False)), isolated=isolation_overlay(scen),
        isolation=str(scen.get("isolation", "auto")))


def _alike_servers(pl: Placement, per_server_gpus: np.ndarray, per_server: dict[str, str], default_mode: str,
                   topo) -> list[tuple[Any, int, str, int]]:
    """The first server of each group of servers alike (:func:`_server_key`) that hold ranks, in
    the servers' order: ``(ServerInfo, its ranks, scenario, servers in the group)``.

    Servers numbered by ``placement.servers_of`` (``ServerInfo.alike``) all in one scenario are
    grouped by number with numpy (the same groups: equal numbers, equal keys); otherwise each
    server's key is made (once per number and scenario when numbered)."""
    servers = pl.servers
    alike = np.fromiter((s.alike for s in servers), dtype=np.int64, count=len(servers))
    used = np.flatnonzero(per_server_gpus > 0)
    if not per_server and (alike[used] >= 0).all():
        _, first, count = np.unique(alike[used], return_index=True, return_counts=True)
        order = np.argsort(first)
        gpus = per_server_gpus[used[first[order]]].tolist()
        return [(servers[k], g, default_mode, n) for k, g, n in
                zip(used[first[order]].tolist(), gpus, count[order].tolist())]
    firsts: dict[tuple, list] = {}
    known: dict[tuple[int, str], tuple] = {}  # (ServerInfo.alike, scenario) -> its _server_key
    components = topo.components
    for k in used.tolist():
        info = servers[k]
        mode = per_server.get(info.id, default_mode)
        key = known.get((info.alike, mode)) if info.alike >= 0 else None
        if key is None:
            srv = components[info.id]
            key = _server_key(srv, info.adapters if info.adapters is not None else topo.attached(srv.id), mode)
            if info.alike >= 0:
                known[(info.alike, mode)] = key
        got = firsts.get(key)
        if got is None:
            firsts[key] = [info, int(per_server_gpus[k]), mode, 1]
        else:
            got[3] += 1
    return [tuple(v) for v in firsts.values()]


def adapters_typical_W(adapters, resolve: Resolver, stand_ins: dict[str, dict[str, Any]]
                       ) -> tuple[float | None, tuple[str, ...]]:
    """The attached NICs and DPUs at their typical power, priced as ``server_power_W`` prices them
    (a stand-in's figures where the mode buys another adapter): ``typical_power_W`` where the
    adapter has one, its maximum ``power_W`` where not, and the models without one. None when no
    adapter has a typical figure (the sum would be the maxima again)."""
    total, found, without = 0.0, False, []
    for d in adapters:
        fig = stand_ins.get(d.id) or resolve(d)
        typ = float(fig.get("typical_power_W") or 0.0)
        if typ > 0:
            total, found = total + typ, True
        else:
            total += float(fig.get("power_W", 0.0))
            without.append(str(fig.get("id") or d.model))
    return (total if found else None), tuple(sorted(set(without)))


class _Attached:
    """The topology as ``server_power_W`` asks it (``attached``), with the adapters
    ``placement.servers_of`` found for one server already (the same list, in slot order), so that
    a loaded design's parent index is not built just for this."""

    def __init__(self, topo, server_id: str, adapters) -> None:
        self.topo, self.server_id, self.adapters = topo, server_id, adapters

    def attached(self, server_id: str) -> list:
        return list(self.adapters) if server_id == self.server_id else self.topo.attached(server_id)


def _storage_and_switches(topo, resolve: Resolver, kinds: dict[str, list] | None = None
                          ) -> tuple[list[dict], list[float]]:
    """Figures of the storage systems, and each switch's ``power_W`` (the one switch figure the
    resources stage reads), each in the design's order (``kinds``: the components by kind, else
    one pass over the components). Components alike share one dict; those of one model with the
    same overrides (in the same order) are resolved once."""
    if kinds is None:
        kinds = {"storage": [], "switch": []}
        for c in topo.components.values():
            if c.kind in kinds:
                kinds[c.kind].append(c)
    return _figures(kinds.get("storage", ()), resolve), _power_W(kinds.get("switch", ()), resolve)


def _power_W(comps, resolve: Resolver) -> list[float]:
    """``float(resolve(c).get("power_W", 0))`` of each component: its override when it has one,
    else its model's figure (``Catalog.resolve`` lays the overrides over the model's figures, so
    the others do not change it), resolved once per model."""
    out: list[float] = []
    model_W: dict[str, float] = {}
    for c in comps:
        props = c.props
        if props and "power_W" in props:
            out.append(float(props["power_W"]))
            continue
        got = model_W.get(c.model)
        if got is None:
            got = model_W[c.model] = float(resolve(c).get("power_W", 0))
        out.append(got)
    return out


def _figures(comps, resolve: Resolver) -> list[dict]:
    """``[resolve(c) for c in comps]``, asking ``resolve`` once per model and overrides (values
    and their types, as ``Resolver`` keys them; the same overrides in another order are asked
    again, and give the same figures)."""
    out: list[dict] = []
    seen: dict[Any, dict] = {}
    for c in comps:
        props = c.props
        try:
            key = (c.model, *props.items(), *map(type, props.values())) if props else c.model
            got = seen.get(key)
        except TypeError:  # an override that cannot be a key
            out.append(resolve(c))
            continue
        if got is None:
            got = seen[key] = resolve(c)
        out.append(got)
    return out


def isolation_overlay(scen: dict[str, Any]) -> bool:
    """Whether tenant traffic crosses a virtual switch / overlay (VXLAN/Geneve through OVS):
    ``isolation`` overlay, or auto with more than one tenant. SR-IOV virtual functions are switched
    by the adapter's embedded switch and bare-metal tenants own whole servers: no overlay."""
    how = scen.get("isolation", "auto")
    return how == "overlay" or (how == "auto" and int(scen.get("tenants", 1)) > 1)


def assess(inputs: resources.ResourceInputs) -> resources.ResourceReport:
    """The resources stage; its ValueErrors are bad input and reach the user as such."""
    return resources.assess(inputs)
