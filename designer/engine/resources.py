"""Resources stage: host CPU, DPU engines, storage, jitter and energy for one design and scenario.

The pipeline hands :func:`assess` a :class:`ResourceInputs` built from what the earlier stages know
(placement, traffic, network) and gets a :class:`ResourceReport` back: the extra seconds each
iteration loses to the host CPU or DPU, to data stalls, stragglers and checkpoints, the host CPU's
share of infrastructure work, each DPU engine's load, storage figures, power and energy, and
plain-language bottlenecks.

Servers are passed as :class:`ServerGroup` s: identical servers (same hardware, scenario, traffic)
are carried once with a ``count``, so a 2,048-server design costs a handful of rows.

Scenarios: ``"host"`` = host-managed plain adapters; the host CPU runs the network, storage, crypto
and virtualization stacks (a DPU in such a server works as a plain NIC). ``"smartnic"`` = the host
CPU runs the stacks, but the ConnectX adapters encrypt inline (IPsec/kTLS, RoCE stays RDMA) and
switch tenant traffic in their embedded switch (ASAP2): the ``line`` and ``crypto`` engines of
``ServerGroup.smartnic_capacity`` bound that work; there are no Arm services (storage initiator,
filesystem client, agents stay on the host). ``"dpu"`` = the server's BlueField DPUs run them, on
engines with measured limits (:mod:`designer.engine.dpu`). Every group carries its own scenario,
so mixes are allowed.

Further host consumers (each switched per scenario, off by default): NCCL proxy threads,
parallel-filesystem clients, object-store ingest over TLS, Kubernetes/CNI/security agents, NIC
interrupts, checkpoint serialization through host memory, the host memory bandwidth of
kernel-TCP copies (two more passes per byte where the host encrypts in software), a stateful
firewall per kernel-path packet, monitoring agents (on the host in every mode) and client-side
checkpoint compression and erasure coding (:mod:`designer.engine.hostcpu`). Packets: the tenants'
packet size (``tenant_packet_bytes``; 0 = bulk flows in TSO/GRO aggregates) sets the host
switch's (kernel or OVS-DPDK) and the firewall's per-packet work and the adapters' embedded-switch
packet rate (engine ``eswitch``); without tunnel offload the overlay goes frame by frame. Offloaded to a DPU, the filesystem client,
the object-store proxy and the agents run on its Arm cores at the Arm kernel-path rate, and are
named when they over-subscribe the Arm cores or the DPU memory.

Host data loading: the workload's ``preprocess_core_s_per_sample`` (decode, augmentation) runs in
data-loader workers on the host CPU whatever the scenario. They get the cores left after the
training processes (one per GPU) and the cores the host-managed stacks take over the iteration
(:func:`designer.engine.hostcpu.loading_free_cores`); when they need more, the step waits
(``data_stall_s``, named "host CPU data loading" in the bottlenecks). Offloading the stacks hands
their cores to the loaders. The collectives' window, in turn, sees the loaders' demand (as before).

Storage path settings: ``storage_transport`` ("rdma" or "tcp", the NVMe-oF transport) and each
group's ``gpudirect_storage``; GDS is applied only where the path can carry it
(:func:`designer.engine.hostcpu.gds_problem`), otherwise ``ResourceReport.warnings`` says so and
the bounce copy stays.

The cost figures (cycles per byte, per packet, per IO ...) come from ``models/costs/*.toml`` through
:mod:`designer.engine.hostcpu` and :mod:`designer.engine.dpu`; each figure there has its source.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from designer.engine import dpu, energy, hostcpu, jitter, storage
from designer.engine.dpu import DpuCapacity, DpuCosts
from designer.engine.hostcpu import HostCosts
from designer.topology.design import SCENARIO_SPEC

SCENARIOS = ("host", "smartnic", "dpu")
#: host CPU consumers reported in ``HostCpuReport.by_task``; all but data loading are infrastructure
TASKS = ("network", "storage", "crypto", "virtualization", "nccl_proxy", "filesystem", "agents",
         "irq", "firewall", "monitoring", "provisioning", "checkpoint_coding", "data_loading")
INFRA_TASKS = TASKS[:-1]
#: tasks of consumers that are off by default (issue 21): reported only where their switch puts
#: work on the host, so that runs without them keep the same task keys as before
OPTIONAL_TASKS = ("firewall", "monitoring", "provisioning", "checkpoint_coding")
#: tasks that move to the DPU's Arm cores when offloaded, reported there in
#: ``ResourceReport.arm_by_task`` (Arm cores busy per server)
ARM_TASKS = ("agents", "provisioning")


def _reported(by_task: dict[str, float]) -> dict[str, float]:
    """``by_task`` without the optional tasks that are 0 (see ``OPTIONAL_TASKS``)."""
    return {t: v for t, v in by_task.items() if v or t not in OPTIONAL_TASKS}
#: DPU engines reported in ``ResourceReport.dpu`` (a SmartNIC has line and crypto only)
DPU_ENGINES = ("line", "crypto", "arm", "dram", "eswitch")
#: how each scenario is named in sentences
MODE_LABEL = {"host": "host-managed", "smartnic": "SmartNIC-offloaded", "dpu": "DPU-offloaded"}


@dataclass(frozen=True)
class ServerGroup:
    """``count`` identical GPU servers: their hardware, scenario and per-iteration traffic.

    Hardware figures are per server (adapter figures per adapter) and come from the catalog
    (``catalog.resolve`` of the server and of its attached DPUs/NICs).
    """

    count: int = 1
    scenario: str = "host"  #: "host", "smartnic" or "dpu"
    # --- compute
    gpus: int = 8
    gpu_power_W: float = 700.0  #: per GPU at training load
    cpu_cores: int = 112  #: physical cores, all sockets (cpu.cores x cpu_sockets)
    cpu_GHz: float = 2.0  #: all-core clock (cpu.all_core_GHz)
    base_power_W: float = 2500.0  #: server without GPUs, NICs and DPUs (CPUs, memory, fans)
    adapters_power_W: float = 0.0  #: all attached NICs and DPUs together, catalog maxima (power_W)
    #: the same adapters at their typical power (typical_power_W; an adapter without one counts its
    #: maximum); None = as adapters_power_W, none of them has a typical figure
    adapters_typical_power_W: float | None = None
    #: models of the attached adapters without a typical figure (then energy counts maxima, see
    #: ResourceInputs.adapter_power)
    adapters_without_typical: tuple[str, ...] = ()
    # --- DPUs (figures per DPU; ``rail_capacity`` / ``storage_capacity`` give sums instead)
    dpus: int = 0  #: all DPUs of the server
    dpu_arm_cores: int = 16
    dpu_arm_GHz: float = 2.0
    dpu_crypto_Gbps: float = 400.0  #: inline crypto rate of one DPU, each direction
    dpu_bandwidth_Gbps: float = 400.0  #: line rate of one DPU (max_bandwidth_Gbps), each direction
    dpu_storage_emulation: bool = True  #: NVMe/virtio-blk emulation (SNAP) available
    dpu_ovs_offload: bool = True  #: virtual switch offload (ASAP2) available
    rail_dpus: int | None = None  #: DPUs that carry the collectives (None: all ``dpus``)
    storage_dpus: int = 0  #: DPUs on a separate storage network, carrying storage reads only
    #: (0: reads arrive on the rail DPUs)
    rail_capacity: DpuCapacity | None = None  #: sum over the rail DPUs (None: per-DPU figures x count)
    storage_capacity: DpuCapacity | None = None  #: sum over the storage-only DPUs (likewise)
    port_Gbps: float = 0.0  #: line rate of the rail DPUs' network links as the network stage
    #: modelled them (sum, one direction); 0 = traffic not bounded by a network stage
    # --- capabilities of the path
    rdma: bool = True  #: adapters and fabric carry RDMA (RoCE or InfiniBand)
    gpudirect_rdma: bool = True  #: NIC reads/writes GPU memory directly (no host bounce buffer)
    gpudirect_storage: bool = False  #: storage reads land in GPU memory directly (GDS)
    # --- traffic of ONE server in ONE iteration
    rdma_bytes: float = 0.0  #: collective bytes sent + received over RDMA verbs
    tcp_bytes: float = 0.0  #: collective bytes sent + received over kernel TCP sockets
    comm_s: float = 0.0  #: time the network stage needs to move those bytes at fabric speed
    dp_comm_s: float = 0.0  #: part of ``comm_s`` that is data-parallel gradient collectives,
    #: which overlap the backward pass (``ResourceInputs.dp_overlap_s``)
    storage_fabric_GBps: float = 0.0  #: storage read rate the fabric path gives this server,
    #: without training traffic (the converged-fabric sharing is applied here); 0 = not modelled
    storage_fabric_write_GBps: float = 0.0  #: checkpoint write rate the fabric path gives this
    #: server: its storage paths with elastic demand (pipeline._storage_rates); 0 = the read rate
    # --- security / tenancy
    encrypt: bool = False  #: this tenant's traffic leaving the server is encrypted (AES-GCM)
    isolated: bool = False  #: traffic passes a virtual switch / overlay (multi-tenant isolation)
    isolation: str = ""  #: the scenario's isolation setting ("bare-metal" is checked per mode)
    # --- SmartNIC mode: the adapters' line and inline-crypto engines (sum over the rail adapters)
    smartnic_capacity: DpuCapacity | None = None
    # --- further host consumers (scenario switches)
    nccl_proxy: bool = False  #: NCCL proxy threads, one busy core per GPU while collectives cross
    pfs_client: bool = False  #: storage reads through a parallel-filesystem client
    k8s_agents: bool = False  #: Kubernetes node, CNI and security agents
    irq: bool = False  #: NIC interrupt handling counted
    kernel_copy_membw: bool = False  #: kernel-TCP copies bounded by host memory bandwidth
    host_memory_GBps: float = 0.0  #: peak host memory bandwidth (0: not modelled)
    # --- issue 21: packets and further consumers (scenario switches)
    tenant_packet_bytes: float = 0.0  #: the tenants' packet size (0: bulk flows in TSO/GRO aggregates)
    eswitch_pps: float = 0.0  #: the rail adapters' embedded switches, packets/s per direction (the
    #: SR-IOV / legacy switch every packet crosses in every mode; SmartNIC and DPU engines carry their own)
    #: the eSwitch packet-rate figure of the server's adapters with its kind and source, for the
    #: sentences ("bluefield-3 90 Mpps per adapter (measured: ...)"; the catalog's eswitch_Mpps)
    eswitch_figure: str = ""
    #: the embedded switches of the adapters off the rails (storage / north-south) the storage reads
    #: arrive on, packets/s per direction, in every mode (None: no such adapters, reads arrive on the
    #: rails; 0: they have no packet rate)
    storage_eswitch_pps: float | None = None
    vswitch: str = "kernel"  #: host virtual switch datapath: "kernel" or "ovs-dpdk"
    firewall: bool = False  #: host firewall / connection tracking on the kernel path
    tunnel_offload: bool = True  #: host NICs segment/aggregate VXLAN/Geneve traffic (TSO/LRO)
    #: the receive side's part of it (LRO/GRO for tunnels); False with tunnel_offload True: sends
    #: keep TSO, received overlay frames are handled one by one
    tunnel_rx_offload: bool = True
    frame_bytes: float = 1500.0  #: Ethernet frame size (scenario packet_bytes)
    monitoring: bool = False  #: monitoring and logging agents (on the host in every mode)
    #: provisioning and infrastructure-management agents (on the DPU's Arm cores when offloaded)
    provisioning_agents: bool = False


@dataclass(frozen=True)
class ResourceInputs:
    """What the resources stage needs, for one scenario run of one design."""

    groups: tuple[ServerGroup, ...]
    iteration_s: float  #: iteration time from compute + exposed communication, before this stage
    dp_time_s: float = 0.0  #: data-parallel collective time per iteration (all of it, at fabric speed)
    dp_overlap_s: float = 0.0  #: compute time the DP collectives hide behind (exposed part:
    #: ``max(0, dp_time_s - dp_overlap_s)``, already in ``iteration_s``)
    # --- data ingest (global per iteration)
    samples_per_iteration: float = 0.0  #: global batch, spread evenly over servers
    sample_bytes: float = 0.0  #: bytes read from storage per sample
    #: host CPU core-seconds to decode/augment a sample (the workload's figure, e.g. JPEG decode and
    #: crop for ResNet-50); data-loader workers get the cores the training processes and the
    #: host-managed stacks leave (``hostcpu.loading_free_cores``)
    preprocess_core_s_per_sample: float = 0.0
    # --- storage targets and path (totals over all storage systems)
    storage_read_GBps: float = 0.0
    storage_write_GBps: float = 0.0
    storage_converged: bool = False  #: storage traffic shares the compute fabric links
    storage_transport: str = "rdma"  #: host NVMe-oF initiator transport: "rdma" or "tcp"
    # --- checkpoints
    parameters: float = 0.0  #: model parameters (checkpoint = parameters x bytes per parameter)
    checkpoint_bytes_per_param: float | None = None  #: None = models/costs/storage.toml figure
    checkpoint_every_iterations: int = 0  #: 0 = no checkpoints
    # --- rest of the cluster
    tenants: int = 1  #: jobs sharing the fabric (reported; isolation is per group)
    switch_power_W: float = 0.0  #: all switches together
    storage_power_W: float = 0.0  #: all storage systems together
    iterations: int = 0  #: iterations of the whole run (0 = report per-iteration energy only)
    price_per_kWh: float | None = None  #: electricity price; None = models/costs/energy.toml (USD)
    #: which adapter power the energy counts (scenario adapter_power): "auto" (typical where every
    #: adapter of every group has a typical figure, else maxima), "typical" or "max"
    adapter_power: str = "auto"
    # --- further consumers of the whole job
    object_store_tls: bool = False  #: samples fetched over HTTPS from an object store
    checkpoint_via_host: bool = False  #: checkpoints serialized through host memory
    packet_bytes: float = 1500.0  #: frame size of kernel-path traffic (Arm kernel-path rate)
    read_io_bytes: float | None = None  #: storage IO size; None = models/costs/host_cpu.toml figure
    tenant_qos: bool = True  #: per-tenant QoS on the shared storage (off: noisy neighbours)
    checkpoint_compression: bool = False  #: checkpoints compressed on the host (zstd) before the write
    checkpoint_erasure_coding: bool = False  #: checkpoints erasure-coded on the host (client side)


@dataclass(frozen=True)
class HostCpuReport:
    """Host CPU cycles, server-weighted over all servers."""

    cores_total: int  #: physical cores of all servers
    #: host infrastructure share: the core-seconds the infrastructure tasks (INFRA_TASKS) need in
    #: one iteration over the cores' seconds of that iteration as it runs (every resources-stage
    #: term included). Per-byte and per-IO work (stacks, crypto, copies, interrupts) is a fixed
    #: number of cycles per iteration at the cores' speed; time-based loads are charged over the
    #: time they run: agents over the whole iteration (the same share in every mode where they
    #: stay on the host), NCCL proxies while the collectives run, minus the kernel-TCP cycles the
    #: same threads execute. Cycles a core stalls on saturated host memory are not counted (the
    #: share is then a lower bound). Above 100% demand the shares are scaled to sum to 1.
    infra_fraction: float
    by_task: dict[str, float]  #: share of cycles per task (keys: TASKS)
    training_fraction: float  #: share left for the training process
    saturated: bool  #: some server's CPU demand exceeded its cores


@dataclass(frozen=True)
class StorageReport:
    read_GB_per_iteration: float  #: all servers together: global batch x bytes per sample
    read_demand_GBps: float  #: that over the input iteration time: the rate that keeps GPUs fed
    read_achieved_GBps: float  #: what the slowest path element gives
    checkpoint_GB: float
    #: one checkpoint, all servers writing in parallel; None without storage (none is written)
    checkpoint_write_s: float | None


@dataclass(frozen=True)
class EnergyReport:
    power_W: dict[str, float]  #: keys: gpu, server, adapters, switches, storage, total
    iteration_kWh: float
    run_kWh: float  #: 0 when ``iterations`` is 0
    run_cost: float  #: run_kWh x price_per_kWh
    samples_per_s_per_kW: float  #: performance per watt (x1000)
    #: which adapter power ``power_W["adapters"]`` is: "max" (catalog power_W) or "typical"
    adapter_power: str = "max"
    adapters_max_W: float = 0.0  #: all adapters at their maxima (power_W)
    #: all adapters at their typical power (typical_power_W, the maximum where an adapter has none)
    adapters_typical_W: float = 0.0
    adapters_without_typical: tuple[str, ...] = ()  #: adapter models without a typical figure


@dataclass(frozen=True)
class GroupReport:
    """Per server group detail (same order as ``ResourceInputs.groups``)."""

    count: int
    scenario: str
    host_by_task: dict[str, float]  #: cores busy per task (keys: TASKS), demand before capping
    host_cores: int
    dpu_utilization: dict[str, float]  #: demand / capacity per engine (keys: DPU_ENGINES); >1 = over
    network_slowdown: float  #: >= 1, how much longer the collective traffic takes on this server
    read_achieved_GBps: float  #: per server
    read_limit: str  #: which element limits the storage read ("target", "fabric", "host CPU", ...)
    jitter_cv: float  #: coefficient of variation of this server's iteration time
    # --- data loading on the host CPU (averages over the input iteration)
    load_cores_needed: float = 0.0  #: cores the data-loader workers need to keep up
    load_cores_free: float = 0.0  #: cores left for them: cores - training - infra
    infra_cores: float = 0.0  #: cores the host-managed network and storage stacks take
    training_cores: float = 0.0  #: cores of the training processes (one per GPU)
    stall_cause: str = ""  #: "storage read" or "data loading" when the step waits for input
    gpudirect_storage: bool = False  #: GDS in effect on this server's storage path
    infra_share: float = 0.0  #: host infrastructure share of this server's cycles


@dataclass(frozen=True)
class ResourceReport:
    """What the resources stage adds to an iteration and what it found."""

    iteration_s: float  #: input iteration time + every extra term below
    network_extra_s: float  #: collectives slowed by a saturated host CPU or DPU
    data_stall_s: float  #: GPUs waiting for input data
    straggler_s: float  #: synchronous step waits for the slowest server
    checkpoint_s: float  #: checkpoint write time amortized per iteration
    host_cpu: HostCpuReport
    dpu: dict[str, float]  #: max load (demand / capacity, > 1 = over-subscribed) per DPU engine
    #: over servers with DPUs ({} if none)
    storage: StorageReport
    energy: EnergyReport
    bottlenecks: list[str] = field(default_factory=list)  #: plain-language reasons
    flags: list[str] = field(default_factory=list)  #: e.g. "host CPU saturated: ..."
    groups: tuple[GroupReport, ...] = ()
    network_extra_cause: str = ""  #: "host_cpu" or "dpu": what slows the slowest server's collectives
    #: settings the design asks for that its path cannot do, and what the model did instead
    #: (e.g. GPUDirect Storage over NVMe/TCP: modelled with the bounce buffer)
    warnings: list[str] = field(default_factory=list)
    #: the agents the DPUs run instead of the host (ARM_TASKS): Arm cores busy per server, averaged
    #: over the servers (the host's cores for the same work are in ``host_cpu.by_task`` of the
    #: modes that keep it); {} when no agent runs on an Arm core
    arm_by_task: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain JSON-able dict (floats, strings, lists, dicts); ``arm_by_task`` only where some
        agent runs on the Arm cores (a run without one keeps the keys it had)."""
        out = asdict(self)
        if not out["arm_by_task"]:
            del out["arm_by_task"]
        return out


# ----------------------------------------------------------------------------------------------
# cost figures

COST_FILES = ("host_cpu", "dpu", "jitter", "storage", "energy")


def cost_figures(catalog=None) -> dict[str, float]:
    """All figures of ``models/costs/{host_cpu,dpu,jitter,storage,energy}.toml`` by name.

    Each figure is a table ``{value, source}``; a figure without a source is refused.
    """
    if catalog is None:
        from designer.topology.catalog import load_catalog

        catalog = load_catalog()
    figures: dict[str, float] = {}
    for name in COST_FILES:
        for key, table in catalog.costs(name).items():
            if not isinstance(table, dict) or "value" not in table or not table.get("source"):
                raise ValueError(f"models/costs/{name}.toml: figure {key!r} needs a value and a "
                                 f"source (write [{key}] value = ... source = \"...\")")
            figures[key] = float(table["value"])
    return figures


# ----------------------------------------------------------------------------------------------
# input checks


def _check(inputs: ResourceInputs) -> None:
    """Refuse inputs the models cannot use, saying what, where and how to fix it."""
    if not inputs.groups:
        raise ValueError("resources: no GPU servers to assess (add at least one GPU server)")
    if not inputs.iteration_s > 0:
        raise ValueError(f"resources: iteration_s must be positive, got {inputs.iteration_s!r}")
    if inputs.storage_transport not in ("rdma", "tcp"):
        raise ValueError(f"resources: storage_transport must be 'rdma' or 'tcp', "
                         f"got {inputs.storage_transport!r}")
    for i, g in enumerate(inputs.groups):
        where = f"resources: server group {i}"
        if g.scenario not in SCENARIOS:
            raise ValueError(f"{where}: scenario must be one of {', '.join(SCENARIOS)}, "
                             f"got {g.scenario!r}")
        if g.count < 1 or g.gpus < 1:
            raise ValueError(f"{where}: count and gpus must be at least 1")
        if g.cpu_cores < 1 or not g.cpu_GHz > 0:
            raise ValueError(f"{where}: the server needs CPU cores and a clock (cpu_cores >= 1, "
                             f"cpu_GHz > 0); check the cpu catalog entry")
        if g.vswitch not in ("kernel", "ovs-dpdk"):
            raise ValueError(f"{where}: vswitch must be 'kernel' or 'ovs-dpdk', got {g.vswitch!r}")
        packet_rule = SCENARIO_SPEC["tenant_packet_bytes"]  # the one rule: --set and files use it too
        if packet_rule.problem(g.tenant_packet_bytes):
            raise ValueError(f"{where}: tenant_packet_bytes must be {packet_rule.allowed()}, got "
                             f"{g.tenant_packet_bytes:g} bytes (set scenario.tenant_packet_bytes)")
        for name in ("rdma_bytes", "tcp_bytes", "comm_s", "dp_comm_s", "storage_fabric_GBps",
                     "storage_fabric_write_GBps"):
            if getattr(g, name) < 0:
                raise ValueError(f"{where}: {name} must not be negative")
        if g.dp_comm_s > min(g.comm_s, inputs.dp_time_s) * (1 + 1e-9):
            raise ValueError(f"{where}: dp_comm_s ({g.dp_comm_s:g} s) must be part of both comm_s "
                             f"({g.comm_s:g} s) and the inputs' dp_time_s ({inputs.dp_time_s:g} s)")


# ----------------------------------------------------------------------------------------------
# one server group


@dataclass
class _Server:
    """Working figures of one server of a group (one iteration)."""

    report: GroupReport
    network_extra_s: float
    stall_s: float
    write_s: float
    host_cycles: dict[str, float]  #: by task, per iteration
    capacity_Hz: float  #: cores x clock
    window_demand_cores: float
    window_free_cores: float
    dpu_limited: str  #: DPU engine that slowed collectives, or ""
    fallback: bool  #: scenario "dpu" asked but no DPU on the server
    samples: float = 0.0  #: samples this server loads per iteration
    warnings: list[str] = field(default_factory=list)
    memory_limited: bool = False  #: host memory bandwidth, not cores, slowed the collectives
    memory_GBps: float = 0.0  #: host memory bandwidth the kernel-TCP copies ask for
    infra_share: float = 0.0
    agent_cores: float = 0.0  #: host cores the node agents keep busy all the time
    monitoring_cores: float = 0.0  #: host cores the monitoring and logging agents keep busy
    provisioning_cores: float = 0.0  #: host cores the provisioning/management agents keep busy
    #: Arm cores per server the offloaded agents keep busy, by task (ARM_TASKS; {} on the host)
    arm_task_cores: dict[str, float] = field(default_factory=dict)


def _capacities(g: ServerGroup) -> tuple[DpuCapacity, DpuCapacity | None]:
    """Engines of the rail DPUs, and of the storage-only DPUs (None: reads arrive on the rails)."""
    def of(n: int) -> DpuCapacity:
        return DpuCapacity.of(n, g.dpu_bandwidth_Gbps, g.dpu_crypto_Gbps, g.dpu_arm_cores, g.dpu_arm_GHz,
                              dpu.default_arm_tcp_Gbps(g.dpu_arm_cores, g.dpu_arm_GHz))

    rail = g.rail_capacity or of(g.dpus if g.rail_dpus is None else g.rail_dpus)
    if g.storage_capacity is None and not g.storage_dpus:
        return rail, None
    return rail, g.storage_capacity or of(g.storage_dpus)


def arm_path_cycles_per_byte(cap: DpuCapacity, packet_bytes: float, dc: DpuCosts) -> float:
    """Arm cycles per byte of kernel-path work (TCP/TLS termination, filesystem client, NVMe/TCP
    under SNAP, software switching) on the DPUs of ``cap`` at ``packet_bytes``: their Arm cycles
    over their own kernel-path rate (``arm_tcp_Gbps`` at ``arm_path_packet_bytes``, scaled per
    packet up to ``dpu.MAX_PACKET_GAIN``), the rate capped at their line rate: the Arm cores cannot
    move more than the ports carry (a BlueField-3 at 9000-byte frames would reach 480 Gb/s on
    paper, more than its 400 Gb/s line). inf without an Arm path."""
    if cap.arm_path_Bps <= 0 or cap.arm_Hz <= 0:
        return float("inf")
    gain = min(max(packet_bytes, 64.0) / dc.arm_path_packet_bytes, dpu.MAX_PACKET_GAIN)
    rate = cap.arm_path_Bps * gain
    if cap.line_Bps > 0:
        rate = min(rate, cap.line_Bps)
    return cap.arm_Hz / rate


def per_direction(sent_plus_received: float) -> float:
    """Bytes in the busier direction of a server's collectives, from bytes sent + received.

    Line rate and inline crypto are per direction (a 400 Gb/s port sends 400 Gb/s and receives
    400 Gb/s; BlueField's inline IPsec/TLS runs in its transmit and receive pipelines at line rate,
    and the one measured 400G IPsec test, blog.amododesign.com "The quest for 400G IPsec", reports
    one direction against 390 Gb/s unencrypted). Every collective the engine models is symmetric
    per server: a ring, tree or SHARP step and a pipeline send/receive pair receive as many bytes
    as they send (``resources_adapter.node_wire_bytes``), so each direction carries half.
    """
    return sent_plus_received / 2.0


def exposed_extra_s(g: ServerGroup, inp: ResourceInputs, slow: float) -> float:
    """Seconds an iteration gains when this server's crossing collectives take ``slow`` times as long.

    TP and PP collectives sit on the critical path: ``(comm_s - dp_comm_s)·(slow − 1)``. The DP
    gradient collectives overlap the backward pass (``dp_overlap_s``); only the growth of their
    exposed part counts: ``max(0, dp + dp_comm·(slow − 1) − overlap) − max(0, dp − overlap)``.
    """
    if slow <= 1.0:
        return 0.0
    before = max(0.0, inp.dp_time_s - inp.dp_overlap_s)
    after = max(0.0, inp.dp_time_s + g.dp_comm_s * (slow - 1.0) - inp.dp_overlap_s)
    return (g.comm_s - g.dp_comm_s) * (slow - 1.0) + after - before


@dataclass(frozen=True)
class _Mode:
    """Where one server group's infrastructure work runs, and on which engines."""

    offload: bool  #: the DPUs run the stacks (scenario "dpu" and the server has DPUs)
    smart: bool  #: the adapters work as ConnectX SmartNICs (scenario "smartnic" with adapters)
    emulation: bool  #: the DPUs emulate the storage device (SNAP)
    rail: DpuCapacity | None  #: engines of the rail adapters (None: host-managed)
    sto: DpuCapacity | None  #: engines of the storage-only DPUs (None: reads arrive on the rails)
    svc: DpuCapacity | None  #: the DPUs that host the Arm services

    @property
    def inline(self) -> bool:
        """The adapter encrypts inline and switches in hardware (DPU or SmartNIC)."""
        return self.offload or self.smart


def _mode(g: ServerGroup) -> _Mode:
    offload = g.scenario == "dpu" and g.dpus > 0
    smart = g.scenario == "smartnic" and g.smartnic_capacity is not None
    rail, sto = _capacities(g) if offload else ((g.smartnic_capacity, None) if smart else (None, None))
    # the DPUs that host the Arm services: the storage/north-south DPUs when the server has them
    # (and they have Arm cores), else the rail DPUs; each uses ITS OWN Arm kernel-path rate
    svc = sto if sto is not None and sto.arm_Hz > 0 else rail
    return _Mode(offload=offload, smart=smart, emulation=offload and g.dpu_storage_emulation,
                 rail=rail, sto=sto, svc=svc)


@dataclass(frozen=True)
class _Collectives:
    """One server's crossing collectives in one iteration: bytes by path and host cycles by task
    inside the communication window."""

    kernel_b: float  #: sent + received over kernel TCP
    rdma_b: float  #: sent + received over RDMA
    window_cycles: dict[str, float]  #: host cycles by task while the collectives run
    proxy_Hz: float  #: cycles per second the NCCL proxy threads keep busy

    @property
    def total_b(self) -> float:
        return self.kernel_b + self.rdma_b

    @property
    def per_direction_b(self) -> float:
        """What the DPU line and crypto engines see per direction."""
        return per_direction(self.total_b)


def _collectives(g: ServerGroup, m: _Mode, hc: HostCosts) -> _Collectives:
    """Host cycles of the crossing collectives (network stack, software crypto, host virtual
    switch, interrupts, NCCL proxies)."""
    hz = g.cpu_GHz * 1e9
    kernel_b, rdma_b = hostcpu.collective_paths(offload=m.inline, rdma=g.rdma, encrypt=g.encrypt,
                                                rdma_bytes=g.rdma_bytes, tcp_bytes=g.tcp_bytes)
    coll_b = kernel_b + rdma_b  # sent + received: the host stacks handle both
    send_pkt, recv_pkt = (_host_pkt(g, hc, overlay=g.isolated, receive=r) for r in (False, True))
    win = {"network": hostcpu.network_cycles(kernel_b, rdma_b, hc, send_packet_bytes=send_pkt,
                                             receive_packet_bytes=recv_pkt),
           "crypto": hostcpu.crypto_cycles(coll_b, hc) if g.encrypt and not m.inline else 0.0,
           # host-managed isolation: the kernel path crosses the host virtual switch (RDMA uses
           # SR-IOV functions isolated by the NIC's embedded switch); with a DPU it switches,
           # a SmartNIC's embedded switch takes the flows (ASAP2)
           "virtualization": hostcpu.per_direction_packets(
               kernel_b, hostcpu.vswitch_cycles_per_packet(g.vswitch, hc), _host_pkt(g, hc, overlay=True),
               _host_pkt(g, hc, overlay=True, receive=True)) if g.isolated and not m.inline else 0.0,
           "irq": hostcpu.irq_cycles(kernel_b, 0.0, g.cpu_GHz, hc) if g.irq else 0.0,
           # stateful firewall on the host kernel path; a DPU or SmartNIC tracks the connections
           # in its embedded switch (ASAP2 connection-tracking offload)
           "firewall": hostcpu.per_direction_packets(kernel_b, hc.conntrack_cycles_per_packet,
                                                     send_pkt, recv_pkt)
           if g.firewall and not m.inline else 0.0}
    # NCCL's proxy threads poll the network while the crossing collectives run; over kernel TCP
    # (NCCL's socket transport) the same threads execute the socket calls, so the network cycles
    # are part of their busy time: counted once, the proxy adds only what the stack leaves idle
    proxy_Hz = g.gpus * hc.nccl_proxy_cores_per_gpu * hz if g.nccl_proxy and coll_b > 0 else 0.0
    win["nccl_proxy"] = max(0.0, proxy_Hz * g.comm_s - win["network"])
    return _Collectives(kernel_b=kernel_b, rdma_b=rdma_b, window_cycles=win, proxy_Hz=proxy_Hz)


@dataclass(frozen=True)
class _Reads:
    """One server's storage read path in one iteration."""

    read_b: float  #: bytes read
    cpb: dict[str, float]  #: host cycles per byte read, by task
    write_cpb: float  #: host cycles per byte of checkpoint writes
    limits: dict[str, float]  #: bytes per second each path element gives the reads
    rate: float  #: bytes per second achieved (the smallest limit)
    limit: str  #: which element that is
    arm_cpb: float  #: DPU Arm cycles per byte read
    dram_pb: float  #: DPU memory passes per byte read
    gds_read: bool  #: GPUDirect Storage in effect for the reads
    warnings: tuple[str, ...]

    @property
    def host_cpb(self) -> float:
        return sum(self.cpb.values())


def _gds(g: ServerGroup, inp: ResourceInputs, m: _Mode, read_b: float,
         host_preprocess: bool) -> tuple[bool, bool, list[str]]:
    """GPUDirect Storage in effect for the reads and for the checkpoint writes, and why not
    (:func:`designer.engine.hostcpu.gds_problem`): writes need the RDMA path, reads also samples
    that go to the GPU undecoded. Inline encryption (DPU or SmartNIC) keeps the path on RDMA."""
    warnings: list[str] = []
    path_why = hostcpu.gds_problem(offload=m.inline, rdma=g.rdma, transport=inp.storage_transport,
                                   encrypt=g.encrypt) if g.gpudirect_storage else ""
    read_why = path_why or (hostcpu.gds_problem(
        offload=m.inline, rdma=g.rdma, transport=inp.storage_transport, encrypt=g.encrypt,
        host_preprocess=host_preprocess) if g.gpudirect_storage and read_b > 0 else "")
    if path_why:
        warnings.append(f"GPUDirect Storage is set but {path_why}: storage reads and checkpoint "
                        f"writes are modelled through the host bounce buffer (cuFile compatibility mode)")
    elif read_why:
        warnings.append(f"GPUDirect Storage is set but {read_why}: storage reads are modelled through "
                        f"the host bounce buffer (checkpoint writes still go direct)")
    return g.gpudirect_storage and not read_why, g.gpudirect_storage and not path_why, warnings


def _reads(g: ServerGroup, inp: ResourceInputs, fig: dict[str, float], hc: HostCosts, dc: DpuCosts,
           m: _Mode, samples: float, host_preprocess: bool, coll_dir: float, servers: int) -> _Reads:
    """The storage read path: host cycles per byte, and the rate each path element gives."""
    T = inp.iteration_s
    hz = g.cpu_GHz * 1e9
    read_b = samples * inp.sample_bytes
    gds_read, gds_write, warnings = _gds(g, inp, m, read_b, host_preprocess)

    def path_cpb(gds: bool, reads: bool = True) -> dict[str, float]:
        return hostcpu.storage_read_cycles_per_byte(
            offload=m.offload, emulation=g.dpu_storage_emulation, transport=inp.storage_transport,
            encrypt=g.encrypt, isolated=g.isolated, gpudirect_storage=gds, c=hc, smartnic=m.smart,
            pfs_client=g.pfs_client, object_store=inp.object_store_tls and reads, send=not reads)

    cpb = path_cpb(gds_read and not inp.object_store_tls)
    # reads arrive: the receive side's packet size (tunnel LRO/GRO, scenario tunnel_rx_offload)
    if cpb["virtualization"] > 0:  # the host switch at the tenants' packet size and datapath
        cpb["virtualization"] = hostcpu.vswitch_cycles_per_packet(g.vswitch, hc) / _host_pkt(
            g, hc, overlay=True, receive=True)
    if _kernel_read(g, inp, m):  # the kernel TCP receive path's packets
        extra = hostcpu.tcp_packet_cycles_per_byte(_host_pkt(g, hc, overlay=g.isolated, receive=True), hc)
        if extra > 0:
            cpb["storage"] += extra
    if g.firewall and not m.inline and _kernel_read(g, inp, m):
        cpb["firewall"] = hc.conntrack_cycles_per_packet / _host_pkt(g, hc, overlay=g.isolated, receive=True)
    if g.irq and read_b > 0:  # one completion interrupt per storage IO
        cpb["irq"] = hostcpu.irq_cycles(0.0, 1.0, g.cpu_GHz, hc) / hc.read_io_bytes
    host_cpb = sum(cpb.values())
    write_cpb = sum(path_cpb(gds_write, reads=False).values())
    # the storage stack runs in the kernel, ahead of the user-space data loaders: it gets every
    # core but the training processes' (the loaders get what it leaves); an earlier version gave
    # it only the cores the loaders left, 0 when they wanted them all, which made a CPU-hungry
    # vision workload's reads infinitely slow (issue 14)
    free_for_io = max(g.cpu_cores - g.gpus * hc.training_process_cores_per_gpu, 0.0)
    limits = {"storage target": inp.storage_read_GBps * 1e9 / servers * (1.0 - noisy_share(inp, fig))}
    if g.storage_fabric_GBps > 0:
        fabric = g.storage_fabric_GBps * 1e9
        limits["fabric"] = (storage.converged_fabric_Bps(fabric, g.comm_s, T)
                            if inp.storage_converged else fabric)
    if host_cpb > 0:
        limits["host CPU"] = free_for_io * hz / host_cpb
    if g.kernel_copy_membw and g.host_memory_GBps > 0 and _kernel_read(g, inp, m):
        # the kernel copy of each byte read, and two more passes where the host decrypts it in
        # software (TLS or IPsec; software_crypto_memory_passes, Netflix: memory bandwidth caps
        # software kTLS before the cores do)
        passes = hc.kernel_copy_memory_passes + (hc.software_crypto_memory_passes if cpb["crypto"] > 0 else 0.0)
        limits["host memory"] = g.host_memory_GBps * 1e9 * hc.kernel_copy_memory_share / passes
    arm_cpb = dram_pb = 0.0
    if m.offload:
        arm_cpb, dram_pb = _dpu_read_costs(g, inp, hc, dc, m)
        reader = m.sto or m.rail
        assert reader is not None
        # reads arrive in the receive direction; on the rails the collectives' received bytes
        # take their share of it over the iteration
        taken = coll_dir / T if m.sto is None else 0.0
        limits["DPU line rate"] = max(reader.line_Bps - taken, 0.0)
        if g.encrypt:
            limits["DPU crypto"] = max(reader.crypto_Bps - taken, 0.0)
        if arm_cpb > 0:
            limits["DPU Arm cores"] = reader.arm_Hz / arm_cpb
        if dram_pb > 0 and reader.dram_Bps > 0:
            limits["DPU memory"] = reader.dram_Bps / dram_pb
        if m.emulation and reader.snap_iops > 0 and not inp.object_store_tls:
            limits["DPU storage emulation"] = dpu.snap_limit_Bps(reader.snap_iops, hc.read_io_bytes)
    elif m.smart and g.encrypt and m.rail is not None:
        limits["SmartNIC crypto"] = max(m.rail.crypto_Bps - coll_dir / T, 0.0)
    # the reads' packets cross the embedded switch they arrive on (the same load _slowdown counts)
    esw = _eswitch(g, m, 0.0, 0.0, coll_dir / T)
    if esw is not None and esw.read_limit_Bps is not None:
        owner = "DPU" if m.offload else "SmartNIC" if m.smart else "NIC"
        limits[f"{owner} eSwitch"] = esw.read_limit_Bps
    rate, limit = storage.achieved(limits)
    if read_b > 0 and not rate > 0:
        raise ValueError(_no_read_path(limit, inp, g))
    return _Reads(read_b=read_b, cpb=cpb, write_cpb=write_cpb, limits=limits, rate=rate, limit=limit,
                  arm_cpb=arm_cpb, dram_pb=dram_pb, gds_read=gds_read, warnings=tuple(warnings))


def _host_pkt(g: ServerGroup, hc: HostCosts, *, overlay: bool, receive: bool = False) -> float:
    """Bytes per packet on the host kernel path (:func:`designer.engine.hostcpu.host_packet_bytes`)
    in one direction: overlay traffic without tunnel offload on that side (TSO for sends;
    LRO/GRO for receives, ``tunnel_rx_offload``) goes frame by frame (``packet_bytes``)."""
    offload = g.tunnel_offload and (g.tunnel_rx_offload or not receive)
    return hostcpu.host_packet_bytes(g.tenant_packet_bytes, hc, tunnel_offload=offload or not overlay,
                                     frame_bytes=g.frame_bytes)


def _kernel_read(g: ServerGroup, inp: ResourceInputs, m: _Mode) -> bool:
    """Whether storage reads cross the host's kernel network path (NVMe/TCP, an object store over
    HTTPS, host-managed encryption); with a DPU only when it leaves the NVMe/TCP initiator on the
    host (no storage emulation)."""
    if m.offload:
        return not m.emulation and inp.storage_transport == "tcp" and not inp.object_store_tls
    return inp.object_store_tls or inp.storage_transport == "tcp" or (g.encrypt and not m.inline)


def _arm_switch_cpb(g: ServerGroup, inp: ResourceInputs, cap: DpuCapacity, dc: DpuCosts) -> float:
    """Arm cycles per byte of software switching on the DPU (``ovs_offload`` false): the Arm
    kernel-path rate at the packet size (the tenants' own, else the frame size), measured on
    BlueField-2 (Liu et al., arXiv 2105.06619: about half of 100 Gb/s); 0 with ASAP2 (the
    embedded switch forwards, only a flow's first packet reaches the Arm cores)."""
    if not g.isolated or g.dpu_ovs_offload:
        return 0.0
    return arm_path_cycles_per_byte(cap, g.tenant_packet_bytes or inp.packet_bytes, dc)


def _dpu_read_costs(g: ServerGroup, inp: ResourceInputs, hc: HostCosts, dc: DpuCosts,
                    m: _Mode) -> tuple[float, float]:
    """Arm cycles and DPU memory passes per byte read through the DPU: SNAP per IO, software
    switching, and the bytes the Arm cores move in software (an object-store proxy's TCP + TLS
    termination, a filesystem client, SNAP's NVMe/TCP initiator), each crossing the DPU memory."""
    arm_cpb = dpu.storage_arm_cycles_per_byte(emulation=m.emulation, read_io_bytes=hc.read_io_bytes, c=dc)
    path_bytes = (float(inp.object_store_tls) + float(g.pfs_client)
                  + float(m.emulation and inp.storage_transport == "tcp" and not inp.object_store_tls))
    reader = m.sto or m.rail
    assert reader is not None
    arm_cpb += _arm_switch_cpb(g, inp, reader, dc)
    if path_bytes:
        arm_cpb += path_bytes * arm_path_cycles_per_byte(reader, inp.packet_bytes, dc)
    dram_pb = (path_bytes + float(g.isolated and not g.dpu_ovs_offload)) * dc.dpu_dram_touches_per_arm_byte
    return arm_cpb, dram_pb


@dataclass(frozen=True)
class _Slowdown:
    """How much longer one server's crossing collectives take, and what slows them."""

    host: float  #: >= 1, from the host cores (or host memory bandwidth)
    dpu: float  #: >= 1, from the adapters' engines
    dpu_limited: str  #: the engine that slows them most, or ""
    util: dict[str, float]  #: demand / capacity per engine
    memory_limited: bool  #: host memory bandwidth, not cores, set ``host``
    memory_GBps: float  #: host memory bandwidth the kernel-TCP copies ask for
    demand_cores: float  #: host cores the collectives need while they run
    free_cores: float  #: host cores free for them

    @property
    def factor(self) -> float:
        return max(self.host, self.dpu)


@dataclass(frozen=True)
class _Eswitch:
    """The tenants' packets through the adapters' embedded switches (:func:`_eswitch`)."""

    rail: float  #: demand / packet rate on the rail adapters (collectives, and reads arriving there)
    storage: float  #: demand / packet rate on the storage adapters (reads), 0 without them
    read_limit_Bps: float | None  #: read bytes/s the switch the reads arrive on leaves them (None: no limit)


def _eswitch(g: ServerGroup, m: _Mode, coll_Bps: float, io_rate: float, coll_over_T: float) -> _Eswitch | None:
    """The one eSwitch load of a server in every mode (host-managed, SmartNIC, DPU): collectives
    (``coll_Bps``, one direction over their window) on the rail adapters' switches; storage reads
    (``io_rate``) on the storage adapters' switches where the server has them
    (``storage_eswitch_pps``), else on the rails'. The rail switch is the DPU's or SmartNIC's own
    engine when the adapters switch inline, else the NICs' (``eswitch_pps``). Demand:
    :func:`eswitch_demand_pps`. The read limit is the packet rate times the packet size, less the
    collectives' bytes over the iteration (``coll_over_T``) where both share the switch. None:
    no packet size given, the traffic is not isolated, or (host-managed) no adapter has a packet rate."""
    if eswitch_demand_pps(g, 1.0) <= 0:
        return None
    rail_pps = m.rail.eswitch_pps if m.inline and m.rail is not None else g.eswitch_pps
    reads_on_rails = g.storage_eswitch_pps is None
    sto_pps = g.storage_eswitch_pps or 0.0
    if not m.inline and rail_pps <= 0 and sto_pps <= 0:
        return None  # host-managed without any packet rate: no eSwitch engine to report

    def ratio(bytes_ps: float, pps: float) -> float:
        demand = eswitch_demand_pps(g, bytes_ps)
        return 0.0 if demand <= 0 or pps <= 0 else demand / pps

    rail = ratio(coll_Bps + (io_rate if reads_on_rails else 0.0), rail_pps)
    sto = 0.0 if reads_on_rails else ratio(io_rate, sto_pps)
    pps = rail_pps if reads_on_rails else sto_pps
    limit = (max(pps * g.tenant_packet_bytes - (coll_over_T if reads_on_rails else 0.0), 0.0)
             if pps > 0 else None)
    return _Eswitch(rail=rail, storage=sto, read_limit_Bps=limit)


def eswitch_demand_pps(g: ServerGroup, bytes_ps: float) -> float:
    """Packets per second ``bytes_ps`` (one direction: collectives and storage reads) puts through
    the adapters' embedded switches, in every mode (host-managed: the SR-IOV / host-switch uplink;
    SmartNIC and DPU: the offloaded datapath): the tenants' isolated traffic at their packet size
    ``tenant_packet_bytes`` (packets = bytes / packet size, :func:`designer.engine.dpu.eswitch_packets_ps`);
    0 when the traffic is not isolated or flows in bulk (no packet size given: TSO/GRO aggregates
    are not counted per packet). The one demand that the collectives' slowdown (:func:`_slowdown`)
    and the read limit (:func:`_reads`, "... eSwitch") compare with the packet rate."""
    if not (g.isolated and g.tenant_packet_bytes > 0):
        return 0.0
    return dpu.eswitch_packets_ps(bytes_ps, g.tenant_packet_bytes)


def _slowdown(g: ServerGroup, inp: ResourceInputs, hc: HostCosts, dc: DpuCosts, m: _Mode,
              coll: _Collectives, reads: _Reads, load_cores: float, background_cycles: float,
              stall: float, agent_arm_Hz: float) -> _Slowdown:
    """Collective slowdown from the host cores (what the loaders and the storage stack leave),
    the host memory bandwidth of kernel copies, and the adapters' engines."""
    T = inp.iteration_s
    window = g.comm_s if g.comm_s > 0 else T
    io_rate = reads.read_b / max(T + stall, 1e-12)  # bytes/s actually read over the step
    storage_cores = hostcpu.cores_needed(background_cycles, T + stall, g.cpu_GHz)
    free = g.cpu_cores - load_cores - storage_cores
    demand = hostcpu.cores_needed(sum(coll.window_cycles.values()), window, g.cpu_GHz)
    host_slow = hostcpu.slowdown(demand, free) if coll.total_b > 0 else 1.0
    memory_limited, memory_demand = False, 0.0
    kernel_b = coll.kernel_b
    if g.kernel_copy_membw and kernel_b > 0 and g.host_memory_GBps > 0:
        # software encryption reads the plaintext and writes the ciphertext: 2 more passes
        passes = hc.kernel_copy_memory_passes + (
            hc.software_crypto_memory_passes if g.encrypt and not m.inline else 0.0)
        memory_demand = kernel_b / window * passes / 1e9
        mem_slow = hostcpu.memory_slowdown(kernel_b / window, passes,
                                           g.host_memory_GBps * 1e9, hc.kernel_copy_memory_share)
        if mem_slow > host_slow:
            host_slow, memory_limited = mem_slow, True
    dpu_slow, dpu_limited = 1.0, ""
    util: dict[str, float] = {}
    if m.inline and m.rail is not None:
        util, dpu_slow, dpu_limited = _engine_load(g, inp, dc, m, coll, reads, window, io_rate,
                                                   agent_arm_Hz)
    elif (esw := _eswitch(g, m, coll.per_direction_b / window, io_rate, 0.0)) is not None:
        # host-managed: the tenants' packets still cross the NICs' embedded switch (SR-IOV
        # functions, or the uplink of the host switch) at its packet rate
        util = {"eswitch": max(esw.rail, esw.storage)}
        if esw.rail > 1.0 and coll.total_b > 0:
            dpu_slow, dpu_limited = esw.rail, "eswitch"
    return _Slowdown(host=host_slow, dpu=dpu_slow, dpu_limited=dpu_limited, util=util,
                     memory_limited=memory_limited, memory_GBps=memory_demand,
                     demand_cores=demand, free_cores=free)


def _engine_load(g: ServerGroup, inp: ResourceInputs, dc: DpuCosts, m: _Mode, coll: _Collectives,
                 reads: _Reads, window: float, io_rate: float,
                 agent_arm_Hz: float) -> tuple[dict[str, float], float, str]:
    """Demand / capacity of the adapters' engines (rail and storage-only), and the factor and
    engine by which the rail engines slow the collectives (1.0 and "" when none does)."""
    rail, sto = m.rail, m.sto
    assert rail is not None
    coll_b, coll_dir = coll.total_b, coll.per_direction_b
    coll_arm = coll_b * _arm_switch_cpb(g, inp, rail, dc) if m.offload else 0.0
    coll_dram = (coll_dir * dc.dpu_dram_touches_per_arm_byte
                 if g.isolated and m.offload and not g.dpu_ovs_offload else 0.0)
    rail_io = io_rate if sto is None else 0.0
    rail_agents = agent_arm_Hz if m.svc is rail else 0.0
    # the embedded switch sees the isolated traffic packet by packet where its size is given
    esw = _eswitch(g, m, coll_dir / window, io_rate, 0.0)
    util = dpu.utilization(rail, line_Bps=coll_dir / window + rail_io,
                           crypto_Bps=(coll_dir / window + rail_io) if g.encrypt else 0.0,
                           arm_Hz=coll_arm / window + reads.arm_cpb * rail_io + rail_agents,
                           dram_Bps=coll_dram / window + reads.dram_pb * rail_io,
                           packets_ps=None)
    if m.smart:
        util = {k: v for k, v in util.items() if k in ("line", "crypto")}
    if esw is not None:
        util["eswitch"] = esw.rail
    over = {k: v for k, v in _limiting(util, rail, g, coll_b, coll_arm + coll_dram).items() if v > 1.0}
    dpu_limited = max(over, key=over.__getitem__) if over else ""
    dpu_slow = over[dpu_limited] if over else 1.0
    if sto is not None:  # storage-only DPUs: the reads alone
        su = dpu.utilization(sto, line_Bps=io_rate, crypto_Bps=io_rate if g.encrypt else 0.0,
                             arm_Hz=reads.arm_cpb * io_rate + (agent_arm_Hz if m.svc is sto else 0.0),
                             dram_Bps=reads.dram_pb * io_rate,
                             packets_ps=None)
        util = {k: max(v, su.get(k, 0.0)) for k, v in util.items()}
    if esw is not None:
        util["eswitch"] = max(esw.rail, esw.storage)
    return util, dpu_slow, dpu_limited


def _checkpoint_write_s(g: ServerGroup, inp: ResourceInputs, fig: dict[str, float], hc: HostCosts,
                        m: _Mode, reads: _Reads, write_b: float) -> float:
    """Seconds one server takes to write its share of a checkpoint (training paused: all cores
    free for the storage stack); the same path elements as the read, without training traffic
    on the links or DPU engines."""
    hz = g.cpu_GHz * 1e9
    wlimits = {"storage target": inp.storage_write_GBps * 1e9 / _servers(inp)}
    if "fabric" in reads.limits:  # the paths' capacity, not the (demand-capped) read rate
        wlimits["fabric"] = (g.storage_fabric_write_GBps or g.storage_fabric_GBps) * 1e9
    if reads.write_cpb > 0:
        wlimits["host CPU"] = g.cpu_cores * hz / reads.write_cpb
    if inp.checkpoint_via_host:  # serialized by one writer thread per GPU through host memory
        wlimits["host serialization"] = (g.gpus * hc.training_process_cores_per_gpu * hz
                                         / hc.checkpoint_serialize_cycles_per_byte)
    coding = _coding_cpb(inp, hc)
    if coding > 0:  # client-side compression / erasure coding on every core (training paused)
        wlimits["host compression and erasure coding"] = g.cpu_cores * hz / coding
    if m.emulation and reads.limits.get("DPU storage emulation"):
        wlimits["DPU storage emulation"] = reads.limits["DPU storage emulation"]
    if m.offload:
        reader = m.sto or m.rail
        assert reader is not None
        wlimits["DPU line rate"] = reader.line_Bps
        if g.encrypt:
            wlimits["DPU crypto"] = reader.crypto_Bps
        if reads.arm_cpb > 0:
            wlimits["DPU Arm cores"] = reader.arm_Hz / reads.arm_cpb
    if write_b > 0 and inp.storage_write_GBps > 0:
        return storage.transfer_s(write_b, storage.achieved(wlimits)[0])
    return 0.0


def _coding_cpb(inp: ResourceInputs, hc: HostCosts) -> float:
    return hostcpu.checkpoint_coding_cycles_per_byte(compression=inp.checkpoint_compression,
                                                     erasure_coding=inp.checkpoint_erasure_coding, c=hc)


def _servers(inp: ResourceInputs) -> int:
    return sum(g.count for g in inp.groups)


def _host_cycles(g: ServerGroup, inp: ResourceInputs, hc: HostCosts, coll: _Collectives,
                 reads: _Reads, load_cycles: float, write_b: float, slow: float) -> dict[str, float]:
    """Host cycles per iteration by task (keys: TASKS). Time-based loads are charged over the
    time they run: the proxies poll as long as the collectives take (slowed or not); the agents
    run the whole iteration (set in :func:`assess`, where its length is known)."""
    cycles = {t: 0.0 for t in TASKS}
    for t, c in coll.window_cycles.items():
        cycles[t] += c
    for t in ("storage", "crypto", "virtualization", "filesystem", "irq", "firewall"):
        cycles[t] += reads.cpb.get(t, 0.0) * reads.read_b
    cycles["nccl_proxy"] = max(0.0, coll.proxy_Hz * g.comm_s * slow - coll.window_cycles["network"])
    if inp.checkpoint_via_host and inp.checkpoint_every_iterations > 0:
        cycles["storage"] += write_b * hc.checkpoint_serialize_cycles_per_byte / inp.checkpoint_every_iterations
    if inp.checkpoint_every_iterations > 0:
        cycles["checkpoint_coding"] = write_b * _coding_cpb(inp, hc) / inp.checkpoint_every_iterations
    cycles["data_loading"] = load_cycles
    return cycles


def _agent_host_cores(g: ServerGroup, hc: HostCosts) -> dict[str, float]:
    """Host cores each agent task (ARM_TASKS) of this server keeps busy when it runs on the host:
    Kubernetes node, CNI and security agents (``k8s_agent_cores``) and provisioning /
    infrastructure-management agents (``provisioning_agent_cores``), each where its switch is on."""
    return {"agents": hc.k8s_agent_cores if g.k8s_agents else 0.0,
            "provisioning": hc.provisioning_agent_cores if g.provisioning_agents else 0.0}


def arm_hz_for_host_cores(host_cores: float, host_GHz: float, cap: DpuCapacity, hc: HostCosts,
                          dc: DpuCosts) -> float:
    """Arm cycles per second of ``cap`` that do the work of ``host_cores`` busy host cores of
    ``host_GHz``. derived: the same work takes (Arm cycles per byte of the DPU's kernel path) /
    (x86 cycles per byte of the host's kernel TCP path) as many Arm cycles: the one same-work
    comparison of the two core types measured (BlueField-2 kernel path, arXiv 2105.06619, 50 Gb/s
    on 8 x 2.5 GHz = 3.2 cycles/byte, vs. 0.65 on a Xeon core, Cai et al. SIGCOMM 2021: 4.9x);
    taken at the measured 1500-byte frames (agents are not bulk packets)."""
    return (host_cores * host_GHz * 1e9 * arm_path_cycles_per_byte(cap, dc.arm_path_packet_bytes, dc)
            / hc.tcp_cycles_per_byte)


def _agents(g: ServerGroup, inp: ResourceInputs, hc: HostCosts, dc: DpuCosts,
            m: _Mode) -> tuple[float, float, dict[str, float]]:
    """The agent tasks (ARM_TASKS): host cycles per iteration, Arm cycles per second when
    offloaded (:func:`arm_hz_for_host_cores`), and the Arm cores of ``dpu_arm_GHz`` per task they
    keep busy then ({} on the host)."""
    hz = g.cpu_GHz * 1e9
    cores = _agent_host_cores(g, hc)
    if not any(cores.values()):
        return 0.0, 0.0, {}
    if not m.offload:
        return sum(cores.values()) * inp.iteration_s * hz, 0.0, {}
    assert m.svc is not None
    arm = {t: arm_hz_for_host_cores(c, g.cpu_GHz, m.svc, hc, dc) for t, c in cores.items() if c}
    return 0.0, sum(arm.values()), {t: v / (g.dpu_arm_GHz * 1e9) for t, v in arm.items()}


def _server(g: ServerGroup, inp: ResourceInputs, fig: dict[str, float], hc: HostCosts,
            dc: DpuCosts, servers: int) -> _Server:
    """One server of a group: collectives, storage reads, data loading, slowdown, checkpoint
    write, host cycles by task and the group's report."""
    m = _mode(g)
    T = inp.iteration_s
    hz = g.cpu_GHz * 1e9
    coll = _collectives(g, m, hc)
    # background host work spread over the iteration: data loading
    samples = inp.samples_per_iteration / servers
    load_cycles = samples * inp.preprocess_core_s_per_sample * hz
    load_cores = hostcpu.cores_needed(load_cycles, T, g.cpu_GHz)
    reads = _reads(g, inp, fig, hc, dc, m, samples, load_cycles > 0, coll.per_direction_b, servers)
    read_s = storage.transfer_s(reads.read_b, reads.rate)
    agent_cycles, agent_arm_Hz, arm_tasks = _agents(g, inp, hc, dc, m)
    monitoring_cores = hc.monitoring_agent_cores if g.monitoring else 0.0
    agent_cycles += monitoring_cores * T * hz  # a constant load like the agents, in every mode
    # data loading gets the cores the training processes and the host stacks leave: the stacks'
    # cycles of the whole iteration (collectives and storage reads) as average cores
    background = reads.host_cpb * reads.read_b + agent_cycles
    infra_cores = hostcpu.cores_needed(sum(coll.window_cycles.values()) + background, T, g.cpu_GHz)
    training_cores = g.gpus * hc.training_process_cores_per_gpu
    load_free = hostcpu.loading_free_cores(g.cpu_cores, training_cores, infra_cores)
    # no free core at all: a very long load rather than an infinite one (as hostcpu.slowdown)
    load_s = load_cycles / (max(load_free, 1e-3) * hz) if load_cycles else 0.0
    stall = storage.stall_s(max(read_s, load_s), T)
    stall_cause = ("data loading" if load_s > read_s else "storage read") if stall > 0 else ""
    sd = _slowdown(g, inp, hc, dc, m, coll, reads, load_cores, background, stall, agent_arm_Hz)
    slow = sd.factor
    extra = exposed_extra_s(g, inp, slow)
    write_b = storage.checkpoint_bytes(inp.parameters, _bytes_per_param(inp, fig)) / servers
    write_s = _checkpoint_write_s(g, inp, fig, hc, m, reads, write_b)
    cycles = _host_cycles(g, inp, hc, coll, reads, load_cycles, write_b, slow)
    host_agents = {t: 0.0 if m.offload else c for t, c in _agent_host_cores(g, hc).items()}
    agent_cores, provisioning_cores = host_agents["agents"], host_agents["provisioning"]
    by_task_cores = {t: hostcpu.cores_needed(c, T + stall + extra, g.cpu_GHz) for t, c in cycles.items()}
    by_task_cores["agents"] = agent_cores
    by_task_cores["provisioning"] = provisioning_cores
    by_task_cores["monitoring"] = monitoring_cores
    infra = sum(by_task_cores[t] for t in INFRA_TASKS) / g.cpu_cores
    cv = jitter.worker_sigma(fig["gpu_cv"], jitter.host_cv(infra, fig["detour_s"], T + stall + extra,
                                                           fig["detour_mean_s"]))
    scenario = "dpu" if m.offload else ("smartnic" if m.smart else "host")
    report = GroupReport(count=g.count, scenario=scenario,
                         host_by_task=_reported(by_task_cores), host_cores=g.cpu_cores,
                         dpu_utilization=sd.util,
                         network_slowdown=slow, read_achieved_GBps=reads.rate / 1e9,
                         read_limit=reads.limit if reads.read_b > 0 else "", jitter_cv=cv,
                         load_cores_needed=load_cores, load_cores_free=load_free,
                         infra_cores=infra_cores, training_cores=training_cores,
                         stall_cause=stall_cause, gpudirect_storage=reads.gds_read, infra_share=infra)
    return _Server(report=report, network_extra_s=extra, stall_s=stall, write_s=write_s,
                   host_cycles=cycles, capacity_Hz=g.cpu_cores * hz, window_demand_cores=sd.demand_cores,
                   window_free_cores=sd.free_cores,
                   dpu_limited=sd.dpu_limited if sd.dpu >= sd.host else "",
                   fallback=g.scenario == "dpu" and not m.offload, samples=samples,
                   warnings=list(reads.warnings) + _mode_warnings(g, m, scenario),
                   memory_limited=sd.memory_limited and sd.host > sd.dpu, memory_GBps=sd.memory_GBps,
                   infra_share=infra, agent_cores=agent_cores, monitoring_cores=monitoring_cores,
                   provisioning_cores=provisioning_cores, arm_task_cores=arm_tasks)


def _mode_warnings(g: ServerGroup, m: _Mode, scenario: str) -> list[str]:
    out = []
    if g.isolation == "bare-metal" and not m.offload:
        out.append(f"bare-metal tenant isolation on {MODE_LABEL[scenario]} servers: the "
                   f"tenant owns the host, so nothing on it can enforce the isolation; a DPU "
                   f"(offload dpu) enforces it from outside the tenant's reach")
    if g.scenario == "smartnic" and not m.smart:
        out.append("scenario 'smartnic' but the server has no network adapter to offload to; "
                   "its host CPU runs the stacks")
    return out


def _no_read_path(limit: str, inp: ResourceInputs, g: ServerGroup) -> str:
    """The one-line message for storage reads that get no bandwidth at all (the step would wait
    forever): which element gives 0 and how to fix it."""
    fixes = {"storage target": "add storage systems or give them a read rate (read_GBps)",
             "fabric": ("put the storage on its own network (template --storage separate) or "
                        "shorten the collectives" if inp.storage_converged
                        else "connect the storage to the servers' network with links that have a speed"),
             "host CPU": "more CPU cores, or offload the storage stack (scenario offload dpu)",
             "SmartNIC crypto": "turn encryption off for storage or use adapters with a crypto engine",
             "DPU crypto": "use DPUs with a crypto engine (crypto_Gbps) or turn encryption off",
             "DPU line rate": "use DPUs with line rate left for storage",
             "DPU Arm cores": "use DPUs with Arm cores, or keep the storage stack on the host",
             "DPU memory": "use DPUs with memory bandwidth, or keep the storage stack on the host",
             "DPU storage emulation": "use larger IOs (scenario storage_io_kib) or DPUs with a storage-emulation IO rate",
             "host memory": "offload the kernel path (scenario offload smartnic or dpu) or use RDMA"}
    why = (" (the converged fabric is busy with training traffic for the whole iteration)"
           if limit == "fabric" and inp.storage_converged else "")
    return (f"resources: the workload reads {inp.sample_bytes:g} bytes per sample from storage but "
            f"the reads of a {MODE_LABEL.get(g.scenario, g.scenario)} server get 0 GB/s from the "
            f"{limit}{why}; {fixes.get(limit, 'give that element bandwidth')}, or set the "
            f"workload's bytes_per_sample to 0")


def noisy_share(inp: ResourceInputs, fig: dict[str, float]) -> float:
    """Share of the time the other jobs' checkpoints take the shared storage from a job's reads
    when there is no per-tenant QoS (0 with QoS or one job). ``storage_write_GBps`` is this job's
    share, 1/tenants of the systems' rate; without QoS a job that writes takes all of it. Each of
    the other ``tenants - 1`` jobs writes its checkpoint in ``bytes / (share x tenants)`` seconds
    every ``checkpoint_every_iterations`` iterations; while it writes, reads wait behind it (a
    FIFO target without reservations). Capped at 0.9."""
    if inp.tenant_qos or inp.tenants <= 1 or inp.checkpoint_every_iterations <= 0 \
            or inp.storage_write_GBps <= 0:
        return 0.0
    write_s = storage.checkpoint_bytes(inp.parameters, _bytes_per_param(inp, fig)) / (
        inp.storage_write_GBps * 1e9 * inp.tenants)  # the job's 1/tenants share of the write rate
    every_s = inp.checkpoint_every_iterations * inp.iteration_s
    return min(0.9, (inp.tenants - 1) * write_s / every_s)


def _limiting(util: dict[str, float], cap: DpuCapacity, g: ServerGroup, coll_b: float,
              coll_arm: float) -> dict[str, float]:
    # (``coll_arm``: Arm or DPU-memory work the collectives themselves cause)
    """Rail-DPU engines that can slow this server's collectives, with the factor they slow them by.

    The network stage already moves the collectives at no more than the ports' line rate
    (``port_Gbps``): a DPU whose line rate is at least that carries the same traffic a NIC of that
    rate carries, and counting its line load again would count the link time twice. So the line
    engine slows collectives only when the DPUs' line rate is below the port rate the network stage
    assumed, and then by at most port rate / DPU line rate. Without a network stage (``port_Gbps``
    0) the line load counts as it is. Crypto and Arm engines are extra work on top of the link and
    count whenever the collectives use them (the Arm load of storage reads limits the reads).
    """
    if coll_b <= 0:
        return {}
    out = {"line": util["line"]}
    if g.port_Gbps > 0:
        ratio = g.port_Gbps * 1e9 / 8 / cap.line_Bps if cap.line_Bps > 0 else float("inf")
        out["line"] = min(util["line"], ratio) if ratio > 1.0 else 0.0
    if g.encrypt:
        out["crypto"] = util["crypto"]
    if coll_arm > 0:  # software switching on the Arm cores (and through the DPU memory)
        out["arm"] = util.get("arm", 0.0)
        out["dram"] = util.get("dram", 0.0)
    if "eswitch" in util:  # every isolated packet of the collectives crosses the embedded switch
        out["eswitch"] = util["eswitch"]
    return out


def _bytes_per_param(inp: ResourceInputs, fig: dict[str, float]) -> float:
    if inp.checkpoint_bytes_per_param is not None:
        return inp.checkpoint_bytes_per_param
    return fig["checkpoint_bytes_per_param"]


# ----------------------------------------------------------------------------------------------
# the stage


def assess(inputs: ResourceInputs, figures: dict[str, float] | None = None) -> ResourceReport:
    """Resources stage of the pipeline; see the module docstring.

    ``figures`` are the cost figures (default: :func:`cost_figures` of the packaged catalog).
    Synchronous training waits for the slowest server: the extra network time, data stall and
    checkpoint time are the maximum over server groups; the straggler term is the expected
    maximum over all GPU workers' noise (:mod:`designer.engine.jitter`).
    """
    _check(inputs)
    fig = cost_figures() if figures is None else figures
    hc, dc = HostCosts.from_figures(fig), DpuCosts.from_figures(fig)
    if inputs.read_io_bytes:  # the scenario's storage IO size instead of the read-ahead window
        hc = replace(hc, read_io_bytes=float(inputs.read_io_bytes))
    groups = inputs.groups
    servers = sum(g.count for g in groups)
    rows = [_server(g, inputs, fig, hc, dc, servers) for g in groups]

    slowest = max(rows, key=lambda r: r.network_extra_s)
    network_extra = slowest.network_extra_s
    cause = ("dpu" if slowest.dpu_limited else "host_cpu") if network_extra > 0 else ""
    stall = max(r.stall_s for r in rows)
    step = inputs.iteration_s + network_extra + stall
    e_max = jitter.expected_max_workers([fig["gpu_cv"]] * len(rows), [r.infra_share for r in rows],
                                        [g.count * g.gpus for g in groups], iteration_s=step,
                                        detour_mean_s=fig["detour_mean_s"], detour_s=fig["detour_s"])
    straggler = step * e_max
    # the part of it the host stacks add: the same maximum without host-stack noise (infra share
    # 0 everywhere); the rest is the GPUs' own spread, the same in every mode
    e_gpu = jitter.expected_max_workers([fig["gpu_cv"]] * len(rows), [0.0] * len(rows),
                                        [g.count * g.gpus for g in groups], iteration_s=step,
                                        detour_mean_s=fig["detour_mean_s"], detour_s=fig["detour_s"])
    host_noise_s = max(0.0, straggler - step * e_gpu)
    write_s = max(r.write_s for r in rows)
    ckpt = storage.amortized_checkpoint_s(write_s, inputs.checkpoint_every_iterations)
    iteration = step + straggler + ckpt

    host = _host_report(groups, rows, iteration)

    dpu_util: dict[str, float] = {}
    for r in rows:
        for k, v in r.report.dpu_utilization.items():
            dpu_util[k] = max(dpu_util.get(k, 0.0), v)

    stor = _storage_report(inputs, rows, write_s, fig)

    en = _energy_report(inputs, iteration, fig)

    bottlenecks, flags = _explain(inputs, rows, host, stor, network_extra, stall,
                                  (straggler, host_noise_s), ckpt, fig)
    warnings = list(dict.fromkeys(w for r in rows for w in r.warnings))  # once, in group order
    clamp = jitter.out_of_range(step, fig["detour_mean_s"]) if straggler > 0 else ""
    if clamp:
        warnings.append(clamp)
    servers_n = sum(g.count for g in groups)
    arm_by_task = {t: sum(g.count * r.arm_task_cores.get(t, 0.0) for g, r in zip(groups, rows)) / servers_n
                   for t in ARM_TASKS if any(r.arm_task_cores.get(t) for r in rows)}
    return ResourceReport(iteration_s=iteration, network_extra_s=network_extra, data_stall_s=stall,
                          straggler_s=straggler, checkpoint_s=ckpt, host_cpu=host, dpu=dpu_util,
                          storage=stor, energy=en, bottlenecks=bottlenecks, flags=flags,
                          groups=tuple(r.report for r in rows), network_extra_cause=cause,
                          warnings=warnings, arm_by_task=arm_by_task)


def _host_report(groups: tuple[ServerGroup, ...], rows: list[_Server], iteration: float) -> HostCpuReport:
    """Host CPU, server-weighted, as shares of the cycles of a whole iteration (the definition is
    in HostCpuReport.infra_fraction); the agents and monitoring run the whole of it."""
    for g, r in zip(groups, rows):
        r.host_cycles["agents"] = r.agent_cores * g.cpu_GHz * 1e9 * iteration
        r.host_cycles["monitoring"] = r.monitoring_cores * g.cpu_GHz * 1e9 * iteration
        r.host_cycles["provisioning"] = r.provisioning_cores * g.cpu_GHz * 1e9 * iteration
    cap_total = sum(g.count * r.capacity_Hz for g, r in zip(groups, rows)) * iteration
    raw = {t: sum(g.count * r.host_cycles[t] for g, r in zip(groups, rows)) / cap_total for t in TASKS}
    busy = sum(raw.values())
    by_task = {t: v / busy for t, v in raw.items()} if busy > 1.0 else raw
    infra = sum(by_task[t] for t in INFRA_TASKS)
    saturated = any(r.report.network_slowdown > 1.0 and not r.dpu_limited for r in rows) or busy > 1.0
    host = HostCpuReport(cores_total=sum(g.count * g.cpu_cores for g in groups),
                         infra_fraction=infra, by_task=_reported(by_task),
                         training_fraction=max(0.0, 1.0 - sum(by_task.values())), saturated=saturated)
    return host


def _storage_report(inputs: ResourceInputs, rows: list[_Server], write_s: float,
                    fig: dict[str, float]) -> StorageReport:
    """Cluster storage figures: the read demand of the input iteration, what the servers'
    paths achieve, the checkpoint size and write time."""
    groups = inputs.groups
    demand = storage.read_demand_Bps(inputs.samples_per_iteration / inputs.iteration_s,
                                     inputs.sample_bytes)
    achieved_total = min(demand, sum(g.count * r.report.read_achieved_GBps * 1e9
                                     for g, r in zip(groups, rows))) if demand > 0 else 0.0
    stor = StorageReport(read_GB_per_iteration=inputs.samples_per_iteration * inputs.sample_bytes / 1e9,
                         read_demand_GBps=demand / 1e9, read_achieved_GBps=achieved_total / 1e9,
                         checkpoint_GB=storage.checkpoint_bytes(inputs.parameters,
                                                                _bytes_per_param(inputs, fig)) / 1e9,
                         checkpoint_write_s=write_s if inputs.storage_write_GBps > 0 else None)
    return stor


def adapter_power_basis(setting: str, adapters: int, without_typical: tuple[str, ...]) -> str:
    """Which adapter power the energy counts: ``setting`` "max" or "typical" as asked; "auto" takes
    the typical power when every one of the ``adapters`` has a typical figure (none in
    ``without_typical``), else the maxima, so that no mode is priced at typical power beside
    another at maxima. Typical power is what a vendor's "typical power" row or a measurement
    gives for a loaded card (NVIDIA's adapter manuals: "typical power for ATIS traffic load");
    the maxima (power_W) are what a rack must be able to supply."""
    if setting not in ("auto", "typical", "max"):
        raise ValueError(f"adapter_power must be auto, typical or max, got {setting!r}")
    if setting != "auto":
        return setting
    return "typical" if adapters and not without_typical else "max"


def _energy_report(inputs: ResourceInputs, iteration: float, fig: dict[str, float]) -> EnergyReport:
    """Power by part (the per-server figures come from designer.topology.validation.server_power_W,
    catalog maxima; the adapters at their typical power where :func:`adapter_power_basis` says so)
    and the iteration's and run's energy and cost."""
    groups = inputs.groups
    max_W = sum(g.count * g.adapters_power_W for g in groups)
    typ_W = sum(g.count * (g.adapters_power_W if g.adapters_typical_power_W is None
                           else g.adapters_typical_power_W) for g in groups)
    missing = tuple(sorted({m for g in groups for m in g.adapters_without_typical}))
    has_adapters = any(g.adapters_power_W > 0 or g.adapters_typical_power_W for g in groups)
    basis = adapter_power_basis(inputs.adapter_power, int(has_adapters), missing)
    parts = {"gpu": sum(g.count * g.gpus * g.gpu_power_W for g in groups),
             "server": sum(g.count * g.base_power_W for g in groups),
             "adapters": typ_W if basis == "typical" else max_W}
    parts["switches"] = inputs.switch_power_W
    parts["storage"] = inputs.storage_power_W
    parts["total"] = sum(parts.values())
    it_kwh = energy.kwh(parts["total"], iteration)
    run_kwh = it_kwh * inputs.iterations
    en = EnergyReport(power_W=parts, iteration_kWh=it_kwh, run_kWh=run_kwh,
                      run_cost=run_kwh * (fig["price_per_kWh"] if inputs.price_per_kWh is None
                                          else inputs.price_per_kWh),
                      samples_per_s_per_kW=energy.samples_per_s_per_kW(
                          inputs.samples_per_iteration, iteration, parts["total"]),
                      adapter_power=basis, adapters_max_W=max_W, adapters_typical_W=typ_W,
                      adapters_without_typical=missing)
    return en


def _cost(r: _Server) -> str:
    if r.network_extra_s > 0:
        return f" (+{r.network_extra_s:.3g} s per iteration)"
    return " but stay hidden behind the backward pass (+0 s per iteration)"


def _loading_sentence(g: ServerGroup, r: _Server, i: int, stall: float) -> str:
    """The data stall of a server whose data-loader workers lack cores: how many they need, how
    many are left and why, and what would give them more."""
    rep = r.report
    host_managed = rep.scenario == "host"
    who = f"server group {i} ({g.count} x {MODE_LABEL[rep.scenario]})"
    need, free, infra = rep.load_cores_needed, rep.load_cores_free, rep.infra_cores
    remedies = []
    if host_managed and g.dpus == 0 and infra >= 0.05:
        remedies.append(f"DPUs to offload the network and storage stacks (frees {infra:.1f} cores"
                        f"{', not enough on its own' if free + infra < need else ''})")
    elif host_managed and infra >= 0.05:
        remedies.append(f"offloading the network and storage stacks to the server's DPUs (frees "
                        f"{infra:.1f} cores{', not enough on its own' if free + infra < need else ''})")
    remedies += [f"more CPU cores (at least {math.ceil(need + rep.training_cores + infra)} per server)",
                 "decoding on the GPU (e.g. NVIDIA DALI)"]
    return (f"data stall {stall:.3g} s per iteration: host CPU data loading on {who} needs "
            f"{need:.1f} cores to decode and augment {r.samples:.4g} samples per iteration but "
            f"{free:.1f} are free ({rep.host_cores} cores − {infra:.1f} for the network and storage "
            f"stacks − {rep.training_cores:.0f} for the training processes, one per GPU); remedies: "
            + "; ".join(remedies))


#: what runs on each engine, for the sentences
_ENGINE_WORK = {"line": "the adapter's traffic", "crypto": "inline encryption",
                "arm": "the Arm-core services (storage emulation, proxies, clients, agents; at the "
                       "catalog's Arm kernel-path rate arm_tcp_Gbps, a pktgen upper bound for "
                       "BlueField-2 and an assumption for BlueField-3/-4)",
                "dram": "the Arm-core data paths through the DPU memory",
                "eswitch": "the embedded switch's packet forwarding (ASAP2)"}


def _engine_work(e: str, g: ServerGroup) -> str:
    """What runs on engine ``e``; the eSwitch's figure, kind and source are the server's adapters'
    (catalog ``eswitch_Mpps``, :attr:`ServerGroup.eswitch_figure`)."""
    if e == "eswitch":
        return f"the embedded switch's packet forwarding (ASAP2; {g.eswitch_figure or 'eswitch_Mpps'})"
    return _ENGINE_WORK[e]


def _straggler_sentence(inp: ResourceInputs, rows: list[_Server], straggler: float,
                        host_noise: float, fig: dict[str, float]) -> str:
    """The straggler wait, split into the GPUs' own spread (``gpu_cv``, Sinha et al. SC 2022: the
    same in every mode) and what host-stack noise adds (compound-Poisson detours in proportion to
    the host infrastructure share, :mod:`designer.engine.jitter`): 0 where no host work is left."""
    cvs = [r.report.jitter_cv for r in rows]
    share = max(r.infra_share for r in rows)
    if host_noise >= 5e-4 * straggler:
        host = (f"host-stack noise adds {host_noise:.3g} s of it (infrastructure share up to "
                f"{100 * share:.1f}% of host cycles preempting training threads)")
    else:
        why = ("no host infrastructure work is left in this mode" if share <= 0 else
               f"an infrastructure share of {100 * share:.1f}% is too small to matter")
        host = f"host-stack noise adds {host_noise:.2g} s: {why}, so the wait is the GPUs' own spread"
    return (f"stragglers {straggler:.3g} s per iteration: slowest of "
            f"{sum(g.count * g.gpus for g in inp.groups)} GPU workers, per-worker noise "
            f"{100 * max(cvs):.3g}% (GPU-to-GPU spread {100 * fig['gpu_cv']:.3g}%); {host}")


def _group_sentences(i: int, g: ServerGroup, r: _Server, fig: dict[str, float],
                     bottlenecks: list[str], flags: list[str], owner_of) -> None:
    """The bottlenecks and flags of one server group: a saturated host CPU or host memory, and
    the adapter engines that slow its collectives or are over-subscribed."""
    mode = r.report.scenario
    who = f"server group {i} ({g.count} x {MODE_LABEL[mode]})"

    def owner(e: str, collectives: bool = False) -> str:
        # a host-managed server's only adapter engine is its NICs' embedded switch
        return "NIC" if mode == "host" else owner_of(g, r, e, collectives)
    if r.fallback:
        flags.append(f"{who}: scenario 'dpu' but the server has no DPU; its host CPU runs the stacks")
    s = r.report.network_slowdown
    if s > 1.0 and not r.dpu_limited:
        tasks = [t for t in INFRA_TASKS if r.host_cycles[t] > 0 and t != "storage"]
        why = []
        if g.encrypt and r.report.scenario == "host":
            why.append("software AES-GCM encryption, which also forces collectives off RDMA onto kernel TCP")
        elif g.tcp_bytes > 0 or not g.rdma:
            why.append("kernel TCP collectives")
        if g.isolated and r.report.scenario == "host":
            why.append("the host virtual switch")
        if g.nccl_proxy and r.host_cycles["nccl_proxy"] > 0:  # beyond the socket work they run
            why.append("NCCL proxy threads")
        if r.host_cycles["firewall"] > 0:
            why.append("the host firewall's connection tracking")
        if r.memory_limited:
            flags.append(f"host memory bandwidth saturated: network flows slowed to {100 / s:.0f}% on {who}")
            bottlenecks.append(
                f"host CPU on {who}: its kernel-TCP copies need {r.memory_GBps:.0f} GB/s of host "
                f"memory bandwidth ({fig['kernel_copy_memory_share']:.0%} of the {g.host_memory_GBps:.0f} "
                f"GB/s peak is theirs to use); collectives take {s:.2f}x as long{_cost(r)}")
            return
        flags.append(f"host CPU saturated: network flows slowed to {100 / s:.0f}% on {who}")
        bottlenecks.append(
            f"host CPU on {who}: {', '.join(why) or ', '.join(tasks)} together need {r.window_demand_cores:.0f} "
            f"cores while collectives run, {max(r.window_free_cores, 0):.0f} are free; "
            f"collectives take {s:.2f}x as long{_cost(r)}")
    if r.dpu_limited:
        u = r.report.dpu_utilization[r.dpu_limited]
        o = owner(r.dpu_limited, True)
        flags.append(f"{o} {r.dpu_limited} engine over-subscribed ({u:.2f}x) on {who}")
        bottlenecks.append(f"{o} {r.dpu_limited} engine on {who} is over-subscribed {u:.2f}x: "
                           f"collectives take {s:.2f}x as long{_cost(r)}")
    for e, u in r.report.dpu_utilization.items():  # over-subscribed without slowing collectives
        if u > 1.0 and e != r.dpu_limited:
            flags.append(f"{owner(e)} {e} engine over-subscribed ({u:.2f}x) on {who}")
            bottlenecks.append(f"{owner(e)} {e} engine on {who} is over-subscribed {u:.2f}x: "
                               f"{_engine_work(e, g)} runs "
                               f"{u:.2f}x slower than asked")


def _explain(inp: ResourceInputs, rows: list[_Server], host: HostCpuReport, stor: StorageReport,
             network_extra: float, stall: float, stragglers: tuple[float, float], ckpt: float,
             fig: dict[str, float]):
    """Plain-language bottlenecks (what costs time and why) and flags (conditions to look at)."""
    bottlenecks: list[str] = []
    flags: list[str] = []

    def owner(g: ServerGroup, r: _Server, e: str, collectives: bool = False) -> str:
        """Whose engine: a SmartNIC's; a DPU's; in a DPU server that keeps ConnectX on its rails
        (rail_dpus 0) the collectives' line and crypto engines are the rail SmartNICs'."""
        mode = r.report.scenario
        if mode == "smartnic":
            return "SmartNIC"
        if mode == "dpu" and g.rail_dpus == 0 and g.storage_capacity is not None and e in ("line", "crypto"):
            return "rail SmartNIC (ConnectX)" if collectives else "rail SmartNIC or storage DPU"
        return "DPU"

    for i, (g, r) in enumerate(zip(inp.groups, rows)):
        _group_sentences(i, g, r, fig, bottlenecks, flags, owner)
    if stall > 0:
        servers = sum(g.count for g in inp.groups)
        i = max(range(len(rows)), key=lambda k: rows[k].stall_s)
        r = rows[i]
        if r.report.stall_cause == "data loading":
            bottlenecks.append(_loading_sentence(inp.groups[i], r, i, stall))
        else:
            limit = r.report.read_limit
            extra = (" (converged fabric shared with training traffic)"
                     if limit == "fabric" and inp.storage_converged else "")
            if limit == "DPU Arm cores":
                extra = (" (at the catalog's Arm kernel-path rate arm_tcp_Gbps: a pktgen upper bound "
                         "for BlueField-2, an assumption for BlueField-3/-4)")
            if limit.endswith("eSwitch"):  # the reads' packets at the switch's packet rate
                g = inp.groups[i]
                extra = (f" (the tenants' {g.tenant_packet_bytes:g}-byte packets at its packet rate; "
                         f"{g.eswitch_figure or 'catalog eswitch_Mpps'})")
            noisy = noisy_share(inp, fig) if limit == "storage target" else 0.0
            if noisy > 0:
                extra = (f" (noisy neighbours: the other {inp.tenants - 1} jobs' checkpoints hold the "
                         f"storage {100 * noisy:.0f}% of the time; per-tenant QoS would reserve the fair share)")
            bottlenecks.append(f"data stall {stall:.3g} s per iteration: storage reads limited by "
                               f"{limit}{extra} at {r.report.read_achieved_GBps:.3g} GB/s per server "
                               f"where each server needs {stor.read_demand_GBps / servers:.3g} GB/s "
                               f"({stor.read_demand_GBps:.3g} GB/s for the cluster)")
    straggler, host_noise = stragglers
    if straggler > 0:
        bottlenecks.append(_straggler_sentence(inp, rows, straggler, host_noise, fig))
    if ckpt > 0:
        bottlenecks.append(f"checkpoints {ckpt:.3g} s per iteration: {stor.checkpoint_GB:.3g} GB every "
                           f"{inp.checkpoint_every_iterations} iterations, {stor.checkpoint_write_s:.3g} s each")
    if host.infra_fraction > 0:
        flags.append(f"host CPU infrastructure share {100 * host.infra_fraction:.1f}% of cycles")
    return bottlenecks, flags
