"""Cost of NCCL collectives on a group of GPUs, and the choice of the fastest algorithm.

Every algorithm is modelled as NCCL's tuner does: time = latency + bytes / algorithm bandwidth
(NVIDIA/nccl ``src/graph/tuning.cc``, ``ncclTopoTuneModel`` / ``ncclTopoGetAlgoTime``), and the
fastest (algorithm, protocol) pair wins. Bus bandwidth follows nccl-tests (``doc/PERFORMANCE.md``):
busbw = algbw·2(n−1)/n for all-reduce, algbw·(n−1)/n for reduce-scatter and all-gather, algbw for
broadcast and send/recv.

The group is described by a :class:`GroupShape`: how many ranks on how many servers, the NVLink
rate per GPU, and the network rate each rank achieves on its rail (given by the network stage, so
oversubscription and ECMP collisions on the drawn fabric reach the collectives through it).

NVLink SHARP across servers (NCCL 2.18.1 release notes: "inter-node algorithms for NVLink SHARP:
NVLink SHARP + IB SHARP (NVLS), NVLink SHARP + Tree (NVLSTREE)"): inside each server the NVSwitch
reduces and multicasts (``nvls``), between servers either the switches reduce in-network
(``sharp``: NCCL's NVLS with CollNet/IB SHARP; plain CollNet with rings inside servers without
NVLink SHARP) or a double binary tree does (``nvls_tree``). NCCL pipelines the two stages, so
the slower one sets the rate (tuning.cc: bw = min(bwIntra, bwInter) for NVLS and NVLSTree).
NVLink 5 (B200, GB200 NVL72): NVLink SHARP is capped at the measured bus bandwidth
(``NVLS_BUSBW_CAP_GBPS``), so its algbw falls with the rank count as measured. All-to-all
(``alltoall``, algorithm ``pairwise``) sends every rank's share to every other rank at once, the
remote shares over the rails and the rest over NVLink; :func:`dispatch_s` is the MoE dispatch of a
DeepEP/HybridEP-style dispatcher (one copy per token and remote server).
Reference figures: ``tests/data/nccl_reference.json``, ``tests/data/nccl_blackwell.json``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from designer.errors import UsageError

OPS = ("allreduce", "reduce_scatter", "allgather", "broadcast", "sendrecv", "alltoall")
ALGORITHMS = ("ring", "tree", "hierarchical", "nvls", "sharp", "nvls_tree", "pairwise")

#: Achieved fraction of the NVLink per-direction rate for ring collectives. Derivation: nccl-tests
#: all_reduce_perf on 8×H100 SXM (NVLink4, 450 GB/s per direction) reaches ≈370 GB/s busbw
#: (NVIDIA DGX H100 nccl-tests results) → 370/450 = 0.82. The same figure gives 247 GB/s on A100
#: NVLink3, close to NCCL's own 235 GB/s A100 cap in tuning.cc.
NVLINK_EFFICIENCY = 370.0 / 450.0
#: Achieved fraction of a rank's network rate for large messages (Simple protocol), an empirical
#: figure: nccl-tests across servers with one 400 Gb/s NDR ConnectX-7 per GPU reach 46–48 GB/s
#: busbw per NIC of the 50 GB/s line rate (tests/data/nccl_reference.json), 0.92–0.96. The value
#: 120/128 = 0.9375 (46.9 GB/s at 400 Gb/s) lies in that range; it is NOT a protocol payload
#: ratio here (the engine models Simple and LL, not LL128, whose 120/128 it happens to equal).
#: It multiplies the network stage's rate for every protocol; LL's own ×0.5 comes on top.
NET_EFFICIENCY = 120.0 / 128.0
#: NVLS (NVLink SHARP) efficiency on Hopper: NCCL ``nvlsEfficiency`` = 0.85 (src/tuning nvls).
NVLS_EFFICIENCY = 0.85
#: NVLink stage of NVLS across servers (NVLS with IB SHARP, NVLSTree): NCCL's cost model gives both
#: multi-node NVLS algorithms 5/6 of their bus bandwidth (tuning.cc, ``ratio *= 5.0/6.0`` for
#: NCCL_ALGO_NVLS / NVLS_TREE, NCCL 2.19-2.20). Applied to the NVLink stage only, whose kernel
#: splits its warps between the switch reduction/multicast and the copies to and from the NICs
#: (a single-server NVLS has no network warps and reaches 480 GB/s without it). Checks, not fits:
#: 2 servers NVLSTree 437 GB/s busbw (measured 430, NVIDIA/nccl#1221) and 32 servers 373 GB/s
#: (GTC 2024 S62129 via NVIDIA/nccl#1649: 370-380), tests/test_collectives_nccl.py.
NVLS_NET_FACTOR = 5.0 / 6.0
#: NVLink SHARP bus-bandwidth ceiling per NVLink generation (GB/s, nccl-tests busbw), MEASURED.
#: On NVLink 5 the n/(n+1) stage model above over-predicts and grows with the rank count, while
#: measurements stay flat: 8x B200 (one HGX/DGX B200, NCCL 2.27.1) "830+" GB/s busbw
#: (NVIDIA/nccl#1807) and a whole GB200 NVL72 rack of 72 GPUs 834.6 GB/s busbw at 8 GB
#: (coreweave/nccl-tests PR #43, out-of-place; algbw 423 GB/s, below the 8-GPU 474). The ceiling
#: is taken from the 8-GPU figure; the 72-GPU figure checks it (tests/test_collectives_blackwell.py).
#: A constant busbw means algbw = cap·n/(2(n−1)), falling with n, as measured. Not modelled: why
#: (the NVSwitch's multimem reduction rate per port or the kernel's SM budget); NVLink 4 has no
#: entry: its n/(n+1) model is within 2% of the measured 480 GB/s (tests/test_collectives_nccl.py),
#: so Hopper results stay as they were.
NVLS_BUSBW_CAP_GBPS = {5: 830.0}
#: MoE dispatch/combine of a HybridEP dispatcher inside one NVLink 5 domain, MEASURED (GB/s of
#: algorithm bandwidth by ranks in the domain: BF16 dispatch, combine). deepseek-ai/DeepEP branch
#: hybrid-ep, docs/README_Hybrid-EP.md, "GB200 Platform", HybridEP, 32 SMs, "Torch API" columns:
#: 4,096 tokens per rank, hidden 7,168, top 8, 8 local experts, random uniform routing;
#: tests/test_hybrid_ep.py divides the bytes a rank receives (one copy per token and destination
#: rank, its own included: ``dispatched_hidden.numel() * 2``) by the call's time (dispatch kernel,
#: its device-to-device copy and "misc = device_sync, update_flag"). BF16 and 32 SMs because that is
#: how Megatron-Core runs it: HybridEP "does not support fp8 dispatch now" (fused_a2a.py, PR #2176)
#: and Megatron-Bridge v0.2.0 sets ``moe_hybridep_num_sms = 32`` (scripts/performance/utils/
#: helpers.py). The rate falls with the rank count (8 → 36: 546 → 479 dispatch); between
#: measured counts it is interpolated, beyond 36 (an NVL72 EP 64 group) held at the 36-rank figure,
#: which makes it an upper bound there. 8 ranks on B200 measure the same (the README's "B200
#: Platform" HybridEP 16-SM Torch API row: 536 / 531 vs GB200's 550 / 538). About half the link
#: rate, where NCCL's all-reduce reaches 0.82 of it (``NVLINK_EFFICIENCY``): not derived, measured.
HYBRIDEP_NVL5_GBPS = {8: (545.71, 568.94), 16: (523.48, 521.55), 24: (507.32, 483.76),
                      32: (484.22, 464.54), 36: (479.02, 447.89)}
#: highest per-GPU NVLink rate (GB/s per direction) before NVLink 5: 18 links x 25 GB/s (H100,
#: NVLink 4); NVLink 5 doubles the link rate to 50 GB/s (18 x 50 = 900, B200/GB200 datasheets).
#: Names the generation of a shape that does not carry one (``GroupShape.nvlink_gen`` = 0).
NVLINK4_MAX_GBPS = 450.0
#: Double-binary-tree bandwidth derating: NCCL tuning.cc multiplies tree busBw by 0.92.
TREE_EFFICIENCY = 0.92
#: PCIe per-direction GB/s of an x16 slot per generation (PCI-SIG: 8/16/32/64 GT/s per lane,
#: 128b/130b coding) times 0.8 for TLP headers; used when GPUs have no NVLink.
PCIE_X16_GBPS = {3: 15.75 * 0.8, 4: 31.5 * 0.8, 5: 63.0 * 0.8, 6: 121.0 * 0.8}

# Latencies in microseconds, from NCCL tuning.cc (2.18–2.19 tables), Simple and LL protocols.
#: base latency per algorithm and protocol
BASE_LAT_US = {("ring", "simple"): 8.4, ("ring", "ll"): 6.6,
               ("tree", "simple"): 8.4, ("tree", "ll"): 6.8,
               ("nvls", "simple"): 23.0, ("sharp", "simple"): 10.7}
#: network hop of NVLS across servers (NCCL 2.19 tuning.cc hwLat NET: NVLS 18 us, NVLSTree 14 us
#: per tree level; the NVLink part is the 23 us of ``BASE_LAT_US["nvls"]``)
NVLS_NET_LAT_US = {"sharp": 18.0, "nvls_tree": 14.0}
#: per-hop latency inside a server (NVLink) and across the network, per algorithm/protocol
NVLINK_LAT_US = {("ring", "simple"): 3.4, ("ring", "ll"): 0.6,
                 ("tree", "simple"): 4.0, ("tree", "ll"): 0.6}
PCI_LAT_US = {("ring", "simple"): 5.7, ("ring", "ll"): 1.0,
              ("tree", "simple"): 5.7, ("tree", "ll"): 1.0}
NET_LAT_US = {("ring", "simple"): 14.0, ("ring", "ll"): 2.7,
              ("tree", "simple"): 14.0, ("tree", "ll"): 5.0}
#: LL protocol: each 8-byte line carries 4 bytes of data and a 4-byte flag → half the bandwidth
LL_BANDWIDTH_FACTOR = 0.5
#: Above this size NCCL uses Simple; LL only pays off for small messages (NCCL thresholds ~64 KiB
#: per rank); the cost model below decides, this only bounds the search.
PROTOCOLS = ("simple", "ll")


@dataclass(frozen=True)
class GroupShape:
    """A communicator: ``ranks`` GPUs on ``nodes`` servers, ``ranks // nodes`` per server, or
    as few as ``min_local`` on one of them (0 = an even spread; 8 + 1 GPUs has ``min_local=1``).

    Rates are per GPU and per direction in GB/s. ``net_GBps`` is what one rank's rail achieves on
    the fabric under the phase's concurrent traffic (network stage); ``net_line_GBps`` the NIC line
    rate. ``sharp`` means every switch the group's traffic crosses can reduce in-network;
    ``tree_depth`` is the number of switch tiers the reduction climbs; ``switch_latency_us`` one
    switch's port-to-port latency.
    """

    ranks: int
    nodes: int = 1
    nvlink_GBps: float = 0.0
    pcie_gen: int = 5
    nvswitch: bool = False
    nvls: bool = False
    net_GBps: float = 0.0
    net_line_GBps: float = 0.0
    nics_per_node: int = 1
    sharp: bool = False
    tree_depth: int = 1
    switch_latency_us: float = 0.5
    nvlink_gen: int = 0  #: NVLink generation (catalog ``nvlink_gen``); 0 = from the rate
    min_local: int = 0  #: fewest of the group's ranks on one server; 0 = ``per_node``

    @property
    def generation(self) -> int:
        """NVLink generation: ``nvlink_gen``, else 5 above ``NVLINK4_MAX_GBPS`` per GPU (only
        NVLink 5 reaches it), else 0 (an earlier one: no generation-specific figure applies)."""
        if self.nvlink_gen:
            return self.nvlink_gen
        return 5 if self.nvlink_GBps > NVLINK4_MAX_GBPS else 0

    def nvls_cap_algbw(self, n: int) -> float:
        """Highest NVLink SHARP algorithm bandwidth among ``n`` GPUs of this generation's
        NVSwitch domain: the measured busbw ceiling (``NVLS_BUSBW_CAP_GBPS``) over nccl-tests'
        2(n−1)/n; infinite where the generation has no measured ceiling."""
        cap = NVLS_BUSBW_CAP_GBPS.get(self.generation)
        return math.inf if cap is None or n < 2 else cap * n / (2.0 * (n - 1))

    @property
    def per_node(self) -> int:
        return max(1, self.ranks // max(1, self.nodes))

    @property
    def fewest_local(self) -> int:
        """Fewest of the group's ranks on one server: ``min_local``, else ``per_node`` (all of
        them on one server)."""
        if self.nodes <= 1:
            return max(1, self.ranks)
        return max(1, min(self.min_local or self.per_node, self.per_node))

    @property
    def intra_GBps(self) -> float:
        """Achieved GPU-to-GPU rate inside a server (NVLink, else PCIe)."""
        if self.nvlink_GBps > 0:
            return self.nvlink_GBps * NVLINK_EFFICIENCY
        return PCIE_X16_GBPS.get(self.pcie_gen, PCIE_X16_GBPS[5])

    @property
    def intra_lat(self) -> dict:
        return NVLINK_LAT_US if self.nvlink_GBps > 0 else PCI_LAT_US


@dataclass(frozen=True)
class Choice:
    """Cost of one collective call with the algorithm NCCL's cost model would pick."""

    op: str
    nbytes: float
    algorithm: str
    protocol: str
    time_s: float
    algbw_GBps: float
    busbw_GBps: float


def bus_factor(op: str, n: int) -> float:
    """busbw / algbw as nccl-tests defines it."""
    if n <= 1:
        return 1.0
    if op == "allreduce":
        return 2.0 * (n - 1) / n
    if op in ("reduce_scatter", "allgather", "alltoall"):
        return (n - 1) / n
    return 1.0


def _ring_steps(op: str, n: int) -> int:
    return {"allreduce": 2 * (n - 1), "reduce_scatter": n - 1, "allgather": n - 1}.get(op, n - 1)


def _ring(op: str, nbytes: float, g: GroupShape, proto: str) -> tuple[float, float] | None:
    """Flat ring through all ranks; each server's ring hop to the next server uses one NIC, and
    NCCL runs one channel per NIC, so inter-server busbw = min(per_node, NICs) × rail rate.
    All-to-all is no ring collective (:func:`_pairwise`)."""
    if op == "alltoall":
        return None
    n, N = g.ranks, g.nodes
    if N == 1:
        busbw = g.intra_GBps
    else:
        channels = max(1, min(g.per_node, g.nics_per_node))
        busbw = min(g.intra_GBps, channels * g.net_GBps)
    if proto == "ll":
        busbw *= LL_BANDWIDTH_FACTOR
    if busbw <= 0:
        return None
    steps = _ring_steps(op, n)
    inter = 0 if N == 1 else (2 * (N - 1) if op == "allreduce" else N - 1)
    lat = (BASE_LAT_US[("ring", proto)] + (steps - inter) * g.intra_lat[("ring", proto)]
           + inter * NET_LAT_US[("ring", proto)])
    if op == "sendrecv":
        lat = BASE_LAT_US[("ring", proto)] + (NET_LAT_US if N > 1 else g.intra_lat)[("ring", proto)]
    algbw = busbw / bus_factor(op, n)
    return lat * 1e-6 + nbytes / (algbw * 1e9), algbw


def _tree(op: str, nbytes: float, g: GroupShape, proto: str) -> tuple[float, float] | None:
    """Double binary tree across servers, chain inside (all-reduce only). NCCL: algbw = 0.5 ×
    busBw × 0.92; latency = base + 2·((per_node − 1)·intra + log2(nodes)·net)."""
    if op != "allreduce" or g.nodes < 2:
        return None
    channels = max(1, min(g.per_node, g.nics_per_node))
    busbw = min(g.intra_GBps, channels * g.net_GBps) * TREE_EFFICIENCY
    if proto == "ll":
        busbw *= LL_BANDWIDTH_FACTOR
    if busbw <= 0:
        return None
    lat = BASE_LAT_US[("tree", proto)] + 2 * ((g.per_node - 1) * g.intra_lat[("tree", proto)]
                                               + math.log2(g.nodes) * NET_LAT_US[("tree", proto)])
    algbw = 0.5 * busbw
    return lat * 1e-6 + nbytes / (algbw * 1e9), algbw


def _intra(op: str, nbytes: float, g: GroupShape) -> float:
    """Ring reduce-scatter/all-gather among the per_node ranks of one server (Simple)."""
    k = g.per_node
    if k <= 1:
        return 0.0
    local = GroupShape(ranks=k, nodes=1, nvlink_GBps=g.nvlink_GBps, pcie_gen=g.pcie_gen,
                       nvlink_gen=g.nvlink_gen)
    ring = _ring(op, nbytes, local, "simple")
    return ring[0] if ring is not None else math.inf


def _hierarchical(op: str, nbytes: float, g: GroupShape, proto: str) -> tuple[float, float] | None:
    """All-reduce as reduce-scatter inside each server (NVLink), all-reduce of 1/per_node of the
    data across servers on each rail (one ring per local rank, concurrently), all-gather inside."""
    if op != "allreduce" or g.nodes < 2 or g.per_node < 2 or proto != "simple":
        return None
    k = g.per_node
    rail = GroupShape(ranks=g.nodes, nodes=g.nodes, nvlink_GBps=g.nvlink_GBps, pcie_gen=g.pcie_gen,
                      net_GBps=g.net_GBps * min(1.0, g.nics_per_node / k), nics_per_node=1,
                      nvlink_gen=g.nvlink_gen)
    inter = _ring("allreduce", nbytes / k, rail, "simple")
    if inter is None:
        return None
    t = _intra("reduce_scatter", nbytes, g) + inter[0] + _intra("allgather", nbytes, g)
    return t, nbytes / t / 1e9


def _nvls(op: str, nbytes: float, g: GroupShape, proto: str) -> tuple[float, float] | None:
    """NVLink SHARP inside one NVSwitch domain (all-reduce). The switch reduces (multimem
    ld_reduce) and multicasts (multimem st): each GPU sends and receives S·(1 + 1/n) bytes, so
    algbw = B·n/(n+1) with B the NVLink rate × NVLINK_EFFICIENCY × NVLS_EFFICIENCY, at most the
    generation's measured ceiling (``GroupShape.nvls_cap_algbw``: NVLink 5)."""
    if op != "allreduce" or not g.nvls or g.nodes != 1 or g.ranks < 2 or proto != "simple":
        return None
    n = g.ranks
    algbw = min(g.intra_GBps * NVLS_EFFICIENCY * n / (n + 1), g.nvls_cap_algbw(n))
    return BASE_LAT_US[("nvls", "simple")] * 1e-6 + nbytes / (algbw * 1e9), algbw


def _nvls_stage_GBps(g: GroupShape) -> float:
    """Algorithm bandwidth of the NVLink SHARP stage among one server's ``per_node`` ranks when
    the group spans servers (:func:`_nvls` for one server), 0 where NVLink SHARP does not apply.
    Each GPU moves S·(1 + 1/k) over its NVLink per direction (the switch reads its share for the
    reduction and writes the multicast result, see :func:`_nvls`), at most the generation's
    measured one-domain ceiling (``GroupShape.nvls_cap_algbw``), times ``NVLS_NET_FACTOR``."""
    k = g.per_node
    if not g.nvls or k < 2 or g.nvlink_GBps <= 0:
        return 0.0
    return min(g.intra_GBps * NVLS_EFFICIENCY * k / (k + 1), g.nvls_cap_algbw(k)) * NVLS_NET_FACTOR


def _sharp(op: str, nbytes: float, g: GroupShape, proto: str) -> tuple[float, float] | None:
    """In-network reduction (SHARP / NCCL CollNet) across servers: each rail NIC sends its share
    once up the aggregation tree and receives the result once, so the network carries S/per_node
    per NIC each way (half a ring's 2(n−1)/n). Latency = base + 2 × tree depth × switch latency:
    it grows with the depth of the tree, not with the number of ranks.

    Servers with NVLink SHARP (NCCL's multi-node NVLS, 2.18+): the NVSwitch reduces the server's
    share for each NIC and multicasts the result back while the switches reduce across servers;
    NCCL pipelines the stages, so algbw = min(NVLink SHARP stage, NICs × rail rate) and the
    latency is the NVLS 23 µs + the network hop 18 µs (tuning.cc) + the tree's switch hops.
    Without it, rings inside each server reduce-scatter before and all-gather after (CollNet
    chain), one stage after the other."""
    if op != "allreduce" or not g.sharp or g.nodes < 2 or proto != "simple" or g.net_GBps <= 0:
        return None
    k = g.per_node
    net = g.net_GBps * min(1.0, g.nics_per_node / k)
    tree_us = 2 * g.tree_depth * g.switch_latency_us
    stage = _nvls_stage_GBps(g)
    if stage > 0:
        algbw = min(stage, k * net)
        lat = BASE_LAT_US[("nvls", "simple")] + NVLS_NET_LAT_US["sharp"] + tree_us
        return lat * 1e-6 + nbytes / (algbw * 1e9), algbw
    t_net = (BASE_LAT_US[("sharp", "simple")] + tree_us) * 1e-6 + nbytes / k / (net * 1e9)
    t = _intra("reduce_scatter", nbytes, g) + t_net + _intra("allgather", nbytes, g)
    return t, nbytes / t / 1e9


def _nvls_tree(op: str, nbytes: float, g: GroupShape, proto: str) -> tuple[float, float] | None:
    """NVLSTree (NCCL 2.18+): NVLink SHARP inside each server, a double binary tree across them
    over every NIC (no switch reduction needed). Per NIC a tree moves its S/per_node share once
    each way between two servers; beyond two, an inner node of the tree receives from (and sends
    to) two children, which halves the network rate (tuning.cc: bwInter/2 when nNodes > 2).
    Pipelined: algbw = min(NVLink SHARP stage, network). Latency = 23 µs + 2·log2(nodes)·14 µs
    (tuning.cc: NVLS intra latency plus two tree traversals at the NVLSTree network hop)."""
    if op != "allreduce" or g.nodes < 2 or proto != "simple" or g.net_GBps <= 0:
        return None
    stage = _nvls_stage_GBps(g)
    if stage <= 0:
        return None
    k = g.per_node
    net = min(k, g.nics_per_node) * g.net_GBps * (1.0 if g.nodes <= 2 else 0.5)
    algbw = min(stage, net)
    lat = BASE_LAT_US[("nvls", "simple")] + 2 * math.log2(g.nodes) * NVLS_NET_LAT_US["nvls_tree"]
    return lat * 1e-6 + nbytes / (algbw * 1e9), algbw


def _pairwise(op: str, nbytes: float, g: GroupShape, proto: str) -> tuple[float, float] | None:
    """All-to-all as NCCL runs it (nccl-tests alltoall_perf; Megatron's and DeepEP-less MoE
    dispatch): every rank posts a send and a receive to every peer in one group, its ``nbytes``
    spread evenly over the n ranks (derived). A rank on a server holding ``local`` of the ranks
    sends (n − local)/n of ``nbytes`` to ranks in other servers, over its rail at ``net_GBps``,
    and (local − 1)/n over NVLink/PCIe (``intra_GBps``), both at once; plus one network (or
    NVLink) latency, as the pairs are posted together. The call ends when the last rank is done:
    a rank on the server with the fewest ranks (``fewest_local``, m) sends the most over its
    rail, nbytes·(n − m)/n, and sets the network time (8 + 1 GPUs: the lone rank sends 8/9 of
    its data over one rail). The NVLink share, (local − 1)/n, is taken at ``per_node`` (a fuller
    server's NVLink time stays well below the rail's at NVLink's ~10x rate). Simple protocol only (the bulk transfers of MoE
    layers)."""
    if op != "alltoall" or proto != "simple":
        return None
    n = max(g.ranks, 1)
    remote = nbytes * (n - g.fewest_local) / n
    intra = nbytes * ((g.per_node if g.nodes > 1 else n) - 1) / n
    if remote > 0 and g.net_GBps <= 0:
        return None
    t_net = remote / (g.net_GBps * 1e9) if remote > 0 else 0.0
    t_in = intra / (g.intra_GBps * 1e9) if intra > 0 else 0.0
    lat = (NET_LAT_US[("ring", "simple")] if g.nodes > 1 else g.intra_lat[("ring", "simple")]) * 1e-6
    t = max(t_net, t_in) + lat
    return t, nbytes / t / 1e9


def hybridep_GBps(g: GroupShape) -> float:
    """Measured algorithm bandwidth of one HybridEP dispatch + combine pair among the group's
    ranks in one NVLink domain (``per_node``), per direction of the pair: the harmonic mean of
    the dispatch and combine rates of ``HYBRIDEP_NVL5_GBPS`` (the two move the same bytes, so
    their mean time is the bytes over it), interpolated linearly in the rank count and held at
    the ends; 0.0 where the generation has no measurement (NVLink 4 and before: the link model,
    ``intra_GBps``, applies)."""
    if g.generation != 5 or not g.nvswitch:
        return 0.0
    k = g.per_node if g.nodes > 1 else g.ranks
    pts = sorted((n, 2.0 / (1.0 / d + 1.0 / c)) for n, (d, c) in HYBRIDEP_NVL5_GBPS.items())
    if k <= pts[0][0]:
        return pts[0][1]
    for (n0, r0), (n1, r1) in zip(pts, pts[1:]):
        if k <= n1:
            return r0 + (r1 - r0) * (k - n0) / (n1 - n0)
    return pts[-1][1]


def dispatch_s(nbytes: float, remote_bytes: float, g: GroupShape, received_bytes: float | None = None) -> float:
    """One MoE dispatch (or combine) of a DeepEP/HybridEP-style dispatcher in which every rank
    holds ``nbytes`` of token copies for the group's experts and sends ``remote_bytes`` of them
    (one per token and other server) over its rail at ``net_GBps``, the server forwarding each
    copy to its expert's GPU over NVLink: every copy not for this rank crosses NVLink once,
    (n − 1)/n of ``nbytes`` at ``intra_GBps``, at the same time (derived, as :func:`_pairwise`).
    DeepEP's measured RDMA rate on CX7 400G is 43-51 GB/s of ~50 (DeepEP README, normal kernels,
    EP 16-64 on H800), the rail rate NET_EFFICIENCY already gives (46.9 GB/s).

    On NVLink 5, where HybridEP's own rate is measured (:func:`hybridep_GBps`), the NVLink part
    is ``received_bytes`` (what a rank receives, one copy per token and destination rank, its own
    included: the measurement's byte count) at that rate instead of the link model."""
    n = max(g.ranks, 1)
    if n < 2:
        return 0.0
    if remote_bytes > 0 and g.net_GBps <= 0:  # as :func:`_pairwise`: no rail, no all-to-all
        raise UsageError(_no_path("alltoall", g))
    t_net = remote_bytes / (g.net_GBps * 1e9) if remote_bytes > 0 else 0.0
    measured = hybridep_GBps(g) if received_bytes is not None else 0.0
    if received_bytes is not None and measured > 0:
        t_in = received_bytes / (measured * 1e9)
    else:
        t_in = nbytes * (n - 1) / n / (g.intra_GBps * 1e9) if g.intra_GBps > 0 else 0.0
    lat = (NET_LAT_US[("ring", "simple")] if g.nodes > 1 else g.intra_lat[("ring", "simple")]) * 1e-6
    return max(t_net, t_in) + lat


_IMPL = {"ring": _ring, "tree": _tree, "hierarchical": _hierarchical, "nvls": _nvls,
         "sharp": _sharp, "nvls_tree": _nvls_tree, "pairwise": _pairwise}


def cost(op: str, nbytes: float, g: GroupShape, algorithm: str, protocol: str = "simple") -> Choice | None:
    """Cost of one algorithm/protocol, or None where it does not apply."""
    if op not in OPS:
        raise ValueError(f"unknown collective '{op}' (one of {', '.join(OPS)})")
    if g.ranks <= 1 or nbytes <= 0:
        return Choice(op, nbytes, "none", "none", 0.0, math.inf, math.inf)
    res = _IMPL[algorithm](op, nbytes, g, protocol)
    if res is None:
        return None
    t, algbw = res
    algbw = nbytes / t / 1e9
    return Choice(op, nbytes, algorithm, protocol, t, algbw, algbw * bus_factor(op, g.ranks))


def _no_path(op: str, g: GroupShape) -> str:
    """Why ``op`` cannot run on ``g`` at all (what, where, how to fix)."""
    return (f"no algorithm can run {op} on a group of {g.ranks} GPUs: its GPUs have no "
            f"usable NVLink or network bandwidth between them; check that every "
            f"server's NICs/DPUs are cabled to the compute fabric ('dpu-designer "
            f"validate' lists unconnected ones)")


def best(op: str, nbytes: float, g: GroupShape, allowed: tuple[str, ...] = ALGORITHMS) -> Choice:
    """The fastest applicable algorithm and protocol, as NCCL's tuner picks it."""
    options = [c for a in allowed for p in PROTOCOLS
               if (c := cost(op, nbytes, g, a, p)) is not None]
    if not options:
        raise UsageError(_no_path(op, g))
    return min(options, key=lambda c: (c.time_s, ALGORITHMS.index(c.algorithm)
                                       if c.algorithm in ALGORITHMS else -1))


def allreduce_lower_bound_s(nbytes: float, g: GroupShape) -> float:
    """No all-reduce can beat this: inside one server every rank must ship at least (n−1)/n of its
    data over its own links (at their raw line rate); across servers each server must send at
    least S (its reduced contribution) through its NICs at line rate, even with in-network
    reduction."""
    if g.ranks <= 1:
        return 0.0
    if g.nodes == 1:
        raw = g.nvlink_GBps if g.nvlink_GBps > 0 else PCIE_X16_GBPS.get(g.pcie_gen, 50.0) / 0.8
        return nbytes * (g.ranks - 1) / g.ranks / (raw * 1e9)
    line = g.net_line_GBps or g.net_GBps
    return nbytes / (min(g.per_node, g.nics_per_node) * line * 1e9)
