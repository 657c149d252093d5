"""The report's title with a long design name, and the cluster power row named on its basis (the
name ``dpu-designer compare`` prints), in the comparison table and on the title page."""

import re

import pytest
from pypdf import PdfReader
from PySide6.QtCore import QSize

from designer.engine.compare import compare
from designer.paths import resources_dir
from designer.report.build import (NAME_WHOLE, TITLE_CHARS, build_report, comparison_rows, gather,
                                   title_name)
from designer.report.names import cluster_power_label
from designer.topology import fileformat
from designer.topology.catalog import load_catalog

EXAMPLE = resources_dir() / "examples" / "example.json"
LONG = ("Example cluster for the 2027 procurement round with BlueField-3 DPUs on every DGX H100 and a "
        "two-tier leaf-spine fabric on QM9700 switches, rail-optimised, with storage ") * 3


def _typical(design):
    """Every DPU with a typical power below its 150 W maximum, the energy on typical power."""
    for c in list(design.topology.components.values()):
        if c.kind == "dpu":
            design.topology.set_prop(c.id, "typical_power_W", 90.0)
    design.scenario["adapter_power"] = "typical"
    return design


def test_title_name_keeps_short_names_and_cuts_long_ones_at_a_word():
    assert title_name("Example: 8 x DGX H100") == "Example: 8 x DGX H100"
    cut = title_name(LONG)
    assert cut.endswith("…") and len(cut) <= TITLE_CHARS + 1
    assert LONG.startswith(cut[:-1]) and LONG[len(cut) - 1] in " ,"   # ends where a word ends
    no_spaces = "x" * 500
    assert title_name(no_spaces) == "x" * TITLE_CHARS + "…"


@pytest.mark.parametrize("typical", [False, True])
def test_the_comparison_names_the_cluster_power_as_compare_does(typical):
    catalog = load_catalog()
    design = fileformat.load(EXAMPLE)
    if typical:
        _typical(design)
    data = gather(design, catalog)
    rows = {label: values for label, values, _ in comparison_rows(data)}
    basis = "typical" if typical else "max"
    label = f"Cluster power (kW, {basis})"
    assert label in rows and not any(k.startswith("Power at training load") for k in rows)
    cmp = compare(design, catalog)
    for mode, value in rows[label].items():
        assert value == pytest.approx(cmp.runs[mode].power_W["total"] / 1e3)
    assert cluster_power_label([r.resources["energy"] for r in cmp.runs.values()]) == label


def test_report_with_a_long_name_and_typical_power(qapp, tmp_path):
    catalog = load_catalog()
    design = _typical(fileformat.load(EXAMPLE))
    design.name = LONG
    info = build_report(design, catalog, tmp_path / "r.pdf", png_size=QSize(400, 300), date="2026-12-04")
    pages = [re.sub(r"\s+", " ", p.extract_text()) for p in PdfReader(str(info.pdf)).pages]
    first = pages[0]
    assert title_name(LONG)[:60] in first and "Design name in full:" in first
    assert first.count("Example cluster for the 2027") >= 1 + 3  # title, then the whole name in small type
    assert len(LONG) < NAME_WHOLE
    # the footer: the title cut in the middle to leave room for the page number
    for n, text in enumerate(pages, 1):
        assert re.search(rf"Example cluster for the 2027 .*….* — design report Page {n} of {len(pages)}", text), text[-300:]
    # the title page and the comparison table name the cluster power alike, on the typical basis
    assert "Cluster power (kW, typical)" in first
    comparison = next(p for p in pages if p.lstrip().startswith("Host vs SmartNIC vs DPU"))
    assert "Cluster power (kW, typical)" in comparison and "Power at training load (kW)" not in comparison
