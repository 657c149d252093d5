"""Design generators: two-tier leaf-spine, k-ary fat-tree and rail-optimized fabrics (no Qt).

Every generator returns a :class:`Design` with servers in racks, switches in network racks and canvas
positions from :func:`layout.layout_by_tier`. :data:`TEMPLATES` maps a name to a :class:`Template`
whose ``options`` (name, type, default, help) build the ``dpu-designer new`` options and the GUI's
"new from template" dialog.

Rules shared by the generators (all figures come from the catalog through ``Catalog.resolve``):

* A leaf switch of ``P`` ports with oversubscription ``r`` (downlink:uplink bandwidth) gives
  ``floor(P * r / (1 + r))`` ports to hosts and the rest to spines. Spines: ``S = ceil(L * u / P)``
  for ``L`` leaves of ``u`` uplinks; uplink ``g`` (numbered over all leaves) goes to spine ``g mod S``,
  so every spine gets ``floor`` or ``ceil`` of ``L * u / S`` <= ``P`` cables, and every leaf reaches
  every spine as long as ``S <= u``. A storage fabric too big for that gets a core tier (see
  ``_Builder.spines``).
* Each NIC/DPU uses one port to its leaf; a link runs at the lower of the two ends' port speeds and
  on the switch's fabric medium.
* Servers go into racks of the ``rack`` model, at most ``servers_per_rack`` (4, as in the DGX
  SuperPOD) and as many as its height and power budget allow (power counted as in
  :func:`validation.component_power_W`); switches and storage fill network racks the same way.
* Storage ``separate``: each server's storage DPUs (``dpu_count`` of its ``dpu_model``; the server
  itself as on-board NIC when the model has none) and the storage appliances' ports form their own
  leaf-spine fabric. ``converged``: the appliances hang off the compute fabric (leaf-spine and
  rail-optimized).
* Front-end ``ethernet`` (north-south: users, data ingest, in-band management): each server's
  north-south DPUs (its ``dpu_count`` of ``dpu_model``, the same cards as for storage, on a free
  port: a BlueField-3 has two) or, without DPUs, the server itself get one link each to front-end
  leaves of ``frontend_switch`` (non-blocking, spines above as for storage). Its switches carry
  ``frontend = true``: a separate Ethernet network, never a path for training collectives (as in the
  DGX SuperPOD, where storage and in-band management share the BlueField-3 ports and the compute
  fabric is apart).
* Management ``management`` (issue 25): ``oob`` draws the out-of-band management network: per
  compute rack, management switches of ``management_switch`` (an SN2201: 48 x 1GbE RJ45 + 4 x
  100GbE uplinks, 1U) cabled to every server's BMC ports (``bmc_ports``) and every DPU's OOB ports
  (``oob_ports``), as many switches as the rack's ports need; each takes two of its uplink ports
  (assumed: a redundant pair, one to each of two aggregation switches where there are two) to
  switches of ``management_aggregation`` (an SN2700, 32 x 100GbE) above (pods and a core when
  one layer cannot reach them all, as for the other fabrics). A management switch goes into its
  compute rack when the rack's height and power budget take it, else into the network racks.
  Its switches carry ``management = true``: the engine leaves them and their cables out of every
  traffic path (``designer.topology.management``). ``oob+inband`` adds the in-band management
  path, the front-end Ethernet network above (built with ``frontend_switch`` when ``frontend`` is
  ``none``), as the DGX SuperPOD runs in-band management over it. ``none`` draws neither. The
  option's default is ``oob`` for a new design (``dpu-designer new``, the app's dialog); the
  builders called without it draw none, so designs built in code stay as they were. A system
  with ``bmc_ports = 0`` (NVL72: its trays and DPUs are on its own OOB switches, inside it) gets
  no management cables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Callable, Sequence, TypeVar, cast

from designer.errors import UsageError
from designer.gcpause import paused
from designer.topology import kinds
from designer.topology.design import Design
from designer.topology.layout import layout_by_tier
from designer.topology.kinds import ID_PREFIX
from designer.topology.model import Component, Link, Topology, replace_item
from designer.topology.validation import Resolver, component_power_W

STORAGE_CHOICES = ("separate", "converged", "none")
FRONTEND_CHOICES = ("none", "ethernet")
MANAGEMENT_CHOICES = ("none", "oob", "oob+inband")
#: uplinks each management switch takes to the aggregation (assumed: a redundant pair)
MANAGEMENT_UPLINKS = 2


@dataclass(frozen=True)
class Option:
    """One option of a template: ``type`` is "int", "float", "str" or "choice"; ``catalog`` names the
    catalog kind whose ids are valid values (empty string allowed when ``default`` is "")."""

    name: str
    type: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    catalog: str = ""
    min: float | None = None
    #: a new design gets ``default`` when the option is not given (``dpu-designer new``, the app's
    #: dialog); a builder called without it keeps its own default (designs built in code stay)
    fill: bool = False


@dataclass(frozen=True)
class Template:
    name: str
    label: str
    help: str
    build: Callable[..., Design]
    options: tuple[Option, ...]
    #: catalog workload preset that suits the designs this template makes (what ``new`` and the
    #: GUI's "new from template" should fit to the design; see :func:`suggested_workload`)
    workload: str = "llama3-8b"

    def __call__(self, **options: Any) -> Design:
        """Build the design. Sizes are checked first (a design past the file format's limits would
        exhaust memory before any message), and the design records the template and options it
        was made with (``meta``) so that a sweep over ``servers`` can make it again. With a DPU
        model the design's scenario starts DPU-offloaded: that is what its DPUs are for."""
        _check_size(self.name, options)
        design = self.build(**options)
        given = {k: v for k, v in options.items() if k != "catalog"}
        design.meta = {**design.meta, "template": self.name, "options": given}
        if options.get("dpu"):
            design.scenario["offload"] = "dpu"
        return design


def suggested_workload(design: Design) -> str:
    """The workload preset of the template ``design`` was made with (``design.meta``), else the
    default one: e.g. Llama 3 70B (tp 8, pp 4) for NVL72 racks, Llama 3 8B for the others."""
    template = TEMPLATES.get(str(design.meta.get("template", "")))
    return template.workload if template else Template.workload


def _check_size(name: str, options: dict[str, Any]) -> None:
    from designer.topology.fileformat import MAX_COMPONENTS

    servers = options.get("servers")
    if name == "fat-tree":
        k = int(options.get("k", 8))
        servers = k ** 3 // 4
        what = f"--k {k} makes {servers:,} hosts"
    else:
        what = f"--servers {servers:,}" if isinstance(servers, int) else ""
    per_server = 2 + _devices_per_server(options)  # the server, its rack share, its NICs/DPUs
    if isinstance(servers, int) and servers * per_server > MAX_COMPONENTS:
        raise UsageError(f"{what}: the design would hold about {servers * per_server:,} components, "
                         f"more than a design file takes ({MAX_COMPONENTS:,}); use "
                         + ("a smaller --k" if name == "fat-tree" else "fewer servers"))
    _check_storage_size(options, servers * per_server if isinstance(servers, int) else 0)
    gpus = options.get("gpus_per_server")
    spec = kinds.field_spec("gpu_server", "gpu_count")
    if gpus and spec is not None and (problem := spec.check(gpus)):
        raise UsageError(f"--gpus-per-server {gpus}: {problem}")


def _check_storage_size(options: dict[str, Any], server_components: int) -> None:
    """``--storage-count`` appliances that the file format cannot hold, refused before building.

    derived: each appliance is one component cabled on every port (``ports`` from the catalog) to a
    leaf, and that leaf carries those ports on to the next tier with one uplink per
    ``oversubscription`` downlinks, so the appliances alone need at least
    ``count x ports x (1 + 1/oversubscription)`` links and ``count`` components (besides the
    servers' ``server_components``)."""
    from designer.topology.fileformat import MAX_COMPONENTS, MAX_LINKS

    count = options.get("storage_count")
    if options.get("storage", "separate") == "none" or not isinstance(count, int) or count <= 0:
        return
    catalog = options.get("catalog")
    if catalog is None:
        from designer.topology.catalog import load_catalog

        catalog = load_catalog()
    try:
        ports = int(catalog.get("storage", options.get("storage_model") or "generic-nvmeof-afa")
                    .get("ports") or 1)
    except (KeyError, TypeError, ValueError):
        return  # an unknown model is named by the template itself
    over = options.get("oversubscription", 1.0)
    over = float(over) if isinstance(over, (int, float)) and over >= 1 else 1.0
    links = int(count * ports * (1.0 + 1.0 / over))
    if links > MAX_LINKS:
        raise UsageError(f"--storage-count {count:,}: {count:,} appliances of {ports} ports need about "
                         f"{links:,} links (their cables and the leaves' uplinks), more than a design "
                         f"file holds ({MAX_LINKS:,}); use fewer storage appliances")
    if count + server_components > MAX_COMPONENTS:
        raise UsageError(f"--storage-count {count:,}: the design would hold about "
                         f"{count + server_components:,} components, more than a design file takes "
                         f"({MAX_COMPONENTS:,}); use fewer storage appliances")


def _devices_per_server(options: dict[str, Any]) -> int:
    """NICs and DPUs a server of the chosen model brings (its compute rails plus its north-south
    DPUs, one more for a front-end port); 10 (DGX H100 with two BlueField-3) if the model is unknown."""
    catalog = options.get("catalog")
    if catalog is None:
        from designer.topology.catalog import load_catalog

        catalog = load_catalog()
    try:
        fig = catalog.get("server", options.get("server") or "dgx-h100")
        return int(fig.get("nic_count", 8)) + int(fig.get("dpu_count", 0)) + 1
    except (KeyError, TypeError, ValueError):
        return 10


# ---------------------------------------------------------------------------------------- builder
class _Power:
    """What :func:`validation.component_power_W` needs of a topology (a server's adapters in
    ``Topology.attached`` order: by slot, then id) over the builder's components."""

    def __init__(self, comps: dict[str, Component], attached: dict[str, list[str]]) -> None:
        self.comps, self._attached = comps, attached

    def attached(self, server_id: str) -> list[Component]:
        kids = [self.comps[d] for d in self._attached.get(server_id, ())]
        kids.sort(key=lambda c: (c.slot if c.slot is not None else 1 << 30, c.id))
        return kids


class _Builder:
    """Collects a design's components and links in plain lists and makes the topology in one step
    (:meth:`finish`, ``Topology.from_items``), with cached catalog figures and rack filling.

    Ids come from one counter per prefix, exactly as ``Topology.new_id`` hands them out in a new
    topology that only this builder fills (``srv-1``, ``srv-2``, …, ``link-1``, …), and components
    and links are kept in the order they are made: the design is the one the per-item
    ``add_component``/``add_new_link`` calls made, without an event, a copy and an id check per item.
    Components alike share one *class* (kind, model, props: their figures and what a link to them
    runs at), so a link's speed and medium and a rack member's U and power are worked out once per
    class, not per item."""

    def __init__(self, catalog: Any, rack_model: str, per_rack: int) -> None:
        if catalog is None:
            from designer.topology.catalog import load_catalog

            catalog = load_catalog()
        self.res = Resolver(catalog)
        self.comps: dict[str, Component] = {}   # in the order made (the design file's order)
        self.links: list[Link] = []
        self._count: dict[str, int] = {}        # id prefix -> last number handed out
        self._class_of: dict[str, int] = {}     # component id -> its class (index in _classes)
        self._classes: list[tuple[str, dict[str, Any]]] = []  # class -> (kind, figures)
        self._class_key: dict[tuple, int] = {}
        self._attached: dict[str, list[str]] = {}  # server id -> its NICs/DPUs in the order made
        #: server id -> its adapters as runs (class, first slot, count), in the order made
        self._runs: dict[str, tuple[tuple[int, int, int], ...]] = {}
        self._link_memo: dict[tuple[int, int], tuple[float, str]] = {}  # see _link_kind
        self._load: dict[Any, tuple[int, float]] = {}  # see _rack_load
        self.rack_model = rack_model
        self.per_rack = per_rack
        self._fill: dict[str, tuple[str | None, int, int, float]] = {}  # row -> rack, next U, count, W
        #: switches made now belong to the front-end network (``frontend`` prop)
        self.frontend = False
        #: server id -> its north-south DPUs (storage and front-end ports), made on first use
        self.north_south: dict[str, list[str]] = {}
        #: switches made now belong to the management network (``management`` prop)
        self.management = False
        #: rack id -> (next free U, W so far) of every rack filled so far (see ``rack_into``)
        self._rack_state: dict[str, tuple[int, float]] = {}
        self.need("rack", rack_model, "--rack")

    def need(self, kind: str, model: str, option: str) -> dict[str, Any]:
        if not self.res.known(kind, model):
            known = ", ".join(sorted(self.res.ids(kind)))
            raise UsageError(f"{option}: no {kinds.CATALOG_KIND[kind]} model '{model}' in the catalog "
                             f"(known: {known})")
        return self.fig(kind, model)

    def fig(self, kind: str, model: str) -> dict[str, Any]:
        return self.res(Component("", kind, model))

    def figures(self, cid: str) -> dict[str, Any]:
        """The resolved figures of component ``cid`` (read only: shared by its class)."""
        return self._classes[self._class_of[cid]][1]

    def kind(self, cid: str) -> str:
        return self._classes[self._class_of[cid]][0]

    def _class(self, kind: str, model: str, props: dict[str, Any]) -> int:
        key = (kind, model, tuple(sorted(props.items())))
        c = self._class_key.get(key)
        if c is None:
            c = self._class_key[key] = len(self._classes)
            self._classes.append((kind, self.res(Component("", kind, model, props=dict(props)))))
        return c

    def _ids(self, kind: str, count: int) -> list[str]:
        """``count`` fresh ids of ``kind``'s prefix (``Topology.new_id`` in a new topology)."""
        prefix = ID_PREFIX.get(kind, kind)
        first = self._count.get(prefix, 0)
        self._count[prefix] = first + count
        return [f"{prefix}-{n}" for n in range(first + 1, first + count + 1)]

    def add_many(self, kind: str, model: str, count: int, parent: str | None = None, first_slot: int = 0,
                 props: dict[str, Any] | None = None) -> list[str]:
        """``count`` components of one class; with a ``parent`` (a server) they take slots
        ``first_slot``, ``first_slot + 1``, … (without one, no slot). Each gets its own props dict."""
        props = props or {}
        c = self._class(kind, model, props)
        ids = self._ids(kind, count)
        comps, class_of = self.comps, self._class_of
        for i, cid in enumerate(ids):
            comps[cid] = Component(cid, kind, model, "", parent, None if parent is None else first_slot + i,
                                   dict(props))
            class_of[cid] = c
        if parent is not None:
            self._attached.setdefault(parent, []).extend(ids)
            self._runs[parent] = self._runs.get(parent, ()) + ((c, first_slot, count),)
        return ids

    def add_servers(self, model: str, count: int, props: dict[str, Any], kind: str, device: str,
                    per_server: int) -> tuple[list[str], list[list[str]]]:
        """``count`` servers, each followed by its ``per_server`` devices of ``kind``/``device`` in
        slots 0, 1, …: the ids, components and order of ``add`` and ``add_many`` server by server,
        in one loop."""
        cs, cd = self._class("gpu_server", model, props), self._class(kind, device, {})
        sids, dids = self._ids("gpu_server", count), self._ids(kind, count * per_server)
        comps, class_of, attached, runs = self.comps, self._class_of, self._attached, self._runs
        run = ((cd, 0, per_server),)
        devices = []
        for s, sid in enumerate(sids):
            comps[sid] = Component(sid, "gpu_server", model, "", None, None, dict(props))
            class_of[sid] = cs
            mine = dids[s * per_server:(s + 1) * per_server]
            for r, did in enumerate(mine):
                comps[did] = Component(did, kind, device, "", sid, r, {})
            attached[sid] = list(mine)
            runs[sid] = run
            devices.append(mine)
        class_of.update(zip(dids, repeat(cd)))
        return sids, devices

    def attach_each(self, servers: list[str], kind: str, model: str, count: int) -> list[list[str]]:
        """``count`` devices of ``kind``/``model`` on each of ``servers`` in turn, in the slots after
        the server's devices so far: ``add_many(kind, model, count, parent=s, first_slot=…)``
        server by server, in one loop."""
        c = self._class(kind, model, {})
        ids = self._ids(kind, count * len(servers))
        comps, attached, runs = self.comps, self._attached, self._runs
        out = []
        for p, sid in enumerate(servers):
            mine = ids[p * count:(p + 1) * count]
            have = attached.setdefault(sid, [])
            base = len(have)
            for i, did in enumerate(mine):
                comps[did] = Component(did, kind, model, "", sid, base + i, {})
            have += mine
            runs[sid] = runs.get(sid, ()) + ((c, base, count),)
            out.append(mine)
        self._class_of.update(zip(ids, repeat(c)))
        return out

    def add(self, kind: str, model: str, props: dict[str, Any] | None = None) -> str:
        """One component placed in nothing (yet): a server, switch, storage or rack."""
        return self.add_many(kind, model, 1, props=props)[0]

    def _switch_props(self, tier: str) -> dict[str, Any]:
        props: dict[str, Any] = {"tier": tier}
        if self.frontend:
            props["frontend"] = True
        if self.management:
            props["management"] = True
        return props

    def switch(self, model: str, tier: str) -> str:
        return self.add("switch", model, props=self._switch_props(tier))

    def switches(self, model: str, tier: str, count: int) -> list[str]:
        """``count`` switches of one tier (``switch`` ``count`` times)."""
        return self.add_many("switch", model, count, props=self._switch_props(tier))

    def _link_kind(self, ca: int, cb: int) -> tuple[float, str]:
        """Speed and medium of a link between components of classes ``ca`` and ``cb``: the lower
        of the two ends' port speeds (a server, its on-board NIC, has no port figure; 400 Gb/s when
        neither end has one) on the switch's medium (else the first end's with a figure; else
        Ethernet). Worked out once per pair of classes."""
        hit = self._link_memo.get((ca, cb))
        if hit is None:
            ends = [self._classes[ca], self._classes[cb]]
            figs = [f for k, f in ends if k != "gpu_server"]
            if all(k == "switch" for k, _ in ends):  # switch to switch: on uplink ports if any
                speed = min(max(f["port_speed_Gbps"], f.get("uplink_speed_Gbps") or 0) for f in figs)
            else:
                speed = min((f["port_speed_Gbps"] for f in figs), default=400.0)
            switch = [f["medium"] for k, f in ends if k == "switch"]
            medium = switch[0] if switch else (figs[0]["medium"] if figs else "ethernet")
            hit = self._link_memo[(ca, cb)] = (speed, medium)
        return hit

    def link(self, a: str, b: str, lanes: int = 1) -> None:
        self.link_many([a], [b], [lanes])

    def link_many(self, a: list[str], b: list[str], lanes: list[int]) -> None:
        """Links ``a[i]``–``b[i]`` of ``lanes[i]`` cables in this order, ids ``link-N`` from the
        counter; made column by column (``map`` over the lists, no Python loop per link)."""
        ids = self._ids("link", len(a))
        class_of, memo = self._class_of, self._link_memo
        pairs = list(zip(map(class_of.__getitem__, a), map(class_of.__getitem__, b)))
        for pair in dict.fromkeys(pairs).keys() - memo.keys():
            self._link_kind(*pair)
        kind = list(map(memo.__getitem__, pairs))
        self.links += map(Link, ids, a, b, [k[1] for k in kind], [k[0] for k in kind], repeat(0.0), lanes)

    def _rack_load(self, cid: str) -> tuple[int, float]:
        """(U, W) a rack member takes: ``rack_units_used``, and its power as
        :func:`validation.component_power_W` counts it (a server with its adapters), worked out
        once per class (a server: per class of it and its runs of adapters, each run a class in
        consecutive slots; slots never repeat on a server here, so equal runs put equal classes
        in equal ``attached`` order)."""
        c = self._class_of[cid]
        kind, fig = self._classes[c]
        key: Any = c
        if kind == "gpu_server":
            key = (c, self._runs.get(cid, ()))
        hit = self._load.get(key)
        if hit is None:
            # _Power is the part of a Topology component_power_W reads (components, attached)
            view = cast(Topology, _Power(self.comps, self._attached))
            power = (component_power_W(view, self.comps[cid], self.res)
                     if kind == "gpu_server" else float(fig.get("power_W", 0.0)))
            hit = self._load[key] = (int(fig["rack_units_used"]), power)
        return hit

    def rack(self, cid: str, row: str) -> None:
        """Put a component in the current rack of ``row`` (a new one when it is full)."""
        rack_fig = self.fig("rack", self.rack_model)
        units, power = self._rack_load(cid)
        rack, next_u, count, used_W = self._fill.get(row, (None, 1, 0, 0.0))
        full = (rack is None or (row == "compute" and count >= self.per_rack)
                or next_u + units - 1 > rack_fig["rack_units"]
                or used_W + power > rack_fig["power_budget_kW"] * 1000.0)
        if full:
            rack, next_u, count, used_W = self.add("rack", self.rack_model), 1, 0, 0.0
        assert rack is not None  # a rack was just added when none was open
        self.comps[cid] = replace_item(self.comps[cid], parent=rack, slot=next_u)
        self._fill[row] = (rack, next_u + units, count + 1, used_W + power)
        if rack is not None:
            self._rack_state[rack] = (next_u + units, used_W + power)

    def rack_into(self, cid: str, rack: str) -> bool:
        """Put a component in ``rack`` (one filled by :meth:`rack`) above what it holds, when the
        rack's height and power budget take it; False (left unracked) when they do not."""
        rack_fig = self.fig("rack", self.rack_model)
        units, power = self._rack_load(cid)
        state = self._rack_state.get(rack)
        if state is None:
            return False
        next_u, used_W = state
        if next_u + units - 1 > rack_fig["rack_units"] or used_W + power > rack_fig["power_budget_kW"] * 1000.0:
            return False
        self.comps[cid] = replace_item(self.comps[cid], parent=rack, slot=next_u)
        self._rack_state[rack] = (next_u + units, used_W + power)
        return True

    def leaf_ports(self, model: str, oversubscription: float,
                   ends: list[str] | None = None) -> tuple[int, int]:
        """(ports to hosts, ports to spines) of a leaf of ``model`` whose host ports link to
        ``ends`` (NIC/DPU/storage ids; None: host links at the switch's own port speed).

        Oversubscription is a ratio of bandwidth, not of ports: ``D·d = r·U·u`` for ``D`` host
        ports at ``d`` Gb/s and ``U = P − D`` uplinks at the switch's speed ``u``, so
        ``D = floor(r·u·P / (d + r·u))``; with ``d = u`` that is ``floor(P·r / (1 + r))``.
        ``d`` is the fastest host link (a link runs at the slower end's speed, :meth:`link`), so
        the ratio is not exceeded on any leaf.
        """
        if not (math.isfinite(oversubscription) and oversubscription >= 1.0):
            raise UsageError(f"--oversubscription {oversubscription:g}: must be a finite number, 1 or "
                             f"more (downlink:uplink bandwidth ratio)")
        fig = self.fig("switch", model)
        ports, up_Gbps = int(fig["ports"]), float(fig["port_speed_Gbps"])
        down_Gbps = self.host_link_Gbps(model, ends)
        down = int(oversubscription * up_Gbps * ports // (down_Gbps + oversubscription * up_Gbps))
        return down, ports - down

    def host_link_Gbps(self, model: str, ends: list[str] | None) -> float:
        """Speed of the fastest link from ``ends`` to a switch of ``model`` (one look per class)."""
        up_Gbps = float(self.fig("switch", model)["port_speed_Gbps"])
        classes = [self._classes[c] for c in dict.fromkeys(self._class_of[e] for e in ends or [])]
        speeds = [min(up_Gbps, float(f["port_speed_Gbps"])) for k, f in classes if k != "gpu_server"]
        return max(speeds, default=up_Gbps)

    def leaves(self, groups: list[list[str]], model: str) -> list[str]:
        """One leaf per group of endpoints (an id repeated n times takes n ports, one link)."""
        out = self.switches(model, "leaf", len(groups))
        a: list[str] = []
        b: list[str] = []
        lanes: list[int] = []
        for group, leaf in zip(groups, out):
            if len(dict.fromkeys(group)) == len(group):  # no end repeated (NICs, DPUs): one lane each
                a += group
                b += [leaf] * len(group)
                lanes += [1] * len(group)
                continue
            count: dict[str, int] = {}
            for end in group:
                count[end] = count.get(end, 0) + 1
            a += count
            b += [leaf] * len(count)
            lanes += count.values()
        self.link_many(a, b, lanes)
        return out

    def connect_up(self, lowers: list[tuple[str, int]], uppers: list[str]) -> None:
        """Give each lower switch its uplinks, uplink ``g`` (numbered over all) to ``uppers[g mod n]``,
        bundled into one link per pair (in the order of ``uppers``).

        derived: a lower switch whose ``n`` uplinks are numbered ``g0 … g0 + n − 1`` gives
        ``n // m`` of them to each of the ``m`` uppers and one more to the ``n mod m`` uppers
        ``g0 mod m, g0 + 1 mod m, …`` (cyclically): the count of the loop over its uplinks."""
        m = len(uppers)
        g = 0
        a: list[str] = []
        b: list[str] = []
        lanes: list[int] = []
        for lower, n in lowers:
            whole, rest = divmod(n, m)
            start = g % m
            for j, upper in enumerate(uppers):
                count = whole + ((j - start) % m < rest)
                if count:
                    a.append(lower)
                    b.append(upper)
                    lanes.append(count)
            g += n
        self.link_many(a, b, lanes)

    def spines(self, leaves: list[str], up: int, model: str, core: bool = False) -> None:
        """Switch tiers above ``leaves`` with ``up`` uplinks each (see the module doc); none for one
        leaf. When one spine layer cannot reach every leaf and ``core`` is allowed: pods of
        ``ports/2`` leaves with ``up`` spines each (one cable per leaf, as many up as down), spine i of
        every pod to core group i."""
        if len(leaves) <= 1:
            return
        ports = int(self.fig("switch", model)["ports"])
        count = math.ceil(len(leaves) * up / ports)
        if count <= up:
            spines = self.switches(model, "spine", count)
            self.connect_up([(leaf, up) for leaf in leaves], spines)
            return
        pod = ports // 2
        if not core or math.ceil(len(leaves) / pod) > ports:
            raise UsageError(f"{len(leaves)} leaves are too many for {'three' if core else 'two'} switch "
                             f"tiers of {ports}-port '{model}' switches; use fewer servers, a larger "
                             "switch or another template")
        groups: list[list[tuple[str, int]]] = [[] for _ in range(up)]
        for first in range(0, len(leaves), pod):
            members = leaves[first:first + pod]
            spines = self.switches(model, "spine", up)
            self.connect_up([(leaf, up) for leaf in members], spines)
            for group, spine in zip(groups, spines):
                group.append((spine, len(members)))
        for group in groups:
            cores = self.switches(model, "core", math.ceil(sum(n for _, n in group) / ports))
            self.connect_up(group, cores)

    def link_counts(self, ids: list[str]) -> dict[str, int]:
        """Links (not lanes) ending on each of ``ids`` so far (``len(topology.links_of(id))``)."""
        counts = dict.fromkeys(ids, 0)
        for link in self.links:
            if link.a in counts:
                counts[link.a] += 1
            if link.b in counts:
                counts[link.b] += 1
        return counts

    def finish(self, name: str, workload: dict[str, Any] | None = None) -> Design:
        for cid, c in list(self._class_of.items()):
            if self._classes[c][0] == "switch" and self.comps[cid].parent is None:
                self.rack(cid, "network")
        topo = Topology.from_items(list(self.comps.values()), self.links, self._count, noted=True)
        positions: dict[str, tuple[float, float] | None] = {**layout_by_tier(topo, self.res.catalog)}
        topo.move_many(positions)
        return Design(topo, name, workload or {})


def _gc_paused(build: Callable[..., Design]) -> Callable[..., Design]:
    """``build`` with Python's cycle collector paused (``designer.gcpause``): a design is hundreds
    of thousands of small objects that hold no reference cycles, and the collector's passes over
    them were about a fifth of building a 131k-GPU design."""
    return paused(build)


_T = TypeVar("_T")


def _chunks(items: Sequence[_T], size: int) -> list[list[_T]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def _check_count(value: int, option: str, low: int = 1) -> None:
    if not isinstance(value, int) or value < low:
        raise UsageError(f"{option} must be a whole number of at least {low}")


def _servers(b: _Builder, count: int, model: str, gpus: int, dpu: str, nic: str,
             rails: int | None = None) -> tuple[list[str], list[list[str]]]:
    """Servers with their fabric NICs (or DPUs when ``dpu`` is given), placed in racks.

    Returns the server ids and, per server, its fabric devices in rail order. ``rails`` overrides the
    model's ``nic_count`` (the fat-tree gives each host one NIC).
    """
    fig = b.need("gpu_server", model, "--server")
    kind, device = ("dpu", dpu) if dpu else ("nic", nic or fig.get("nic_model", ""))
    b.need(kind, device, "--dpu" if dpu else "--nic")
    n = int(fig.get("nic_count", 1)) if rails is None else rails
    props = {"gpu_count": gpus} if gpus else {}
    return b.add_servers(model, count, props, kind, device, n)


def _north_south(b: _Builder, sid: str) -> list[str]:
    """The server's north-south DPUs (``dpu_count`` of ``dpu_model``, made on first use), or the
    server itself (an on-board NIC) when the model has none."""
    if sid not in b.north_south:
        _make_north_south(b, [sid])
    return b.north_south[sid]


def _make_north_south(b: _Builder, servers: list[str]) -> None:
    """:func:`_north_south` of each of ``servers`` that has none yet, in that order: servers of one
    class in a row get theirs in one :meth:`_Builder.attach_each`."""
    todo = [sid for sid in dict.fromkeys(servers) if sid not in b.north_south]
    start = 0
    while start < len(todo):
        c = b._class_of[todo[start]]
        end = start + 1
        while end < len(todo) and b._class_of[todo[end]] == c:
            end += 1
        fig = b.figures(todo[start])
        run = todo[start:end]
        for sid, devs in zip(run, b.attach_each(run, "dpu", fig["dpu_model"], int(fig.get("dpu_count", 0)))):
            b.north_south[sid] = devs or [sid]
        start = end


def _storage_devices(b: _Builder, servers: list[str]) -> list[str]:
    """Each server's storage-network endpoints: its ``dpu_count`` DPUs, else the server itself."""
    _make_north_south(b, servers)
    return [d for sid in servers for d in b.north_south[sid]]


def _frontend_devices(b: _Builder, servers: list[str]) -> list[str]:
    """One front-end endpoint per north-south DPU of each server (a DPU whose ports are all linked
    already, e.g. a one-port card on the storage network, gets a sibling of its model), or the
    server itself."""
    # links are counted once: none are made in this loop, and DPUs made in it have none yet
    used = b.link_counts([dev for sid in servers for dev in b.north_south.get(sid, ())])
    ends = []
    for sid in servers:
        for dev in _north_south(b, sid):
            if b.kind(dev) == "dpu" and used.get(dev, 0) >= int(b.figures(dev)["ports"]):
                dev = b.add_many("dpu", b.comps[dev].model, 1, parent=sid,
                                 first_slot=len(b._attached[sid]))[0]
            ends.append(dev)
    return ends


def _frontend(b: _Builder, servers: list[str], frontend: str, switch: str) -> None:
    """The front-end (north-south) Ethernet network, apart from the compute and storage fabrics:
    one link per front-end endpoint (``_frontend_devices``) to non-blocking leaves of ``switch``,
    spines above (a core tier when one spine layer cannot reach every leaf)."""
    if frontend not in FRONTEND_CHOICES:
        raise UsageError(f"--frontend must be one of {', '.join(FRONTEND_CHOICES)}")
    if frontend == "none":
        return
    fig = b.need("switch", switch, "--frontend-switch")
    if fig["medium"] != "ethernet":
        raise UsageError(f"--frontend-switch {switch}: a front-end network is Ethernet, and '{switch}' is an "
                         f"{fig['medium']} switch; pick an Ethernet model such as sn5400")
    ends = _frontend_devices(b, servers)
    b.frontend = True
    try:
        down, up = b.leaf_ports(switch, 1.0, ends)
        b.spines(b.leaves(_chunks(ends, down), switch), up, switch, core=True)
    finally:
        b.frontend = False


def _inband(frontend: str, management: str) -> str:
    """The front-end option a template builds with: ``oob+inband`` management runs in-band over the
    front-end Ethernet network, so it draws one (``ethernet``) when ``frontend`` is ``none``."""
    if management not in MANAGEMENT_CHOICES:
        raise UsageError(f"--management must be one of {', '.join(MANAGEMENT_CHOICES)}")
    return "ethernet" if management == "oob+inband" and frontend == "none" else frontend


def _management(b: _Builder, servers: list[str], management: str, switch: str, aggregation: str) -> None:
    """The out-of-band management network (module docstring), after the servers are racked:
    per compute rack, the BMC ports of its servers and the OOB ports of their DPUs, in server
    order, on management switches of ``switch`` (a server's or DPU's ports on one switch are one
    link of that many lanes), each switch into that rack when it fits; their uplinks
    (:data:`MANAGEMENT_UPLINKS`, at most the switch's uplink ports) to ``aggregation`` switches
    (``_Builder.spines``)."""
    if management not in MANAGEMENT_CHOICES:
        raise UsageError(f"--management must be one of {', '.join(MANAGEMENT_CHOICES)}")
    if management == "none":
        return
    fig = b.need("switch", switch, "--management-switch")
    b.need("switch", aggregation, "--management-aggregation")
    if fig["medium"] != "ethernet":
        raise UsageError(f"--management-switch {switch}: a management network is Ethernet, and '{switch}' is an "
                         f"{fig['medium']} switch; pick an Ethernet model such as sn2201")
    uplink_ports = int(fig.get("uplink_ports") or 0)
    up = min(MANAGEMENT_UPLINKS, uplink_ports) if uplink_ports else MANAGEMENT_UPLINKS
    host_ports = int(fig["ports"]) if uplink_ports else int(fig["ports"]) - up
    if host_ports < 1:
        raise UsageError(f"--management-switch {switch}: its {fig['ports']} ports leave none for servers after "
                         f"{up} uplinks; pick a switch with more ports such as sn2201")
    by_rack: dict[str | None, list[str]] = {}
    for sid in servers:
        bmc = int(b.figures(sid).get("bmc_ports") or 0)
        if not bmc:
            continue  # the system's own OOB switches manage it (NVL72)
        ends = [sid] * bmc
        for dev in b._attached.get(sid, ()):
            if b.kind(dev) == "dpu":
                ends += [dev] * int(b.figures(dev).get("oob_ports") or 0)
        by_rack.setdefault(b.comps[sid].parent, []).extend(ends)
    if not by_rack:
        return
    b.management = True
    try:
        leaves: list[str] = []
        for rack, ends in by_rack.items():
            made = b.leaves(_chunks(ends, host_ports), switch)
            for leaf in made:
                if rack is not None:
                    b.rack_into(leaf, rack)
            leaves += made
        _management_tree(b, leaves, up, aggregation)
        if len(leaves) == 1 and aggregation:
            # one management switch still uplinks to the site's management aggregation
            agg = b.switches(aggregation, "spine", 1)
            b.connect_up([(leaves[0], up)], agg)
    finally:
        b.management = False


def _management_tree(b: _Builder, leaves: list[str], up: int, model: str) -> None:
    """Aggregation above the management switches ``leaves`` (``up`` uplinks each): the fabric's
    tiers (:meth:`_Builder.spines`, pods and a core) while three tiers of ``model`` reach them
    all; beyond that (2,048 racks of management switches need 128 pods of a 32-port SN2700's 16
    leaves, more than a core of 32 ports takes) a tree as deep as it must be, each switch taking
    ``ports - up`` links from below and ``up`` links to the tier above, until one switch holds the
    top tier's uplinks. A management network carries only BMC/OOB traffic (a few Mb/s a port,
    against 100 Gb/s uplinks), so it need not be non-blocking like the training fabric, whose
    templates refuse what three tiers cannot reach."""
    ports = int(b.fig("switch", model)["ports"])
    if len(leaves) <= 1 or math.ceil(len(leaves) / (ports // 2)) <= ports:
        b.spines(leaves, up, model, core=True)
        return
    layer = leaves
    per = max(1, (ports - up) // up)  # lower switches one aggregation switch takes, ``up`` links each
    while len(layer) * up > ports:
        upper: list[str] = []
        for group in _chunks(layer, per):
            agg = b.switches(model, "spine", 1)
            b.connect_up([(sw, up) for sw in group], agg)
            upper += agg
        layer = upper
    top = b.switches(model, "core", 1)
    b.connect_up([(sw, up) for sw in layer], top)


def _appliances(b: _Builder, count: int, model: str) -> list[str]:
    b.need("storage", model, "--storage-model")
    return b.add_many("storage", model, count)


def _appliance_ports(b: _Builder, appliances: list[str]) -> list[str]:
    return [a for a in appliances for _ in range(int(b.figures(a)["ports"]))]


def _separate_storage(b: _Builder, servers: list[str], appliances: list[str], switch: str,
                      oversubscription: float, storage_switch: str = "") -> None:
    """The separate storage fabric, of ``storage_switch`` ("" = the compute fabric's ``switch``)."""
    if storage_switch:
        b.need("switch", storage_switch, "--storage-switch")
    switch = storage_switch or switch
    ends = _storage_devices(b, servers) + _appliance_ports(b, appliances)
    down, up = b.leaf_ports(switch, oversubscription, ends)
    b.spines(b.leaves(_chunks(ends, down), switch), up, switch, core=True)


def _rack_all(b: _Builder, servers: list[str], appliances: list[str]) -> None:
    for sid in servers:
        b.rack(sid, "compute")
    for a in appliances:
        b.rack(a, "network")


def _storage_count(storage: str, count: int, servers: int, su_size: int = 32) -> int:
    if storage not in STORAGE_CHOICES:
        raise UsageError(f"--storage must be one of {', '.join(STORAGE_CHOICES)}")
    if storage == "none":
        return 0
    _check_count(count, "--storage-count", 0)
    return count or math.ceil(servers / su_size)


# ------------------------------------------------------------------------------------- templates
@_gc_paused
def leaf_spine(servers: int = 16, server: str = "dgx-h100", gpus_per_server: int = 0, nic: str = "",
               dpu: str = "", switch: str = "qm9700", oversubscription: float = 1.0,
               storage: str = "separate", storage_model: str = "generic-nvmeof-afa", storage_count: int = 0,
               storage_switch: str = "", rack: str = "rack-42u", servers_per_rack: int = 4, frontend: str = "none",
               frontend_switch: str = "sn5400", management: str = "none",
               management_switch: str = "sn2201", management_aggregation: str = "sn2700", name: str = "", catalog: Any = None) -> Design:
    """Leaf-spine: every NIC/DPU of every server to a leaf (filled in order), leaves to all spines;
    when one spine layer cannot reach every leaf (more than ``ports`` leaves of ``ports/2`` uplinks),
    pods of leaves with their own spines under a core tier, as ``_Builder.spines`` builds them."""
    _check_count(servers, "--servers")
    _check_count(servers_per_rack, "--servers-per-rack")
    b = _Builder(catalog, rack, servers_per_rack)
    b.need("switch", switch, "--switch")
    ids, devices = _servers(b, servers, server, gpus_per_server, dpu, nic)
    appliances = _appliances(b, _storage_count(storage, storage_count, servers), storage_model)
    ends = [d for devs in devices for d in devs]
    if storage == "converged":
        ends += _appliance_ports(b, appliances)
    down, up = b.leaf_ports(switch, oversubscription, ends)
    b.spines(b.leaves(_chunks(ends, down), switch), up, switch, core=True)
    if storage == "separate":
        _separate_storage(b, ids, appliances, switch, oversubscription, storage_switch)
    _frontend(b, ids, _inband(frontend, management), frontend_switch)
    _rack_all(b, ids, appliances)
    _management(b, ids, management, management_switch, management_aggregation)
    return b.finish(name or f"Leaf-spine, {servers} x {server}")


@_gc_paused
def fat_tree(k: int = 8, server: str = "dgx-h100", gpus_per_server: int = 0, nic: str = "", dpu: str = "",
             switch: str = "qm9700", storage: str = "none", storage_model: str = "generic-nvmeof-afa",
             storage_count: int = 0, storage_switch: str = "", rack: str = "rack-42u", servers_per_rack: int = 4,
             frontend: str = "none", frontend_switch: str = "sn5400", management: str = "none",
               management_switch: str = "sn2201", management_aggregation: str = "sn2700", name: str = "",
             catalog: Any = None) -> Design:
    """Three-tier k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2
    aggregation switches, (k/2)^2 core switches, k^3/4 hosts (servers with one NIC/DPU each).
    Edge switches take k/2 hosts and link to every aggregation switch of their pod; aggregation switch
    i of a pod links to core switches i*k/2 ... i*k/2 + k/2 - 1."""
    if not isinstance(k, int) or k < 2 or k % 2:
        raise UsageError("--k must be an even whole number of at least 2 (the switch radix)")
    if storage == "converged":
        raise UsageError("a fat-tree uses every switch port; use --storage separate or none")
    _check_count(servers_per_rack, "--servers-per-rack")
    half = k // 2
    b = _Builder(catalog, rack, servers_per_rack)
    b.need("switch", switch, "--switch")
    hosts = k ** 3 // 4
    ids, devices = _servers(b, hosts, server, gpus_per_server, dpu, nic, rails=1)
    appliances = _appliances(b, _storage_count(storage, storage_count, hosts), storage_model)
    cores = [b.switch(switch, "core") for _ in range(half * half)]
    for pod in range(k):
        aggs = [b.switch(switch, "spine") for _ in range(half)]
        for e in range(half):
            edge = b.switch(switch, "leaf")
            first = (pod * half + e) * half
            for devs in devices[first:first + half]:
                b.link(devs[0], edge)
            for agg in aggs:
                b.link(edge, agg)
        for i, agg in enumerate(aggs):
            for core in cores[i * half:(i + 1) * half]:
                b.link(agg, core)
    if storage == "separate":
        _separate_storage(b, ids, appliances, switch, 1.0, storage_switch)
    _frontend(b, ids, _inband(frontend, management), frontend_switch)
    _rack_all(b, ids, appliances)
    _management(b, ids, management, management_switch, management_aggregation)
    return b.finish(name or f"Fat-tree k={k}, {hosts} x {server}")


@_gc_paused
def rail_optimized(servers: int = 256, server: str = "dgx-h100", gpus_per_server: int = 0, nic: str = "",
                   dpu: str = "", switch: str = "qm9700", su_size: int = 32, oversubscription: float = 1.0,
                   storage: str = "separate", storage_model: str = "generic-nvmeof-afa",
                   storage_count: int = 0, storage_switch: str = "", rack: str = "rack-42u",
                   servers_per_rack: int = 4, rails_per_leaf: int = 1, frontend: str = "none", frontend_switch: str = "sn5400", management: str = "none",
               management_switch: str = "sn2201", management_aggregation: str = "sn2700",
                   name: str = "", catalog: Any = None) -> Design:
    """Rail-optimized fabric in the style of the NVIDIA DGX SuperPOD reference architecture: scalable
    units (SUs) of ``su_size`` servers; in each SU one leaf per rail, and NIC/DPU i of every server
    goes to the rail-i leaf of its SU. ``rails_per_leaf`` k > 1 puts rails k·j … k·j + k − 1 of every
    server of an SU on leaf j of that SU (still one switch hop between equal rails; 0 = as many
    rails as the leaf's host ports take, ⌊host ports / su_size⌋: with 72-rail NVL72 racks and SUs of 8
    on 64-port leaves, 4 rails a leaf, 18 leaves an SU). While one spine can reach every leaf
    (leaves <= switch ports) all leaves share one spine layer; beyond that each rail (group) gets its
    own switch plane and traffic between rails crosses the NVLink domain inside a server (as NCCL's
    PXN does). A rail plane with more leaves than one spine layer can reach gets a third tier (as in
    the largest SuperPODs): pods of ``ports/2`` leaves with their own spines, spine i of every pod to
    core group i of that rail (see ``_Builder.spines``); with 64-port switches and SUs of 32 that is
    up to 1,024 SUs (32,768 eight-GPU servers). Converged storage keeps every leaf in one fabric
    (three tiers when one spine layer cannot reach them all), since every rail must reach storage."""
    _check_count(servers, "--servers")
    _check_count(su_size, "--su-size")
    _check_count(servers_per_rack, "--servers-per-rack")
    _check_count(rails_per_leaf, "--rails-per-leaf", 0)
    b = _Builder(catalog, rack, servers_per_rack)
    ports = int(b.need("switch", switch, "--switch")["ports"])
    if su_size >= ports:
        raise UsageError(f"--su-size {su_size} leaves no uplink on a {ports}-port '{switch}' leaf")
    if not oversubscription >= 1.0:
        raise UsageError("--oversubscription must be 1 or more (downlink:uplink bandwidth)")
    ids, devices = _servers(b, servers, server, gpus_per_server, dpu, nic)
    rails = len(devices[0])
    per_leaf = rails_per_leaf or max(1, b.leaf_ports(switch, oversubscription, devices[0])[0] // su_size)
    per_leaf = min(per_leaf, rails)
    hosts = su_size * per_leaf
    if hosts >= ports:
        raise UsageError(f"--rails-per-leaf {per_leaf} x --su-size {su_size} = {hosts} host ports leave no "
                         f"uplink on a {ports}-port '{switch}' leaf")
    # bandwidth ratio (see _Builder.leaf_ports): the host links at d over up links at u
    ratio = b.host_link_Gbps(switch, devices[0]) / float(b.fig("switch", switch)["port_speed_Gbps"])
    up = min(ports - hosts, math.ceil(hosts * ratio / oversubscription - 1e-9))
    groups = _chunks(list(range(rails)), per_leaf)
    units = _chunks(list(range(servers)), su_size)
    appliances = _appliances(b, _storage_count(storage, storage_count, servers, su_size), storage_model)
    by_rail: list[list[str]] = [[] for _ in groups]
    for members in units:
        for g, group in enumerate(groups):
            by_rail[g] += b.leaves([[devices[s][r] for s in members for r in group]], switch)
    leaves = [leaf for su in range(len(units)) for leaf in (by_rail[g][su] for g in range(len(groups)))]
    if storage == "converged":
        ports_of = _appliance_ports(b, appliances)
        # these leaves get the rail leaves' uplinks too (one spine layer): what is left of their ports
        down = min(b.leaf_ports(switch, oversubscription, ports_of)[0], ports - up)
        leaves += b.leaves(_chunks(ports_of, down), switch)
    if len(leaves) <= ports:
        b.spines(leaves, up, switch)
    elif storage == "converged":
        b.spines(leaves, up, switch, core=True)
    else:
        for rail_leaves in by_rail:
            b.spines(rail_leaves, up, switch, core=True)
    if storage == "separate":
        _separate_storage(b, ids, appliances, switch, oversubscription, storage_switch)
    _frontend(b, ids, _inband(frontend, management), frontend_switch)
    _rack_all(b, ids, appliances)
    _management(b, ids, management, management_switch, management_aggregation)
    return b.finish(name or f"Rail-optimized, {servers} x {server}")


@_gc_paused
def nvl72(servers: int = 8, server: str = "gb200-nvl72", nic: str = "", switch: str = "",
          su_size: int = 8, rails_per_leaf: int = 0, oversubscription: float = 1.0,
          storage: str = "separate", storage_model: str = "generic-nvmeof-afa", storage_count: int = 0,
          storage_switch: str = "sn5600", rack: str = "rack-nvl72", frontend: str = "none",
          frontend_switch: str = "sn5400", management: str = "none",
               management_switch: str = "sn2201", management_aggregation: str = "sn2700", name: str = "", catalog: Any = None) -> Design:
    """NVL72 racks (GB200/GB300 NVL72: 72 GPUs in one NVLink domain, one scale-out NIC per GPU) with
    a rail-optimized scale-out fabric: ``servers`` NVL72 systems, each in its own rack of the
    ``rack`` model, in scalable units of ``su_size`` racks (8, as in the DGX SuperPOD GB200 reference
    architecture); rails grouped onto leaves as :func:`rail_optimized` with ``rails_per_leaf`` (0:
    as many as a leaf's host ports take). ``switch`` "" picks the switch by the NIC: InfiniBand at
    800 Gb/s (ConnectX-8) → Quantum-X800 ``q3400``, at 400 Gb/s → Quantum-2 ``qm9700``; Ethernet at
    800 → Spectrum-X800 ``sn5610``, at 400 → ``sn5400``. The separate storage fabric is Spectrum-4
    Ethernet (``storage_switch`` ``sn5600``), as the DGX SuperPOD GB200 RA has it (NDR InfiniBand for
    compute, Spectrum-4 800 Gb/s Ethernet for storage)."""
    if not switch:
        res = _Builder(catalog, rack, 1)
        fig = res.need("gpu_server", server, "--server")
        device = nic or fig.get("nic_model", "")
        nic_fig = res.need("nic", device, "--nic")
        fast = float(nic_fig["port_speed_Gbps"]) >= 800
        switch = {("infiniband", True): "q3400", ("infiniband", False): "qm9700",
                  ("ethernet", True): "sn5610", ("ethernet", False): "sn5400"}[(nic_fig["medium"], fast)]
    return rail_optimized(servers=servers, server=server, nic=nic, switch=switch, su_size=su_size,
                          oversubscription=oversubscription, storage=storage, storage_model=storage_model,
                          storage_count=storage_count, storage_switch=storage_switch, rack=rack,
                          servers_per_rack=1,
                          rails_per_leaf=rails_per_leaf, frontend=frontend, frontend_switch=frontend_switch,
                          management=management, management_switch=management_switch,
                          management_aggregation=management_aggregation,
                          name=name or f"NVL72 racks, {servers} x {server}", catalog=catalog)


# ------------------------------------------------------------------------------------ option specs
def _common(storage_default: str = "separate", storage_choices: tuple[str, ...] = STORAGE_CHOICES,
            ) -> tuple[Option, ...]:
    return (
        Option("server", "str", "dgx-h100", "GPU server model", catalog="server"),
        Option("gpus_per_server", "int", 0, "GPUs per server (0: as the server model has)", min=0),
        Option("nic", "str", "", "NIC model of the compute fabric (default: the server model's)",
               catalog="nic"),
        Option("dpu", "str", "", "put this DPU model in place of every compute NIC (e.g. bluefield-3)",
               catalog="dpu"),
        Option("switch", "str", "qm9700", "switch model of every tier", catalog="switch"),
        Option("storage", "choice", storage_default, "storage on its own fabric, on the compute fabric "
               "(converged) or none", choices=storage_choices),
        Option("storage_model", "str", "generic-nvmeof-afa", "storage appliance model", catalog="storage"),
        Option("storage_count", "int", 0, "storage appliances (0: one per 32 servers)", min=0),
        Option("storage_switch", "str", "", "switch model of a separate storage fabric (default: the "
               "compute fabric's)", catalog="switch"),
        Option("rack", "str", "rack-42u", "rack model", catalog="rack"),
        Option("servers_per_rack", "int", 4, "at most this many servers per rack (fewer if U or power "
               "run out)", min=1),
    ) + _FRONTEND + _MANAGEMENT + (Option("name", "str", "", "design name"),)


_FRONTEND = (
    Option("frontend", "choice", "none", "front-end (north-south) Ethernet network: one port per "
           "north-south DPU (or per server without DPUs) to its own leaves", choices=FRONTEND_CHOICES),
    Option("frontend_switch", "str", "sn5400", "switch model of the front-end network (Ethernet)",
           catalog="switch"),
)
_MANAGEMENT = (
    Option("management", "choice", "oob", "management network: oob = server BMCs and DPU OOB ports "
           "(1GbE) to management switches per rack, uplinked to a management aggregation; oob+inband "
           "adds in-band management over the front-end Ethernet network; none = no management "
           "network (designs built in code without the option get none)",
           choices=MANAGEMENT_CHOICES, fill=True),
    Option("management_switch", "str", "sn2201", "management switch model (Ethernet, per rack)",
           catalog="switch"),
    Option("management_aggregation", "str", "sn2700", "switch model the management switches "
           "uplink to", catalog="switch"),
)
_RAILS_PER_LEAF = Option("rails_per_leaf", "int", 1, "rails of an SU's servers on one leaf (0: as many as "
                         "the leaf's host ports take)", min=0)

_OVERSUB = Option("oversubscription", "float", 1.0, "leaf downlink:uplink bandwidth ratio (1 = non-blocking)",
                  min=1.0)

TEMPLATES: dict[str, Template] = {
    t.name: t for t in (
        Template("leaf-spine", "Leaf-spine", "every server NIC to a leaf, leaves to all spines (a core tier "
                 "above pods of leaves when one spine layer cannot reach them all)",
                 leaf_spine, (Option("servers", "int", 16, "GPU servers", min=1), _OVERSUB) + _common()),
        Template("fat-tree", "Three-tier k-ary fat-tree", "k pods, (k/2)^2 core switches, k^3/4 hosts "
                 "with one NIC each", fat_tree,
                 (Option("k", "int", 8, "switch radix of the fat-tree (even)", min=2),)
                 + _common("none", ("separate", "none"))),
        Template("rail-optimized", "Rail-optimized (DGX SuperPOD style)",
                 "scalable units of servers, one leaf per rail per unit, NIC i to the rail-i leaf",
                 rail_optimized,
                 (Option("servers", "int", 256, "GPU servers", min=1),
                  Option("su_size", "int", 32, "servers per scalable unit", min=1), _OVERSUB,
                  _RAILS_PER_LEAF) + _common()),
        Template("nvl72", "NVL72 racks, rail-optimized scale-out",
                 "GB200/GB300 NVL72 systems (72 GPUs in one NVLink domain), one per rack, scalable units "
                 "of racks, rail leaves", nvl72,
                 (Option("servers", "int", 8, "NVL72 racks (each one 72-GPU system)", min=1),
                  Option("server", "str", "gb200-nvl72", "NVL72 system model (gb200-nvl72, gb300-nvl72)",
                         catalog="server"),
                  Option("nic", "str", "", "scale-out NIC model, one per GPU (default: the system's, e.g. "
                         "connectx-8 on gb300-nvl72)", catalog="nic"),
                  Option("switch", "str", "", "switch model of every tier (default: by the NIC: q3400 for "
                         "800G InfiniBand, qm9700 for 400G)", catalog="switch"),
                  Option("su_size", "int", 8, "NVL72 racks per scalable unit", min=1), _OVERSUB,
                  Option("rails_per_leaf", "int", 0, _RAILS_PER_LEAF.help, min=0),
                  Option("storage", "choice", "separate", "storage on its own fabric, on the compute "
                         "fabric (converged) or none", choices=STORAGE_CHOICES),
                  Option("storage_model", "str", "generic-nvmeof-afa", "storage appliance model",
                         catalog="storage"),
                  Option("storage_count", "int", 0, "storage appliances (0: one per scalable unit)", min=0),
                  Option("storage_switch", "str", "sn5600", "switch model of a separate storage fabric "
                         "(Spectrum-4 Ethernet, as in the DGX SuperPOD GB200 RA)", catalog="switch"),
                  Option("rack", "str", "rack-nvl72", "rack model of the NVL72 systems", catalog="rack"))
                 + _FRONTEND + _MANAGEMENT + (Option("name", "str", "", "design name"),),
                 workload="llama3-70b"),
    )
}
