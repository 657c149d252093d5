"""Placement stage: map the job's ranks onto the GPUs of the drawn design.

GPUs are numbered server by server in the design's order (``gpu_count`` each, from the catalog).
Rank r sits on GPU r. The parallel dimensions are nested in ``order``, innermost first; the
default ``"tp,pp,dp"`` keeps a TP group inside one server's NVLink domain, puts consecutive
pipeline stages on neighbouring servers and spreads data-parallel replicas last (so each DP group
holds the same local GPU of many servers: one rail). Megatron-LM's own order is ``"tp,dp,pp"``;
any permutation may be given.

Each GPU talks to the network through one of its server's adapters (NICs and DPUs with a network
link, in slot order): GPU i of a server with k adapters uses adapter ⌊i·k/gpus⌋ (rail i when there
is one adapter per GPU). A server with direct links and no adapter is its own endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from designer.engine.workload import Workload
from designer.errors import UsageError

DIMENSIONS = ("tp", "pp", "dp")


@dataclass(frozen=True)
class ServerInfo:
    id: str
    gpus: int
    gpu: dict[str, Any]  #: catalog entry of the GPU model
    nvlink_domain: int
    nvswitch: bool
    pcie_gen: int
    endpoints: tuple[str, ...]  #: network adapters (or the server itself) by rail


def servers_of(design, catalog) -> list[ServerInfo]:
    """Effective figures of every GPU server of a design (catalog ← props)."""
    topo = design.topology
    linked = {l.a for l in topo.links.values()} | {l.b for l in topo.links.values()}
    out = []
    gpus: dict[str, dict[str, Any]] = {}  # one entry per GPU model, shared by its servers
    for srv in topo.servers():
        f = catalog.resolve(srv)
        gpu = gpus.get(f["gpu_model"])
        if gpu is None:
            try:
                gpu = gpus[f["gpu_model"]] = catalog.get("gpu", f["gpu_model"])
            except KeyError as exc:
                raise UsageError(f"server '{srv.id}': {exc.args[0]}") from None
        eps = tuple(c.id for c in topo.attached(srv.id) if c.id in linked)
        if not eps and srv.id in linked:
            eps = (srv.id,)
        out.append(ServerInfo(srv.id, int(f["gpu_count"]), gpu, int(f["nvlink_domain"]),
                              bool(f["nvswitch"]), int(f.get("pcie_gen", 5)), eps))
    return out


@dataclass
class Placement:
    """Where every rank runs. Arrays are indexed by rank."""

    order: tuple[str, ...]
    server: np.ndarray  #: index into ``servers``
    local: np.ndarray  #: GPU index inside its server
    servers: list[ServerInfo]
    groups: dict[str, np.ndarray]  #: "tp"/"pp"/"dp" -> (groups, size) array of ranks
    _endpoints: np.ndarray | None = field(default=None, init=False, repr=False)

    def endpoint(self, ranks: np.ndarray) -> list[str | None]:
        """Network endpoint id of each rank's GPU (None if its server has no network link)."""
        if self._endpoints is None:
            per_gpu = [s.endpoints[i * len(s.endpoints) // s.gpus] if s.endpoints else None
                       for s in self.servers for i in range(s.gpus)]
            first = np.r_[0, np.cumsum([s.gpus for s in self.servers])[:-1]].astype(np.int64)
            self._endpoints = np.array(per_gpu, dtype=object)[first[self.server] + self.local]
        return self._endpoints[np.asarray(ranks, dtype=np.int64).ravel()].tolist()

    def nodes_spanned(self, dim: str) -> int:
        """Servers one group of ``dim`` spans (the most over all groups)."""
        g = self.groups[dim]
        if g.shape[1] <= 1:
            return 1
        srv = np.sort(self.server[g], axis=1)
        return int(((srv[:, 1:] != srv[:, :-1]).sum(axis=1) + 1).max())

    def summary(self) -> dict[str, Any]:
        used = np.unique(self.server)
        within = {d: self.nodes_spanned(d) == 1 for d in DIMENSIONS}
        nv_ok = all(self.groups["tp"].shape[1] <= self.servers[int(s)].nvlink_domain for s in used)
        return {"order": ",".join(self.order), "ranks": int(len(self.server)),
                "servers_used": int(len(used)),
                "tp_inside_server": within["tp"], "tp_inside_nvlink_domain": within["tp"] and nv_ok,
                "servers_per_dp_group": self.nodes_spanned("dp"),
                "servers_per_pp_group": self.nodes_spanned("pp")}


def parse_order(text: str | None) -> tuple[str, ...]:
    if not text:
        return DIMENSIONS
    parts = tuple(p.strip().lower() for p in str(text).replace("-", ",").split(",") if p.strip())
    if sorted(parts) != sorted(DIMENSIONS):
        raise UsageError(f"placement order must name tp, pp and dp once each, innermost first "
                         f"(e.g. 'tp,pp,dp'), got {text!r}")
    return parts


def place(w: Workload, servers: list[ServerInfo], order: str | None = None) -> Placement:
    """Rank r → GPU r; TP/PP/DP coordinates from the nesting ``order`` (innermost first)."""
    dims = parse_order(order)
    total = sum(s.gpus for s in servers)
    n = w.gpus
    if n > total:
        raise UsageError(f"the job needs {n} GPUs but the design has {total}")
    srv = np.repeat(np.arange(len(servers)), [s.gpus for s in servers])[:n]
    local = np.concatenate([np.arange(s.gpus) for s in servers])[:n] if servers else np.zeros(0, int)
    size = {"tp": w.tp, "pp": w.pp, "dp": w.dp}
    ranks = np.arange(n)
    coord, stride = {}, 1
    for d in dims:
        coord[d] = (ranks // stride) % size[d]
        stride *= size[d]
    groups = {}
    for d in DIMENSIONS:
        others = [o for o in dims if o != d]
        key = coord[others[0]] * size[others[1]] + coord[others[1]]
        order_idx = np.lexsort((coord[d], key))
        groups[d] = ranks[order_idx].reshape(-1, size[d])
    return Placement(dims, srv, local, servers, groups)
