"""Host CPU model: cycles the host spends on network, storage, crypto and virtualization stacks.

Every cost is a figure of ``models/costs/host_cpu.toml`` (with its source) passed in as a plain
number, so the functions are testable without the catalog:

* kernel TCP/IP: ``tcp_cycles_per_byte`` per byte sent or received (Cai et al., SIGCOMM 2021);
* RDMA (RoCE/InfiniBand): ``rdma_cycles_per_byte`` (~0, the NIC runs the transport);
* AES-GCM in software (AES-NI/VAES): ``aes_gcm_cycles_per_byte`` (lelegard/aesbench);
* virtual switch / overlay: ``vswitch_cycles_per_packet`` per ``vswitch_packet_bytes`` (OVS kernel
  datapath with GSO/GRO aggregates);
* storage: per IO (``block_io_cycles`` for a local or DPU-emulated NVMe device,
  ``nvmeof_initiator_io_cycles`` for the host's NVMe-oF initiator) plus per byte (kernel TCP for
  NVMe/TCP, ``bounce_copy_cycles_per_byte`` without GPUDirect Storage).

A demand of ``c`` cycles in a window of ``t`` seconds on ``n`` cores of ``f`` GHz needs
``c / (t * f * 1e9)`` cores; when that exceeds the free cores the work takes proportionally longer
(:func:`slowdown`): the flows that need the CPU slow down, nothing is hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class HostCosts:
    """Host CPU cost figures (units in the names); see ``models/costs/host_cpu.toml``."""

    tcp_cycles_per_byte: float
    rdma_cycles_per_byte: float
    aes_gcm_cycles_per_byte: float
    vswitch_cycles_per_packet: float
    vswitch_packet_bytes: float
    block_io_cycles: float
    nvmeof_initiator_io_cycles: float
    bounce_copy_cycles_per_byte: float
    read_io_bytes: float

    @classmethod
    def from_figures(cls, figures: dict[str, float]) -> "HostCosts":
        return cls(**{f.name: float(figures[f.name]) for f in fields(cls)})


def collective_paths(*, offload: bool, rdma: bool, encrypt: bool, rdma_bytes: float,
                     tcp_bytes: float) -> tuple[float, float]:
    """Split a server's collective bytes into (kernel TCP bytes, RDMA bytes).

    Host-managed encryption runs in the kernel (IPsec/kTLS), which RDMA bypasses, so encrypted
    collective traffic on a host-managed server takes the kernel TCP path (e.g. NCCL's socket
    transport). A DPU encrypts inline, so RDMA stays RDMA. Without RDMA every byte is TCP.
    """
    rdma_ok = rdma and (offload or not encrypt)
    if rdma_ok:
        return tcp_bytes, rdma_bytes
    return tcp_bytes + rdma_bytes, 0.0


def network_cycles(kernel_bytes: float, rdma_bytes: float, c: HostCosts) -> float:
    """Transport stack cycles for bytes sent + received: kernel TCP vs RDMA."""
    return kernel_bytes * c.tcp_cycles_per_byte + rdma_bytes * c.rdma_cycles_per_byte


def crypto_cycles(nbytes: float, c: HostCosts) -> float:
    """Software AES-GCM cycles for ``nbytes`` encrypted or decrypted on the host."""
    return nbytes * c.aes_gcm_cycles_per_byte


def vswitch_cycles(nbytes: float, cycles_per_packet: float, packet_bytes: float) -> float:
    """Virtual switch + overlay encapsulation cycles for ``nbytes`` in packets of ``packet_bytes``."""
    return nbytes / packet_bytes * cycles_per_packet


def storage_read_cycles_per_byte(*, offload: bool, emulation: bool, transport: str, encrypt: bool,
                                 isolated: bool, gpudirect_storage: bool,
                                 c: HostCosts) -> dict[str, float]:
    """Host cycles per byte read from networked storage, split by task.

    Host-managed: the NVMe-oF initiator runs on the host (per IO; plus kernel TCP per byte for
    NVMe/TCP, and for encrypted reads, which must take the kernel path like collectives), software
    AES-GCM when encrypted, the host virtual switch for isolated TCP traffic. DPU with storage
    emulation (SNAP): the host sees a local NVMe device (block IO cost only); crypto and switching
    are on the DPU. A DPU without emulation leaves the initiator on the host but still encrypts
    and switches. Without GPUDirect Storage every byte is copied once more in host memory.
    """
    per_io = c.block_io_cycles if (offload and emulation) else c.nvmeof_initiator_io_cycles
    storage = per_io / c.read_io_bytes
    kernel_path = transport == "tcp" or (encrypt and not offload)
    if kernel_path and not (offload and emulation):
        storage += c.tcp_cycles_per_byte
    if not gpudirect_storage:
        storage += c.bounce_copy_cycles_per_byte
    crypto = c.aes_gcm_cycles_per_byte if (encrypt and not offload) else 0.0
    virt = 0.0
    if isolated and not offload and kernel_path:
        virt = c.vswitch_cycles_per_packet / c.vswitch_packet_bytes
    return {"storage": storage, "crypto": crypto, "virtualization": virt}


def cores_needed(cycles: float, window_s: float, GHz: float) -> float:
    """Average busy cores to run ``cycles`` within ``window_s`` on cores of ``GHz``."""
    if cycles <= 0:
        return 0.0
    return cycles / (window_s * GHz * 1e9)


def slowdown(demand_cores: float, free_cores: float) -> float:
    """How much longer CPU-bound work takes when it needs more cores than are free (>= 1).

    Work needing ``d`` cores on ``f < d`` free cores runs at ``f / d`` of its rate, so it takes
    ``d / f`` times as long. No free core at all is reported as a very large factor, not infinity.
    """
    if demand_cores <= free_cores:
        return 1.0
    return demand_cores / max(free_cores, 1e-3)
