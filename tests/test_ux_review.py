"""A buyer's engineer's review of the CLI, the app and the report (h9/ux): each finding with the
behaviour that fixes it."""

from __future__ import annotations

import re

import pytest

from designer.cli import main
from designer.paths import resources_dir

EXAMPLE = str(resources_dir() / "examples" / "example.json")


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv, flag", [
    (["cost", EXAMPLE, "--support-pct", "abc"], "--support-pct"),
    (["cost", EXAMPLE, "--pue", "abc"], "--pue"),
    (["cost", EXAMPLE, "--lifetime-years", "-3"], "--lifetime-years"),
    (["cost", EXAMPLE, "--price", "nic:connectx-7=abc"], "--price"),
    (["run", EXAMPLE, "--tp", "abc"], "--tp"),
    (["run", EXAMPLE, "--tokens", "-1"], "--tokens"),
    (["run", EXAMPLE, "--tflops-per-gpu", "x"], "--tflops-per-gpu"),
    (["plan", EXAMPLE, "--top", "x"], "--top"),
    (["collective", EXAMPLE, "--gpus", "x"], "--gpus"),
    (["collective", EXAMPLE, "--min", "abc"], "--min"),
    (["collective", EXAMPLE, "--max", "abc"], "--max"),
    (["report", EXAMPLE, "-o", "/tmp/never-written.pdf", "--png-size", "wide"], "--png-size"),
])
def test_a_bad_number_names_its_flag(capsys, argv, flag):
    line = _error(capsys, argv)
    assert flag in line, line


def test_payback_beyond_the_lifetime_says_so_instead_of_a_count_of_days():
    from designer.services.cost import Payback

    slow = Payback("host", "dpu", 80_000.0, 10_000.0, 2e-6, 1_466_067.0, 3.1)
    text = slow.text({"host": "host-managed", "dpu": "DPU-offloaded"}, lifetime_years=5)
    assert "does not pay back on GPU time within the 5-year lifetime" in text
    assert "days" not in text and "0.00%" not in text and "<0.01%" in text
    quick = Payback("host", "dpu", 80_000.0, 10_000.0, 0.05, 400.0, 3.1)
    assert "paid back after 400 days of training" in quick.text({}, lifetime_years=5)


def test_cost_prints_no_payback_longer_than_the_lifetime(capsys):
    assert main(["cost", EXAMPLE]) == 0
    out = capsys.readouterr().out
    backs = out[out.index("payback of the adapters"):]
    assert "1,466,067 days" not in backs and "within the 5-year lifetime" in backs


_INTERNAL = ("tp_comm", "pp_comm", "dp_exposed", "host_cpu_slowdown", "dpu_slowdown", "data_stall",
             "adapter arm engine", "adapter crypto engine", "adapter line engine", "adapter dram engine")


@pytest.mark.parametrize("command", ["run", "compare"])
def test_cli_tables_name_the_parts_as_the_app_does(capsys, command):
    from designer.services.style import PART_LABEL

    assert main([command, EXAMPLE]) == 0
    out = capsys.readouterr().out
    table = out[:out.index("bottlenecks")]
    assert not [w for w in _INTERNAL if w in table], table
    for label in ("Compute", "TP communication", "Stragglers", "Checkpoints"):
        assert f"  {label} " in table and label == PART_LABEL[{"Compute": "compute", "TP communication": "tp_comm",
                                                              "Stragglers": "straggler", "Checkpoints": "checkpoint"}[label]]
    if command == "compare":
        assert "Crypto engine (inline encryption) load" in table


def test_sweep_table_names_the_modes_and_prints_days_at_their_one_precision(capsys):
    assert main(["sweep", EXAMPLE, "--param", "global_batch", "--values", "512", "--workers", "1"]) == 0
    head, row = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()][:2]
    assert "smartnic" not in head and "dpu " not in head and "host days" not in head
    assert "SmartNIC days" in head and "DPU days" in head and "Host days" in head
    days = row.split()[1]
    assert days.count(".") == 1 and len(days.split(".")[1]) == 1, row  # ,.1f as run and the app


def test_a_difference_is_the_difference_of_the_shown_figures():
    from designer.services.style import all_equal, delta, figure

    assert delta("seconds", 6.935153, 6.935) == "equal"          # not -0.000153 beside 6.935
    assert delta("seconds", 1.0, 1.0016) == "+0.002"
    assert delta("days", 287.06, 287.05) == "equal" and delta("days", 287.0, 280.04) == "-7.0"
    assert delta("percent", 2.74, 0.0, " pts") == "-2.7 pts"
    assert figure("seconds", -0.0001) == "0.000" and figure("tokens_per_s", 604794.4) == "604,794"
    assert delta("seconds", None, 1.0) == "" and figure("days", float("nan")) == "–"
    assert all_equal("seconds", [6.9351, 6.9349]) and not all_equal("seconds", [6.935, 6.937])


def _compare_row(out: str, label: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if ln.startswith(label))
    return line[len(label):].split()


def test_compare_prints_no_delta_below_the_shown_precision(capsys):
    assert main(["compare", EXAMPLE]) == 0
    out = capsys.readouterr().out
    it = _compare_row(out, "iteration time (s)")
    assert it[:3] == ["6.935"] * 3 and it[3] == "equal", it    # was -0.000153 -0.0%
    straggler = _compare_row(out, "  Stragglers")
    assert straggler[3] == "equal", straggler                   # 0.2051 vs 0.2049: equal at ms
    days = _compare_row(out, "training time, steady state (days)")
    assert days[3] == "equal" and len(days[0].split(".")[1]) == 1  # was 287.06 / -0.01


def test_one_precision_per_fact_across_run_compare_sweep_and_the_app(capsys):
    from designer.engine.compare import compare
    from designer.gui.runview import engine_rows
    from designer.report.names import STEADY_DAYS
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    assert main(["run", EXAMPLE]) == 0
    run = capsys.readouterr().out
    assert main(["compare", EXAMPLE]) == 0
    cmp_out = capsys.readouterr().out
    assert main(["sweep", EXAMPLE, "--param", "workload.tokens", "--values", "15e12", "--workers", "1"]) == 0
    sweep = capsys.readouterr().out.splitlines()[1].split()
    rows = {r.label: r.values for r in engine_rows(compare(fileformat.load(EXAMPLE), load_catalog()))}

    run_line = {ln.strip().split("  ")[0]: ln for ln in run.splitlines() if ln.strip()}
    host_days = _compare_row(cmp_out, "training time, steady state (days)")[0]
    assert f"{host_days} days" in run_line["training time"]
    assert sweep[1] == host_days and rows[STEADY_DAYS][0] == host_days
    host_it = _compare_row(cmp_out, "iteration time (s)")[0]
    assert f"{host_it} s" in run_line["iteration time"] and rows["Iteration time (s)"][0] == host_it
    mfu = _compare_row(cmp_out, "MFU")[0]
    assert f"MFU {mfu}" in run and rows["MFU"][0] == mfu and sweep[2] == mfu
    tokens = run_line["tokens/s"].split()[-1]
    assert tokens == "604,794"  # not 6.048e+05
    tp = _compare_row(cmp_out, "  TP communication")[0]
    assert f"{tp} s" in run_line["TP communication"] and rows["TP communication"][0] == tp


def test_optimize_prints_days_at_their_one_precision(capsys):
    assert main(["optimize", "--workload", "llama3-8b", "--gpus", "64", "--server-models", "dgx-h100",
                 "--adapters", "nic", "--switches", "qm9700", "--oversubscription", "1", "--workers", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["#", "server"])
    cells = lines[head + 1].split()
    days = cells[lines[head].split().index("days")]
    assert len(days.split(".")[1]) == 1, lines[head + 1]


def test_plan_shows_each_distinct_layout_once(capsys):
    import json

    assert main(["plan", EXAMPLE, "--workers", "1", "--json"]) == 0
    layouts = json.loads(capsys.readouterr().out)["layouts"]
    figures = [(x["iteration_time_s"], x["memory_per_gpu_GB"], x["tokens_per_s"]) for x in layouts]
    assert len(set(figures)) == len(figures), figures                # no two rows alike
    assert len({json.dumps(x["layout"], sort_keys=True) for x in layouts}) == len(layouts)
    assert [x["rank"] for x in layouts] == sorted({x["rank"] for x in layouts})
    # the example's best has twins (cp4 dp16 mb2: the same tokens per GPU): named, not listed
    assert layouts[0]["same_figures"] and all("mb" in t for t in layouts[0]["same_figures"])


def test_plan_groups_a_layout_repeated_and_one_with_the_same_figures():
    from collections import Counter

    from designer.engine.plan import Candidate, PlanResult

    def cand(layout, t, mem=50.0):
        return Candidate(layout=layout, memory_GB=mem, state_GB=10.0, estimate_s=t, iteration_time_s=t,
                         mfu=0.5, tokens_per_s=1e5 / t, breakdown_s={"compute": t})

    base = {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "interleave": 1, "recompute": False}
    a = cand(base, 1.0)
    a_again = cand({**base, "cp": 1, "recompute_granularity": "full"}, 1.0)   # the same layout
    twin = cand({**base, "dp": 4, "cp": 2, "micro_batch": 2}, 1.0)            # the same figures
    b = cand({**base, "micro_batch": 2}, 1.1)
    plan = PlanResult(gpus=8, design_gpus=8, memory_cap_GB=80, workload="w", searched=4, fit=4,
                      ranked=[a, a_again, twin, b], top=5, dropped=Counter(), examples={})
    assert plan.shown == [a, b] and plan.alike(a) == [a_again, twin] and plan.rank(b) == 2


def test_power_rows_are_named_and_a_row_of_dashes_is_left_out(capsys):
    from designer.engine.compare import compare
    from designer.gui.runview import engine_rows
    from designer.report.names import NO_TYPICAL, power_rows
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    cmp = compare(fileformat.load(EXAMPLE), load_catalog())
    rows = power_rows(list(cmp.runs.values()))
    names = [label for label, _, _ in rows]
    assert names[0] == "Adapter power (kW, max)" and "Cluster power (kW, max)" in names
    # no row of dashes: the typical row is there only while some mode has a typical figure (the
    # ConnectX-7's 24.9 W in the host-managed and SmartNIC modes; the BlueField-3 has none)
    assert not any(all(v == "-" for v in values) for _, values, _ in rows)
    typical = [values for label, values, _ in rows if label == "Adapter power (kW, typical)"]
    assert all(any(v != "-" for v in values) for values in typical)
    app = engine_rows(cmp)
    # the app says "no typical figure published" exactly where the typical row is left out
    assert any(r.note and NO_TYPICAL in r.label.lower() for r in app) == (not typical)
    assert any(r.label == "Adapter power (kW, typical)" for r in app) == bool(typical)
    assert main(["compare", EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert "adapter power (kW, max)" in out
    assert ("adapter power (kW, typical)" in out) == bool(typical)
    assert "no typical figure for bluefield-3" in out  # the note names the adapters


def test_the_timeline_mean_iteration_is_the_steady_step_without_the_checkpoint_part():
    from designer.engine.pipeline import run
    from designer.engine.timeline import TimelineRun, inputs_of
    from designer.report.names import ITERATION, TIMELINE_ITERATION, iteration_note
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    design = fileformat.load(EXAMPLE)
    r = run(design, load_catalog())
    tl = TimelineRun(inputs_of(r, design), seed=0)
    for _ in tl.batches():
        pass
    mean, ckpt = tl.summary.mean_iteration_s, r.breakdown_s["checkpoint"]
    assert mean < r.iteration_time_s  # what the reviewer saw: not a faster run ...
    # ... but the steady step with the checkpoint writes spread over it, which the timeline counts apart
    assert mean + ckpt == pytest.approx(r.iteration_time_s, rel=2e-4)
    assert "checkpoint writes apart" in TIMELINE_ITERATION and TIMELINE_ITERATION != ITERATION
    note = iteration_note(r.iteration_time_s, ckpt, mean)
    assert "6.935 s" in note and "0.004 s" in note and "leaves them out" in note


def test_an_engine_load_above_100_percent_is_explained_everywhere(capsys):
    from designer.engine.compare import LABEL, compare
    from designer.gui.runview import engine_rows
    from designer.report.names import engine_load_notes
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    cmp = compare(fileformat.load(EXAMPLE), load_catalog())
    assert cmp.runs["dpu"].dpu["crypto"] > 1.0 and cmp.runs["dpu"].breakdown_s["dpu_slowdown"] == 0
    notes = engine_load_notes(cmp.runs, LABEL)
    assert len(notes) == 1 and "Crypto engine" in notes[0] and "175%" in notes[0]
    assert "1.75x as long" in notes[0] and "hidden by overlap (+0 s per iteration)" in notes[0]
    assert main(["compare", EXAMPLE]) == 0
    assert notes[0] in capsys.readouterr().out
    assert any(r.note and notes[0] in r.tip for r in engine_rows(cmp))
    # a run whose engine load costs time says how much
    slow = cmp.runs["dpu"].__class__(**{**cmp.runs["dpu"].__dict__,
                                       "breakdown_s": {**cmp.runs["dpu"].breakdown_s, "dpu_slowdown": 0.25}})
    assert "+0.250 s per iteration (Adapter over capacity)" in engine_load_notes({"dpu": slow}, LABEL)[0]


def test_cost_prints_its_bill_once_in_one_money_format(capsys):
    import re

    assert main(["cost", EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert out.count("bill of materials") == 1 and out.count("costs (USD)") == 1
    assert not re.search(r"\$\d+\.\d\dM", out)       # no "$2.02M" beside "$253,000"
    assert "$2,024,000" in out
    # --csv -: the bill on standard output as CSV only; the rest of the table on standard error
    assert main(["cost", EXAMPLE, "--csv", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("category,model,name,count") and "bill of materials" not in out + err
    assert "costs (USD)" in err and "costs (USD)" not in out and "site (TCO)" in err


def _laid_out_lines(qapp, html: str) -> dict[str, list[str]]:
    """Each text block of ``html`` laid out as the PDF lays it out (A4 at the PDF's resolution):
    block text -> its lines."""
    from PySide6.QtCore import QBuffer, QIODevice

    from designer.report import pdf

    buf = QBuffer()
    buf.open(QIODevice.WriteOnly)
    writer = pdf._writer(buf, "t", "t")
    doc = pdf._layout_once(html, pdf.PdfDocument("t", html), writer, pdf.page_geometry())
    doc.documentLayout().documentSize()
    out = {}
    block = doc.begin()
    while block.isValid():
        layout = block.layout()
        text = block.text()
        out[text] = [text[layout.lineAt(i).textStart():layout.lineAt(i).textStart() + layout.lineAt(i).textLength()]
                     for i in range(layout.lineCount())]
        block = block.next()
    return out


def test_source_tables_break_no_number_and_names_only_after_underscores(qapp):
    from designer.report.build import _assumptions, gather
    from designer.report.html import BREAK, STYLE
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    data = gather(fileformat.load(EXAMPLE), load_catalog())
    lines = _laid_out_lines(qapp, STYLE + _assumptions(data))
    numbers = [t for t in lines if re.fullmatch(r"[\d,.]+", t)]
    assert "0.00000500" in numbers and "0.000400" in numbers
    assert all(len(lines[t]) == 1 for t in numbers), {t: lines[t] for t in numbers if len(lines[t]) > 1}
    names = [t for t in lines if re.fullmatch(r"[a-z0-9_\u200b]+", t) and "_" in t]
    assert "checkpoint_serialize_cycles_per_byte".replace("_", "_" + BREAK) in names
    for t in names:  # a name wraps only where an underscore was
        assert all(ln.endswith(("_", "_" + BREAK)) for ln in lines[t][:-1]), lines[t]


def test_the_main_window_at_1600x1000_cuts_no_editor_off(qtbot, tmp_path):
    from PySide6.QtWidgets import QAbstractSpinBox, QScrollArea

    from designer.gui.app import render_png
    from designer.gui.mainwindow import PALETTE_WIDTH, MainWindow
    from designer.gui.scenario import ZERO_CHARS
    from designer.topology import fileformat

    w = MainWindow(fileformat.load(EXAMPLE), EXAMPLE)
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    render_png(w, str(tmp_path / "w.png"), inputs=[])  # lays the window out as --screenshot does
    w.autosaver.discard()
    for title in ("Workload and scenario", "Properties"):
        dock = w.docks[title]
        area = dock.widget() if isinstance(dock.widget(), QScrollArea) else dock.widget().findChild(QScrollArea)
        inner = area.widget()
        # the panel fits its dock's width: nothing is cut at the right nor scrolled sideways
        assert inner.minimumSizeHint().width() <= area.viewport().width(), title
        assert not area.horizontalScrollBar().isVisible(), title
    for spin in w.docks["Workload and scenario"].widget().findChildren(QAbstractSpinBox):
        assert len(spin.specialValueText()) <= ZERO_CHARS, spin.specialValueText()
    assert w.docks["Components"].width() >= PALETTE_WIDTH - 10


def test_a_change_that_rounds_to_zero_is_said_as_none(capsys):
    assert main(["compare", EXAMPLE]) == 0
    out = capsys.readouterr().out
    reason = next(ln for ln in out.splitlines() if ln.strip().startswith("- energy +"))
    assert "training time unchanged" in reason and "-0.0%" not in reason, reason


def test_the_breakdown_chart_labels_the_iteration_as_the_tables_do(qapp):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    from designer.report.build import breakdown_chart, gather
    from designer.services.style import figure
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    texts: list[str] = []

    class Recorder(QPainter):
        def drawText(self, *args):  # noqa: N802 - Qt's name
            texts.append(args[-1])
            return super().drawText(*args)

    data = gather(fileformat.load(EXAMPLE), load_catalog())
    chart = breakdown_chart(data)
    image = QImage(800, 600, QImage.Format_RGB32)
    painter = Recorder(image)
    chart.paint(painter, QRectF(0, 0, 800, 600))
    painter.end()
    it = figure("seconds", data.results["host"]["iteration_time_s"])
    assert f"{it} s" in texts, texts   # "6.935 s", as the tables; was "6.94 s"
