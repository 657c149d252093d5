"""Hand what the network stage knows to the resources stage (:mod:`designer.engine.resources`).

Identical servers (same model, props, attached adapters and scenario) become one ServerGroup with
a count. Per server per iteration the network bytes are the DP gradient traffic of its GPUs that
crosses servers (a ring all-reduce sends and receives 2(n−1)/n of the buffer per rank), and
``comm_s`` is the time the collectives take at fabric speed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from designer.engine import resources
from designer.engine.placement import Placement
from designer.engine.traffic import volumes
from designer.engine.workload import Workload, parameters


def _server_key(topo, catalog, srv, scenario: str) -> tuple:
    kids = tuple((c.kind, c.model, repr(sorted(c.props.items()))) for c in topo.attached(srv.id))
    return (srv.model, repr(sorted(srv.props.items())), kids, scenario)


def build_inputs(design, catalog, scen: dict[str, Any], w: Workload, pl: Placement,
                 iteration_s: float, comm_s: float, storage_alone_GBps: dict[str, float],
                 converged: bool) -> resources.ResourceInputs:
    topo = design.topology
    vol = volumes(w)
    per_server_gpus = np.bincount(pl.server, minlength=len(pl.servers))
    dp_cross = pl.nodes_spanned("dp") > 1
    ring = 2.0 * (w.dp - 1) / w.dp if w.dp > 1 else 0.0
    groups: dict[tuple, dict[str, Any]] = {}
    for k, info in enumerate(pl.servers):
        if per_server_gpus[k] == 0:
            continue
        srv = topo.components[info.id]
        mode = scen.get("per_server", {}).get(srv.id, scen.get("offload", "host"))
        key = _server_key(topo, catalog, srv, mode)
        if key in groups:
            groups[key]["count"] += 1
            continue
        f = catalog.resolve(srv)
        cpu = catalog.get("cpu", f["cpu_model"])
        adapters = topo.attached(srv.id)
        dpus = [catalog.resolve(a) for a in adapters if a.kind == "dpu"]
        nics = [catalog.resolve(a) for a in adapters if a.kind == "nic"]
        d0 = dpus[0] if dpus else {}
        rdma = all(a.get("rdma", True) for a in dpus + nics) if (dpus or nics) else False
        net_bytes = 2 * ring * vol.dp_bytes * per_server_gpus[k] if dp_cross else 0.0
        groups[key] = dict(
            count=1, scenario=mode, gpus=int(per_server_gpus[k]),
            gpu_power_W=float(info.gpu.get("tdp_W") or 700.0),
            cpu_cores=int(cpu.get("cores", 1)) * int(f.get("cpu_sockets", 1)),
            cpu_GHz=float(cpu.get("all_core_GHz") or cpu.get("base_GHz") or 2.0),
            base_power_W=float(f.get("base_power_W", 2500.0)),
            dpus=len(dpus), dpu_arm_cores=int(d0.get("arm_cores", 16)),
            dpu_arm_GHz=float(d0.get("arm_GHz", 2.0)), dpu_crypto_Gbps=float(d0.get("crypto_Gbps", 0.0)),
            dpu_bandwidth_Gbps=float(d0.get("max_bandwidth_Gbps", 400.0)),
            dpu_storage_emulation=bool(d0.get("storage_emulation", True)),
            dpu_ovs_offload=bool(d0.get("ovs_offload", True)), dpu_power_W=float(d0.get("power_W", 150.0)),
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
