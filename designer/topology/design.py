"""A design document: the topology plus the workload and scenario settings saved with it (no Qt)."""

from __future__ import annotations

import copy
from typing import Any, Callable

from designer.topology.model import ChangeEvent, Topology

#: scenario settings and their defaults (the engine reads these; the file format saves them)
SCENARIO_DEFAULTS: dict[str, Any] = {
    "offload": "host",          # "host" (host-managed) or "dpu" (DPU-offloaded); per-server overrides below
    "per_server": {},           # server id -> "host" | "dpu"
    "routing": "ecmp",          # "ecmp" (flow hash) or "adaptive" (spread evenly)
    "encryption": False,        # encrypt traffic in flight (per tenant)
    "tenants": 1,               # jobs sharing the fabric
    "checkpoint_interval_s": 3600.0,
    "seed": 0,
}

#: allowed values of the scenario's choice settings
SCENARIO_CHOICES: dict[str, tuple[str, ...]] = {
    "offload": ("host", "dpu"),
    "routing": ("ecmp", "adaptive"),
}


class Design:
    """What a design file holds. ``subscribe`` forwards topology events and adds
    ``ChangeEvent('design_changed', key, old, new)`` for name/workload/scenario edits."""

    def __init__(self, topology: Topology | None = None, name: str = "Untitled design",
                 workload: dict[str, Any] | None = None, scenario: dict[str, Any] | None = None,
                 meta: dict[str, Any] | None = None) -> None:
        self.topology = topology if topology is not None else Topology()
        self.name = name
        self.workload: dict[str, Any] = dict(workload or {})
        self.scenario: dict[str, Any] = {**copy.deepcopy(SCENARIO_DEFAULTS), **(scenario or {})}
        self.meta: dict[str, Any] = dict(meta or {})
        self._subscribers: list[Callable[[ChangeEvent], None]] = []

    def subscribe(self, callback: Callable[[ChangeEvent], None]) -> None:
        self.topology.subscribe(callback)
        if callback not in self._subscribers:
            self._subscribers.append(callback)

    def unsubscribe(self, callback: Callable[[ChangeEvent], None]) -> None:
        self.topology.unsubscribe(callback)
        if callback in self._subscribers:
            self._subscribers.remove(callback)

    def set(self, key: str, value: Any) -> Any:
        """Set ``name``, ``workload`` or ``scenario`` (whole value); returns the old value."""
        if key not in ("name", "workload", "scenario", "meta"):
            raise KeyError(f"a design has no setting '{key}'")
        old = copy.deepcopy(getattr(self, key))
        setattr(self, key, copy.deepcopy(value))
        self.topology.version += 1
        for cb in list(self._subscribers):
            cb(ChangeEvent("design_changed", key, old, copy.deepcopy(value)))
        return old

    def copy(self) -> "Design":
        return Design(self.topology.copy(), self.name, copy.deepcopy(self.workload),
                      copy.deepcopy(self.scenario), copy.deepcopy(self.meta))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Design) and self.name == other.name
                and self.topology == other.topology and self.workload == other.workload
                and self.scenario == other.scenario)

    __hash__ = None  # type: ignore[assignment]
