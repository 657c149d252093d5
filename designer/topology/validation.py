"""Design rules: what makes a design unbuildable or suspicious, each with a fix hint (no Qt).

``validate(design_or_topology_or_file_dict, catalog=None) -> list[Problem]`` (errors first). Rules:

* ``unknown-model``: a component names a model its catalog kind does not have.
* ``bad-parent`` / ``unattached``: NICs and DPUs sit in a GPU server, servers, switches and storage sit
  in a rack (or nowhere), racks sit nowhere; a NIC/DPU without a server is ``unattached``.
* ``ports-exceeded``: a NIC, DPU, switch or storage has more cables (sum of link ``lanes``) than its
  resolved ``ports``. Links that end on a server stand for its on-board NIC and are not counted.
* ``link-too-fast``: a link's ``speed_Gbps`` above the ``port_speed_Gbps`` of either end.
* ``server-isolated``: a server with no network path to the other servers; ``no-storage-path``: a server
  with no path to any storage; ``storage-unreachable``: storage no server can reach. Paths run over
  links and NIC/DPU attachments (so through a server's PCIe/NVLink too), found with connected
  components over links and attachments (union-find, linear in the design size).
* ``rack-units``: members' ``rack_units_used`` add up to more than the rack's ``rack_units``;
  ``rack-slot``: a member placed outside the rack or overlapping another member's U slots.
* ``rack-power``: the rack's load above ``power_budget_kW``. Counted per member: a server draws its
  ``base_power_W`` + ``gpu_count`` x the GPU's ``tdp_W`` + ``power_W`` of each attached NIC/DPU;
  switches and storage their ``power_W``. These are maximum (nameplate) figures.
* ``duplicate-id`` (file dicts only; a :class:`Topology` cannot hold two equal ids).
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Any

from designer.topology import kinds
from designer.topology.model import ATTACHABLE, RACKABLE, Component, Topology, parent_problem  # noqa: F401

#: port-counted kinds (a link ending on a server is its on-board NIC, which has no port figure)
PORTED = ("nic", "dpu", "switch", "storage")


@dataclass(frozen=True)
class Problem:
    """One finding: ``severity`` "error" or "warning", a stable ``code``, what is wrong, how to fix it,
    and the component and/or link concerned."""

    severity: str
    code: str
    message: str
    hint: str = ""
    component: str | None = None
    link: str | None = None

    def __str__(self) -> str:
        where = self.component or self.link
        text = f"{self.severity}: {where + ': ' if where else ''}{self.message}"
        return f"{text} (fix: {self.hint})" if self.hint else text


class Resolver:
    """``catalog.resolve`` with a cache per kind, model and overrides (a big design has a handful
    of distinct ones); an unknown model resolves to the kind defaults (the ``unknown-model`` rule
    reports it)."""

    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog
        self._cache: dict[tuple[str, str], dict[str, Any]] = {}
        self._ids: dict[str, set[str]] = {}

    def ids(self, kind: str) -> set[str]:
        """Model ids of a component kind (or of a catalog section such as "gpu")."""
        section = kinds.CATALOG_KIND.get(kind, kind)
        if section not in self._ids:
            self._ids[section] = set(self.catalog.ids(section))
        return self._ids[section]

    def known(self, kind: str, model: str) -> bool:
        return model in self.ids(kind)

    def __call__(self, comp: Any) -> dict[str, Any]:
        """The figures of ``comp`` (read only: components alike share one dict). Cached per kind,
        model and overrides, so the 20k switches of a big design with the same ``tier`` override
        resolve once; overrides that cannot be a key (a list value) resolve every time."""
        key: tuple = (comp.kind, comp.model)
        if comp.props:
            try:
                key = (comp.kind, comp.model, *((k, type(v), v) for k, v in sorted(comp.props.items())))
                hash(key)
            except TypeError:
                return self._resolve(comp)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._resolve(comp)
        return hit

    def _resolve(self, comp: Any) -> dict[str, Any]:
        if self.known(comp.kind, comp.model):
            return self.catalog.resolve(comp)
        return {**kinds.defaults(comp.kind), **(comp.props or {})}

    def gpu_power_W(self, gpu_model: str) -> float:
        if not self.known("gpu", gpu_model):
            return 0.0
        return float(self.catalog.get("gpu", gpu_model).get("tdp_W", 0.0))


def validate(design: Any, catalog: Any = None) -> list[Problem]:
    """All problems of a :class:`Design`, a :class:`Topology` or a design-file dict, errors first."""
    if catalog is None:
        from designer.topology.catalog import load_catalog

        catalog = load_catalog()
    if isinstance(design, dict):
        return _validate_file_dict(design, catalog)
    topo: Topology = getattr(design, "topology", design)
    res = Resolver(catalog)
    problems = (_models(topo, res) + _parents(topo) + _ports(topo, res) + _speeds(topo, res)
                + _reachability(topo) + _racks(topo, res))
    return sorted(problems, key=lambda p: p.severity != "error")


def _validate_file_dict(data: dict[str, Any], catalog: Any) -> list[Problem]:
    from designer.topology.fileformat import DesignFileError, from_dict

    problems = []
    ids = [x.get("id") for key in ("components", "links") for x in data.get(key) or () if isinstance(x, dict)]
    for ident, n in Counter(ids).items():
        if ident is not None and n > 1:
            problems.append(Problem("error", "duplicate-id", f"the id '{ident}' is used {n} times",
                                    "give each component and link its own id", component=str(ident)))
    try:
        design = from_dict(data, "<design>")
    except DesignFileError as exc:
        return problems + [Problem("error", "file", f"{p}: {m}" if p else m, "correct the file")
                           for p, m in exc.errors if not m.startswith("duplicate id")]
    return problems + validate(design, catalog)


def _models(topo: Topology, res: Resolver) -> list[Problem]:
    out = []
    for c in topo.components.values():
        if not res.known(c.kind, c.model):
            section = kinds.CATALOG_KIND[c.kind]
            close = difflib.get_close_matches(c.model, sorted(res.ids(c.kind)), n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            out.append(Problem("error", "unknown-model", f"no {section} model '{c.model}' in the catalog",
                               f"{hint}pick a model listed by 'dpu-designer catalog {section}' or add it "
                               "to a user catalog", component=c.id))
    return out


def _parents(topo: Topology) -> list[Problem]:
    out = []
    for c in topo.components.values():
        parent = topo.components.get(c.parent) if c.parent is not None else None
        if c.parent is not None and parent is None:
            out.append(Problem("error", "bad-parent", f"placed in '{c.parent}', which does not exist",
                               "place it in an existing rack/server or clear its parent", component=c.id))
        elif parent is not None and (msg := parent_problem(c.kind, parent.kind)):
            out.append(Problem("error", "bad-parent", msg, "move it", component=c.id))
        elif parent is None and c.kind in ATTACHABLE:
            out.append(Problem("error", "unattached",
                               f"this {kinds.KIND_LABEL[c.kind]} is not attached to a GPU server",
                               "attach it to a server (drop it on the server) or delete it", component=c.id))
    out += _placement_loops(topo)
    return out


def _placement_loops(topo: Topology) -> list[Problem]:
    """One ``bad-parent`` problem per loop of parents (a -> b -> ... -> a), named from the member
    that comes first in the design and reported in that order. Linear in the number of
    components: each is walked once (state 1 while on the walk in progress, 2 when done), so a
    chain of 250k parents costs 250k steps, not 250k squared."""
    comps = topo.components
    order = {cid: i for i, cid in enumerate(comps)}
    state: dict[str, int] = {}
    loops: list[tuple[int, list[str]]] = []
    for start in comps:
        if start in state:
            continue
        path: list[str] = []
        node = start
        while node in comps and node not in state:
            state[node] = 1
            path.append(node)
            node = comps[node].parent
        if node in comps and state[node] == 1:  # the walk met itself: path from node on is a loop
            cycle = path[path.index(node):]
            first = min(range(len(cycle)), key=lambda k: order[cycle[k]])
            cycle = cycle[first:] + cycle[:first]
            loops.append((order[cycle[0]], cycle))
        for n in path:
            state[n] = 2
    return [Problem("error", "bad-parent", "placement loops: " + " -> ".join(cycle + [cycle[0]]),
                    "clear the parent of one of them", component=cycle[0])
            for _, cycle in sorted(loops, key=lambda x: x[0])]


def _ports(topo: Topology, res: Resolver) -> list[Problem]:
    used: dict[str, int] = {}  # a plain dict: Counter's += costs a Python-level call per end
    get = used.get
    for link in topo.links.values():
        used[link.a] = get(link.a, 0) + link.lanes
        used[link.b] = get(link.b, 0) + link.lanes
    out = []
    for cid, n in used.items():
        comp = topo.components[cid]
        if comp.kind not in PORTED:
            continue
        ports = int(res(comp)["ports"])
        if n > ports:
            out.append(Problem("error", "ports-exceeded",
                               f"{n} cables on a {ports}-port {kinds.KIND_LABEL[comp.kind]}",
                               f"remove {n - ports} link(s), spread them over more "
                               f"{kinds.KIND_LABEL[comp.kind]}s or pick a model with more ports",
                               component=cid))
    return out


def _speeds(topo: Topology, res: Resolver) -> list[Problem]:
    out = []
    port_of = {c.id: float(res(c)["port_speed_Gbps"]) for c in topo.components.values() if c.kind in PORTED}
    for link in topo.links.values():
        for end in (link.a, link.b):
            port = port_of.get(end)
            if port is None:
                continue
            if link.speed_Gbps > port:
                out.append(Problem("error", "link-too-fast",
                                   f"{link.speed_Gbps:g} Gb/s link on a {port:g} Gb/s port of '{end}'",
                                   f"set the link speed to {port:g} Gb/s or less", component=end,
                                   link=link.id))
    return out


def _reachability(topo: Topology) -> list[Problem]:
    part = _parts(topo)
    servers = [s.id for s in topo.servers()]
    storage = [s.id for s in topo.storage()]
    out = []
    if len(servers) > 1:
        sizes = Counter(part[s] for s in servers)
        main = max(sizes, key=lambda k: (sizes[k], -k))
        for s in servers:
            if part[s] != main:
                out.append(Problem("error", "server-isolated",
                                   "no network path to the other servers",
                                   "link one of its NICs/DPUs to a switch of the cluster fabric", component=s))
    if storage:
        with_storage = {part[s] for s in storage}
        with_servers = {part[s] for s in servers}
        for s in servers:
            if part[s] not in with_storage:
                out.append(Problem("error", "no-storage-path", "no network path to any storage",
                                   "connect the server (or its fabric) to the storage network", component=s))
        for s in storage:
            if part[s] not in with_servers:
                out.append(Problem("error", "storage-unreachable", "no server can reach this storage",
                                   "link it to a switch of the storage or compute fabric", component=s))
    return out


def _parts(topo: Topology) -> dict[str, int]:
    """Connected part of every component over links and NIC/DPU attachments (the same parts as
    ``networkx.connected_components(topo.graph())``, numbered by their first component in design
    order), by union-find with path halving: linear, without building a graph."""
    up: dict[str, str] = {c: c for c in topo.components}

    def find(x: str) -> str:
        while up[x] != x:
            up[x] = up[up[x]]
            x = up[x]
        return x

    def join(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            up[rb] = ra

    for l in topo.links.values():
        for end in (l.a, l.b):
            up.setdefault(end, end)  # a dangling end is a node of its own, as in the graph
        join(l.a, l.b)
    for c in topo.components.values():
        if c.kind in ATTACHABLE and c.parent in topo.components:
            join(c.id, c.parent)
    number: dict[str, int] = {}
    return {c: number.setdefault(find(c), len(number)) for c in up}


def server_power_W(topo: Topology, comp: Component, resolve: Any,
                   stand_ins: dict[str, dict[str, Any]] | None = None) -> dict[str, float]:
    """Maximum power of a GPU server by part: ``gpu`` (``tdp_W`` per GPU), ``server``
    (``base_power_W``: CPUs, memory, fans) and ``adapters`` (``power_W`` of each attached NIC and
    DPU, summed adapter by adapter; ``stand_ins`` gives other figures for some adapter ids, e.g.
    the DPU an engine scenario puts in place of a NIC). The one rule for the rack check, the bill
    of materials and the engine's energy figures."""
    fig = resolve(comp)
    stand_ins = stand_ins or {}
    return {"gpu": int(fig["gpu_count"]) * resolve.gpu_power_W(fig["gpu_model"]),
            "server": float(fig.get("base_power_W", 0.0)),
            "adapters": sum(float((stand_ins.get(d.id) or resolve(d)).get("power_W", 0.0))
                            for d in topo.attached(comp.id))}


def component_power_W(topo: Topology, comp: Component, resolve: Any) -> float:
    """Maximum power of a rack member as counted by the ``rack-power`` rule (see module doc)."""
    if comp.kind == "gpu_server":
        return sum(server_power_W(topo, comp, resolve).values())
    return float(resolve(comp).get("power_W", 0.0))


def _racks(topo: Topology, res: Resolver) -> list[Problem]:
    out = []
    for rack in topo.racks():
        fig = res(rack)
        height = int(fig["rack_units"])
        members = topo.members(rack.id)
        total_u = 0
        taken: dict[int, str] = {}
        for m in members:
            units = int(res(m)["rack_units_used"])
            total_u += units
            if m.slot is None:
                continue
            top = m.slot + units - 1
            if m.slot < 1 or top > height:
                out.append(Problem("error", "rack-slot",
                                   f"occupies U{m.slot}-U{top} of a {height}U rack '{rack.id}'",
                                   f"place it between U1 and U{height - units + 1}", component=m.id))
                continue
            clash = sorted({taken[u] for u in range(m.slot, top + 1) if u in taken})
            if clash:
                out.append(Problem("error", "rack-slot",
                                   f"U{m.slot}-U{top} overlap {', '.join(clash)} in '{rack.id}'",
                                   "move it to free U slots", component=m.id))
            taken.update((u, m.id) for u in range(m.slot, top + 1))
        if total_u > height:
            out.append(Problem("error", "rack-units", f"members need {total_u}U; the rack has {height}U",
                               "move some of them to another rack", component=rack.id))
        power = sum(component_power_W(topo, m, res) for m in members)
        budget = float(fig["power_budget_kW"]) * 1000.0
        if power > budget:
            out.append(Problem("error", "rack-power",
                               f"members draw up to {power / 1000:.1f} kW; the budget is {budget / 1000:.1f} kW",
                               "move servers to another rack or raise the rack's power budget",
                               component=rack.id))
    return out
