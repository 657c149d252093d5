"""Host CPU model: cycles the host spends on network, storage, crypto and virtualization stacks.

Every cost is a figure of ``models/costs/host_cpu.toml`` (with its source) passed in as a plain
number, so the functions are testable without the catalog:

* kernel TCP/IP, per direction: ``tcp_cycles_per_byte`` per byte received (Cai et al., SIGCOMM
  2021: the receiver is the costlier side) and ``tcp_send_cycles_per_byte`` per byte sent, both
  measured in TSO/GRO aggregates (``vswitch_packet_bytes``); smaller packets add
  ``tcp_cycles_per_packet`` for each packet beyond one per aggregate
  (:func:`tcp_packet_cycles_per_byte`), so a 64-byte-packet tenant pays per packet;
* RDMA (RoCE/InfiniBand): ``rdma_cycles_per_byte`` (~0, the NIC runs the transport);
* AES-GCM in software (AES-NI/VAES): ``aes_gcm_cycles_per_byte`` (lelegard/aesbench);
* virtual switch / overlay: ``vswitch_cycles_per_packet`` per ``vswitch_packet_bytes`` (OVS kernel
  datapath with GSO/GRO aggregates);
* storage: per IO (``block_io_cycles`` for a local or DPU-emulated NVMe device,
  ``nvmeof_initiator_io_cycles`` for the host's NVMe-oF initiator over RDMA,
  ``nvmeof_tcp_initiator_io_cycles`` over NVMe/TCP) plus per byte (kernel TCP for NVMe/TCP,
  ``bounce_copy_cycles_per_byte`` without GPUDirect Storage);
* the training processes: ``training_process_cores_per_gpu`` (one Python process per GPU), which
  data-loader workers cannot use (:func:`loading_free_cores`);
* further consumers, each switched per scenario (``designer.topology.design.SCENARIO_SPEC``):
  NCCL proxy threads (``nccl_proxy_cores_per_gpu`` while collectives cross servers),
  parallel-filesystem clients (``pfs_client_cycles_per_byte``), object-store ingest over TLS
  (kernel TCP + AES-GCM per byte), Kubernetes node/CNI/security agents (``k8s_agent_cores``),
  NIC interrupts (``irq_seconds_per_interrupt`` per ``irq_bytes_per_interrupt`` of kernel-path
  traffic and per storage IO), checkpoint serialization through host memory
  (``checkpoint_serialize_cycles_per_byte``), the host memory bandwidth of kernel-TCP copies
  (``kernel_copy_memory_passes``, plus ``software_crypto_memory_passes`` where the host encrypts,
  :func:`memory_slowdown`), a stateful firewall (``conntrack_cycles_per_packet``), monitoring
  agents (``monitoring_agent_cores``), provisioning and infrastructure-management agents
  (``provisioning_agent_cores``, on the DPU's Arm cores when offloaded) and checkpoint
  compression / erasure coding (``compression_cycles_per_byte``, ``erasure_code_cycles_per_byte``);
* packets: the host switch per packet (kernel datapath or OVS-DPDK,
  :func:`vswitch_cycles_per_packet`) at the tenants' packet size or in TSO/GRO aggregates
  (:func:`host_packet_bytes`).

A demand of ``c`` cycles in a window of ``t`` seconds on ``n`` cores of ``f`` GHz needs
``c / (t * f * 1e9)`` cores; when that exceeds the free cores the work takes proportionally longer
(:func:`slowdown`): the flows that need the CPU slow down, nothing is hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class HostCosts:
    """Host CPU cost figures (units in the names); see ``models/costs/host_cpu.toml``."""

    tcp_cycles_per_byte: float  #: kernel TCP, per byte received (in TSO/GRO aggregates)
    rdma_cycles_per_byte: float
    aes_gcm_cycles_per_byte: float
    vswitch_cycles_per_packet: float
    vswitch_packet_bytes: float
    block_io_cycles: float
    nvmeof_initiator_io_cycles: float  #: NVMe-oF over RDMA
    nvmeof_tcp_initiator_io_cycles: float  #: NVMe/TCP (the data bytes: tcp_cycles_per_byte)
    bounce_copy_cycles_per_byte: float
    read_io_bytes: float
    training_process_cores_per_gpu: float
    # --- further host consumers (scenario switches; see models/costs/host_cpu.toml)
    nccl_proxy_cores_per_gpu: float
    pfs_client_cycles_per_byte: float
    checkpoint_serialize_cycles_per_byte: float
    k8s_agent_cores: float
    irq_seconds_per_interrupt: float
    irq_bytes_per_interrupt: float
    kernel_copy_memory_passes: float
    kernel_copy_memory_share: float  #: share of the peak memory bandwidth kernel copies may use
    # --- issue 21: packets, memory traffic of software crypto, further consumers
    ovs_dpdk_cycles_per_packet: float
    conntrack_cycles_per_packet: float
    monitoring_agent_cores: float
    compression_cycles_per_byte: float
    erasure_code_cycles_per_byte: float
    software_crypto_memory_passes: float
    # --- issue 21: per direction and per packet
    tcp_send_cycles_per_byte: float  #: kernel TCP, per byte sent (TSO aggregates)
    tcp_cycles_per_packet: float  #: kernel TCP/IP per packet beyond one per aggregate
    # --- issue 21 / 25: provisioning and infrastructure-management agents
    provisioning_agent_cores: float  #: host cores they keep busy per server (assumed)

    @classmethod
    def from_figures(cls, figures: dict[str, float]) -> "HostCosts":
        return cls(**{f.name: float(figures[f.name]) for f in fields(cls)})


def collective_paths(*, offload: bool, rdma: bool, encrypt: bool, rdma_bytes: float,
                     tcp_bytes: float) -> tuple[float, float]:
    """Split a server's collective bytes into (kernel TCP bytes, RDMA bytes).

    Host-managed encryption runs in the kernel (IPsec/kTLS), which RDMA bypasses, so encrypted
    collective traffic on a host-managed server takes the kernel TCP path (e.g. NCCL's socket
    transport). A DPU or a ConnectX SmartNIC encrypts inline (``offload`` True for both; IPsec
    packet offload carries RoCE: "RoCE over offloaded IPSEC works seamlessly", NVIDIA's inline
    IPsec offload announcement on freebsd-net, 2024-03), so RDMA stays RDMA. Without RDMA every
    byte is TCP.
    """
    rdma_ok = rdma and (offload or not encrypt)
    if rdma_ok:
        return tcp_bytes, rdma_bytes
    return tcp_bytes + rdma_bytes, 0.0


def tcp_packet_cycles_per_byte(packet_bytes: float, c: HostCosts) -> float:
    """Kernel TCP/IP cycles per byte that packets smaller than a TSO/GRO aggregate add.

    The per-byte figures were measured with 64 KiB aggregates (``vswitch_packet_bytes``), so
    they already hold one packet's work per aggregate; a flow in packets of ``p`` bytes has
    ``1/p - 1/aggregate`` more packets per byte, each ``tcp_cycles_per_packet`` (skb, driver,
    TCP/IP and socket work done once per packet). 0 for bulk flows (``p`` >= the aggregate)."""
    agg = c.vswitch_packet_bytes
    if packet_bytes <= 0 or packet_bytes >= agg:
        return 0.0
    return c.tcp_cycles_per_packet * (1.0 / packet_bytes - 1.0 / agg)


def network_cycles(kernel_bytes: float, rdma_bytes: float, c: HostCosts, *,
                   send_packet_bytes: float = 0.0, receive_packet_bytes: float = 0.0) -> float:
    """Transport stack cycles for bytes sent + received (half each: collectives send what they
    receive, see ``resources_adapter.node_wire_bytes``): kernel TCP per direction, the sent half
    at ``tcp_send_cycles_per_byte`` and the received half at ``tcp_cycles_per_byte``, each plus
    its packets' per-packet work (:func:`tcp_packet_cycles_per_byte`; 0 = bulk aggregates), vs
    RDMA."""
    half = kernel_bytes / 2
    tcp = half * (c.tcp_send_cycles_per_byte + tcp_packet_cycles_per_byte(send_packet_bytes, c)) + \
        half * (c.tcp_cycles_per_byte + tcp_packet_cycles_per_byte(receive_packet_bytes, c))
    return tcp + rdma_bytes * c.rdma_cycles_per_byte


def crypto_cycles(nbytes: float, c: HostCosts) -> float:
    """Software AES-GCM cycles for ``nbytes`` encrypted or decrypted on the host."""
    return nbytes * c.aes_gcm_cycles_per_byte


def vswitch_cycles(nbytes: float, cycles_per_packet: float, packet_bytes: float) -> float:
    """Virtual switch + overlay encapsulation cycles for ``nbytes`` in packets of ``packet_bytes``."""
    return nbytes / packet_bytes * cycles_per_packet


def storage_read_cycles_per_byte(*, offload: bool, emulation: bool, transport: str, encrypt: bool,
                                 isolated: bool, gpudirect_storage: bool,
                                 c: HostCosts, smartnic: bool = False, pfs_client: bool = False,
                                 object_store: bool = False, send: bool = False) -> dict[str, float]:
    """Host cycles per byte read from networked storage, split by task.

    Host-managed: the NVMe-oF initiator runs on the host (per IO: the RDMA figure, or the NVMe/TCP
    one on the kernel path; plus kernel TCP per byte for NVMe/TCP, and for encrypted reads, which
    must take the kernel path like collectives), software AES-GCM when encrypted, the host virtual
    switch for isolated TCP traffic. DPU with storage emulation (SNAP): the host sees a local NVMe
    device (block IO cost only); crypto and switching are on the DPU. A DPU without emulation
    leaves the initiator on the host but still encrypts and switches. Without GPUDirect Storage
    every byte is copied once more in host memory; ``gpudirect_storage`` is whether GDS is in
    effect on this path (see :func:`gds_problem`), not merely asked for. ``send``: the bytes
    leave the host (checkpoint writes), so kernel TCP costs its send figure
    (``tcp_send_cycles_per_byte``) instead of the receive one.
    """
    inline = offload or smartnic  # the adapter encrypts and switches in hardware
    if object_store:
        return _object_store_cycles_per_byte(offload=offload, smartnic=smartnic, encrypt=encrypt,
                                             isolated=isolated, c=c)
    kernel_path = transport == "tcp" or (encrypt and not inline)
    if offload and emulation:
        per_io = c.block_io_cycles
    else:
        per_io = c.nvmeof_tcp_initiator_io_cycles if kernel_path else c.nvmeof_initiator_io_cycles
    storage = per_io / c.read_io_bytes
    if kernel_path and not (offload and emulation):
        storage += c.tcp_send_cycles_per_byte if send else c.tcp_cycles_per_byte
    if not gpudirect_storage:
        storage += c.bounce_copy_cycles_per_byte
    crypto = c.aes_gcm_cycles_per_byte if (encrypt and not inline) else 0.0
    virt = 0.0
    if isolated and not inline and kernel_path:
        virt = c.vswitch_cycles_per_packet / c.vswitch_packet_bytes
    out = {"storage": storage, "crypto": crypto, "virtualization": virt}
    if pfs_client and not offload:  # the client's own copy (on a DPU it runs on the Arm cores)
        out["filesystem"] = c.pfs_client_cycles_per_byte
    return out


def _object_store_cycles_per_byte(*, offload: bool, smartnic: bool, encrypt: bool, isolated: bool,
                                  c: HostCosts) -> dict[str, float]:
    """Samples fetched from an object store over HTTPS: kernel TCP per byte and TLS (AES-GCM) per
    byte on the host; a SmartNIC's kTLS offload takes the TLS crypto; a DPU terminates TCP and TLS
    in a proxy on its Arm cores and hands the host a local device (block IO per IO, and the bounce
    copy per byte as on the SNAP path without GDS). The bytes land in host memory (no GPUDirect
    Storage over HTTP). Isolated traffic crosses the host switch."""
    if offload:  # a local device to the host, whose bytes land in host memory: one bounce copy
        return {"storage": c.block_io_cycles / c.read_io_bytes + c.bounce_copy_cycles_per_byte,
                "crypto": 0.0, "virtualization": 0.0}
    out = {"storage": c.tcp_cycles_per_byte + c.bounce_copy_cycles_per_byte,
           "crypto": 0.0 if smartnic else c.aes_gcm_cycles_per_byte,
           "virtualization": 0.0}
    if isolated and not smartnic:
        out["virtualization"] = c.vswitch_cycles_per_packet / c.vswitch_packet_bytes
    return out


def gds_problem(*, offload: bool, rdma: bool, transport: str, encrypt: bool,
                host_preprocess: bool = False) -> str:
    """Why GPUDirect Storage cannot work on this server's storage path ("" when it can).

    GDS moves data by DMA between the storage device and GPU memory; for remote storage "a NIC
    device performs RDMA" (NVIDIA GPUDirect Storage O_DIRECT Requirements Guide, §1.1 Summary of
    Basic Requirements). Where that is missing, cuFile falls back to its compatibility mode, POSIX
    reads into host memory and a copy to the GPU, i.e. the bounce buffer again (cuFile API
    Reference Guide, "cuFile Compatibility Mode": deployments whose network links are not enabled
    with RDMA). So: no RDMA adapter, NVMe/TCP, or host-managed encryption (the kernel IPsec/kTLS
    path, which RDMA bypasses; ``offload``: the adapter encrypts inline, a DPU or a SmartNIC) rule
    it out. ``host_preprocess``: the workload decodes its samples on
    the host CPU, so they must land in host memory; GDS serves samples that go to the GPU as they
    are (e.g. a GPU-side loader such as DALI's numpy reader).
    """
    if not rdma:
        return ("the server's network adapters carry no RDMA, and GDS needs a NIC or DPU that "
                "RDMAs the data into GPU memory")
    if transport == "tcp":
        return ("NVMe/TCP delivers the data through kernel sockets in host memory; GDS needs "
                "NVMe-oF over RDMA (scenario.storage_transport=rdma)")
    if encrypt and not offload:
        return ("host-managed encryption sends the reads through the kernel (IPsec/kTLS over TCP), "
                "which RDMA bypasses; encrypt inline on a SmartNIC or DPU (offload smartnic or dpu) "
                "to keep RDMA")
    if host_preprocess:
        return ("the workload decodes its samples on the host CPU (preprocess_core_s_per_sample > 0), "
                "so they must land in host memory; set workload.preprocess_core_s_per_sample to the "
                "host cost of a GPU-side loader (e.g. 0 with DALI decoding on the GPU) to model GDS")
    return ""


def loading_free_cores(cores: float, training_cores: float, infra_cores: float) -> float:
    """Cores the data-loader workers get: the server's cores minus the training processes (one
    per GPU, ``training_process_cores_per_gpu``) minus the average cores the host-managed network
    and storage stacks take over the iteration. The stacks run in the kernel and the training
    processes must run every step, so the loaders, ordinary user processes that only prefetch,
    get what is left (never negative)."""
    return max(cores - training_cores - infra_cores, 0.0)


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


def irq_cycles(kernel_bytes: float, ios: float, GHz: float, c: HostCosts) -> float:
    """Interrupt handling cycles: one interrupt per ``irq_bytes_per_interrupt`` of kernel-path
    traffic (coalesced receive frames) and one per storage IO, ``irq_seconds_per_interrupt`` each."""
    interrupts = kernel_bytes / c.irq_bytes_per_interrupt + ios
    return interrupts * c.irq_seconds_per_interrupt * GHz * 1e9


def memory_GBps(sockets: int, channels: int, MTps: float) -> float:
    """Peak host memory bandwidth: sockets x channels x MT/s x 8 bytes."""
    return sockets * channels * MTps * 8 / 1e3


def memory_slowdown(kernel_Bps: float, passes: float, memory_Bps: float,
                    busy_share: float = 1.0) -> float:
    """How much longer kernel-path traffic takes when its copies need more host memory bandwidth
    than the share ``busy_share`` of the peak the server can give them (>= 1). The figures are
    ``kernel_copy_memory_passes`` and ``kernel_copy_memory_share`` of models/costs/host_cpu.toml
    (both set conservatively there: the term never overstates what the host loses)."""
    if kernel_Bps <= 0 or memory_Bps <= 0:
        return 1.0
    demand = kernel_Bps * passes
    return max(1.0, demand / (memory_Bps * busy_share))


def vswitch_cycles_per_packet(vswitch: str, c: HostCosts) -> float:
    """Host virtual switch cost per packet: the OVS kernel datapath (``vswitch_cycles_per_packet``,
    Emmerich et al. 2018) or OVS-DPDK's PMD threads (``ovs_dpdk_cycles_per_packet``, Red Hat's
    pmd-stats-show measurement)."""
    if vswitch not in ("kernel", "ovs-dpdk"):
        raise ValueError(f"vswitch must be 'kernel' or 'ovs-dpdk', got {vswitch!r}")
    return c.ovs_dpdk_cycles_per_packet if vswitch == "ovs-dpdk" else c.vswitch_cycles_per_packet


def per_direction_packets(nbytes: float, cycles_per_packet: float, send_packet_bytes: float,
                          receive_packet_bytes: float) -> float:
    """Per-packet work on ``nbytes`` sent + received (half each), each direction at its own packet
    size (tunnel offload can differ between the send and the receive side)."""
    if send_packet_bytes == receive_packet_bytes:
        return nbytes / send_packet_bytes * cycles_per_packet
    half = nbytes / 2
    return (half / send_packet_bytes + half / receive_packet_bytes) * cycles_per_packet


def host_packet_bytes(tenant_packet_bytes: float, c: HostCosts, *, tunnel_offload: bool = True,
                      frame_bytes: float = 1500.0) -> float:
    """Bytes per packet the host kernel path and its switch handle: the tenant's own packet size
    when it is given (small-packet services), else bulk flows in TSO/GRO aggregates
    (``vswitch_packet_bytes``, 64 KiB, include/linux/netdevice.h GSO_MAX_SIZE). Without tunnel
    offload (``tunnel_offload`` False: the NIC cannot segment or aggregate VXLAN/Geneve-
    encapsulated traffic) the overlay is encapsulated and switched frame by frame
    (``frame_bytes``, the scenario's ``packet_bytes``) at the same per-packet cost."""
    if tenant_packet_bytes > 0:
        return float(tenant_packet_bytes)
    return c.vswitch_packet_bytes if tunnel_offload else float(frame_bytes)


def conntrack_cycles(kernel_bytes: float, packet_bytes: float, c: HostCosts) -> float:
    """Firewall / connection-tracking cycles for ``kernel_bytes`` of host kernel-path traffic in
    packets of ``packet_bytes`` (``conntrack_cycles_per_packet`` each, an assumption)."""
    return kernel_bytes / packet_bytes * c.conntrack_cycles_per_packet if packet_bytes > 0 else 0.0


def checkpoint_coding_cycles_per_byte(*, compression: bool, erasure_coding: bool,
                                      c: HostCosts) -> float:
    """Host cycles per checkpoint byte for client-side compression (zstd level 1, measured) and
    erasure coding (ISA-L, upper bound); they run on host cores in every mode."""
    return (c.compression_cycles_per_byte if compression else 0.0) + \
        (c.erasure_code_cycles_per_byte if erasure_coding else 0.0)
