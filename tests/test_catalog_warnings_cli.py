"""compare and plan warn (once, one line) about a user catalog file they skip, like run does."""

import pytest

from designer.cli import main
from designer.paths import resources_dir
from designer.topology import catalog as catmod

EXAMPLE = str(resources_dir() / "examples" / "example.json")


@pytest.mark.parametrize("command", [["compare", EXAMPLE, "--json"],
                                     ["plan", EXAMPLE, "--top", "1", "--evaluate", "1", "--json"]])
def test_compare_and_plan_warn_about_a_skipped_user_catalog_file(tmp_path, monkeypatch, capsys, command):
    (tmp_path / "switch.toml").write_text('[[entry]]\nid = "mine"\nname = "x"\nports = -4\n')
    monkeypatch.setenv("DPU_DESIGNER_CATALOG", str(tmp_path))
    monkeypatch.setattr(catmod, "_cached", None)
    try:
        assert main(command) == 0
        out, err = capsys.readouterr()
        lines = [l for l in err.splitlines() if l]
        assert len(lines) == 1 and lines[0].startswith("warning: user catalog ")
        assert "switch.toml" in lines[0] and "ports" in lines[0] and "skipped" in lines[0]
        assert out.lstrip().startswith("{")  # the answer still comes, from the packaged catalog
    finally:
        catmod._cached = None
