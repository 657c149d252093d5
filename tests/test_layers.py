"""The layers of docs/ARCHITECTURE.md: the model, the engine and the services stay free of Qt (they
run headless and in worker processes), and no module imports one of a layer above its own
(import-linter's ``layers`` contract in pyproject.toml, run here so that the README's pytest
command, which CI runs, enforces it)."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QT = ("PySide6", "pyqtgraph", "shiboken6")
LAYERS = ("designer/topology", "designer/engine", "designer/services")


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_qt_import_in_source():
    files = [f for layer in LAYERS for f in sorted((ROOT / layer).rglob("*.py"))]
    assert len(files) >= 5
    bad = [(str(f.relative_to(ROOT)), m) for f in files for m in imported_modules(f)
           if m.split(".")[0] in QT]
    assert bad == []


def test_checker_sees_a_qt_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from PySide6.QtCore import QObject\n")
    assert "PySide6.QtCore" in imported_modules(f)


def test_importing_the_layers_loads_no_qt():
    code = (
        "import importlib, pkgutil, sys\n"
        "import designer.topology, designer.engine, designer.services\n"
        "for pkg in (designer.topology, designer.engine, designer.services):\n"
        "    for m in pkgutil.iter_modules(pkg.__path__):\n"
        "        importlib.import_module(pkg.__name__ + '.' + m.name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {QT!r}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def _lint(root: Path, config: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install '.[test]' installs it)")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([exe, str(config), "--no-cache"], cwd=root, capture_output=True, text=True,
                          timeout=300, env=env)


def test_import_linter_contracts_are_kept():
    """Both contracts of pyproject.toml: Qt-free model and engine, and the layers."""
    done = _lint(ROOT, ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout
    assert "Layers: cli, commands, gui, report, services, engine, topology" in done.stdout


def test_the_layers_contract_names_every_package_of_designer():
    """A new package or top-level module of designer/ gets a layer (else nothing checks it)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    named = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    here = {f"designer.{p.name}" for p in (ROOT / "designer").iterdir()
            if p.is_dir() and (p / "__init__.py").exists()}
    here |= {f"designer.{p.stem}" for p in (ROOT / "designer").glob("*.py")
             if p.stem not in ("__init__", "__main__")}
    assert here - named == set()


def test_the_layers_contract_fails_on_an_upward_import(tmp_path):
    """The contract is not vacuous: a report module importing the GUI breaks it (checked on a copy
    of the package, so the tree under test is not touched)."""
    shutil.copytree(ROOT / "designer", tmp_path / "designer",
                    ignore=shutil.ignore_patterns("__pycache__", "_data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "designer" / "report" / "upward.py").write_text("from designer.gui import plots\n")
    (tmp_path / "designer" / "services" / "qt.py").write_text("import designer.report.charts\n")
    done = _lint(tmp_path, tmp_path / "pyproject.toml")
    assert done.returncode != 0
    assert "designer.report is not allowed to import designer.gui" in done.stdout
    assert "designer.report.upward -> designer.gui.plots" in done.stdout
    assert "designer.services is not allowed to import designer.report" in done.stdout


def test_networkx_is_not_a_runtime_import():
    """networkx is a test dependency (pyproject's test extra): no module of designer/ imports it at
    module level; only Topology.graph()/shortest_path() import it when called (tests call them)."""
    import tomllib

    found = []
    for f in sorted((ROOT / "designer").rglob("*.py")):
        tree = ast.parse(f.read_text(), str(f))
        for node in tree.body:  # module level only
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [(f.name, n) for n in names if n.split(".")[0] == "networkx"]
    assert found == []
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("networkx") for d in project["dependencies"])
    assert any(d.startswith("networkx") for d in project["optional-dependencies"]["test"])
