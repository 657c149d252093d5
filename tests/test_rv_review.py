"""Review of today's main as a cluster planner uses it (h9/rv): one number per fact across the
CLI, the app and the report, and hostile input. One test per finding, each failing before its fix."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
import pytest

from designer.cli import main
from designer.gui.testing import open_window
from designer.topology import fileformat
from designer.topology.management import management_ids, switches_text
from designer.topology.templates import rail_optimized


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def test_management_switches_counted_apart_in_the_app_as_new_counts_them(qtbot, tmp_path, capsys):
    """`new` said '123 switches + 76 management switches', the app's status bar and design summary
    '199 switches' for the same design: one count, one way of saying it."""
    design = rail_optimized(servers=16, management="oob")
    topo = design.topology
    mgmt = len(management_ids(topo))
    assert mgmt > 0
    fabric = len(topo.switches()) - mgmt
    text = switches_text(topo)
    assert text == f"{fabric:,} switches + {mgmt:,} management switch{'es' if mgmt != 1 else ''}"
    w = open_window(qtbot, design)
    assert text in w._counts.text()
    hint = " ".join(l.text() for l in w.inspector.findChildren(QLabel))
    assert text in hint and f"{len(topo.switches())} switches" not in hint
    path = tmp_path / "d.json"
    fileformat.save(design, path)
    main(["validate", str(path)])
    assert text in capsys.readouterr().out


def test_counts_have_thousands_separators():
    class Topo:  # 1,168 fabric and 608 management switches, as the 2,048-server rail design has
        def __init__(self):
            sw = type("C", (), {"kind": "switch"})
            self.components = {}
            for i in range(1776):
                c = sw()
                c.id, c.props = f"s{i}", ({"management": True} if i < 608 else {})
                self.components[c.id] = c

        def switches(self):
            return list(self.components.values())

    assert switches_text(Topo()) == "1,168 switches + 608 management switches"


def test_memory_energy_tflops_one_name_one_value_everywhere(tmp_path, capsys):
    """Memory per GPU was not in the sweep file (run, compare, the app and the report have it);
    the energy was 'Energy (MWh)' in the app, 'energy (MWh)' in compare, 'Energy of the run (MWh)'
    in the report; TFLOP/s 'Model TFLOP/s per GPU' in the report alone; compare's 'training time
    (days)' was the app's and the report's 'Training time, steady state (days)'."""
    import csv

    from designer.engine.compare import compare
    from designer.engine.sweep import METRICS
    from designer.gui.runview import engine_rows
    from designer.paths import resources_dir
    from designer.report.build import comparison_rows, gather
    from designer.report.names import ENERGY, STEADY_DAYS, TFLOPS
    from designer.services.style import figure
    from designer.topology.catalog import load_catalog

    example = resources_dir() / "examples" / "example.json"
    catalog = load_catalog()
    design = fileformat.load(example)
    cmp = compare(design, catalog)
    host = cmp.runs["host"]
    assert host.memory_per_gpu_GB and host.memory_per_gpu_GB > 1
    want = {ENERGY: ("MWh", host.energy_kwh / 1e3),
            TFLOPS: ("tflops", host.tflops_per_gpu), STEADY_DAYS: ("days", host.training_time_days)}
    app = {r.label: r.values for r in engine_rows(cmp)}
    report = {label: values for label, values, _ in comparison_rows(gather(design, catalog))}
    assert main(["compare", str(example)]) == 0
    text = capsys.readouterr().out.splitlines()
    for name, (fact, value) in want.items():
        shown = figure(fact, value)
        assert app[name][0].rstrip("%") == shown, name
        assert figure(fact, report[name]["host"]) == shown, name
        cname = name if name.startswith("TFLOP") else name[:1].lower() + name[1:]  # compare's case
        line = [l for l in text if l.startswith(cname + "  ")]
        assert len(line) == 1 and line[0].split()[len(name.split())] == shown, name
    out = tmp_path / "p.csv"
    assert main(["sweep", str(example), "--param", "servers", "--values", "8", "--workers", "1",
                 "--out", str(out)]) == 0
    with open(out, newline="") as fh:
        row = next(csv.DictReader(fh))
    assert {"energy_MWh", "memory_per_gpu_GB"} <= set(METRICS)
    assert figure("GB", float(row["host memory_per_gpu_GB"])) == figure("GB", host.memory_per_gpu_GB)
    assert figure("MWh", float(row["host energy_MWh"])) == figure("MWh", host.energy_kwh / 1e3)
    assert figure("days", float(row["host training_time_days"])) == figure("days", host.training_time_days)


def test_a_management_switch_cut_off_from_the_rest_is_a_warning(tmp_path, capsys):
    """Deleting a rack management switch's uplinks (or the aggregation's links) left its BMCs and
    DPU OOB ports unreachable, and validate said '0 errors, 0 warnings'."""
    from designer.topology.validation import validate

    design = rail_optimized(servers=16, management="oob")
    topo = design.topology
    assert not [p for p in validate(design) if p.code.startswith("management")]
    mgmt = management_ids(topo)
    # the rack switch with the fewest management-to-management links: cut those
    up = {m: [l for l in topo.links.values() if l.a in mgmt and l.b in mgmt and m in (l.a, l.b)]
          for m in mgmt}
    rack = min((m for m in mgmt if up[m]), key=lambda m: (len(up[m]), m))
    for link in up[rack]:
        del topo.links[link.id]
    split = [p for p in validate(design) if p.code == "management-split"]
    assert [p.component for p in split] == [rack]
    assert split[0].severity == "warning" and "cannot be reached" in split[0].message
    path = tmp_path / "d.json"
    fileformat.save(design, path)
    assert main(["validate", str(path)]) == 0  # warnings only
    out = capsys.readouterr().out
    assert f"warning: {rack}: management switch not linked to" in out and "Traceback" not in out


@pytest.mark.parametrize("param, close", [("global_bach", "global_batch"), ("scenario.tenant", "tenants"),
                                          ("bogus", None)])
def test_an_unknown_sweep_parameter_is_one_short_line(param, close, capsys):
    """'--param bogus' printed every workload and scenario name (1,100 characters, non-numeric
    scenario settings among them): now close matches and where the list is."""
    from designer.paths import resources_dir

    example = resources_dir() / "examples" / "example.json"
    assert main(["sweep", str(example), "--param", param, "--values", "1,2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --param {param}: ") and "\n" not in err and len(err) < 200
    assert "--list" in err and "Traceback" not in err
    assert (f"did you mean {close}?" in err) if close else "did you mean" not in err


def _sweep_dialog(qtbot):
    from designer.gui.sweepdialog import SweepDialog
    from designer.paths import resources_dir
    from designer.topology.catalog import load_catalog

    dlg = SweepDialog(load_catalog())
    qtbot.addWidget(dlg)
    dlg.workers = 1
    dlg.set_design(fileformat.load(resources_dir() / "examples" / "example.json"))
    return dlg


def test_sweep_dialog_key_under_the_plots_and_the_table_at_one_precision(qtbot):
    """A grid's six curve names were a key inside each plot covering the curves; the table gave
    days as 287.06 where run, compare, the app and the CLI sweep print 287.1."""
    from designer.services.style import figure

    dlg = _sweep_dialog(qtbot)
    dlg.param.setCurrentText("servers")
    dlg.values.setText("8")
    dlg.param2.setCurrentText("scenario.tenants")
    dlg.values2.setText("1,2")
    dlg.start()
    qtbot.waitUntil(lambda: dlg.status.text().startswith("Done"), timeout=120_000)
    plot = dlg.plot
    dlg.resize(900, 700)
    dlg.show()
    qtbot.waitExposed(dlg)
    qtbot.waitUntil(lambda: plot.legend.pos().y() > 0, timeout=5000)  # laid out below the plots
    assert plot.days.legend is None and plot.mfu.legend is None  # no key inside a plot
    names = [label.text for _, label in plot.legend.items]
    assert len(names) == 6 and "DPU-offloaded, scenario.tenants = 2" in names
    plot_rect = plot.days.vb.sceneBoundingRect()
    assert not plot.legend.sceneBoundingRect().intersects(plot_rect)
    row = dlg.result.rows[0]
    heads = [plot.table.horizontalHeaderItem(c).text() for c in range(plot.table.columnCount())]
    days = plot.table.item(0, heads.index("host-managed days")).text()
    assert days == figure("days", row["host"]["training_time_days"]) and days.count(".") == 1
    assert len(days.split(".")[1]) == 1
    dlg.cancel(wait=True)


def test_sweep_dialog_error_in_the_dialogs_words(qtbot):
    dlg = _sweep_dialog(qtbot)
    dlg.param.setCurrentText("global_bach")
    dlg.values.setText("1,2")
    dlg.start()
    qtbot.waitUntil(lambda: dlg.status.text().startswith("Error"), timeout=60_000)
    text = dlg.status.text()
    assert "did you mean global_batch?" in text and "the Parameter list offers" in text
    assert "--list" not in text and "sweep:" not in text and "--param" not in text
    dlg.cancel(wait=True)


@pytest.mark.parametrize("field, text, want", [
    ("oversub", "0.5", "Cannot search: Oversubscription: values must be 1 or more"),
    ("oversub", "1,x", "Cannot search: Oversubscription: '1,x': write numbers like 1, 2"),
    ("servers", "nope", "Cannot search: Server models: nope: not a catalog server"),
    ("out", "x.xlsx", "e.g. points.csv")])
def test_optimize_dialog_refuses_what_the_cli_refuses_in_its_words(qtbot, tmp_path, field, text, want):
    """The dialog ran a search at oversubscription 0.5 (the CLI refuses it), took '1,x' for 'no
    oversubscription chosen', and said '--server-models nope' and 'e.g. Write every design to
    points.csv'."""
    from designer.gui.optimize_dialog import OptimizeDialog

    w = open_window(qtbot)
    dlg = OptimizeDialog(w)
    qtbot.addWidget(dlg)
    dlg.workers.setValue(1)
    getattr(dlg, field).setText(str(tmp_path / text) if field == "out" else text)
    dlg.start()
    status = dlg.status.text()
    assert want in status and "--" not in status and dlg.search_button.isEnabled()
    assert not dlg.is_running()
    dlg.cancel(wait=True)


def test_optimize_dialog_cancel_keeps_the_front_found_so_far(qtbot):
    """Cancel after some designs had run left the table empty and the chart as last redrawn
    (up to a second old): nothing of the finished designs to open."""
    from designer.gui.optimize_dialog import OptimizeDialog

    w = open_window(qtbot)
    dlg = OptimizeDialog(w)
    qtbot.addWidget(dlg)
    dlg.workers.setValue(1)
    dlg.gpus.setValue(64)
    dlg.start()
    qtbot.waitUntil(lambda: dlg.chart.count >= 2, timeout=120_000)
    dlg.cancel()
    assert dlg.status.text().startswith("Cancel")
    front = dlg.chart.front.rows
    assert front and dlg.table.rowCount() == len(front)
    assert len(dlg.scatter["front"].getData()[0]) == len(front)
    dlg.cancel(wait=True)


def test_run_prints_the_token_budget_as_the_report_does(capsys):
    """run said '(1.5e+13 tokens)', the report 'Training tokens 15,000,000,000,000'."""
    from designer.paths import resources_dir

    assert main(["run", str(resources_dir() / "examples" / "example.json")]) == 0
    (line,) = [l for l in capsys.readouterr().out.splitlines() if l.startswith("training time")]
    assert "(15,000,000,000,000 tokens)" in line and "e+" not in line


def test_timeline_counts_named_and_separated_as_the_report():
    """The app's Timelines table said 'Checkpoints 6722' (the report: 'Checkpoints written
    6,722'; 'Checkpoints' alone is the iteration's part in seconds in Engine results)."""
    from types import SimpleNamespace

    from designer.gui.runview import _SUMMARY_ROWS

    rows = dict(_SUMMARY_ROWS)
    s = SimpleNamespace(failures=1234, checkpoints=6722)
    assert rows["Checkpoints written"](s) == "6,722" and rows["Failures"](s) == "1,234"
    assert "Checkpoints" not in rows


def test_report_priced_bill_heading_count_on_one_line(tmp_path):
    """The priced bill's 'Count' heading broke as 'Coun' / 't' (a 7 % column)."""
    import shutil
    import subprocess

    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext not installed")
    from designer.paths import resources_dir

    out = tmp_path / "r.pdf"
    assert main(["report", str(resources_dir() / "examples" / "example.json"), "-o", str(out)]) == 0
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True).stdout
    (head,) = [l for l in text.splitlines() if l.split()[:1] == ["Item"] and "Basis" in l]
    assert head.split()[:3] == ["Item", "Count", "Unit"]
