"""Issue #23: the canvas after a run must not cry wolf. A 64-server rail design with a
non-blocking fabric: its rail cables are full only while the gradient all-reduce runs, a fifth
of the step, so coloured by their utilization averaged over the iteration fewer than one in ten
is in the top colour band; the busiest phase's figures are the second view (the key switches);
nothing is outlined as a bottleneck that the engine does not name."""

import pytest
from PySide6.QtCore import QPointF, Qt

from designer.engine.pipeline import run
from designer.gui.cables import util_bin
from designer.gui.items import UTIL_COLORS
from designer.gui.runview import bottleneck_marks
from designer.gui.testing import open_window
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

TOP = len(UTIL_COLORS) - 1


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


@pytest.fixture(scope="module")
def ran():
    design = rail_optimized(servers=64, oversubscription=1.0)
    return design, run(design, load_catalog())


def test_mean_utilization_is_the_peak_times_the_share_of_the_step_its_phase_runs(ran):
    _, result = ran
    step = result.iteration_time_s
    # by hand from the collectives: seconds per iteration of each phase's transfers
    busy = {}
    for c in result.collectives:
        phase = c.name.split("_")[0]
        busy[phase] = busy.get(phase, 0.0) + c.time_s * c.calls_per_iteration
    mean = result.link_mean_utilization()
    assert len(mean) == len(result.links)
    for link, m in zip(result.links, mean.tolist()):
        share = min(1.0, busy[link.phase] / step) if link.phase in busy else 1.0
        assert m == pytest.approx(link.utilization * share)
        assert 0.0 <= m <= link.utilization
    # the premise of the issue: at their peak most cables are full, over the step they are not
    peak = result.links.utilization
    assert (peak >= 0.9).mean() > 0.5
    assert 0 < busy["dp"] / step < 0.5


def test_after_a_run_few_cables_are_in_the_top_band_and_only_named_ones_are_marked(qtbot, ran):
    design, result = ran
    w = open_window(qtbot, design.copy())
    scene, topo = w.scene, w.design.topology
    mean = dict(zip(result.links.ids, result.link_mean_utilization().tolist()))
    peak = {l.id: l.utilization for l in result.links}
    marked = bottleneck_marks(result, topo)
    scene.show_utilization(mean, marked, peak=peak)
    cables = list(scene.link_items.values())
    top = sum(c.style() == TOP for c in cables)
    assert top < 0.1 * len(cables), (top, len(cables))
    # outlined: only what the engine's bottleneck sentences name (here: no link at all)
    named = " ".join(result.bottlenecks)
    outlined = [lid for lid, c in scene.link_items.items() if c.marked]
    assert all(lid in named or any(e in named for e in (topo.links[lid].a, topo.links[lid].b))
               for lid in outlined)
    assert not any(item.marked for cid, item in scene.comp_items.items() if cid not in named)
    busiest = max(cables, key=lambda c: c.peak)
    tip = busiest.tooltip()
    assert "averaged over the iteration" in tip and "in its busiest phase" in tip and "100 %" in tip
    # the second view: the phase peak, as before; the key says which and switches on a click
    legend = w.view.legend
    assert legend.isVisible() and legend.view() == "mean"
    qtbot.mouseClick(legend, Qt.LeftButton, pos=legend.rect().center())
    assert scene.overlay_view == "peak" and legend.view() == "peak"
    assert sum(c.style() == TOP for c in cables) > 0.5 * len(cables)
    assert all(c.style() == util_bin(peak.get(c.lid, 0.0)) for c in cables)
    scene.set_overlay_view("mean")
    assert sum(c.style() == TOP for c in cables) == top
    with pytest.raises(ValueError):
        scene.set_overlay_view("busiest")
    # without the second view's figures the key is only a key
    scene.show_utilization(mean, marked)
    assert scene.overlay_peak is None and legend.testAttribute(Qt.WA_TransparentForMouseEvents)
    scene.show_utilization(None)
    assert not legend.isVisible() and all(c.util is None for c in cables)
