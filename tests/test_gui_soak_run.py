"""Random edits, undo/redo, runs, cancels, overlay switches and selections on the real main window
(offscreen): no exception, the canvas shows the model, and no worker thread is left running.

The default mode (~300 actions) runs in CI; the long mode (10,000 actions) runs with --run-slow.
Seeds are fixed, so a failure replays.
"""

import gc
import random
import threading

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from designer.gui.editor import RefusedEdit
from designer.gui.testing import open_window, random_edit


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def running_qthreads() -> list[QThread]:
    return [o for o in gc.get_objects() if isinstance(o, QThread) and o.isRunning()]


def _step(rng: random.Random, w, qtbot) -> str:
    op = rng.choices(["edit", "undo", "redo", "run", "cancel", "overlay", "select", "wait"],
                     weights=[8, 2, 1, 2, 1, 1, 2, 1])[0]
    acts = w.actions_by_name
    if op == "edit":
        try:
            random_edit(rng, w)
        except RefusedEdit:
            pass
    elif op in ("undo", "redo", "run"):
        acts[op].trigger()
    elif op == "cancel":
        acts["cancel_run"].trigger()
        assert not w.run_view.is_running()
    elif op == "overlay":
        w.run_view.set_overlay(rng.choice(["host", "dpu", None]))
    elif op == "select":
        pool = list(w.design.topology.components) + list(w.design.topology.links)
        w.scene.select_ids(rng.sample(pool, min(len(pool), rng.randint(0, 2))))
    else:
        qtbot.wait(rng.choice([1, 5, 20]))
    QApplication.processEvents()
    return op


def soak(qtbot, actions: int, seed: int) -> None:
    threads_before = threading.active_count()
    w = open_window(qtbot)
    qtbot.waitUntil(lambda: w.run_view is not None, timeout=5000)
    rng = random.Random(seed)
    done = {}
    for i in range(actions):
        op = _step(rng, w, qtbot)
        done[op] = done.get(op, 0) + 1
        if i % 100 == 0:
            assert w.scene.component_ids() == set(w.design.topology.components)
            assert set(w.scene.link_items) == set(w.design.topology.links)
    assert done.get("run", 0) >= actions // 20 and done.get("edit", 0) >= actions // 3
    w.close()
    QApplication.processEvents()
    assert not w.run_view.is_running()
    assert running_qthreads() == []
    assert threading.active_count() == threads_before


def test_random_actions_with_runs(qtbot):
    soak(qtbot, 300, seed=8)


@pytest.mark.slow
def test_random_actions_with_runs_long(qtbot):
    soak(qtbot, 10_000, seed=80)
