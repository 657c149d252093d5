"""The model and the engine stay free of Qt (they run headless and in worker processes)."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QT = ("PySide6", "pyqtgraph", "shiboken6")
LAYERS = ("designer/topology", "designer/engine")


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
        "import designer.topology, designer.engine\n"
        "for pkg in (designer.topology, designer.engine):\n"
        "    for m in pkgutil.iter_modules(pkg.__path__):\n"
        "        importlib.import_module(pkg.__name__ + '.' + m.name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {QT!r}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_import_linter_contract_is_kept():
    """The import-linter contract in pyproject.toml (model and engine stay free of Qt)."""
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install '.[test]' installs it)")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([exe, "--config", str(root / "pyproject.toml")], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 kept, 0 broken" in done.stdout
