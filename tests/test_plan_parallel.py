"""Issue #25: the layout plan's engine runs on all local cores or on a Dask cluster
(designer.engine.plan "Where the engine runs", designer.services.planning.runner), the same
ranking whatever runs them."""

import json

import pytest

from designer import cli
from designer.engine import plan
from designer.services import planning
from designer.topology import templates
from designer.topology.catalog import load_catalog

CAT = load_catalog()


def small():
    d = templates.rail_optimized(servers=2, storage="none")
    d.workload = {"preset": "megatron-gpt-1.7b", "dp": 0, "gpus": 0, "global_batch": 64, "micro_batch": 1}
    return d


def _plan_json(capsys, path, *extra):
    assert cli.main(["plan", str(path), "--json", "--top", "4", "--evaluate", "3", *extra]) == 0
    data = json.loads(capsys.readouterr().out)
    data.pop("seconds")  # wall time: the one figure that may differ
    return data


def test_one_and_two_workers_print_the_same_plan(tmp_path, capsys):
    from designer.topology.fileformat import save

    path = tmp_path / "d.json"
    save(small(), str(path))
    one = _plan_json(capsys, path, "--workers", "1")
    two = _plan_json(capsys, path, "--workers", "2")
    assert one == two
    assert one["evaluated"] >= 3 and one["layouts"][0]["iteration_time_s"] > 0


class Recording:
    """A runner that answers every round in reverse order and records the rounds it got."""

    def __init__(self):
        self.rounds = []

    def __call__(self, func, items, shared):
        self.rounds.append(len(items))
        answers = [(i, func(item, shared)) for i, item in enumerate(items)]
        return iter(answers[::-1])


def test_the_order_answers_arrive_in_changes_nothing_and_there_are_two_rounds_at_most():
    rec = Recording()
    backwards = plan.search(small(), CAT, top=3, evaluate=1, runner=rec)
    ahead = plan.search(small(), CAT, top=3, evaluate=1)
    a, b = backwards.to_json(), ahead.to_json()
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    assert 1 <= len(rec.rounds) <= 2 and sum(rec.rounds) == len(backwards.ranked)
    # the bound: after the second round no layout left out has an estimate below the best,
    # unless the run cap (BOUND_RUNS x evaluated, plus the design's own) was reached
    cap = plan.BOUND_RUNS * 1 + (backwards.current is not None)
    assert backwards.unsettled == 0 or len(backwards.ranked) == cap


def test_engine_run_answers_a_refusal_as_an_error_not_a_traceback():
    from designer.topology.fileformat import to_dict

    d = small()
    base = {k: v for k, v in plan.workload_data(d, CAT).items() if k != "gpus"}
    shared = plan.Shared(to_dict(d), CAT, base, 0)
    try:
        bad = plan.engine_run({"tp": 1, "pp": 1, "dp": 7, "micro_batch": 1}, shared)  # 64 % 7
        good = plan.engine_run({"tp": 1, "pp": 1, "dp": 16, "micro_batch": 1}, shared)
    finally:
        plan._forget(shared.design)
    assert set(bad) == {"error"} and "global batch 64" in bad["error"]
    assert good["iteration_time_s"] > 0 and set(plan.RUN_FIGURES) <= set(good)


def test_the_plan_runs_on_a_dask_cluster_with_the_same_ranking():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_dask = planning.search(small(), CAT, top=3, evaluate=2, scheduler=client)
    local = planning.search(small(), CAT, top=3, evaluate=2, workers=1)
    a, b = on_dask.to_json(), local.to_json()
    a.pop("seconds"), b.pop("seconds")
    assert a == b


def test_progress_counts_the_engine_runs_as_they_finish():
    seen = []
    r = planning.search(small(), CAT, top=2, evaluate=2, workers=1,
                        progress=lambda stage, done, total: seen.append((stage, done, total)))
    engine = [(d, t) for s, d, t in seen if s == "engine"]
    assert engine[0] == (0, engine[0][1]) and engine[-1] == (len(r.ranked), len(r.ranked))
    assert all(0 <= d <= t for d, t in engine)


def test_workers_below_one_is_refused_in_one_line(capsys, tmp_path):
    from designer.topology.fileformat import save

    path = tmp_path / "d.json"
    save(small(), str(path))
    assert cli.main(["plan", str(path), "--workers", "0"]) != 0
    err = capsys.readouterr().err
    assert "whole number of at least 1" in err and err.count("\n") == 1
