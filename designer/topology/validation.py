"""Design rules: what makes a design unbuildable or suspicious, each with a fix hint (no Qt).

``validate(design_or_topology_or_file_dict, catalog=None) -> list[Problem]`` (errors first). Rules:

* ``unknown-model``: a component names a model its catalog kind does not have.
* ``bad-parent`` / ``unattached``: NICs and DPUs sit in a GPU server, servers, switches and storage sit
  in a rack (or nowhere), racks sit nowhere; a NIC/DPU without a server is ``unattached``.
* ``ports-exceeded``: a NIC, DPU, switch or storage has more cables (sum of link ``lanes``) than its
  resolved ``ports`` (a switch: ``ports`` + ``uplink_ports``). Links that end on a server stand for
  its on-board NIC and are not counted. Management links (to a switch with ``management`` set,
  ``designer.topology.management``) count against a DPU's ``oob_ports`` and a server's
  ``bmc_ports`` instead of the network ports.
* ``management-unwired`` (warning, in a design with a management network): a server's BMC port
  or a DPU's OOB port with no cable to a management switch (a system with ``bmc_ports = 0``
  manages itself and its DPUs on switches of its own).
* ``management-split`` (warning): the management switches fall into parts not linked to each other
  (switch-to-switch links between management switches): each switch outside the largest part (the
  first in design order of equal ones) is named, since the BMCs and OOB ports on it cannot be
  reached from where the rest of the management network is (a rack switch whose uplinks to the
  aggregation were deleted, an aggregation switch left without links).
* ``link-too-fast``: a link's ``speed_Gbps`` above the ``port_speed_Gbps`` of either end (a switch's
  ``uplink_speed_Gbps`` when higher).
* ``server-isolated``: a server with no network path to the other servers; ``no-storage-path``: a server
  with no path to any storage; ``storage-unreachable``: storage no server can reach. Paths run over
  links other than management links (the management network carries no training or storage
  traffic) and NIC/DPU attachments (so through a server's PCIe/NVLink too), found with connected
  components over links and attachments (hook and compress over the edge list, see ``_labels``).
* ``rack-units``: members' ``rack_units_used`` add up to more than the rack's ``rack_units``;
  ``rack-slot``: a member placed outside the rack or overlapping another member's U slots.
* ``rack-power``: the rack's load above ``power_budget_kW``. Counted per member: a server draws its
  ``base_power_W`` + ``gpu_count`` x the GPU's ``tdp_W`` + ``power_W`` of each attached NIC/DPU;
  switches and storage their ``power_W``. These are maximum (nameplate) figures.
* ``duplicate-id`` (file dicts only; a :class:`Topology` cannot hold two equal ids).

The rules see the design through :class:`_View`: components and links as arrays, components alike
(same kind, model and overrides) resolved once. Each rule is a few whole-array steps (numpy) and
then a Python loop over the problems found only, so a clean 250k-component design is checked in
about a second; the problems, their messages and their order are those of the rules written
item by item.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol, cast

from designer.gcpause import collector_paused
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
        self._gpu_W: dict[str, float] = {}

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
            return cast("dict[str, Any]", self.catalog.resolve(comp))
        return {**kinds.defaults(comp.kind), **(comp.props or {})}

    def gpu_power_W(self, gpu_model: str) -> float:
        """``tdp_W`` of a GPU model (0 for an unknown one), looked up once per model."""
        hit = self._gpu_W.get(gpu_model)
        if hit is None:
            hit = self._gpu_W[gpu_model] = (float(self.catalog.get("gpu", gpu_model).get("tdp_W", 0.0))
                                            if self.known("gpu", gpu_model) else 0.0)
        return hit


def validate(design: Any, catalog: Any = None) -> list[Problem]:
    """All problems of a :class:`Design`, a :class:`Topology` or a design-file dict, errors first."""
    if catalog is None:
        from designer.topology.catalog import load_catalog

        catalog = load_catalog()
    if isinstance(design, dict):
        return _validate_file_dict(design, catalog)
    topo: Topology = getattr(design, "topology", design)
    res = Resolver(catalog)
    with collector_paused():  # the view's lists and arrays hold no cycles; collections would walk the design
        view = _View(topo, res)
        problems = (_models(view, res) + _parents(view) + _ports(view) + _speeds(view)
                    + _reachability(view) + _racks(view, res) + _management_unwired(view)
                    + _management_split(view))
    return sorted(problems, key=lambda p: p.severity != "error")


class _View:
    """A topology as arrays for the rules that look at every component and link: component ``i``
    is the ``i``-th in design order (``ids``, ``index``), each of a *class* (kind, model, props:
    ``cls``; ``kinds``/``figs`` per class: components alike are resolved once), link ``j``'s ends
    (``a``, ``b``: indices, a name that is no component gets one of its own from ``n`` on, in
    order of appearance), ``lanes`` and ``speed``, and each component's ``parent`` (-1 none,
    -2 a name that is no component). Built with one pass over the components and one over the
    links; the rules are then whole-array operations, linear in the design's size."""

    def __init__(self, topo: Topology, res: Resolver | None = None) -> None:
        import numpy as np

        comps = topo.components
        self.topo = topo
        self.ids = list(comps)
        self.index = index = dict(zip(self.ids, range(len(self.ids))))
        self.n = n = len(self.ids)
        #: per class: its kind, its resolved figures (None without a resolver) and its first component
        self.kinds: list[str] = []
        self.figs: list[dict[str, Any] | None] = []
        self.first: list[str] = []
        self.items = items = list(comps.values())
        keys: dict[Any, int] = {}
        try:  # the Resolver's key: 1, 1.0 and True are different overrides
            cls = [keys.setdefault((c.kind, c.model, *((k, type(v), v) for k, v in sorted(c.props.items())))
                                   if c.props else (c.kind, c.model), len(keys)) for c in items]
        except TypeError:  # an unhashable override: the component is a class of its own
            keys, cls = {}, []
            for c in items:
                key = ((c.kind, c.model, *((k, type(v), v) for k, v in sorted(c.props.items())))
                       if c.props else (c.kind, c.model))
                try:
                    cls.append(keys.setdefault(key, len(keys)))
                except TypeError:
                    keys[object()] = len(keys)  # a number of its own
                    cls.append(len(keys) - 1)
        seen = set()
        for i, k in enumerate(cls):  # the first component of each class, in class order
            if k not in seen:
                seen.add(k)
                c = items[i]
                self.kinds.append(c.kind)
                self.figs.append(res(c) if res is not None else None)
                self.first.append(c.id)
                if len(seen) == len(keys):
                    break
        self.cls = np.array(cls, dtype=np.int64)
        #: each component's kind as a number (index in ``kind_names``)
        self.kind_names = list(dict.fromkeys(self.kinds))
        self.kind_code = self.per_class([self.kind_names.index(k) for k in self.kinds], np.int64)
        links = list(topo.links.values())
        self.links = links
        a_names, b_names = [l.a for l in links], [l.b for l in links]
        try:
            self.a = np.fromiter(map(index.__getitem__, a_names), dtype=np.int64, count=len(links))
            self.b = np.fromiter(map(index.__getitem__, b_names), dtype=np.int64, count=len(links))
            self.extra: list[str] = []
        except KeyError:  # a link end that names no component is a node of its own (n and on),
            extra: dict[str, int] = {}  # numbered as the ends come (a then b of each link)
            ends = [index[x] if x in index else n + extra.setdefault(x, len(extra))
                    for pair in zip(a_names, b_names) for x in pair]
            both = np.array(ends, dtype=np.int64)
            self.a, self.b = both[0::2], both[1::2]
            self.extra = list(extra)
        self.lanes = np.fromiter((l.lanes for l in links), dtype=np.int64, count=len(links))
        self.speed = np.fromiter((l.speed_Gbps for l in links), dtype=np.float64, count=len(links))
        self.parent = np.array([-1 if c.parent is None else index.get(c.parent, -2) for c in items],
                               dtype=np.int64)
        #: management switches (``management`` set) and the links that end on one
        if res is not None and any(k == "switch" and f and f.get("management") is True
                                   for k, f in zip(self.kinds, self.figs)):
            mgmt = np.append(self.per_class([k == "switch" and f.get("management") is True
                                             for k, f in zip(self.kinds, self.resolved())], bool),
                             np.zeros(len(self.extra), bool))
            self.managed: np.ndarray | None = mgmt  # None: no management switch in the design
            self.mgmt_link = mgmt[self.a] | mgmt[self.b]
        else:
            self.managed = None
            self.mgmt_link = np.zeros(len(links), bool)

    def resolved(self) -> list[dict[str, Any]]:
        """Each class's resolved figures (the view was made with a resolver)."""
        figs = [f for f in self.figs if f is not None]
        if len(figs) != len(self.figs):
            raise ValueError("the design view was made without a resolver")
        return figs

    def per_class(self, values: list, dtype: Any):
        """Each component's value of a per-class list (an array in design order)."""
        import numpy as np

        return np.array(values or [0], dtype=dtype)[self.cls]

    def of_kind(self, *kinds_: str):
        """Mask of the components of these kinds."""
        return self.per_class([k in kinds_ for k in self.kinds], bool)


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


def _models(view: _View, res: Resolver) -> list[Problem]:
    """``unknown-model``, in design order; the close matches are looked for once per model."""
    import numpy as np

    unknown = view.per_class([not res.known(kind, view.topo.components[first].model)
                              for kind, first in zip(view.kinds, view.first)], bool)
    out = []
    hints: dict[tuple[str, str], str] = {}
    for i in np.flatnonzero(unknown).tolist():
        c = view.topo.components[view.ids[i]]
        section = kinds.CATALOG_KIND[c.kind]
        if (c.kind, c.model) not in hints:
            close = difflib.get_close_matches(c.model, sorted(res.ids(c.kind)), n=3, cutoff=0.5)
            hints[(c.kind, c.model)] = f"did you mean {', '.join(close)}? " if close else ""
        out.append(Problem("error", "unknown-model", f"no {section} model '{c.model}' in the catalog",
                           f"{hints[(c.kind, c.model)]}pick a model listed by 'dpu-designer catalog "
                           f"{section}' or add it to a user catalog", component=c.id))
    return out


def _parents(view: _View) -> list[Problem]:
    """``bad-parent`` (a missing parent, a parent of the wrong kind) and ``unattached``, one per
    component at most, in design order; then the placement loops. The kind rule
    (:func:`model.parent_problem`) is asked once per pair of kinds present."""
    import numpy as np

    par = view.parent
    has = np.flatnonzero(par >= 0)
    names, k = view.kind_names, len(view.kind_names)
    pair = view.kind_code[has] * k + view.kind_code[par[has]]  # (kind, parent's kind) as a number
    codes = np.unique(pair)
    pairs = {(names[c // k], names[c % k]): parent_problem(names[c // k], names[c % k]) for c in codes.tolist()}
    wrong = np.zeros(view.n, dtype=bool)
    wrong[has] = np.isin(pair, [c for c in codes.tolist() if pairs[(names[c // k], names[c % k])]])
    missing = par == -2
    loose = (par == -1) & view.of_kind(*ATTACHABLE)
    out = []
    comps = view.topo.components
    for i in np.flatnonzero(missing | wrong | loose).tolist():
        c = comps[view.ids[i]]
        if missing[i]:
            out.append(Problem("error", "bad-parent", f"placed in '{c.parent}', which does not exist",
                               "place it in an existing rack/server or clear its parent", component=c.id))
        elif wrong[i]:
            out.append(Problem("error", "bad-parent", str(pairs[(c.kind, comps[str(c.parent)].kind)]),
                               "move it", component=c.id))
        else:
            out.append(Problem("error", "unattached",
                               f"this {kinds.KIND_LABEL[c.kind]} is not attached to a GPU server",
                               "attach it to a server (drop it on the server) or delete it", component=c.id))
    out += _loops(view)
    return out


def _placement_loops(topo: Topology) -> list[Problem]:
    """One ``bad-parent`` problem per loop of parents (a -> b -> ... -> a), named from the member
    that comes first in the design and reported in that order (see :func:`_loops`)."""
    return _loops(_View(topo))


def placement_loops(parents: dict[str, str]) -> list[list[str]]:
    """The loops of a parent map (component id -> its parent's id), each once, as its members in
    parent order from the one that comes first in ``parents``; loops in that order too.

    Linear in the number of entries: every component is walked at most once. A walk follows
    parents from a component not yet seen until it reaches no parent or a component already
    seen; that one closes a loop exactly when it was first seen by this same walk (then the loop
    is the walk's tail from it). A 30,000-deep chain costs 30,000 steps, not 30,000 walks of it."""
    order = {cid: n for n, cid in enumerate(parents)}
    walk_of: dict[str, int] = {}
    loops: list[list[str]] = []
    for walk, start in enumerate(parents):
        if start in walk_of:
            continue
        path: list[str] = []
        node: str | None = start
        while node is not None and node not in walk_of:
            walk_of[node] = walk
            path.append(node)
            node = parents.get(node)
        if node is not None and walk_of[node] == walk:
            cycle = path[path.index(node):]
            first = min(range(len(cycle)), key=lambda k: order.get(cycle[k], len(order)))
            loops.append(cycle[first:] + cycle[:first])
    loops.sort(key=lambda c: order[c[0]])
    return loops


def _loops(view: _View) -> list[Problem]:
    """The placement loops of :func:`_placement_loops` (:func:`placement_loops` over the view's
    parents, linear in the number of components)."""
    ids, parent = view.ids, view.parent.tolist()
    parents = {ids[i]: ids[p] for i, p in enumerate(parent) if p >= 0}
    out = []
    for names in placement_loops(parents):
        out.append(Problem("error", "bad-parent", "placement loops: " + " -> ".join(names + [names[0]]),
                           "clear the parent of one of them", component=names[0]))
    return out


def _ports(view: _View) -> list[Problem]:
    """``ports-exceeded``: cables (``lanes``) per component summed over all links at once
    (``bincount``; whole numbers, so exact), reported in the order the components first appear
    as a link end."""
    import numpy as np

    ends = np.empty(2 * len(view.a), dtype=np.int64)
    ends[0::2], ends[1::2] = view.a, view.b
    lanes = np.repeat(view.lanes, 2)
    mgmt_end = np.repeat(view.mgmt_link, 2)
    # a management cable on a DPU or server takes its OOB/BMC port, not a network port
    own_port = mgmt_end & np.append(view.of_kind("dpu", "gpu_server"), np.zeros(len(view.extra), bool))[ends] \
        if view.managed is not None else mgmt_end
    data = ~own_port
    used = np.bincount(ends[data], weights=lanes[data], minlength=view.n)[:view.n] if len(ends) \
        else np.zeros(view.n)
    counted = np.bincount(ends[data], minlength=view.n)[:view.n] > 0 if len(ends) else np.zeros(view.n, bool)
    ports = view.per_class([int(f["ports"]) + int(f.get("uplink_ports") or 0) if k == "switch"
                            else int(f["ports"]) if k in PORTED else 0
                            for k, f in zip(view.kinds, view.resolved())], np.float64)
    over = counted & view.of_kind(*PORTED) & (used > ports)
    flagged = np.flatnonzero(over)
    out = _management_ports(view, ends[own_port], lanes[own_port]) if own_port.any() else []
    if not len(flagged):
        return out
    first = np.full(view.n, len(ends), dtype=np.int64)
    np.minimum.at(first, ends[ends < view.n], np.flatnonzero(ends < view.n))
    data_problems = []
    for i in flagged[np.argsort(first[flagged], kind="stable")].tolist():
        cid, kind = view.ids[i], view.kinds[view.cls[i]]
        n, have = int(used[i]), int(ports[i])
        data_problems.append(Problem("error", "ports-exceeded", f"{n} cables on a {have}-port {kinds.KIND_LABEL[kind]}",
                           f"remove {n - have} link(s), spread them over more "
                           f"{kinds.KIND_LABEL[kind]}s or pick a model with more ports", component=cid))
    return data_problems + out


#: the management port of each kind: (field, words)
_MGMT_PORT = {"dpu": ("oob_ports", "OOB management port"), "gpu_server": ("bmc_ports", "BMC port")}


def _mgmt_ports_of(view: _View):
    """Each component's management ports (a DPU's ``oob_ports``, a server's ``bmc_ports``; 0 else)."""
    import numpy as np

    return view.per_class([int(f.get(_MGMT_PORT[k][0]) or 0) if k in _MGMT_PORT else 0
                           for k, f in zip(view.kinds, view.resolved())], np.int64)


def _management_ports(view: _View, ends, lanes) -> list[Problem]:
    """``ports-exceeded`` of management cables on DPUs and servers against their OOB/BMC ports."""
    import numpy as np

    used = np.bincount(ends, weights=lanes, minlength=view.n)[:view.n]
    have = _mgmt_ports_of(view)
    out = []
    for i in np.flatnonzero(used > have).tolist():
        kind = view.kinds[view.cls[i]]
        n, h = int(used[i]), int(have[i])
        field, words = _MGMT_PORT[kind]
        out.append(Problem("error", "ports-exceeded",
                           f"{n} management cables on a {kinds.KIND_LABEL[kind]} with {h} {words}"
                           f"{'s' if h != 1 else ''} ({field})",
                           f"remove {n - h} management link(s) or raise {field}", component=view.ids[i]))
    return out


def _management_unwired(view: _View) -> list[Problem]:
    """``management-unwired`` (see the module docstring), servers and DPUs in design order: only in
    a design with a management switch; a DPU on a server with no BMC port (an NVL72 system) is its
    system's to manage."""
    import numpy as np

    if view.managed is None:
        return []
    ends = np.concatenate([view.a, view.b])
    lanes = np.concatenate([view.lanes, view.lanes])
    mine = np.concatenate([view.mgmt_link, view.mgmt_link]) & (ends < view.n)
    wired = np.bincount(ends[mine], weights=lanes[mine], minlength=view.n)[:view.n]
    have = _mgmt_ports_of(view)
    parent_bmc = np.zeros(view.n, np.int64)
    on = view.parent >= 0
    parent_bmc[on] = have[view.parent[on]]
    dpu = view.of_kind("dpu") & (parent_bmc > 0)
    server = view.of_kind("gpu_server")
    out = []
    for i in np.flatnonzero((server | dpu) & (wired < have)).tolist():
        kind = view.kinds[view.cls[i]]
        field, words = _MGMT_PORT[kind]
        free, h = int(have[i] - wired[i]), int(have[i])
        where = "its server's rack" if kind == "dpu" else "its rack"
        out.append(Problem("warning", "management-unwired",
                           f"{free} of {h} {words}{'s' if h != 1 else ''} not cabled to a management "
                           f"switch: it cannot be reached out of band",
                           f"link it to a management switch of {where} in Connect mode, or make the "
                           f"design with --management oob", component=view.ids[i]))
    return out


def _speeds(view: _View) -> list[Problem]:
    """``link-too-fast``: every link's speed against both ends' port speeds at once (NaN, never
    exceeded, for an end without a port figure), reported by link, its ``a`` end first."""
    import numpy as np

    port = view.per_class([max(float(f["port_speed_Gbps"]), float(f.get("uplink_speed_Gbps") or 0.0))
                           if k == "switch" else float(f["port_speed_Gbps"]) if k in PORTED else np.nan
                           for k, f in zip(view.kinds, view.resolved())], np.float64)
    # a dangling end (index n and on) has no port figure
    of = np.append(port, np.full(len(view.extra), np.nan))
    with np.errstate(invalid="ignore"):
        fast_a = view.speed > of[view.a]
        fast_b = view.speed > of[view.b]
    out = []
    for j in np.flatnonzero(fast_a | fast_b).tolist():
        link = view.links[j]
        for end, fast in ((link.a, fast_a[j]), (link.b, fast_b[j])):
            if fast:
                p = float(of[view.index[end]])
                out.append(Problem("error", "link-too-fast",
                                   f"{link.speed_Gbps:g} Gb/s link on a {p:g} Gb/s port of '{end}'",
                                   f"set the link speed to {p:g} Gb/s or less", component=end, link=link.id))
    return out


def _reachability(view: _View) -> list[Problem]:
    import numpy as np

    label = _labels(view)
    servers = np.flatnonzero(view.of_kind("gpu_server"))
    storage = np.flatnonzero(view.of_kind("storage"))
    out = []
    if len(servers) > 1:
        parts, sizes = np.unique(label[servers], return_counts=True)
        main = parts[np.argmax(sizes)]  # the biggest; of equal ones, the first in design order
        for i in servers[label[servers] != main].tolist():
            out.append(Problem("error", "server-isolated", "no network path to the other servers",
                               "link one of its NICs/DPUs to a switch of the cluster fabric",
                               component=view.ids[i]))
    if len(storage):
        for i in servers[~np.isin(label[servers], label[storage])].tolist():
            out.append(Problem("error", "no-storage-path", "no network path to any storage",
                               "connect the server (or its fabric) to the storage network",
                               component=view.ids[i]))
        for i in storage[~np.isin(label[storage], label[servers])].tolist():
            out.append(Problem("error", "storage-unreachable", "no server can reach this storage",
                               "link it to a switch of the storage or compute fabric", component=view.ids[i]))
    return out


def _management_split(view: _View) -> list[Problem]:
    """``management-split`` (see the module docstring), in design order."""
    import numpy as np

    from designer.topology.parts import lowest_labels

    if view.managed is None:
        return []
    managed = view.managed
    both = managed[view.a] & managed[view.b]
    label = lowest_labels(len(managed), view.a[both], view.b[both])
    switches = np.flatnonzero(managed[:view.n])
    parts, sizes = np.unique(label[switches], return_counts=True)
    if len(parts) < 2:
        return []
    main = int(parts[np.argmax(sizes)])  # the largest; of equal ones the first (lowest label)
    out = []
    for i in switches[label[switches] != main].tolist():
        out.append(Problem("warning", "management-split",
                           f"management switch not linked to {view.ids[main]}'s part of the management "
                           f"network ({len(parts)} unlinked parts): the BMC and OOB ports on it cannot "
                           f"be reached from there",
                           f"link it to a management switch of that part (its aggregation) in Connect "
                           f"mode, or make the design again with --management oob",
                           component=view.ids[i]))
    return out


def _labels(view: _View):
    """Connected part of every node (components, then dangling link ends) over links and NIC/DPU
    attachments, as the lowest node index in it (so parts compare in design order).

    Hook and compress over the edge list (``parts.lowest_labels``)."""
    import numpy as np

    from designer.topology.parts import lowest_labels

    attach = np.flatnonzero(view.of_kind(*ATTACHABLE) & (view.parent >= 0))
    a, b = view.a, view.b
    if view.mgmt_link.any():  # the management network is no path for training or storage traffic
        a, b = a[~view.mgmt_link], b[~view.mgmt_link]
    return lowest_labels(view.n + len(view.extra), np.concatenate([a, attach]),
                         np.concatenate([b, view.parent[attach]]))


def _parts(topo: Topology) -> dict[str, int]:
    """Connected part of every component over links and NIC/DPU attachments (the same parts as
    ``networkx.connected_components(topo.graph())``, numbered by their first component in design
    order; a link end that names no component is a part of its own, after the components)."""
    import numpy as np

    view = _View(topo)
    label = _labels(view)
    number = np.unique(label, return_inverse=True)[1]
    return dict(zip(view.ids + view.extra, number.tolist()))


class HasAttached(Protocol):
    """What the power rules ask of a topology: the NICs/DPUs attached to a server."""

    def attached(self, server_id: str) -> list[Component]: ...


def server_power_W(topo: HasAttached, comp: Component, resolve: Any,
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


def component_power_W(topo: HasAttached, comp: Component, resolve: Any) -> float:
    """Maximum power of a rack member as counted by the ``rack-power`` rule (see module doc)."""
    if comp.kind == "gpu_server":
        return sum(server_power_W(topo, comp, resolve).values())
    return float(resolve(comp).get("power_W", 0.0))


class _Attached:
    """What :func:`server_power_W` asks of a topology (``attached``), from lists made beforehand."""

    def __init__(self, attached: dict[str, list[Component]]) -> None:
        self._attached = attached

    def attached(self, server_id: str) -> list[Component]:
        return self._attached.get(server_id, [])


def _by_slot(c: Component) -> tuple[int, str]:
    """The order of ``Topology.members`` and ``Topology.attached``: by slot (none last), then id."""
    return (c.slot if c.slot is not None else 1 << 30, c.id)


def _server_powers(view: _View, res: Resolver, servers):
    """:func:`component_power_W` of each of ``servers`` (component indices), asked once per
    class of server and sequence of adapter classes (in ``Topology.attached`` order: by slot,
    then id): servers alike add the same figures in the same order, so they draw the same.

    The adapters are put in that order with one sort over all of them (by server, then slot;
    their ids only where two adapters of a server share a slot), and the servers with ``k``
    adapters are told apart by the rows (server class, adapter classes) of one ``k + 1``-column
    table (``numpy.unique`` of rows)."""
    import numpy as np

    items, cls, par, ids = view.items, view.cls, view.parent, view.ids
    is_server = view.of_kind("gpu_server")
    on = np.flatnonzero(view.of_kind(*ATTACHABLE) & (par >= 0))
    on = on[is_server[par[on]]]
    owner = par[on]
    slot = np.array([items[i].slot if items[i].slot is not None else 1 << 30 for i in on.tolist()],
                    dtype=np.int64)
    order = np.lexsort((slot, owner))
    if ((owner[order][1:] == owner[order][:-1]) & (slot[order][1:] == slot[order][:-1])).any():
        order = np.array(sorted(range(len(on)), key=lambda j: (owner[j], slot[j], ids[on[j]])), dtype=np.int64)
    on = on[order]
    count = np.bincount(par[on], minlength=view.n) if len(on) else np.zeros(view.n, dtype=np.int64)
    start = np.cumsum(count) - count
    adapter_cls = cls[on]
    power = np.zeros(len(servers))
    has = count[servers]
    for k in np.unique(has).tolist():
        where = np.flatnonzero(has == k)
        group = servers[where]
        rows = np.column_stack([cls[group]] + [adapter_cls[start[group] + j] for j in range(k)])
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        watts = []
        for s in group[first].tolist():
            kids = [items[i] for i in on[start[s]:start[s] + k].tolist()]
            watts.append(component_power_W(_Attached({ids[s]: kids}), items[s], res))
        power[where] = np.array(watts)[inverse.reshape(-1)]
    return power


def _racks(view: _View, res: Resolver) -> list[Problem]:
    """``rack-slot``, ``rack-units`` and ``rack-power``, rack by rack in design order.

    Every rack's members are gathered in one pass (in ``Topology.members`` order: by slot, then
    id), a member's U and a switch's or storage's power once per class, a server's power by
    :func:`_server_powers`: the same figures added in the same order as member by member."""
    import numpy as np

    is_rack = view.of_kind("rack")
    if not is_rack.any():
        return []
    items, par, cls = view.items, view.parent, view.cls
    inside = np.flatnonzero(view.of_kind(*RACKABLE) & (par >= 0))
    inside = inside[is_rack[par[inside]]]
    units_of = view.per_class([int(f["rack_units_used"]) if k in RACKABLE else 0
                               for k, f in zip(view.kinds, view.resolved())], np.int64)
    watts = view.per_class([float(f.get("power_W", 0.0)) if k in RACKABLE else 0.0
                            for k, f in zip(view.kinds, view.resolved())], np.float64)
    power = watts[inside]
    servers = view.of_kind("gpu_server")[inside]
    power[servers] = _server_powers(view, res, inside[servers])
    units, power = units_of[inside].tolist(), power.tolist()
    members: dict[int, list[int]] = {}  # rack -> positions in ``inside``
    for j, r in enumerate(par[inside].tolist()):
        members.setdefault(r, []).append(j)
    inside = inside.tolist()
    out = []
    for r in np.flatnonzero(is_rack).tolist():
        rack = items[r]
        fig = view.figs[cls[r]]
        height = int(fig["rack_units"])
        kids = sorted(members.get(r, ()), key=lambda j: _by_slot(items[inside[j]]))
        total_u = 0
        taken: dict[int, str] = {}
        for j in kids:
            m, u = items[inside[j]], units[j]
            total_u += u
            if m.slot is None:
                continue
            top = m.slot + u - 1
            if m.slot < 1 or top > height:
                out.append(Problem("error", "rack-slot",
                                   f"occupies U{m.slot}-U{top} of a {height}U rack '{rack.id}'",
                                   f"place it between U1 and U{height - u + 1}", component=m.id))
                continue
            clash = sorted({taken[x] for x in range(m.slot, top + 1) if x in taken})
            if clash:
                out.append(Problem("error", "rack-slot",
                                   f"U{m.slot}-U{top} overlap {', '.join(clash)} in '{rack.id}'",
                                   "move it to free U slots", component=m.id))
            taken.update((x, m.id) for x in range(m.slot, top + 1))
        if total_u > height:
            out.append(Problem("error", "rack-units", f"members need {total_u}U; the rack has {height}U",
                               "move some of them to another rack", component=rack.id))
        drawn = sum(power[j] for j in kids)
        budget = float(fig["power_budget_kW"]) * 1000.0
        if drawn > budget:
            out.append(Problem("error", "rack-power",
                               f"members draw up to {drawn / 1000:.1f} kW; the budget is {budget / 1000:.1f} kW",
                               "move servers to another rack or raise the rack's power budget",
                               component=rack.id))
    return out
