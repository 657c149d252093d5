"""Lazy CLI (issue 15): ``dpu-designer --help`` imports no heavy library, lists every command with
the help its module registers, and a sub-command imports only its own module."""

from __future__ import annotations

import json
import subprocess
import sys

from designer import cli
from designer.commands import COMMANDS

HEAVY = ("numpy", "scipy", "networkx", "jsonschema", "PySide6", "pyqtgraph", "designer.engine")


def _modules_after(argv: list[str]) -> set[str]:
    code = ("import sys, json\nfrom designer.cli import main\n"
            "try:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)" % argv)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_imports_no_heavy_library():
    loaded = _modules_after(["--help"])
    assert not [m for m in loaded if m.split(".")[0] in HEAVY or m.startswith("designer.engine")]


def test_a_command_imports_its_own_module_only():
    loaded = _modules_after(["validate", "--help"])
    assert "designer.commands.validate" in loaded
    assert not {f"designer.commands.{c}" for c in COMMANDS if c != "validate"} & loaded


def _help_lines(parser) -> dict[str, str]:
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {choice.dest: choice.help for choice in sub._choices_actions}


def test_help_lines_are_the_ones_the_modules_register():
    lazy = _help_lines(cli.build_parser())
    full = _help_lines(cli.build_parser(only="*"))
    assert lazy == full and set(lazy) == set(cli._available_commands())
