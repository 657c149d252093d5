"""Host-CPU data loading per sample, storage transport and GPUDirect Storage as user settings.

Data-loader workers get the cores the training processes (one per GPU) and the host-managed
network and storage stacks leave; when they need more, the step waits (``data_stall``).
"""

import json
from dataclasses import replace

import pytest

from designer.cli import main
from designer.engine import pipeline
from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures
from designer.engine.workload import from_dict
from designer.errors import UsageError
from designer.topology.catalog import load_catalog, reload_catalog
from designer.topology.fileformat import save
from designer.topology.templates import rail_optimized

CAT = load_catalog()
FIG = cost_figures()

#: a 2-socket server CPU with 24 cores per socket (48 in all): fewer than ResNet-50's loaders
#: need next to 8 H100s
SMALL_CPU = ('[[entry]]\nid = "small-24c"\nname = "24-core test CPU"\nsource = "test"\n'
             'cores = 24\nthreads = 48\nbase_GHz = 2.0\nall_core_GHz = 3.0\ntdp_W = 200\n')
#: collectives and storage reads that the host stacks pay for: NVMe/TCP, software encryption
HEAVY = {"storage_transport": "tcp", "encryption": True}


def resnet_design(dpu: str = "", cpu: str = "", servers: int = 4):
    d = rail_optimized(servers=servers, dpu=dpu) if dpu else rail_optimized(servers=servers)
    for c in d.topology.servers():
        if cpu:
            d.topology.set_prop(c.id, "cpu_model", cpu)
    d.workload = {"preset": "resnet50-imagenet"}
    return d


@pytest.fixture
def small_cpu_catalog(tmp_path):
    (tmp_path / "cpu.toml").write_text(SMALL_CPU)
    cat = load_catalog(extra_dirs=[tmp_path])
    assert cat.problems == [] and cat.get("cpu", "small-24c")["cores"] == 24
    return cat


def loading_group(result) -> dict:
    (g,) = result.resources["groups"]
    return g


# ----------------------------------------------------------------------------------------------
# the workload figure


def test_every_preset_has_a_sourced_preprocessing_figure():
    for w in CAT.workloads():
        assert w["preprocess_core_s_per_sample"] > 0, w["id"]
        assert len(CAT.source_of("workload", w["id"], "preprocess_core_s_per_sample")) > 40, w["id"]
    # decoding a JPEG costs more host CPU per sample than slicing pre-tokenized ids
    vision = {w["id"]: w["preprocess_core_s_per_sample"] for w in CAT.workloads("vision")}
    assert min(vision.values()) > max(w["preprocess_core_s_per_sample"]
                                      for w in CAT.workloads("transformer"))


@pytest.mark.parametrize("value, message", [
    (-0.001, "at least 0"),
    ("3 ms", "finite number"),
    (float("nan"), "finite number"),
    (True, "finite number"),
    (120.0, "give seconds"),
])
def test_bad_preprocessing_values_are_refused_with_a_message(value, message):
    with pytest.raises(UsageError, match=message) as info:
        from_dict({"kind": "vision", "samples_per_s_per_gpu": 100.0,
                   "preprocess_core_s_per_sample": value}, total_gpus=8)
    assert "preprocess_core_s_per_sample" in str(info.value)


def test_workload_keeps_the_figure_in_its_dict():
    w = from_dict({"kind": "vision", "samples_per_s_per_gpu": 100.0,
                   "preprocess_core_s_per_sample": 0.002}, total_gpus=8)
    assert w.to_dict()["preprocess_core_s_per_sample"] == 0.002


def test_bad_value_on_the_command_line_is_one_line(tmp_path, capsys):
    path = tmp_path / "r.json"
    save(resnet_design(), path)
    for value, words in (("-1", "preprocess_core_s_per_sample"), ("500", "give seconds")):
        capsys.readouterr()
        assert main(["run", str(path), "--set", f"workload.preprocess_core_s_per_sample={value}"]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err


# ----------------------------------------------------------------------------------------------
# cores for the loaders


def test_loaders_get_the_cores_the_training_processes_and_stacks_leave():
    # 8 GPUs, 112 cores at 3 GHz; 40 GB of encrypted collectives per 2 s iteration: host-managed,
    # software AES-GCM and the kernel TCP path they force
    g = ServerGroup(gpus=8, cpu_cores=112, cpu_GHz=3.0, rdma_bytes=40e9, comm_s=1.0, encrypt=True)
    inp = ResourceInputs(groups=(g,), iteration_s=2.0, samples_per_iteration=1000,
                         preprocess_core_s_per_sample=0.1)
    host = assess(inp, FIG).groups[0]
    cycles = 40e9 * (FIG["tcp_cycles_per_byte"] + FIG["aes_gcm_cycles_per_byte"])
    infra = cycles / (2.0 * 3e9)  # cores over the iteration
    assert host.infra_cores == pytest.approx(infra)
    assert host.training_cores == 8 * FIG["training_process_cores_per_gpu"]
    assert host.load_cores_free == pytest.approx(112 - host.training_cores - infra)
    assert host.load_cores_needed == pytest.approx(1000 * 0.1 / 2.0)
    # the DPU runs the stacks: their cores go to the loaders
    off = assess(replace(inp, groups=(replace(g, scenario="dpu", dpus=8),)), FIG).groups[0]
    assert off.infra_cores == 0.0 and off.load_cores_free == pytest.approx(112 - host.training_cores)


def test_loaders_short_of_cores_stall_the_step_by_the_missing_share():
    # loaders need 60 cores over a 1 s step, 40 are free: the load takes 1.5 s, the step waits 0.5 s
    g = ServerGroup(gpus=8, cpu_cores=48, cpu_GHz=3.0)
    inp = ResourceInputs(groups=(g,), iteration_s=1.0, samples_per_iteration=600,
                         preprocess_core_s_per_sample=0.1)
    r = assess(inp, FIG)
    assert r.groups[0].load_cores_free == pytest.approx(40.0)
    assert r.data_stall_s == pytest.approx(60 / 40 - 1.0)
    assert r.groups[0].stall_cause == "data loading"
    (text,) = [b for b in r.bottlenecks if "data stall" in b]
    assert "host CPU data loading" in text and "needs 60.0 cores" in text and "40.0 are free" in text
    assert "more CPU cores" in text and "DALI" in text
    # enough cores: no stall
    assert assess(replace(inp, groups=(replace(g, cpu_cores=68),)), FIG).data_stall_s == 0.0


def test_resnet50_on_few_cores_stalls_host_managed_more_than_offloaded(small_cpu_catalog):
    cat = small_cpu_catalog
    host = pipeline.run(resnet_design(cpu="small-24c"), cat, scenario={"offload": "host", **HEAVY})
    off = pipeline.run(resnet_design("bluefield-3", cpu="small-24c"), cat,
                       scenario={"offload": "dpu", **HEAVY})
    h, o = loading_group(host), loading_group(off)
    # the DPU takes the stacks' cores off the host and hands them to the loaders
    assert h["infra_cores"] > o["infra_cores"] and o["load_cores_free"] > h["load_cores_free"]
    assert h["load_cores_needed"] > h["load_cores_free"]
    assert host.breakdown_s["data_stall"] > 0
    assert off.breakdown_s["data_stall"] < host.breakdown_s["data_stall"]
    (text,) = [b for b in host.bottlenecks if "host CPU data loading" in b]
    assert f"needs {h['load_cores_needed']:.1f} cores" in text and f"{h['load_cores_free']:.1f} are free" in text
    assert "offloading the network and storage stacks" in text and "DALI" in text
    # the same job on the 112-core Xeons of a DGX H100 does not wait for its loaders
    big = pipeline.run(resnet_design(), CAT, scenario={"offload": "host", **HEAVY})
    assert big.breakdown_s["data_stall"] == 0.0
    assert not any("host CPU data loading" in b for b in big.bottlenecks)


@pytest.mark.parametrize("preset", ["megatron-gpt-1.7b", "llama3-8b", "gpt3-175b"])
def test_llm_presets_barely_load_the_host(preset):
    d = rail_optimized(servers=16)
    r = pipeline.run(d, CAT, workload=preset)
    zero = pipeline.run(d, CAT, workload={"preset": preset, "preprocess_core_s_per_sample": 0.0})
    assert r.breakdown_s["data_stall"] == 0.0
    assert r.iteration_time_s == pytest.approx(zero.iteration_time_s, rel=1e-3)
    assert r.host_cpu["by_task"]["data_loading"] < 1e-3


# ----------------------------------------------------------------------------------------------
# storage transport and GPUDirect Storage


def run_json(capsys, path, *sets):
    capsys.readouterr()
    args = ["run", str(path), "--json"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def unet_files(tmp_path):
    """3D U-Net (3 GB/s of reads per H100) on a NIC design and on a BlueField-3 design."""
    paths = {}
    for name, dpu in (("nic", ""), ("dpu", "bluefield-3")):
        d = rail_optimized(servers=4, dpu=dpu) if dpu else rail_optimized(servers=4)
        d.workload = {"preset": "unet3d-kits19"}
        paths[name] = tmp_path / f"unet-{name}.json"
        save(d, paths[name])
    return paths


def test_nvme_tcp_costs_host_cycles_that_rdma_does_not(unet_files, capsys):
    rdma = run_json(capsys, unet_files["nic"])
    tcp = run_json(capsys, unet_files["nic"], "scenario.storage_transport=tcp")
    assert tcp["host_cpu"]["infra_fraction"] > rdma["host_cpu"]["infra_fraction"]
    assert tcp["host_cpu"]["by_task"]["storage"] > rdma["host_cpu"]["by_task"]["storage"]
    # with the DPU's storage emulation the host sees a local NVMe device: the NVMe/TCP initiator
    # runs on the DPU and the host pays the same cycles per iteration either way (shares of
    # iterations of different lengths); the DPU's Arm cores carry the TCP bytes instead
    off = ["scenario.offload=dpu"]
    off_rdma = run_json(capsys, unet_files["dpu"], *off)
    off_tcp = run_json(capsys, unet_files["dpu"], *off, "scenario.storage_transport=tcp")
    cycles = lambda r: r["host_cpu"]["by_task"]["storage"] * r["iteration_time_s"]
    assert cycles(off_tcp) == pytest.approx(cycles(off_rdma))
    assert off_tcp["dpu"]["arm"] > off_rdma["dpu"]["arm"]


def test_gpudirect_storage_removes_the_bounce_copy():
    # 8 GB per 2 s iteration over NVMe-oF/RDMA: GDS saves exactly one copy of every byte
    g = ServerGroup(gpus=8, cpu_cores=112, cpu_GHz=3.0)
    inp = ResourceInputs(groups=(g,), iteration_s=2.0, samples_per_iteration=8, sample_bytes=1e9,
                         storage_read_GBps=1000)
    bounce = assess(inp, FIG)
    direct = assess(replace(inp, groups=(replace(g, gpudirect_storage=True),)), FIG)
    saved = bounce.groups[0].host_by_task["storage"] - direct.groups[0].host_by_task["storage"]
    assert saved == pytest.approx(8e9 * FIG["bounce_copy_cycles_per_byte"] / (2.0 * 3e9))
    assert direct.groups[0].gpudirect_storage and direct.warnings == []


def test_gpudirect_storage_through_the_cli(unet_files, capsys):
    # 3D U-Net read with a GPU-side loader (no host decode): GDS in effect, storage share falls
    gpu_loader = "workload.preprocess_core_s_per_sample=0"
    plain = run_json(capsys, unet_files["nic"], gpu_loader)
    gds = run_json(capsys, unet_files["nic"], gpu_loader, "scenario.gpudirect_storage=true")
    assert gds["resources"]["groups"][0]["gpudirect_storage"] and gds["resources"]["warnings"] == []
    assert gds["host_cpu"]["by_task"]["storage"] < plain["host_cpu"]["by_task"]["storage"]


@pytest.mark.parametrize("sets, why", [
    (["scenario.storage_transport=tcp"], "NVMe/TCP"),
    (["scenario.encryption=true"], "encryption"),
    ([], "decodes its samples on the host CPU"),
])
def test_gpudirect_storage_the_path_cannot_carry_warns_and_falls_back(unet_files, capsys, sets, why):
    gpu_loader = [] if why.startswith("decodes") else ["workload.preprocess_core_s_per_sample=0"]
    without = run_json(capsys, unet_files["nic"], *gpu_loader, *sets)
    asked = run_json(capsys, unet_files["nic"], *gpu_loader, *sets, "scenario.gpudirect_storage=true")
    (warning,) = asked["resources"]["warnings"]
    assert "GPUDirect Storage" in warning and why in warning and "bounce buffer" in warning
    assert not asked["resources"]["groups"][0]["gpudirect_storage"]
    # fallen back: the host pays the bounce copy as without GDS
    assert asked["host_cpu"]["by_task"]["storage"] == pytest.approx(without["host_cpu"]["by_task"]["storage"])


def test_gpudirect_storage_without_rdma_adapters_warns():
    g = ServerGroup(gpus=8, rdma=False, gpudirect_storage=True)
    r = assess(ResourceInputs(groups=(g,), iteration_s=1.0, samples_per_iteration=8, sample_bytes=1e8,
                              storage_read_GBps=100), FIG)
    assert not r.groups[0].gpudirect_storage
    assert any("no RDMA" in w for w in r.warnings)


# ----------------------------------------------------------------------------------------------
# host-managed vs DPU-offloaded


@pytest.fixture
def small_cpu_cli(tmp_path, monkeypatch):
    """The CLI's catalog with the 48-core CPU added (the user catalog folder of the environment)."""
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "cpu.toml").write_text(SMALL_CPU)
    monkeypatch.setenv("DPU_DESIGNER_CATALOG", str(folder))
    reload_catalog()
    yield tmp_path
    monkeypatch.undo()
    reload_catalog()


def test_compare_names_the_cores_offloading_gives_the_loaders(small_cpu_cli, capsys):
    path = small_cpu_cli / "small.json"
    save(resnet_design(cpu="small-24c"), path)
    args = ["compare", str(path), "--set", "scenario.storage_transport=tcp",
            "--set", "scenario.encryption=true"]
    capsys.readouterr()
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    h, o = (data[k]["resources"]["groups"][0] for k in ("host", "dpu"))
    (line,) = [r for r in data["reasons"] if r.startswith("host CPU data loading")]
    assert f"{h['load_cores_free']:.1f} free" in line and f"{o['load_cores_free']:.1f} free" in line
    assert f"{h['infra_cores']:.1f} → {o['infra_cores']:.1f} cores" in line
    # the data stall differs, and its reason names the loaders in both runs
    assert data["deltas"]["breakdown_s"]["data_stall"]["delta"] < 0
    (stall,) = [r for r in data["reasons"] if r.startswith("data_stall")]
    assert stall.count("host CPU data loading") == 2 and "remedies" not in stall
    # the infrastructure line names only the stacks the DPU took over, not the loaders
    (infra,) = [r for r in data["reasons"] if r.startswith("host CPU infrastructure share")]
    assert "data_loading" not in infra
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "loader cores need/free" in text
    assert f"{h['load_cores_needed']:.1f}/{h['load_cores_free']:.1f}" in text
