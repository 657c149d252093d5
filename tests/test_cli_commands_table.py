"""designer.commands.COMMANDS is the one table of sub-commands and their help lines (issue 20:
no help text read from the modules' source): ``--help`` lists it without importing a command
module, and every command module registers its sub-parser with exactly that line."""

from __future__ import annotations

import importlib.util

import pytest

from designer import cli
from designer.commands import COMMANDS


def _help_lines(parser) -> dict[str, str]:
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {choice.dest: choice.help for choice in sub._choices_actions}


def _present() -> list[str]:
    return [n for n in COMMANDS if importlib.util.find_spec(f"designer.commands.{n}") is not None]


@pytest.mark.parametrize("name", _present())
def test_each_module_registers_the_tables_help_line(name):
    registered = _help_lines(cli.build_parser(only=name))
    assert registered == {name: COMMANDS[name]}, (
        f"designer/commands/{name}.py registers {registered.get(name)!r}; "
        f"use help=COMMANDS[{name!r}] (designer/commands/__init__.py)")


def test_lazy_help_lists_the_table_in_its_order():
    lazy = _help_lines(cli.build_parser())
    assert list(lazy) == _present()
    assert lazy == {n: COMMANDS[n] for n in _present()}
    assert lazy == _help_lines(cli.build_parser(only="*"))


def test_every_help_line_is_one_short_line():
    for name, text in COMMANDS.items():
        assert text and "\n" not in text and len(text) < 110 and text == text.strip(), name


def test_a_slot_without_its_module_is_not_listed_and_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setitem(COMMANDS, "no-such-command", "a command not written yet")
    assert "no-such-command" not in _help_lines(cli.build_parser())
    assert cli.main(["no-such-command"]) == 2
    assert "invalid choice" in capsys.readouterr().err
