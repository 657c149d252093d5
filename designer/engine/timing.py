"""Timing stage: the collectives of one iteration and the iteration before the resources stage.

Iteration model (Narayanan et al. SC'21 §2.2 and §3): with m micro-batches per pipeline,
    t_iteration = m·t_mb + bubble + exposed DP communication
    t_mb        = compute (GEMM + memory-bound) + TP all-reduces + PP send/receive
    bubble      = (p − 1)/v · t_mb
The DP gradient all-reduce overlaps the backward pass of the last micro-batch (gradient buckets
are reduced as they complete); only what is left over is exposed.

Input: the workload, its compute times (``workload.compute``), its traffic volumes
(``traffic.Volumes``) and the communicator shapes the network stage measured. Pure: no
topology, no numpy state.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from designer.engine import collectives as coll
from designer.engine import traffic as tr
from designer.engine.result import CollectiveResult
from designer.engine.workload import Workload, bubble_s


def collective(name: str, op: str, nbytes: float, calls: int, shape: coll.GroupShape) -> CollectiveResult:
    c = coll.best(op, nbytes, shape)
    return CollectiveResult(name, op, c.algorithm, c.protocol, nbytes, calls, c.time_s, c.algbw_GBps,
                            c.busbw_GBps, shape.ranks, shape.nodes)



def timing(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]
            ) -> tuple[list[CollectiveResult], dict[str, float], float, float]:
    """Collectives and the iteration before the resources stage (module docstring): the
    collectives, the breakdown, the iteration time and the compute time DP hides behind."""
    colls: list[CollectiveResult] = []
    m = w.micro_batches
    tp_mb = 0.0
    if w.tp > 1 and vol.tp_calls_per_micro_batch:
        c = collective("tp_allreduce", "allreduce", vol.tp_bytes, vol.tp_calls_per_micro_batch * m,
                        shapes["tp"])
        colls.append(c)
        tp_mb = c.time_s * vol.tp_calls_per_micro_batch
    pp_mb = 0.0
    if w.pp > 1:
        # scatter/gather optimisation (SC'21 §4.1): each TP rank sends 1/t across servers, then
        # the stage all-gathers over NVLink
        pp_shape = shapes["pp"]
        pair = coll.GroupShape(ranks=2, nodes=min(2, pp_shape.nodes), nvlink_GBps=pp_shape.nvlink_GBps,
                               pcie_gen=pp_shape.pcie_gen, net_GBps=pp_shape.net_GBps,
                               net_line_GBps=pp_shape.net_line_GBps)
        sends = 2 * vol.pp_sends_per_micro_batch
        split = w.tp if pair.nodes > 1 and shapes["tp"].nodes == 1 else 1
        c = collective("pp_sendrecv", "sendrecv", vol.pp_bytes / split, sends * m, pair)
        colls.append(c)
        pp_mb = c.time_s * sends
        if split > 1:
            g = collective("pp_allgather", "allgather", vol.pp_bytes, sends * m, shapes["tp"])
            colls.append(g)
            pp_mb += g.time_s * sends
    t_mb = ct.micro_batch_s + tp_mb + pp_mb
    bubble = bubble_s(w, t_mb)
    dp_time = 0.0
    if w.dp > 1 and vol.dp_bytes > 0:
        ops = (("dp_reduce_scatter", "reduce_scatter"), ("dp_allgather", "allgather")) \
            if vol.dp_sharded else (("dp_allreduce", "allreduce"),)
        for name, op in ops:
            c = collective(name, op, vol.dp_bytes, 1, shapes["dp"])
            colls.append(c)
            dp_time += c.time_s
    overlap = ct.backward_fraction * ct.micro_batch_s
    dp_exposed = max(0.0, dp_time - overlap)
    iteration = m * t_mb + bubble + dp_exposed
    breakdown = {"compute": m * ct.micro_batch_s, "tp_comm": m * tp_mb, "pp_comm": m * pp_mb,
                 "dp_exposed": dp_exposed, "bubble": bubble}
    return colls, breakdown, iteration, overlap


def sharp_saving(colls: list[CollectiveResult], shapes: dict[str, coll.GroupShape],
                  infos: dict[str, dict[str, Any]]) -> None:
    """Where a switch had too few SHARP trees for the groups crossing it, what the all-reduce
    would take with SHARP (``infos[dim]["sharp_time_s"]``, per call) for the bottleneck list."""
    for c in colls:
        dim = c.name.split("_")[0]
        if c.op != "allreduce" or "sharp_switch" not in infos.get(dim, {}):
            continue
        with_sharp = coll.best(c.op, c.bytes, replace(shapes[dim], sharp=True))
        if with_sharp.algorithm == "sharp" and with_sharp.time_s < c.time_s:
            infos[dim].update(sharp_time_s=with_sharp.time_s, sharp_fallback=c.algorithm,
                              sharp_calls=c.calls_per_iteration, fallback_time_s=c.time_s)
