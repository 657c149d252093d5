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

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Iterator, overload

import numpy as np

from designer.engine.network import sorted_unique, unique_below
from designer.engine.placement import Placement, RailTable
from designer.engine.workload import Workload, expert_parameters, parameters


@dataclass(frozen=True)
class Volumes:
    """Bytes per collective call and calls per iteration (per GPU)."""

    tp_bytes: float
    tp_calls_per_micro_batch: int
    pp_bytes: float
    pp_sends_per_micro_batch: int  #: per direction
    dp_bytes: float
    dp_sharded: bool
    cp_bytes: float = 0.0  #: one ring step of K and V (or their gradients) of a rank's tokens
    cp_sends_per_micro_batch: int = 0
    ep_bytes: float = 0.0  #: one all-to-all: a GPU's routed token copies (dispatch or combine)
    ep_calls_per_micro_batch: int = 0
    ep_overlap: bool = False
    zero3_bytes: float = 0.0  #: ZeRO-3/FSDP: a GPU's weights, all-gathered per forward and backward


def volumes(w: Workload) -> Volumes:
    """Per GPU (see the module docstring), plus:
    - CP (ring attention): per layer 3·(cp − 1) ring steps (K, V forward; K, V and their
      gradients backward; 4·(cp − 1) when recomputed) of the rank's s/cp tokens' keys and values,
      (s/cp)·b·w_kv/tp values, w_kv = 2h·kv/a (or a·(d_qk + d_v) with latent attention).
    - EP: per MoE layer 2 all-to-alls (dispatch, combine) forward and 2 backward (and 2 more when
      recomputed), each moving the GPU's b·s/(cp·tp) tokens × top_k copies of h values (Lepikhin
      et al., GShard, arXiv 2006.16668, §2.2; DeepSeek-V3 report §3.2.2).
    - DP with experts: the GPU's dense weights P_d/(tp·pp) plus its experts' P_e/(tp·pp·ep).
    - ZeRO-3 / FSDP (``zero_stage`` 3): the GPU's weights all-gathered before each forward and
      backward (Rajbhandari et al. 2020, §5.3: 1.5× the data-parallel volume).
    """
    bpv = w.bytes_per_value
    sharded = w.zero >= 1
    if w.kind == "vision":
        return Volumes(0.0, 0, 0.0, 0, parameters(w) * bpv, sharded)
    tokens = w.micro_batch * w.seq_len / w.cp
    act = tokens * w.hidden * bpv
    # a re-run forward repeats its two collectives: full recomputation, and torchtitan's per-op
    # policy, which keeps the reduce-scatters' outputs but not the all-gathers' (op_policy_matrices)
    per_layer = 6 if w.recompute and w.recompute_granularity in ("full", "op") else 4
    tp_calls = per_layer * w.stage_layers if w.tp > 1 else 0
    P = parameters(w)
    expert_params = expert_parameters(w)
    dp_bytes = ((P - expert_params) / (w.tp * w.pp) + expert_params / (w.tp * w.pp * w.ep)) * bpv
    cp_bytes, cp_sends = 0.0, 0
    if w.cp > 1:
        if w.kv_lora_rank:
            dqk = (w.qk_head_dim or w.hidden // w.heads) + w.rope_head_dim
            kv_width: float = w.heads * (dqk + (w.v_head_dim or w.qk_head_dim or w.hidden // w.heads))
        else:
            kv_width = 2.0 * (w.kv_heads or w.heads) * w.head_width if w.head_dim \
                else 2.0 * w.hidden * (w.kv_heads or w.heads) / w.heads
        cp_bytes = tokens * kv_width / w.tp * bpv
        cp_sends = (4 if w.recompute else 3) * (w.cp - 1) * w.stage_layers
    ep_bytes, ep_calls = 0.0, 0
    if w.moe and w.ep > 1:
        ep_bytes = tokens / w.tp * w.top_k * w.hidden * bpv
        moe_on_stage = round(w.stage_layers * w.moe_layers / w.layers)
        # dispatch and combine forward, backward, and forward again when the MoE layer is recomputed
        # (full recomputation, or Megatron-Core's selective "moe" module)
        ep_calls = 2 * (3 if w.recomputes("moe") else 2) * moe_on_stage
    zero3 = dp_bytes if w.zero >= 3 else 0.0
    return Volumes(act, tp_calls, act, w.interleave if w.pp > 1 else 0, dp_bytes, sharded,
                   cp_bytes, cp_sends, ep_bytes, ep_calls, w.ep_overlap, zero3)


class Endpoints(Sequence[Any]):
    """The ends of a phase's flows, as a sequence of endpoint ids held as rows of name tables:
    item i is ``table[rows[i]]`` of its segment (a :class:`~designer.engine.placement.RailTable`'s
    ``names`` and the rows the traffic rules computed). A 131k-GPU run has ~260k flows a phase:
    the ids are not written out as a list per phase, and the network stage maps each table to its
    node indices once (``network.Fabric.node_indices`` reads :meth:`segments`) instead of looking
    up every flow's id. It reads as the list of ids it stands for (indexing, iterating, ``len``,
    ``==`` with a list, ``+`` with a list or another Endpoints)."""

    __slots__ = ("_parts", "_n")

    def __init__(self, table: Any, rows: Any = None) -> None:
        """``Endpoints(names)``: the ids of a list; ``Endpoints(table, rows)``: ``table[rows]``."""
        if rows is None:
            names = list(table)
            table = np.empty(len(names), dtype=object)
            table[:] = names
            rows = np.arange(len(names), dtype=np.int64)
        self._parts: list[tuple[np.ndarray, np.ndarray]] = [(table, np.asarray(rows, dtype=np.int64))]
        self._n = len(self._parts[0][1])

    @classmethod
    def _joined(cls, parts: list[tuple[np.ndarray, np.ndarray]]) -> "Endpoints":
        out = cls.__new__(cls)
        out._parts = [p for p in parts if len(p[1])] or parts[:1]
        out._n = sum(len(r) for _, r in parts)
        return out

    def segments(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(table, rows)`` pairs: the ids are ``table[rows]`` of each, in order."""
        return self._parts

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self.tolist()[i]
        i = range(self._n)[i]  # IndexError out of range; a negative i counts from the end
        for table, rows in self._parts:
            if i < len(rows):
                return table[rows[i]]
            i -= len(rows)
        raise IndexError(i)  # not reached

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tolist())

    def tolist(self) -> list:
        return list(chain.from_iterable(table[rows].tolist() for table, rows in self._parts))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Endpoints, list, tuple)):
            return len(self) == len(other) and self.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Any) -> "Endpoints":
        if not isinstance(other, Endpoints):
            other = Endpoints(other)
        return Endpoints._joined(self._parts + other._parts)

    def __radd__(self, other: Any) -> "Endpoints":
        return Endpoints(other) + self

    def __repr__(self) -> str:
        return f"Endpoints({self.tolist()!r})" if self._n <= 8 else f"Endpoints({self._n} ids)"


@dataclass
class FlowSet:
    """Flows of one phase: endpoint node ids (a list, or :class:`Endpoints`), a demand (GB/s,
    inf = elastic), the group each flow belongs to (-1 for storage) and its job."""

    src: "list[str] | Endpoints"
    dst: "list[str] | Endpoints"
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
    """One ring per rail across the servers of every group of ``dim`` (see module docstring).

    In each group the servers are taken in order of their first rank, each server's ranks in group
    order, and as many rings run as the fewest ranks any of the group's servers holds (ring j: the
    j-th rank of every server, server k to server k + 1, the last back to the first). Flows come
    group by group, ring by ring, server by server; two servers exchange once per direction. Built
    for all groups at once with array operations (one ``np.unique`` of the (group, server) pairs
    instead of one per group), in the order a loop over the groups gives."""
    groups = pl.groups[dim]
    t = pl.rail_table()
    G, m = groups.shape
    if G == 0 or m < 2:
        return _flows(t, dim, pl, *(np.zeros(0, dtype=np.int64),) * 4)
    row = np.repeat(np.arange(G, dtype=np.int64), m)
    ranks = groups.ravel()
    # one entry per (group, server), in order of the server's first rank in the group
    _, first, inv, cnt = np.unique(row * len(pl.servers) + pl.server[ranks], return_index=True,
                                   return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")  # flat positions: group by group, then first rank
    slot = np.empty(len(order), dtype=np.int64)
    slot[order] = np.arange(len(order))
    e_row, e_cnt = row[first[order]], cnt[order]  # per entry (in slot order): group, ranks held
    by_server = ranks[np.argsort(slot[inv.ravel()], kind="stable")]  # ranks grouped by entry
    e_start = np.cumsum(e_cnt) - e_cnt  # entry -> its first rank in by_server
    n = np.bincount(e_row, minlength=G)  # servers per group
    g_first = np.cumsum(n) - n  # group -> its first entry
    width = np.minimum.reduceat(e_cnt, g_first)  # every group has an entry: starts are distinct
    size = np.where(n >= 2, n * width, 0)  # flows per group (before the two-server rule)
    gi = np.repeat(np.arange(G, dtype=np.int64), size)
    pos = np.arange(len(gi), dtype=np.int64) - np.repeat(np.cumsum(size) - size, size)
    ng = n[gi]
    j, k = pos // ng, pos % ng  # ring (rail) j, server k
    here = by_server[e_start[g_first[gi] + k] + j]
    there = by_server[e_start[g_first[gi] + (k + 1) % ng] + j]
    a, b = t.rank[here], t.rank[there]
    # two servers: one pair per rail, both directions unless it is one endpoint
    keep = ~((ng == 2) & (k == 1) & (a == b))
    return _flows(t, dim, pl, a[keep], b[keep], pl.server[here[keep]], gi[keep])


def pipeline_flows(pl: Placement) -> FlowSet:
    """Stage i ↔ stage i+1 of every pipeline, where they sit on different servers: for each such
    pair (pipeline by pipeline, stage by stage; ``np.nonzero`` of a row-major array keeps that
    order) the flow i → i+1, then i+1 → i."""
    g = pl.groups["pp"]
    t = pl.rail_table()
    if g.shape[0] == 0 or g.shape[1] < 2:
        return _flows(t, "pp", pl, *(np.zeros(0, dtype=np.int64),) * 4)
    srv = pl.server[g]
    gi, i = np.nonzero(srv[:, :-1] != srv[:, 1:])
    here, there = g[gi, i], g[gi, i + 1]
    src = np.stack([here, there], axis=1).ravel()  # per pair: (i -> i+1), (i+1 -> i)
    dst = np.stack([there, here], axis=1).ravel()
    return _flows(t, "pp", pl, t.rank[src], t.rank[dst], pl.server[src], np.repeat(gi, 2))


def _flows(t: RailTable, dim: str, pl: Placement, src: np.ndarray, dst: np.ndarray,
           sender: np.ndarray, grp: np.ndarray) -> FlowSet:
    """FlowSet of flows given as rail-table rows (``src`` moved by :func:`_pxn`)."""
    src = _pxn(t, sender, src, dst)
    n = len(src)
    grp = np.asarray(grp, dtype=np.int64)
    return FlowSet(Endpoints(t.names, src), Endpoints(t.names, dst), np.full(n, np.inf), grp,
                   [dim] * n, pl.group_job(dim)[grp])


def _pxn(t: RailTable, sender: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Senders moved onto the receiver's network where their own NIC is not on it.

    NCCL's PXN (PCI x NVLink, NCCL 2.12+; ``NCCL_PXN_DISABLE`` turns it off) lets a GPU send
    through the NIC of another GPU of its server, reached over NVLink, so that the data crosses the
    network on the destination's rail. Rail-plane fabrics (``templates.rail_optimized`` beyond one
    spine layer) join their rails only this way. ``sender[i]`` is the server index of ``src[i]``;
    the sender moves to the first of its server's rails on a network of the receiver; with none
    the flow is left as it is (the network stage names it). Flows are rows of ``t``; the question
    "do these two share a network" is asked once per pair of distinct network sets, and "which
    rail" once per (server, receiver's networks), not once per flow."""
    src = np.asarray(src, dtype=np.int64)
    if len(src) == 0:
        return src
    dst = np.asarray(dst, dtype=np.int64)
    ns = len(t.sets)
    na, nb = t.net[src], t.net[dst]
    pairs, inv = unique_below(na * ns + nb, ns * ns)
    shared = np.array([bool(t.sets[p // ns] & t.sets[p % ns]) for p in pairs.tolist()])
    move = ~shared[inv.ravel()] & (src != t.none) & (dst != t.none)
    if not move.any():
        return src
    out = src.copy()
    idx = np.flatnonzero(move)
    asks, where = np.unique(np.asarray(sender, dtype=np.int64)[idx] * ns + nb[idx], return_inverse=True)
    found = []
    for q in asks.tolist():
        s, target = divmod(q, ns)
        rows = range(int(t.first[s]), int(t.first[s] + t.count[s]))
        found.append(next((r for r in rows if t.sets[t.net[r]] & t.sets[target]), -1))
    rail = np.array(found, dtype=np.int64)[where.ravel()]
    out[idx] = np.where(rail >= 0, rail, src[idx])
    return out


def _jobs(pl: Placement) -> np.ndarray:
    """Each rank's job (a placement sets it when made; one job where it was not given)."""
    return pl.job if pl.job is not None else np.zeros(len(pl.server), dtype=np.int64)


def storage_flows(pl: Placement, per_server_GBps: float) -> FlowSet:
    """Each used server reads ``per_server_GBps`` spread over its storage ports, from the storage
    systems it reaches in round robin (the k-th used server from its k mod count-th)."""
    if per_server_GBps <= 0:
        return empty()
    src, dst, dem, job = [], [], [], []
    used, first = np.unique(pl.server, return_index=True)
    for k, (s, j) in enumerate(zip(used, _jobs(pl)[first])):
        info = pl.servers[int(s)]
        for e in info.storage_ports:
            src.append(info.storage_targets[k % len(info.storage_targets)])
            dst.append(e)
            dem.append(per_server_GBps / len(info.storage_ports))
            job.append(j)
    n = len(src)
    return FlowSet(src, dst, np.array(dem), np.full(n, -1, dtype=np.int64), ["storage"] * n,
                   np.array(job, dtype=np.int64))


def derived_groups(pl: Placement, w: Workload) -> dict[str, np.ndarray]:
    """Context- and expert-parallel groups as inner chunks of the data-parallel groups.

    With placement's "dp" dimension holding cp·dp ranks (Megatron's rank order tp-cp-ep-dp-pp:
    CP innermost of it), member j of a DP group has CP index j mod cp: CP groups are runs of cp
    consecutive members; EP groups are runs of ep members with the same CP index (the expert-
    parallel ranks are carved out of the pure data-parallel ones). Returns only the dimensions
    with more than one rank; each is a (groups, size) array of ranks like ``Placement.groups``.
    """
    out: dict[str, np.ndarray] = {}
    dp = pl.groups["dp"]
    if w.cp > 1 and dp.shape[1] == w.cp * w.dp:
        out["cp"] = dp.reshape(-1, w.cp)
    if w.ep > 1 and dp.shape[1] == w.cp * w.dp:
        by_cp = dp.reshape(dp.shape[0], w.dp, w.cp).transpose(0, 2, 1)  # (groups, cp, dp)
        out["ep"] = by_cp.reshape(-1, w.ep)
    return out


def alltoall_flows(pl: Placement, dim: str = "ep") -> FlowSet:
    """Network flows of an all-to-all in every group of ``dim`` (``Placement.groups[dim]``).

    NCCL's PXN (NCCL 2.12; "Doubling all2all Performance with NVIDIA Collective Communication
    Library 2.12", NVIDIA technical blog, 2022) first moves the data bound for a GPU of another
    server over NVLink to the local GPU on that GPU's rail, which then sends it rail to rail. So
    between two servers of a group the network carries one flow per rail the receiving ranks sit
    on: server A's rail r → server B's rail r, for every ordered pair of the group's servers (the
    pair's messages for that rail share it). Built with array operations over all groups at once
    (a 16,384-GPU job with EP 64 over 8-GPU servers: ~115k flows)."""
    groups = pl.groups[dim]
    if groups.shape[1] < 2:
        return empty()
    srv = pl.server[groups]  # (G, n)
    local = pl.local[groups]
    G, n = groups.shape
    a = np.repeat(srv, n, axis=1).ravel()  # sender server
    b = np.tile(srv, (1, n)).ravel()  # receiver server
    lb = np.tile(local, (1, n)).ravel()  # receiver's GPU index
    g = np.repeat(np.arange(G), n * n)
    keep = a != b
    if not keep.any():
        return empty()
    a, b, lb, g = a[keep], b[keep], lb[keep], g[keep]
    gpus = np.array([s.gpus for s in pl.servers], dtype=np.int64)
    nrails = np.array([len(s.rails) for s in pl.servers], dtype=np.int64)
    rail = lb * np.maximum(nrails[b], 1) // np.maximum(gpus[b], 1)
    # one flow per (group, sender server, receiver server, rail): a single int64 key to dedupe
    width = int(nrails.max(initial=1)) or 1
    ns = len(pl.servers)
    key = sorted_unique(((g * ns + a) * ns + b) * width + rail)
    rail, rest = key % width, key // width
    b, rest = rest % ns, rest // ns
    a, g = rest % ns, rest // ns
    # endpoint of (server, rail): a flat table, the sender's rail clamped to its own count
    first = np.r_[0, np.cumsum(nrails)[:-1]]
    table = np.array([e for sv in pl.servers for e in sv.rails] + [None], dtype=object)
    none = len(table) - 1
    src_i = np.where(nrails[a] > 0, first[a] + np.minimum(rail, nrails[a] - 1), none)
    dst_i = np.where(nrails[b] > 0, first[b] + np.minimum(rail, nrails[b] - 1), none)
    src, dst = Endpoints(table, src_i), Endpoints(table, dst_i)
    k = len(src)
    return FlowSet(src, dst, np.full(k, np.inf), g.astype(np.int64), [dim] * k, _jobs(pl)[groups[g, 0]])


def remote_nodes_per_token(experts: int, top_k: int, nodes: int) -> float:
    """Expected number of other servers a token's hidden state must reach when its top_k experts
    are drawn evenly from ``experts`` spread over ``nodes`` servers of the EP group (derived: a
    given server holds experts/nodes of them and is missed with probability
    C(E − E/N, k)/C(E, k); the benchmarks force balanced routing, Megatron-Bridge performance
    summary note "we force-balance the token distribution among experts"). A DeepEP/HybridEP
    dispatcher (``moe_dispatcher`` "flex") sends the token once to each such server and fans it
    out there over NVLink (DeepEP README: "kernels optimized for asymmetric-domain bandwidth
    forwarding, such as forwarding data from NVLink domain to RDMA domain"), so this many copies
    cross the network instead of the all-to-all's top_k·(N − 1)/N."""
    if nodes <= 1 or experts <= 0 or top_k <= 0:
        return 0.0
    per = experts / nodes
    missed = 1.0
    for i in range(top_k):
        missed *= max(0.0, experts - per - i) / (experts - i)
    return (nodes - 1) * (1.0 - missed)


def ranks_per_token(experts: int, top_k: int, ranks: int) -> float:
    """Expected number of the EP group's ``ranks`` (its own included) a token's top_k experts
    fall on, each rank holding experts/ranks of them: ranks·(1 − C(E − E/n, k)/C(E, k)), as
    :func:`remote_nodes_per_token` with ranks for servers (derived). A HybridEP dispatch sends
    the token once to each (DeepEP hybrid-ep tests/test_hybrid_ep.py counts its received bytes so):
    DeepSeek-V3 on EP 64, 4 experts per rank, top 8: 7.64 copies, not 8."""
    if ranks <= 1:
        return 1.0 if experts > 0 and top_k > 0 else 0.0
    return remote_nodes_per_token(experts, top_k, ranks) * ranks / (ranks - 1)
