"""`dpu-designer new` and `validate`: exit codes and one-line errors."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from designer.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_new_then_validate(tmp_path, capsys):
    out = tmp_path / "x.json"
    assert main(["new", "--template", "fat-tree", "--k", "4", "--dpu", "bluefield-3", "-o", str(out)]) == 0
    assert "16 servers, 20 switches" in capsys.readouterr().out
    assert main(["validate", str(out)]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out


def test_broken_file_exits_2_with_the_path(tmp_path, capsys):
    good = tmp_path / "x.json"
    main(["new", "--template", "leaf-spine", "--servers", "2", "-o", str(good)])
    data = json.loads(good.read_text())
    data["components"][0]["props"] = {"gpu_count": 0}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {bad}: components[0].props.gpu_count: must be a positive integer\n"


def test_design_rule_errors_exit_1(tmp_path, capsys):
    path = tmp_path / "x.json"
    main(["new", "--template", "leaf-spine", "--servers", "2", "--storage", "none", "-o", str(path)])
    data = json.loads(path.read_text())
    data["links"] = data["links"][1:]  # one NIC loses its cable: still connected via its server
    data["links"][0]["speed_Gbps"] = 800.0
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "error:" in out and "800 Gb/s link" in out and "2 errors" in out  # both 400 Gb/s ends


def test_bad_options_exit_2(tmp_path, capsys):
    out = str(tmp_path / "x.json")
    assert main(["new", "--template", "fat-tree", "--servers", "4", "-o", out]) == 2
    assert "the fat-tree template takes no --servers" in capsys.readouterr().err
    assert main(["new", "--template", "leaf-spine", "--dpu", "bluefield-9", "-o", out]) == 2
    assert "--dpu: no dpu model 'bluefield-9'" in capsys.readouterr().err
    assert main(["new", "--template", "mesh", "-o", out]) == 2
    assert main(["validate", str(tmp_path / "none.json")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_installed_entry_point_runs(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "-m", "designer.cli", "new", "--template", "rail-optimized",
                          "--servers", "32", "--dpu", "bluefield-3", "-o", str(out)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    run = subprocess.run([sys.executable, "-m", "designer.cli", "validate", str(out)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0 and "32 servers" in run.stdout and run.stderr == ""


def test_new_saves_a_workload_that_fills_the_design_and_runs(tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["new", "--template", "leaf-spine", "--servers", "6", "--workload", "llama3-8b",
                 "-o", str(out)]) == 0
    workload = json.loads(out.read_text())["workload"]
    assert workload["preset"] == "llama3-8b"
    # 6 DGX H100 = 48 GPUs, tp=2, the published batch 512 kept (issue #24): dp 24 does not divide
    # it; tp2 pp3 dp8 fills the 48 GPUs (64 micro-batches per replica, 2 of bubble)
    assert workload["global_batch"] == 512 and (workload["pp"], workload["dp"]) == (3, 8)
    capsys.readouterr()
    assert main(["run", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["workload"]["dp"] == 8 and result["gpus"] == 48


def test_new_refuses_a_workload_that_does_not_fit(tmp_path, capsys):
    code = main(["new", "--template", "leaf-spine", "--servers", "2", "--workload", "gpt3-175b",
                 "-o", str(tmp_path / "w.json")])
    assert code == 2
    assert "needs more GPUs than the design has (16)" in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()


EXAMPLE = str(ROOT / "resources" / "examples" / "example.json")


@pytest.mark.parametrize("args, message", [
    (["collective", EXAMPLE, "--max", "1e400"], "size '1e400' is beyond 1 TiB"),
    (["collective", EXAMPLE, "--max", "nan"], "size 'nan' is not a byte count"),
    (["run", EXAMPLE, "--seed", "-1"], "--seed -1: must be a whole number from 0 to 2147483647"),
    (["run", EXAMPLE, "--set", "scenario.seed=-3"],
     "--set scenario.seed=-3: 'seed' must be a whole number from 0"),
    (["run", EXAMPLE, "--set", "scenario.checkpoint_interval_s=-1"], "(0: no checkpoints)"),
    (["run", EXAMPLE, "--set", "workload.precision=[1]"],
     "workload.precision must be one of bf16, fp16, fp8, fp32, tf32"),
    (["report", EXAMPLE, "-o", "x.pdf", "--seed", "-2"], "--seed -2: must be a whole number"),
    (["sweep", EXAMPLE, "--param", "scenario.tenants", "--values", "1", "--seed", "x"],
     "--seed x: must be a whole number"),
])
def test_bad_numbers_give_one_line(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_forced_algorithm_that_does_not_apply_says_why(capsys):
    # the example design has 8 DGX servers: NVLS (NVLink SHARP) works only inside one NVSwitch domain
    assert main(["collective", EXAMPLE, "--algorithm", "nvls"]) == 2
    err = capsys.readouterr().err
    assert "--algorithm nvls does not apply to allreduce on 64 GPUs on 8 servers" in err
    assert "one NVSwitch domain" in err and "use one of ring, tree, hierarchical" in err
    assert "cabl" not in err
    assert main(["collective", EXAMPLE, "--algorithm", "tree", "--op", "allgather"]) == 2
    assert "use one of ring" in capsys.readouterr().err


def test_set_takes_the_scenario_spec_zero_checkpoints_and_whole_seeds():
    from designer.commands.run import apply_sets
    from designer.topology.design import Design

    design = Design()
    apply_sets(design, ["scenario.checkpoint_interval_s=0", "scenario.seed=3.0",
                        "scenario.nic_as_dpu=true"])
    assert design.scenario["checkpoint_interval_s"] == 0 and design.scenario["nic_as_dpu"] is True
    assert design.scenario["seed"] == 3 and type(design.scenario["seed"]) is int


@pytest.mark.parametrize("command, module, function", [
    (["report", "-o", "r.pdf"], "designer.report.build", "build_report"),
    (["sweep", "--param", "scenario.tenants", "--values", "1"], "designer.commands.sweep", "sweep"),
])
def test_seed_defaults_to_the_designs(tmp_path, monkeypatch, command, module, function):
    data = json.loads(Path(EXAMPLE).read_text())
    data["scenario"]["seed"] = 41
    path = tmp_path / "seeded.json"
    path.write_text(json.dumps(data))
    seeds = []

    def record(*args, seed, **kwargs):
        seeds.append(seed)
        raise KeyboardInterrupt  # stop before any work

    monkeypatch.setattr(importlib.import_module(module), function, record)
    argv = [command[0], str(path), *command[1:]]
    assert main(argv) == 130
    assert main(argv + ["--seed", "5"]) == 130
    assert seeds == [41, 5]


def test_workload_option_takes_set_values_on_top_and_refuses_a_design_file(capsys):
    example = str(ROOT / "resources" / "examples" / "example.json")
    assert main(["run", example, "--workload", "llama3-70b", "--set", "workload.global_batch=256",
                 "--json"]) == 0
    w = json.loads(capsys.readouterr().out)["workload"]
    assert w["name"] == "Llama 3 70B" and w["global_batch"] == 256
    assert main(["run", example, "--workload", example]) == 2
    err = capsys.readouterr().err
    assert "is a design file, not a workload" in err and "Traceback" not in err
