"""How a run ends, as a caller waiting on it sees it (designer/gui/runview.py): one ``run_ended``
per run whichever way it ends, after its results; and the engine-results table fits its rows to
the wrapped labels without a relayout loop."""

import pytest

pytest.importorskip("pytestqt")

from designer.engine.timeline import TimelineInputs  # noqa: E402
from designer.gui.runview import EngineResults  # noqa: E402


def _inputs(budget_iterations: float):
    common = dict(tokens_per_iteration=1e6, token_budget=1e6 * budget_iterations, n_gpus=64,
                  n_workers=64, checkpoint_interval_s=3600, checkpoint_write_s=30)
    return {"host": TimelineInputs(iteration_s=2.0, breakdown_s={"compute": 2.0}, **common),
            "dpu": TimelineInputs(iteration_s=1.8, breakdown_s={"compute": 1.8}, **common)}


def _ends(view):
    ended = []
    view.run_ended.connect(ended.append)
    return ended


def test_a_run_that_finishes_ends_once_with_done(run_view, qtbot):
    ended = _ends(run_view)
    with qtbot.waitSignal(run_view.run_ended, timeout=30_000) as blocker:
        run_view.run_inputs(_inputs(20_000), target_samples=500)
    assert blocker.args == ["Done"] and run_view.summaries.keys() == {"host", "dpu"}
    assert not run_view.is_running()
    qtbot.wait(50)
    assert ended == ["Done"]


def test_a_run_that_fails_ends_once_with_its_error(run_view, qtbot):
    from designer.topology.design import Design

    ended = _ends(run_view)
    run_view.set_design(Design(), None)
    with qtbot.waitSignal(run_view.run_ended, timeout=30_000) as blocker:
        run_view.run_design()
    assert blocker.args[0].startswith("Error: ") and blocker.args[0] == run_view.status.text()
    qtbot.wait(50)
    assert ended == blocker.args


def test_a_cancelled_run_ends_once_and_its_late_items_do_not_end_it_again(run_view, qtbot):
    import time

    from designer.gui.runview import timeline_stream

    def endless(inputs, **kw):
        """The timeline's first items, then steps that never finish the run by themselves (a real
        run of the machine's speed may end before the test cancels it: then it must end Done)."""
        for item in timeline_stream(inputs, **kw):
            yield item
            if item[0] == "samples":
                break
        while True:
            time.sleep(0.005)
            yield ("engine", "host")

    ended = _ends(run_view)
    run_view._start(endless, _inputs(5_000_000), target_samples=400_000, batch_rows=64)
    qtbot.waitUntil(lambda: run_view.plots.points("host") > 0, timeout=10_000)
    assert run_view.is_running() and ended == []
    run_view.cancel(wait=True)
    assert ended == ["Cancelled"]
    qtbot.wait(100)  # the cancelled worker's last queued signals arrive: ignored
    assert ended == ["Cancelled"] and run_view.status.text() == "Cancelled"


def test_the_label_rewrap_settles_at_every_width(qtbot):
    """A label-column resize schedules one rewrap of the rows; the rewrap's own effect (the
    scroll bar shown or hidden, the column resized back and forth) never starts an endless
    chain: after the events settle, nothing more is fitted, at any size of the view."""
    from designer.engine.compare import compare
    from designer.gui.mainwindow import example_path
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog

    cmp = compare(fileformat.load(example_path()), load_catalog())
    view = EngineResults()
    qtbot.addWidget(view)
    view.show()
    view.show_comparison(cmp)
    for width, height in ((900, 400), (420, 180), (300, 600), (1300, 120), (520, 260)):
        view.resize(width, height)
        qtbot.wait(20)
        settled = view.rewraps
        label = view.table.columnWidth(0)
        for _ in range(20):
            qtbot.wait(5)
        assert view.rewraps == settled and view.table.columnWidth(0) == label, (width, height)
        # the rows fit the labels at this width: a fresh fit changes no row's height
        heights = [view.table.rowHeight(r) for r in range(view.table.rowCount())]
        view.table.resizeRowsToContents()
        assert [view.table.rowHeight(r) for r in range(view.table.rowCount())] == heights
    # a resize of the label column schedules one rewrap, however many resizes come at once
    before = view.rewraps
    view._fitted_widths.clear()
    for delta in range(1, 6):
        view.table.horizontalHeader().sectionResized.emit(0, 100, 100 + delta)
    qtbot.wait(20)
    assert view.rewraps == before + 1
