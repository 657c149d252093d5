"""The PDF report and the headless ``report`` command: pages, text read back with pypdf, PNGs."""

import re
import unicodedata

import pytest
from pypdf import PdfReader
from PySide6.QtCore import QSize
from PySide6.QtGui import QImage

from designer.cli import main
from designer.engine import pipeline
from designer.engine.compare import SCENARIO_SETTINGS
from designer.paths import resources_dir
from designer.report.build import SECTIONS, build_report
from designer.report.pdf import PdfDocument, write_pdf
from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.validation import Resolver, component_power_W

EXAMPLE = resources_dir() / "examples" / "example.json"


def _words(text: str) -> str:
    """pypdf separates words with tabs or newlines and keeps ligatures (ﬄ); compare plain text
    with single spaces."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text))


def non_white_share(path) -> float:
    img = QImage(str(path)).convertToFormat(QImage.Format_RGB32)
    step = 4
    total = busy = 0
    for y in range(0, img.height(), step):
        for x in range(0, img.width(), step):
            total += 1
            busy += (img.pixel(x, y) & 0xFFFFFF) != 0xFFFFFF
    return busy / total


@pytest.fixture(scope="module")
def encrypted_example():
    """The example design with in-flight encryption, so host-managed and DPU-offloaded differ."""
    design = fileformat.load(EXAMPLE)
    design.scenario["encryption"] = True
    return design


@pytest.fixture(scope="module")
def report(qapp, tmp_path_factory, encrypted_example):
    out = tmp_path_factory.mktemp("report")
    info = build_report(encrypted_example, load_catalog(), out / "r.pdf", png_dir=out / "png",
                        png_size=QSize(800, 500), date="2025-01-31")
    reader = PdfReader(str(info.pdf))
    pages = [_words(p.extract_text()) for p in reader.pages]
    return info, pages


def test_every_section_starts_a_page_in_order_and_the_footer_counts_pages(report):
    info, pages = report
    assert len(pages) == info.pages >= len(SECTIONS)
    for n, text in enumerate(pages, 1):
        assert f"Page {n} of {len(pages)}" in text
    starts = {}
    for title in SECTIONS[1:]:
        found = [n for n, text in enumerate(pages, 1) if text.lstrip().startswith(title)]
        assert found, f"no page starts with '{title}'"
        starts[title] = found[0]
    assert list(starts.values()) == sorted(starts.values())
    # the contents on the title page give the same page numbers
    for title, page in starts.items():
        assert re.search(rf"{re.escape(title)} {page}\b", pages[0]), title


def test_text_holds_name_training_time_and_the_engines_comparison(report, encrypted_example):
    _, pages = report
    text = " ".join(pages)
    assert encrypted_example.name in pages[0]
    assert "2025-01-31" in pages[0]
    catalog = load_catalog()
    res = {s: pipeline.run(encrypted_example, catalog, scenario=dict(SCENARIO_SETTINGS[s])).to_json()
           for s in ("host", "smartnic", "dpu")}
    assert res["host"]["iteration_time_s"] != res["dpu"]["iteration_time_s"]
    for s in ("host", "smartnic", "dpu"):
        assert f"{res[s]['training_time_days']:,.1f} days" in pages[0]
    comparison = next(p for p in pages if p.lstrip().startswith("Host vs SmartNIC vs DPU"))
    h, n, d = (res[s]["iteration_time_s"] for s in ("host", "smartnic", "dpu"))
    # Iteration time (s) | host | SmartNIC | DPU | DPU - host | change % | best
    row = re.search(r"Iteration time \(s\) (\S+) (\S+) (\S+) (\S+) (\S+?)(?: %)? ([A-Za-z, ]+?)(?= [A-Z][a-z]|$)",
                    comparison)
    assert row, comparison[:400]
    # the seconds at their one precision (services.style, as compare and the app print them);
    # DPU - host the difference of the shown figures ("equal" when they read the same)
    from designer.services.style import delta, figure, shown_value

    assert list(row.groups()[:3]) == [figure("seconds", v) for v in (h, n, d)]
    assert row.group(4).replace("\u2212", "-") == delta("seconds", h, d)
    if row.group(4) != "equal":
        assert float(row.group(5)) == pytest.approx(100 * (d - h) / h, abs=0.05)
    # Best: the modes whose shown figure is the fastest; "all equal" if all read the same
    it = {s: shown_value("seconds", res[s]["iteration_time_s"]) for s in ("host", "smartnic", "dpu")}
    best = [s for s in it if it[s] == min(it.values())]
    short = {"host": "Host", "smartnic": "SmartNIC", "dpu": "DPU"}
    assert row.group(6) == ("all equal" if len(best) == 3 else ", ".join(short[s] for s in best))
    hd, dd = res["host"]["training_time_days"], res["dpu"]["training_time_days"]
    if f"{hd:,.1f}" == f"{dd:,.1f}":  # equal as shown: said so, not "from 287.1 to 287.1 (-0.0)"
        assert f"leaves the steady-state training time at {hd:,.1f} days" in comparison
        assert f"{hd:,.1f} days to {dd:,.1f} days" not in comparison
    else:
        assert f"{hd:,.1f} days to {dd:,.1f} days" in comparison
    # every engine bottleneck is listed, in a planner's words (no "server group 0", no keys)
    from designer.report.names import planner_words

    for s in ("host", "dpu"):
        for b in res[s]["bottlenecks"]:
            assert _words(planner_words(b))[:40] in text
    assert "server group 0" not in text and "host_cpu_slowdown" not in text


def _figure(text: str) -> float:
    return float(text.replace(",", "").replace("\u2212", "-"))


def test_the_three_modes_power_cost_and_reasons(report):
    from designer.report.names import planner_words

    info, pages = report
    cmp = info.data.comparison
    page = next(p for p in pages if p.lstrip().startswith("Host vs SmartNIC vs DPU"))
    text = " ".join(pages)
    assert "Power and energy cost of the three modes" in page
    from designer.report.names import NO_TYPICAL, has_typical

    typical = has_typical(list(cmp.runs.values()))
    # no adapter has a typical figure: its column (all "-") is left out and the text says so
    assert typical or NO_TYPICAL in text
    for mode, label in (("host", "Host-managed"), ("smartnic", "SmartNIC-offloaded"), ("dpu", "DPU-offloaded")):
        row = re.search(rf"{label} " + r"(\S+) " * (7 if typical else 6) + "%", page)
        assert row, page[:800]
        groups = list(row.groups())
        if not typical:
            groups.insert(1, "-")
        m = cmp.modes[mode]
        # adapters at maxima, at typical power ("-": no adapter has a typical figure), cluster
        assert _figure(groups[0]) == pytest.approx(m["adapters_max_W"] / 1e3, rel=5e-3)
        energy = cmp.runs[mode].resources["energy"]
        if groups[1] == "-":
            assert energy.get("adapters_without_typical") and m["adapters_typical_W"] == m["adapters_max_W"]
        else:
            assert _figure(groups[1]) == pytest.approx(m["adapters_typical_W"] / 1e3, rel=5e-3)
        assert _figure(groups[2]) == pytest.approx(m["power_W"] / 1e3, rel=5e-3)
        assert _figure(groups[4]) == pytest.approx(m["energy_cost"], rel=5e-3, abs=0.5)
        assert _figure(groups[6]) == pytest.approx(100 * m["infra_fraction"], abs=0.05)
    # the DPU draws more than the ConnectX it replaces (catalog maxima): premise of the table
    assert cmp.modes["dpu"]["adapters_W"] > cmp.modes["smartnic"]["adapters_W"]
    assert "SmartNIC-offloaded vs host-managed" in text and "DPU-offloaded vs SmartNIC-offloaded" in text
    for key in ("smartnic_vs_host", "dpu_vs_smartnic"):
        for reason in cmp.mode_reasons[key]:
            assert _words(planner_words(reason))[:50] in text
    assert "Busiest adapter engine load" in page and "Busiest DPU engine" not in text
    # the timelines are the host-managed and DPU-offloaded runs, and the report says so
    assert "the SmartNIC-offloaded run appears in the tables" in _words(text)


def test_best_mode_needs_a_clear_lead_and_numbers():
    from designer.report.build import best_mode

    assert best_mode({"host": 10.0, "smartnic": 9.0, "dpu": 8.0}, True) == "DPU"
    assert best_mode({"host": 10.0, "smartnic": 9.0, "dpu": 8.0}, False) == "Host"
    assert best_mode({"host": 10.0, "smartnic": 8.0, "dpu": 8.0}, True) == "SmartNIC, DPU"     # a tie
    assert best_mode({"host": 10.0, "smartnic": 8.0, "dpu": 8.0005}, True) == "SmartNIC, DPU"  # within 0.1 %
    assert best_mode({"host": 10.0, "smartnic": 10.0, "dpu": 10.0}, True) == "all equal"
    assert best_mode({"host": 99.0, "smartnic": "–", "dpu": 98.0}, False) == "Host"  # no timeline
    assert best_mode({"host": 1.0, "smartnic": 2.0, "dpu": 3.0}, None) == ""
    assert "–" not in best_mode({"host": 1.0, "smartnic": 1.0, "dpu": 3.0}, True)
    assert best_mode({"host": "0.0 / 101.1", "smartnic": "x", "dpu": "y"}, True) == ""


def test_assumptions_list_catalog_figures_with_their_sources(report):
    _, pages = report
    text = " ".join(pages)
    catalog = load_catalog()
    bf3 = catalog.get("dpu", "bluefield-3")
    assert bf3["name"] in text
    assert catalog.source_of("dpu", "bluefield-3", "crypto_Gbps")[:50] in text
    assert catalog.costs("host_cpu")["aes_gcm_cycles_per_byte"]["source"][:50] in text


def test_bill_of_materials_totals_match_the_rack_power_rule(report, encrypted_example):
    info, pages = report
    topo = encrypted_example.topology
    res = Resolver(load_catalog())
    racked = [c for c in topo.components.values() if c.kind in ("gpu_server", "switch", "storage")]
    watts = sum(component_power_W(topo, c, res) for c in racked)
    bom = info.data.bom
    assert bom.power_kW == pytest.approx(watts / 1000)
    assert bom.count("gpu_server") == len(topo.servers())
    assert bom.count("gpu") == sum(int(res(s)["gpu_count"]) for s in topo.servers())
    bom_page = next(p for p in pages if p.lstrip().startswith("Bill of materials"))
    assert f"Total {bom.power_kW:.1f} {bom.rack_U}" in bom_page


def test_pngs_have_the_requested_size_and_are_not_blank(report):
    info, _ = report
    names = sorted(p.name for p in info.pngs)
    assert names == ["breakdown.png", "cpu-dpu-utilization.png", "gpu-utilization.png",
                     "topology.png"]
    for path in info.pngs:
        img = QImage(str(path))
        assert (img.width(), img.height()) == (800, 500), path.name
        assert non_white_share(path) > 0.01, path.name


def test_pdf_writer_breaks_pages_and_numbers_them(qapp, tmp_path):
    breaks = ["", ' style="page-break-before: always;"', ' style="page-break-before: always;"']
    html = "".join(f"<h1{b}>Part {i}</h1><p>text {i}</p>" for i, b in enumerate(breaks))
    long_table = "<table>" + "".join(f"<tr><td>row {i}</td></tr>" for i in range(300)) + "</table>"
    pages = write_pdf(PdfDocument("T", html + long_table), tmp_path / "t.pdf")
    reader = PdfReader(str(tmp_path / "t.pdf"))
    assert pages == len(reader.pages) > 3  # 300 rows do not fit the third page
    text = [_words(p.extract_text()) for p in reader.pages]
    assert [t.lstrip().startswith(f"Part {i}") for i, t in enumerate(text[:3])] == [True] * 3
    assert "row 299" in text[-1] and f"Page {pages} of {pages}" in text[-1]


def test_report_command_headless(qapp, tmp_path, capsys):
    out = tmp_path / "x.pdf"
    assert main(["report", str(EXAMPLE), "-o", str(out), "--png-dir", str(tmp_path / "p"),
                 "--png-size", "640x400"]) == 0
    assert len(PdfReader(str(out)).pages) >= len(SECTIONS)
    assert QImage(str(tmp_path / "p" / "topology.png")).size() == QSize(640, 400)
    assert f"{out}:" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["-o", "{tmp}/missing/x.pdf"], "does not exist"),
    (["-o", "{tmp}/x.txt"], "name the file .pdf"),
    (["-o", "{tmp}/x.pdf", "--png-size", "wide"], "WIDTHxHEIGHT"),
])
def test_report_command_bad_input_is_one_line(tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    assert main(["report", str(EXAMPLE), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_run_without_checkpoints_that_cannot_finish_is_reported_as_such(qapp, tmp_path):
    # checkpoints off: every failure restarts the 330-day run from zero; the report must not show
    # a wall time as if the run had ended, but say it does not finish and what to change
    design = fileformat.load(EXAMPLE)
    design.scenario["checkpoint_interval_s"] = 0
    info = build_report(design, load_catalog(), tmp_path / "r.pdf", date="2025-01-31")
    text = _words(" ".join(p.extract_text() for p in PdfReader(str(info.pdf)).pages))
    assert text.count("the run does not finish") == 2  # both scenarios
    assert "Write checkpoints more often (scenario checkpoint_interval_s)" in text
    assert "<b>" not in text
