"""Issue 14 class: a storage- or CPU-bound vision workload must give finite figures or one clear
line, never an infinite iteration (which became a ZeroDivisionError downstream)."""

import json
import math

import pytest

from designer.cli import main
from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures
from designer.paths import resources_dir

FIG = cost_figures()


def test_loaders_wanting_every_core_leave_the_kernel_storage_stack_its_cores():
    # 16 cores, 8 GPUs; 4096 samples x 3 ms = 12.3 core-s per 0.1 s step: the loaders want far
    # more than the 8 cores left, the kernel's storage stack still reads
    g = ServerGroup(gpus=8, cpu_cores=16, cpu_GHz=3.0)
    inp = ResourceInputs(groups=(g,), iteration_s=0.1, samples_per_iteration=4096, sample_bytes=114660,
                         preprocess_core_s_per_sample=0.003, storage_read_GBps=100)
    r = assess(inp, FIG)
    assert math.isfinite(r.iteration_s) and r.data_stall_s > 0
    assert r.groups[0].stall_cause == "data loading"
    assert r.groups[0].read_achieved_GBps > 0


@pytest.mark.parametrize("kw, element", [
    (dict(storage_read_GBps=0.0), "storage target"),
    (dict(storage_read_GBps=10.0, storage_converged=True), "fabric"),
])
def test_a_read_path_with_no_bandwidth_is_one_clear_line(kw, element):
    g = ServerGroup(gpus=8, cpu_cores=112, cpu_GHz=3.0, storage_fabric_GBps=10.0, comm_s=1.0)
    inp = ResourceInputs(groups=(g,), iteration_s=1.0, samples_per_iteration=8, sample_bytes=1e9, **kw)
    with pytest.raises(ValueError) as err:
        assess(inp, FIG)
    text = str(err.value)
    assert "\n" not in text and f"0 GB/s from the {element}" in text and "bytes_per_sample" in text


def test_storage_bound_resnet_on_tiny_storage_runs_through_the_cli(tmp_path, capsys):
    # the reproduction: the example with ResNet-50 and its storage cut to the minimum
    design = json.loads((resources_dir() / "examples" / "example.json").read_text())
    for c in design["components"]:
        if c["kind"] == "storage":
            c.setdefault("props", {}).update(read_GBps=0.01, write_GBps=0.01)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(design))
    for cmd in (["run", str(path), "--json"], ["compare", str(path), "--json"]):
        capsys.readouterr()
        assert main(cmd + ["--set", "workload.preset=resnet50-imagenet"]) == 0
        out = json.loads(capsys.readouterr().out)
        runs = [out] if cmd[0] == "run" else [out[m] for m in ("host", "smartnic", "dpu")]
        for r in runs:
            assert math.isfinite(r["iteration_time_s"]) and r["iteration_time_s"] > 0
            assert r["breakdown_s"]["data_stall"] > 0
