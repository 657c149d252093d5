"""`dpu-designer new --help` (issue #23): each option says its default once, in words ('' is "none"),
and templates that share a default are named together instead of the value repeated per template."""

import re

from designer import cli


def _help(capsys) -> str:
    try:
        cli.main(["new", "--help"])
    except SystemExit:
        pass
    return re.sub(r"-\s+", "-", " ".join(capsys.readouterr().out.split()))  # argparse wraps at hyphens


def test_every_option_says_its_default_once_and_never_shows_empty_quotes(capsys):
    text = _help(capsys)
    options = re.split(r"\s(?=--[a-z])", text)
    assert len(options) > 10
    for opt in options:
        assert opt.count("(default:") <= 1, opt
    assert "''" not in text and "(default: '')" not in text


def test_templates_sharing_a_default_are_named_together(capsys):
    text = _help(capsys)
    assert "llama3-8b (leaf-spine, fat-tree, rail-optimized), llama3-70b (nvl72)" in text
    assert text.count("llama3-8b for") == 0
    assert "dgx-h100 (leaf-spine, fat-tree, rail-optimized), gb200-nvl72 (nvl72)" in text
