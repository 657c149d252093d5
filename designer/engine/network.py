"""Network stage: route flows over the drawn links and share link capacity by max-min fairness.

Model
- Every link is two directed arcs of capacity ``speed_Gbps × lanes / 8`` GB/s.
- Flows start and end at endpoints (NIC, DPU, storage, or a server with an on-board NIC); only
  switches forward traffic. Routes are shortest paths (fewest hops) on the drawn graph.
- ``routing="ecmp"``: at every hop a flow takes ONE of the equal-cost next hops, picked by a hash
  of the flow and the switch (as switches hash the 5-tuple), so two flows can collide on one link
  while another stays idle. ``routing="adaptive"``: a flow spreads evenly over all equal-cost next
  hops at every hop (adaptive routing / packet spraying as the fluid limit).
- Rates: max-min fair (progressive filling, Bertsekas & Gallager, *Data Networks* §6.5.2): all
  unfrozen flows grow together until a link saturates or a flow meets its demand; flows crossing a
  saturated link freeze; repeat. With a split flow the link carries its fraction of the rate.
  Each round takes at once every event that provably comes next on its own arcs (an arc whose
  flows are all held by it, a demand below every level of its flow's arcs), not one common
  step: the same rates, in as many rounds as the longest chain of events that wait on each
  other (see :func:`max_min`).

Speed: everything is numpy on compressed-sparse-row arrays (``indptr``/``indices``), without
scipy (whose import alone cost 0.15–0.45 s of every run): the switch graph's connected parts come
from min-label propagation with pointer jumping, distances between switches from a bit-parallel
breadth-first search of 64 sources per machine word, routes are walked hop by hop for all flows
at once, and the fairness loop sums flow rates per arc with ``np.bincount``.
The routing tables and the routes of a flow set are kept on the Fabric, which an
:class:`~designer.engine.cache.EngineCache` (the caller's) keeps per *structure* (which components
are joined by which links), so re-solving after a speed edit or a scenario change skips routing
entirely; an unchanged topology (same object, same ``Topology.version``) gets its Fabric without
even reading its structure again. Without a cache every call makes a new Fabric.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from hashlib import blake2b
from itertools import compress, repeat
from operator import eq, ne
from typing import TYPE_CHECKING, Any, Literal, Sequence, cast

import numpy as np

from designer.errors import UsageError

from designer.topology.management import traffic_links_of
from designer.topology.parts import lowest_labels

if TYPE_CHECKING:
    from designer.engine.cache import EngineCache

ROUTING = ("ecmp", "adaptive")
_INF = np.iinfo(np.int32).max // 4
_EMPTY = np.zeros(0, dtype=np.int64)
_NO_NETWORK: frozenset[int] = frozenset()


SortKind = Literal["quicksort", "mergesort", "heapsort", "stable"]


def sorted_unique(a: np.ndarray, kind: SortKind | None = None) -> np.ndarray:
    """The sorted distinct values of ``a``, as ``np.unique(a)`` gives them, by sorting: numpy
    2.4's ``np.unique`` without return flags hashes instead, 30 to 60 times slower on the wide
    int64 keys the engine builds (0.9 s against 0.015 s for 443k keys on the development machine).
    ``kind``: ``np.sort``'s; "stable" (timsort) for keys already nearly in order (runs of sorted
    keys: a tenth of the default sort's time on the fabric's arcs in ``out_arc`` order)."""
    s = np.sort(np.asarray(a).ravel(), kind=kind)
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


@dataclass(eq=False)
class Fabric:
    """Arrays describing the drawn network (no racks, no GPUs). Compared by identity (an
    :class:`~designer.engine.cache.EngineCache` keeps one Fabric per structure: see
    :func:`fabric_of`)."""

    #: what it is made of (see :func:`structure`): a topology with equal lists has this fabric
    structure: tuple[list, ...]
    nodes: list[str]
    index: dict[str, int]
    is_switch: np.ndarray  #: bool per node
    arc_src: np.ndarray
    arc_dst: np.ndarray
    arc_link: np.ndarray  #: index into ``link_ids``
    link_ids: list[str]
    out_ptr: np.ndarray  #: CSR of out-arcs per node (arcs sorted by source)
    out_arc: np.ndarray
    switch_pos: np.ndarray  #: node -> row in the switch distance table (-1 if not a switch)
    #: switch graph as CSR arrays over switch positions (neighbours sorted, no repeats)
    _sw_ptr: np.ndarray | None = None
    _sw_idx: np.ndarray | None = None
    _parts: "_SwitchParts | None" = None
    #: (first part of a shape, local row) -> distances from that switch to every switch of its part
    _dist: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    _routes: "OrderedDict[str, Routes]" = field(default_factory=OrderedDict)
    _net_of: list[frozenset[int]] | None = None  #: networks of each node (see ``networks``)
    _hop_index: "_HopIndex | None" = None
    _every_link: bool = False  #: link_ids are all the topology's links, in its order
    _by_address: tuple[np.ndarray, np.ndarray] | None = None  #: see ``node_indices``
    #: hash of a set of destinations -> what routing needs of it (see ``_destinations``)
    _destinations: dict[bytes, tuple] = field(default_factory=dict)
    #: (table, its node indices) of the tables last asked, most recent last: see ``_table_indices``
    _tables: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def networks(self, node: str) -> frozenset[int]:
        """The networks ``node`` is linked into: a network is a set of switches joined by links
        (one label each), or one direct endpoint-to-endpoint link (its own label). Two endpoints
        can exchange traffic iff they share a network, because only switches forward traffic.
        An unlinked node has none. (The sets of all nodes are made at once on the first call;
        nodes on the same single network share one.)"""
        i = self.index.get(node)
        if i is None:
            return _NO_NETWORK
        if self._net_of is None:
            self._net_of = self._network_sets()
        return self._net_of[i]

    def node_indices(self, names: Sequence[Any]) -> np.ndarray:
        """Node index of each of ``names`` (-1 for a name that is not a node).

        The names a stage passes are nearly always the very string objects of :attr:`nodes` (a
        placement takes its endpoints from the components), so they are matched by object
        identity first: ``id()`` of every name against the sorted ``id()`` of the nodes, with
        ``np.searchsorted`` (the fabric holds its node strings, so their addresses belong to no
        other live object). Names not found that way (an equal string made elsewhere) are looked
        up by value. The same answer as a dict look-up per name, without one per name.

        ``names`` may also be a sequence of rows of name tables (``traffic.Endpoints``: its
        ``segments()`` give ``(table, rows)`` pairs): each table is looked up once (and kept for
        the next phase's flows over the same table), then indexed by the rows."""
        segments = getattr(names, "segments", None)
        if segments is not None:
            parts = [self._table_indices(table)[rows] for table, rows in segments()]
            return np.concatenate(parts) if len(parts) != 1 else parts[0]
        n = len(names)
        if self._by_address is None:
            addr = np.fromiter(map(id, self.nodes), dtype=np.uint64, count=len(self.nodes))
            order = np.argsort(addr)
            self._by_address = (addr[order], order.astype(np.int64))
        addr, order = self._by_address
        mine = np.fromiter(map(id, names), dtype=np.uint64, count=n)
        at = np.minimum(np.searchsorted(addr, mine), max(len(addr) - 1, 0))
        hit = addr[at] == mine if len(addr) else np.zeros(n, dtype=bool)
        out = np.where(hit, order[at] if len(addr) else -1, -1)
        miss = np.flatnonzero(~hit)
        if len(miss):
            get = self.index.get
            out[miss] = [get(names[i], -1) for i in miss.tolist()]
        return out

    def _table_indices(self, table: np.ndarray) -> np.ndarray:
        """:meth:`node_indices` of the names of ``table`` (an object array), remembered for the
        few tables last asked (found by identity: a placement's rail table is one array object)."""
        hit = next((h for h in self._tables if h[0] is table), None)
        if hit is None:
            hit = (table, self.node_indices(table.tolist()))
            self._tables = (self._tables + [hit])[-4:]
        return hit[1]

    def _network_sets(self) -> list[frozenset[int]]:
        """Every node's networks (see :meth:`networks`): the (node, label) pairs of all arcs at
        once with numpy, then one shared set per label for the nodes on a single network."""
        ns = int(self.is_switch.sum())
        comp = self.parts().label
        # arcs in ``out_arc`` order: by source, so the keys below are nearly sorted already
        src, dst = self.arc_src[self.out_arc], self.arc_dst[self.out_arc]
        to_switch = self.is_switch[dst]
        label = np.where(to_switch, comp[np.maximum(self.switch_pos[dst], 0)] if ns else -1,
                         np.where(self.is_switch[src], -1, ns + self.arc_link[self.out_arc]))
        keep = label >= 0
        width = ns + len(self.link_ids) + 1
        pairs = sorted_unique(src[keep] * width + label[keep], kind="stable")
        node, labels = pairs // width, pairs % width
        count = np.bincount(node, minlength=len(self.nodes))  # labels per node (node is sorted)
        cuts = np.r_[0, np.cumsum(count)]
        out = np.empty(len(self.nodes), dtype=object)
        out.fill(_NO_NETWORK)
        one = np.flatnonzero(count == 1)
        distinct, which = unique_below(labels[cuts[one]], width)
        shared = np.empty(len(distinct), dtype=object)
        for k, l in enumerate(distinct.tolist()):
            shared[k] = frozenset((l,))
        out[one] = shared[which]
        for i in np.flatnonzero(count > 1).tolist():
            out[i] = frozenset(labels[cuts[i]:cuts[i + 1]].tolist())
        return out.tolist()

    def hop_index(self) -> "_HopIndex":
        """Lookup arrays of the routing walk (see :class:`_HopIndex`), made once per fabric."""
        if self._hop_index is None:
            self._hop_index = _HopIndex(self)
        return self._hop_index

    def parts(self) -> "_SwitchParts":
        """The connected parts of the switch graph (see :class:`_SwitchParts`)."""
        if self._parts is None:
            assert self._sw_ptr is not None and self._sw_idx is not None  # made with the fabric
            self._parts = _SwitchParts(self._sw_ptr, self._sw_idx)
        return self._parts

    def distances_from(self, switch_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Hop distances from each switch of ``switch_rows`` to every switch of its own part (the
        other parts are out of reach): returns one int32 array holding them all and where each
        row's distances start in it (indexed by a switch's position inside its part). Parts of
        the same shape (the rail planes of a rail-optimized fabric) share their breadth-first
        searches: the distances between the k-th and the l-th switch of two parts whose
        adjacency is the same are the same. Results are cached on the fabric."""
        parts = self.parts()
        switch_rows = np.asarray(switch_rows, dtype=np.int64)
        keys = list(zip(parts.shape_of[parts.label[switch_rows]].tolist(), parts.local[switch_rows].tolist()))
        need: dict[int, list[int]] = {}
        for shape, row in dict.fromkeys(keys):
            if (shape, row) not in self._dist:
                need.setdefault(shape, []).append(row)
        for shape, rows in need.items():
            indptr, indices = parts.block(shape)
            for r, row in zip(rows, _bfs_distances(indptr, indices, rows)):
                self._dist[(shape, r)] = row
        distinct = list(dict.fromkeys(keys))
        at = {k: i for i, k in enumerate(distinct)}
        arrays = [self._dist[k] for k in distinct]
        starts = np.cumsum([0] + [len(a) for a in arrays])[:-1].astype(np.int64)
        flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int32)
        return flat, starts[[at[k] for k in keys]] if keys else _EMPTY


class _HopIndex:
    """What the routing walk looks arcs up by: ``pair_key`` = source node × node count + head
    node of every arc in ``out_arc`` order (sorted, so the arcs between two nodes are one run
    found by ``np.searchsorted``), the out-arcs to switches only as CSR (``sw_ptr`` per node,
    ``sw_arc`` in ``out_arc`` order: the only arcs a flow may take that does not end at the
    arc's head), ``switch_node``: the node of each switch row, ``head``: the head node of every
    arc in ``out_arc`` order, and ``back``: the position in ``out_arc`` of each arc's reverse (arc
    i and arc i + links are the two directions of link i)."""

    def __init__(self, fab: Fabric) -> None:
        nn = len(fab.nodes)
        self.head = head = fab.arc_dst[fab.out_arc]
        self.pair_key = fab.arc_src[fab.out_arc] * nn + head
        na, nl = len(fab.out_arc), len(fab.arc_src) // 2
        position = np.empty(na, dtype=np.int64)
        position[fab.out_arc] = np.arange(na, dtype=np.int64)
        self.back = np.r_[position[nl:], position[:nl]]  # arc k -> where its reverse sits
        to_switch = fab.is_switch[head]
        self.sw_arc = fab.out_arc[to_switch]
        counts = np.bincount(fab.arc_src[self.sw_arc], minlength=nn)
        self.sw_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
        self.switch_node = np.flatnonzero(fab.is_switch)
        #: ``out_arc`` then ``sw_arc``: the arcs a next-hop set is a run of
        self.base = np.concatenate([fab.out_arc, self.sw_arc])
        #: the one switch an endpoint's switch arcs all lead to (-1: none, several, or a switch)
        sw_heads = fab.arc_dst[self.sw_arc]
        has = (counts > 0) & ~fab.is_switch
        if len(sw_heads):
            first = sw_heads[np.minimum(self.sw_ptr[:-1], len(sw_heads) - 1)]
            last = sw_heads[np.maximum(self.sw_ptr[1:] - 1, 0)]
            self.lone_switch = np.where(has & (first == last), first, -1)
        else:
            self.lone_switch = np.full(nn, -1, dtype=np.int64)


class _SwitchParts:
    """Connected parts of the switch graph: ``label`` of each switch (row), its ``local`` position
    inside its part (switches in row order), and ``shape_of`` each part: the first part whose
    adjacency, written in local positions, is the same (one breadth-first search serves all).
    Parts are numbered by their lowest switch row (as a depth-first labelling in row order does)."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        ns = len(indptr) - 1
        self.label = _components(indptr, indices)
        order = np.argsort(self.label, kind="stable")
        counts = np.bincount(self.label) if ns else _EMPTY
        self.start = np.r_[0, np.cumsum(counts)].astype(np.int64)
        self.local = np.empty(ns, dtype=np.int64)
        self.local[order] = np.arange(ns) - self.start[self.label[order]]
        pos = np.empty(ns, dtype=np.int64)
        pos[order] = np.arange(ns)
        deg = np.diff(indptr)
        self._ptr, self._idx = _csr(pos[np.repeat(np.arange(ns), deg)], pos[indices], ns)
        self.shape_of = np.arange(len(counts), dtype=np.int64)
        seen: dict[bytes, int] = {}
        for c in range(len(counts)):
            ptr, idx = self._local_csr(c)
            sig = blake2b(np.int64(counts[c]).tobytes() + ptr.tobytes() + b"|" + idx.tobytes(),
                                  digest_size=16).digest()
            self.shape_of[c] = seen.setdefault(sig, c)

    def _local_csr(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        s, e = int(self.start[c]), int(self.start[c + 1])
        lo, hi = self._ptr[s], self._ptr[e]
        return self._ptr[s:e + 1] - lo, self._idx[lo:hi] - s

    def block(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        """Adjacency of part ``c`` in local positions, as CSR arrays (indptr, indices)."""
        return self._local_csr(c)


def _csr(row: np.ndarray, col: np.ndarray, n: int, kind: SortKind | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CSR arrays (indptr, indices) of the ``n`` x ``n`` 0/1 matrix with ones at (row, col):
    repeated entries count once and each row's columns are sorted (``kind``: see
    :func:`sorted_unique`)."""
    key = sorted_unique(row.astype(np.int64) * max(n, 1) + col, kind)
    indptr = np.searchsorted(key, np.arange(n + 1, dtype=np.int64) * max(n, 1)).astype(np.int64)
    return indptr, key % max(n, 1)


def _components(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Connected-component label of each vertex of the undirected graph in CSR form, numbered
    0, 1, ... in the order of each component's lowest vertex.

    The lowest vertex of each component by hook and compress over the edge list
    (``topology.parts.lowest_labels``, shared with the validator), then numbered."""
    n = len(indptr) - 1
    if n == 0:
        return _EMPTY
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    lowest = lowest_labels(n, rows, indices)
    return np.unique(lowest, return_inverse=True)[1].astype(np.int64)


#: sources searched together by :func:`_bfs_distances` (bits of 64-bit words per vertex)
_BFS_SOURCES = 256


def _bfs_distances(indptr: np.ndarray, indices: np.ndarray, sources: list[int]) -> np.ndarray:
    """Hop distances (int32, _INF where out of reach) from each of ``sources`` to every vertex
    of the undirected graph in CSR form: one row per source.

    Bit-parallel breadth-first search (multi-source BFS, Then et al., 'The More the Merrier',
    VLDB 2014): each vertex holds one bit per source, set once the source has reached it; a level
    ORs every vertex's bits with its neighbours' (``np.bitwise_or.reduceat`` over the CSR rows), so
    a level costs one pass over the edges for 64 sources per word, and a vertex's distance from a
    source is the level at which that bit appears: the breadth-first distances exactly. The
    levels are as many as the graph's diameter: a handful in a Clos fabric (a chain of 2,000
    switches would take ~1 s, where a queue-based search per source takes 20 ms)."""
    n = len(indptr) - 1
    k = len(sources)
    out = np.full((k, n), _INF, dtype=np.int32)
    if k == 0 or n == 0:
        return out
    has = np.flatnonzero(np.diff(indptr) > 0)
    starts = indptr[has]
    for c0 in range(0, k, _BFS_SOURCES):
        src = np.asarray(sources[c0:c0 + _BFS_SOURCES], dtype=np.int64)
        width = -(-len(src) // 64) * 64
        seen = np.zeros((n, width), dtype=bool)
        seen[src, np.arange(len(src))] = True
        # bits packed per byte position and OR-ed as whole words: the packing order does not
        # matter to OR, and unpacking the same way gives the bits back
        reach = np.packbits(seen, axis=1, bitorder="little").view(np.uint64)
        dist = np.full((n, width), _INF, dtype=np.int32)
        dist[seen] = 0
        level = 0
        while True:
            level += 1
            nxt = reach.copy()
            if len(indices):
                nxt[has] |= np.bitwise_or.reduceat(reach[indices], starts, axis=0)
            grew = np.flatnonzero((nxt != reach).any(axis=1))  # vertices reached by new sources
            if not len(grew):
                break
            fresh = np.unpackbits((nxt[grew] & ~reach[grew]).view(np.uint8), axis=1,
                                  bitorder="little").view(bool)
            dist[grew] = np.where(fresh, level, dist[grew])
            reach = nxt
        out[c0:c0 + len(src)] = dist[:, :len(src)].T
    return out


class _ColumnDistances:
    """Hop distance from a switch to a destination column: to the nearest of the column's
    switches (their switch positions, any number), or _INF when none is in reach. The columns
    are those of ``single`` (one switch each, as an array) then those of ``multi`` (tuples)."""

    def __init__(self, fab: Fabric, single: np.ndarray, multi: list[tuple[int, ...]]) -> None:
        rows = len(single) + len(multi)
        self.ncols = rows
        width = max([len(r) for r in multi] + [1])
        table = np.full((rows, width), -1, dtype=np.int64)
        table[:len(single), 0] = single
        for j, r in enumerate(multi, len(single)):
            table[j, :len(r)] = r
        self.table = table
        used = sorted_unique(table[table >= 0])
        self.flat, starts = fab.distances_from(used)
        parts = fab.parts()
        self.label, self.local = parts.label, parts.local
        self.start_of = np.full(max(len(fab.switch_pos), 1), -1, dtype=np.int64)
        if len(used):
            self.start_of[used] = starts
        #: node of the column's switch when it has only one (else -1)
        one = (table[:, 0] >= 0) & (table[:, 1] < 0 if width > 1 else True)
        sw_node = np.r_[fab.hop_index().switch_node, -1]  # row -1: no switch
        self.only = np.where(one, sw_node[table[:, 0]], -1) if rows else _EMPTY

    def __call__(self, sw: np.ndarray, col: np.ndarray) -> np.ndarray:
        if self.table.shape[1] == 1:  # at most one switch per column: no minimum to take
            row = self.table[col, 0]
            ok = row >= 0
            ok &= self.label[np.maximum(row, 0)] == self.label[sw]
            at = np.where(ok, self.start_of[row] + self.local[sw], 0)
            return np.where(ok, self.flat[at] if len(self.flat) else 0, _INF).astype(np.int64)
        out = np.full(len(sw), _INF, dtype=np.int64)
        for k in range(self.table.shape[1]):
            row = self.table[col, k]
            ok = row >= 0
            ok[ok] = self.label[row[ok]] == self.label[sw[ok]]
            if ok.any():
                d = self.flat[self.start_of[row[ok]] + self.local[sw[ok]]].astype(np.int64)
                out[ok] = np.minimum(out[ok], d)
        return out


def structure(topology) -> tuple[tuple[list[str], list[str], list[str], list[str], list[str]], list]:
    """What a :class:`Fabric` is made of, as lists: ids and kinds of the components that are not
    racks or management switches (``designer.topology.management``: the out-of-band network
    carries no training traffic, so its links drop out with them), the link ids, each link's two
    ends; and the Link objects. Ids are the dicts' keys;
    racks are left out by ``itertools.compress`` over a mask made by ``map`` (C loops)."""
    comps = topology.components
    kinds = [c.kind for c in comps.values()]
    managed = frozenset(c.id for c in compress(comps.values(), map(eq, kinds, repeat("switch")))
                        if c.props and c.props.get("management") is True)  # management_ids
    if managed:  # management switches (and so their links) carry no traffic: not in the fabric
        keep = [k != "rack" and cid not in managed for cid, k in zip(comps, kinds)]
        ids = list(compress(comps, keep))
        kinds = list(compress(kinds, keep))
    elif "rack" in kinds:
        keep = list(map(ne, kinds, repeat("rack")))
        ids = list(compress(comps, keep))
        kinds = list(compress(kinds, keep))
    else:
        ids = list(comps)
    links = list(topology.links.values())
    ends_a = [l.a for l in links]
    ends_b = [l.b for l in links]
    return (ids, kinds, list(topology.links), ends_a, ends_b), links


def fabric_of(topology, cache: EngineCache | None = None) -> Fabric:
    """The Fabric of ``topology``: ``cache.fabric(topology)`` (the one it keeps for this topology
    at its version, or for an equal structure; see :class:`~designer.engine.cache.EngineCache`),
    or without a cache a new one."""
    if cache is not None:
        return cache.fabric(topology)
    return new_fabric(*structure(topology))


def _keep_last(memo: dict, size: int) -> None:
    """Drop all but the ``size`` entries last added to ``memo`` (a run in another thread may be
    adding too: the keys are listed at once and dropped if still there)."""
    for key in list(memo)[:-size]:
        memo.pop(key, None)


def new_fabric(lists: tuple[list[str], ...], links: list) -> Fabric:
    """A Fabric of the structure ``lists`` (see :func:`structure`) and its Link objects."""
    nodes, kinds, link_ids, ends_a, ends_b = lists
    index = dict(zip(nodes, range(len(nodes))))
    is_switch = np.fromiter(map(eq, kinds, repeat("switch")), dtype=bool, count=len(kinds))
    nl = len(links)
    a = np.fromiter(map(index.get, ends_a, repeat(-1, nl)), dtype=np.int64, count=nl)
    b = np.fromiter(map(index.get, ends_b, repeat(-1, nl)), dtype=np.int64, count=nl)
    keep = (a >= 0) & (b >= 0)  # a link to a rack (or to nothing) carries no traffic
    if not keep.all():
        link_ids = [l.id for l, k in zip(links, keep.tolist()) if k]
        a, b = a[keep], b[keep]
    nl = len(link_ids)
    arc_src = np.concatenate([a, b])
    arc_dst = np.concatenate([b, a])
    arc_link = np.concatenate([np.arange(nl), np.arange(nl)])
    # arcs by source, then head, then arc number: one stable sort of a combined key (half the
    # time of np.lexsort over the two columns)
    out_arc = np.argsort(arc_src * max(len(nodes), 1) + arc_dst, kind="stable").astype(np.int64)
    out_ptr = np.r_[0, np.cumsum(np.bincount(arc_src, minlength=len(nodes)))].astype(np.int64)
    switch_pos = np.full(len(nodes), -1, dtype=np.int64)
    switch_pos[is_switch] = np.arange(int(is_switch.sum()))
    ns = int(is_switch.sum())
    # switch-to-switch arcs in ``out_arc`` order: already by (source, head) position
    src_o, dst_o = arc_src[out_arc], arc_dst[out_arc]
    both = is_switch[src_o] & is_switch[dst_o]
    sw_ptr, sw_idx = _csr(switch_pos[src_o[both]], switch_pos[dst_o[both]], ns, kind="stable")
    return Fabric(structure=lists, nodes=nodes, index=index, is_switch=is_switch, arc_src=arc_src,
                  arc_dst=arc_dst, arc_link=arc_link, link_ids=link_ids, out_ptr=out_ptr, out_arc=out_arc,
                  switch_pos=switch_pos, _sw_ptr=sw_ptr, _sw_idx=sw_idx, _every_link=bool(keep.all()))


@dataclass
class Routes:
    """Sparse flow–arc incidence: flow ``flow[k]`` puts fraction ``share[k]`` of its rate on
    arc ``arc[k]``. ``routed[f]`` is False for a flow with no path."""

    flow: np.ndarray
    arc: np.ndarray
    share: np.ndarray
    routed: np.ndarray
    hops: np.ndarray  #: arcs on the (longest) path of each flow


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a fast, well-spread integer hash (Steele et al., OOPSLA 2014)."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return x


def route(fab: Fabric, src: np.ndarray, dst: np.ndarray, routing: str = "ecmp",
          seed: int = 0) -> Routes:
    """Shortest-path routes of flows ``src[i] -> dst[i]`` (node indices); cached per flow set."""
    if routing not in ROUTING:
        raise ValueError(f"routing must be one of {', '.join(ROUTING)}, got {routing!r}")
    h = blake2b(src.astype(np.int64).tobytes() + b"|" + dst.astype(np.int64).tobytes()
                        + f"|{routing}|{seed}".encode(), digest_size=16).hexdigest()
    hit = fab._routes.get(h)
    if hit is not None:
        return hit
    res = _route(fab, src.astype(np.int64), dst.astype(np.int64), routing, seed)
    fab._routes[h] = res
    while len(fab._routes) > 16:
        fab._routes.popitem(last=False)
    return res


def _destination_columns(fab: Fabric, dst_u: np.ndarray) -> tuple[np.ndarray, "_ColumnDistances"]:
    """Hop distance of every switch to each destination endpoint, one column per distinct set of
    switches the endpoints hang off (all NICs under one leaf share a column): the distance of a
    switch to an endpoint is 1 + its distance to the nearest of those switches. Returns the column
    of each endpoint of ``dst_u`` and the distances (a :class:`_ColumnDistances`). The usual
    endpoint has one switch: those are grouped with numpy; the rest (multi-homed) one by one."""
    ptr, nbr = fab.out_ptr, fab.hop_index().head
    deg = ptr[dst_u + 1] - ptr[dst_u]
    owner = np.repeat(np.arange(len(dst_u)), deg)
    first = np.cumsum(deg) - deg
    heads = nbr[np.repeat(ptr[dst_u], deg) + np.arange(int(deg.sum())) - np.repeat(first, deg)]
    on_switch = fab.is_switch[heads]
    n_sw = np.bincount(owner[on_switch], minlength=len(dst_u))
    single = n_sw == 1
    lone_pos = np.full(len(dst_u), -1, dtype=np.int64)
    lone_pos[owner[on_switch][single[owner[on_switch]]]] = fab.switch_pos[heads[on_switch][single[owner[on_switch]]]]
    rows, col_of_lone = unique_below(lone_pos[single], max(len(fab.switch_pos), 1))  # switch positions
    col_of_dst = np.empty(len(dst_u), dtype=np.int64)
    col_of_dst[single] = col_of_lone
    multi: dict[tuple[int, ...], int] = {}
    for j in np.flatnonzero(~single):
        mine = heads[first[j]:first[j] + deg[j]]
        key = tuple(sorted(set(fab.switch_pos[mine[fab.is_switch[mine]]].tolist())))
        col_of_dst[j] = multi.setdefault(key, len(rows) + len(multi))
    return col_of_dst, _ColumnDistances(fab, rows, list(multi))


def _destinations(fab: Fabric, dst_u: np.ndarray) -> tuple:
    """What the routing walk needs of its distinct destinations ``dst_u`` (sorted node indices)
    alone: each one's column and the column distances (:func:`_destination_columns`), and for a
    destination linked to one node only (a NIC under its leaf), that node and the run of
    ``out_arc`` holding its arcs to the destination (``lone_nb`` -1: several neighbours, looked
    up per hop). Kept on the fabric for the few last destination sets (the phases of a run
    mostly send to the same endpoints)."""
    key = blake2b(dst_u.tobytes(), digest_size=16).digest()
    hit = fab._destinations.get(key)
    if hit is not None:
        return hit
    col_of_dst, col_dist = _destination_columns(fab, dst_u)
    hx = fab.hop_index()
    deg = fab.out_ptr[dst_u + 1] - fab.out_ptr[dst_u]
    lone_nb = np.where(deg > 0, fab.arc_dst[fab.out_arc[np.minimum(fab.out_ptr[dst_u], len(fab.out_arc) - 1)]], -1) \
        if len(fab.out_arc) else np.full(len(dst_u), -1, dtype=np.int64)
    last_nb = fab.arc_dst[fab.out_arc[np.maximum(fab.out_ptr[dst_u + 1] - 1, 0)]] if len(fab.out_arc) else lone_nb
    lone_nb[lone_nb != last_nb] = -1  # several neighbours
    # the arcs from that neighbour to the destination are the reverses of the destination's own
    # arcs (all to it): as many, one run of ``out_arc`` that starts at the first of them
    first = np.cumsum(deg) - deg
    own = np.repeat(fab.out_ptr[dst_u] - first, deg) + np.arange(int(deg.sum()))
    back = hx.back[fab.out_arc[own]]
    lone_lo = np.zeros(len(dst_u), dtype=np.int64)
    lone_lo[deg > 0] = np.minimum.reduceat(back, first[deg > 0]) if len(back) else 0
    lone_n = np.where(lone_nb >= 0, deg, 0)
    for a in (col_of_dst, lone_nb, lone_lo, lone_n):
        a.flags.writeable = False  # shared by the walks over the same destinations
    out = (col_of_dst, col_dist, lone_nb, lone_lo, lone_n)
    fab._destinations[key] = out
    _keep_last(fab._destinations, 4)
    return out


def _route(fab: Fabric, src: np.ndarray, dst: np.ndarray, routing: str, seed: int) -> Routes:
    """Walk every flow hop by hop. At a node the equal-cost next hops of a flow depend only on
    the node and the flow's destination column (:func:`_destination_columns`; all NICs under one
    leaf share one), unless the destination hangs off the node itself (then they are the arcs to
    it): the next-hop sets are computed once per distinct (node, column) of a hop, not once per
    flow (routing by equivalence classes: a 16k-GPU ring phase has ~20k flows but a few thousand
    such pairs per hop). Each flow then picks among its set by its own hash (ECMP) or splits over
    all of it (adaptive), exactly as a walk over every candidate of every flow would."""
    nf = len(src)
    nn = len(fab.nodes)
    dst_u, dst_inv = unique_below(dst, nn)
    col_of_dst, col_dist, lone_nb, lone_lo, lone_n = _destinations(fab, dst_u)
    to = _Targets(dst=dst, dst_inv=dst_inv, dst_col=col_of_dst[dst_inv], col_dist=col_dist,
                  lone_nb=lone_nb, lone_lo=lone_lo, lone_n=lone_n)
    ns = int(fab.is_switch.sum())
    hx = fab.hop_index()
    flow_hash = _mix(np.arange(nf, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                     + _mix(src * 1_000_003 + dst) + np.uint64(seed))
    st_f = np.arange(nf, dtype=np.int64)
    st_node = src.copy()
    st_mass: np.ndarray = np.ones(nf)
    out_f: list[np.ndarray] = []
    out_a: list[np.ndarray] = []
    out_m: list[np.ndarray] = []
    hops = np.zeros(nf, dtype=np.int64)
    routed = np.ones(nf, dtype=bool)
    for _ in range(4 * ns + 4):
        active = st_node != dst[st_f]
        st_f, st_node, st_mass = st_f[active], st_node[active], st_mass[active]
        if len(st_f) == 0:
            break
        lo, n, extra = _next_hop_sets(fab, to, st_f, st_node)
        lost = n == 0
        if lost.any():  # no neighbour at all, or none that leads to the destination
            routed[st_f[lost]] = False
            keep = ~lost
            st_f, st_node, st_mass, lo, n = st_f[keep], st_node[keep], st_mass[keep], lo[keep], n[keep]
            if len(st_f) == 0:
                break
        if routing == "ecmp":
            # one hash per (flow, switch): the same flow may take different ports at each hop
            pick = (_mix(flow_hash[st_f] ^ _mix(st_node)) % n.astype(np.uint64)).astype(np.int64)
            na = _take(hx.base, extra, lo + pick)
            nf_, mass = st_f, st_mass
            hops[nf_] += 1
        else:
            seg = np.repeat(np.arange(len(st_f)), n)
            na = _take(hx.base, extra, np.repeat(lo, n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
            nf_ = st_f[seg]
            mass = (st_mass / n)[seg]
            hops[sorted_unique(st_f)] += 1
        out_f.append(nf_)
        out_a.append(na)
        out_m.append(mass)
        st_f, st_node, st_mass = nf_, fab.arc_dst[na], mass
        if routing == "adaptive" and len(st_f):
            key = st_f * nn + st_node
            uk, inv = np.unique(key, return_inverse=True)
            st_mass = np.bincount(inv, weights=st_mass)
            st_f, st_node = uk // nn, uk % nn
    flow, arc, share = _incidence(fab, out_f, out_a, out_m, routing)
    routed &= src != dst
    return Routes(flow, arc, share, routed, hops)


@dataclass
class _Targets:
    """The destinations of a flow set as the routing walk reads them: each flow's destination
    node, the index of it among the distinct ones, its distance column, and per distinct
    destination the lone neighbour and its run of arcs (see :func:`_destinations`)."""

    dst: np.ndarray
    dst_inv: np.ndarray
    dst_col: np.ndarray
    col_dist: "_ColumnDistances"
    lone_nb: np.ndarray
    lone_lo: np.ndarray
    lone_n: np.ndarray


def _next_hop_sets(fab: Fabric, to: _Targets, st_f: np.ndarray, st_node: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The equal-cost next hops of flows ``st_f`` at nodes ``st_node``: flow i's are the arcs
    ``[lo[i], lo[i] + n[i])`` of the fabric's ``hop_index().base`` followed by ``extra`` (the
    arcs this hop worked out); ``n`` 0 where no neighbour leads to the destination."""
    nn = len(fab.nodes)
    ncol = max(to.col_dist.ncols, 1)
    hx = fab.hop_index()
    ordered_arc = fab.out_arc
    j = to.dst_inv[st_f]
    nb = to.lone_nb[j]
    near = st_node == nb
    lo = np.where(near, to.lone_lo[j], 0)
    n = np.where(near, to.lone_n[j], 0)
    many = np.flatnonzero(nb < 0)
    if len(many):
        q = st_node[many] * nn + to.dst[st_f[many]]
        a_lo = np.searchsorted(hx.pair_key, q, "left")  # pair_key: sorted (out_arc order)
        a_n = np.searchsorted(hx.pair_key, q, "right") - a_lo
        lo[many], n[many] = a_lo, a_n
        near[many] = a_n > 0  # the destination hangs off this node: go straight to it
    far = np.flatnonzero(~near)
    if len(far):
        # an endpoint whose switch arcs all lead to one switch takes them all, if that switch
        # reaches the destination (the comparison of :func:`_next_hops` has one candidate
        # distance): no per-(node, column) work for a phase's first hop
        x = st_node[far]
        sw = hx.lone_switch[x]
        ep = sw >= 0
        if ep.any():
            fe, xe = far[ep], x[ep]
            reach = to.col_dist(fab.switch_pos[sw[ep]], to.dst_col[st_f[fe]]) < _INF
            lo[fe] = np.where(reach, len(ordered_arc) + hx.sw_ptr[xe], 0)
            n[fe] = np.where(reach, hx.sw_ptr[xe + 1] - hx.sw_ptr[xe], 0)
            far = far[~ep]
    extra = _EMPTY
    if len(far):
        keys, inv = np.unique(st_node[far] * ncol + to.dst_col[st_f[far]], return_inverse=True)
        k_lo, k_n, k_arcs = _next_hops(fab, keys // ncol, keys % ncol, to.col_dist)
        lo[far] = k_lo[inv] + len(hx.base)
        n[far] = k_n[inv]
        extra = k_arcs
    return lo, n, extra


def _incidence(fab: Fabric, out_f: list, out_a: list, out_m: list, routing: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walk's (flow, arc, share) steps in (flow, arc) order, the repeated pairs of split flows
    merged (an ECMP flow takes each arc of its path once, with its whole rate: sorting is all it
    needs)."""
    flow = np.concatenate(out_f) if out_f else _EMPTY
    arc = np.concatenate(out_a) if out_a else _EMPTY
    share = np.concatenate(out_m) if out_m else np.zeros(0)
    if len(flow):
        key = flow * len(fab.arc_src) + arc
        if routing == "ecmp":
            uk = np.sort(key)
            share = np.ones(len(uk))
        else:
            uk, inv = np.unique(key, return_inverse=True)
            share = np.bincount(inv, weights=share)
        flow, arc = uk // len(fab.arc_src), uk % len(fab.arc_src)
    return flow, arc, share


def _take(base: np.ndarray, extra: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``np.concatenate([base, extra])[at]`` without copying ``base`` (the routing walk's
    ~1M-arc lookup table) to append the few arcs of one hop."""
    if not len(extra):
        return cast(np.ndarray, base[at])
    nb = len(base)
    out = np.empty(len(at), dtype=base.dtype)
    inside = at < nb
    out[inside] = base[at[inside]]
    out[~inside] = extra[at[~inside] - nb]
    return out


def unique_below(x: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_inverse=True)`` for values in [0, n), by marking instead of sorting
    (O(len(x) + n); values outside take ``np.unique`` itself)."""
    if len(x) and (x.min() < 0 or x.max() >= n):
        return np.unique(x, return_inverse=True)
    seen = np.zeros(n, dtype=bool)
    seen[x] = True
    values = np.flatnonzero(seen)
    rank = np.empty(n, dtype=np.int64)  # read only where marked: no pass over all n
    rank[values] = np.arange(len(values), dtype=np.int64)
    return values, rank[x]


def _next_hops(fab: Fabric, node: np.ndarray, col: np.ndarray, col_dist: "_ColumnDistances"
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equal-cost next hops from each ``node[k]`` towards destination column ``col[k]`` when the
    destination does not hang off the node: the out-arcs (in ``out_arc`` order) to switches at
    the least distance to the column. Returns, per k, the start and count of its arcs in the
    returned array (count 0: no switch neighbour leads there).

    A node next to the only switch of its column goes to that switch: at distance 0 it is
    nearer than any other neighbour, so the arcs to it (one run in ``out_arc`` order, found by
    ``np.searchsorted``) are the whole set, as the full comparison gives. The other nodes compare
    the distances of all their switch neighbours (minimum per node by ``np.minimum.reduceat``)."""
    hx = fab.hop_index()
    nn = len(fab.nodes)
    count = np.zeros(len(node), dtype=np.int64)
    first = np.zeros(len(node), dtype=np.int64)  # where a node's arcs start (in ``out_arc`` or ``cand``)
    only = col_dist.only[col]
    q = node * nn + only
    lo = np.searchsorted(hx.pair_key, q, "left")
    n_adj = np.where(only >= 0, np.searchsorted(hx.pair_key, q, "right") - lo, 0)
    adj = n_adj > 0
    rest = np.flatnonzero(~adj)
    ok_arcs = _EMPTY
    if len(rest):
        ptr = hx.sw_ptr
        r_node = node[rest]
        deg = ptr[r_node + 1] - ptr[r_node]
        total = int(deg.sum())
        seg = np.repeat(np.arange(len(rest)), deg)
        starts = np.cumsum(deg) - deg
        cand = hx.sw_arc[np.repeat(ptr[r_node] - starts, deg) + np.arange(total)]
        d = 1 + col_dist(fab.switch_pos[fab.arc_dst[cand]], col[rest][seg])
        best = np.full(len(rest), _INF, dtype=np.int64)
        has = deg > 0
        if total:
            best[has] = np.minimum.reduceat(d, starts[has])
        ok = (d == best[seg]) & (best[seg] < _INF)
        count[rest] = np.bincount(seg[ok], minlength=len(rest))
        ok_arcs = cand[ok]
    count[adj] = n_adj[adj]
    first[adj] = lo[adj]
    out_start = np.cumsum(count) - count
    # arcs of each node in order: the adjacent ones' runs of ``out_arc``, the others' chosen arcs
    pos = np.arange(int(count.sum())) - np.repeat(out_start, count)
    from_run = np.repeat(adj, count)
    arcs = np.empty(len(pos), dtype=np.int64)
    arcs[from_run] = fab.out_arc[np.repeat(first[adj], count[adj]) + pos[from_run]]
    arcs[~from_run] = ok_arcs
    return out_start, count, arcs


#: utilizations closer than this (relative) are one figure wherever a result picks the higher of
#: two (a link's busiest phase, the uplinks at most half as busy as the bottleneck): two arcs
#: that both fill read 1 give or take rounding (1e-14 at 131k GPUs), and rounding must not pick;
#: well below anything printed (0.1 %) and near :func:`max_min`'s saturation tolerance (1e-9)
UTIL_TIE = 1e-9


@dataclass
class Solution:
    """Max-min fair rates of one phase."""

    rate_GBps: np.ndarray  #: per flow
    arc_load_GBps: np.ndarray  #: per arc
    arc_capacity_GBps: np.ndarray
    bottleneck_arc: np.ndarray  #: per flow: its most utilized arc (-1 if unrouted)
    iterations: int
    #: ``arc_utilization`` as :func:`max_min` computed it (read-only), or None
    _utilization: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def arc_utilization(self) -> np.ndarray:
        if self._utilization is not None:
            return self._utilization
        cap = self.arc_capacity_GBps
        return cast(np.ndarray, np.divide(self.arc_load_GBps, cap, out=np.zeros_like(cap), where=cap > 0))


def max_min(routes: Routes, capacity: np.ndarray, demand: np.ndarray) -> Solution:
    """Max-min fair rates by progressive filling (see module docstring). ``demand`` caps each
    flow (np.inf for a flow that takes what it gets). Unrouted flows get rate 0.

    Algorithm. Progressive filling raises one common level: every growing flow's rate is the
    level, a frozen flow keeps the level it froze at. So the *level* at which arc ``a`` fills is
    ``t_a = (c_a - F_a) / S_a``: its capacity less the load of the flows frozen on it, over the
    shares of the growing flows crossing it (``np.bincount`` of their entries, in flow order).
    Each round works out every arc's level and, for every growing flow, ``m_f``: the least of its
    demand and the levels of the arcs it crosses (``np.minimum.reduceat`` over its run of
    entries; routes are in (flow, arc) order). Then it freezes, all at once:

    * the flows of every arc whose flows all have ``m_f >= t_a`` (such an arc is ``final``), each
      at its ``m_f`` (``t_a`` for the flows it limits);
    * every flow whose demand is at most the level of each of its arcs, at its demand.

    Why this is exact (the rates sequential progressive filling gives, one saturation or demand
    event at a time). A flow freezing at rate ``r <= t_b`` on arc ``b`` never lowers ``t_b``:
    ``(c - F - r s) / (S - s) >= t_b`` since ``c - F = t_b S``. So levels only rise as filling goes
    on, and a growing flow cannot freeze below its present ``m_f``: its demand is fixed and each
    of its arcs fills at its present level or later. On a final arc no flow freezes below
    ``t_a``, so nothing changes ``c_a - F_a`` or ``S_a`` before the common level reaches ``t_a``:
    the arc fills exactly at ``t_a`` and freezes its flows there. A flow whose demand is below
    every level of its arcs likewise meets its demand before any of them fills. The events a
    round takes are thus events sequential filling meets, at the same levels, and taking them
    together changes none of them (each is decided by its own arcs, whose levels only rise).
    Progress: the arc of the lowest level is final, or the flow of the lowest demand is met, so
    each round freezes at least every event at the lowest level still pending, and the rounds
    are at most the distinct levels of sequential filling (one per event) and often far fewer:
    events on arcs that share no flow are taken in one round however far apart their levels
    (the ECMP collisions of 229,376 pipeline flows at 131,072 GPUs: 3,221 distinct levels,
    8 rounds). What differs from filling one event at a time is rounding: a rate is the level
    ``(c - F) / S`` of its arc, not a sum of thousands of steps (differences ~1e-14 relative).
    Ties: an arc within the saturation tolerance of its level (``1e-9`` of the largest capacity
    plus ``1e-9`` of its own, in GB/s) counts as full with its flows, as sequential filling's
    test ``remaining <= tolerance`` has it, and a flow within 1e-12 GB/s of its demand has met it.

    The rounds work on the arcs the growing flows cross, numbered in arc order (the other arcs
    carry nothing of theirs), renumbered when the entries left are fewer than a quarter of them,
    so a round's passes over arcs are as long as those, not as the whole fabric."""
    nf, na = len(demand), len(capacity)
    rate = np.zeros(nf)
    active = routes.routed & (demand > 0)
    tol = 1e-9 * max(1.0, float(capacity.max()) if na else 1.0)
    live = np.flatnonzero(active[routes.flow])  # entries of the growing flows
    e_flow = routes.flow[live]
    if len(e_flow) > 1 and not np.all(e_flow[1:] >= e_flow[:-1]):
        live = live[np.argsort(e_flow, kind="stable")]  # each flow's entries one run
        e_flow = routes.flow[live]
    e_share = routes.share[live]
    arcs, e_arc = unique_below(routes.arc[live], na)  # the arcs crossed, and each entry's among them
    flows, e_pos = unique_below(e_flow, nf)  # the growing flows with entries, each entry's among them
    bare = active.copy()
    bare[flows] = False  # growing flows that cross no arc: they get their demand
    if np.isinf(demand[bare]).any():
        raise ValueError("a flow with unlimited demand crosses no link")
    rate[bare] = demand[bare]
    dem = demand[flows]
    remaining = np.array(capacity[arcs], dtype=float)  # capacity less the frozen flows' load
    full = tol + 1e-9 * remaining  # an arc with at most this much left is saturated
    it = 0
    while len(flows):
        it += 1
        nu = len(remaining)
        load = np.bincount(e_arc, weights=e_share, minlength=nu)
        used = load > 1e-12
        level = np.full(nu, np.inf)  # the level at which each arc fills
        np.divide(remaining, load, out=level, where=used)
        slack = np.divide(full, load, out=np.zeros(nu), where=used)  # the tolerance, as a level
        e_level = level[e_arc]
        starts = np.flatnonzero(np.r_[True, e_pos[1:] != e_pos[:-1]])  # one run per flow
        lowest = np.minimum.reduceat(e_level, starts)
        m = np.minimum(dem, lowest)
        if not np.isfinite(m).all():
            raise ValueError("a flow with unlimited demand crosses no link")
        held = np.zeros(nu, dtype=bool)  # arcs with a flow held lower by another arc or its demand
        held[e_arc[m[e_pos] < e_level - slack[e_arc]]] = True
        final = used & ~held
        newly = np.logical_or.reduceat(final[e_arc], starts) | (dem <= lowest + 1e-12)
        if not newly.any():  # numerical safety (NaN): the flows of the lowest level freeze
            newly = m <= m.min()
        r = np.maximum(m[newly], 0.0)
        rate[flows[newly]] = r
        gone = newly[e_pos]
        at = np.cumsum(newly) - 1  # each frozen flow's place among ``r``
        remaining -= np.bincount(e_arc[gone], weights=e_share[gone] * r[at[e_pos[gone]]], minlength=nu)
        keep = ~gone
        e_pos = (np.cumsum(~newly) - 1)[e_pos[keep]]
        e_arc, e_share = e_arc[keep], e_share[keep]
        flows, dem = flows[~newly], dem[~newly]
        if 4 * len(e_arc) < nu:  # few arcs still crossed: renumber them
            still, e_arc = unique_below(e_arc, nu)
            remaining, full = remaining[still], full[still]
    arc_load = np.bincount(routes.arc, weights=routes.share * rate[routes.flow], minlength=na)
    util = np.divide(arc_load, capacity, out=np.zeros(na), where=capacity > 0)
    util.flags.writeable = False
    return Solution(rate, arc_load, capacity, _bottlenecks(routes, util, nf), it,
                    util if capacity.dtype == np.float64 else None)


def _bottlenecks(routes: Routes, util: np.ndarray, nf: int) -> np.ndarray:
    """Each flow's most utilized arc (the first of its entries on a tie; -1 without entries).
    Routes from :func:`route` are in flow order: the maximum per flow is ``np.maximum.reduceat``
    over its run of entries, and its first entry at that maximum is the answer (a sort of the
    entries by flow, then utilization, as for entries in any order, gives the same)."""
    bott = np.full(nf, -1, dtype=np.int64)
    f = routes.flow
    if not len(f):
        return bott
    if np.all(f[1:] >= f[:-1]):
        u = util[routes.arc]
        starts = np.flatnonzero(np.r_[True, f[1:] != f[:-1]])
        top = np.maximum.reduceat(u, starts)
        at = np.flatnonzero(u == np.repeat(top, np.diff(np.r_[starts, len(f)])))
        fa = f[at]
        first = at[np.r_[True, fa[1:] != fa[:-1]]]
        bott[f[first]] = routes.arc[first]
        return bott
    order = np.lexsort((-util[routes.arc], f))
    f_sorted = f[order]
    first = np.r_[True, f_sorted[1:] != f_sorted[:-1]]
    bott[f_sorted[first]] = routes.arc[order][first]
    return bott


def _links_in_order(fab: Fabric, topology) -> list:
    """The Link objects of ``fab.link_ids``, in that order (read fresh from the topology)."""
    links = topology.links
    if fab._every_link and len(links) == len(fab.link_ids):
        return list(links.values())  # same structure key: the same links in the same order
    return [links[l] for l in fab.link_ids]


def arc_capacity_GBps(fab: Fabric, topology) -> np.ndarray:
    """Capacity of each arc: the link's ``speed_Gbps × lanes / 8`` (read fresh: speeds may change
    without changing the routes). A link that carries nothing (speed or lanes 0, or not a finite
    number) is refused by name: flows routed over it would get no rate."""
    objs = _links_in_order(fab, topology)
    cap = np.array([x.speed_Gbps * x.lanes / 8.0 for x in objs], dtype=float)
    bad = np.flatnonzero(~(np.isfinite(cap) & (cap > 0)))
    if len(bad):
        link = objs[int(bad[0])]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise UsageError(f"link '{link.id}' ({link.a} - {link.b}){more} has no capacity: "
                         f"{link.speed_Gbps!r} Gb/s x {link.lanes!r} lanes; give it a positive speed "
                         f"and lane count")
    return cap[fab.arc_link] if len(cap) else np.zeros(0)


def links_of(fab: Fabric, topology, node: str) -> list:
    """``topology.links_of(node)`` (its links sorted by id) read from the fabric's arcs, without
    the topology's index of every component's links (a loaded design makes that index when
    first asked: 0.3 s at 131k GPUs). Asks the topology when the fabric left a link out (one to a
    rack) or does not hold the node."""
    i = fab.index.get(node)
    if i is None or not fab._every_link:
        # a management link (a DPU's OOB port) is no line of the node's
        return traffic_links_of(topology, node)
    arcs = fab.out_arc[fab.out_ptr[i]:fab.out_ptr[i + 1]]
    ids = fab.link_ids
    return [topology.links[l] for l in sorted({ids[k] for k in fab.arc_link[arcs].tolist()})]


def link_media(fab: Fabric, topology) -> list[str]:
    """The medium of each link of ``fab.link_ids`` ("infiniband", "ethernet"...)."""
    return [x.medium for x in _links_in_order(fab, topology)]
