"""SIGKILL during save and during autosave: the file on disk is the old or the new version, never a
mix, and the recovery file brings the work back on the next start.

A child process saves (or autosaves) two versions of a 3,000-component design and is killed with
SIGKILL, either at seeded random moments or at a chosen step of the save (mid-write, at fsync, just
before and just after the rename). ``--run-slow`` kills it many more times.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from designer.gui import recovery
from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

ROOT = Path(__file__).resolve().parent.parent

#: the child: loads versions A and B, then saves/autosaves them as ``mode`` says (see the tests)
CHILD = r"""
import os, pathlib, signal, sys, time
from designer.gui import recovery
from designer.topology import fileformat

mode, target, ref_a, ref_b = sys.argv[1:5]
versions = [fileformat.load(ref_a), fileformat.load(ref_b)]

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def die_after(fn):
    def wrapper(*args, **kwargs):
        fn(*args, **kwargs)
        die()
    return wrapper

class HalfWriter:
    def __init__(self, fh):
        self.fh = fh
    def write(self, data):
        self.fh.write(data[: len(data) // 2])
        self.fh.flush()
        die()
    def __getattr__(self, name):
        return getattr(self.fh, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.fh.close()

class SlowDisk:
    # writes in 4 kB chunks with a pause after each: the temporary file lives long enough for
    # most random kills to land while it is being written
    def __init__(self, fh):
        self.fh = fh
    def write(self, data):
        for start in range(0, len(data), 4096):
            self.fh.write(data[start:start + 4096])
            self.fh.flush()
            time.sleep(0.0005)
    def __getattr__(self, name):
        return getattr(self.fh, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.fh.close()

def half_write_text(path, text, *args, **kwargs):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text[: len(text) // 2])
    die()

autosaver = recovery.Autosaver()
store = (lambda d: fileformat.save(d, target)) if mode.startswith("save") else (
    lambda d: autosaver.write(d, target))
store(versions[0])
print("ready", flush=True)
import builtins
from designer import safeio  # the one atomic write (fileformat.save goes through it)
real_open = builtins.open

def writing(wrap):
    # safeio opens its temporary with open(tmp, "wb"); only that open is wrapped
    return lambda f, m="r", *a, **k: wrap(real_open(f, m, *a, **k)) if "w" in m else real_open(f, m, *a, **k)

if mode == "save-loop":
    safeio.open = writing(SlowDisk)
if mode.endswith("loop"):
    i = 1
    while True:
        store(versions[i % 2])
        i += 1
step = mode.split(":")[1]
if step == "write":
    safeio.open = writing(HalfWriter)
    pathlib.Path.write_text = half_write_text
elif step == "fsync":
    os.fsync = die
elif step == "replace":
    os.replace = die
elif step == "after_replace":
    os.replace = die_after(os.replace)
store(versions[1])
print("not killed", flush=True)
"""


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """Two versions of a 256-server rail design (3,039 components, 0.8 MB), saved as references."""
    folder = tmp_path_factory.mktemp("versions")
    a = rail_optimized(servers=256, dpu="bluefield-3", catalog=load_catalog())
    b = a.copy()
    b.name = "version B"
    for server in b.topology.servers()[::3]:
        b.topology.set_prop(server.id, "gpu_count", 4)
    paths = folder / "a.json", folder / "b.json"
    for design, path in zip((a, b), paths):
        fileformat.save(design, path)
    return paths


def _child(mode: str, target: Path, versions, config: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(config)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode, str(target), *map(str, versions)],
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline() == "ready\n"
    return proc


def _killed(proc: subprocess.Popen, delay: float) -> None:
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL


def _only_recovery_file(config: Path, monkeypatch) -> recovery.Recovered:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    files = recovery.leftovers()
    assert len(files) == 1, files
    return recovery.read(files[0])


def _kill_saves_at_random(tmp_path, versions, kills: int, seed: int) -> None:
    texts = {p.read_bytes() for p in versions}
    target = tmp_path / "design.json"
    rng = random.Random(seed)
    mid_write = 0
    for _ in range(kills):
        before = set(tmp_path.iterdir())
        _killed(_child("save-loop", target, versions, tmp_path), rng.uniform(0.0, 0.5))
        assert target.read_bytes() in texts
        fileformat.load(target)
        mid_write += len(set(tmp_path.iterdir()) - before)
    assert mid_write >= 1  # some kills did land while the new version was being written
    # what a kill leaves behind is a hidden temporary file, never a damaged target
    assert {p.name for p in tmp_path.iterdir() if not p.name.startswith(".")} == {"design.json"}
    assert all(p.name.startswith(".design.json.") and ".tmp" in p.suffixes  # safeio: .tmp + the extension
               for p in tmp_path.iterdir() if p.name.startswith("."))


def _kill_autosaves_at_random(tmp_path, versions, monkeypatch, kills: int, seed: int) -> None:
    designs = [fileformat.load(p) for p in versions]
    rng = random.Random(seed)
    for i in range(kills):
        config = tmp_path / f"config-{i}"
        _killed(_child("autosave-loop", tmp_path / "design.json", versions, config), rng.uniform(0.0, 0.3))
        found = _only_recovery_file(config, monkeypatch)
        assert found.design in designs and found.original == str(tmp_path / "design.json")


def test_sigkill_during_save_leaves_old_or_new(tmp_path, versions):
    _kill_saves_at_random(tmp_path, versions, kills=5, seed=1)


@pytest.mark.slow
def test_sigkill_during_save_leaves_old_or_new_long(tmp_path, versions):
    _kill_saves_at_random(tmp_path, versions, kills=60, seed=2)


@pytest.mark.parametrize("step, survivor", [("write", 0), ("fsync", 0), ("replace", 0), ("after_replace", 1)])
def test_sigkill_at_each_step_of_save(tmp_path, versions, step, survivor):
    target = tmp_path / "design.json"
    proc = _child(f"save:{step}", target, versions, tmp_path)
    assert proc.wait(timeout=60) == -signal.SIGKILL and proc.stdout.read() == ""
    assert target.read_bytes() == versions[survivor].read_bytes()


def test_sigkill_during_autosave_recovers_the_work(tmp_path, versions, monkeypatch):
    _kill_autosaves_at_random(tmp_path, versions, monkeypatch, kills=3, seed=3)


@pytest.mark.slow
def test_sigkill_during_autosave_recovers_the_work_long(tmp_path, versions, monkeypatch):
    _kill_autosaves_at_random(tmp_path, versions, monkeypatch, kills=40, seed=4)


@pytest.mark.parametrize("step, survivor", [("write", 0), ("replace", 0), ("after_replace", 1)])
def test_sigkill_at_each_step_of_autosave(tmp_path, versions, monkeypatch, step, survivor):
    config = tmp_path / "config"
    proc = _child(f"autosave:{step}", tmp_path / "design.json", versions, config)
    assert proc.wait(timeout=60) == -signal.SIGKILL and proc.stdout.read() == ""
    found = _only_recovery_file(config, monkeypatch)
    assert found.design == fileformat.load(versions[survivor])
    assert found.original == str(tmp_path / "design.json")
