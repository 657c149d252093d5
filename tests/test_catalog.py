"""Catalog data integrity, user catalogs, resolve() precedence and the ``catalog`` command."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from designer.cli import main
from designer.topology import kinds
from designer.topology.catalog import ALL_KINDS, HARDWARE_KINDS, load_catalog

CAT = load_catalog()


def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- data integrity ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ALL_KINDS)
def test_every_numeric_figure_has_a_source(kind):
    assert CAT.ids(kind), f"no {kind} entries"
    for e in CAT.entries(kind):
        for field, value in e.items():
            if _numeric(value):
                assert CAT.source_of(kind, e["id"], field).strip(), f"{kind} {e['id']}.{field}"


@pytest.mark.parametrize("kind", ["dpu", "nic", "switch", "storage", "rack"])
def test_component_entries_use_only_kind_fields(kind):
    comp_kind = {v: k for k, v in kinds.CATALOG_KIND.items()}[kind]
    allowed = {s.name for s in kinds.FIELDS[comp_kind]} | {"id", "name", "source", "sources"}
    for e in CAT.entries(kind):
        assert set(e) <= allowed, f"{e['id']}: unknown fields {set(e) - allowed}"


def test_server_entries_fill_every_gpu_server_field_and_reference_existing_ids():
    fields = {s.name for s in kinds.FIELDS["gpu_server"]} - set(kinds.PRICE_FIELDS)  # prices: prices.toml
    refs = {"gpu_model": "gpu", "cpu_model": "cpu", "nic_model": "nic", "dpu_model": "dpu"}
    for e in CAT.entries("server"):
        assert fields <= set(e), f"{e['id']} lacks {fields - set(e)}"
        for field, kind in refs.items():
            assert e[field] in CAT.ids(kind), f"{e['id']}.{field} = {e[field]!r}"
        assert e["nic_count"] >= 1 and e["dpu_count"] >= 0


def test_gpu_figures_are_in_sane_ranges():
    for g in CAT.entries("gpu"):
        assert 100 <= g["bf16_dense_tflops"] <= 5000, g["id"]
        assert 0.3 < g["gemm_efficiency"] <= 0.95, g["id"]
        assert g["fp8_dense_tflops"] in (0,) or g["fp8_dense_tflops"] >= g["bf16_dense_tflops"]
        assert g["tf32_dense_tflops"] < g["bf16_dense_tflops"]
        assert 10 <= g["memory_GB"] <= 300 and 1 <= g["memory_bw_TBps"] <= 20
        assert 100 <= g["nvlink_GBps"] <= 1800 and 250 <= g["tdp_W"] <= 1500


def test_network_speeds_are_standard_rates():
    rates = {100, 200, 400, 800}
    for kind in ("nic", "dpu", "switch", "storage"):
        for e in CAT.entries(kind):
            # a management switch's access ports are 1000BASE-T (1 Gb/s), its uplinks 100GbE
            allowed = rates | {1} if kind == "switch" and e.get("uplink_ports") else rates
            assert e["port_speed_Gbps"] in allowed, f"{kind} {e['id']}"
            if e.get("uplink_ports"):
                assert e["uplink_speed_Gbps"] in rates, f"{kind} {e['id']}"
    for kind in ("nic", "dpu"):
        for e in CAT.entries(kind):
            assert e["port_speed_Gbps"] <= e["max_bandwidth_Gbps"] <= e["ports"] * e["port_speed_Gbps"]


def test_derived_server_power_leaves_a_positive_base():
    # per GPU, what the host CPUs, memory, NVSwitches, fans and power conversion draw: 390 W (DGX A100)
    # to 725 W (DGX B200) for 8-GPU servers, 367/495 W for the NVL72 racks (36 Grace + 9 switch trays)
    for s in CAT.entries("server"):
        assert 100 <= s["base_power_W"] / s["gpu_count"] <= 1000, s["id"]
        assert CAT.source_of("server", s["id"], "base_power_W").startswith("derived:")


def test_transformer_parallelism_is_consistent():
    from designer.engine.workload import PRECISION_PEAK_FIELD

    for w in CAT.workloads("transformer"):
        mp = w["tp"] * w["pp"] * w.get("cp", 1)  # context parallelism splits a replica's sequence
        assert w["gpus"] % mp == 0, w["id"]
        dp = w["gpus"] // mp
        assert w["global_batch"] % (w["micro_batch"] * dp) == 0, w["id"]
        assert w["hidden"] % w["heads"] == 0 and w["heads"] % w["tp"] == 0, w["id"]
        assert w["precision"] in PRECISION_PEAK_FIELD and w.get("interleave", 1) >= 1, w["id"]


def test_published_throughput_matches_published_percent_of_peak():
    """Each reference run: TFLOP/s per GPU / GPU dense peak agrees with the published % of peak."""
    runs = [w for w in CAT.workloads("transformer") if "published_tflops_per_gpu" in w]
    assert len(runs) >= 12  # 10 Megatron Table 1 models, GPT-3, Llama 3 405B
    for w in runs:
        peak = CAT.get("gpu", w["gpu_model"])["bf16_dense_tflops"]
        assert abs(100 * w["published_tflops_per_gpu"] / peak - w["published_percent_peak"]) < 1.0, w["id"]


def test_vision_workloads_name_catalog_gpus():
    vision = CAT.workloads("vision")
    assert {w["id"] for w in vision} >= {"resnet50-imagenet", "unet3d-kits19"}
    gpu_keys = {"samples_per_s_" + g.replace("-", "_") for g in CAT.ids("gpu")}
    for w in vision:
        rates = {k for k in w if k.startswith("samples_per_s_")}
        assert rates and rates <= gpu_keys, w["id"]
        assert w["bytes_per_sample"] > 0


# -- lookups -----------------------------------------------------------------------------------
def test_get_unknown_id_names_close_ids():
    with pytest.raises(KeyError, match="h100-sxm"):
        CAT.get("gpu", "h100")
    with pytest.raises(KeyError, match="unknown catalog kind"):
        CAT.ids("gpus")


def test_returned_entries_are_copies():
    CAT.get("gpu", "h100-sxm")["tdp_W"] = 1
    assert CAT.get("gpu", "h100-sxm")["tdp_W"] == 700


def test_costs_unknown_name_is_a_clear_key_error():
    with pytest.raises(KeyError, match="no cost table 'no-such-table'"):
        CAT.costs("no-such-table")


def test_resolve_precedence_defaults_entry_props():
    nic = SimpleNamespace(kind="nic", model="connectx-7", props={"power_W": 31.0})
    eff = CAT.resolve(nic)
    assert eff["power_W"] == 31.0                     # props win
    assert eff["port_speed_Gbps"] == 400              # catalog entry over the default
    assert "name" not in eff and "sources" not in eff
    bare = SimpleNamespace(kind="switch", model=None, props={"ports": 8})
    assert CAT.resolve(bare) == {**kinds.defaults("switch"), "ports": 8}


def test_resolve_falls_back_to_kind_defaults(tmp_path):
    (tmp_path / "nic.toml").write_text('[[entry]]\nid = "tiny"\nname = "Tiny"\nport_speed_Gbps = 100\n')
    cat = load_catalog(extra_dirs=[tmp_path])
    eff = cat.resolve(SimpleNamespace(kind="nic", model="tiny", props={}))
    assert eff["port_speed_Gbps"] == 100
    assert eff["pcie_lanes"] == kinds.field_spec("nic", "pcie_lanes").default


# -- user catalogs -----------------------------------------------------------------------------
def test_user_catalog_overrides_and_adds(tmp_path, monkeypatch):
    (tmp_path / "gpu.toml").write_text(
        '[[entry]]\nid = "h100-sxm"\nname = "My H100"\nsource = "lab"\nbf16_dense_tflops = 900\n'
        '[[entry]]\nid = "x1"\nname = "X1"\nsource = "lab"\nbf16_dense_tflops = 123\n')
    (tmp_path / "workloads-mine.toml").write_text(
        '[[entry]]\nid = "w1"\nname = "W"\nkind = "vision"\nbytes_per_sample = 10\n')
    monkeypatch.setenv("DPU_DESIGNER_CATALOG", os.pathsep.join(["", str(tmp_path)]))
    cat = load_catalog(extra_dirs=[])
    assert cat.problems == []
    assert cat.get("gpu", "h100-sxm")["bf16_dense_tflops"] == 900
    assert cat.origin("gpu", "h100-sxm") == tmp_path / "gpu.toml"
    assert cat.get("gpu", "x1")["name"] == "X1"
    assert cat.ids("gpu")[:2] == ["a100-80gb", "h100-sxm"]          # replaced in place
    assert cat.workload("w1")["kind"] == "vision"
    assert cat.source_of("gpu", "a100-80gb", "tdp_W") == CAT.source_of("gpu", "a100-80gb", "tdp_W")


def test_user_config_dir_is_read_unless_disabled(tmp_path, monkeypatch):
    folder = tmp_path / "dpu-designer" / "catalog"
    folder.mkdir(parents=True)
    (folder / "rack.toml").write_text('[[entry]]\nid = "r48"\nname = "48U"\nrack_units = 48\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("DPU_DESIGNER_NO_USER_CATALOG", raising=False)
    cat = load_catalog(extra_dirs=[])
    assert cat.get("rack", "r48")["rack_units"] == 48
    assert "user catalog" in cat.source_of("rack", "r48", "rack_units")
    monkeypatch.setenv("DPU_DESIGNER_NO_USER_CATALOG", "1")
    assert "r48" not in load_catalog(extra_dirs=[]).ids("rack")


def test_bad_user_files_are_skipped_and_reported(tmp_path):
    (tmp_path / "nic.toml").write_text('[[entry]]\nid = "broken"\nname = \n')
    (tmp_path / "switch.toml").write_text(
        '[[entry]]\nid = "ok-sw"\nname = "fine"\n[[entry]]\nid = "bad-sw"\nname = "x"\nports = -4\n')
    (tmp_path / "notes.toml").write_text('[[entry]]\nid = "n"\n')
    (tmp_path / "dpu.toml").write_text('title = "no entries"\n')
    (tmp_path / "rack.toml").write_text(
        '[[entry]]\nid = "r"\nname = "r"\n[entry.sources]\nrack_units_typo = "x"\n')
    cat = load_catalog(extra_dirs=[tmp_path, tmp_path / "missing"])
    by_file = {p.file.name: p.message for p in cat.problems}
    assert set(by_file) == {"nic.toml", "switch.toml", "notes.toml", "dpu.toml", "rack.toml", "missing"}
    assert "invalid TOML" in by_file["nic.toml"] and "line 3" in by_file["nic.toml"]
    assert "ports must be" in by_file["switch.toml"] and "bad-sw" in by_file["switch.toml"]
    assert "which kind" in by_file["notes.toml"]
    assert "no [[entry]]" in by_file["dpu.toml"]
    assert "rack_units_typo" in by_file["rack.toml"]
    assert "does not exist" in by_file["missing"]
    assert "ok-sw" not in cat.ids("switch")                          # the whole file is skipped
    assert cat.ids("nic") == CAT.ids("nic")
    assert str(cat.problems[0]).startswith(str(tmp_path))


# -- the catalog command -----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ALL_KINDS)
def test_catalog_command_lists_each_kind(kind, capsys):
    assert main(["catalog", kind]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{kind} ({len(CAT.ids(kind))})")
    for e in CAT.entries(kind):
        assert e["id"] in out and e["name"] in out
    assert "SOURCE" in out


def test_catalog_command_json_and_all_kinds(capsys):
    assert main(["catalog", "gpu", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [g["id"] for g in data] == CAT.ids("gpu")
    assert data[0]["sources"]["gemm_efficiency"].startswith("derived:")
    assert main(["catalog", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == set(ALL_KINDS)
    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n{k} (" in "\n" + out for k in HARDWARE_KINDS)


def test_catalog_command_unknown_kind_is_usage_error(capsys):
    assert main(["catalog", "gpus"]) == 2
    err = capsys.readouterr().err
    assert "unknown kind 'gpus'" in err and "workload" in err and "Traceback" not in err
