"""Sweeps: parameter paths, parallel runs with deterministic results, the CLI."""

import json

import pytest

from designer.cli import main
from designer.engine.compare import MODES
from designer.engine.sweep import METRICS, SCENARIOS, apply_param, parse_values
from designer.services.sweeping import stream, sweep, worker_count
from designer.errors import UsageError
from designer.paths import resources_dir
from designer.topology.fileformat import load

EXAMPLE = resources_dir() / "examples" / "example.json"


@pytest.fixture()
def design():
    return load(EXAMPLE)


def test_values_are_parsed_with_clear_errors():
    assert parse_values("16, 64,256") == [16, 64, 256]
    assert parse_values("0.5,2") == [0.5, 2]
    with pytest.raises(UsageError, match="'x' is not a number"):
        parse_values("16,x")


def test_parameters_change_a_copy_of_the_design(design):
    servers = len(design.topology.servers())
    new = apply_param(design, "servers", 16)
    assert len(new.topology.servers()) == 16 and len(design.topology.servers()) == servers
    assert new.workload == design.workload and new.meta["options"]["servers"] == 16
    batch = apply_param(design, "global_batch", 1024)
    assert batch.workload["global_batch"] == 1024 and design.workload["global_batch"] == 512
    tenants = apply_param(design, "scenario.tenants", 3)
    assert tenants.scenario["tenants"] == 3
    gpus = apply_param(design, "gpu_server.gpu_count", 4)
    assert {c.props.get("gpu_count") for c in gpus.topology.servers()} == {4}
    one = design.topology.servers()[0].id
    single = apply_param(design, f"{one}.gpu_count", 4)
    assert [c.props.get("gpu_count") for c in single.topology.servers()].count(4) == 1


@pytest.mark.parametrize("param,words", [
    ("nonsense.field", "neither a component id nor a kind"),
    ("gpu_server.gpu_model", "not numeric"),
    ("switch.speed", "a switch has no field 'speed'"),
    ("scenario.routing", "not numeric"),
    ("global_bach", "'global_bach' is not a numeric workload setting"),
    ("workload.precision", "not a numeric workload setting"),
    ("scenario.tenant", "unknown scenario setting 'tenant'"),
])
def test_bad_parameters_say_what_is_wrong(design, param, words):
    with pytest.raises(UsageError, match=words):
        apply_param(design, param, 2)


def test_same_results_on_one_worker_a_pool_of_two_and_dask(design):
    """Issue #25: same seed, same results whatever the worker count or executor; rows come back
    in value order even when points finish out of order."""
    from distributed import Client, LocalCluster

    values = [16, 4, 8]
    seen = []
    serial = sweep(design, "servers", values, workers=1, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    pooled = sweep(design, "servers", values, workers=2)
    with LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        dask = sweep(design, "servers", values, scheduler=client)
    assert serial.to_json() == pooled.to_json() == dask.to_json()
    assert list(serial.values) == values
    assert serial.rows[0]["host"]["training_time_days"] < serial.rows[1]["host"]["training_time_days"]


def test_every_point_has_the_three_modes_of_compare(design):
    from designer.engine.compare import compare
    from designer.topology.catalog import load_catalog

    assert SCENARIOS == MODES == ("host", "smartnic", "dpu")
    result = sweep(design, "servers", [4], workers=1, seed=0)
    assert set(result.rows[0]) == set(MODES)
    runs = compare(apply_param(design, "servers", 4), load_catalog(), seed=0).runs
    for mode in MODES:
        assert result.rows[0][mode]["training_time_days"] == runs[mode].training_time_days


def test_the_design_is_sent_once_not_per_point(design, monkeypatch):
    """run_tasks gets the design dict as its shared object and only the values as items."""
    from designer.services import parallel

    calls = []
    real = parallel.run_tasks

    def spy(func, items, shared=None, **kw):
        calls.append((items, shared))
        return real(func, items, shared, **kw)

    monkeypatch.setattr(parallel, "run_tasks", spy)
    sweep(design, "global_batch", [256, 512], workers=1, evaluate=_fake_point)
    (items, shared), = calls
    assert items == [256, 512] and shared[0]["name"] == design.name and shared[1] == "global_batch"


def test_cancel_stops_handing_out_points(design):
    import threading

    cancel = threading.Event()
    notes, points = stream(design, "global_batch", [256, 512, 1024], workers=1, cancel=cancel,
                           evaluate=_fake_point)
    first = next(points)
    cancel.set()
    assert first[0] == 0 and list(points) == []


def test_servers_needs_a_recorded_template(design):
    design.meta = {}
    with pytest.raises(UsageError, match="does not record the template"):
        apply_param(design, "servers", 16)


def test_parallel_sweep_equals_serial_and_scales(design):
    serial = sweep(design, "servers", [4, 16], workers=1)
    parallel = sweep(design, "servers", [4, 16], workers=2)
    assert serial.to_json() == parallel.to_json()
    for s in SCENARIOS:
        days = serial.series(s, "training_time_days")
        assert days[1] < days[0] / 2  # four times the servers: well under half the time
        assert set(serial.rows[0][s]) == set(METRICS)


def test_cli_json_and_table(capsys):
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8", "--json",
                 "--workers", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["value"] for p in data["points"]] == [4, 8]
    assert data["points"][0]["dpu"]["mfu"] > 0
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4", "--workers", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[0] == "servers" and out[1].split()[0] == "4"


def test_cli_bad_input_is_one_line(capsys):
    assert main(["sweep", str(EXAMPLE), "--param", "rack.nonsense", "--values", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a rack has no field 'nonsense'" in err[0]
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,a"]) == 2
    assert "'a' is not a number" in capsys.readouterr().err


def test_servers_sweep_of_a_new_design_refits_its_layout(tmp_path):
    """The README's example: a design made by `new` records its template, and the layout `new`
    fitted to its preset is fitted again at every size, the published batch kept (issue #24)."""
    from designer.cli import main
    from designer.engine.workload import from_dict
    from designer.topology import fileformat

    out = tmp_path / "x.json"
    assert main(["new", "--template", "leaf-spine", "--servers", "4", "-o", str(out)]) == 0
    design = fileformat.load(out)
    assert design.workload["dp"] == 0  # 32 GPUs, tp 2: the preset's dp 16 fills them and divides
    big = apply_param(design, "servers", 96)  # 768 GPUs, tp 2: dp 384 does not divide 512
    # dp 256 (512 GPUs) and pp 3 x dp 128 (768 GPUs, 4 micro-batches, bubble 2 of 6) score the
    # same 512 useful GPUs; the preset's pp 1 wins the tie
    assert big.workload == {"preset": "llama3-8b", "dp": 256, "gpus": 0, "global_batch": 512}
    assert apply_param(design, "servers", 8).workload["dp"] == 0  # 64 GPUs: dp 32 fills them
    result = sweep(design, "servers", [4, 8], workers=1)
    days = result.series("host", "training_time_days")
    assert days[1] == pytest.approx(days[0] / 2, rel=0.05)


def test_a_layout_chosen_by_hand_is_not_refitted_by_a_servers_sweep(tmp_path):
    from designer.cli import main
    from designer.topology import fileformat

    out = tmp_path / "x.json"
    assert main(["new", "--template", "leaf-spine", "--servers", "4", "-o", str(out)]) == 0
    design = fileformat.load(out)
    design.workload = {**design.workload, "dp": 8}  # 16 of the 32 GPUs, by hand
    big = apply_param(design, "servers", 96)
    assert big.workload["dp"] == 8 and big.workload["global_batch"] == 512


def test_global_batch_sweep_refits_dp_and_says_so(tmp_path, capsys):
    """A global batch the saved dp x micro-batch does not split: dp (and micro-batch) refitted,
    tp and pp kept, one line per refitted value (issue #24)."""
    from designer.cli import main
    from designer.topology import fileformat

    out = tmp_path / "x.json"
    assert main(["new", "--template", "leaf-spine", "--servers", "4", "-o", str(out)]) == 0
    design = fileformat.load(out)  # llama3-8b tp2 pp1 dp 0 (16) mb1, batch 512
    notes: list[str] = []
    changed = apply_param(design, "global_batch", 520, notes)
    # 520 = 8 x 65: the largest divisor within the 16 replicas the 32 GPUs hold is 13
    assert (changed.workload["dp"], changed.workload["micro_batch"]) == (13, 1)
    assert len(notes) == 1 and "global batch 520" in notes[0] and "dp 13" in notes[0]
    same = apply_param(design, "global_batch", 1024, notes)
    assert same.workload["dp"] == 0 and len(notes) == 1  # 1024 = 16 x 64: nothing to refit
    capsys.readouterr()
    assert main(["sweep", str(out), "--param", "global_batch", "--values", "512,520",
                 "--workers", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["value"] for p in data["points"]] == [512, 520]
    assert len(data["notes"]) == 1 and data["notes"][0].startswith("global_batch = 520:")
    assert main(["sweep", str(out), "--param", "global_batch", "--values", "520",
                 "--workers", "1"]) == 0
    assert "refit  global_batch = 520: global batch 520 does not split" in capsys.readouterr().out


def test_hostile_sweep_sizes_are_bounded(design, monkeypatch):
    """Too many values is one clear line; --workers beyond the cores starts no more processes than
    there are cores (a fork bomb otherwise)."""
    import os

    from designer.services import parallel

    with pytest.raises(UsageError, match="at most 256"):
        parse_values(",".join(str(i) for i in range(1, 300)))
    started = []

    def recorder(func, items, shared=None, *, workers=None, **kw):
        started.append(workers)
        yield from ()

    monkeypatch.setattr(parallel, "run_tasks", recorder)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    sweep(design, "global_batch", [256, 512, 1024], workers=100000, evaluate=_fake_point)
    sweep(design, "global_batch", [256], evaluate=_fake_point)
    assert started == [2, 1]
    assert worker_count(None, 5) == 2 and worker_count(1, 5) == 1


@pytest.mark.parametrize("param,value,words", [
    ("gpu_server.gpu_count", "-1", "gpu_server.gpu_count = -1: must be a positive integer"),
    ("scenario.storage_io_kib", "0.001", "'storage_io_kib' must be a number from 4 to 16384"),
    ("scenario.seed", "1e300", "'seed' must be a whole number from 0 to"),
    ("servers", "0", "servers = 0: must be a positive whole number of servers"),
])
def test_values_get_the_range_checks_of_set(param, value, words, capsys):
    """Issue #23: --values is checked as --set and the design file are, before any point runs."""
    assert main(["sweep", str(EXAMPLE), "--param", param, "--values", f"8,{value}", "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and "Traceback" not in err[0]
    if param.startswith("scenario."):  # the same words as --set gives
        assert main(["run", str(EXAMPLE), "--set", f"{param}={value}"]) == 2
        assert words in capsys.readouterr().err


def test_out_streams_one_csv_row_per_point(tmp_path, capsys):
    import csv

    out = tmp_path / "points.csv"
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8", "--workers", "2",
                 "--out", str(out)]) == 0
    assert "2 of 2 points written" in capsys.readouterr().out
    rows = list(csv.reader(out.open()))
    assert rows[0][0] == "servers" and rows[0][1:] == [f"{s} {m}" for s in MODES for m in METRICS]
    assert sorted(float(r[0]) for r in rows[1:]) == [4, 8]
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8", "--workers", "1",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_value = {float(r[0]): r for r in rows[1:]}
    for p in data["points"]:
        assert float(by_value[p["value"]][1]) == p["host"]["training_time_days"]
        assert float(by_value[p["value"]][-5]) == p["dpu"]["training_time_days"]


def _fake_point(design, scenario, seed):
    return {m: 1.0 for m in METRICS}


def test_table_of_an_endless_run_is_readable(capsys):
    import re

    assert main(["sweep", str(EXAMPLE), "--param", "workload.tokens", "--values", "1e300"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) < 120 and re.search(r"\de\+2\d\d ", out)


def test_ctrl_c_keeps_the_csv_rows_finished(tmp_path, monkeypatch, capsys):
    import csv

    from designer.services import sweeping

    def interrupted(design, param, values, **kw):
        def points():
            yield 1, {s: {m: 2.0 for m in METRICS} for s in SCENARIOS}
            raise KeyboardInterrupt

        return (), points()

    monkeypatch.setattr(sweeping, "stream", interrupted)
    out = tmp_path / "points.csv"
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8,16", "--out", str(out)]) == 130
    rows = list(csv.reader(out.open()))
    assert len(rows) == 2 and rows[1][0] == "8" and float(rows[1][1]) == 2.0
    assert "keeps the 1 point(s) finished" in capsys.readouterr().err
