"""The assumptions behind a report: every catalog figure the design uses, with its source (no Qt).

A design uses the catalog entries its components name, the GPU and CPU entries its servers name,
the workload entry it trains, and the engine's cost tables (``models/costs/*.toml``). Figures a
component overrides in its ``props`` are listed as set in the design.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from designer import paths
from designer.topology.design import Design
from designer.topology.kinds import CATALOG_KIND

_META = ("id", "name", "source", "sources", "kind")
#: catalog kinds in the order the report lists them
KIND_ORDER = ("workload", "server", "gpu", "cpu", "dpu", "nic", "switch", "storage", "rack")


@dataclass(frozen=True)
class Figure:
    name: str
    value: Any
    source: str


@dataclass(frozen=True)
class EntryFigures:
    """One catalog entry: its default source, and the figures whose source differs from it."""

    kind: str
    id: str
    name: str
    source: str
    figures: tuple[Figure, ...]  #: every figure, each with its own source

    @property
    def own_sources(self) -> tuple[Figure, ...]:
        return tuple(f for f in self.figures if f.source != self.source)


def used_entries(design: Design, catalog, workload_id: str | None = None) -> list[tuple[str, str]]:
    """``(catalog kind, id)`` of every catalog entry the design uses, in report order."""
    used: set[tuple[str, str]] = set()
    for comp in design.topology.components.values():
        if comp.model:
            used.add((CATALOG_KIND[comp.kind], comp.model))
        if comp.kind == "gpu_server":
            fig = catalog.resolve(comp)
            used.add(("gpu", fig["gpu_model"]))
            used.add(("cpu", fig["cpu_model"]))
    if workload_id:
        used.add(("workload", workload_id))
    return sorted(used, key=lambda kv: (KIND_ORDER.index(kv[0]), kv[1]))


def entry_figures(catalog, kind: str, id: str) -> EntryFigures:
    entry = catalog.get(kind, id)
    figures = tuple(Figure(k, v, catalog.source_of(kind, id, k))
                    for k, v in entry.items() if k not in _META)
    return EntryFigures(kind, id, entry["name"], entry.get("source", ""), figures)


def catalog_assumptions(design: Design, catalog, workload_id: str | None = None) -> list[EntryFigures]:
    return [entry_figures(catalog, k, i) for k, i in used_entries(design, catalog, workload_id)]


def design_overrides(design: Design) -> list[tuple[str, Figure]]:
    """``(component label, figure)`` for every figure a component sets itself (its ``props``)."""
    return [(comp.label, Figure(name, value, "set in the design"))
            for comp in design.topology.components.values()
            for name, value in sorted(comp.props.items())]


def cost_assumptions(catalog) -> list[tuple[str, Figure]]:
    """``(cost table, figure)`` for every figure of the engine's cost tables."""
    out = []
    for table in sorted(p.stem for p in (paths.models_dir() / "costs").glob("*.toml")):
        for name, item in catalog.costs(table).items():
            if isinstance(item, dict) and "value" in item:
                out.append((table, Figure(name, item["value"], item.get("source", ""))))
    return out
