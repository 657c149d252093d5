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
    assert serial.axis() == values
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
        items = list(items)
        calls.append((items, shared))
        return real(func, items, shared, **kw)

    monkeypatch.setattr(parallel, "run_tasks", spy)
    sweep(design, "global_batch", [256, 512], workers=1, evaluate=_fake_point)
    (items, shared), = calls
    assert items == [(256,), (512,)] and shared[0]["name"] == design.name and shared[1] == ("global_batch",)


def test_cancel_stops_handing_out_points(design):
    import threading

    cancel = threading.Event()
    points = stream(design, "global_batch", [256, 512, 1024], workers=1, cancel=cancel,
                    evaluate=_fake_point)
    first = next(points)
    cancel.set()
    assert first[:2] == (0, (256,)) and list(points) == []


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

    with pytest.raises(UsageError, match="at most 1,000,000 points"):
        parse_values(",".join(str(i) for i in range(1, 1_000_002)))
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
    assert [float(r[0]) for r in rows[1:]] == [4, 8]  # grid order, whatever finished first
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8", "--workers", "1",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_value = {float(r[0]): r for r in rows[1:]}
    for p in data["points"]:
        assert float(by_value[p["value"]][1]) == p["host"]["training_time_days"]
        assert float(by_value[p["value"]][-len(METRICS)]) == p["dpu"]["training_time_days"]


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

    def interrupted(design, grid, values=None, **kw):
        def points():
            yield 0, (4,), {s: {m: 2.0 for m in METRICS} for s in SCENARIOS}, ()
            raise KeyboardInterrupt

        return points()

    monkeypatch.setattr(sweeping, "stream", interrupted)
    out = tmp_path / "points.csv"
    out.write_text("old\n")
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8,16", "--out", str(out)]) == 130
    rows = list(csv.reader(out.open()))
    assert len(rows) == 2 and rows[1][0] == "4" and float(rows[1][1]) == 2.0
    assert "keeps the first 1 of the 3 points (in grid order)" in capsys.readouterr().err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def _fake_grid_point(design, scenario, seed):
    """Figures that depend on the point's design (so rows differ) without an engine run."""
    gpus = sum(int(s.props.get("gpu_count", 8) or 8) for s in design.topology.servers())
    batch = float(design.workload.get("global_batch", 0) or 0)
    return {m: gpus + batch / 1000 + (0.5 if scenario == "dpu" else 0) for m in METRICS}


def test_a_grid_is_every_combination_in_product_order(design):
    from designer.engine.sweep import make_grid

    grid = make_grid(["servers", "global_batch"], [[4, 8], [256, 512, 1024]])
    assert grid.size == 6
    result = sweep(design, grid, workers=1, evaluate=_fake_grid_point)
    assert list(result.values) == [(4, 256), (4, 512), (4, 1024), (8, 256), (8, 512), (8, 1024)]
    assert result.rows[0]["host"]["mfu"] == pytest.approx(4 * 8 + 0.256)
    assert result.rows[5]["dpu"]["mfu"] == pytest.approx(8 * 8 + 1.024 + 0.5)
    data = result.to_json()
    assert data["params"] == ["servers", "global_batch"] and data["points"][1]["values"] == [4, 512]
    assert data["total"] == 6 and "thinned" not in data


def test_servers_is_applied_first_so_a_field_set_with_it_stays(design):
    from designer.engine.sweep import apply_point

    new = apply_point(design, ["gpu_server.gpu_count", "servers"], [4, 16])
    assert len(new.topology.servers()) == 16
    assert {c.props.get("gpu_count") for c in new.topology.servers()} == {4}


@pytest.mark.parametrize("argv,words", [
    (["--param", "servers"], "each --param needs its --values (got 1 --param and 0 --values)"),
    (["--param", "servers", "--values", "4", "--param", "servers", "--values", "8"], "given twice"),
    (["--param", "servers", "--values", ",".join(map(str, range(1, 1001))),
      "--param", "global_batch", "--values", ",".join(map(str, range(1, 1002)))],
     "has 1,001,000 points; at most 1,000,000"),
    (["--param", "servers", "--values", "4", "--out", "points.txt"], "write a .csv or a .parquet file"),
    ([], "each --param needs its --values"),
])
def test_bad_grids_and_outputs_are_one_line(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(EXAMPLE), *argv, "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_list_prints_the_parameters_grouped_and_each_one_sweeps(design, capsys):
    from designer.engine.sweep import sweepable
    from designer.topology.catalog import load_catalog

    assert main(["sweep", str(EXAMPLE), "--list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("design size (regenerated from its template):\n  servers  now 8\n")
    for title in ("workload (workload.NAME):", "scenario (scenario.NAME):", "every gpu_server (8;"):
        assert title in out
    assert "workload.global_batch" in out and "now 512" in out and "gpu_server.gpu_count" in out
    assert "scenario.routing" not in out  # not numeric
    for _, rows in sweepable(design, load_catalog()):
        for param, present in rows:
            if present:  # every listed name is one the sweep takes, at its present value
                apply_param(design, param, present)


def test_rows_are_the_same_bytes_for_one_and_two_workers(tmp_path, monkeypatch):
    """Issue #25: the same seed gives the same rows, in the same order, whatever the worker count."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    argv = ["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,2,8", "--param",
            "scenario.tenants", "--values", "1,2"]
    assert main(argv + ["--workers", "1", "--out", str(a)]) == 0
    assert main(argv + ["--workers", "2", "--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    lines = a.read_text().splitlines()
    assert len(lines) == 7 and lines[0].startswith("servers,scenario.tenants,host training_time_days")
    assert [tuple(line.split(",")[:2]) for line in lines[1:]] == [
        ("4", "1"), ("4", "2"), ("2", "1"), ("2", "2"), ("8", "1"), ("8", "2")]


def test_parquet_has_the_csv_rows(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    a, b = tmp_path / "a.csv", tmp_path / "a.parquet"
    argv = ["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8", "--workers", "1"]
    assert main(argv + ["--out", str(a)]) == 0 and main(argv + ["--out", str(b)]) == 0
    import csv

    rows = list(csv.reader(a.open()))
    table = pq.read_table(b)
    assert table.column_names == rows[0]
    assert [[float(c) for c in r] for r in rows[1:]] == [list(r.values()) for r in table.to_pylist()]


def test_parquet_without_pyarrow_is_one_line(tmp_path, monkeypatch, capsys):
    import builtins

    real = builtins.__import__

    def no_pyarrow(name, *a, **k):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    out = tmp_path / "p.parquet"
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4", "--workers", "1",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs pyarrow" in err[0] and "[parquet]" in err[0]
    assert not out.exists()


def test_the_summary_is_bounded_and_spans_the_sweep(design):
    """A long sweep keeps the first points, an even sample of the rest and the best few, not
    every row (they stream to --out)."""
    from designer.engine.sweep import Summary, make_grid

    grid = make_grid(["scenario.seed"], [list(range(5000))])
    summary = Summary(grid)
    for i, (v,) in enumerate(grid.points()):
        days = 100.0 - (i == 4321) * 50 - (i == 17) * 10
        summary.add(i, (v,), {"host": {"training_time_days": days}}, (f"note {i % 3}",))
    result = summary.result()
    kept = [v for (v,) in result.values]
    assert kept[:512] == list(range(512)) and 4321 in kept and kept[-1] >= 4500
    assert len(kept) <= Summary.HEAD + Summary.SAMPLE + Summary.BEST
    assert result.total == 5000 and "of 5,000 points kept" in result.thinned
    assert result.notes == ("note 0", "note 1", "note 2")
    gaps = {b - a for a, b in zip(kept[512:], kept[513:]) if a != 4321 and b != 4321}
    assert len(gaps) == 1  # an even sample


def test_a_long_sweep_writes_every_row_and_keeps_a_bounded_summary(design, tmp_path):
    from designer.engine.sweep import Summary, make_grid
    from designer.services.rowfile import row_file
    from designer.commands.sweep import columns

    grid = make_grid(["scenario.seed", "scenario.tenants"], [list(range(1500)), [1, 2]])
    out = tmp_path / "long.csv"
    with row_file(str(out), columns(grid.params)) as rows:
        result = sweep(design, grid, workers=1, evaluate=_fake_grid_point,
                       on_point=lambda i, v, row: rows.write(list(v) + [0.0] * 15))
    lines = out.read_text().splitlines()
    assert len(lines) == 3001 and lines[1].startswith("0,1,") and lines[-1].startswith("1499,2,")
    assert result.total == 3000 and len(result.rows) <= Summary.HEAD + Summary.SAMPLE + Summary.BEST
    assert result.values[0] == (0, 1) and result.thinned


def test_ctrl_c_keeps_the_parquet_rows_finished(tmp_path, monkeypatch, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    from designer.services import sweeping

    def interrupted(design, grid, values=None, **kw):
        def points():
            for i, v in enumerate((4, 8)):
                yield i, (v,), {s: {m: float(i) for m in METRICS} for s in SCENARIOS}, ()
            raise KeyboardInterrupt

        return points()

    monkeypatch.setattr(sweeping, "stream", interrupted)
    out = tmp_path / "points.parquet"
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "4,8,16", "--out", str(out)]) == 130
    table = pq.read_table(out)
    assert table.column("servers").to_pylist() == [4.0, 8.0] and table.num_rows == 2
    assert "keeps the first 2 of the 3 points" in capsys.readouterr().err


def test_a_component_missing_at_one_server_count_is_refused_before_any_point(design, capsys):
    """servers x ID.FIELD: srv-8 exists at 8 servers (the first combination) but not at 4; the grid
    is refused up front, naming the server count, not after the points of 8 servers ran."""
    from designer.cli import main
    from designer.engine.sweep import make_grid, prepare

    grid = make_grid(["servers", "srv-8.gpu_count"], [[8, 4], [8]])
    with pytest.raises(UsageError, match=r"servers = 4 cannot set srv-8\.gpu_count: at 4 servers the design "
                                         r"has no component 'srv-8'"):
        prepare(design, grid)
    assert main(["sweep", str(EXAMPLE), "--param", "servers", "--values", "8,4", "--param", "srv-8.gpu_count",
                 "--values", "8", "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "leave that server count out" in err[0]
    prepare(design, make_grid(["servers", "srv-8.gpu_count"], [[8, 16], [8]]))  # srv-8 at both: fine


def test_a_combination_whose_layout_cannot_run_is_named_before_any_point(design, monkeypatch):
    """servers 16 with srv-8.gpu_count 4 is 124 GPUs, which dp x micro-batch of the 512 batch does
    not fill (dp 62): the combination is named up front (not the engine's error after the other
    points); beyond CHECK_WORK every server count is still checked (the other
    parameters at their first values)."""
    from designer.engine import sweep as sw
    from designer.services.sweeping import stream

    calls = []
    monkeypatch.setattr(sw, "engine_point", lambda *a: calls.append(a) or {})
    grid = sw.make_grid(["servers", "srv-8.gpu_count"], [[16, 8], [8, 4]])
    with pytest.raises(UsageError, match=r"the point servers = 16, srv-8\.gpu_count = 4 cannot run: workload: "
                                         r"global batch 512 is not a multiple of dp x micro-batch = 62 x 1"):
        stream(design, grid, workers=1)
    assert calls == []
    monkeypatch.setattr(sw, "CHECK_WORK", 1)
    sw.check_points(design, grid)  # per servers value, srv-8.gpu_count at its first (8): both run
    # dp 64 x tp 2 fills 16 servers of 8 GPUs and needs twice the GPUs of 8 servers
    with pytest.raises(UsageError, match=r"the point servers = 8, workload\.dp = 64 cannot run"):
        sw.check_points(design, sw.make_grid(["servers", "workload.dp"], [[16, 8], [64]]))
