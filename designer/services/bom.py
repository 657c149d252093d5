"""Bill of materials of a design: counts by catalog model, nameplate power and rack space (no Qt).

Power is the catalog's maximum (nameplate) power of each part, not the power at training load
(the engine reports that). A GPU server's ``base_power_W`` excludes its GPUs, NICs and DPUs
(``models/hardware/server.toml`` derives it so), which is why GPUs and adapters are rows of their
own and the rows add up to the design's total.
"""

from __future__ import annotations

from typing import cast

from dataclasses import dataclass

from designer.textsafe import csv_cell
from designer.topology.design import Design
from designer.topology.kinds import CATALOG_KIND, KIND_LABEL
from designer.topology.validation import Resolver, server_power_W

#: row order of the bill: racked equipment, then what sits inside the servers
ORDER = ("gpu_server", "gpu", "cpu", "dpu", "nic", "switch", "storage")
_LABEL = {**KIND_LABEL, "gpu": "GPU", "cpu": "CPU"}


@dataclass(frozen=True)
class BomRow:
    kind: str          #: component kind, or "gpu"/"cpu" for the parts inside servers
    model: str         #: catalog id ("" when a component names no model)
    name: str          #: catalog name
    count: int
    unit_power_W: float
    unit_U: int        #: rack units of one (0 for parts inside a server)
    #: "management" for the management network's switches (``designer.topology.management``)
    network: str = ""

    @property
    def label(self) -> str:
        return "Management switch" if self.network == "management" else _LABEL[self.kind]

    @property
    def power_kW(self) -> float:
        return self.count * self.unit_power_W / 1000.0

    @property
    def rack_U(self) -> int:
        return self.count * self.unit_U


@dataclass(frozen=True)
class Bom:
    rows: tuple[BomRow, ...]
    racks: int
    rack_capacity_U: int       #: sum of the racks' heights
    rack_power_budget_kW: float

    @property
    def power_kW(self) -> float:
        return sum(r.power_kW for r in self.rows)

    @property
    def rack_U(self) -> int:
        return sum(r.rack_U for r in self.rows)

    def count(self, kind: str) -> int:
        return sum(r.count for r in self.rows if r.kind == kind)


def bill_of_materials(design: Design, catalog) -> Bom:
    """Count the design's parts by catalog model and add up nameplate power and rack units.

    Power is split as :func:`designer.topology.validation.server_power_W` counts it: a server's
    ``base_power_W``, plus ``tdp_W`` per GPU, plus ``power_W`` of each attached NIC/DPU.
    """
    resolve = Resolver(catalog)
    # (kind, model, unit power, unit U, network) -> count; parts whose props change their power
    # or height get a row of their own, and management switches rows of theirs
    counts: dict[tuple[str, str, float, int, str], int] = {}

    def add(kind: str, model: str, count: int, power_W: float, units: int, network: str = "") -> None:
        if count > 0:
            key = (kind, model, power_W, units, network)
            counts[key] = counts.get(key, 0) + count

    def name(kind: str, model: str) -> str:
        if not resolve.known(kind, model):
            return f"{model or '(no model)'} (not in the catalog)"
        return cast(str, catalog.get(CATALOG_KIND.get(kind, kind), model)["name"])

    racks, capacity, budget = 0, 0, 0.0
    for comp in design.topology.components.values():
        fig = resolve(comp)
        if comp.kind == "rack":
            racks += 1
            capacity += int(fig["rack_units"])
            budget += float(fig["power_budget_kW"])
            continue
        if comp.kind == "gpu_server":
            gpu, cpu, gpus = fig["gpu_model"], fig["cpu_model"], int(fig["gpu_count"])
            power = server_power_W(design.topology, comp, resolve)  # adapters: rows of their own
            add("gpu_server", comp.model, 1, power["server"], int(fig["rack_units_used"]))
            add("gpu", gpu, gpus, power["gpu"] / gpus if gpus else 0.0, 0)
            # CPU power is inside the server's base_power_W; the row only counts the CPUs
            add("cpu", cpu, int(fig["cpu_sockets"]), 0.0, 0)
        else:
            units = int(fig.get("rack_units_used", 0)) if comp.kind in ("switch", "storage") else 0
            network = "management" if comp.kind == "switch" and fig.get("management") is True else ""
            add(comp.kind, comp.model, 1, float(fig["power_W"]), units, network)
    # management switches after the others (the key's last field), each group as before
    ordered = sorted(counts.items(), key=lambda kv: (ORDER.index(kv[0][0]), kv[0][4]) + kv[0][1:4])
    return Bom(tuple(BomRow(k, m, name(k, m), n, p, u, net) for (k, m, p, u, net), n in ordered),
               racks, capacity, budget)


# ------------------------------------------------------------------------- the planner's bill (CSV)
#: CSV columns of :func:`planner_rows` (``dpu-designer export --bom``)
PLAN_COLUMNS = ("category", "model", "name", "count", "unit_price_USD", "total_price_USD",
                "unit_power_W", "total_power_kW", "speed_Gbps", "medium", "length_class_m")
_CATEGORY = {"gpu_server": "GPU servers", "gpu": "GPUs", "cpu": "CPUs", "dpu": "DPUs", "nic": "NICs",
             "switch": "Switches", "storage": "Storage", "rack": "Racks"}
_CABLE_NAME = {"RJ45": "twisted-pair copper cable (Cat6, RJ45), 1GbE management ports", "DAC": "passive copper cable (DAC)", "AOC": "active optical cable (AOC)",
               "SR": "multimode fibre (MPO, OM4) for SR transceivers",
               "DR": "single-mode fibre (MPO, OS2) for DR transceivers",
               "FR": "single-mode fibre (duplex LC, OS2) for FR transceivers",
               "too long": "run longer than any optic reaches (2 km): move the racks closer"}
_OPTIC_NAME = {"SR": "multimode SR transceiver (50 m)", "DR": "single-mode DR transceiver (500 m)",
               "FR": "single-mode FR transceiver (2 km)"}


def unit_price(catalog, kind: str, model: str) -> float | None:
    """The entry's ``price_USD`` (a user catalog can add one to any entry), else None: the packaged
    catalog carries no prices (list prices are not published for most of its parts)."""
    try:
        entry = catalog.get(CATALOG_KIND.get(kind, kind), model)
    except KeyError:
        return None
    price = entry.get("price_USD")
    return float(price) if isinstance(price, (int, float)) and not isinstance(price, bool) else None


def planner_rows(design: Design, catalog, bom: Bom, cable_summary) -> list[dict]:
    """The bill a planner orders from: parts by model (with nameplate power and any catalog
    price), racks by model, cables by type/speed/medium/length class, transceivers by type/speed
    (``cable_summary``: ``designer.services.cabling.summarize``; one transceiver per optical cable end,
    switch ends and adapter ends on lines of their own). Model ids and names that a spreadsheet
    would run as formulas are made text (:func:`designer.textsafe.csv_cell`)."""
    rows: list[dict] = []

    def add(category, model, name, count, price=None, power_W=None, speed="", medium="", length=""):
        model, name = csv_cell(model), csv_cell(name)  # design strings: never a spreadsheet formula
        rows.append({"category": category, "model": model, "name": name, "count": count,
                     "unit_price_USD": "" if price is None else f"{price:.2f}",
                     "total_price_USD": "" if price is None else f"{price * count:.2f}",
                     "unit_power_W": "" if power_W is None else f"{power_W:g}",
                     "total_power_kW": "" if power_W is None else f"{power_W * count / 1000:.3f}",
                     "speed_Gbps": speed, "medium": medium, "length_class_m": length})

    for r in bom.rows:
        add("Management switches" if r.network == "management" else _CATEGORY[r.kind], r.model, r.name, r.count, unit_price(catalog, r.kind, r.model),
            r.unit_power_W if r.kind != "cpu" else None)
    racks: dict[str, int] = {}
    for comp in design.topology.components.values():
        if comp.kind == "rack":
            racks[comp.model] = racks.get(comp.model, 0) + 1
    for model, n in sorted(racks.items()):
        try:
            name = catalog.get("rack", model)["name"]
        except KeyError:
            name = f"{model or '(no model)'} (not in the catalog)"
        add("Racks", model, name, n, unit_price(catalog, "rack", model))
    for (kind, speed, medium, length), n in cable_summary.cables.items():
        add("Cables", kind, _CABLE_NAME[kind], n, speed=f"{speed:g}", medium=medium, length=f"{length:g}")
    for (kind, speed, end), n in cable_summary.transceivers.items():
        if end == "switch":
            name = (f"{_OPTIC_NAME[kind]}, switch ports (at twin-port OSFP switches one 2x400G "
                    "module serves two ports)" if speed == 400 else f"{_OPTIC_NAME[kind]}, switch ports")
        else:
            name = f"{_OPTIC_NAME[kind]}, adapter and storage ports"
        add("Transceivers", kind, name, n, speed=f"{speed:g}")
    return rows
