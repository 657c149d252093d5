"""Sweeps: parameter paths, parallel runs with deterministic results, the CLI."""

import json

import pytest

from designer.cli import main
from designer.engine.sweep import METRICS, SCENARIOS, apply_param, parse_values, sweep
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


def test_any_executor_gives_the_same_result(design):
    """A Dask cluster's executor is used through the plain Executor interface; a thread pool
    stands in for it here (out-of-order completion must not reorder the rows)."""
    from concurrent.futures import ThreadPoolExecutor

    serial = sweep(design, "servers", [16, 4, 8], workers=1)
    with ThreadPoolExecutor(max_workers=3) as pool:
        seen = []
        other = sweep(design, "servers", [16, 4, 8], executor=pool,
                      progress=lambda done, total: seen.append((done, total)))
    assert other.to_json() == serial.to_json()
    assert seen == [(1, 3), (2, 3), (3, 3)]


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
    there are cores (a fork bomb otherwise); astronomically long runs print readable days."""
    import os

    from designer.engine import sweep as sweep_mod

    with pytest.raises(UsageError, match="at most 256"):
        parse_values(",".join(str(i) for i in range(1, 300)))
    started = []

    class Recorder:
        def __init__(self, max_workers):
            started.append(max_workers)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, tasks):
            return map(fn, tasks)

    monkeypatch.setattr(sweep_mod, "ProcessPoolExecutor", Recorder)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    sweep(design, "global_batch", [256, 512, 1024], workers=100000, evaluate=_fake_point)
    assert started == [2]


def _fake_point(design, scenario, seed):
    return {m: 1.0 for m in METRICS}


def test_table_of_an_endless_run_is_readable(capsys):
    import re

    assert main(["sweep", str(EXAMPLE), "--param", "workload.tokens", "--values", "1e300"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) < 120 and re.search(r"\de\+2\d\d ", out)
