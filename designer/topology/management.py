"""The management plane of a design (issue 25): which switches and cables are management, no Qt.

A **management switch** is a switch whose ``management`` property is true (the templates set it on
the out-of-band switches they draw; the inspector's "Management (out-of-band) switch" sets it on
any switch). A **management link** is a link with a management switch at either end: a server's
BMC port or a DPU's OOB port to its management switch, or a management switch's uplink to the
management aggregation. They carry configuration, monitoring and console traffic, never training
traffic: the engine leaves management switches out of its fabric (``engine.network.structure``),
so their links are in no route, no line rate and no result, while their power is counted with the
other switches' (they draw it while the cluster trains). In-band management runs over the
front-end network (``frontend`` switches), which the engine also keeps out of the training paths.

Ports (validation's ``ports-exceeded``): a management link on a DPU takes one of its
``oob_ports``, not a network port; on a server one of its ``bmc_ports``. Sources: the BlueField
OOB port is an RJ45 1GbE port bridged to the card's BMC and Arm cores (NVIDIA BlueField BMC
software documentation, "OOB Network 3-Port Switch Control"); the DGX H100 datasheet lists the
host BMC with its own RJ45 port.
"""

from __future__ import annotations

from typing import Any


def management_ids(topology: Any) -> frozenset[str]:
    """Ids of the design's management switches (``management`` property true)."""
    return frozenset(c.id for c in topology.components.values()
                     if c.kind == "switch" and c.props and c.props.get("management") is True)


def is_management(link: Any, ids: frozenset[str]) -> bool:
    """Whether ``link`` ends on a management switch (``ids``: :func:`management_ids`)."""
    return link.a in ids or link.b in ids


def is_management_switch(comp: Any) -> bool:
    """Whether ``comp`` (a Component or None) is a management switch."""
    return comp is not None and comp.kind == "switch" and bool(comp.props) \
        and comp.props.get("management") is True


def traffic_links_of(topology: Any, node: str) -> list[Any]:
    """``topology.links_of(node)`` without the management links (a DPU's OOB port, a server's BMC
    port): the links that can carry the node's traffic, its line rate. Looks only at the node's
    own links' ends."""
    comps = topology.components
    return [link for link in topology.links_of(node)
            if not (is_management_switch(comps.get(link.a)) or is_management_switch(comps.get(link.b)))]


def switches_text(topology: Any) -> str:
    """``"20 switches + 5 management switches"``: the fabric switches and the management ones, as
    ``new``, ``validate``, the app's status bar and its inspector count them (``"20 switches"``
    without a management network)."""
    switches = topology.switches()
    mgmt = sum(1 for c in switches if is_management_switch(c))
    text = f"{len(switches) - mgmt:,} switches"
    return text + (f" + {mgmt:,} management switch{'es' if mgmt != 1 else ''}" if mgmt else "")
