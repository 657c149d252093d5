"""Hand what the network stage knows to the resources stage (:mod:`designer.engine.resources`).

Identical servers (same model, props, attached adapters and scenario) become one ServerGroup with
a count. Per server and iteration:

* ``comm_s`` is the time of the collectives that cross servers (NVLink-only ones leave the host
  CPU and the DPUs alone);
* the network bytes are what the server's adapters send plus what they receive for those
  collectives (:func:`node_wire_bytes`);
* ``port_Gbps`` is the line rate of the network links of the server's DPUs, which bounds their
  traffic in the network stage already.

Scenario keys read here: ``offload`` and ``per_server`` (``"host"``/``"dpu"``), ``encryption``,
``tenants``, ``checkpoint_interval_s``, and ``nic_as_dpu``: in a ``"dpu"`` server each NIC is
then modelled as the catalog DPU of the same line rate (:func:`dpu_for_nic`). Without it, a server
with compute NICs and (storage) DPUs has all its traffic counted on its DPUs' engines
(approximation: the NICs' share is not split off).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from designer.engine import resources
from designer.engine.placement import Placement
from designer.engine.result import CollectiveResult
from designer.engine.workload import Workload, parameters


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


def _server_key(topo, srv, scenario: str) -> tuple:
    kids = tuple((c.kind, c.model, repr(sorted(c.props.items()))) for c in topo.attached(srv.id))
    return (srv.model, repr(sorted(srv.props.items())), kids, scenario)


def build_inputs(design, catalog, scen: dict[str, Any], w: Workload, pl: Placement,
                 iteration_s: float, collectives: list[CollectiveResult],
                 storage_alone_GBps: dict[str, float], converged: bool) -> resources.ResourceInputs:
    topo = design.topology
    per_server_gpus = np.bincount(pl.server, minlength=len(pl.servers))
    crossing = [c for c in collectives if c.servers > 1]
    comm_s = sum(c.time_s * c.calls_per_iteration for c in crossing)
    groups: dict[tuple, dict[str, Any]] = {}
    for k, info in enumerate(pl.servers):
        gpus = int(per_server_gpus[k])
        if gpus == 0:
            continue
        srv = topo.components[info.id]
        mode = scen.get("per_server", {}).get(srv.id, scen.get("offload", "host"))
        key = _server_key(topo, srv, mode)
        if key in groups:
            groups[key]["count"] += 1
            continue
        f = catalog.resolve(srv)
        cpu = catalog.get("cpu", f["cpu_model"])
        adapters = topo.attached(srv.id)
        as_dpu = mode == "dpu" and bool(scen.get("nic_as_dpu"))
        dpu_ids = {a.id for a in adapters if a.kind == "dpu" or (as_dpu and a.kind == "nic")}
        dpus = [catalog.resolve(a) if a.kind == "dpu" else
                dpu_for_nic(catalog, catalog.resolve(a), f.get("dpu_model"))
                for a in adapters if a.id in dpu_ids]
        nics = [catalog.resolve(a) for a in adapters if a.id not in dpu_ids]
        d0 = dpus[0] if dpus else {}
        rdma = all(a.get("rdma", True) for a in dpus + nics) if (dpus or nics) else False
        # ranks of a collective's group on one server = ranks / servers; the server's GPUs hold
        # gpus / that many groups
        sent = sum(node_wire_bytes(c) * c.calls_per_iteration * gpus / max(1, c.ranks // c.servers)
                   for c in crossing)
        net_bytes = 2.0 * sent
        port = sum(l.capacity_Gbps for e in info.endpoints if e in dpu_ids for l in topo.links_of(e))
        groups[key] = dict(
            count=1, scenario=mode, gpus=gpus,
            gpu_power_W=float(info.gpu.get("tdp_W") or 700.0),
            cpu_cores=int(cpu.get("cores", 1)) * int(f.get("cpu_sockets", 1)),
            cpu_GHz=float(cpu.get("all_core_GHz") or cpu.get("base_GHz") or 2.0),
            base_power_W=float(f.get("base_power_W", 2500.0)),
            dpus=len(dpus), dpu_arm_cores=int(d0.get("arm_cores", 16)),
            dpu_arm_GHz=float(d0.get("arm_GHz", 2.0)), dpu_crypto_Gbps=float(d0.get("crypto_Gbps", 0.0)),
            dpu_bandwidth_Gbps=float(d0.get("max_bandwidth_Gbps", 400.0)),
            dpu_storage_emulation=bool(d0.get("storage_emulation", True)),
            dpu_ovs_offload=bool(d0.get("ovs_offload", True)), dpu_power_W=float(d0.get("power_W", 150.0)),
            port_Gbps=float(port),
            nics=len(nics), nic_power_W=float(nics[0].get("power_W", 25.0)) if nics else 25.0,
            rdma=rdma, rdma_bytes=net_bytes if rdma else 0.0, tcp_bytes=0.0 if rdma else net_bytes,
            comm_s=comm_s, storage_fabric_GBps=storage_alone_GBps.get(info.id, 0.0),
            encrypt=bool(scen.get("encryption", False)), isolated=int(scen.get("tenants", 1)) > 1)
    stor = [catalog.resolve(s) for s in topo.storage()]
    switches = [catalog.resolve(s) for s in topo.switches()]
    interval = float(scen.get("checkpoint_interval_s") or 0.0)
    return resources.ResourceInputs(
        groups=tuple(resources.ServerGroup(**g) for g in groups.values()),
        iteration_s=iteration_s,
        samples_per_iteration=float(w.global_batch), sample_bytes=float(w.bytes_per_sample),
        storage_read_GBps=sum(float(s.get("read_GBps", 0)) for s in stor),
        storage_write_GBps=sum(float(s.get("write_GBps", 0)) for s in stor),
        storage_converged=converged, parameters=parameters(w),
        checkpoint_every_iterations=(max(1, int(round(interval / iteration_s)))
                                     if interval > 0 and stor else 0),
        tenants=int(scen.get("tenants", 1)),
        switch_power_W=sum(float(s.get("power_W", 0)) for s in switches),
        storage_power_W=sum(float(s.get("power_W", 0)) for s in stor))


def assess(inputs: resources.ResourceInputs) -> resources.ResourceReport:
    """The resources stage; its ValueErrors are bad input and reach the user as such."""
    return resources.assess(inputs)
