"""Placement stage: map the job's ranks onto the GPUs of the drawn design.

GPUs are numbered server by server in the design's order (``gpu_count`` each, from the catalog).
Rank r sits on GPU r. The parallel dimensions are nested in ``order``, innermost first; the
default ``"tp,pp,dp"`` keeps a TP group inside one server's NVLink domain, puts consecutive
pipeline stages on neighbouring servers and spreads data-parallel replicas last (so each DP group
holds the same local GPU of many servers: one rail). Megatron-LM's own order is ``"tp,dp,pp"``,
Megatron-Core's ``"tp-cp-ep-dp-pp"`` (``MEGATRON_CORE_ORDER``), the default of the presets that
are Megatron recipes (:func:`workload_order`); any permutation may be given. With the workload's
``ep_within_domain`` the GPUs an expert-parallel group would split across an NVLink-domain edge
stay idle (:func:`usable_gpus`). A tp that does not divide the GPUs of a server (tp 6 on 8-GPU
servers) puts some TP groups across two servers: their all-reduces are costed over the network, as
NCCL would run them, and the run carries a warning (not a refusal: the layout is legal, only slow).

Each GPU talks to the network through one of its server's rail adapters: GPU i of a server with k
rails uses rail ⌊i·k/gpus⌋ (rail i when there is one adapter per GPU). The rails are the server's
linked NICs and DPUs (slot order) that sit on a network without storage, so that the storage DPUs
of a separate storage fabric carry no training traffic; when every adapter reaches storage (a
converged fabric) they all are rails. Adapters linked only to a front-end (north-south) network
(switches with ``frontend`` set) are never rails; they are storage ports when storage hangs off it. A server with direct links and no such adapter is its own
endpoint. Storage reads arrive on the server's endpoints that share a network with a storage
system (``storage_ports``), from the storage systems they reach (``storage_targets``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, Callable, Sequence, cast

import numpy as np

from designer.engine.network import Fabric, fabric_of, sorted_unique
from designer.engine.workload import Workload
from designer.errors import UsageError
from designer.topology.kinds import KIND_LABEL
from designer.topology.model import ATTACHABLE

DIMENSIONS = ("tp", "pp", "dp")
#: how the servers are split among jobs (``scenario.tenant_placement``)
JOB_PLACEMENTS = ("packed", "scattered")


@dataclass(frozen=True)
class ServerInfo:
    id: str
    gpus: int
    gpu: dict[str, Any]  #: catalog entry of the GPU model
    nvlink_domain: int
    nvswitch: bool
    pcie_gen: int
    rails: tuple[str, ...]  #: network adapters (or the server itself) carrying training traffic
    storage_ports: tuple[str, ...] = ()  #: endpoints that share a network with a storage system
    storage_targets: tuple[str, ...] = ()  #: storage systems the storage ports reach
    #: networks each rail is linked into (``network.Fabric.networks``): who can reach whom
    networks: dict[str, frozenset[int]] = field(default_factory=dict, compare=False)
    #: its NICs and DPUs in slot order (``Topology.attached``) when :func:`servers_of` made it
    #: (None: ask the topology)
    adapters: tuple | None = field(default=None, compare=False, repr=False)
    #: servers alike share it (:func:`alike_key`: model, overrides, and adapters' kinds, models and
    #: overrides in slot order) when :func:`servers_of` made them (-1: not known)
    alike: int = field(default=-1, compare=False, repr=False)

    @property
    def endpoints(self) -> tuple[str, ...]:
        """Every network endpoint of the server: rails, then the storage ports that are not."""
        return self.rails + tuple(e for e in self.storage_ports if e not in self.rails)


def servers_of(design, catalog, fab: Fabric | None = None,
               kinds: dict[str, list] | None = None) -> list[ServerInfo]:
    """Effective figures of every GPU server of a design (catalog ← props) and its endpoints
    (``fab``: the design's ``network.fabric_of``, ``kinds``: :func:`components_by_kind`, when the
    caller has them already).

    Per server only what is its own is made: its endpoint ids and ServerInfo (the networks of all
    endpoints are looked up at once); the figures of its model and the plan of its endpoints
    (which are rails, which storage ports) are shared by the servers alike."""
    topo = design.topology
    if kinds is None:
        kinds = components_by_kind(topo)
    fab = fab or fabric_of(topo)
    servers = kinds.get("gpu_server", [])
    adapters = [c for k in ATTACHABLE for c in kinds.get(k, ())]
    kids_of, names_of, numbers, alike = _adapters_read(servers, _by_parent({s.id for s in servers}, adapters))
    _check_adapter_models(topo, catalog, kinds, servers, adapters, kids_of, alike)
    # the networks of every endpoint at once: node indices by the ids' addresses
    # (Fabric.node_indices), then a gather from the fabric's table of every node's networks
    table = np.empty(len(fab.nodes) + 1, dtype=object)
    table[:-1] = _node_networks(fab)
    table[-1] = frozenset()  # not a node of the fabric: no network
    sets_of = table[fab.node_indices(list(chain.from_iterable(names_of)))].tolist()
    return _server_infos(servers, kids_of, names_of, numbers, sets_of, catalog, fab, kinds)


def _adapters_read(servers: list, adapters_of: dict[str, list]
                   ) -> tuple[list, list[list[str]], list[int], dict[tuple, int]]:
    """What each server's adapters give, read together while they are at hand: their slot order
    (``attached_all``'s), the endpoint ids (adapters, then the server) and the number of the
    servers alike (:func:`alike_key`); and those keys with their numbers."""
    alike: dict[tuple, int] = {}  # alike_key -> its number
    no_kids: tuple = ()
    kids_of, names_of, numbers = [], [], []
    for srv in servers:
        found = adapters_of.get(srv.id)
        kids: Sequence[Any] = no_kids
        if found is not None:
            _slot_sort(found)
            kids = found
        names = [c.id for c in kids]
        names.append(srv.id)
        key = alike_key(srv, kids)
        number = alike.get(key)
        if number is None:
            number = alike[key] = len(alike)
        kids_of.append(kids)
        names_of.append(names)
        numbers.append(number)
    return kids_of, names_of, numbers, alike


def _check_adapter_models(topo, catalog, kinds: dict[str, list], servers: list, adapters: list,
                          kids_of: list, alike: dict[tuple, int]) -> None:
    """Every model is in the catalog (``check_models``): the servers' adapters' models are in
    the keys of the servers alike (a handful), so only adapters on no server are read again."""
    models: dict[str, set[str]] = {k: set() for k in ATTACHABLE if k in kinds}
    for key in alike:
        for kind, model in zip(key[2], key[3]):
            models[kind].add(model)
    if sum(map(len, kids_of)) != len(adapters):
        ids = {s.id for s in servers}
        for c in adapters:
            if c.parent not in ids:
                models[c.kind].add(c.model)
    check_models(topo, catalog, kinds, models)


def _server_infos(servers: list, kids_of: list, names_of: list[list[str]], numbers: list[int],
                  sets_of: list, catalog, fab: Fabric, kinds: dict[str, list]) -> list[ServerInfo]:
    """The ServerInfo of each server from its endpoints' networks (``sets_of``, all endpoints in
    ``names_of`` order): the figures of a server model without overrides and the plan of a set
    of endpoint networks (which endpoints are rails, which storage ports) are made once and
    shared by the servers alike."""
    storage = [s.id for s in kinds.get("storage", ()) if fab.networks(s.id)]
    storage_nets = frozenset().union(*(fab.networks(s) for s in storage))
    reached: dict[frozenset[int], tuple[str, ...]] = {}  # storage networks -> systems on them
    front = _frontend_networks(kinds.get("switch", ()), catalog, fab)
    plans: dict[tuple, _Plan] = {}  # networks of a server's adapters and its own -> which are what
    figures = _ServerFigures(catalog)
    networks, new = fab.networks, object.__new__
    out: list[ServerInfo] = []
    append = out.append
    end = 0
    for srv, kids, names, number in zip(servers, kids_of, names_of, numbers):
        fig = figures.of(srv)
        start, end = end, end + len(names)
        sets = tuple(sets_of[start:end])
        plan = plans.get(sets)
        if plan is None:
            compute, ports, reach = _endpoint_plan(sets, storage_nets, front)
            if reach not in reached:
                reached[reach] = tuple(s for s in storage if networks(s) & reach)
            plan = plans[sets] = _Plan(_picker(compute), _picker(ports), reached[reach],
                                       tuple(sets[k] for k in compute))
        rails = plan.rails(names)
        info = new(ServerInfo)  # ServerInfo(...) without the frozen class's setattr per field
        info.__dict__.update(zip(_INFO_FIELDS, (srv.id, *fig, rails, plan.ports(names), plan.targets,
                                                dict(zip(rails, plan.rail_sets)), tuple(kids), number)))
        append(info)
    return out


class _ServerFigures:
    """A server's GPU count, GPU figures, NVLink domain, NVSwitch and PCIe generation: resolved
    once per server model without overrides, and per server with overrides (one catalog entry
    per GPU model, shared)."""

    def __init__(self, catalog) -> None:
        self.catalog = catalog
        self.gpus: dict[str, dict[str, Any]] = {}  # one entry per GPU model, shared by its servers
        self.figures: dict[str, dict[str, Any]] = {}  # one resolve per server model without overrides
        self.parts: dict[str, tuple] = {}  # server model without overrides -> its figures below

    def of(self, srv) -> tuple:
        fig = None if srv.props else self.parts.get(srv.model)
        if fig is not None:
            return fig
        catalog = self.catalog
        if srv.props:
            f = catalog.resolve(srv)
        else:
            f = self.figures.get(srv.model) or self.figures.setdefault(srv.model, catalog.resolve(srv))
        gpu = self.gpus.get(f["gpu_model"]) or self.gpus.setdefault(f["gpu_model"],
                                                                    catalog.get("gpu", f["gpu_model"]))
        fig = (int(f["gpu_count"]), gpu, int(f["nvlink_domain"]), bool(f["nvswitch"]), int(f.get("pcie_gen", 5)))
        if not srv.props:
            self.parts[srv.model] = fig
        return fig


_INFO_FIELDS = tuple(f.name for f in fields(ServerInfo))


def alike_key(srv, adapters) -> tuple:
    """Servers with equal keys are alike: model, overrides, and adapters (kinds, models and
    overrides, in slot order); the adapters' overrides only when one of them has any (None when
    none has)."""
    props = tuple([_props_key(a.props) for a in adapters]) if any([a.props for a in adapters]) else None
    return (srv.model, _props_key(srv.props), tuple([a.kind for a in adapters]),
            tuple([a.model for a in adapters]), props)


def _props_key(props: dict) -> str:
    return repr(sorted(props.items())) if props else "[]"


def _node_networks(fab: Fabric) -> list[frozenset[int]]:
    """``fab.networks`` of every node, by node index: the fabric's own table (made on its first
    call; nodes on the same networks share one set object)."""
    if fab.nodes:
        fab.networks(fab.nodes[0])
    return fab._net_of or []


@dataclass(frozen=True)
class _Plan:
    """Which endpoints of a server are what (:func:`_endpoint_plan`), made once for the servers
    wired alike: pickers of the rails and storage ports from the server's endpoint ids (adapters
    in slot order, then the server), the storage systems the ports reach and the rails' networks."""

    rails: Callable[[list[str]], tuple[str, ...]]
    ports: Callable[[list[str]], tuple[str, ...]]
    targets: tuple[str, ...]
    rail_sets: tuple[frozenset[int], ...]


def _picker(positions: list[int]) -> Callable[[list[str]], tuple[str, ...]]:
    """``lambda names: tuple(names[k] for k in positions)``, as one ``itemgetter`` call."""
    if not positions:
        return lambda names: ()
    if len(positions) == 1:
        k = positions[0]
        return lambda names: (names[k],)
    return itemgetter(*positions)


def components_by_kind(topo) -> dict[str, list]:
    """The design's components by kind, each list in the design's order (one pass, where asking
    ``Topology.of_kind`` for each kind would walk every component each time)."""
    out: dict[str, list] = {}
    for c in topo.components.values():
        got = out.get(c.kind)
        if got is None:
            out[c.kind] = [c]
        else:
            got.append(c)
    return out


def _frontend_networks(switches, catalog, fab: Fabric) -> frozenset[int]:
    """Networks that hold a front-end (north-south) switch (the switch field ``frontend``, set by
    the templates' ``--frontend``): they carry no training traffic."""
    default: dict[str, bool] = {}
    for model in {c.model for c in switches}:
        try:
            default[model] = bool(catalog.get("switch", model).get("frontend", False))
        except KeyError:
            default[model] = False
    if not any(default.values()):  # only an override can set it: the switches that have one
        switches = [c for c in switches if "frontend" in c.props]
    found: set[int] = set()
    for c in switches:
        flag = c.props.get("frontend")
        if flag is None:
            flag = default[c.model]
        if flag and c.id in fab.index:  # its network's label: its connected part of switches
            found.add(int(fab.parts().label[fab.switch_pos[fab.index[c.id]]]))
    return frozenset(found)


def _endpoint_plan(sets: tuple[frozenset[int], ...], storage_nets: frozenset[int],
                   front: frozenset[int] = frozenset()) -> tuple[list[int], list[int], frozenset[int]]:
    """Which of a server's endpoints are rails and which storage ports, by position (``sets``:
    the networks of its adapters in slot order, then its own as an on-board NIC), and the storage
    networks it reaches (see the module docstring). An endpoint only on front-end networks
    (``front``) is never a rail (it may still reach storage). Servers wired alike share one plan."""
    linked = [k for k in range(len(sets) - 1) if sets[k]]
    mine = [len(sets) - 1] if sets[-1] else []
    adapters = [k for k in linked if not sets[k] <= front]
    own = [k for k in mine if not sets[k] <= front]
    if not storage_nets:  # no storage on any network: every adapter is a rail, none is a port
        return adapters or own, [], frozenset()
    compute = [k for k in adapters if not sets[k] & storage_nets] \
        or [k for k in own if not sets[k] & storage_nets] or adapters or own
    ports = [k for k in linked + mine if sets[k] & storage_nets]
    return compute, ports, frozenset().union(*(sets[k] & storage_nets for k in ports))


def attached_all(topo, servers: set[str], adapters: list | None = None) -> dict[str, list]:
    """The NICs and DPUs of every server of ``servers`` (ids), in slot order: ``Topology.attached``
    for all of them in one pass over the components (``adapters``: the design's NICs and DPUs in
    its order, when the caller has them). Each server's list is sorted by (slot, id) unless its
    slots already increase strictly in the order the adapters came (then it is that order)."""
    if adapters is None:
        adapters = [c for c in topo.components.values() if c.kind in ATTACHABLE]
    kids = _by_parent(servers, adapters)
    for cs in kids.values():
        _slot_sort(cs)
    return kids


def _by_parent(servers: set[str], adapters: list) -> dict[str, list]:
    """The adapters of each of ``servers`` in the order given (only servers that have any)."""
    kids: dict[str, list] = {s: [] for s in servers}  # one look-up per adapter finds its list
    get = kids.get
    for c in adapters:
        got = get(c.parent)
        if got is not None:
            got.append(c)
    return {p: cs for p, cs in kids.items() if cs}


def _slot_sort(cs: list) -> None:
    """Sort one server's adapters by (slot, id), unless their slots already increase strictly."""
    last = -1
    for c in cs:
        if c.slot is None or c.slot <= last:
            cs.sort(key=_slot_order)
            return
        last = c.slot


def _slot_order(c) -> tuple:
    return (c.slot if c.slot is not None else 1 << 30, c.id)  # ids are unique: no tie


def check_models(topology, catalog, kinds: dict[str, list] | None = None,
                 models: dict[str, set[str]] | None = None) -> None:
    """Every component's model, and every server's GPU and CPU model, is in the catalog; else a
    UsageError naming the component and the model, with close ids. Checked once per distinct
    (kind, model) and per distinct server GPU/CPU choice, so a big design costs a handful.
    ``kinds``: :func:`components_by_kind`, when the caller has it; then the distinct models are
    found per kind with set operations, and only if one of them fails are the components walked
    in order (:func:`_first_unknown_model`) to name the first one, as without it. ``models``: the
    models of some kinds, when the caller knows them (those kinds' components are not read)."""
    if kinds is None:
        _first_unknown_model(topology, catalog)
        return
    known = models or {}
    try:
        for kind, comps in kinds.items():
            for model in known[kind] if kind in known else {c.model for c in comps}:
                catalog.resolve(_Ref(kind, model))
        servers = kinds.get("gpu_server", ())
        # a server without overrides reads its model's parts: one check per model
        parts = {(m, None, None): _Ref("gpu_server", m) for m in {c.model for c in servers if not c.props}}
        parts.update(((c.model, c.props.get("gpu_model"), c.props.get("cpu_model")), c)
                     for c in servers if c.props)
        for c in parts.values():
            f = catalog.resolve(c)
            catalog.get("gpu", f["gpu_model"])
            catalog.get("cpu", f["cpu_model"])
    except KeyError:
        _first_unknown_model(topology, catalog)
        raise  # not reached: the walk finds what failed




@dataclass(frozen=True)
class _Ref:
    """A component as ``Catalog.resolve`` reads it, without overrides."""

    kind: str
    model: str
    props: dict = field(default_factory=dict)


def _first_unknown_model(topology, catalog) -> None:
    """:func:`check_models` by walking the components in order: the first one whose model (or
    server GPU/CPU model) is not in the catalog is named."""
    seen: set[tuple] = set()
    for c in topology.components.values():
        key = (c.kind, c.model)
        if key not in seen:
            _check_model(catalog, c, key)
            seen.add(key)
        if c.kind == "gpu_server":
            parts = ("server parts", c.model, c.props.get("gpu_model"), c.props.get("cpu_model"))
            if parts not in seen:
                _check_model(catalog, c, parts)
                seen.add(parts)


def _check_model(catalog, c, key: tuple) -> None:
    try:
        f = catalog.resolve(c)
        if key[0] == "server parts":
            catalog.get("gpu", f["gpu_model"])
            catalog.get("cpu", f["cpu_model"])
    except KeyError as exc:
        raise UsageError(f"{KIND_LABEL[c.kind]} '{c.id}': {exc.args[0]}") from None


_rails, _networks, _gpus, _nvlink_domain = (attrgetter("rails"), attrgetter("networks"), attrgetter("gpus"),
                                            attrgetter("nvlink_domain"))


@dataclass(frozen=True)
class RailTable:
    """The rails of every server as integer rows, so that the traffic stage builds its flows with
    array operations instead of a Python loop per flow: row ``first[k] + i`` is rail i of server k
    (``ServerInfo.rails``) and the last row, ``none``, stands for "no endpoint" (a server without
    a network link; its name is None). ``net[row]`` indexes ``sets``, the distinct network sets
    of the rails (``ServerInfo.networks``; the empty set for ``none``), and ``rank[r]`` is the row
    of rank r's GPU: GPU i of a server with k rails uses rail ⌊i·k/gpus⌋ (module docstring).
    Rows are a renaming of the endpoint ids (one row per id), so equal rows mean equal ids."""

    names: np.ndarray  #: object array of endpoint ids, None last
    first: np.ndarray  #: per server: row of its rail 0
    count: np.ndarray  #: per server: number of rails
    net: np.ndarray  #: per row: index into ``sets``
    sets: list[frozenset[int]]
    rank: np.ndarray  #: per rank: row of its GPU's rail

    @property
    def none(self) -> int:
        return len(self.names) - 1

    @classmethod
    def of(cls, servers: list[ServerInfo], server: np.ndarray, local: np.ndarray) -> "RailTable":
        """The table of ``servers`` for ranks on GPU ``local`` of server ``server``. A rail's
        networks are its server's ``networks[rail]`` (empty when missing). Servers wired alike
        share their set objects (``servers_of``), so the distinct sets are found by object
        identity first (one ``np.unique`` over the ids), then by value among those few. The
        lists are joined with C-level ``chain``; a server's ``networks`` values are its rails' sets
        when its keys are its rails in order (as ``servers_of`` makes them: checked for all at
        once), else each rail is looked up."""
        rails = list(map(_rails, servers))
        count = np.fromiter(map(len, rails), dtype=np.int64, count=len(servers))
        first = np.cumsum(count) - count
        names = list(chain.from_iterable(rails))
        empty: frozenset[int] = frozenset()
        nets = list(map(_networks, servers))
        if np.array_equal(np.fromiter(map(len, nets), dtype=np.int64, count=len(nets)), count) and \
                list(chain.from_iterable(nets)) == names:
            objs = list(chain.from_iterable(map(dict.values, nets)))
        else:
            objs = [s.networks.get(e, empty) for s in servers for e in s.rails]
        names.append(None)
        objs.append(empty)
        ids = np.fromiter(map(id, objs), dtype=np.int64, count=len(objs))
        _, at, inv = np.unique(ids, return_index=True, return_inverse=True)
        index: dict[frozenset[int], int] = {}
        which = [index.setdefault(objs[i], len(index)) for i in at.tolist()]
        net = np.array(which, dtype=np.int64)[inv.ravel()]
        gpus = np.fromiter(map(_gpus, servers), dtype=np.int64, count=len(servers))
        server = np.asarray(server, dtype=np.int64)
        c = count[server]
        rows = first[server] + np.asarray(local, dtype=np.int64) * c // np.maximum(gpus[server], 1)
        rank = np.where(c > 0, rows, len(names) - 1)
        return cls(np.array(names, dtype=object), first, count, net, list(index), rank)


@dataclass
class Placement:
    """Where every rank runs. Arrays are indexed by rank."""

    order: tuple[str, ...]
    server: np.ndarray  #: index into ``servers``
    local: np.ndarray  #: GPU index inside its server
    servers: list[ServerInfo]
    groups: dict[str, np.ndarray]  #: "tp"/"pp"/"dp" -> (groups, size) array of ranks
    #: job of each rank (0 … jobs − 1; None: all ranks are job 0)
    job: np.ndarray = None  # type: ignore[assignment]  # None: all ranks in job 0 (__post_init__)
    _endpoints: np.ndarray | None = field(default=None, init=False, repr=False)
    _networks: dict[str, frozenset[int]] | None = field(default=None, init=False, repr=False)
    _rails: "RailTable | None" = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.job is None:
            self.job = np.zeros(len(self.server), dtype=np.int64)

    @property
    def jobs(self) -> int:
        """Number of jobs placed (1 for a single job)."""
        return int(self.job.max()) + 1 if len(self.job) else 1

    def group_job(self, dim: str) -> np.ndarray:
        """Job of every group of ``dim`` (all ranks of a group belong to one job)."""
        return cast(np.ndarray, self.job[self.groups[dim][:, 0]])

    def only(self, job: int) -> "Placement":
        """Job ``job`` by itself: its ranks renumbered from 0, its groups, the same servers."""
        if self.jobs == 1:
            return self
        ranks = np.flatnonzero(self.job == job)
        new = np.full(len(self.server), -1, dtype=np.int64)
        new[ranks] = np.arange(len(ranks))
        groups = {d: new[g[self.job[g[:, 0]] == job]] for d, g in self.groups.items()}
        return Placement(self.order, self.server[ranks], self.local[ranks], self.servers, groups)

    def networks(self, endpoint: str | None) -> frozenset[int]:
        """Networks a rail of any server is linked into (empty for anything else)."""
        if self._networks is None:
            self._networks = {e: n for s in self.servers for e, n in s.networks.items()}
        return self._networks.get(endpoint, frozenset()) if endpoint is not None else frozenset()

    def endpoint(self, ranks: np.ndarray) -> list[str | None]:
        """Network endpoint id of each rank's GPU (None if its server has no network link)."""
        if self._endpoints is None:
            t = self.rail_table()
            self._endpoints = t.names[t.rank]
        return cast("list[str | None]", self._endpoints[np.asarray(ranks, dtype=np.int64).ravel()].tolist())

    def rail_table(self) -> "RailTable":
        """Every server's rails as integer rows (:class:`RailTable`), made once per placement."""
        if self._rails is None:
            self._rails = RailTable.of(self.servers, self.server, self.local)
        return self._rails

    def nodes_spanned(self, dim: str) -> int:
        """Servers one group of ``dim`` spans (the most over all groups)."""
        g = self.groups[dim]
        if g.shape[1] <= 1:
            return 1
        srv = np.sort(self.server[g], axis=1)
        return int(((srv[:, 1:] != srv[:, :-1]).sum(axis=1) + 1).max())

    def summary(self) -> dict[str, Any]:
        used = sorted_unique(self.server)
        within = {d: self.nodes_spanned(d) == 1 for d in DIMENSIONS}
        domain = np.fromiter(map(_nvlink_domain, self.servers), dtype=float, count=len(self.servers))
        nv_ok = not len(used) or bool(self.groups["tp"].shape[1] <= domain[used].min())
        return {"order": ",".join(self.order), "ranks": int(len(self.server)),
                "servers_used": int(len(used)),
                "tp_inside_server": within["tp"], "tp_inside_nvlink_domain": within["tp"] and nv_ok,
                "servers_per_dp_group": self.nodes_spanned("dp"),
                "servers_per_pp_group": self.nodes_spanned("pp")}


#: Megatron-Core's rank order, innermost first: ``initialize_model_parallel(order=
#: "tp-cp-ep-dp-pp")`` in megatron/core/parallel_state.py (its default). CP and EP are inner
#: chunks of the data-parallel ranks here as there (``traffic.derived_groups``), so it places
#: as ``tp,dp,pp``. Megatron-LM's 2021 order (tp, dp, pp: mpu/initialize.py) is the same with
#: cp = ep = 1.
MEGATRON_CORE_ORDER = "tp-cp-ep-dp-pp"
#: words in a preset's ``name``, ``source`` or the sources of its layout (tp, pp, ep, cp) that
#: say its layout is a Megatron recipe (Megatron-LM, Megatron-Core, Megatron-Bridge, NeMo)
_MEGATRON_WORDS = ("megatron", "nemo")


def is_megatron_recipe(data: dict[str, Any]) -> bool:
    """Whether the workload ``data`` (a preset's fields, ``pipeline.workload_data``) is a Megatron
    recipe: its name or source, or the source of one of its tp/pp/ep/cp sizes, names
    Megatron-LM, Megatron-Core, Megatron-Bridge or NeMo."""
    given = data.get("sources")
    sources: dict[str, Any] = given if isinstance(given, dict) else {}
    texts = [data.get("name"), data.get("source")] + [sources.get(k) for k in ("tp", "pp", "ep", "cp")]
    return any(word in str(t).lower() for t in texts if t for word in _MEGATRON_WORDS)


def workload_order(data: dict[str, Any]) -> str | None:
    """The rank order of the workload ``data``: its own ``placement`` (a preset's or the
    design's), else Megatron-Core's (``MEGATRON_CORE_ORDER``) for a Megatron recipe
    (:func:`is_megatron_recipe`), else None (``DIMENSIONS``: tp,pp,dp)."""
    if data.get("placement"):
        return str(data["placement"])
    return MEGATRON_CORE_ORDER if is_megatron_recipe(data) else None


def ep_within_domain(data: dict[str, Any]) -> bool:
    """The workload setting ``ep_within_domain`` (default false): leave idle the GPUs of an
    NVLink domain that an expert-parallel group would split across the domain's edge
    (:func:`usable_locals`). UsageError when it is not true or false."""
    value = data.get("ep_within_domain", False)
    if not isinstance(value, bool):
        raise UsageError(f"workload: 'ep_within_domain' must be true or false, got {value!r}")
    return value


def parse_order(text: str | None) -> tuple[str, ...]:
    """The nesting of tp, pp and dp, innermost first, from ``text`` ("tp,pp,dp", "tp-dp-pp").
    cp and ep may be named too, just inside dp and cp first (Megatron-Core's "tp-cp-ep-dp-pp"):
    they are inner chunks of the data-parallel ranks (``traffic.derived_groups``), so they place
    as dp does."""
    if not text:
        return DIMENSIONS
    parts = tuple(p.strip().lower() for p in str(text).replace("-", ",").split(",") if p.strip())
    dims = tuple(p for p in parts if p not in ("cp", "ep"))
    if sorted(dims) != sorted(DIMENSIONS) or len(set(parts)) != len(parts):
        raise UsageError(f"placement order must name tp, pp and dp once each, innermost first "
                         f"(e.g. 'tp,pp,dp'; cp and ep may come just before dp, as in "
                         f"'{MEGATRON_CORE_ORDER}'), got {text!r}")
    inner = tuple(p for p in ("cp", "ep") if p in parts)
    at = parts.index("dp")
    if inner and parts[at - len(inner):at] != inner:
        raise UsageError(f"placement order {text!r}: cp and ep are inner chunks of the data-parallel "
                         f"ranks, so name them just before dp, cp first (e.g. '{MEGATRON_CORE_ORDER}')")
    return dims


def ep_block(w: Workload, dims: tuple[str, ...]) -> int:
    """Consecutive ranks that hold whole expert-parallel groups: the ranks inside the dp
    dimension (the product of the sizes nested inside it) × cp × ep. With dp at stride S, EP
    group members are S·cp apart (``traffic.derived_groups``), so every aligned run of
    S·cp·ep ranks holds S·cp whole groups."""
    size = {"tp": w.tp, "pp": w.pp}
    inner = 1
    for d in dims[:dims.index("dp")]:
        inner *= size[d]
    return inner * w.cp * w.ep


def usable_gpus(servers: list[ServerInfo], w: Workload, order: str | None = None) -> list[np.ndarray]:
    """Each server's GPUs (local indices) an ``ep_within_domain`` job runs on: in every NVLink
    domain (``nvlink_domain`` consecutive GPUs; the last one may be short) the first
    ⌊domain / B⌋·B of its GPUs, B = :func:`ep_block`, so that no EP group's all-to-all leaves
    the domain; the rest stay idle (72-GPU NVL72 racks with EP 16: 64 GPUs used, 8 idle).
    Without expert parallelism every GPU is usable. UsageError when B exceeds a domain."""
    gpus = list(map(_gpus, servers))
    if w.ep <= 1:
        return [np.arange(g, dtype=np.int64) for g in gpus]
    block = ep_block(w, parse_order(order))
    out = []
    for srv, g in zip(servers, gpus):
        dom = max(1, min(int(srv.nvlink_domain), g))
        if block > dom:
            raise UsageError(f"workload: ep_within_domain keeps each expert-parallel group in one NVLink "
                             f"domain, but a run of {block} ranks (tp x cp x ep, with the dimensions "
                             f"placed inside dp) is larger than the {dom} GPUs of {srv.id}'s domain; "
                             f"lower ep or tp, or set ep_within_domain = false")
        local = np.arange(g, dtype=np.int64)
        span = np.minimum(dom, g - local // dom * dom)  # GPUs of each GPU's domain
        out.append(local[local % dom < span // block * block])
    return out


def place(w: Workload, servers: list[ServerInfo], order: str | None = None,
          within_domain: bool = False) -> Placement:
    """Rank r → GPU r; TP/PP/DP coordinates from the nesting ``order`` (innermost first).
    ``within_domain`` (the workload's ``ep_within_domain``): rank r → the r-th GPU of
    :func:`usable_gpus`, the others idle."""
    dims = parse_order(order)
    n = w.gpus
    if within_domain and w.ep > 1:
        usable = usable_gpus(servers, w, order)
        per = np.fromiter(map(len, usable), dtype=np.int64, count=len(usable))
        total = int(per.sum())
        if n > total:
            raise UsageError(f"the job needs {n} GPUs but ep_within_domain leaves {total} of the "
                             f"design's {sum(map(_gpus, servers))} usable")
        srv = np.repeat(np.arange(len(servers)), per)[:n]
        local = np.concatenate(usable)[:n] if usable else np.zeros(0, dtype=np.int64)
    else:
        gpus = list(map(_gpus, servers))
        total = sum(gpus)
        if n > total:
            raise UsageError(f"the job needs {n} GPUs but the design has {total}")
        per = np.array(gpus, dtype=np.int64)
        srv = np.repeat(np.arange(len(servers)), per)[:n]
        local = (np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per) - per, per))[:n]  # GPU in server
    size = {"tp": w.tp, "pp": w.pp, "dp": w.dp * w.cp}  # cp ranks are inner chunks of the DP dimension
    ranks = np.arange(n)
    coord, stride = {}, 1
    for d in dims:
        coord[d] = (ranks // stride) % size[d]
        stride *= size[d]
    groups = {}
    # the ranks as a block indexed (outermost, middle, innermost coordinate): a group of d is a
    # line along d's axis, the groups ordered by the other two coordinates (outer one first)
    block = ranks.reshape(size[dims[2]], size[dims[1]], size[dims[0]]) \
        if n == size[dims[0]] * size[dims[1]] * size[dims[2]] else None
    axis = {dims[2]: 0, dims[1]: 1, dims[0]: 2}
    for d in DIMENSIONS:
        others = [o for o in dims if o != d]
        if block is not None:
            groups[d] = block.transpose(axis[others[0]], axis[others[1]], axis[d]).reshape(-1, size[d])
            continue
        key = coord[others[0]] * size[others[1]] + coord[others[1]]
        order_idx = np.lexsort((coord[d], key))
        groups[d] = ranks[order_idx].reshape(-1, size[d])
    return Placement(dims, srv, local, servers, groups)


def job_servers(count: int, jobs: int, how: str = "packed") -> list[np.ndarray]:
    """Server indices (design order) of each of ``jobs`` jobs among ``count`` servers: ⌊count/jobs⌋
    each, packed (consecutive) or scattered (server i to job i mod jobs); the last
    ``count mod jobs`` servers are left out (idle). UsageError when there are fewer servers than jobs."""
    if how not in JOB_PLACEMENTS:
        raise UsageError(f"scenario tenant_placement must be one of {', '.join(JOB_PLACEMENTS)}, "
                         f"got {how!r}")
    if jobs > count:
        raise UsageError(f"scenario tenants {jobs} is more than the design's {count} GPU servers: "
                         f"every job needs at least one server; set tenants to {count} or fewer, or "
                         f"add GPU servers")
    per = count // jobs
    used = np.arange(per * jobs)
    if how == "packed":
        return [used[k * per:(k + 1) * per] for k in range(jobs)]
    return [used[k::jobs] for k in range(jobs)]


def place_jobs(w: Workload, servers: list[ServerInfo], order: str | None = None,
               jobs: int = 1, how: str = "packed", within_domain: bool = False) -> Placement:
    """``jobs`` copies of ``w``, each placed (:func:`place`) on its servers (:func:`job_servers`),
    stacked into one Placement: job k's ranks follow job k−1's, its groups follow too."""
    if jobs == 1:
        return place(w, servers, order, within_domain)
    parts = [(idx, place(w, [servers[int(i)] for i in idx], order, within_domain))
             for idx in job_servers(len(servers), jobs, how)]
    n = w.gpus
    groups = {d: np.concatenate([p.groups[d] + k * n for k, (_, p) in enumerate(parts)])
              for d in DIMENSIONS}
    return Placement(parts[0][1].order, np.concatenate([idx[p.server] for idx, p in parts]),
                     np.concatenate([p.local for _, p in parts]), servers, groups,
                     np.repeat(np.arange(jobs), n))
