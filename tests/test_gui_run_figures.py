"""The merged engine and cost figures in the app (issues #20-#25): the Engine results' Costs group,
adapter power and hidden time carry the CLI's names and values; the canvas overlay after a Run
shows the time-averaged utilization with a View-menu toggle to the busiest phase; the run view
keeps one EngineCache per document; a huge design name does not stall the window."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from designer.cli import main
from designer.commands.compare import format_table
from designer.commands.cost import format_costs
from designer.engine.compare import compare
from designer.gui.cables import util_bin
from designer.gui.items import UTIL_COLORS
from designer.gui.runview import bottleneck_marks, costs_of, engine_rows
from designer.gui.testing import open_window
from designer.topology import fileformat
from designer.topology.catalog import load_catalog

pytest.importorskip("pytestqt")

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "resources" / "examples" / "example.json"


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


@pytest.fixture(scope="module")
def example():
    design, catalog = fileformat.load(EXAMPLE), load_catalog()
    cmp = compare(design, catalog)
    return design, catalog, cmp, costs_of(design, catalog, cmp)


def _cli_values(text: str, label: str) -> list[str]:
    """The values of the CLI table line that starts with ``label`` (columns are right-aligned
    and separated by spaces; the values themselves hold none)."""
    line = next(l for l in text.splitlines() if l.strip().startswith(label + " ")
                and l.strip()[len(label):].startswith("  "))
    return line.strip()[len(label):].split()


def test_costs_group_has_the_cli_names_and_values(example):
    _design, _catalog, cmp, c = example
    assert c is not None
    rows = engine_rows(cmp, c)
    labels = [r.label for r in rows]
    start = labels.index("Costs (USD)")
    cli = format_costs(c, bill=False)  # what `dpu-designer compare` ends with
    figure_labels = [l for l in labels[start + 1:] if rows[labels.index(l)].values]
    assert "CapEx" in figure_labels and "TCO over the lifetime" in figure_labels
    assert "one training run (steady state)" in figure_labels
    for row in rows[start + 1:]:
        if row.values:
            assert list(row.values) == _cli_values(cli, row.label), row.label
    # the share of the CapEx on each price basis, as `dpu-designer cost` says it
    share = next(r.label for r in rows if r.label.startswith("CapEx of which "))
    full = format_costs(c)
    assert share[len("CapEx "):] in full and "assumed" in share
    # the paybacks, word for word
    for line in (l.strip()[2:] for l in cli.splitlines() if l.strip().startswith("- ")):
        assert line in labels


def test_power_rows_and_hidden_time_are_compares(example):
    _design, _catalog, cmp, _c = example
    rows = {r.label: r for r in engine_rows(cmp)}
    cli = format_table(cmp)
    # the CLI writes the app's row names with a small first letter, as all its rows
    for label in [l for l in rows if l.startswith("Adapter power (kW, ")]:
        assert list(rows[label].values) == _cli_values(cli, "a" + label[1:])
    cluster = [l for l in rows if l.startswith("Cluster power (kW, ")]
    assert len(cluster) == 1 and list(rows[cluster[0]].values) == _cli_values(cli, "c" + cluster[0][1:])
    # the DPU run's BlueFields draw more than the ConnectX of the other runs
    host, _nic, dpu = (float(v) for v in rows["Adapter power (kW, max)"].values)
    assert dpu > host > 0
    hidden = {d: [r.hidden_s.get(d, 0.0) for r in cmp.runs.values()] for d in ("tp", "cp", "ep", "pp", "dp")}
    shown = [d for d, v in hidden.items() if any(x > 0 for x in v)]
    assert shown, "the example hides some communication behind compute"
    for d in shown:
        row = rows[f"{d} hidden by overlap"]
        assert [float(v) for v in row.values] == pytest.approx(hidden[d], abs=5e-4)  # at ms, as compare
    for d in set(hidden) - set(shown):
        assert f"{d} hidden by overlap" not in rows


def test_engine_results_table_shows_the_costs_after_a_run(qtbot, tmp_path):
    window = open_window(qtbot)
    qtbot.waitUntil(lambda: window.run_view is not None, timeout=5000)
    view = window.run_view
    with qtbot.waitSignal(view.run_ended, timeout=60_000) as ended:
        window.actions_by_name["run"].trigger()
    assert ended.args == ["Done"]
    table = view.engine.table
    labels = [table.item(r, 0).text().strip() for r in range(table.rowCount()) if table.item(r, 0)]
    assert "Costs (USD)" in labels and "CapEx" in labels
    c = view.engine.costs
    row = labels.index("CapEx")
    from designer.services.cost import money
    assert [table.item(row, col).text() for col in (1, 2, 3)] == [money(m.capex_USD) for m in c.modes.values()]
    # the cache is the document's: a second Run reuses it, another design replaces it
    cache = view.cache
    assert cache._fabrics, "the run kept its fabric"
    with qtbot.waitSignal(view.run_ended, timeout=60_000):
        window.actions_by_name["run"].trigger()
    assert view.cache is cache
    window.set_document(fileformat.load(EXAMPLE), None)  # as File > Open does
    assert view.cache is not cache
    window.cancel_run()


def test_rail_design_overlay_after_run_is_the_mean_with_a_peak_toggle(qtbot, tmp_path):
    path = tmp_path / "rail.json"
    assert main(["new", "--template", "rail-optimized", "--servers", "64", "--dpu", "bluefield-3",
                 "-o", str(path)]) == 0
    window = open_window(qtbot, fileformat.load(path))
    qtbot.waitUntil(lambda: window.run_view is not None, timeout=5000)
    view, scene = window.run_view, window.scene
    results = []
    view.result_ready.connect(lambda h, d: results.append(h))
    with qtbot.waitSignal(view.run_ended, timeout=120_000) as ended:
        window.actions_by_name["run"].trigger()
    assert ended.args == ["Done"]
    host = results[-1]
    links = window.design.topology.links
    mean = dict(zip(host.links.ids, host.link_mean_utilization().tolist()))
    # the canvas shows the time-averaged figure: under 10 % of the cables in the top band
    shown = {lid: item.util for lid, item in scene.link_items.items() if lid in links}
    assert shown and all(shown[l] == pytest.approx(mean.get(l, 0.0)) for l in shown)
    top = sum(util_bin(u) == len(UTIL_COLORS) - 1 for u in shown.values())
    assert top < 0.1 * len(shown), f"{top} of {len(shown)} cables in the top colour band"
    # nothing is outlined as a bottleneck that the engine does not name
    assert scene._marked == bottleneck_marks(host, window.design.topology)
    # View > "Cable colours: busiest phase" switches to each cable's phase peak, and back
    action = window.actions_by_name["overlay_peak"]
    assert action.text().replace("&", "") == "Cable colours: busiest phase" and not action.isChecked()
    action.trigger()
    assert scene.overlay_view == "peak" and action.isChecked()
    peak = {l.id: l.utilization for l in host.links}
    assert all(scene.link_items[l].util == pytest.approx(peak.get(l, 0.0)) for l in shown)
    assert sum(util_bin(u) == len(UTIL_COLORS) - 1 for u in
               (scene.link_items[l].util for l in shown)) > top  # the phase peak is busier
    action.trigger()
    assert scene.overlay_view == "mean"
    scene.set_overlay_view("peak")  # the key's click: the menu's tick follows
    assert action.isChecked()
    window.cancel_run()


def test_canvas_key_says_link_utilization():
    from designer.gui.view import UtilizationLegend

    assert all(t.startswith("Link utilization") for t in UtilizationLegend.TITLE.values())


def test_a_five_megabyte_name_screenshots_in_under_20_s(tmp_path):
    design = fileformat.load(EXAMPLE)
    design.name = "n" * (5 * 1024 * 1024)
    path = tmp_path / "long.json"
    fileformat.save(design, path)
    out = tmp_path / "shot.png"
    env = {**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "designer.cli", str(path), "--screenshot", str(out)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.exists() and took < 20, took


def test_the_inspector_hint_caps_the_name(qtbot):
    from designer.gui.inspector import NAME_CHARS
    from PySide6.QtWidgets import QLabel

    design = fileformat.load(EXAMPLE)
    design.name = "x" * 10_000
    window = open_window(qtbot, design)
    window.inspector.show_ids([])
    hint = window.inspector.findChild(QLabel, "hint")
    assert "x" * NAME_CHARS + "…" in hint.text() and "x" * (NAME_CHARS + 1) not in hint.text()
    assert window.design.name == "x" * 10_000  # the document keeps it whole


def test_a_design_that_cannot_be_priced_says_why_in_the_engine_results(example):
    """A bad saved cost figure does not make the Costs group vanish: it holds the sentence
    `dpu-designer cost` prints (what, where, how to fix)."""
    design, catalog, cmp, _c = example
    d = fileformat.loads(fileformat.dumps(design))
    d.meta = {**(d.meta or {}), "costs": {"site": {"pue": 0.5}}}
    err = costs_of(d, catalog, cmp)
    assert isinstance(err, Exception)
    rows = engine_rows(cmp, err)
    labels = [r.label for r in rows]
    at = labels.index("Costs")
    assert rows[at].is_group
    assert rows[at + 1].note and "meta.costs.site.pue = 0.5: must be at least 1" in rows[at + 1].label
    assert not any(label.startswith("Costs (") for label in labels)
