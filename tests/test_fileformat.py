"""Design files: exact round trip, atomic save, and clear messages for broken files."""

import copy
import json
import os
from pathlib import Path

import pytest

from designer import safeio
from designer.topology import fileformat
from designer.topology.fileformat import DesignFileError, from_dict, load, loads, save, to_dict
from designer.topology.model import Component
from designer.topology.design import SCENARIO_CHOICES, SCENARIO_DEFAULTS

SAMPLE = Path(__file__).parent / "data" / "design_v1_sample.json"


def sample() -> dict:
    return json.loads(SAMPLE.read_text())


def broken(mutate) -> str:
    data = sample()
    mutate(data)
    with pytest.raises(DesignFileError) as info:
        from_dict(data, "x.json")
    return str(info.value)


def test_v1_sample_loads_and_round_trips_exactly():
    data = sample()
    design = from_dict(data)
    topo = design.topology
    assert len(topo.components) == 8 and len(topo.links) == 4
    assert topo.get("srv-2").props == {"gpu_count": 4} and topo.get("srv-1").pos == (100.0, 300.0)
    assert topo.links["link-5"].lanes == 2 and topo.links["link-3"].b_port == 3
    assert design.scenario["per_server"] == {"srv-2": "host"} and design.workload["tp"] == 2
    # settings added after the sample was written are saved with their defaults; nothing else changes
    assert to_dict(design) == {**data, "scenario": {**SCENARIO_DEFAULTS, **data["scenario"]}}
    # the saved counters keep ids unique: link-4 was deleted once and is not handed out again
    assert topo.new_id("link") == "link-6" and topo.new_id("rack") == "rack-4"


def test_save_load_gives_an_equal_design(tmp_path):
    design = from_dict(sample())
    design.topology.update_component("srv-1", pos=(1.5, -2.25))
    path = tmp_path / "d.json"
    save(design, path)
    again = load(path)
    assert again == design and again.meta == design.meta
    assert again.topology.counters == design.topology.counters
    assert json.loads(path.read_text()) == to_dict(design)


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["components"][2]["props"].update(gpu_count=0),
     "x.json: components[2].props.gpu_count: must be a positive integer"),
    (lambda d: d["components"][2]["props"].update(gpu_count="eight"),
     "components[2].props.gpu_count: must be an integer"),
    (lambda d: d["components"][6]["props"].update(tier="middle"),
     "components[6].props.tier: must be one of leaf, spine, core"),
    (lambda d: d["components"][1].update(slot="top"), "components[1].slot: must be an integer"),
    (lambda d: d["components"][1].pop("model"), "components[1]: missing field 'model'"),
    (lambda d: d["components"][1].update(kind="toaster"), "components[1].kind: must be one of rack"),
    (lambda d: d["components"][1].update(colour="red"), "components[1]: unknown field 'colour'"),
    (lambda d: d["components"][1]["props"].update(gpu_cont=8) if "props" in d["components"][1]
     else d["components"][1].update(props={"gpu_cont": 8}),
     "components[1].props.gpu_cont: a gpu_server has no field 'gpu_cont'"),
    (lambda d: d["links"][0].update(b="sw-404"), "links[0].b: names no component 'sw-404'"),
    (lambda d: d["links"][0].update(speed_Gbps=-1), "links[0].speed_Gbps: must be at least"),
    (lambda d: d["links"][1].update(id="link-1"), "links[1].id: duplicate id 'link-1' (also links[0])"),
    (lambda d: d["components"][3].update(id="srv-1"), "components[3].id: duplicate id 'srv-1'"),
    (lambda d: d["components"][3].update(parent="rack-1"),
     "components[3].parent: a DPU belongs in a GPU server, not in a Rack"),
    (lambda d: d["components"][0].update(parent="rack-1"), "components[0].parent: a rack is not placed"),
    (lambda d: d.update(scenario={"offload": "gpu"}),
     "scenario.offload: must be one of " + ", ".join(SCENARIO_CHOICES["offload"])),
    (lambda d: d.update(scenario={"checkpoint_interval_s": -1}),
     "scenario.checkpoint_interval_s: must be at least 0 (0: no checkpoints)"),
    (lambda d: d.update(scenario={"seed": -3}), "scenario.seed: must be at least 0"),
    (lambda d: d.update(scenario={"seed": 2**31}), "scenario.seed: must be at most 2147483647"),
    (lambda d: d.update(workload={"precision": ["bf16"]}),
     "x.json: workload.precision: must be one of bf16, fp16, fp8, fp32, tf32"),
    (lambda d: d.update(workload={"tp": "eight"}), "workload.tp: must be an integer"),
    (lambda d: d.update(workload={"recompute": 1}), "workload.recompute: must be true or false"),
    (lambda d: d.update(workload={"tokens": -5}), "workload.tokens: must be at least 0"),
    (lambda d: d.pop("links"), "x.json: missing field 'links'"),
    (lambda d: d.update(format="something-else"), "format: not a design file"),
])
def test_broken_files_name_the_json_path(mutate, expected):
    assert expected in broken(mutate)


def test_parent_loop_is_reported():
    def loop(d):
        d["components"][0]["parent"] = "srv-1"  # rack inside its own server
    msg = broken(loop)
    assert "placement loops: rack-1 -> srv-1 -> rack-1" in msg


def test_several_errors_listed_with_a_count():
    def many(d):
        for c in d["components"][1:6]:
            c["model"] = 5
    data = sample()
    many(data)
    with pytest.raises(DesignFileError) as info:
        from_dict(data, "x.json")
    assert len(info.value.errors) == 5 and info.value.path == "components[1].model"
    assert str(info.value).endswith("(and 2 more problems)")


def test_newer_version_asks_for_an_update():
    msg = broken(lambda d: d.update(version=3))
    assert msg == ("x.json: this file was written by a newer DPU Cluster Designer "
                   "(format version 3; this one reads up to 1) — update the program")


def test_migration_hook_upgrades_old_versions(monkeypatch):
    def v1_to_v2(data):
        data = copy.deepcopy(data)
        data["version"] = 2
        data["name"] += " (migrated)"
        return data

    monkeypatch.setattr(fileformat, "VERSION", 2)
    monkeypatch.setattr(fileformat, "MIGRATIONS", {1: v1_to_v2})
    design = from_dict(sample())
    assert design.name.endswith("(migrated)")


def test_truncated_and_non_json_text_give_line_and_column():
    text = SAMPLE.read_text()
    with pytest.raises(DesignFileError, match=r"^x\.json:\d+:\d+: not valid JSON: the file ends early"):
        loads(text[: len(text) // 2], "x.json")
    with pytest.raises(DesignFileError, match=r"^x\.json:1:1: not valid JSON: Expecting value"):
        loads("<html>not json</html>", "x.json")
    with pytest.raises(DesignFileError, match="top level must be a JSON object"):
        loads("[1, 2]", "x.json")


def test_nan_and_infinity_refused_with_path():
    text = SAMPLE.read_text().replace('"speed_Gbps": 200.0, "lanes": 2', '"speed_Gbps": NaN, "lanes": 2')
    with pytest.raises(DesignFileError, match=r"links\[3\]\.speed_Gbps: NaN is not allowed"):
        loads(text, "x.json")
    text = SAMPLE.read_text().replace('"tp": 2', '"tp": 1e999')
    with pytest.raises(DesignFileError, match=r"workload\.tp: inf is not allowed"):
        loads(text, "x.json")


def test_limits(monkeypatch, tmp_path):
    deep = '{"format": "dpu-cluster-design", "meta": ' + "[" * 40 + "]" * 40 + "}"
    with pytest.raises(DesignFileError, match="nested more than 32 levels"):
        loads(deep, "x.json")
    with pytest.raises(DesignFileError, match="nested more than"):
        loads("[" * 100000 + "]" * 100000, "x.json")
    monkeypatch.setattr(fileformat, "MAX_FILE_BYTES", 100)
    with pytest.raises(DesignFileError, match="reads design files up to 0 MiB"):
        load(SAMPLE)
    with pytest.raises(DesignFileError, match="no such file"):
        load(tmp_path / "missing.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    monkeypatch.setattr(fileformat, "MAX_FILE_BYTES", 64 << 20)
    with pytest.raises(DesignFileError, match="not a text"):
        load(tmp_path / "bin.json")


class _FailingFile:
    """Writes half of what it is given, then fails like a full disk."""

    def __init__(self, fh):
        self.fh = fh

    def write(self, text):
        self.fh.write(text[: len(text) // 2])
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()


def test_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    design = from_dict(sample())
    path = tmp_path / "d.json"
    save(design, path)
    old = path.read_bytes()
    design.topology.update_component("srv-1", name="changed")
    real_open = open  # safeio's atomic write opens its temporary with the builtin open
    monkeypatch.setattr(safeio, "open", lambda *a, **k: _FailingFile(real_open(*a, **k)), raising=False)
    with pytest.raises(DesignFileError, match="disk full while writing .*d.json; nothing was changed"):
        save(design, path)
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]


def test_unsaveable_values_refused(tmp_path):
    design = from_dict(sample())
    design.topology.add_component(Component("nic-9", "nic", "connectx-7", props={"power_W": float("nan")}))
    with pytest.raises(DesignFileError, match="cannot be saved"):
        save(design, tmp_path / "d.json")
    assert not list(tmp_path.iterdir())


def test_zero_checkpoint_interval_means_none_and_loads():
    data = sample()
    data["scenario"] = {"checkpoint_interval_s": 0, "seed": 7.0}
    design = from_dict(data)
    assert design.scenario["checkpoint_interval_s"] == 0
    assert design.scenario["seed"] == 7 and type(design.scenario["seed"]) is int


def test_workload_keys_outside_the_engine_fields_pass():
    data = sample()
    data["workload"] = {"preset": "gpt3-175b", "source": "a paper", "published_tflops_per_gpu": 141,
                        "precision": "fp16"}
    assert from_dict(data).workload["precision"] == "fp16"


def test_save_keeps_the_file_mode_and_a_new_file_follows_the_umask(tmp_path):
    design = from_dict(sample())
    path = tmp_path / "d.json"
    old_mask = os.umask(0o027)
    safeio._umask.cache_clear()  # the umask is read once per process
    try:
        save(design, path)
    finally:
        os.umask(old_mask)
        safeio._umask.cache_clear()
    assert path.stat().st_mode & 0o777 == 0o640  # as open() would make it: 0666 less the umask
    os.chmod(path, 0o644)
    save(design, path)
    assert path.stat().st_mode & 0o777 == 0o644
    os.chmod(path, 0o640)
    save(design, path)
    assert path.stat().st_mode & 0o777 == 0o640
