"""User catalog files are hostile input: every bad file is skipped with one line naming the file
(and the entry and figure) and the packaged catalog goes on; nothing raises, blocks or hangs."""

from __future__ import annotations

import math
import os
import shutil
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.cli import main
from designer.topology import catalog as catmod
from designer.topology.catalog import load_catalog

PACKAGED = load_catalog(extra_dirs=[])


def problems_of(folder) -> dict[str, str]:
    cat = load_catalog(extra_dirs=[folder])
    assert cat.ids("gpu")[: len(PACKAGED.ids("gpu"))] == PACKAGED.ids("gpu")  # packaged entries kept
    return {p.file.name: p.message for p in cat.problems}


def one_problem(folder, name: str) -> str:
    found = problems_of(folder)
    assert list(found) == [name], found
    message = found[name]
    assert "\n" not in message and message.endswith("(file skipped)")
    return message


def load_in_thread(folder, seconds: float = 20.0):
    """Load in a thread so that a blocking open (a FIFO) fails the test instead of hanging it."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(load_catalog(extra_dirs=[folder])), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, "loading the catalog blocked"
    return out[0]


# -- one test per class ------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "a = " + "[" * 5000 + "]" * 5000,                       # arrays nested past Python's recursion limit
    "a = " + "{b = " * 3000 + "1" + "}" * 3000,              # inline tables likewise
    "[" + ".".join(["x"] * 20000) + "]\n",                   # a dotted header that tomllib parses in O(n^2)
    ".".join(["x"] * 20000) + " = 1\n",
])
def test_deep_nesting_is_refused_quickly(tmp_path, text):
    (tmp_path / "gpu.toml").write_text(text)
    assert "nested" in one_problem(tmp_path, "gpu.toml")


def test_bad_utf8_names_the_line(tmp_path):
    (tmp_path / "gpu.toml").write_bytes(b'[[entry]]\nid = "x"\nname = "\xff\xfe"\n')
    message = one_problem(tmp_path, "gpu.toml")
    assert "not UTF-8" in message and "line 3" in message


@pytest.mark.parametrize("figure, value, expect", [
    ("bf16_dense_tflops", '"fast"', "must be a number"),
    ("nvlink_gen", "true", "must be a number"),
    ("memory_GB", "[80, 40]", "single number"),
    ("memory_GB", "{ a = 1 }", "single number"),
    ("tdp_W", "-700", "negative"),
    ("tdp_W", "nan", "finite"),
    ("tdp_W", "inf", "finite"),
    ("tdp_W", "-inf", "finite"),
    ("memory_GB", "1e300", "beyond"),
])
def test_wrong_figures_name_entry_and_figure(tmp_path, figure, value, expect):
    (tmp_path / "gpu.toml").write_text(f'[[entry]]\nid = "mine"\nname = "Mine"\n{figure} = {value}\n')
    message = one_problem(tmp_path, "gpu.toml")
    assert "entry 1 (id 'mine')" in message and figure in message and expect in message


@pytest.mark.parametrize("kind, text, expect", [
    ("dpu", "power_W = -150", "at least 0 W"),                  # a component figure below its range
    ("switch", "power_W = nan", "finite"),
    ("server", 'gpu_count = "8"', "integer"),
    ("workloads", 'kind = "transformer"\nlayers = -3', "layers"),
    ("workloads", 'kind = "transformer"\ntp = 2.5', "tp"),
])
def test_component_and_workload_figures(tmp_path, kind, text, expect):
    (tmp_path / f"{kind}.toml").write_text(f'[[entry]]\nid = "bad"\nname = "Bad"\n{text}\n')
    assert expect in one_problem(tmp_path, f"{kind}.toml")


def test_fifo_in_the_folder_is_skipped_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "gpu.toml")
    cat = load_in_thread(tmp_path)
    assert [p.file.name for p in cat.problems] == ["gpu.toml"]
    assert "FIFO" in cat.problems[0].message


def test_devices_and_huge_files(tmp_path):
    (tmp_path / "cpu.toml").symlink_to("/dev/zero")
    (tmp_path / "nic.toml").write_text("# " + "x" * (catmod.MAX_USER_FILE_BYTES + 10) + "\n")
    found = {p.file.name: p.message for p in load_in_thread(tmp_path).problems}
    assert "is a device" in found["cpu.toml"]
    assert "more than the" in found["nic.toml"] and "allowed" in found["nic.toml"]


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "file"])
def test_env_catalog_that_is_not_a_folder(tmp_path, monkeypatch, target):
    path = "/dev/zero"
    if target == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    elif target == "file":
        path = str(tmp_path / "gpu.toml")
        (tmp_path / "gpu.toml").write_text("")
    monkeypatch.setenv("DPU_DESIGNER_CATALOG", path)
    out: list = []
    worker = threading.Thread(target=lambda: out.append(catmod._build(None)), daemon=True)
    worker.start()
    worker.join(20)
    assert out, "blocked"
    messages = [str(p) for p in out[0].problems if str(p.file) == path]
    assert len(messages) == 1 and "is not a folder" in messages[0]


def test_cli_warns_and_goes_on_with_the_packaged_catalog(tmp_path, monkeypatch, capsys):
    (tmp_path / "gpu.toml").write_text('[[entry]]\nid = "mine"\nname = "Mine"\ntdp_W = -1\n')
    monkeypatch.setenv("DPU_DESIGNER_CATALOG", str(tmp_path))
    monkeypatch.setattr(catmod, "_cached", None)
    try:
        assert main(["catalog", "gpu"]) == 0
        captured = capsys.readouterr()
        lines = [l for l in captured.err.splitlines() if l]
        assert len(lines) == 1 and lines[0].startswith("warning: ") and "gpu.toml" in lines[0]
        assert "tdp_W" in lines[0] and "mine" not in captured.out.split()
        assert "h100-sxm" in captured.out
    finally:
        catmod._cached = None


def test_packaged_files_pass_as_user_files(tmp_path):
    """The user checks accept everything the packaged catalog holds (no false alarms)."""
    models = catmod.paths.models_dir()
    for f in (models / "hardware").glob("*.toml"):
        shutil.copy(f, tmp_path / f.name)
    for f in (models / "workloads").glob("*.toml"):
        shutil.copy(f, tmp_path / f"workloads-{f.name}")
    assert problems_of(tmp_path) == {}


# -- fuzz --------------------------------------------------------------------------------------
_scalar = st.one_of(
    st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=20),
)
_value = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(min_size=1, max_size=5), inner, max_size=3)),
                      max_leaves=8)
_FIGURES = ["memory_GB", "tdp_W", "bf16_dense_tflops", "ports", "port_speed_Gbps", "gpu_count", "power_W",
            "medium", "tier", "kind", "layers", "tp", "rack_units", "sources", "source", "name", "id", "x"]


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return '"' + "".join(c if c.isalnum() or c in " -_." else f"\\u{ord(c):04x}" for c in v
                             if not 0xD800 <= ord(c) <= 0xDFFF) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()
                           if all(0xD800 > ord(c) or ord(c) > 0xDFFF for c in k)
                           and all(c not in '"\\' and ord(c) >= 32 for c in k)) + "}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["gpu", "cpu", "server", "dpu", "nic", "switch", "storage", "rack", "workloads"]),
       entries=st.lists(st.dictionaries(st.sampled_from(_FIGURES), _value, max_size=6), min_size=0, max_size=3))
def test_fuzz_user_catalog_entries(tmp_path_factory, kind, entries):
    folder = tmp_path_factory.mktemp("cat")
    text = "".join("[[entry]]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in e.items()) for e in entries)
    (folder / f"{kind}.toml").write_text(text)
    cat = load_catalog(extra_dirs=[folder])
    for p in cat.problems:
        assert "\n" not in p.message and p.file.name == f"{kind}.toml"
    if not cat.problems:  # accepted: every figure is one the engine can use
        name = catmod.WORKLOAD if kind == "workloads" else kind
        for e in cat.entries(name):
            for k, v in e.items():
                if k in ("sources",):
                    continue
                assert not isinstance(v, (list, dict))
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    assert math.isfinite(v) and v >= 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_fuzz_user_catalog_bytes(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("bytes")
    (folder / "nic.toml").write_bytes(data)
    cat = load_catalog(extra_dirs=[folder])
    assert all("\n" not in p.message for p in cat.problems)
    assert cat.ids("nic")[: len(PACKAGED.ids("nic"))] == PACKAGED.ids("nic")


@pytest.mark.parametrize("command", [["run", "{design}", "--json"], ["collective", "{design}", "--max", "1K"]])
def test_commands_warn_once_about_a_skipped_user_file(tmp_path, monkeypatch, capsys, command):
    from designer.paths import resources_dir

    design = str(resources_dir() / "examples" / "example.json")
    (tmp_path / "cpu.toml").write_bytes(b"\xff\xfe not text")
    monkeypatch.setenv("DPU_DESIGNER_CATALOG", str(tmp_path))
    monkeypatch.setattr(catmod, "_cached", None)
    try:
        assert main([a.format(design=design) for a in command]) == 0
        err = [l for l in capsys.readouterr().err.splitlines() if l]
        assert len(err) == 1 and err[0].startswith("warning: user catalog ") and "cpu.toml" in err[0]
        assert "not UTF-8" in err[0]
    finally:
        catmod._cached = None
