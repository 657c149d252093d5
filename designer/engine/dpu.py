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
  ``dpu_dram_touches_per_arm_byte`` times (SNAP moves data zero-copy and does not load it);
* ``eswitch``: the embedded switch (ASAP2) forwards at most ``eswitch_Mpps`` packets per second
  per adapter (BlueField-3 / ConnectX-7: ~90 Mpps measured, XenoFlow, arXiv 2509.21656), checked
  where the tenants' packet size is given (scenario ``tenant_packet_bytes``);
* storage emulation (SNAP) serves at most ``snap_tcp_kiops`` / ``snap_rdma_kiops`` thousand IOs
  per second per DPU (BlueField-2 NVMe-oF measurement, NVIDIA 2021), so its byte rate is that IO
  rate times the IO size (``storage_io_kib``): small IOs hit it before the line rate.

Software switching on the Arm cores (``ovs_offload`` false) is costed at the Arm kernel-path rate
(Liu et al., arXiv 2105.06619: the BlueField-2 Arm cores moved about half of 100 Gb/s through the
kernel path), per packet, not at a host-like cost per 64 KiB aggregate (which made it ~50x fast).

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
    eswitch_pps: float = 0.0  #: embedded-switch packets per second, per direction (0: not modelled)
    snap_iops: float = 0.0  #: storage-emulation IOs per second at the run's transport (0: not modelled)

    @classmethod
    def of(cls, dpus: int, bandwidth_Gbps: float, crypto_Gbps: float, arm_cores: int,
           arm_GHz: float, arm_path_Gbps: float = 0.0, dram_GBps: float = 0.0,
           eswitch_Mpps: float = 0.0, snap_kiops: float = 0.0) -> "DpuCapacity":
        return cls(dpus * bandwidth_Gbps * 1e9 / 8, dpus * crypto_Gbps * 1e9 / 8,
                   dpus * arm_cores * arm_GHz * 1e9, dpus * arm_path_Gbps * 1e9 / 8,
                   dpus * dram_GBps * 1e9, dpus * eswitch_Mpps * 1e6, dpus * snap_kiops * 1e3)

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
                arm_Hz: float = 0.0, dram_Bps: float = 0.0,
                packets_ps: float | None = None) -> dict[str, float]:
    """Demand / capacity per engine; an engine with no capacity but some demand is ``inf``
    (DRAM without a modelled bandwidth is left at 0). ``packets_ps``: packets per second (one
    direction) through the embedded switch, when the packet size is known; the ``eswitch`` key
    is then added (0 when the adapter has no modelled packet rate)."""

    def ratio(demand: float, cap: float) -> float:
        if demand <= 0:
            return 0.0
        return demand / cap if cap > 0 else float("inf")

    out = {"line": ratio(line_Bps, capacity.line_Bps),
           "crypto": ratio(crypto_Bps, capacity.crypto_Bps),
           "arm": ratio(arm_Hz, capacity.arm_Hz),
           "dram": ratio(dram_Bps, capacity.dram_Bps) if capacity.dram_Bps > 0 else 0.0}
    if packets_ps is not None:
        out["eswitch"] = ratio(packets_ps, capacity.eswitch_pps) if capacity.eswitch_pps > 0 else 0.0
    return out


def storage_arm_cycles_per_byte(*, emulation: bool, read_io_bytes: float, c: DpuCosts) -> float:
    """Arm cycles per byte of storage read through the DPU's storage emulation (SNAP, per IO);
    software switching and the Arm kernel-path work are added by the caller at the Arm path rate."""
    return c.snap_arm_cycles_per_io / read_io_bytes if emulation else 0.0


def eswitch_packets_ps(bytes_ps: float, packet_bytes: float) -> float:
    """Packets per second through the embedded switch for ``bytes_ps`` (one direction) in packets
    of ``packet_bytes``."""
    return bytes_ps / packet_bytes if packet_bytes > 0 else 0.0


def snap_limit_Bps(snap_iops: float, io_bytes: float) -> float:
    """Bytes per second storage emulation serves: its IO rate times the IO size (0: not modelled)."""
    return snap_iops * io_bytes
