"""``dpu-designer run``: the named breakdown, resources in --json and the table, --set, --timeline."""

import csv
import json

import pytest

from designer.cli import main
from designer.engine.result import BREAKDOWN_KEYS
from designer.paths import resources_dir

EXAMPLE = str(resources_dir() / "examples" / "example.json")


def run_json(capsys, *args):
    capsys.readouterr()
    assert main(["run", EXAMPLE, "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_names_every_iteration_part_and_the_resources(capsys):
    d = run_json(capsys)
    assert set(d["breakdown_s"]) == set(BREAKDOWN_KEYS)
    assert {"data_stall", "straggler", "checkpoint"} <= set(d["breakdown_s"])
    assert sum(d["breakdown_s"].values()) == pytest.approx(d["iteration_time_s"], rel=1e-12)
    assert d["host_cpu"]["cores_total"] == 8 * 112  # 8 DGX H100, 2 x 56-core Xeon 8480C
    # every infrastructure task the engine models (engine.resources.INFRA_TASKS) plus data loading
    assert set(d["host_cpu"]["by_task"]) == {"network", "storage", "crypto", "virtualization", "nccl_proxy",
                                             "filesystem", "agents", "irq", "data_loading"}
    assert 0 <= d["host_cpu"]["infra_fraction"] <= 1
    assert {"read_demand_GBps", "read_achieved_GBps", "checkpoint_write_s"} <= set(d["storage"])
    # energy of the run = cluster power x training time
    assert d["energy_kwh"] == pytest.approx(d["power_W"]["total"] * d["training_time_days"] * 24 / 1e3)


def test_set_changes_the_scenario_for_one_run(capsys):
    plain = run_json(capsys, "--set", "scenario.encryption=false")  # the example encrypts
    enc = run_json(capsys, "--set", "scenario.encryption=true")
    off = run_json(capsys, "--set", "scenario.encryption=true", "--set", "scenario.offload=dpu")
    assert enc["host_cpu"]["by_task"]["crypto"] > 0 == plain["host_cpu"]["by_task"]["crypto"]
    assert off["dpu"]["crypto"] > 0 and off["host_cpu"]["by_task"]["crypto"] == 0
    assert off["iteration_time_s"] < enc["iteration_time_s"]


@pytest.mark.parametrize("arg, message", [
    ("scenario.bogus=1", "unknown scenario setting 'bogus'"),
    ("encryption=true", "write scenario.NAME=VALUE"),
    ("scenario.tenants=many", "'tenants' must be a number"),
    ("scenario.offload=cloud", "must be one of host, smartnic, dpu"),
    ("workload.flavour=2", "unknown workload setting 'flavour'"),
    ("scenario.seed=-3", "must be a whole number from 0"),
    ("workload.precision=[1]", "precision must be one of"),
])
def test_bad_set_is_one_clear_line(capsys, arg, message):
    assert main(["run", EXAMPLE, "--set", arg]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_table_shows_the_resources(capsys):
    capsys.readouterr()
    assert main(["run", EXAMPLE, "--set", "scenario.offload=dpu"]) == 0
    out = capsys.readouterr().out
    for text in ("Stragglers", "Data stall", "Checkpoints", "host CPU", "896 cores", "adapter engine load",
                 "storage", "energy"):
        assert text in out


def _breakdown_rows(out: str) -> dict:
    """The breakdown part names printed under 'iteration time' and their seconds."""
    from designer.services.style import PART_LABEL

    key_of = {label: key for key, label in PART_LABEL.items()}  # the planners' names it prints
    rows = {}
    for line in out.splitlines():
        label, _, rest = line.strip().rpartition(" s  ")
        name, _, value = label.rpartition(" ")
        if line.startswith("  ") and name.strip() in key_of:
            rows[key_of[name.strip()]] = float(value)
    return rows


def test_zero_parts_of_absent_parallel_dimensions_are_not_printed(capsys):
    # the example's Llama 3 8B layout has no context or expert parallelism: no cp/ep rows, but the
    # JSON keeps every part and the other zero parts (pp_comm, bubble) still print
    capsys.readouterr()
    assert main(["run", EXAMPLE]) == 0
    out = capsys.readouterr().out
    rows = _breakdown_rows(out)
    assert "cp_comm" not in rows and "ep_comm" not in rows
    # nor the offload parts of a workload that asks for no offload (issue 22)
    assert set(rows) == set(BREAKDOWN_KEYS) - {"cp_comm", "ep_comm", "activation_offload", "optimizer_offload"}
    assert " cp=" not in out.splitlines()[0] and " ep=" not in out.splitlines()[0]
    d = run_json(capsys)
    assert d["breakdown_s"]["cp_comm"] == 0 == d["breakdown_s"]["ep_comm"]
    # with context parallelism the cp row prints (even when it is zero) and the header says cp=2
    capsys.readouterr()
    assert main(["run", EXAMPLE, "--set", "workload.cp=2"]) == 0
    out = capsys.readouterr().out
    assert "cp_comm" in _breakdown_rows(out) and "ep_comm" not in _breakdown_rows(out)
    assert " cp=2," in out.splitlines()[0]


def test_nic_as_dpu_help_says_when_it_applies(capsys):
    assert main(["run", EXAMPLE, "--set", "scenario.nic_as_dpu=7"]) == 2
    from designer.commands.run import EXTRA_SCENARIO_KEYS

    assert "without a drawn DPU" in EXTRA_SCENARIO_KEYS["nic_as_dpu"].meaning
    assert "DPU-offloaded runs" in EXTRA_SCENARIO_KEYS["nic_as_dpu"].meaning


def test_timeline_csv_and_summary(capsys, tmp_path):
    out = tmp_path / "tl.csv"
    d = run_json(capsys, "--timeline", str(out))
    with open(out, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:3] == ["t_s", "dt_s", "gpu_util"] and len(rows) > 1
    assert d["timeline"]["rows"] == len(rows) - 1
    assert 0 < d["timeline"]["goodput"] <= 1
    # the simulated run lasts at least the steady-state training time
    assert d["timeline"]["training_time_days"] >= d["training_time_days"] * 0.99


def test_timeline_to_a_missing_folder_is_one_line(capsys, tmp_path):
    assert main(["run", EXAMPLE, "--timeline", str(tmp_path / "no" / "tl.csv")]) == 2
    err = capsys.readouterr().err
    assert "--timeline" in err and "does not exist" in err and err.count("\n") == 1
