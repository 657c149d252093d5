"""Timing stage: the collectives of one iteration and the iteration before the resources stage.

Iteration model (Narayanan et al. SC'21 §2.2 and §3): with m micro-batches per pipeline,
    t_iteration = m·t_mb + bubble + exposed DP communication + CPU optimizer step (offloaded)
    t_mb        = compute (GEMM + memory-bound + exposed activation offload) + TP all-reduces
                  + PP send/receive
    bubble      = (p − 1)/v · t_mb
The DP gradient all-reduce overlaps the backward pass of the last micro-batch (gradient buckets
are reduced as they complete); only what is left over is exposed.

Each dimension is one function (``tp_dim``, ``pp_dim``, ``cp_dim``, ``ep_dim``, ``dp_dim``) that
returns its collectives, their total time and the part no compute hides; :func:`timing_of` keeps
them apart (``Timing.dims``, ``Timing.hidden_s``), :func:`timing` is the tuple the pipeline uses.
Every overlap has its switch in the workload (``tp_comm_overlap``, ``pp_overlap``, ``dp_overlap``,
``ep_overlap``); off, the dimension's time is exposed in full.

Input: the workload, its compute times (``workload.compute``), its traffic volumes
(``traffic.Volumes``) and the communicator shapes the network stage measured. Pure: no
topology, no numpy state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
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
#: streaming multiprocessors an expert-parallel dispatch/combine occupies while it runs beside
#: compute (``ep_overlap``): 20, DeepSeek-V3 technical report §3.2.2 ("only 20 SMs are
#: sufficient to fully utilize the bandwidths of IB and NVLink") and Megatron-Core's historical
#: DeepEP default (transformer_config.py ``moe_deepep_num_sms``: "historical default 20");
#: ASSUMED the same for NCCL's all-to-all (one SM per channel)
EP_COMM_SMS = 20


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


def _pair(g: coll.GroupShape) -> coll.GroupShape:
    """The two-rank communicator of a point-to-point exchange between two members of ``g``."""
    return coll.GroupShape(ranks=2, nodes=min(2, g.nodes), nvlink_GBps=g.nvlink_GBps,
                           pcie_gen=g.pcie_gen, net_GBps=g.net_GBps, net_line_GBps=g.net_line_GBps)


@dataclass(frozen=True)
class Dim:
    """One parallel dimension's communication per micro-batch (the DP entry: per iteration): its
    collectives, the time they take and the part of it no compute hides (``exposed_s``); the
    rest (``hidden_s``) runs under compute by the overlap the workload turns on."""

    collectives: tuple[CollectiveResult, ...] = ()
    total_s: float = 0.0
    exposed_s: float = 0.0

    @property
    def hidden_s(self) -> float:
        return max(0.0, self.total_s - self.exposed_s)


def tp_dim(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]) -> Dim:
    """TP all-reduces of one micro-batch. ``tp_comm_overlap`` (Transformer Engine userbuffers):
    each TP collective is cut into tp chunks pipelined with the GEMM that produces or consumes it;
    one chunk stays exposed, and whatever exceeds the layers' linear-GEMM time (Wang et al.,
    "Overlap Communication with Dependent Computation via Decomposition in Large Deep Learning
    Models", ASPLOS 2023)."""
    if w.tp <= 1 or not vol.tp_calls_per_micro_batch:
        return Dim()
    m = w.micro_batches
    c = collective("tp_allreduce", "allreduce", vol.tp_bytes, vol.tp_calls_per_micro_batch * m, shapes["tp"])
    total = c.time_s * vol.tp_calls_per_micro_batch
    exposed = total
    if w.tp_comm_overlap:
        linear = getattr(ct, "linear_s", 0.0) + getattr(ct, "expert_s", 0.0)
        exposed = max(total / w.tp, total - linear)
    return Dim((c,), total, exposed)


def pp_dim(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]) -> Dim:
    """Pipeline sends/receives of one micro-batch, with the scatter/gather optimisation (SC'21
    §4.1: each TP rank sends 1/t across servers, then the stage all-gathers over NVLink).
    ``pp_overlap`` (``overlap_p2p_comm`` of the interleaved schedule): a stage's send/receive runs
    during the next micro-batch's compute; exposed only beyond that compute."""
    if w.pp <= 1:
        return Dim()
    m = w.micro_batches
    pair = _pair(shapes["pp"])
    sends = 2 * vol.pp_sends_per_micro_batch
    split = w.tp if pair.nodes > 1 and shapes["tp"].nodes == 1 else 1
    c = collective("pp_sendrecv", "sendrecv", vol.pp_bytes / split, sends * m, pair)
    out = [c]
    total = c.time_s * sends
    if split > 1:
        g = collective("pp_allgather", "allgather", vol.pp_bytes, sends * m, shapes["tp"])
        out.append(g)
        total += g.time_s * sends
    exposed = max(0.0, total - ct.micro_batch_s) if w.pp_overlap else total
    return Dim(tuple(out), total, exposed)


def cp_dim(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]) -> Dim:
    """CP ring attention (Liu et al. 2023, arXiv 2310.01889; Megatron-Core/TE context parallel):
    per layer the K and V of the rank's s/cp tokens pass cp − 1 times round the ring forward,
    K, V and their gradients backward, overlapped with the attention blocks they feed."""
    if w.cp <= 1 or vol.cp_bytes <= 0:
        return Dim()
    g = derived_shape(shapes, "cp", w.cp)
    c = collective("cp_sendrecv", "sendrecv", vol.cp_bytes, vol.cp_sends_per_micro_batch * w.micro_batches,
                   _pair(g))
    total = c.time_s * vol.cp_sends_per_micro_batch
    return Dim((c,), total, max(0.0, total - getattr(ct, "attention_s", 0.0)))


def ep_dim(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]) -> Dim:
    """EP: per MoE layer and micro-batch an all-to-all (``collectives._pairwise``) dispatches each
    token's hidden state to its top_k experts and one combines the results, forward and backward
    (and again when recomputed); exposed unless ``ep_overlap`` (DualPipe-style scheduling) hides
    it behind another micro-batch's compute."""
    if w.ep <= 1 or vol.ep_bytes <= 0:
        return Dim()
    g = derived_shape(shapes, "ep", w.ep)
    if "ep" in shapes and g.nodes > 1:
        # measured on the all-to-all flows (``traffic.alltoall_flows``): a rail carries one flow
        # to each other server of the group, the network stage reports the slowest flow
        g = replace(g, net_GBps=g.net_GBps * (g.nodes - 1))
    calls = vol.ep_calls_per_micro_batch * w.micro_batches
    if w.moe_dispatcher == "flex" and (g.nodes > 1 or coll.hybridep_GBps(g) > 0):
        # one copy per token and other server over the network (``traffic.remote_nodes_per_token``);
        # on NVLink 5 the NVLink part at HybridEP's measured rate, one copy per token and
        # destination rank (``coll.hybridep_GBps``, ``traffic.ranks_per_token``)
        remote = vol.ep_bytes / w.top_k * tr.remote_nodes_per_token(w.experts, w.top_k, g.nodes)
        received = vol.ep_bytes / w.top_k * tr.ranks_per_token(w.experts, w.top_k, g.ranks)
        t = coll.dispatch_s(vol.ep_bytes, remote, g, received)
        c = CollectiveResult("ep_alltoall", "alltoall", "flex", "simple", vol.ep_bytes, calls, t,
                             vol.ep_bytes / t / 1e9, vol.ep_bytes / t / 1e9 * (g.ranks - 1) / g.ranks,
                             g.ranks, g.nodes)
    else:
        c = collective("ep_alltoall", "alltoall", vol.ep_bytes, calls, g)
    total = c.time_s * vol.ep_calls_per_micro_batch
    exposed = total
    if vol.ep_overlap:
        exposed = max(0.0, total - ct.micro_batch_s)
        sms = int(getattr(ct, "sms", 0) or 0)
        if sms > EP_COMM_SMS:
            # the hidden dispatches run on EP_COMM_SMS of the GPU's SMs, so the compute they
            # hide behind runs on the rest for that long: (total − exposed)·s/(S − s) more
            exposed += (total - exposed) * EP_COMM_SMS / (sms - EP_COMM_SMS)
    return Dim((c,), total, exposed)


def dp_dim(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape], bubble: float) -> Dim:
    """DP gradient collectives of one iteration and their exposed part.

    Without ``dp_overlap`` the gradient collective overlaps the backward of the last micro-batch
    only (gradients complete at its end); with it (``overlap_grad_reduce`` /
    ``overlap_param_gather``) each bucket is reduced as soon as it is ready, through the last
    backward and the pipeline's cool-down (half the bubble), and the parameter all-gather runs
    during the next warm-up (the other half) and forward, so the exposed part is what exceeds
    those windows, and at least the last bucket (``BUCKET_PARAMS``). ZeRO-2/3, FSDP
    (``zero_stage`` >= 2): the gradient reduce-scatter runs after every micro-batch's backward,
    hidden behind that backward; the weights (stage 3) are all-gathered before every forward and
    backward."""
    if w.dp_ranks <= 1 or vol.dp_bytes <= 0:
        return _zero3(w, ct, vol, shapes, Dim())
    m = w.micro_batches
    ops = (("dp_reduce_scatter", "reduce_scatter"), ("dp_allgather", "allgather")) \
        if vol.dp_sharded else (("dp_allreduce", "allreduce"),)
    calls = [collective(name, op, vol.dp_bytes, 1, shapes["dp"]) for name, op in ops]
    total = sum(c.time_s for c in calls)
    backward = ct.backward_fraction * ct.micro_batch_s
    if w.dp_overlap:
        # the reduction runs through the last micro-batch's backward and the pipeline's
        # cool-down (half the bubble: this rank waits on its neighbours, its network is idle);
        # the parameter all-gather through the next iteration's warm-up and first forward
        forward = ct.micro_batch_s - backward
        windows = (backward + bubble / 2, forward + bubble / 2) if len(calls) == 2 \
            else (backward + forward + bubble,)
        bucket = max(BUCKET_PARAMS, BUCKET_PARAMS_PER_DP_RANK * w.dp_ranks) * w.bytes_per_value
        exposed = sum(max(c.time_s * min(1.0, bucket / vol.dp_bytes), c.time_s - window)
                      for c, window in zip(calls, windows))
    else:
        # the gradient collective overlaps the last micro-batch's backward (PyTorch DDP's bucket
        # hooks reduce gradients as they complete); Megatron's local DDP of the 2021 runs and
        # Megatron-Core without overlap_grad_reduce reduce after the backward instead, which
        # would expose it in full: kept as before, since the DPU/host-offload results of the
        # resources stage are built on this window (see the H2c report)
        exposed = max(0.0, total - backward)
    if w.zero >= 2 and m > 1 and vol.dp_sharded:
        # ZeRO-2/3 and FSDP keep only the gradient shard, so each micro-batch's gradients are
        # reduce-scattered after its backward (PyTorch FSDP2's default way of accumulating,
        # pytorch/pytorch PR 126166: "reduce-scatter per microbatch backward", the other way,
        # set_requires_gradient_sync(False), keeps unsharded gradients, which the memory model
        # of zero_stage >= 2 does not hold); each overlaps its own micro-batch's backward and is
        # exposed beyond it, the last as above
        rs = calls[0]
        calls[0] = replace(rs, calls_per_iteration=m)
        exposed += (m - 1) * max(0.0, rs.time_s - backward)
        total += (m - 1) * rs.time_s
    return _zero3(w, ct, vol, shapes, Dim(tuple(calls), total, exposed))


def _zero3(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape], d: Dim) -> Dim:
    """ZeRO-3 / FSDP: the weights are all-gathered before each forward and backward of every
    micro-batch, prefetched during the previous layer's compute (exposed beyond it)."""
    if vol.zero3_bytes <= 0 or w.dp_ranks <= 1:
        return d
    m = w.micro_batches
    c = collective("dp_param_allgather", "allgather", vol.zero3_bytes, 2 * m, shapes["dp"])
    return Dim(d.collectives + (c,), d.total_s + m * 2 * c.time_s,
               d.exposed_s + m * max(0.0, 2 * c.time_s - ct.micro_batch_s))


@dataclass(frozen=True)
class Timing:
    """The timing stage's result: each dimension's communication (``dims``: tp, pp, cp, ep per
    micro-batch, dp per iteration), the breakdown, the iteration before the resources stage and
    the compute time DP hides behind (the backward of a micro-batch)."""

    dims: dict[str, Dim]
    breakdown: dict[str, float]
    iteration_s: float
    overlap_s: float

    @property
    def collectives(self) -> list[CollectiveResult]:
        return [c for d in self.dims.values() for c in d.collectives]

    def hidden_s(self, w: Workload) -> dict[str, float]:
        """Communication time per iteration that overlap hides, per dimension (the exposed part
        is the breakdown's ``<dim>_comm`` / ``dp_exposed``)."""
        m = w.micro_batches
        return {k: d.hidden_s * (1 if k == "dp" else m) for k, d in self.dims.items()}


def timing_of(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]) -> Timing:
    """Iteration model of the module docstring, one dimension at a time (``tp_dim`` ... ``dp_dim``
    say how each overlaps)."""
    m = w.micro_batches
    dims = {"tp": tp_dim(w, ct, vol, shapes), "pp": pp_dim(w, ct, vol, shapes),
            "cp": cp_dim(w, ct, vol, shapes), "ep": ep_dim(w, ct, vol, shapes)}
    t_mb = ct.micro_batch_s + sum(d.exposed_s for d in dims.values())
    bubble = bubble_s(w, t_mb)
    dims["dp"] = dp_dim(w, ct, vol, shapes, bubble)
    iteration = m * t_mb + bubble + dims["dp"].exposed_s + ct.optimizer_offload_s
    # activation offload's exposed copies are in the micro-batch (the GPU waits for them there)
    # but are their own part; the CPU optimizer step is once per iteration, after the backward
    parts = {"compute": m * (ct.micro_batch_s - ct.offload_s), "tp_comm": m * dims["tp"].exposed_s,
             "pp_comm": m * dims["pp"].exposed_s, "cp_comm": m * dims["cp"].exposed_s,
             "ep_comm": m * dims["ep"].exposed_s, "dp_exposed": dims["dp"].exposed_s, "bubble": bubble,
             "activation_offload": m * ct.offload_s, "optimizer_offload": ct.optimizer_offload_s}
    # the CP/EP parts are named where the result lists them (``BREAKDOWN_KEYS``), else only when
    # the job has them
    breakdown = {k: v for k, v in parts.items()
                 if k not in ("cp_comm", "ep_comm") or k in BREAKDOWN_KEYS
                 or (k == "cp_comm" and w.cp > 1) or (k == "ep_comm" and w.ep > 1)}
    return Timing(dims, breakdown, iteration, ct.backward_fraction * ct.micro_batch_s)


def timing(w: Workload, ct, vol: tr.Volumes, shapes: dict[str, coll.GroupShape]
           ) -> tuple[list[CollectiveResult], dict[str, float], float, float]:
    """:func:`timing_of` as (collectives, breakdown, iteration time, DP overlap window)."""
    t = timing_of(w, ct, vol, shapes)
    return t.collectives, t.breakdown, t.iteration_s, t.overlap_s


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
