"""The fields of each component kind: type, unit, range, default.

This table is the one description of what a component holds. The catalog files fill these fields for
a model, a component's ``props`` override them, the file loader checks values against them and the
inspector builds its typed editors from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("rack", "gpu_server", "dpu", "nic", "switch", "storage")
MEDIA = ("nvlink", "pcie", "infiniband", "ethernet")
TIERS = ("leaf", "spine", "core")

#: catalog section that holds the models of each component kind
CATALOG_KIND = {
    "rack": "rack",
    "gpu_server": "server",
    "dpu": "dpu",
    "nic": "nic",
    "switch": "switch",
    "storage": "storage",
}

#: id prefix used by ``Topology.new_id`` for each kind
ID_PREFIX = {
    "rack": "rack",
    "gpu_server": "srv",
    "dpu": "dpu",
    "nic": "nic",
    "switch": "sw",
    "storage": "stor",
}

#: human-readable kind names (palette, inspector, messages)
KIND_LABEL = {
    "rack": "Rack",
    "gpu_server": "GPU server",
    "dpu": "DPU",
    "nic": "NIC",
    "switch": "Switch",
    "storage": "Storage",
}


@dataclass(frozen=True)
class FieldSpec:
    """One editable figure of a component kind.

    ``type`` is ``int``, ``float``, ``bool``, ``str`` or ``choice`` (then ``choices`` lists the values;
    ``choices_from`` names a catalog kind whose ids are the choices).
    """

    name: str
    type: str
    label: str
    unit: str = ""
    min: float | None = None
    max: float | None = None
    default: Any = None
    choices: tuple[str, ...] = ()
    choices_from: str = ""
    help: str = ""

    def check(self, value: Any) -> str | None:
        """Return a message if ``value`` is not acceptable for this field, else None."""
        import math

        if self.type == "bool":
            return None if isinstance(value, bool) else "must be true or false"
        if self.type in ("str",):
            return None if isinstance(value, str) else "must be a string"
        if self.type == "choice":
            if not isinstance(value, str):
                return "must be a string"
            if self.choices and value not in self.choices:
                return f"must be one of {', '.join(self.choices)}"
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "must be a number" if self.type == "float" else "must be an integer"
        if self.type == "int" and isinstance(value, float) and not value.is_integer():
            return "must be an integer"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be a finite number"
        if self.min is not None and value < self.min:
            if self.min == 1 and self.type == "int":
                return "must be a positive integer"
            return f"must be at least {self.min:g}{(' ' + self.unit) if self.unit else ''}"
        if self.max is not None and value > self.max:
            return f"must be at most {self.max:g}{(' ' + self.unit) if self.unit else ''}"
        return None


def _f(name, type_, label, unit="", min=None, max=None, default=None, **kw) -> FieldSpec:
    return FieldSpec(name, type_, label, unit, min, max, default, **kw)


#: the price of one component (every priced kind; ``designer.services.cost`` reads it first): no
#: default, the catalog's price (``models/costs/prices.toml``, a user catalog, the design's) applies
_PRICE = (
    _f("price_USD", "float", "Price", "USD", 0, 1e9, None,
       help="this component's own price in US dollars; empty = the catalog price"),
    _f("price_date", "str", "Price date", help="when the price was quoted (e.g. 2026-12)"),
    _f("price_source", "str", "Price source", help="where the price is from (a quote, a list price page)"),
)
#: names of the price fields (a catalog entry's prices live in models/costs/prices.toml, not here)
PRICE_FIELDS = tuple(s.name for s in _PRICE)

FIELDS: dict[str, tuple[FieldSpec, ...]] = {
    "rack": (
        _f("rack_units", "int", "Height", "U", 1, 60, 42),
        _f("power_budget_kW", "float", "Power budget", "kW", 0.1, 500, 40.0),
        *_PRICE,
    ),
    "gpu_server": (
        _f("gpu_model", "choice", "GPU model", choices_from="gpu", default="h100-sxm"),
        _f("gpu_count", "int", "GPUs", "", 1, 72, 8),
        _f("cpu_model", "choice", "CPU model", choices_from="cpu", default="xeon-8480"),
        _f("cpu_sockets", "int", "CPU sockets", "", 1, 64, 2,
           help="host CPUs of the system (36 Grace CPUs in an NVL72 rack)"),
        _f("host_memory_GB", "float", "Host memory", "GB", 1, 65536, 2048),
        _f("pcie_gen", "int", "PCIe generation", "", 3, 6, 5),
        _f("nvlink_domain", "int", "NVLink domain size", "GPUs", 1, 576, 8,
           help="GPUs joined by NVLink/NVSwitch; 1 means PCIe only"),
        _f("nvswitch", "bool", "NVSwitch", default=True),
        _f("rack_units_used", "int", "Height", "U", 1, 60, 8),
        _f("base_power_W", "float", "Power without GPUs/NICs", "W", 0, 50000, 2500),
        _f("bmc_ports", "int", "BMC management ports", "", 0, 64, 1,
           help="out-of-band management (BMC) ports, 1GbE RJ45, cabled to a management switch; 0 = "
                "the system manages itself on switches of its own (NVL72)"),
        *_PRICE,
    ),
    "dpu": (
        _f("ports", "int", "Network ports", "", 1, 8, 2),
        _f("port_speed_Gbps", "float", "Port speed", "Gb/s", 1, 1600, 200),
        _f("max_bandwidth_Gbps", "float", "Total bandwidth", "Gb/s", 1, 3200, 400),
        _f("arm_cores", "int", "Arm cores", "", 1, 256, 16),
        _f("arm_GHz", "float", "Arm clock", "GHz", 0.1, 6, 2.0),
        _f("pcie_gen", "int", "PCIe generation", "", 3, 6, 5),
        _f("pcie_lanes", "int", "PCIe lanes", "", 1, 32, 16),
        _f("crypto_Gbps", "float", "Inline crypto rate", "Gb/s", 0, 3200, 400),
        _f("arm_tcp_Gbps", "float", "Arm kernel-path rate", "Gb/s", 0, 3200, 0,
           help="TCP/TLS/filesystem traffic the Arm cores move through the kernel, all cores, at "
                "1500-byte frames; 0 = the BlueField-2 measurement scaled by Arm core-GHz"),
        _f("dram_GBps", "float", "DPU memory bandwidth", "GB/s", 0, 10000, 0,
           help="peak bandwidth of the DPU's own memory; 0 = not modelled"),
        _f("ipsec_packet_Gbps", "float", "IPsec packet-offload rate", "Gb/s", 0, 3200, 0,
           help="inline IPsec with the ESP encapsulation in hardware; 0 = crypto_Gbps"),
        _f("ktls_Gbps", "float", "kTLS offload rate", "Gb/s", 0, 3200, 0,
           help="inline TLS (kTLS device offload); 0 = crypto_Gbps"),
        _f("eswitch_Mpps", "float", "Embedded switch packet rate", "Mpps", 0, 10000, 0,
           help="packets per second the ASAP2 embedded switch forwards; 0 = not modelled"),
        _f("snap_tcp_kiops", "float", "SNAP IO rate over NVMe/TCP", "kIOPS", 0, 1e6, 0,
           help="storage-emulation IOs per second over NVMe/TCP; 0 = not modelled"),
        _f("snap_rdma_kiops", "float", "SNAP IO rate over RDMA", "kIOPS", 0, 1e6, 0,
           help="storage-emulation IOs per second over NVMe/RDMA; 0 = not modelled"),
        _f("rdma", "bool", "RDMA (RoCE/InfiniBand)", default=True),
        _f("storage_emulation", "bool", "NVMe/virtio-blk emulation (SNAP)", default=True),
        _f("ovs_offload", "bool", "Virtual switch offload (ASAP2)", default=True),
        _f("power_W", "float", "Power", "W", 0, 1000, 150,
           help="maximum power (the catalog figure the rack check and the bill of materials use)"),
        _f("typical_power_W", "float", "Typical power", "W", 0, 1000, 0,
           help="power at a typical load (a vendor 'typical power' row or a measurement); 0 = not "
                "given: energy counts power_W (scenario adapter_power)"),
        _f("medium", "choice", "Port type", choices=("infiniband", "ethernet"), default="ethernet"),
        _f("oob_ports", "int", "OOB management ports", "", 0, 4, 0,
           help="1GbE out-of-band management ports (the DPU's own BMC and Arm cores), cabled to a "
                "management switch, beside the network ports"),
        *_PRICE,
    ),
    "nic": (
        _f("ports", "int", "Network ports", "", 1, 8, 1),
        _f("port_speed_Gbps", "float", "Port speed", "Gb/s", 1, 1600, 400),
        _f("max_bandwidth_Gbps", "float", "Total bandwidth", "Gb/s", 1, 3200, 400),
        _f("pcie_gen", "int", "PCIe generation", "", 3, 6, 5),
        _f("pcie_lanes", "int", "PCIe lanes", "", 1, 32, 16),
        _f("rdma", "bool", "RDMA (RoCE/InfiniBand)", default=True),
        _f("crypto_Gbps", "float", "Inline crypto rate", "Gb/s", 0, 3200, 0),
        _f("ipsec_packet_Gbps", "float", "IPsec packet-offload rate", "Gb/s", 0, 3200, 0,
           help="inline IPsec with the ESP encapsulation in hardware (crypto-enabled parts of this "
                "generation); 0 = crypto_Gbps"),
        _f("ktls_Gbps", "float", "kTLS offload rate", "Gb/s", 0, 3200, 0,
           help="inline TLS (crypto-enabled parts of this generation); 0 = crypto_Gbps"),
        _f("eswitch_Mpps", "float", "Embedded switch packet rate", "Mpps", 0, 10000, 0,
           help="packets per second the ASAP2 embedded switch forwards; 0 = not modelled"),
        _f("power_W", "float", "Power", "W", 0, 1000, 25,
           help="maximum power (the catalog figure the rack check and the bill of materials use)"),
        _f("typical_power_W", "float", "Typical power", "W", 0, 1000, 0,
           help="power at a typical load (a vendor 'typical power' row or a measurement); 0 = not "
                "given: energy counts power_W (scenario adapter_power)"),
        _f("medium", "choice", "Port type", choices=("infiniband", "ethernet"), default="infiniband"),
        *_PRICE,
    ),
    "switch": (
        _f("tier", "choice", "Tier", choices=TIERS, default="leaf"),
        _f("ports", "int", "Ports", "", 1, 1024, 64),
        _f("port_speed_Gbps", "float", "Port speed", "Gb/s", 1, 1600, 400),
        _f("latency_ns", "float", "Port-to-port latency", "ns", 0, 100000, 500),
        _f("sharp", "bool", "In-network reduction (SHARP)", default=False),
        _f("sharp_trees", "int", "Concurrent reduction trees", "", 0, 1024, 0),
        _f("medium", "choice", "Fabric", choices=("infiniband", "ethernet"), default="infiniband"),
        _f("power_W", "float", "Power", "W", 0, 20000, 1500),
        _f("rack_units_used", "int", "Height", "U", 1, 20, 1),
        _f("frontend", "bool", "Front-end (north-south) switch", default=False,
           help="part of the front-end Ethernet network (users, ingest, management): the network it "
                "belongs to carries no training traffic"),
        _f("management", "bool", "Management (out-of-band) switch", default=False,
           help="part of the out-of-band management network (server BMCs, DPU OOB ports): the engine "
                "leaves it and its cables out of every traffic path"),
        _f("uplink_ports", "int", "Uplink ports", "", 0, 64, 0,
           help="ports besides the Ports above, at the uplink speed (e.g. 4x 100GbE on a 48x 1GbE "
                "management switch); 0 = none"),
        _f("uplink_speed_Gbps", "float", "Uplink speed", "Gb/s", 0, 1600, 0,
           help="speed of the uplink ports; 0 = no uplink ports"),
        *_PRICE,
    ),
    "storage": (
        _f("read_GBps", "float", "Read bandwidth", "GB/s", 0.01, 100000, 100),
        _f("write_GBps", "float", "Write bandwidth", "GB/s", 0.01, 100000, 50),
        _f("read_kiops", "float", "Read IOPS", "kIOPS", 0.001, 1e6, 2000),
        _f("capacity_TB", "float", "Capacity", "TB", 0.001, 1e6, 500),
        _f("ports", "int", "Network ports", "", 1, 256, 8),
        _f("port_speed_Gbps", "float", "Port speed", "Gb/s", 1, 1600, 200),
        _f("medium", "choice", "Fabric", choices=("infiniband", "ethernet"), default="ethernet"),
        _f("power_W", "float", "Power", "W", 0, 50000, 2000),
        _f("rack_units_used", "int", "Height", "U", 1, 60, 2),
        *_PRICE,
    ),
}

#: link fields (the Link dataclass holds them as attributes)
LINK_FIELDS: tuple[FieldSpec, ...] = (
    _f("medium", "choice", "Medium", choices=MEDIA, default="infiniband"),
    _f("speed_Gbps", "float", "Speed", "Gb/s", 0.001, 1e5, 400),
    _f("latency_us", "float", "Latency", "us", 0, 1e6, 0.0),
    _f("lanes", "int", "Lanes / parallel cables", "", 1, 64, 1),
)


def field_spec(kind: str, name: str) -> FieldSpec | None:
    for spec in FIELDS.get(kind, ()):
        if spec.name == name:
            return spec
    return None


def defaults(kind: str) -> dict[str, Any]:
    """Field defaults of a kind (used where neither catalog entry nor props give a value)."""
    return {s.name: s.default for s in FIELDS[kind]}
