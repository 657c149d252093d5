"""A design document: the topology plus the workload and scenario settings saved with it (no Qt)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Callable

from designer.topology.model import ChangeEvent, Topology

@dataclass(frozen=True)
class Setting:
    """One scenario setting: its type, allowed values and what it means. The file format's schema
    (:func:`json_schema`), ``--set`` (:meth:`problem`) and the GUI editors' ranges derive from it.

    ``type`` is ``str`` (one of ``choices``), ``bool``, ``int``, ``float`` or ``dict`` (server id ->
    one of ``choices``); ``minimum``/``maximum`` bound numbers (inclusive); ``zero`` says what 0
    means when it is special ("no checkpoints"); ``least`` is the smallest value other than 0 when
    0 is special and the values just above it are not allowed ("0 or 64..65536": ``minimum=0,
    least=64``). :meth:`problem` is the one check of a value: ``--set``, the engine's input check
    and (through it) every caller use it."""

    name: str
    type: type
    default: Any
    meaning: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    zero: str = ""
    least: float | None = None

    def allowed(self) -> str:
        """What the setting accepts, for messages: "one of host, dpu", "a whole number from 0 to 9"."""
        if self.type is bool:
            return "true or false"
        if self.type is dict:
            return f"an object mapping server ids to one of {', '.join(self.choices)}"
        if self.type is str:
            return f"one of {', '.join(self.choices)}"
        what = "a whole number" if self.type is int else "a number"
        if self.least is not None and self.maximum is not None:
            what += f" 0 or from {number_text(self.least)} to {number_text(self.maximum)}"
        elif self.minimum is not None and self.maximum is not None:
            what += f" from {number_text(self.minimum)} to {number_text(self.maximum)}"
        elif self.minimum is not None:
            what += f" of at least {number_text(self.minimum)}"
        return what + (f" (0: {self.zero})" if self.zero else "")

    def problem(self, value: Any) -> str | None:
        """None, or what is wrong with ``value`` ("'seed' must be a whole number from 0 to ...")."""
        ok = {bool: lambda v: isinstance(v, bool),
              str: lambda v: isinstance(v, str) and v in self.choices,
              dict: lambda v: isinstance(v, dict) and all(x in self.choices for x in v.values()),
              int: lambda v: _number(v) and float(v).is_integer() and self._in_range(v),
              float: lambda v: _number(v) and self._in_range(v)}[self.type]
        if ok(value):
            return None
        kind = " a number" if self.type in (int, float) and not _number(value) else ""
        extra = f" ({self.allowed()})" if kind else f" {self.allowed()}"
        return f"'{self.name}' must be{kind}{extra}, got {_short(value)}"

    def _in_range(self, v: float) -> bool:
        return ((self.minimum is None or v >= self.minimum)
                and (self.maximum is None or v <= self.maximum)
                and (self.least is None or v == 0 or v >= self.least))

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the setting's value in a design file."""
        if self.type is str:
            return {"enum": list(self.choices)}
        if self.type is dict:
            return {"type": "object", "additionalProperties": {"enum": list(self.choices)}}
        schema: dict[str, Any] = {"type": {bool: "boolean", int: "integer", float: "number"}[self.type]}
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def number_text(x: float) -> str:
    """A bound for a message: an int in full (2147483647), a float as ``%g`` (1e+07)."""
    return str(x) if isinstance(x, int) else f"{x:g}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


#: where a server's infrastructure work runs (scenario ``offload`` and ``per_server``)
OFFLOAD_MODES = ("host", "smartnic", "dpu")

#: the scenario settings (the engine reads them; the file format saves them)
SCENARIO_SPEC: dict[str, Setting] = {s.name: s for s in (
    Setting("offload", str, "host", "where the servers' infrastructure work runs: the host CPUs "
            "with plain NICs (host), the host CPUs with ConnectX SmartNIC offloads (smartnic: inline "
            "IPsec/kTLS crypto and ASAP2 virtual-switch offload, RDMA and SHARP kept, no Arm "
            "services) or BlueField DPUs (dpu); per_server overrides it",
            choices=OFFLOAD_MODES),
    Setting("per_server", dict, {}, "server id -> host, smartnic or dpu, overriding offload",
            choices=OFFLOAD_MODES),
    Setting("routing", str, "ecmp", "ecmp (flow hash) or adaptive (spread evenly)",
            choices=("ecmp", "adaptive")),
    Setting("encryption", bool, False, "encrypt traffic in flight (per tenant)"),
    Setting("tenants", int, 1, "training jobs sharing the fabric: the servers are split into this "
            "many equal jobs, each running the workload", minimum=1, maximum=1024),
    Setting("tenant_placement", str, "packed", "how the jobs' servers are chosen: packed (each "
            "job on consecutive servers, so mostly its own leaves) or scattered (server i to job "
            "i mod tenants, as a fragmented scheduler leaves them)", choices=("packed", "scattered")),
    Setting("storage_transport", str, "rdma", "NVMe-oF transport of the storage reads and "
            "checkpoint writes: rdma (RoCE/InfiniBand) or tcp (NVMe/TCP, kernel stack)",
            choices=("rdma", "tcp")),
    Setting("gpudirect_storage", bool, False, "storage reads go straight into GPU memory "
            "(GPUDirect Storage) instead of through a bounce buffer in host memory"),
    Setting("checkpoint_interval_s", float, 3600.0, "seconds between two checkpoints",
            minimum=0, maximum=1e7, zero="no checkpoints"),
    Setting("isolation", str, "auto", "how tenants are isolated: auto (an overlay when tenants > 1), "
            "none, sriov (SR-IOV virtual functions, the adapter's embedded switch), overlay "
            "(VXLAN/Geneve through Open vSwitch) or bare-metal (whole servers per tenant; a DPU "
            "enforces it, a host cannot)", choices=("auto", "none", "sriov", "overlay", "bare-metal")),
    Setting("packet_bytes", int, 1500, "frame size of the kernel-path traffic in bytes (1500 "
            "standard, 9000 jumbo): sets the DPU Arm kernel-path rate, which is per-packet bound",
            minimum=64, maximum=65536),
    Setting("storage_io_kib", float, 128.0, "storage IO size in KiB (the per-IO costs of the "
            "initiator, SNAP and interrupts scale with the IO count)", minimum=4, maximum=16384),
    Setting("tenant_qos", bool, True, "per-tenant QoS on the shared storage (each job its fair "
            "share); off: noisy neighbours, the slowest job gets less than its share"),
    # --- host consumers besides the network/storage/crypto/virtualization stacks (each sourced in
    # models/costs/host_cpu.toml; off by default so that earlier designs keep their figures)
    Setting("nccl_proxy", bool, False, "NCCL proxy threads: one busy host core per GPU while "
            "collectives cross servers (stays on the host in every mode)"),
    Setting("parallel_fs_client", bool, False, "storage reads go through a parallel-filesystem client "
            "(Lustre/GPFS/WEKA) on the host, or on the DPU's Arm cores when offloaded"),
    Setting("checkpoint_via_host", bool, False, "checkpoints are serialized through host memory "
            "(torch.save-style) before they are written"),
    Setting("object_store_tls", bool, False, "training samples come from an object store over "
            "HTTPS (TCP + TLS) instead of NVMe-oF"),
    Setting("k8s_agents", bool, False, "Kubernetes node agents, CNI overlay and security agents "
            "run on every server (on the DPU's Arm cores when offloaded)"),
    Setting("irq_handling", bool, False, "count NIC interrupt handling of the kernel-path traffic "
            "as its own host consumer"),
    Setting("kernel_copy_membw", bool, False, "kernel-TCP copies use host memory bandwidth; over the "
            "server's memory bandwidth they slow down"),
    # --- issue 21: crypto protocol, packets, further consumers (each sourced in models/)
    Setting("crypto_offload", str, "ipsec-crypto", "which inline encryption the SmartNIC or DPU "
            "runs: ipsec-crypto (IPsec crypto offload, crypto_Gbps), ipsec-packet (IPsec packet "
            "offload, ipsec_packet_Gbps) or ktls (TLS device offload, ktls_Gbps); the adapter "
            "catalog gives each rate with its kind", choices=("ipsec-crypto", "ipsec-packet", "ktls")),
    Setting("tenant_packet_bytes", int, 0, "packet size of the tenants' switched traffic in bytes "
            "(e.g. 64 for a small-packet service): the host switch, the firewall and the DPU's "
            "software switch cost per packet, and the adapters' embedded switch has a packet rate",
            minimum=0, least=64, maximum=65536, zero="bulk flows in 64 KiB TSO/GRO aggregates"),
    Setting("vswitch", str, "kernel", "host virtual switch datapath: kernel (OVS kernel datapath) "
            "or ovs-dpdk (OVS with DPDK poll-mode threads)", choices=("kernel", "ovs-dpdk")),
    Setting("tunnel_offload", bool, True, "the host NICs segment and aggregate VXLAN/Geneve "
            "traffic (TSO/LRO for tunnels); off: the host encapsulates and switches the overlay "
            "frame by frame (packet_bytes)"),
    Setting("tunnel_rx_offload", bool, True, "the receive side of tunnel offload (LRO/GRO for "
            "VXLAN/Geneve); off with tunnel_offload on: sends keep TSO, the host handles each "
            "received overlay frame (its switch, firewall and TCP stack per packet)"),
    Setting("firewall_conntrack", bool, False, "a stateful host firewall (connection tracking) "
            "filters the kernel-path traffic; SmartNICs and DPUs track connections in their "
            "embedded switch"),
    Setting("monitoring_agents", bool, False, "monitoring and logging agents run on every "
            "server (on the host in every mode: they read host and GPU state)"),
    Setting("provisioning_agents", bool, False, "provisioning and infrastructure-management "
            "agents (node provisioning/configuration agent, network telemetry exporter, network "
            "control agent) run on every server: on the host, or on the DPU's Arm cores when "
            "offloaded"),
    Setting("checkpoint_compression", bool, False, "checkpoints are compressed on the host "
            "(zstd level 1) before they are written"),
    Setting("checkpoint_erasure_coding", bool, False, "checkpoints are erasure-coded on the host "
            "(client-side erasure coding) before they are written"),
    Setting("adapter_power", str, "auto", "which NIC/DPU power the energy counts: auto (the "
            "typical power where every adapter of the design has a typical_power_W, else the "
            "catalog maxima power_W), typical (typical_power_W, the maximum for an adapter without "
            "one) or max (power_W)", choices=("auto", "typical", "max")),
    # 2^31 - 1: the largest value the GUI's spin box holds
    Setting("seed", int, 0, "random seed of the engine and the timeline", minimum=0,
            maximum=2**31 - 1),
)}

def scenario_problems(scenario: dict[str, Any]) -> list[tuple[str, str]]:
    """``(setting name, message)`` for each known setting of ``scenario`` whose value breaks its
    rule (:meth:`Setting.problem`, the one check ``--set`` and the engine use): the check a design
    file's scenario gets, e.g. ``tenant_packet_bytes`` 10 ("0 or from 64 to 65536"), a rule the
    file format's JSON Schema cannot state. Unknown keys are left to the file format."""
    return [(name, problem) for name, value in scenario.items()
            if name in SCENARIO_SPEC and (problem := SCENARIO_SPEC[name].problem(value))]


#: scenario settings and their defaults
SCENARIO_DEFAULTS: dict[str, Any] = {name: s.default for name, s in SCENARIO_SPEC.items()}

#: allowed values of the scenario's choice settings
SCENARIO_CHOICES: dict[str, tuple[str, ...]] = {
    name: s.choices for name, s in SCENARIO_SPEC.items() if s.type is str}


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
