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

import math
from dataclasses import replace
from typing import Any

from designer.engine import collectives as coll
from designer.engine import traffic as tr
from designer.engine.result import BREAKDOWN_KEYS, CollectiveResult
from designer.engine.workload import Workload, bubble_s


def collective(name: str, op: str, nbytes: float, calls: int, shape: coll.GroupShape) -> CollectiveResult:
    c = coll.best(op, nbytes, shape)
    return CollectiveResult(name, op, c.algorithm, c.protocol, nbytes, calls, c.time_s, c.algbw_GBps,
                            c.busbw_GBps, shape.ranks, shape.nodes)



#: Megatron-Core's default gradient bucket: max(40M, 1M × dp) parameters
#: (megatron/core/distributed/distributed_data_parallel_config.py, ``bucket_size``: "If
#: unspecified, MCore uses a default value of max(40000000, 1000000 * dp_size) parameters")
BUCKET_PARAMS = 40_000_000
BUCKET_PARAMS_PER_DP_RANK = 1_000_000


def derived_shape(shapes: dict[str, coll.GroupShape], dim: str, ranks: int) -> coll.GroupShape:
    """Communicator of a CP or EP group: ``shapes[dim]`` when the network stage measured one,
    else derived from the data-parallel group whose inner chunks they are (Megatron rank order
    tp-cp-ep-dp-pp): ``ranks`` consecutive members of a DP group, on as many of its servers as a
    chunk of that size covers, at the DP group's per-rail network rate."""
    if dim in shapes:
        return shapes[dim]
    d = shapes["dp"]
    per_node = d.per_node
    nodes = max(1, min(d.nodes, math.ceil(ranks / per_node)))
    return replace(d, ranks=ranks, nodes=nodes, sharp=False)


def alltoall_s(nbytes: float, g: coll.GroupShape) -> float:
    """One all-to-all in which every rank sends ``nbytes`` spread evenly over the group
    (derived): the share for ranks in other servers, (n − n/nodes)/n, leaves over the rank's rail
    at ``net_GBps``, the rest over NVLink/PCIe (``intra_GBps``), both at once; plus one network
    (or NVLink) latency per peer server, as NCCL's send/receive pairs post them together."""
    n = max(g.ranks, 1)
    if n < 2:
        return 0.0
    local = g.per_node if g.nodes > 1 else n
    remote = nbytes * (n - local) / n
    intra = nbytes * (local - 1) / n
    t_net = remote / (g.net_GBps * 1e9) if remote > 0 and g.net_GBps > 0 else 0.0
    t_in = intra / (g.intra_GBps * 1e9) if intra > 0 else 0.0
    lat = (coll.NET_LAT_US[("ring", "simple")] if g.nodes > 1 else g.intra_lat[("ring", "simple")]) * 1e-6
    return max(t_net, t_in) + lat


def timing(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]
            ) -> tuple[list[CollectiveResult], dict[str, float], float, float]:
    """Collectives and the iteration before the resources stage (module docstring): the
    collectives, the breakdown, the iteration time and the compute time DP hides behind.

    Overlap (Megatron-Core / NeMo settings of the workload):
    - ``tp_comm_overlap`` (Transformer Engine userbuffers): each TP collective is cut into tp
      chunks pipelined with the GEMM that produces or consumes it; one chunk stays exposed, and
      whatever exceeds the layers' linear-GEMM time (Wang et al., "Overlap Communication with
      Dependent Computation via Decomposition in Large Deep Learning Models", ASPLOS 2023).
    - ``pp_overlap`` (``overlap_p2p_comm`` of the interleaved schedule): a stage's send/receive
      runs during the next micro-batch's compute; exposed only beyond that compute.
    - DP: without ``dp_overlap`` the gradient collective overlaps the backward of the last
      micro-batch only (gradients complete at its end); with it (``overlap_grad_reduce`` /
      ``overlap_param_gather``) each bucket is reduced as soon as it is ready, through the last
      backward and the pipeline's cool-down (half the bubble), and the parameter all-gather runs
      during the next warm-up (the other half) and forward, so the exposed part is what exceeds
      those windows, and at least the last bucket (``BUCKET_PARAMS``).
    - ZeRO-2/3, FSDP (``zero_stage`` >= 2): the gradient reduce-scatter runs after every
      micro-batch's backward (only the gradient shard is kept), hidden behind that backward; the
      weights (stage 3) are all-gathered before every forward and backward.
    - CP (ring attention, Liu et al. 2023, arXiv 2310.01889; Megatron-Core/TE context parallel):
      per layer the K and V of the rank's s/cp tokens pass cp − 1 times round the ring forward,
      K, V and their gradients backward, overlapped with the attention blocks they feed.
    - EP: per MoE layer and micro-batch an all-to-all dispatches each token's hidden state to its
      top_k experts and one combines the results, forward and backward (and again when
      recomputed); exposed unless ``pp_overlap`` with DualPipe-style scheduling hides it
      (``ep_overlap`` of the volumes).
    """
    colls: list[CollectiveResult] = []
    m = w.micro_batches
    tp_mb = 0.0
    if w.tp > 1 and vol.tp_calls_per_micro_batch:
        c = collective("tp_allreduce", "allreduce", vol.tp_bytes, vol.tp_calls_per_micro_batch * m,
                        shapes["tp"])
        colls.append(c)
        tp_mb = c.time_s * vol.tp_calls_per_micro_batch
        if w.tp_comm_overlap:
            linear = getattr(ct, "linear_s", 0.0) + getattr(ct, "expert_s", 0.0)
            tp_mb = max(tp_mb / w.tp, tp_mb - linear)
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
        if w.pp_overlap:
            pp_mb = max(0.0, pp_mb - ct.micro_batch_s)
    cp_mb = 0.0
    if w.cp > 1 and vol.cp_bytes > 0:
        g = derived_shape(shapes, "cp", w.cp)
        c = collective("cp_sendrecv", "sendrecv", vol.cp_bytes, vol.cp_sends_per_micro_batch * m,
                       coll.GroupShape(ranks=2, nodes=min(2, g.nodes), nvlink_GBps=g.nvlink_GBps,
                                       pcie_gen=g.pcie_gen, net_GBps=g.net_GBps,
                                       net_line_GBps=g.net_line_GBps))
        colls.append(c)
        cp_mb = max(0.0, c.time_s * vol.cp_sends_per_micro_batch - getattr(ct, "attention_s", 0.0))
    ep_mb = 0.0
    if w.ep > 1 and vol.ep_bytes > 0:
        g = derived_shape(shapes, "ep", w.ep)
        if "ep" in shapes and g.nodes > 1:
            # measured on the all-to-all flows (``traffic.alltoall_flows``): a rail carries one flow
            # to each other server of the group, the network stage reports the slowest flow
            g = replace(g, net_GBps=g.net_GBps * (g.nodes - 1))
        t = alltoall_s(vol.ep_bytes, g)
        colls.append(CollectiveResult("ep_alltoall", "alltoall", "pairwise", "simple", vol.ep_bytes,
                                      vol.ep_calls_per_micro_batch * m, t,
                                      vol.ep_bytes / t / 1e9 if t > 0 else 0.0,
                                      vol.ep_bytes * (g.ranks - 1) / g.ranks / t / 1e9 if t > 0 else 0.0,
                                      g.ranks, g.nodes))
        ep_mb = t * vol.ep_calls_per_micro_batch
        if vol.ep_overlap:
            ep_mb = max(0.0, ep_mb - ct.micro_batch_s)
    t_mb = ct.micro_batch_s + tp_mb + pp_mb + cp_mb + ep_mb
    bubble = bubble_s(w, t_mb)
    dp_time, dp_calls = 0.0, []
    if w.dp_ranks > 1 and vol.dp_bytes > 0:
        ops = (("dp_reduce_scatter", "reduce_scatter"), ("dp_allgather", "allgather")) \
            if vol.dp_sharded else (("dp_allreduce", "allreduce"),)
        for name, op in ops:
            c = collective(name, op, vol.dp_bytes, 1, shapes["dp"])
            colls.append(c)
            dp_calls.append(c)
            dp_time += c.time_s
    backward = ct.backward_fraction * ct.micro_batch_s
    if w.dp_overlap and dp_calls:
        # the reduction runs through the last micro-batch's backward and the pipeline's
        # cool-down (half the bubble: this rank waits on its neighbours, its network is idle);
        # the parameter all-gather through the next iteration's warm-up and first forward
        forward = ct.micro_batch_s - backward
        windows = (backward + bubble / 2, forward + bubble / 2) if len(dp_calls) == 2 \
            else (backward + forward + bubble,)
        bucket = max(BUCKET_PARAMS, BUCKET_PARAMS_PER_DP_RANK * w.dp_ranks) * w.bytes_per_value
        dp_exposed = 0.0
        for c, window in zip(dp_calls, windows):
            last = c.time_s * min(1.0, bucket / vol.dp_bytes)
            dp_exposed += max(last, c.time_s - window)
        overlap = backward
    else:
        # the gradient collective overlaps the last micro-batch's backward (PyTorch DDP's bucket
        # hooks reduce gradients as they complete); Megatron's local DDP of the 2021 runs and
        # Megatron-Core without overlap_grad_reduce reduce after the backward instead, which
        # would expose it in full: kept as before, since the DPU/host-offload results of the
        # resources stage are built on this window (see the H2c report)
        overlap = backward
        dp_exposed = max(0.0, dp_time - overlap)
    if w.zero >= 2 and m > 1 and dp_calls and vol.dp_sharded:
        # ZeRO-2/3 and FSDP keep only the gradient shard, so each micro-batch's gradients are
        # reduce-scattered after its backward (PyTorch FSDP2's default way of accumulating,
        # pytorch/pytorch PR 126166: "reduce-scatter per microbatch backward", the other way,
        # set_requires_gradient_sync(False), keeps unsharded gradients, which the memory model
        # of zero_stage >= 2 does not hold); each overlaps its own micro-batch's backward and is
        # exposed beyond it, the last as above
        rs = dp_calls[0]
        i = colls.index(rs)
        colls[i] = replace(rs, calls_per_iteration=m)
        dp_exposed += (m - 1) * max(0.0, rs.time_s - backward)
    zero3 = 0.0
    if vol.zero3_bytes > 0 and w.dp_ranks > 1:
        # ZeRO-3 / FSDP: the weights are all-gathered before each forward and backward of every
        # micro-batch, prefetched during the previous layer's compute (exposed beyond it)
        c = collective("dp_param_allgather", "allgather", vol.zero3_bytes, 2 * m, shapes["dp"])
        colls.append(c)
        zero3 = m * max(0.0, 2 * c.time_s - ct.micro_batch_s)
    iteration = m * t_mb + bubble + dp_exposed + zero3
    parts = {"compute": m * ct.micro_batch_s, "tp_comm": m * tp_mb, "pp_comm": m * pp_mb,
             "cp_comm": m * cp_mb, "ep_comm": m * ep_mb, "dp_exposed": dp_exposed + zero3,
             "bubble": bubble}
    # the CP/EP parts are named where the result lists them (``BREAKDOWN_KEYS``), else only when
    # the job has them
    breakdown = {k: v for k, v in parts.items()
                 if k not in ("cp_comm", "ep_comm") or k in BREAKDOWN_KEYS
                 or (k == "cp_comm" and w.cp > 1) or (k == "ep_comm" and w.ep > 1)}
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
