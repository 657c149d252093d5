"""What a design costs and what it buys per dollar, watt and rack unit (no Qt).

**Prices.** ``models/costs/prices.toml`` gives every part a price in US dollars with its basis
(``list``, ``street``, ``derived``, ``measured``, ``assumed``), the date the figure is from and its
source. A price is looked up, first match wins, in: the component's own ``price_USD`` property
(the inspector's Price field, with its ``price_date`` and ``price_source``; basis ``component``;
such components are a bill line of their own beside the model's catalog-priced line), the design's
prices (``meta.costs.prices``: ``"nic:connectx-7": {"USD": ...,
"date": ..., "source": ...}``, written by ``dpu-designer cost --price ... --save``), a user catalog
entry's ``price_USD`` (``~/.config/dpu-designer/catalog``), then the packaged table. A GPU server's
price is the system without the adapters the design draws on it (those are rows of their own);
its GPUs and CPUs are inside it.

**CapEx** is the sum of the bill's lines: parts by catalog model (``designer.services.bom``),
racks, cables by type and transceivers by type and speed (``designer.services.cabling.summary_of``:
one row per physical cable, so the cable count here is the cabling CSV's). The management
network's switches, cables and transceivers (``designer.topology.management``) are lines of their
own ("Management switches", "Management cables", "Management transceivers"), and
:func:`management_network` adds them up: the "management network" line that ``cost``, the app's
Engine results and the report print.

**TCO over the lifetime L years** (derivation, per year of use)::

    amortised  = CapEx / L                                   (straight line, no residual value)
    energy     = P_load [kW] x 8,766 h x PUE x price [USD/kWh]
    space      = P_nameplate [kW] x rate [USD per kW-month] x 12
    support    = CapEx x support fraction
    TCO        = CapEx + L x (energy + space + support)

``P_load`` is the engine's cluster power at training load for the mode (``Result.power_W
["total"]``, running all year: an upper bound of the energy), ``P_nameplate`` the bill's
nameplate IT power (what a colocation contract reserves: the CBRE rate is per kW of capacity,
electricity billed on top). The rate per hour is TCO / (L x 8,766 h).

**Per dollar, watt and rack unit.** tokens (or samples) per second of the mode's steady state
(``Result.tokens_per_s``), per $M of lifetime TCO, per kW of load power and per rack unit used;
tokens one dollar buys (``tokens/s x 3,600 / TCO per hour``); the cost of one training run is its
steady-state training time (no failures, ``Result.training_time_days``) x the TCO rate per hour.

**Payback of a DPU (or SmartNIC).** Between two modes a and b (b with the dearer adapters), with
T the steady-state training time: b frees ``f = 1 - T_b / T_a`` of the fleet's time, worth
``f x TCO_a per day``; the extra adapter CapEx per server ``(CapEx_b - CapEx_a) / servers`` is paid
back after ``(CapEx_b - CapEx_a) / (f x TCO_a per day)`` days of training. When b is not faster
(f <= 0) it never pays back on GPU time; the host cores it frees are listed beside it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from designer.errors import UsageError
from designer.topology.kinds import CATALOG_KIND

HOURS_PER_YEAR = 8766.0  #: 365.25 days
#: kinds of component a price is looked up for (the bill's part rows)
PART_KINDS = ("gpu_server", "dpu", "nic", "switch", "storage", "rack")
#: the site figures of the TCO, with their unit, in the order they are printed
SITE_FIELDS = {"lifetime_years": "years", "pue": "", "price_per_kWh": "USD/kWh",
               "space_USD_per_kW_month": "USD per kW-month", "support_fraction_per_year": "of CapEx a year"}
#: the range of each site figure: (lowest, whether the lowest itself is allowed, highest). A PUE is
#: total facility power over IT power, so at least 1 (The Green Grid, White Paper #49, "PUE: a
#: comprehensive examination of the metric", 2012); the highest values are assumed bounds of any
#: real site (they catch a unit slip: cents for dollars, percent for a fraction).
SITE_LIMITS = {"lifetime_years": (0.0, False, 50.0), "pue": (1.0, True, 5.0), "price_per_kWh": (0.0, True, 10.0),
               "space_USD_per_kW_month": (0.0, True, 10000.0), "support_fraction_per_year": (0.0, True, 1.0)}
#: the site figures in words, as the app's editors and the CLI's options name them
SITE_LABELS = {"lifetime_years": "Lifetime", "pue": "PUE", "price_per_kWh": "Electricity price",
               "space_USD_per_kW_month": "Space (colocation) rate", "support_fraction_per_year": "Support"}


def site_problem(key: str, value: Any) -> str | None:
    """Why ``value`` cannot be the site figure ``key`` (:data:`SITE_LIMITS`), or None."""
    if key not in SITE_LIMITS:
        return f"no site figure '{key}' (known: {', '.join(SITE_LIMITS)})"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "must be a number"
    low, inclusive, high = SITE_LIMITS[key]
    unit = SITE_FIELDS[key]
    if value < low or (value == low and not inclusive):
        return f"must be {'at least' if inclusive else 'more than'} {low:g} {unit}".rstrip() + (
            " (facility power over IT power)" if key == "pue" else "")
    if value > high:
        return f"must be at most {high:g} {unit}".rstrip()
    return None


def with_site(meta: dict[str, Any] | None, values: dict[str, float | None]) -> dict[str, Any]:
    """A copy of a design's ``meta`` with its site figures (``meta.costs.site``) set to ``values``
    (None removes one: the packaged figure applies again)."""
    meta = dict(meta or {})
    costs_ = dict(meta.get("costs") or {})
    site = dict(costs_.get("site") or {})
    for k, v in values.items():
        if v is None:
            site.pop(k, None)
        else:
            site[k] = float(v)
    if site:
        costs_["site"] = site
    else:
        costs_.pop("site", None)
    if costs_:
        meta["costs"] = costs_
    else:
        meta.pop("costs", None)
    return meta


class CostError(UsageError, ValueError):
    """A design's own cost figures (``meta.costs``) that cannot be used: the message says which,
    why and how to fix it (one line and exit 2 in the CLI; the app and the report show it)."""


@dataclass(frozen=True)
class Price:
    """One price: ``USD`` None when no price is known (the line is left out of CapEx and named)."""

    USD: float | None
    basis: str   #: list | street | derived | measured | assumed | design | user catalog | component | included | missing
    date: str
    source: str


MISSING = Price(None, "missing", "", "no price known: add one with `dpu-designer cost FILE --price KIND:MODEL=USD`")
INCLUDED = Price(0.0, "included", "", "inside the GPU server's price")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and value >= 0 else None


class PriceBook:
    """Prices of parts, cables and transceivers, with the overrides of the module docstring."""

    def __init__(self, catalog: Any, design_prices: dict[str, Any] | None = None) -> None:
        self._catalog = catalog
        table = catalog.costs("prices")
        self.currency = str(table.get("currency", "USD"))
        self._table: dict[tuple[str, str], Price] = {}
        self._optics: dict[str, list[tuple[float, Price]]] = {}
        for row in table.get("price", []):
            p = Price(_number(row.get("USD")), str(row.get("basis", "assumed")), str(row.get("date", "")),
                      str(row.get("source", "")))
            if row.get("kind") == "transceiver":
                self._optics.setdefault(str(row["model"]), []).append((float(row["speed_Gbps"]), p))
            else:
                self._table[(str(row["kind"]), str(row["model"]))] = p
        for rows in self._optics.values():
            rows.sort(key=lambda r: r[0])
        self._design: dict[str, Price] = {}
        for key, v in (design_prices or {}).items():
            v = v if isinstance(v, dict) else {"USD": v}
            usd = _number(v.get("USD"))
            if usd is None:
                raise CostError(f"meta.costs.prices.{key}: USD {v.get('USD')!r} is not a price (a number of 0 "
                                f"or more); set it with dpu-designer cost FILE --price {key}=USD --save")
            self._design[str(key)] = Price(usd, "design", str(v.get("date", "")),
                                           str(v.get("source", "set in the design file")))
        self.site = _site(catalog, table)

    def part(self, kind: str, model: str, props: dict[str, Any] | None = None) -> Price:
        """The price of one component of ``kind``/``model`` (``props``: its own overrides)."""
        own = own_price(props)
        if own is not None:
            return own
        key = f"{kind}:{model}"
        if key in self._design:
            return self._design[key]
        try:
            entry = self._catalog.get(CATALOG_KIND.get(kind, kind), model)
        except KeyError:
            entry = {}
        usd = _number(entry.get("price_USD"))
        if usd is not None:
            return Price(usd, "user catalog", str(entry.get("price_date", "")),
                         str(entry.get("sources", {}).get("price_USD") or entry.get("source", "user catalog")))
        return self._table.get((kind, model), MISSING)

    def cable(self, cable_type: str) -> Price:
        return self._design.get(f"cable:{cable_type}") or self._table.get(("cable", cable_type), MISSING)

    def transceiver(self, optic: str, speed_Gbps: float) -> Price:
        """The module of type ``optic`` at the next listed speed at or above ``speed_Gbps``."""
        own = self._design.get(f"transceiver:{optic}:{speed_Gbps:g}") or self._design.get(f"transceiver:{optic}")
        if own is not None:
            return own
        rows = self._optics.get(optic, [])
        for speed, p in rows:
            if speed >= speed_Gbps:
                return p
        return rows[-1][1] if rows else MISSING


@dataclass(frozen=True)
class SiteFigure:
    value: float
    basis: str
    date: str
    source: str


def _site(catalog: Any, table: dict[str, Any]) -> dict[str, SiteFigure]:
    out = {k: SiteFigure(float(v["value"]), str(v.get("basis", "assumed")), str(v.get("date", "")),
                         str(v.get("source", ""))) for k, v in table.get("site", {}).items()}
    energy = catalog.costs("energy")["price_per_kWh"]
    out["price_per_kWh"] = SiteFigure(float(energy["value"]), "measured", "2023", str(energy["source"]))
    return out


def site_of(book: PriceBook, design: Any = None, **given: float | None) -> dict[str, SiteFigure]:
    """The site figures: the packaged ones, then the design's (``meta.costs.site``), then ``given``."""
    site = dict(book.site)
    saved = ((getattr(design, "meta", None) or {}).get("costs") or {}).get("site") or {}
    for k, v in saved.items():
        problem = site_problem(k, v) if given.get(k) is None else None
        if problem:
            raise CostError(f"meta.costs.site.{k} = {v!r}: {problem}; set it in the app's inspector (nothing "
                            f"selected: Site figures) or with dpu-designer cost FILE --save and its option")
    for k, v in list(saved.items()) + [(k, v) for k, v in given.items() if v is not None]:
        if k in SITE_FIELDS and _number(v) is not None:
            site[k] = SiteFigure(float(v), "design" if k in saved and given.get(k) is None else "given",
                                 "", "set for this design")
    if site["lifetime_years"].value <= 0:
        raise CostError("the lifetime must be more than 0 years")
    return site


@dataclass(frozen=True)
class CostLine:
    category: str
    model: str
    name: str
    count: int
    unit_USD: float | None
    total_USD: float | None
    basis: str
    date: str
    source: str


@dataclass(frozen=True)
class Bill:
    """The priced bill of materials of a design as drawn."""

    lines: tuple[CostLine, ...]
    nameplate_kW: float
    rack_U: int
    racks: int
    servers: int
    gpus: int

    @property
    def capex_USD(self) -> float:
        return sum(line.total_USD for line in self.lines if line.total_USD is not None)

    @property
    def missing(self) -> list[str]:
        """Lines without a price (left out of the CapEx)."""
        return [f"{line.category} {line.model}" for line in self.lines if line.total_USD is None]

    def by_basis(self) -> dict[str, float]:
        """CapEx by how its prices are known (how much of the total rests on assumptions)."""
        out: dict[str, float] = {}
        for line in self.lines:
            if line.total_USD:
                out[line.basis] = out.get(line.basis, 0.0) + line.total_USD
        return out


_CATEGORY = {"gpu_server": "GPU servers", "gpu": "GPUs", "cpu": "CPUs", "dpu": "DPUs", "nic": "NICs",
             "switch": "Switches", "storage": "Storage", "rack": "Racks"}


def bill(design: Any, catalog: Any, book: PriceBook | None = None) -> Bill:
    """Price the design's bill of materials (see the module docstring)."""
    from designer.services.bom import bill_of_materials
    from designer.services.cabling import summary_of

    book = book or price_book(design, catalog)
    bom = bill_of_materials(design, catalog)
    # components with their own price_USD, by kind, model and network (as the bom's rows)
    own: dict[tuple[str, str, str], list[Price]] = {}
    racks: Counter[str] = Counter()
    for comp in design.topology.components.values():
        if comp.kind == "rack":
            racks[comp.model] += 1
        p = own_price(comp.props)
        if p is not None:
            network = "management" if comp.kind == "switch" and comp.props.get("management") is True else ""
            own.setdefault((comp.kind, comp.model, network), []).append(p)
    lines: list[CostLine] = []
    merged: dict[tuple[str, str, str], list] = {}  # bom rows split by power/U merge by model here
    for r in bom.rows:
        key = (r.kind, r.model, r.network)
        if key in merged:
            merged[key][1] += r.count
        else:
            merged[key] = [r.name, r.count]
    for (kind, model, network), (name, count) in merged.items():
        if kind in ("gpu", "cpu"):
            lines.append(_line(_CATEGORY[kind], model, name, count, INCLUDED))
            continue
        lines += _lines(MANAGEMENT_CATEGORIES[0] if network == "management" else _CATEGORY[kind], model, name,
                        count, book.part(kind, model), own.get((kind, model, network)))
    for model, n in sorted(racks.items()):
        try:
            name = catalog.get("rack", model)["name"]
        except KeyError:
            name = f"{model} (not in the catalog)"
        lines += _lines("Racks", model, name, n, book.part("rack", model), own.get(("rack", model, "")))
    from designer.topology.management import management_ids

    managed = bool(management_ids(design.topology))
    parts = [("Cables", "Transceivers", summary_of(design, catalog, "traffic" if managed else None))]
    if managed:
        parts.append((*MANAGEMENT_CATEGORIES[1:], summary_of(design, catalog, "management")))
    for cable_category, optic_category, summary in parts:
        cables: Counter[str] = Counter()
        for (ctype, _speed, _medium, _length), n in summary.cables.items():
            cables[ctype] += n
        for ctype, n in sorted(cables.items()):
            lines.append(_line(cable_category, ctype, f"{ctype} cable", n, book.cable(ctype)))
        optics: Counter[tuple[str, float]] = Counter()
        for (otype, speed, _end), n in summary.transceivers.items():
            optics[(otype, speed)] += n
        for (otype, speed), n in sorted(optics.items()):
            lines.append(_line(optic_category, f"{otype} {speed:g}G", f"{otype} transceiver, {speed:g} Gb/s", n,
                               book.transceiver(otype, speed)))
    servers = sum(1 for _ in design.topology.servers())
    return Bill(tuple(lines), bom.power_kW, bom.rack_U, bom.racks, servers, bom.count("gpu"))


#: the bill's categories of the management network's lines
MANAGEMENT_CATEGORIES = ("Management switches", "Management cables", "Management transceivers")


@dataclass(frozen=True)
class ManagementNetwork:
    """The management network of a design, added up from the bill and the bill of materials:
    its switches, the cables of its BMC/OOB ports and uplinks by type, their nameplate power, the
    rack units they fill and their share of the CapEx."""

    switches: int
    cables: dict[str, int]
    ports: int          #: BMC and OOB ports cabled (the cables that end on a server or DPU)
    power_kW: float
    rack_U: int
    capex_USD: float
    unpriced: tuple[str, ...] = ()

    def text(self) -> str:
        """The one sentence ``cost``, the app and the report print."""
        if not self.switches:
            return "management network: none drawn (dpu-designer new --management oob draws one)"
        cables = ", ".join(f"{n:,} {t}" for t, n in self.cables.items())
        total = sum(self.cables.values())
        return (f"management network: {self.switches:,} switch{'es' if self.switches != 1 else ''}, "
                f"{total:,} cable{'s' if total != 1 else ''} ({cables}), {self.ports:,} BMC/OOB ports, "
                f"{self.power_kW:,.2f} kW nameplate, {self.rack_U:,} U, {money(self.capex_USD)} of the CapEx"
                + (f" (not priced: {', '.join(self.unpriced)})" if self.unpriced else ""))


def management_network(design: Any, catalog: Any, drawn: Bill) -> ManagementNetwork:
    """:class:`ManagementNetwork` of ``design`` from its priced bill ``drawn``: switches, power and
    U from the bill of materials' management rows, cables and CapEx from the bill's management
    lines (:data:`MANAGEMENT_CATEGORIES`), ports from the links that end on a server or DPU."""
    from designer.services.bom import bill_of_materials
    from designer.topology.management import management_ids

    ids = management_ids(design.topology)
    if not ids:
        return ManagementNetwork(0, {}, 0, 0.0, 0, 0.0)
    rows = [r for r in bill_of_materials(design, catalog).rows if r.network == "management"]
    mine = [ln for ln in drawn.lines if ln.category in MANAGEMENT_CATEGORIES]
    cables = {ln.model: ln.count for ln in mine if ln.category == MANAGEMENT_CATEGORIES[1]}
    comps = design.topology.components
    ports = sum(max(1, int(l.lanes)) for l in design.topology.links.values()
                if (l.a in ids) != (l.b in ids)
                and comps.get(l.b if l.a in ids else l.a, None) is not None
                and comps[l.b if l.a in ids else l.a].kind in ("gpu_server", "dpu"))
    return ManagementNetwork(len(ids), cables, ports, sum(r.power_kW for r in rows), sum(r.rack_U for r in rows),
                             sum(ln.total_USD or 0.0 for ln in mine),
                             tuple(f"{ln.category} {ln.model}" for ln in mine if ln.total_USD is None))


def own_price(props: dict[str, Any] | None) -> Price | None:
    """A component's own price (its ``price_USD`` property, with ``price_date`` and
    ``price_source``), or None when it has none."""
    props = props or {}
    usd = _number(props.get("price_USD"))
    if usd is None:
        return None
    source = str(props.get("price_source") or "").strip() or "the component's price_USD property"
    return Price(usd, "component", str(props.get("price_date") or "").strip(), source)


def _line(category: str, model: str, name: str, count: int, price: Price) -> CostLine:
    if price.USD is None:
        return CostLine(category, model, name, count, None, None, price.basis, price.date, price.source)
    return CostLine(category, model, name, count, price.USD, count * price.USD, price.basis, price.date,
                    price.source)


def _lines(category: str, model: str, name: str, count: int, price: Price,
           own: list[Price] | None = None) -> list[CostLine]:
    """The bill's lines of ``count`` parts of one model: those at ``price`` (the catalog's), then
    one line of those with their own price (basis "component"; its unit price the mean of theirs,
    its date and source theirs when they all share one)."""
    own = own or []
    out = []
    rest = max(0, count - len(own))
    if rest or not own:
        out.append(_line(category, model, name, rest, price))
    if own:
        total = sum(p.USD or 0.0 for p in own)
        dates, sources = {p.date for p in own}, {p.source for p in own}
        out.append(CostLine(category, model, name, len(own), total / len(own), total, "component",
                            dates.pop() if len(dates) == 1 else "",
                            sources.pop() if len(sources) == 1 else
                            f"{len(own)} components with their own price_USD"))
    return out


def price_book(design: Any, catalog: Any) -> PriceBook:
    prices = ((getattr(design, "meta", None) or {}).get("costs") or {}).get("prices")
    return PriceBook(catalog, prices if isinstance(prices, dict) else None)


# --------------------------------------------------------------------------------- modes' adapters
def adapter_swaps(design: Any, catalog: Any, mode: str) -> Counter[tuple[str, str, float | None, str, str]]:
    """How a mode's run buys the adapters differently from the drawing (as ``engine.compare`` runs
    it): host-managed and SmartNIC runs buy each drawn DPU as the ConnectX of its line rate; the
    DPU run buys each NIC of a server that draws no DPU as the DPU of the same line rate.
    Returns (from kind, from model, its own price_USD or None, to kind, to model) -> count."""
    from designer.engine.compare import server_layouts
    from designer.engine.resources_adapter import dpu_for_nic, nic_for_dpu

    out: Counter[tuple[str, str, float | None, str, str]] = Counter()
    if mode not in ("host", "smartnic", "dpu"):
        return out
    for srv, kids, alike in server_layouts(design):
        f = catalog.resolve(srv)
        drawn = [c for c in kids if c.kind == "dpu"]
        if mode in ("host", "smartnic"):
            for c in drawn:
                alt = nic_for_dpu(catalog, catalog.resolve(c), f.get("nic_model"))
                if "id" in alt:
                    out[("dpu", c.model, _number((c.props or {}).get("price_USD")), "nic", str(alt["id"]))] += alike
        elif not drawn:
            for c in (c for c in kids if c.kind == "nic"):
                alt = dpu_for_nic(catalog, catalog.resolve(c), f.get("dpu_model"))
                if "id" in alt:
                    out[("nic", c.model, _number((c.props or {}).get("price_USD")), "dpu", str(alt["id"]))] += alike
    return out


def mode_capex(design: Any, catalog: Any, drawn: Bill, book: PriceBook, mode: str) -> tuple[float, list[str]]:
    """The CapEx of a mode's adapters: the drawn bill plus each swap's price difference; with the
    swaps in words. A drawn adapter with its own price comes off the bill at that price."""
    capex, words = drawn.capex_USD, []
    for (fk, fm, mine, tk, tm), n in adapter_swaps(design, catalog, mode).items():
        a, b = (book.part(fk, fm) if mine is None else Price(mine, "component", "", "")), book.part(tk, tm)
        if a.USD is None or b.USD is None:
            words.append(f"{n} {fm} bought as {tm}: no price for one of them, CapEx as drawn")
            continue
        capex += n * (b.USD - a.USD)
        words.append(f"{n} {fm} bought as {tm} ({n * (b.USD - a.USD):+,.0f} USD)")
    return capex, words


# ------------------------------------------------------------------------------------------ TCO
@dataclass(frozen=True)
class Tco:
    capex_USD: float
    lifetime_years: float
    amortised_USD_per_year: float
    energy_USD_per_year: float
    space_USD_per_year: float
    support_USD_per_year: float

    @property
    def per_year_USD(self) -> float:
        return (self.amortised_USD_per_year + self.energy_USD_per_year + self.space_USD_per_year
                + self.support_USD_per_year)

    @property
    def total_USD(self) -> float:
        return self.capex_USD + self.lifetime_years * (self.energy_USD_per_year + self.space_USD_per_year
                                                        + self.support_USD_per_year)

    @property
    def per_hour_USD(self) -> float:
        return self.total_USD / (self.lifetime_years * HOURS_PER_YEAR)


def tco(capex_USD: float, load_kW: float, nameplate_kW: float, site: dict[str, SiteFigure]) -> Tco:
    """TCO of the module docstring from its parts."""
    life = site["lifetime_years"].value
    return Tco(capex_USD, life, capex_USD / life,
               load_kW * HOURS_PER_YEAR * site["pue"].value * site["price_per_kWh"].value,
               nameplate_kW * site["space_USD_per_kW_month"].value * 12.0,
               capex_USD * site["support_fraction_per_year"].value)


@dataclass(frozen=True)
class ModeCost:
    """One mode's costs and what they buy."""

    mode: str
    capex_USD: float
    tco: Tco
    load_kW: float
    tokens_per_s: float          #: tokens/s (samples/s for a vision workload: see ``unit``)
    unit: str                    #: "tokens" or "samples"
    training_time_days: float    #: steady state (no failures)
    swaps: list[str] = field(default_factory=list)

    @property
    def per_MUSD_tco(self) -> float:
        """tokens/s per million dollars of lifetime TCO."""
        return self.tokens_per_s / (self.tco.total_USD / 1e6) if self.tco.total_USD else math.nan

    @property
    def per_kW(self) -> float:
        return self.tokens_per_s / self.load_kW if self.load_kW else math.nan

    @property
    def per_USD(self) -> float:
        """tokens one dollar of TCO buys."""
        return self.tokens_per_s * 3600.0 / self.tco.per_hour_USD if self.tco.per_hour_USD else math.nan

    @property
    def run_cost_USD(self) -> float:
        """One training run to its token budget at the TCO rate (steady-state time)."""
        return self.training_time_days * 24.0 * self.tco.per_hour_USD

    def to_json(self, rack_U: int) -> dict[str, Any]:
        t = self.tco
        return {"capex_USD": self.capex_USD, "tco_USD": t.total_USD, "tco_USD_per_year": t.per_year_USD,
                "tco_USD_per_hour": t.per_hour_USD,
                "tco_parts_USD_per_year": {"amortised": t.amortised_USD_per_year, "energy": t.energy_USD_per_year,
                                           "space": t.space_USD_per_year, "support": t.support_USD_per_year},
                "load_kW": self.load_kW, "unit": self.unit, "per_s": self.tokens_per_s,
                "per_s_per_MUSD_tco": self.per_MUSD_tco, "per_s_per_kW": self.per_kW,
                "per_s_per_rack_U": self.tokens_per_s / rack_U if rack_U else math.nan,
                "per_USD": self.per_USD, "training_run_cost_USD": self.run_cost_USD,
                "training_time_days": self.training_time_days, "adapter_swaps": list(self.swaps)}


def mode_cost(mode: str, result: Any, capex_USD: float, drawn: Bill, site: dict[str, SiteFigure],
              swaps: list[str] | None = None) -> ModeCost:
    load_kW = float(result.power_W.get("total", 0.0)) / 1e3
    tokens = float(result.tokens_per_s or 0.0)
    unit = "tokens" if tokens > 0 else "samples"
    rate = tokens if tokens > 0 else float(result.samples_per_s or 0.0)
    return ModeCost(mode, capex_USD, tco(capex_USD, load_kW, drawn.nameplate_kW, site), load_kW, rate, unit,
                    float(result.training_time_days), list(swaps or []))


@dataclass(frozen=True)
class Payback:
    a: str
    b: str
    extra_capex_USD: float
    extra_per_server_USD: float
    time_freed_fraction: float
    days: float | None     #: None: never on GPU time (b not faster)
    host_cores_freed: float

    def text(self, label: dict[str, str], lifetime_years: float | None = None) -> str:
        """The payback in words; with ``lifetime_years``, a payback beyond the lifetime is said
        as such ("does not pay back within the 5-year lifetime") instead of as a count of days
        no cluster lives to see."""
        what = (f"{label.get(self.b, self.b)} vs {label.get(self.a, self.a)}: "
                f"{self.extra_per_server_USD:+,.0f} USD of adapters per server")
        if self.extra_capex_USD <= 0:
            return what + " (no extra adapter cost)"
        if self.days is None:
            return (what + f"; the run is not faster ({100 * self.time_freed_fraction:+.2f}% of the fleet's time), "
                    f"so it never pays back on GPU time; it frees {self.host_cores_freed:.1f} host cores per server")
        freed = f"; it frees {_share_text(self.time_freed_fraction)} of the fleet's time"
        cores = f"; {self.host_cores_freed:.1f} host cores per server freed"
        if lifetime_years is not None and self.days > lifetime_years * 365.25:
            return (what + freed + f", so it does not pay back on GPU time within the "
                    f"{lifetime_years:g}-year lifetime" + cores)
        return what + freed + f", paid back after {self.days:,.0f} days of training" + cores


def _share_text(fraction: float) -> str:
    """A share of time in percent at two decimals; a share that rounds to 0.00% but is not zero
    as "<0.01%" (it is not "0.00%": it frees some time)."""
    pct = 100 * fraction
    return "<0.01%" if 0 < pct < 0.005 else f"{pct:.2f}%"


def payback(a: ModeCost, b: ModeCost, ra: Any, rb: Any, servers: int) -> Payback:
    """Payback of mode b's dearer adapters against mode a (module docstring)."""
    extra = b.capex_USD - a.capex_USD
    f = 1.0 - b.training_time_days / a.training_time_days if a.training_time_days > 0 else 0.0
    per_day = f * a.tco.per_hour_USD * 24.0
    days = extra / per_day if extra > 0 and per_day > 0 else (0.0 if extra <= 0 else None)
    cores = (_cores(ra) - _cores(rb)) / servers if servers else 0.0
    return Payback(a.mode, b.mode, extra, extra / servers if servers else 0.0, f, days, cores)


def _cores(result: Any) -> float:
    """Host cores busy with infrastructure work, all servers (the engine's infra share x cores)."""
    h = result.host_cpu or {}
    return float(h.get("infra_fraction", 0.0)) * float(h.get("cores_total", 0.0) or 0.0)


@dataclass(frozen=True)
class Costs:
    """A design's bill, site figures, and each compared mode's costs and paybacks."""

    bill: Bill
    site: dict[str, SiteFigure]
    modes: dict[str, ModeCost]
    paybacks: list[Payback]
    currency: str = "USD"
    #: the management network's share of the bill (:func:`management_network`)
    management: ManagementNetwork | None = None

    def to_json(self) -> dict[str, Any]:
        return {"currency": self.currency, "capex_USD": self.bill.capex_USD,
                "capex_by_basis_USD": self.bill.by_basis(), "unpriced": self.bill.missing,
                "bill": [asdict(line) for line in self.bill.lines],
                "site": {k: asdict(v) for k, v in self.site.items()},
                "nameplate_kW": self.bill.nameplate_kW, "rack_U": self.bill.rack_U,
                "modes": {m: c.to_json(self.bill.rack_U) for m, c in self.modes.items()},
                "paybacks": [asdict(p) for p in self.paybacks],
                **({"management_network": {**asdict(self.management), "text": self.management.text()}}
                   if self.management is not None and self.management.switches else {})}


PAYBACK_PAIRS = (("host", "smartnic"), ("smartnic", "dpu"), ("host", "dpu"))


def costs(design: Any, catalog: Any, comparison: Any, **site_given: float | None) -> Costs:
    """Costs of every mode ``comparison`` (``engine.compare.compare``) ran."""
    book = price_book(design, catalog)
    site = site_of(book, design, **site_given)
    drawn = bill(design, catalog, book)
    modes: dict[str, ModeCost] = {}
    for mode, result in comparison.runs.items():
        capex, swaps = mode_capex(design, catalog, drawn, book, mode)
        modes[mode] = mode_cost(mode, result, capex, drawn, site, swaps)
    backs = [payback(modes[a], modes[b], comparison.runs[a], comparison.runs[b], drawn.servers)
             for a, b in PAYBACK_PAIRS if a in modes and b in modes]
    return Costs(drawn, site, modes, backs, book.currency, management_network(design, catalog, drawn))


# ------------------------------------------------------------------------------ shown everywhere
def money(v: float | None) -> str:
    """Dollars as every view prints them: whole dollars, thousands separated, whatever the size
    (one format in a column: "$2,024,000" under "$253,000", not "$2.02M" beside it)."""
    if v is None or not math.isfinite(v):
        return "-"
    return f"${v:,.0f}"


def figure_rows(c: Costs) -> list[tuple[str, list[str], str]]:
    """The cost figures of each mode as (name, value per mode in ``c.modes`` order, what it is):
    the one set of names and values the CLI's compare and cost, the app's Engine results and the
    report print."""
    m = list(c.modes.values())
    if not m:
        return []
    unit = m[0].unit
    per_u = c.bill.rack_U
    return [
        ("CapEx", [money(x.capex_USD) for x in m], "the priced bill of materials, adapters as the mode buys them"),
        ("TCO over the lifetime", [money(x.tco.total_USD) for x in m],
         f"CapEx + {c.site['lifetime_years'].value:g} years of energy, space and support"),
        ("TCO per hour", [f"${x.tco.per_hour_USD:,.2f}" for x in m], "the lifetime TCO over its hours"),
        (f"{unit}/s (steady state)", [f"{x.tokens_per_s:,.0f}" for x in m], "the engine's throughput"),
        (f"{unit}/s per $M of TCO", [f"{x.per_MUSD_tco:,.0f}" for x in m], "steady-state throughput per $M"),
        (f"{unit}/s per kW", [f"{x.per_kW:,.0f}" for x in m], "per kW of cluster power at training load"),
        (f"{unit}/s per rack unit", [f"{x.tokens_per_s / per_u:,.0f}" if per_u else "-" for x in m],
         "per rack unit the design fills"),
        (f"{unit} per $ of TCO", [f"{x.per_USD:,.0f}" for x in m], "what one dollar of TCO buys"),
        ("one training run (steady state)", [money(x.run_cost_USD) for x in m],
         "training time without failures x the TCO per hour"),
    ]


def basis_share_text(b: Bill) -> str:
    """How much of the CapEx rests on which price basis (``Bill.by_basis``), largest first:
    "of which derived 67%, assumed 22%, component <1%" ("" without a CapEx); the one sentence
    ``cost``, the app's Engine results and the report print."""
    if not b.capex_USD:
        return ""
    parts = []
    for k, v in sorted(b.by_basis().items(), key=lambda kv: -kv[1]):
        pct = 100 * v / b.capex_USD
        parts.append(f"{k} {'<1' if 0 < pct < 0.5 else f'{pct:.0f}'}%")
    return "of which " + ", ".join(parts)


def payback_lines(c: Costs, label: dict[str, str]) -> list[str]:
    """The adapters' paybacks in words (the same sentences everywhere)."""
    return [p.text(label, c.site["lifetime_years"].value) for p in c.paybacks]


# ------------------------------------------------------------------ the design's own cost figures
#: the keys ``meta.costs`` may hold
META_COSTS_KEYS = ("prices", "site")
#: the keys of one price entry in ``meta.costs.prices``
PRICE_ENTRY_KEYS = ("USD", "date", "source")


def meta_costs_problems(meta: dict[str, Any] | None, catalog: Any) -> list[tuple[str, str, str, str]]:
    """What is wrong with a design's own cost figures (``meta.costs``: the price and site
    overrides ``dpu-designer cost --save`` and the inspector write), as (severity, path, what,
    how to fix) with the key named in the path: an unknown key of ``meta.costs`` or of a price
    entry, a price key that is not ``KIND:MODEL`` of a priced kind, a price or site figure that is
    not a finite number, negative, or out of its range (:data:`SITE_LIMITS`) is an error (``cost``
    refuses it); a price of a model the catalog does not have is a warning (it is never used)."""
    out: list[tuple[str, str, str, str]] = []
    costs_ = (meta or {}).get("costs")
    if costs_ is None:
        return out
    fix = "correct it or remove it from the design file"
    if not isinstance(costs_, dict):
        return [("error", "meta.costs", f"must be an object of {' and '.join(META_COSTS_KEYS)}, not "
                 f"{type(costs_).__name__}", fix)]
    for key in costs_:
        if key not in META_COSTS_KEYS:
            out.append(("error", f"meta.costs.{key}", f"unknown key (known: {', '.join(META_COSTS_KEYS)})",
                        "remove it, or move its figures under meta.costs.prices or meta.costs.site"))
    prices = costs_.get("prices")
    if prices is not None and not isinstance(prices, dict):
        out.append(("error", "meta.costs.prices", "must be an object of KIND:MODEL keys", fix))
        prices = None
    cable_types = ("RJ45", "DAC", "AOC", "SR", "DR", "FR")
    for key, value in (prices or {}).items():
        path = f"meta.costs.prices.{key}"
        kind, _, model = str(key).partition(":")
        if kind not in (*PART_KINDS, "cable", "transceiver") or not model:
            out.append(("error", path, f"unknown price key (write KIND:MODEL with KIND one of "
                        f"{', '.join((*PART_KINDS, 'cable', 'transceiver'))})",
                        "rename it, e.g. nic:connectx-7, or remove it"))
            continue
        entry = value if isinstance(value, dict) else {"USD": value}
        for extra in entry:
            if extra not in PRICE_ENTRY_KEYS:
                out.append(("error", f"{path}.{extra}", f"unknown key (known: {', '.join(PRICE_ENTRY_KEYS)})",
                            "remove it"))
        usd = entry.get("USD")
        if isinstance(usd, bool) or not isinstance(usd, (int, float)) or not math.isfinite(usd) or usd < 0:
            out.append(("error", f"{path}.USD" if isinstance(value, dict) else path,
                        f"{usd!r} is not a price (a finite number of 0 or more USD)",
                        f"set it with dpu-designer cost FILE --price {key}=USD --save"))
            continue
        known = True
        if kind in PART_KINDS:
            try:
                catalog.get(CATALOG_KIND.get(kind, kind), model)
            except KeyError:
                known = False
        elif kind == "cable":
            known = model in cable_types
        else:
            known = model.split(":")[0] in ("SR", "DR", "FR")
        if not known:
            out.append(("warning", path, f"no {kind} '{model}' in the catalog: the price is never used",
                        "check the model id (dpu-designer catalog) or remove the price"))
    site = costs_.get("site")
    if site is not None and not isinstance(site, dict):
        out.append(("error", "meta.costs.site", "must be an object of site figures", fix))
        site = None
    for key, value in (site or {}).items():
        if key not in SITE_LIMITS:
            out.append(("error", f"meta.costs.site.{key}", f"unknown key (known: {', '.join(SITE_LIMITS)})",
                        "remove it"))
            continue
        problem = site_problem(str(key), value)
        if problem:
            out.append(("error", f"meta.costs.site.{key}", f"{value!r}: {problem}",
                        "set it in the app's inspector (nothing selected: Site figures) or with "
                        "dpu-designer cost FILE --save and its option, or remove it"))
    return out
