"""Canvas, plot and chart export to PNG/SVG, and the pure helpers of the report."""

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QImage

from designer.engine.timeline import COLUMNS, Samples
from designer.errors import UsageError
from designer.report.build import binned, delta_text
from designer.report.charts import Series, line_plot, nice_ticks, stacked_bars
from designer.report.export import (export_graphics_item, export_scene, export_widget, parse_size,
                                    save_picture)
from designer.report.remedies import BREAKDOWN_REMEDY, remedy
from designer.report.topology_picture import topology_scene
from designer.topology.catalog import load_catalog
from designer.topology.templates import leaf_spine
from tests.test_report import non_white_share


@pytest.fixture
def scene(qapp):
    design = leaf_spine(servers=4, dpu="bluefield-3", storage="none")
    from designer.gui.scene import DesignScene

    scene = topology_scene(design, load_catalog(), DesignScene)
    yield scene
    scene.clearSelection()
    qapp.processEvents()  # deliver the scene's queued signals while it is still alive


def test_canvas_png_has_the_requested_size_and_is_drawn(scene, tmp_path):
    path = export_scene(scene, tmp_path / "c.png", size=QSize(900, 300))
    assert QImage(str(path)).size() == QSize(900, 300)
    assert non_white_share(path) > 0.01


def test_canvas_svg_is_vector(scene, tmp_path):
    text = export_scene(scene, tmp_path / "c.svg").read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert text.count("<path") + text.count("<polyline") + text.count("<rect") > 10
    assert "<image" not in text


def test_selection_export_shows_only_the_selection_and_restores_the_scene(scene, tmp_path):
    server = next(c for c in scene.design.topology.servers())
    item = scene.comp_items[server.id]
    item.setSelected(True)
    visible_before = {i for i in scene.items() if i.isVisible()}
    path = export_scene(scene, tmp_path / "s.png", selection_only=True, scale=1.0)
    img = QImage(str(path))
    box = item.sceneBoundingRect()
    assert img.width() == round(box.width() + 40) and img.height() == round(box.height() + 40)
    assert {i for i in scene.items() if i.isVisible()} == visible_before
    assert item.isSelected()


def test_empty_selection_and_bad_names_are_clear_errors(scene, tmp_path):
    scene.clearSelection()
    with pytest.raises(UsageError, match="select components first"):
        export_scene(scene, tmp_path / "s.png", selection_only=True)
    with pytest.raises(UsageError, match=r"name the file \.png or \.svg"):
        export_scene(scene, tmp_path / "c.jpg")
    with pytest.raises(UsageError, match="WIDTHxHEIGHT"):
        parse_size("100")
    assert parse_size("640x480") == QSize(640, 480)
    with pytest.raises(UsageError, match="megapixels"):
        parse_size("20000x20000")  # 1.6 GB of image memory


def test_pictures_refuse_devices_and_keep_old_files(qapp, tmp_path, monkeypatch):
    """save_picture goes through designer.safeio: /dev/null stays a device, a failed write keeps
    the old file (Qt's own writers would not report a full disk)."""
    import errno
    import os
    import stat

    from designer.report.export import save_picture

    def paint(painter, target):
        painter.fillRect(target, Qt.red)

    link = tmp_path / "dev.png"
    link.symlink_to("/dev/null")
    with pytest.raises(UsageError, match="is a device"):
        save_picture(paint, QSize(32, 32), link)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and link.is_symlink()
    design = tmp_path / "d.svg"
    design.write_text("input")
    with pytest.raises(UsageError, match="input file"):
        save_picture(paint, QSize(32, 32), design, inputs=[design])
    old = tmp_path / "old.svg"
    old.write_text("old")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UsageError, match="disk full"):
        save_picture(paint, QSize(32, 32), old)
    assert old.read_text() == "old"


def test_plot_widget_and_plot_item_export(qapp, tmp_path):
    widget = pg.PlotWidget(background="w")
    widget.resize(400, 300)
    widget.plot([0, 1, 2, 3], [0, 3, 1, 2], pen=pg.mkPen("#0072B2", width=3))
    png = export_widget(widget, tmp_path / "p.png", size=QSize(800, 600))
    assert QImage(str(png)).size() == QSize(800, 600)
    assert non_white_share(png) > 0.005
    svg = export_widget(widget, tmp_path / "p.svg").read_text()
    assert "<path" in svg or "<polyline" in svg
    item = export_graphics_item(widget.getPlotItem(), tmp_path / "i.png", size=QSize(300, 200))
    assert QImage(str(item)).size() == QSize(300, 200)
    assert non_white_share(item) > 0.005


def test_charts_draw_at_any_size(qapp, tmp_path):
    bars = stacked_bars([("A", [("x", 1.0), ("y", 2.0)]), ("B", [("x", 0.5)])], title="t")
    lines = line_plot([Series("s", [0, 1, 2], [10, 50, 90])], title="u", x_label="d",
                      y_label="%", y_range=(0, 100))
    for chart, name in ((bars, "b.png"), (lines, "l.png")):
        path = save_picture(chart.paint, QSize(500, 700), tmp_path / name)
        assert QImage(str(path)).size() == QSize(500, 700)
        assert non_white_share(path) > 0.005


@pytest.mark.parametrize("lo, hi", [(0, 1), (0, 0.37), (3, 1234), (-5, 5), (0, 100)])
def test_nice_ticks_are_round_and_cover_the_range(lo, hi):
    ticks = nice_ticks(lo, hi)
    assert ticks[0] <= lo and ticks[-1] >= hi
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1, 2, 5)
    assert 3 <= len(ticks) <= 12


def test_binned_is_a_time_weighted_mean():
    data = np.zeros((3, len(COLUMNS)))
    col = {c: i for i, c in enumerate(COLUMNS)}
    # t_s is the end of each sample: [0,1) util 0, [1,4) util 1, [4,8) util 0.5
    data[:, col["t_s"]] = [1, 4, 8]
    data[:, col["dt_s"]] = [1, 3, 4]
    data[:, col["gpu_util"]] = [0, 1, 0.5]
    x, y = binned(Samples(data), "gpu_util", bins=1)
    assert y[0] == pytest.approx((0 * 1 + 1 * 3 + 0.5 * 4) / 8)
    assert x[0] == pytest.approx(4 / 86400)


def test_delta_text():
    assert delta_text(10.0, 8.0) == ("-2.00", "-20.0 %")
    assert delta_text(4.0, 5.0) == ("+1.00", "+25.0 %")
    assert delta_text(None, 5.0) == ("–", "–")


def test_remedies_follow_the_engines_sentences():
    assert "adaptive routing" in remedy("ECMP hash collisions on leaf uplinks (3 of 8 idle) limit x")
    assert remedy("TP all-reduces take 13% of the iteration (tp=8, inside servers)") \
        == BREAKDOWN_REMEDY["tp_comm"]
    # a saturated link that slows pipeline traffic is a link problem, not a pipeline one
    assert "saturated link" in remedy("link sw-1 → dpu-9 saturates and limits pipeline "
                                      "send/receive to 50% of NIC line rate")
    assert "DPUs" in remedy("host CPU on server group 0 (8 x host-managed): software AES-GCM")
    assert remedy("something the engine never says") == ""


def test_export_menu_lists_canvas_selection_each_plot_and_the_report(qapp):
    from PySide6.QtWidgets import QMainWindow

    from designer.gui.plots import LivePlots
    from designer.report.actions import _fill_plot_menu, install_export_menu

    window = QMainWindow()
    LivePlots(window)
    menu = install_export_menu(window, window.menuBar().addMenu("File"))
    labels = [a.text() for a in menu.actions() if a.text()]
    assert labels == ["&Canvas as PNG/SVG…", "&Selection as PNG/SVG…", "&Plot as PNG/SVG",
                      "PDF &report…"]
    plots = menu.actions()[2].menu()
    _fill_plot_menu(window, plots)
    assert "GPU utilization" in [a.text() for a in plots.actions()]
    assert len(plots.actions()) == 6
