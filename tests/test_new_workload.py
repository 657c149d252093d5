"""dpu-designer new fits the workload its template suggests unless --workload names one
(integration item E: NVL72 racks get Llama 3 70B, the others Llama 3 8B)."""

import json

import pytest

from designer import cli
from designer.topology.templates import TEMPLATES


@pytest.mark.parametrize("name, args", [("nvl72", ["--servers", "8", "--server", "gb300-nvl72", "--storage", "none"]),
                                        ("leaf-spine", ["--servers", "4"]), ("fat-tree", ["--k", "4"])])
def test_new_fits_the_workload_its_template_suggests(tmp_path, name, args):
    out = tmp_path / "d.json"
    assert cli.main(["new", "--template", name, *args, "-o", str(out)]) == 0
    assert json.loads(out.read_text())["workload"]["preset"] == TEMPLATES[name].workload


def test_a_named_workload_wins(tmp_path):
    out = tmp_path / "d.json"
    assert cli.main(["new", "--template", "leaf-spine", "--servers", "16", "--workload", "gpt3-175b",
                     "-o", str(out)]) == 0
    assert json.loads(out.read_text())["workload"]["preset"] == "gpt3-175b"
