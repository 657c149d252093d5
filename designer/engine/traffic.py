"""Traffic stage: what each iteration sends, and the network flows of each communication phase.

Per iteration and per GPU (Narayanan et al. SC'21 §3.3 and §4.1; Shoeybi et al. 2019 §3):
- TP: per layer and micro-batch, 2 all-reduces forward and 2 backward of b·s·h activations
  (one after attention, one after the MLP; their conjugates in backward), plus 2 more when the
  forward pass is recomputed. The MLP's inner width (4h, or a SwiGLU ffn_hidden) and grouped K/V
  heads stay inside a TP rank (column- then row-parallel split), so only h-wide activations
  cross; counted for the busiest GPU's layers (``Workload.stage_layers``).
- PP: per micro-batch and stage boundary, the activations b·s·h forward and their gradient back
  (× v model chunks with the interleaved schedule).
- DP: one all-reduce of the gradients of the GPU's share of the parameters, P/(tp·pp) values per
  iteration, or a reduce-scatter plus an all-gather of the same size with a sharded optimizer.

Flows: a collective across servers is a ring on each rail (NCCL runs one channel per NIC): the GPU
at local position j of server k sends to the one at position j of the next server of the group.
Pipeline neighbours on different servers exchange in both directions. A sender whose NIC shares no
network with the receiver's (rail planes joined only inside the servers) sends through its server's
NIC on the receiver's network, reached over NVLink (:func:`_pxn`). Storage reads go from the
storage systems (round robin) to each server's storage ports, with a demand cap. Every flow names
its job (``Placement.job``), so one job's flows can be solved without the others'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from designer.engine.placement import Placement
from designer.engine.workload import Workload, parameters


@dataclass(frozen=True)
class Volumes:
    """Bytes per collective call and calls per iteration (per GPU)."""

    tp_bytes: float
    tp_calls_per_micro_batch: int
    pp_bytes: float
    pp_sends_per_micro_batch: int  #: per direction
    dp_bytes: float
    dp_sharded: bool


def volumes(w: Workload) -> Volumes:
    bpv = w.bytes_per_value
    if w.kind == "vision":
        return Volumes(0.0, 0, 0.0, 0, parameters(w) * bpv, w.optimizer_sharded)
    act = w.micro_batch * w.seq_len * w.hidden * bpv
    per_layer = 6 if w.recompute else 4
    tp_calls = per_layer * w.stage_layers if w.tp > 1 else 0
    return Volumes(act, tp_calls, act, w.interleave if w.pp > 1 else 0,
                   parameters(w) / (w.tp * w.pp) * bpv, w.optimizer_sharded)


@dataclass
class FlowSet:
    """Flows of one phase: endpoint node ids, a demand (GB/s, inf = elastic), the group each
    flow belongs to (-1 for storage) and its job."""

    src: list[str]
    dst: list[str]
    demand: np.ndarray
    group: np.ndarray
    kind: list[str]
    job: np.ndarray

    def extend(self, other: "FlowSet") -> "FlowSet":
        return FlowSet(self.src + other.src, self.dst + other.dst,
                       np.concatenate([self.demand, other.demand]),
                       np.concatenate([self.group, other.group]), self.kind + other.kind,
                       np.concatenate([self.job, other.job]))


def empty() -> FlowSet:
    return FlowSet([], [], np.zeros(0), np.zeros(0, dtype=np.int64), [], np.zeros(0, dtype=np.int64))


def ring_flows(pl: Placement, dim: str) -> FlowSet:
    """One ring per rail across the servers of every group of ``dim`` (see module docstring)."""
    groups = pl.groups[dim]
    src, dst, grp = [], [], []
    for gi, ranks in enumerate(groups):
        srv = pl.server[ranks]
        servers, first = np.unique(srv, return_index=True)
        if len(servers) < 2:
            continue
        # ranks grouped by server (servers in order of first appearance, ranks in group order)
        appear = np.argsort(first, kind="stable")
        slot = np.empty(len(servers), dtype=np.int64)
        slot[appear] = np.arange(len(servers))
        k_of = slot[np.searchsorted(servers, srv)]
        by_server = ranks[np.argsort(k_of, kind="stable")]
        counts = np.bincount(k_of, minlength=len(servers))
        width = int(counts.min())
        starts = np.r_[0, np.cumsum(counts)[:-1]]
        mat = by_server[starts[:, None] + np.arange(width)[None, :]]  # servers x width
        eps = np.array(pl.endpoint(mat), dtype=object).reshape(mat.shape)
        n = len(servers)
        a = eps.T.ravel()  # rail j, server k: j-major
        b = np.roll(eps, -1, axis=0).T.ravel()
        sender = pl.server[mat].T.ravel()
        if n == 2:  # two servers: one pair per rail, both directions unless it is one endpoint
            keep = ~((np.tile(np.arange(n), width) == 1) & (a == b))
            a, b, sender = a[keep], b[keep], sender[keep]
        src += _pxn(pl, sender, a.tolist(), b.tolist())
        dst += b.tolist()
        grp += [gi] * len(a)
    n = len(src)
    grp = np.array(grp, dtype=np.int64)
    return FlowSet(src, dst, np.full(n, np.inf), grp, [dim] * n, pl.group_job(dim)[grp])


def pipeline_flows(pl: Placement) -> FlowSet:
    """Stage i ↔ stage i+1 of every pipeline, where they sit on different servers."""
    src, dst, grp = [], [], []
    for gi, ranks in enumerate(pl.groups["pp"]):
        eps = pl.endpoint(ranks)
        srv = pl.server[ranks]
        for i in range(len(ranks) - 1):
            if srv[i] == srv[i + 1]:
                continue
            src += _pxn(pl, srv[i:i + 2], [eps[i], eps[i + 1]], [eps[i + 1], eps[i]])
            dst += [eps[i + 1], eps[i]]
            grp += [gi, gi]
    n = len(src)
    grp = np.array(grp, dtype=np.int64)
    return FlowSet(src, dst, np.full(n, np.inf), grp, ["pp"] * n, pl.group_job("pp")[grp])


def _pxn(pl: Placement, sender: np.ndarray, src: list[str], dst: list[str]) -> list[str]:
    """Senders moved onto the receiver's network where their own NIC is not on it.

    NCCL's PXN (PCI x NVLink, NCCL 2.12+; ``NCCL_PXN_DISABLE`` turns it off) lets a GPU send
    through the NIC of another GPU of its server, reached over NVLink, so that the data crosses the
    network on the destination's rail. Rail-plane fabrics (``templates.rail_optimized`` beyond one
    spine layer) join their rails only this way. ``sender[i]`` is the server index of ``src[i]``;
    with no rail on the receiver's network the flow is left as it is (the network stage names it).
    """
    out = list(src)
    for i, (a, b) in enumerate(zip(src, dst)):
        target = pl.networks(b)
        if a is None or b is None or pl.networks(a) & target:
            continue
        rails = pl.servers[int(sender[i])].rails
        out[i] = next((e for e in rails if pl.networks(e) & target), a)
    return out


def storage_flows(pl: Placement, per_server_GBps: float) -> FlowSet:
    """Each used server reads ``per_server_GBps`` spread over its storage ports, from the storage
    systems it reaches in round robin (the k-th used server from its k mod count-th)."""
    if per_server_GBps <= 0:
        return empty()
    src, dst, dem, job = [], [], [], []
    used, first = np.unique(pl.server, return_index=True)
    for k, (s, j) in enumerate(zip(used, pl.job[first])):
        info = pl.servers[int(s)]
        for e in info.storage_ports:
            src.append(info.storage_targets[k % len(info.storage_targets)])
            dst.append(e)
            dem.append(per_server_GBps / len(info.storage_ports))
            job.append(j)
    n = len(src)
    return FlowSet(src, dst, np.array(dem), np.full(n, -1, dtype=np.int64), ["storage"] * n,
                   np.array(job, dtype=np.int64))
