"""The report's Costs section (issue #25) and its power and hidden-time rows (#21, #22): the same
names and values as ``dpu-designer cost`` / ``compare`` print."""

import re
import unicodedata

import pytest
from pypdf import PdfReader

from designer.commands.cost import format_costs
from designer.engine.compare import LABEL as RUN_LABEL
from designer.paths import resources_dir
from designer.report.build import build_report
from designer.services.cost import figure_rows, money, payback_lines
from designer.topology import fileformat
from designer.topology.catalog import load_catalog

EXAMPLE = resources_dir() / "examples" / "example.json"


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text))


@pytest.fixture(scope="module")
def report(qapp, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    info = build_report(fileformat.load(EXAMPLE), load_catalog(), out / "r.pdf", date="2025-01-31")
    pages = [_words(p.extract_text()) for p in PdfReader(str(info.pdf)).pages]
    return info, pages


def _section(pages: list[str], title: str, until: str) -> str:
    start = next(i for i, p in enumerate(pages) if p.lstrip().startswith(title))
    end = next(i for i, p in enumerate(pages) if p.lstrip().startswith(until))
    return " ".join(pages[start:end])


def test_costs_section_has_the_bill_the_tco_the_modes_and_the_paybacks(report):
    info, pages = report
    c = info.data.costs
    assert c is not None and c.bill.lines
    text = _section(pages, "Costs", "Bottlenecks")
    for line in c.bill.lines:  # each priced line with its basis
        assert re.search(rf"{re.escape(money(line.total_USD))} {re.escape(line.basis)}\b", text), line
    assert f"CapEx (as drawn) {money(c.bill.capex_USD)}" in text
    cli = format_costs(c)
    share = next(l.strip() for l in cli.splitlines() if l.strip().startswith("of which "))
    assert f"CapEx {share}" in text and "assumed" in share
    for label, values, _ in figure_rows(c):
        assert f"{label} {' '.join(values)}" in text, label
    for label in ("amortised CapEx / year", "energy / year (load x PUE)", "space / year", "support / year"):
        cli_values = next(l for l in cli.splitlines() if l.strip().startswith(label)).split()[-3:]
        assert f"{label} {' '.join(cli_values)}" in text, label
    for sentence in payback_lines(c, RUN_LABEL):
        assert _words(sentence) in text


def test_hidden_time_beside_the_breakdown(report):
    info, pages = report
    text = _section(pages, "Results", "Utilization over time")
    runs = info.data.comparison.runs
    dims = [d for d in ("tp", "cp", "ep", "pp", "dp") if any(r.hidden_s.get(d, 0) > 0 for r in runs.values())]
    assert dims
    for d in dims:
        assert f"{d} hidden by overlap" in text
