"""The run view: a worker thread streams timeline samples into live plots; Cancel stops it."""

import pytest

pytest.importorskip("pytestqt")

from designer.engine.timeline import TimelineInputs  # noqa: E402
from designer.gui.runview import RunView  # noqa: E402


def long_inputs():
    common = dict(tokens_per_iteration=1e6, token_budget=1e6 * 5_000_000, n_gpus=4096,
                  jitter_sigma=0.01, n_workers=4096, checkpoint_interval_s=3600,
                  checkpoint_write_s=30)
    return {"host": TimelineInputs(iteration_s=2.0, breakdown_s={"compute": 1.5, "dp_exposed": 0.5},
                                   host_cpu_util=0.5, **common),
            "dpu": TimelineInputs(iteration_s=1.8, breakdown_s={"compute": 1.5, "dp_exposed": 0.3},
                                  host_cpu_util=0.2, dpu_util=0.4, **common)}


@pytest.fixture()
def view(run_view):
    return run_view


def test_samples_stream_in_and_cancel_stops_the_thread_within_a_second(view, qtbot):
    view.run_inputs(long_inputs(), target_samples=400_000, batch_rows=64)
    worker = view.worker
    qtbot.waitUntil(lambda: view.plots.points("host") > 500 and view.plots.points("dpu") > 500,
                    timeout=10_000)
    assert view.is_running() and view.cancel_button.isEnabled()
    qtbot.wait(100)  # the plot timer has drawn the streamed samples
    x, y = view.plots.curves[("dpu", "gpu_util")].getData()
    assert x is not None and len(x) > 0
    streamed = view.plots.points("host")
    view.cancel_button.click()
    qtbot.waitUntil(lambda: not worker.is_running(), timeout=1000)
    assert not view.is_running() and view.run_button.isEnabled()
    assert view.status.text() == "Cancelled"
    qtbot.wait(50)
    assert view.plots.points("host") < 400_000 and view.plots.points("host") >= streamed


def test_a_design_run_shows_both_scenarios_and_hands_results_to_the_canvas(view, qtbot):
    from designer.paths import resources_dir
    from designer.topology.catalog import load_catalog
    from designer.topology.fileformat import load

    view.set_design(load(resources_dir() / "examples" / "example.json"), load_catalog())
    with qtbot.waitSignal(view.result_ready, timeout=10_000) as ready, \
            qtbot.waitSignal(view.run_finished, timeout=30_000) as done:
        view.run_button.click()
    host, dpu = ready.args
    assert host.links and {l.id for l in host.links} == {l.id for l in dpu.links}
    assert set(done.args[0]) == {"host", "dpu"}
    qtbot.waitUntil(lambda: not view.is_running(), timeout=1000)
    assert not view.worker.is_running()
    assert view.progress.value() == 1000
    # breakdown: both scenarios' bars; overlay: both scenarios' curves on the same plots
    assert set(view.plots.breakdown) == {"host", "dpu"}
    heights = [b.opts["height"] for b in view.plots._bars]
    assert heights and all(len(h) == 2 and h[0] > 0 and h[1] > 0 for h in heights[:1])
    for name in ("gpu_util", "iteration_s", "tokens"):
        for s in ("host", "dpu"):
            x, y = view.plots.curves[(s, name)].getData()
            assert x is not None and len(x) > 100, (s, name)
    # summary: one row per scenario; column 1 is the goodput
    assert view.table.item(0, 1).text().endswith("%") and view.table.item(1, 1).text().endswith("%")


def test_closing_the_view_while_running_ends_the_thread(qtbot):
    v = RunView()
    qtbot.addWidget(v)
    v.run_inputs(long_inputs(), target_samples=400_000, batch_rows=64)
    worker = v.worker
    qtbot.waitUntil(lambda: v.plots.points("host") > 0, timeout=10_000)
    v.close()
    assert not worker.is_running()


def test_an_engine_error_is_shown_not_raised(view, qtbot):
    from designer.topology.design import Design

    view.set_design(Design(), None)
    view.run_design()
    qtbot.waitUntil(lambda: view.status.text().startswith("Error:"), timeout=5000)
    qtbot.waitUntil(lambda: not view.is_running(), timeout=1000)
    assert view.run_button.isEnabled()


def test_cancel_during_a_long_step_keeps_the_worker_until_it_ends(view, qtbot):
    import threading

    release, began = threading.Event(), threading.Event()

    def slow_step():  # an engine run cannot be interrupted between two yields
        began.set()
        release.wait(10)
        yield ("engine", "host")

    view._start(slow_step)
    worker = view.worker
    assert began.wait(10)  # the step runs in its thread (cancelling before it starts is another case)
    view.cancel()
    assert view.worker is None and view.run_button.isEnabled()
    assert view.busy() and worker.is_running()  # not dropped while its thread runs
    release.set()
    qtbot.waitUntil(lambda: not view.busy(), timeout=5000)
    assert not worker.is_running()


def test_closing_waits_for_a_cancelled_step(qtbot):
    import threading
    import time

    v = RunView()
    qtbot.addWidget(v)
    step_began, step_ended = threading.Event(), threading.Event()

    def slow_step():
        step_began.set()
        time.sleep(0.3)
        step_ended.set()
        yield ("engine", "host")

    v._start(slow_step)
    assert step_began.wait(10)  # a worker cancelled before its first step never starts it
    v.cancel()
    v.close()
    assert step_ended.is_set() and not v.busy()


def test_a_design_runs_with_its_scenario_seed(view, qtbot, monkeypatch):
    from designer.gui import runview
    from designer.topology.design import Design

    seeds = []

    def record(design, catalog, *, seed, cache=None):
        seeds.append(seed)
        yield ("engine", "host")

    monkeypatch.setattr(runview, "design_stream", record)
    design = Design()
    design.scenario["seed"] = 17
    view.set_design(design, None)
    view.run_design()
    qtbot.waitUntil(lambda: view.status.text() == "Done", timeout=5000)
    assert seeds == [17]


def test_a_run_that_cannot_finish_says_so_and_why(view, qtbot):
    # no checkpoints, 16,384 GPUs failing every ~3 h, 20 days of work: the run restarts from zero
    # at every failure and is stopped; the table and the status say it did not finish and why
    common = dict(tokens_per_iteration=1e6, token_budget=1e6 * 20 * 86400 / 2.0, n_gpus=16384,
                  failure_rate_per_gpu_hour=2e-5, checkpoint_interval_s=0.0)
    inputs = {"host": TimelineInputs(iteration_s=2.0, **common),
              "dpu": TimelineInputs(iteration_s=2.0, **common).with_(checkpoint_interval_s=3600.0,
                                                                      checkpoint_write_s=30.0)}
    with qtbot.waitSignal(view.run_finished, timeout=30_000) as done:
        view.run_inputs(inputs, target_samples=2000)
    summaries = done.args[0]
    assert not summaries["host"].finished and summaries["dpu"].finished
    assert "does not finish" in view.table.item(0, 0).text()
    assert "does not finish" not in view.table.item(1, 0).text()
    assert "checkpoint_interval_s" in view.table.item(0, 0).toolTip()
    assert "does not finish" in view.status.text() and "checkpoint" in view.status.text()
