"""Timeline simulation: steady state, data loader, jitter, checkpoints, failures, CSV."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from designer.engine.timeline import (LLAMA3_FAILURES_PER_GPU_HOUR, MAX_SLOWDOWN, STATES, Samples,
                                      TimelineInputs, TimelineRun, expected_wall_s, inputs_for, simulate, write_csv)
from designer.errors import UsageError

DATA = Path(__file__).parent / "data"
DAY = 86400.0


def base(**kw):
    args = dict(iteration_s=10.0, tokens_per_iteration=1e6, token_budget=1e6 * 20000,
                n_gpus=1024, breakdown_s={"compute": 8.0, "tp_comm": 2.0},
                failure_rate_per_gpu_hour=0.0)
    args.update(kw)
    return TimelineInputs(**args)


@pytest.fixture(scope="module")
def example():
    from designer.paths import resources_dir
    from designer.topology.catalog import load_catalog
    from designer.topology.fileformat import load

    return load(resources_dir() / "examples" / "example.json"), load_catalog()


@pytest.mark.parametrize("scenario", ["host", "dpu"])
def test_mean_iteration_agrees_with_the_steady_state_engine(example, scenario):
    design, catalog = example
    result, inputs = inputs_for(design, catalog, scenario)
    quiet = inputs.with_(jitter_sigma=0.0, failure_rate_per_gpu_hour=0.0, checkpoint_interval_s=0.0)
    _, summary = simulate(quiet)
    assert summary.mean_iteration_s == pytest.approx(result.iteration_time_s, rel=0.02)
    # jitter on: the drawn stragglers have the engine's expected straggler wait on average
    _, jittery = simulate(inputs.with_(failure_rate_per_gpu_hour=0.0, checkpoint_interval_s=0.0))
    assert inputs.jitter_sigma > 0
    assert jittery.mean_iteration_s == pytest.approx(result.iteration_time_s, rel=0.02)
    assert summary.goodput == pytest.approx(1.0, abs=1e-6)


def test_slow_storage_stalls_each_step_by_the_missing_read_time():
    # each 10 s iteration reads 400 GB; at 20 GB/s they take 20 s to read
    inp = base(storage_read_GB_per_iteration=400.0, storage_read_achieved_GBps=20.0)
    _, summary = simulate(inp)
    assert summary.mean_iteration_s == pytest.approx(20.0, rel=0.02)
    assert summary.time_s["data_stall"] == pytest.approx(summary.wall_s / 2, rel=0.02)
    # storage faster than the demand: only the first batch is waited for
    _, fast = simulate(base(storage_read_GB_per_iteration=400.0, storage_read_achieved_GBps=80.0))
    assert fast.time_s["data_stall"] == pytest.approx(5.0)


@pytest.mark.parametrize("blocks", [200, 20000])  # exact draws (k <= 64) and the CLT path (k > 64)
def test_jitter_mean_matches_the_published_expected_maximum(blocks):
    ref = json.loads((DATA / "normal_max_expectation.json").read_text())["expected_max"]
    sigma, n = 0.05, 10
    inp = base(jitter_sigma=sigma, n_workers=n, token_budget=1e6 * 2_000_000)
    _, summary = simulate(inp, target_samples=blocks)
    assert summary.mean_iteration_s == pytest.approx(10.0 * (1 + sigma * ref[str(n)]), rel=2e-3)
    two = base(jitter_sigma=sigma, n_workers=2, token_budget=1e6 * 400_000)
    _, s2 = simulate(two, target_samples=blocks)
    assert s2.mean_iteration_s == pytest.approx(10.0 * (1 + sigma * ref["2"]), rel=2e-3)


def test_goodput_falls_as_the_failure_rate_rises():
    goodputs = []
    for rate in (0.0, 1e-6, 1e-5, 1e-4):
        inp = base(failure_rate_per_gpu_hour=rate, checkpoint_interval_s=1800.0,
                   checkpoint_write_s=30.0, token_budget=1e6 * 200_000)
        goodputs.append(simulate(inp, seed=3)[1].goodput)
    assert all(a > b for a, b in zip(goodputs, goodputs[1:])), goodputs
    # no failures: only the checkpoint writes are lost, 30 s per 1800 s of training
    assert goodputs[0] == pytest.approx(1800 / 1830, rel=0.01)


def test_waste_follows_youngs_first_order_model():
    # Young (1974): waste per unit time ~ W/C + lambda * (C/2 + R) for checkpoint interval C,
    # write time W, restart R and failure rate lambda (first order in lambda*C)
    C, W, R, n, rate = 3600.0, 60.0, 600.0, 8192, 2e-5
    lam = rate * n / 3600
    inp = base(n_gpus=n, failure_rate_per_gpu_hour=rate, checkpoint_interval_s=C,
               checkpoint_write_s=W, restart_s=R, token_budget=1e6 * 500_000)
    _, s = simulate(inp, seed=1)
    waste = 1 - s.goodput
    assert waste == pytest.approx(W / C + lam * (C / 2 + R), rel=0.15)


def test_llama3_default_rate_gives_the_reported_interruptions():
    # 16,384 GPUs running 54 days (restarts excluded): 419 interruptions expected
    inp = base(n_gpus=16384, failure_rate_per_gpu_hour=LLAMA3_FAILURES_PER_GPU_HOUR,
               restart_s=60.0, checkpoint_interval_s=3600.0, checkpoint_write_s=10.0,
               iteration_s=20.0, token_budget=1e6 * 54 * DAY / 20 * 0.8)
    counts = []
    for seed in range(3):
        _, s = simulate(inp, seed=seed)
        running = s.wall_s - s.time_s["restart"]
        counts.append(s.failures / (running / (54 * DAY)))
    mean = float(np.mean(counts))
    assert abs(mean - 419) < 4 * math.sqrt(419 / 3)


def test_time_accounting_and_samples():
    inp = base(failure_rate_per_gpu_hour=5e-5, checkpoint_interval_s=3600.0, checkpoint_write_s=60.0,
               storage_read_GB_per_iteration=100.0, storage_read_achieved_GBps=30.0, jitter_sigma=0.02,
               n_workers=128, host_cpu_util=0.4, dpu_util=0.3, network_GB_per_iteration=50.0,
               checkpoint_GB=500.0, token_budget=1e6 * 100_000)
    samples, s = simulate(inp, seed=7)
    assert sum(s.time_s.values()) == pytest.approx(s.wall_s, rel=1e-9)
    assert s.goodput == pytest.approx(s.time_s["useful"] / s.wall_s)
    assert s.failures > 0 and s.checkpoints > 0
    assert s.iterations_run > s.iterations == 100_000
    t, dt = samples["t_s"], samples["dt_s"]
    assert np.all(np.diff(t) > 0) and t[-1] == pytest.approx(s.wall_s)
    assert np.allclose(np.diff(t), dt[1:])
    assert samples["tokens"][-1] >= inp.token_budget
    state = samples["state"].astype(int)
    restarts = state == STATES.index("restart")
    assert restarts.sum() == s.failures
    assert np.all(samples["gpu_util"][restarts] == 0) and np.all(samples["host_cpu_util"][restarts] == 0)
    training = state == 0
    assert np.all((samples["gpu_util"][training] > 0) & (samples["gpu_util"][training] <= 0.8 + 1e-9))
    ckpt = state == STATES.index("checkpoint")
    assert np.all(samples["storage_write_GBps"][ckpt] > 0)
    # a failure throws the progress back to the last checkpoint
    tokens = samples["tokens"]
    drops = np.flatnonzero(np.diff(tokens) < 0)
    assert len(drops) > 0


def test_a_60_day_run_at_16k_gpus_gives_at_least_10000_samples():
    inp = base(n_gpus=16384, iteration_s=8.0, token_budget=1e6 * 60 * DAY / 8,
               failure_rate_per_gpu_hour=LLAMA3_FAILURES_PER_GPU_HOUR, checkpoint_interval_s=3600,
               checkpoint_write_s=60, jitter_sigma=0.01, n_workers=16384)
    samples, s = simulate(inp)
    assert len(samples) >= 10_000
    assert s.wall_s > 60 * DAY


def test_same_seed_same_run_and_batches_stream_progress():
    inp = base(failure_rate_per_gpu_hour=2e-5, jitter_sigma=0.03, n_workers=64,
               checkpoint_interval_s=3600, checkpoint_write_s=20)
    a, _ = simulate(inp, seed=5)
    b, _ = simulate(inp, seed=5)
    c, _ = simulate(inp, seed=6)
    assert np.array_equal(a.data, b.data, equal_nan=True)
    assert not np.array_equal(a.data, c.data, equal_nan=True)
    run = TimelineRun(inp, batch_rows=100)
    seen = []
    for batch in run.batches():
        assert len(batch) <= 102  # a block can add a checkpoint or restart row past the limit
        seen.append(run.progress)
        assert run.summary is None
    assert len(seen) > 5 and all(0 < p <= 1 for p in seen) and seen[0] < 0.5
    assert run.summary is not None and run.progress == 1.0


@pytest.mark.parametrize("field,value,words", [
    ("iteration_s", 0.0, "iteration_s: must be greater than 0"),
    ("token_budget", -1.0, "token_budget"),
    ("jitter_sigma", float("nan"), "jitter_sigma: must be a finite number"),
    ("storage_read_GB_per_iteration", 5.0, "storage_read_achieved_GBps"),
])
def test_bad_inputs_are_named(field, value, words):
    with pytest.raises(UsageError, match=words):
        base(**{field: value})


def test_csv_has_the_columns_and_every_row(tmp_path):
    inp = base(failure_rate_per_gpu_hour=1e-4, checkpoint_interval_s=3600, checkpoint_write_s=20)
    run = TimelineRun(inp, batch_rows=500)
    out = tmp_path / "timeline.csv"
    n = write_csv(run.batches(), str(out))
    rows = list(csv.DictReader(out.open()))
    assert n == len(rows) > 1000
    assert {r["state"] for r in rows} == {"training", "checkpoint", "restart"}
    restart = next(r for r in rows if r["state"] == "restart")
    assert restart["iteration_s"] == "" and float(restart["dt_s"]) == pytest.approx(600)
    with pytest.raises(UsageError, match="timeline .*t.csv: the folder .*missing does not exist"):
        write_csv(simulate(base())[0], str(tmp_path / "missing" / "t.csv"))


def test_csv_is_streamed_in_bounded_memory(tmp_path):
    """The writer holds one batch at a time: writing 2.4 MB of rows from a generator peaks far below."""
    import tracemalloc

    batches, rows = 200, 128
    row = np.array([[1.5, 2.0, 0.5, 0.1, 0.2, 3.0, 4.0, 0.0, 1e9, 2.0, 1.0, 0.0]])

    def gen():
        for _ in range(batches):
            yield Samples(np.repeat(row, rows, axis=0))

    write_csv(Samples(row), str(tmp_path / "warm.csv"))  # imports done before measuring
    tracemalloc.start()
    try:
        n = write_csv(gen(), str(tmp_path / "big.csv"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    total = batches * rows * row.nbytes
    assert n == batches * rows
    assert peak < total / 4, (peak, total)  # holding every batch would need more than total
    with open(tmp_path / "big.csv") as fh:
        assert sum(1 for _ in fh) == n + 1


def test_rows_are_bounded_whatever_the_budget():
    """Checkpoints every 10 s and a budget of 1e12 iterations would ask for 4e11 blocks; the run is cut
    into about max_rows blocks instead, says so, and its time accounting still adds up."""
    inp = base(iteration_s=1.0, breakdown_s={"compute": 1.0}, token_budget=1e6 * 1e12,
               checkpoint_interval_s=10.0, checkpoint_write_s=1.0)
    run = TimelineRun(inp, max_rows=2000)
    samples = Samples.concat(list(run.batches()))
    s = run.summary
    assert len(samples) <= 2 * 2000 + 2
    assert "keep the timeline within 2,000 rows" in s.note and s.to_json()["note"] == s.note
    assert s.finished and s.iterations == 10 ** 12
    assert sum(s.time_s.values()) == pytest.approx(s.wall_s, rel=1e-9)
    # a normal run is not coarsened
    normal = TimelineRun(base(checkpoint_interval_s=3600.0, checkpoint_write_s=20.0))
    list(normal.batches())
    assert normal.summary.note == ""


def test_csv_refuses_its_input_and_keeps_the_old_file(tmp_path):
    out = tmp_path / "t.csv"
    out.write_text("old")
    with pytest.raises(UsageError, match="input file"):
        write_csv(simulate(base())[0], str(out), inputs=[str(out)])

    def broken():
        yield simulate(base())[0]
        raise RuntimeError("engine failed half-way")

    with pytest.raises(RuntimeError):
        write_csv(broken(), str(out))
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["t.csv"]


@pytest.mark.parametrize("interval", [0.0, 3600.0])
def test_wall_time_follows_the_closed_form_expectation(interval):
    # run length L = 20,000 x 10 s = 2.3 days; 1,024 GPUs at 2e-5 failures per GPU-hour fail
    # every ~49 h: without checkpoints a failure usually throws away a day or more of work
    inp = base(failure_rate_per_gpu_hour=2e-5, checkpoint_interval_s=interval,
               checkpoint_write_s=60.0 if interval else 0.0, restart_s=600.0)
    walls = [simulate(inp, seed=s)[1].wall_s for s in range(30)]
    expected = expected_wall_s(inp)
    free = expected_wall_s(inp.with_(failure_rate_per_gpu_hour=0.0))
    assert expected > free
    # the mean of 30 runs within 4 standard errors of the expectation
    assert abs(np.mean(walls) - expected) < 4 * np.std(walls) / math.sqrt(len(walls)) + 0.01 * expected


def test_a_run_that_cannot_finish_stops_with_the_reason():
    # 16,384 GPUs fail every ~3 h; 60 days without checkpoints restart from zero each time:
    # expected wall time e^(480) x 3 h. The simulation stops at MAX_SLOWDOWN x 60 days.
    inp = base(n_gpus=16384, failure_rate_per_gpu_hour=2e-5, checkpoint_interval_s=0.0,
               token_budget=1e6 * 60 * DAY / 10.0)
    run = TimelineRun(inp, seed=0, target_samples=5000)
    rows = sum(len(b) for b in run.batches())
    s = run.summary
    assert not s.finished and s.goodput == 0.0 and s.useful_s == 0.0
    assert s.wall_s == pytest.approx(MAX_SLOWDOWN * 60 * DAY, rel=0.01)
    assert s.expected_wall_s > 1e6 * s.wall_s
    # about target_samples blocks, plus the cut block and the restart of each failure
    assert rows <= 1.2 * 5000 + 2 * s.failures
    text = s.unfinished_text()
    assert "does not finish" in text and "checkpoint_interval_s" in text
    json.dumps(s.to_json(), allow_nan=True)
    # with hourly checkpoints the same run finishes, in about the failure-free time plus waste
    run = TimelineRun(inp.with_(checkpoint_interval_s=3600.0, checkpoint_write_s=30.0), seed=0)
    for _ in run.batches():
        pass
    assert run.summary.finished and run.summary.unfinished_text() == ""
    assert run.summary.wall_s < 1.5 * 60 * DAY


def test_a_run_failing_inside_every_block_stops_at_the_row_cap():
    """1e12 iterations in 500 blocks: every block outlasts the time between failures, so no work ever
    becomes safe; the run stops at the row cap (not at an astronomically far wall clock), says why,
    and yields its rows in batches all along (the failure path used to skip the batch flush)."""
    inp = base(iteration_s=1.0, breakdown_s={"compute": 1.0}, token_budget=1e6 * 1e12,
               checkpoint_interval_s=3600.0, checkpoint_write_s=10.0, failure_rate_per_gpu_hour=1e-3)
    run = TimelineRun(inp, max_rows=500, batch_rows=64)
    sizes = [len(b) for b in run.batches()]
    s = run.summary
    assert not s.finished and s.row_limited
    assert s.rows == sum(sizes) and 2 * 500 <= s.rows <= 2 * 500 + 2
    assert max(sizes) <= 64 + 2
    assert "stopped after" in s.unfinished_text() and "timeline rows" in s.unfinished_text()


# -- issue 23: tiny token budgets and counts no float holds -------------------------------------

@pytest.mark.parametrize("budget", [5e-324, 1e-300, 1e-9, 0.5, 4095.0])
@pytest.mark.parametrize("interval", [0.0, 1.0])
def test_a_token_budget_below_one_batch_is_one_iteration(budget, interval):
    """A budget of less than one global batch (4,096 tokens here) runs one step; it used to
    count 0 iterations, a run of no length, and divide by zero."""
    from designer.engine.timeline import TimelineInputs, simulate
    inp = TimelineInputs(iteration_s=2.0, tokens_per_iteration=4096.0, token_budget=budget,
                         checkpoint_interval_s=interval, checkpoint_write_s=1.0, n_gpus=8,
                         failure_rate_per_gpu_hour=0.0)
    assert inp.iterations == 1
    _, summary = simulate(inp)
    assert summary.iterations == summary.iterations_run == 1 and summary.finished
    assert summary.wall_s == pytest.approx(2.0) and summary.goodput == pytest.approx(1.0)


@pytest.mark.parametrize("fields,what", [
    ({"token_budget": 1e300, "tokens_per_iteration": 1.0}, "token_budget: .* iterations, more than"),
    ({"token_budget": 1.0, "tokens_per_iteration": 1e-300}, "token_budget: .* iterations, more than"),
    ({"iteration_s": 1e300, "token_budget": 1e10, "tokens_per_iteration": 1.0}, "iteration_s: .* longer than"),
    ({"checkpoint_interval_s": 5e-324}, "checkpoint_interval_s: .* more than 1e\\+15 intervals"),
])
def test_counts_beyond_a_float_are_refused_with_the_input_named(fields, what):
    from designer.engine.timeline import TimelineInputs
    base = dict(iteration_s=1.0, tokens_per_iteration=4096.0, token_budget=4096.0 * 100)
    with pytest.raises(UsageError, match=what):
        TimelineInputs(**{**base, **fields})


def test_a_tiny_iteration_with_checkpoints_makes_blocks_without_overflow():
    from designer.engine.timeline import TimelineInputs, TimelineRun
    run = TimelineRun(TimelineInputs(iteration_s=5e-324, tokens_per_iteration=1.0, token_budget=10.0,
                                     checkpoint_interval_s=1.0, checkpoint_write_s=1.0))
    assert run.block >= 1 and list(run.batches()) and run.summary.finished


# -- blocks longer than the checkpoint interval (the row limit made them so) ----------------------

def _long_blocks(mtbf_s: float, max_rows: int):
    from designer.engine.timeline import TimelineInputs, TimelineRun
    inp = TimelineInputs(iteration_s=1.0, tokens_per_iteration=1.0, token_budget=1e5, n_gpus=8,
                         checkpoint_interval_s=60.0, checkpoint_write_s=1.0, restart_s=10.0,
                         failure_rate_per_gpu_hour=3600 / (mtbf_s * 8))
    run = TimelineRun(inp, seed=1, max_rows=max_rows)
    rows = sum(len(b) for b in run.batches())
    return run, rows


def test_checkpoints_land_inside_blocks_longer_than_their_interval():
    """`run --tokens 1e20 --set scenario.checkpoint_interval_s=60 --timeline` gave goodput 0.0% and
    0 checkpoints: its blocks (kept within the row limit) were far longer than the interval and a
    checkpoint landed only at a block's end. Blocks of 1,000 one-second steps with a 60 s interval
    now write their checkpoints inside: the run comes to what blocks of 5 steps give (before:
    86 checkpoints, goodput 0.926, stopped at the row cap)."""
    coarse, rows = _long_blocks(5000.0, max_rows=100)
    fine, _ = _long_blocks(5000.0, max_rows=100_000)
    assert coarse.block == 1000 and fine.block == 5 and rows <= 200
    a, b = coarse.summary, fine.summary
    assert a.finished and a.failures == b.failures > 5
    assert a.checkpoints == pytest.approx(b.checkpoints, rel=0.01) and a.checkpoints > 1500
    assert a.goodput == pytest.approx(b.goodput, rel=0.005)
    assert a.time_s["lost"] / a.failures <= 61.0  # a failure loses at most one interval's work
    assert a.useful_s == pytest.approx(1e5)


def test_a_run_with_more_failures_than_rows_says_so_not_to_checkpoint_more():
    run, rows = _long_blocks(300.0, max_rows=100)
    s = run.summary
    assert rows == 200 and not s.finished and s.row_limited
    assert s.checkpoints > 300 and s.goodput > 0.8  # before: 2 checkpoints, goodput 0.066
    text = s.unfinished_text()
    assert "every failure and its restart take timeline rows" in text and "Lower the token budget" in text
    assert "keeps landing before the work is safe" not in text
