"""DPU model: each offload engine has a capacity; demand above it makes the DPU the bottleneck.

Engines of one server's DPUs together (figures per DPU from ``models/hardware/dpu.toml``):

* ``line``: packet processing at line rate, ``dpus * max_bandwidth_Gbps``;
* ``crypto``: inline AES-GCM (IPsec/TLS/MACsec), ``dpus * crypto_Gbps``;
* ``arm``: Arm cores running storage emulation (SNAP) and software switching when the embedded
  switch is not offloaded, ``dpus * arm_cores * arm_GHz`` cycles per second. Work that moves bytes
  through the Arm kernel path (software switching, TCP/TLS termination of an object-store proxy,
  a filesystem client, NVMe/TCP under SNAP) is costed from the measured Arm kernel-path rate
  (``arm_tcp_Gbps`` of the entry in ``models/hardware/dpu.toml``; BlueField-2: about 50 Gb/s on all eight
  cores, arXiv 2105.06619), not at x86 cycles per byte: ``arm_Hz / arm_path_Bps`` Arm cycles per
  byte (:func:`arm_cycles_per_byte`), scaled by the packet size (:func:`arm_path_Bps`);
* ``dram``: the DPU's own memory, ``dram_GBps`` per DPU; bytes processed on the Arm cores cross it
  ``dpu_dram_touches_per_arm_byte`` times (SNAP moves data zero-copy and does not load it).

A SmartNIC (scenario ``smartnic``: ConnectX inline crypto and ASAP2) has the ``line`` and
``crypto`` engines and no Arm complex (``arm_Hz`` 0, nothing may be put on it).

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
    inline_crypto_fraction_of_line: float  #: SmartNIC crypto rate / line rate when not catalogued
    arm_path_packet_bytes: float  #: packet size of the Arm kernel-path measurements
    dpu_dram_touches_per_arm_byte: float

    @classmethod
    def from_figures(cls, figures: dict[str, float]) -> "DpuCosts":
        return cls(**{f.name: float(figures[f.name]) for f in fields(cls)})


@dataclass(frozen=True)
class DpuCapacity:
    """Capacity of one server's DPUs together."""

    line_Bps: float  #: bytes per second
    crypto_Bps: float  #: bytes per second
    arm_Hz: float  #: Arm cycles per second
    arm_path_Bps: float = 0.0  #: Arm kernel packet path, bytes per second (0: no Arm complex)
    dram_Bps: float = 0.0  #: DPU memory bandwidth, bytes per second (0: not modelled)

    @classmethod
    def of(cls, dpus: int, bandwidth_Gbps: float, crypto_Gbps: float, arm_cores: int,
           arm_GHz: float, arm_path_Gbps: float = 0.0, dram_GBps: float = 0.0) -> "DpuCapacity":
        return cls(dpus * bandwidth_Gbps * 1e9 / 8, dpus * crypto_Gbps * 1e9 / 8,
                   dpus * arm_cores * arm_GHz * 1e9, dpus * arm_path_Gbps * 1e9 / 8,
                   dpus * dram_GBps * 1e9)

    def arm_cycles_per_byte(self) -> float:
        """Arm cycles per byte of the Arm kernel path (inf without one)."""
        return arm_cycles_per_byte(self)


#: the Arm kernel path is per-packet bound: larger packets help up to this factor (GRO/TSO-sized
#: aggregates, see models/costs/dpu.toml arm_path_packet_bytes)
MAX_PACKET_GAIN = 4.0


def arm_path_Bps(arm_tcp_Gbps: float, packet_bytes: float, measured_packet_bytes: float) -> float:
    """Bytes per second the Arm kernel path moves at ``packet_bytes``: the measured rate scaled by
    ``packet_bytes / measured_packet_bytes`` (per-packet cost), at most ``MAX_PACKET_GAIN`` times."""
    if arm_tcp_Gbps <= 0 or measured_packet_bytes <= 0:
        return 0.0
    gain = min(max(packet_bytes, 64.0) / measured_packet_bytes, MAX_PACKET_GAIN)
    return arm_tcp_Gbps * 1e9 / 8 * gain


def default_arm_tcp_Gbps(arm_cores: int, arm_GHz: float) -> float:
    """For a DPU entry without an ``arm_tcp_Gbps`` figure (0): the BlueField-2 measurement
    (50 Gb/s on 8 A72 cores at 2.5 GHz, arXiv 2105.06619) scaled by core-GHz (conservative)."""
    return 50.0 * arm_cores * arm_GHz / (8 * 2.5)


def arm_cycles_per_byte(cap: DpuCapacity) -> float:
    """Arm cycles per byte of kernel-path work (``arm_Hz / arm_path_Bps``); inf without a path."""
    return cap.arm_Hz / cap.arm_path_Bps if cap.arm_path_Bps > 0 else float("inf")


def utilization(capacity: DpuCapacity, *, line_Bps: float = 0.0, crypto_Bps: float = 0.0,
                arm_Hz: float = 0.0, dram_Bps: float = 0.0) -> dict[str, float]:
    """Demand / capacity per engine; an engine with no capacity but some demand is ``inf``
    (DRAM without a modelled bandwidth is left at 0)."""

    def ratio(demand: float, cap: float) -> float:
        if demand <= 0:
            return 0.0
        return demand / cap if cap > 0 else float("inf")

    return {"line": ratio(line_Bps, capacity.line_Bps),
            "crypto": ratio(crypto_Bps, capacity.crypto_Bps),
            "arm": ratio(arm_Hz, capacity.arm_Hz),
            "dram": ratio(dram_Bps, capacity.dram_Bps) if capacity.dram_Bps > 0 else 0.0}


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
