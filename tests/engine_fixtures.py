"""Small two-tier designs for the engine tests, built with the model API."""

from __future__ import annotations

from designer.topology.design import Design
from designer.topology.model import Component, Link, Topology


def cluster(servers: int, *, server_model: str = "dgx-h100", nic_model: str = "connectx-7",
            nic_Gbps: float = 400.0, rails: int = 8, servers_per_leaf: int = 4,
            rail_optimized: bool = True, spines: int = 4, uplinks_per_leaf: int | None = None,
            switch_model: str = "qm9700", storage: int = 0, storage_Gbps: float = 400.0,
            storage_ports: int = 4, medium: str = "infiniband", workload: dict | None = None) -> Design:
    """``servers`` GPU servers with ``rails`` NICs each under leaf switches and ``spines`` spines.

    Rail-optimized: one leaf per (server group, rail); otherwise one top-of-rack leaf per group.
    ``uplinks_per_leaf`` defaults to the leaf's downlink count (non-blocking, 1:1); fewer uplinks
    oversubscribe. Uplink u of every leaf goes to spine u mod ``spines`` (a two-tier Clos: spines
    are director-class, their port count is not checked). Storage systems hang off their own leaf.
    """
    t = Topology()
    groups = (servers + servers_per_leaf - 1) // servers_per_leaf
    leaves: list[tuple[str, int]] = []  # (id, downlinks)
    for g in range(groups):
        for r in range(rails if rail_optimized else 1):
            lid = f"leaf-{g}-{r}" if rail_optimized else f"leaf-{g}"
            t.add_component(Component(lid, "switch", switch_model, props={"tier": "leaf"}))
            leaves.append((lid, 0))
    for s in range(spines):
        t.add_component(Component(f"spine-{s}", "switch", switch_model, props={"tier": "spine"}))
    down = {lid: 0 for lid, _ in leaves}
    for i in range(servers):
        sid = f"srv-{i}"
        g = i // servers_per_leaf
        t.add_component(Component(sid, "gpu_server", server_model))
        for r in range(rails):
            nid = f"nic-{i}-{r}"
            t.add_component(Component(nid, "nic", nic_model, parent=sid, slot=r))
            leaf = f"leaf-{g}-{r}" if rail_optimized else f"leaf-{g}"
            t.add_link(Link(f"l-{nid}", nid, leaf, medium, nic_Gbps))
            down[leaf] += 1
    if storage:
        t.add_component(Component("leaf-stor", "switch", switch_model, props={"tier": "leaf"}))
        leaves.append(("leaf-stor", 0))
        down["leaf-stor"] = 0
        for k in range(storage):
            st = f"stor-{k}"
            t.add_component(Component(st, "storage", "generic-nvmeof-afa", props={"ports": storage_ports}))
            for p in range(storage_ports):
                t.add_link(Link(f"l-{st}-{p}", st, "leaf-stor", medium, storage_Gbps))
                down["leaf-stor"] += 1
    for lid, _ in leaves:
        ups = uplinks_per_leaf if uplinks_per_leaf is not None else down[lid]
        for u in range(max(1, ups)):
            t.add_link(Link(f"u-{lid}-{u}", lid, f"spine-{u % spines}", medium, nic_Gbps))
    return Design(t, name=f"{servers}-server test cluster", workload=workload or {})


def single_server(server_model: str = "dgx-h100") -> Design:
    t = Topology()
    t.add_component(Component("srv-0", "gpu_server", server_model))
    return Design(t, name="one server")
