"""The published schema (issue 20): resources/schema/dpu-cluster-design.schema.json is what the
loader's decoder is made from, `dpu-designer schema` prints it, and jsonschema accepts the example
designs against it (and refuses what the loader refuses for its structure)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from designer import cli
from designer.paths import resources_dir
from designer.topology import fileformat
from designer.topology.fileformat import DesignFileError, from_dict, to_dict
from designer.topology.templates import TEMPLATES

SCHEMA_FILE = resources_dir() / "schema" / "dpu-cluster-design.schema.json"
DATA = Path(__file__).parent / "data"


def _published() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def test_the_file_is_the_schema_the_decoder_is_made_from():
    # regenerate with: dpu-designer schema -o resources/schema/dpu-cluster-design.schema.json
    assert SCHEMA_FILE.read_text(encoding="utf-8") == fileformat.schema_text()
    published = _published()
    assert published["$id"] == fileformat.SCHEMA_ID and published["$id"].endswith(f":{fileformat.VERSION}")
    assert {k: v for k, v in published.items() if k not in ("$id", "title", "description")} == fileformat.SCHEMA
    jsonschema.Draft202012Validator.check_schema(published)


def _examples() -> dict[str, dict]:
    docs = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted((resources_dir() / "examples").glob("*.json"))}
    docs["design_v1_sample.json"] = json.loads((DATA / "design_v1_sample.json").read_text(encoding="utf-8"))
    docs["rail-optimized"] = to_dict(TEMPLATES["rail-optimized"](servers=8, su_size=4, dpu="bluefield-3"))
    return docs


@pytest.mark.parametrize("name, doc", sorted(_examples().items()))
def test_jsonschema_accepts_the_example_designs(name, doc):
    assert doc["format"] == fileformat.FORMAT
    jsonschema.Draft202012Validator(_published()).validate(doc)
    from_dict(copy.deepcopy(doc), name)  # and the loader loads them


@pytest.mark.parametrize("mutate, path", [
    (lambda d: d["components"][1].update(slot=-1), "components[1].slot"),
    (lambda d: d["components"][1].update(colour="red"), "components[1]"),
    (lambda d: d["links"][0].pop("medium"), "links[0]"),
    (lambda d: d["links"][0].update(medium="wifi"), "links[0].medium"),
    (lambda d: d["components"][1].update(pos=[1e10, 0]), "components[1].pos[0]"),
    (lambda d: d.update(scenario={"seed": -1}), "scenario.seed"),
    (lambda d: d.update(workload={"tp": 2.5}), "workload.tp"),
])
def test_what_the_schema_refuses_the_loader_refuses_at_the_same_place(mutate, path):
    doc = json.loads((DATA / "design_v1_sample.json").read_text(encoding="utf-8"))
    mutate(doc)
    errors = list(jsonschema.Draft202012Validator(_published()).iter_errors(doc))
    assert errors and fileformat._json_path(list(errors[0].absolute_path)) == path
    with pytest.raises(DesignFileError) as info:
        from_dict(doc, "x.json")
    assert info.value.path == path


def test_the_schema_command_prints_it_or_writes_it(capsys, tmp_path):
    assert cli.main(["schema"]) == 0
    out, err = capsys.readouterr()
    assert out == fileformat.schema_text() and not err
    target = tmp_path / "s.json"
    assert cli.main(["schema", "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == fileformat.schema_text()
    assert cli.main(["schema", "-o", str(tmp_path / "no" / "s.json")]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and err.count("\n") == 1
