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
Pipeline neighbours on different servers exchange in both directions. Storage reads go from the
storage systems (round robin) to each server's adapters, with a demand cap.
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
    """Flows of one phase: endpoint node ids, a demand (GB/s, inf = elastic), and the group
    each flow belongs to (-1 for storage)."""

    src: list[str]
    dst: list[str]
    demand: np.ndarray
    group: np.ndarray
    kind: list[str]

    def extend(self, other: "FlowSet") -> "FlowSet":
        return FlowSet(self.src + other.src, self.dst + other.dst,
                       np.concatenate([self.demand, other.demand]),
                       np.concatenate([self.group, other.group]), self.kind + other.kind)


def empty() -> FlowSet:
    return FlowSet([], [], np.zeros(0), np.zeros(0, dtype=np.int64), [])


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
        if n == 2:  # two servers: one pair per rail, both directions unless it is one endpoint
            keep = ~((np.tile(np.arange(n), width) == 1) & (a == b))
            a, b = a[keep], b[keep]
        src += a.tolist()
        dst += b.tolist()
        grp += [gi] * len(a)
    n = len(src)
    return FlowSet(src, dst, np.full(n, np.inf), np.array(grp, dtype=np.int64), [dim] * n)


def pipeline_flows(pl: Placement) -> FlowSet:
    """Stage i ↔ stage i+1 of every pipeline, where they sit on different servers."""
    src, dst, grp = [], [], []
    for gi, ranks in enumerate(pl.groups["pp"]):
        eps = pl.endpoint(ranks)
        for i in range(len(ranks) - 1):
            if pl.server[ranks[i]] == pl.server[ranks[i + 1]]:
                continue
            src += [eps[i], eps[i + 1]]
            dst += [eps[i + 1], eps[i]]
            grp += [gi, gi]
    n = len(src)
    return FlowSet(src, dst, np.full(n, np.inf), np.array(grp, dtype=np.int64), ["pp"] * n)


def storage_flows(pl: Placement, storage_ids: list[str], per_server_GBps: float) -> FlowSet:
    """Each used server reads ``per_server_GBps`` spread over its adapters, from the storage
    systems in round robin (server k from storage k mod count)."""
    if per_server_GBps <= 0 or not storage_ids:
        return empty()
    src, dst, dem = [], [], []
    for k, s in enumerate(np.unique(pl.server)):
        eps = pl.servers[int(s)].endpoints
        for e in eps:
            src.append(storage_ids[k % len(storage_ids)])
            dst.append(e)
            dem.append(per_server_GBps / len(eps))
    n = len(src)
    return FlowSet(src, dst, np.array(dem), np.full(n, -1, dtype=np.int64), ["storage"] * n)
