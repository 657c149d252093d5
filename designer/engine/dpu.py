"""DPU model: each offload engine has a capacity; demand above it makes the DPU the bottleneck.

Engines of one server's DPUs together (figures per DPU from ``models/hardware/dpu.toml``):

* ``line``: packet processing at line rate, ``dpus * max_bandwidth_Gbps``;
* ``crypto``: inline AES-GCM (IPsec/TLS/MACsec), ``dpus * crypto_Gbps``;
* ``arm``: Arm cores running storage emulation (SNAP) and software switching when the embedded
  switch is not offloaded, ``dpus * arm_cores * arm_GHz`` cycles per second.

Utilization is demand / capacity and is reported as is (above 1 = over-subscribed). Work on an
over-subscribed engine takes ``utilization`` times as long: no free lunch.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class DpuCosts:
    """Arm-core cost figures; see ``models/costs/dpu.toml``."""

    snap_arm_cycles_per_io: float
    vswitch_arm_cycles_per_packet: float
    vswitch_offloaded_cycles_per_packet: float

    @classmethod
    def from_figures(cls, figures: dict[str, float]) -> "DpuCosts":
        return cls(**{f.name: float(figures[f.name]) for f in fields(cls)})


@dataclass(frozen=True)
class DpuCapacity:
    """Capacity of one server's DPUs together."""

    line_Bps: float  #: bytes per second
    crypto_Bps: float  #: bytes per second
    arm_Hz: float  #: Arm cycles per second

    @classmethod
    def of(cls, dpus: int, bandwidth_Gbps: float, crypto_Gbps: float, arm_cores: int,
           arm_GHz: float) -> "DpuCapacity":
        return cls(dpus * bandwidth_Gbps * 1e9 / 8, dpus * crypto_Gbps * 1e9 / 8,
                   dpus * arm_cores * arm_GHz * 1e9)


def utilization(capacity: DpuCapacity, *, line_Bps: float = 0.0, crypto_Bps: float = 0.0,
                arm_Hz: float = 0.0) -> dict[str, float]:
    """Demand / capacity per engine; an engine with no capacity but some demand is ``inf``."""

    def ratio(demand: float, cap: float) -> float:
        if demand <= 0:
            return 0.0
        return demand / cap if cap > 0 else float("inf")

    return {"line": ratio(line_Bps, capacity.line_Bps),
            "crypto": ratio(crypto_Bps, capacity.crypto_Bps),
            "arm": ratio(arm_Hz, capacity.arm_Hz)}


def storage_arm_cycles_per_byte(*, emulation: bool, isolated: bool, ovs_offload: bool,
                                read_io_bytes: float, vswitch_packet_bytes: float,
                                c: DpuCosts) -> float:
    """Arm cycles per byte of storage read through the DPU (SNAP per IO, software switching)."""
    cpb = c.snap_arm_cycles_per_io / read_io_bytes if emulation else 0.0
    if isolated:
        cpb += vswitch_arm_cycles(1.0, ovs_offload, vswitch_packet_bytes, c)
    return cpb


def vswitch_arm_cycles(nbytes: float, ovs_offload: bool, packet_bytes: float, c: DpuCosts) -> float:
    """Arm cycles to switch ``nbytes`` of isolated traffic: ~0 with ASAP2, software OVS without."""
    per_packet = c.vswitch_offloaded_cycles_per_packet if ovs_offload else c.vswitch_arm_cycles_per_packet
    return nbytes / packet_bytes * per_packet
