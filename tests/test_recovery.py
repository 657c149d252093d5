"""The recovery file: written like a design file, never raising from the autosave timer."""

import math
import os
import subprocess
import sys

from designer.gui import recovery
from designer.topology import fileformat
from designer.topology.design import Design
from designer.topology.model import Component


def _design(name="recovered"):
    d = Design(name=name)
    d.topology.add_component(Component("sw-1", "switch", "qm9700", pos=(10.0, 20.0)))
    return d


def test_recovery_file_round_trips_with_its_origin(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    saver = recovery.Autosaver()
    assert saver.write(_design(), "/somewhere/x.json") is None
    got = recovery.read(saver.file)
    assert got.original == "/somewhere/x.json"
    assert got.design == _design() and "recovery_of" not in got.design.meta


def test_an_unsaveable_design_is_reported_not_raised_and_keeps_the_old_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    saver = recovery.Autosaver()
    assert saver.write(_design("good"), None) is None
    bad = _design("good")
    bad.topology.set_prop("sw-1", "latency_ns", math.nan)
    message = saver.write(bad, None)
    assert message and "cannot be saved" in message
    assert recovery.read(saver.file).design.name == "good"


def test_leftovers_are_files_of_dead_processes_and_their_stale_temp_files_go(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    folder = recovery.recovery_dir()
    folder.mkdir(parents=True)
    fileformat.save(_design(), folder / f"autosave-{pid}-1.json")
    stale = folder / f".autosave-{pid}-1.json.abc123.tmp"
    stale.write_text("{half a fil")
    mine = folder / f"autosave-{os.getpid()}-99.json"
    fileformat.save(_design(), mine)
    found = recovery.leftovers()
    assert found == [folder / f"autosave-{pid}-1.json"]
    assert not stale.exists() and mine.exists()
