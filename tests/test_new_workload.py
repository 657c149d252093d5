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


# --- issue #24: layouts a planner can start from; issue #21: a vision preset -----------------

from designer.engine.fit import divisible_layout, layout_of, refit_batch  # noqa: E402
from designer.engine.workload import from_dict  # noqa: E402
from designer.errors import UsageError  # noqa: E402
from designer.services.workloads import fitted_workload  # noqa: E402


@pytest.fixture(scope="module")
def catalog():
    from designer.topology.catalog import load_catalog

    return load_catalog()


@pytest.fixture(scope="module")
def rail_designs(catalog):
    """1,024 and 8,192 GPUs (128 and 1,024 DGX H100 servers, rail-optimized)."""
    return {n: TEMPLATES["rail-optimized"](servers=n // 8, catalog=catalog) for n in (1024, 8192)}


def _llms(catalog):
    return [e for e in catalog.workloads() if e.get("kind", "transformer") != "vision"]


def test_every_catalog_llm_gets_a_layout_that_divides_its_published_batch(catalog, rail_designs):
    from designer.engine.fit import design_gpus

    assert len(_llms(catalog)) >= 12
    for entry in _llms(catalog):
        for n, design in rail_designs.items():
            w = fitted_workload(entry["id"], design, catalog)
            where = f"{entry['id']} on {n} GPUs"
            assert w["global_batch"] == entry["global_batch"], where  # the published batch kept
            gpus, gpu = design_gpus(design, catalog)
            lay = from_dict({**entry, **w}, gpus, gpu=gpu)  # what a run checks
            assert lay.global_batch % (lay.dp * lay.micro_batch) == 0, where
            assert lay.tp == entry.get("tp", 1) and lay.pp >= entry.get("pp", 1), where
            assert 0 < lay.gpus <= n, where
            assert layout_of(w, catalog, gpus).fields() == {
                "tp": lay.tp, "cp": lay.cp, "pp": lay.pp, "dp": lay.dp, "micro_batch": lay.micro_batch}


def test_gpt3_layouts_on_1k_and_8k_gpus(catalog, rail_designs):
    """Issue #24's case: 1,536 sequences on 1,024 GPUs were tp8 pp12 dp10 with the batch raised
    to 1,540; now tp8 pp16 dp8 (192 micro-batches per replica) and on 8,192 GPUs tp8 pp16 dp64
    (24 each; pp32 dp32 loses: 8192 x 48 / (48 + 31) = 4,977 useful GPUs < 8192 x 24 / 39 = 5,041)."""
    small = fitted_workload("gpt3-175b", rail_designs[1024], catalog)
    big = fitted_workload("gpt3-175b", rail_designs[8192], catalog)
    # only what differs from the preset's tp8 pp12 mb1 is saved
    assert small == {"preset": "gpt3-175b", "pp": 16, "dp": 8, "gpus": 0, "global_batch": 1536}
    assert big == {"preset": "gpt3-175b", "pp": 16, "dp": 64, "gpus": 0, "global_batch": 1536}


def test_a_preset_whose_own_layout_divides_is_saved_as_fill(catalog, rail_designs):
    """Llama 3 8B (tp2, batch 512) on 32 GPUs: its own layout fills them with dp 16, which splits
    512: saved as before layouts were fitted (dp 0), so that another preset set over it with
    --set workload.preset=... brings its own tp/pp; so on 1,024 GPUs (dp 512). On 8,192 GPUs dp
    4,096 would not split 512: dp 512 is saved (1,024 GPUs; deeper pipelines score no more, one
    micro-batch per replica, and the preset's pp 1 wins the tie)."""
    small = TEMPLATES["rail-optimized"](servers=4, catalog=catalog)
    assert fitted_workload("llama3-8b", small, catalog) == {
        "preset": "llama3-8b", "dp": 0, "gpus": 0, "global_batch": 512}
    assert fitted_workload("llama3-8b", rail_designs[1024], catalog)["dp"] == 0
    assert fitted_workload("llama3-8b", rail_designs[8192], catalog) == {
        "preset": "llama3-8b", "dp": 512, "gpus": 0, "global_batch": 512}


def test_divisible_layout_score_and_fallbacks():
    """The score (useful GPUs) by hand; a micro-batch lowered when the published one leaves GPUs
    idle; shallower pipelines only when the published depth does not fit; refit keeps tp/cp/pp."""
    entry = {"tp": 1, "pp": 1, "micro_batch": 16, "global_batch": 512, "layers": 24}
    fit = divisible_layout(entry, 1024)
    # mb16 allows at most dp 32 (32 GPUs); mb1 dp512 uses 512 with no bubble (score 512), the
    # same as pp2 dp512 (1024 GPUs, one micro-batch each: 1024 x 1 / 2); the preset's pp 1 wins
    assert (fit.pp, fit.dp, fit.micro_batch, fit.score) == (1, 512, 1, 512.0)
    assert divisible_layout({**entry, "micro_batch": 1}, 16).dp == 16
    with pytest.raises(UsageError, match=r"tp x pp = 96 needs more GPUs than the design has \(64\)"):
        divisible_layout({"tp": 8, "pp": 12, "global_batch": 1536, "layers": 96}, 64)
    with pytest.raises(UsageError, match=r"tp x pp x cp = 16 needs more GPUs"):
        divisible_layout({"tp": 8, "cp": 2, "pp": 1, "global_batch": 8}, 8)
    assert refit_batch({"tp": 8, "pp": 16, "dp": 8, "global_batch": 1536}, 1024) is None
    re = refit_batch({"tp": 8, "pp": 16, "dp": 8, "micro_batch": 2, "global_batch": 1000}, 1024)
    # 1000 / mb2 = 500: dp 5 (mb 2) uses 640 GPUs; mb1: dp 8 divides 1000, 1024 GPUs
    assert (re.tp, re.pp, re.dp, re.micro_batch) == (8, 16, 8, 1)


def test_new_saves_the_fitted_layout_and_prints_it(tmp_path, capsys):
    out = tmp_path / "g.json"
    assert cli.main(["new", "--template", "rail-optimized", "--servers", "128", "--workload",
                     "gpt3-175b", "-o", str(out)]) == 0
    w = json.loads(out.read_text())["workload"]
    assert w == {"preset": "gpt3-175b", "pp": 16, "dp": 8, "gpus": 0, "global_batch": 1536}
    assert ("workload gpt3-175b: global batch 1536, layout tp8 pp16 dp8 mb1 on 1024 of 1024 GPUs"
            in capsys.readouterr().out)


def test_plan_with_a_changed_batch_refits_and_says_so(tmp_path, capsys):
    """The issue's failing command: `plan --set workload.global_batch=...` on a design from `new`,
    with a batch its dp x micro-batch does not split, refits dp and searches."""
    out = tmp_path / "g.json"
    assert cli.main(["new", "--template", "rail-optimized", "--servers", "16", "--workload",
                     "gpt3-175b", "-o", str(out)]) == 0  # 128 GPUs: tp8 pp16 dp1
    w = json.loads(out.read_text())["workload"]
    assert (w["pp"], w["dp"]) == (16, 1)  # 128 GPUs: tp8 pp16 dp1
    capsys.readouterr()
    assert cli.main(["plan", str(out), "--set", "workload.global_batch=1000", "--top", "2",
                     "--evaluate", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["current_note"] is None  # dp 1 splits any batch: nothing refitted
    assert cli.main(["plan", str(out), "--set", "workload.dp=0", "--set", "workload.pp=8",
                     "--set", "workload.global_batch=1001", "--top", "2", "--evaluate", "2"]) == 0
    text = capsys.readouterr().out
    # dp 0 fills 128 GPUs with tp8 pp8: dp 2, which 1001 = 7 x 11 x 13 does not split: dp 1
    assert ("note      global batch 1001 does not split into dp x micro-batch = fill x 1: "
            "refitted to dp 1, micro-batch 1 (tp8 pp8 dp1 mb1, 64 of 128 GPUs)") in text
    assert "plan      GPT-3 175B" in text


def test_vision_preset_new_then_run(tmp_path, capsys):
    """Issue #21: `new --workload resnet50-imagenet` asked for samples_per_s_per_gpu although the
    catalog gives it per GPU model (samples_per_s_h100_sxm), which `compare` used; `new` now
    checks the preset with the design's GPU as a run does."""
    out = tmp_path / "r.json"
    assert cli.main(["new", "--template", "rail-optimized", "--servers", "4", "--workload",
                     "resnet50-imagenet", "-o", str(out)]) == 0
    w = json.loads(out.read_text())["workload"]
    assert w == {"preset": "resnet50-imagenet", "dp": 0, "gpus": 0, "global_batch": 32}
    capsys.readouterr()
    assert cli.main(["run", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gpus"] == 32 and data["iteration_time_s"] > 0
    # on A100 servers the entry's samples_per_s_a100_80gb (423.8 a GPU) is the one taken
    a100 = tmp_path / "a.json"
    assert cli.main(["new", "--template", "leaf-spine", "--servers", "2", "--server", "dgx-a100",
                     "--workload", "resnet50-imagenet", "-o", str(a100)]) == 0
    capsys.readouterr()
    assert cli.main(["run", str(a100), "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert a["gpus"] == 16 and a["workload"]["samples_per_s_per_gpu"] == pytest.approx(423.8)


@pytest.mark.xfail(strict=True, reason=(
    "issue #24's 'within 20%' does not hold: 8k best tp8 cp2 pp16 dp32 v3 at 29.2% MFU against the 1k "
    "best tp4 cp2 pp16 dp8 v3 at 40.1% (0.728): strong scaling on the published fixed batch of 1,536 "
    "sequences (MFU 0.401 at 1k, 0.364 at 2k, 0.352 at 4k, 0.292 at 8k GPUs): at 8k each pipeline of "
    "16 stages gets 48 micro-batches (tp8) or 24 (tp4, which then cannot interleave), and the bubble "
    "and DP share grow; the 1k figure rose when Megatron's rank order became the default"))
def test_plan_on_the_8k_design_from_new_is_near_the_1k_one(tmp_path, capsys):
    """Issue #24: with the published batch of 1,536 saved with a layout that divides it, `plan`
    searches 8,192 GPUs for real (before: batch 1,615, odd, forced dp 1 and the best layout ran at
    53 TFLOP/s). The 8k best now runs at 288 TFLOP/s (5.4x the issue's 53); against the 1k best
    (400 TFLOP/s) that is 0.73, short of the issue's 0.8 (see the xfail reason)."""
    best = {}
    for servers in (128, 1024):
        out = tmp_path / f"g{servers}.json"
        assert cli.main(["new", "--template", "rail-optimized", "--servers", str(servers),
                         "--workload", "gpt3-175b", "-o", str(out)]) == 0
        capsys.readouterr()
        assert cli.main(["plan", str(out), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["gpus"] == servers * 8 and data["current"]["error"] is None
        best[servers] = data["layouts"][0]
    small, big = best[128], best[1024]
    assert big["tflops_per_gpu"] > 5 * 53  # the 53 TFLOP/s at dp 1
    assert big["mfu"] >= 0.8 * small["mfu"]  # the "within 20%"
