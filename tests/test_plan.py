"""Best-layout search (designer.engine.plan) and ``dpu-designer plan``."""

import json
from dataclasses import fields

import pytest

from designer.cli import main
from designer.engine import pipeline, plan
from designer.engine.workload import Workload, from_dict, memory_per_gpu_GB
from designer.errors import UsageError
from designer.paths import resources_dir
from designer.topology import fileformat, templates
from designer.topology.catalog import load_catalog

CAT = load_catalog()
EXAMPLE = str(resources_dir() / "examples" / "example.json")
HAS = {f.name for f in fields(Workload)}


def small_design(servers=2, **work):
    """Two 8x H100 servers on a rail-optimized fabric, a GPT 1.7B-sized model (Megatron Table 1)."""
    d = templates.rail_optimized(servers=servers, storage="none", catalog=CAT)
    d.workload = {"preset": "megatron-gpt-1.7b", "dp": 0, "gpus": 0, "global_batch": 64,
                  "micro_batch": 1, **work}
    return d


@pytest.fixture(scope="module")
def result():
    return plan.search(small_design(), CAT, top=3, evaluate=4)


def test_every_ranked_layout_uses_all_gpus_fits_and_is_sorted(result):
    assert result.gpus == 16
    times = [c.iteration_time_s for c in result.ranked]
    assert times == sorted(times)
    cap = CAT.get("gpu", "h100-sxm")["memory_GB"]
    data = plan.workload_data(small_design(), CAT)
    for c in result.ranked:
        lay = c.layout
        assert lay["tp"] * lay.get("cp", 1) * lay["pp"] * lay["dp"] == 16
        w = from_dict({**data, **lay}, 16)
        assert memory_per_gpu_GB(w) <= cap
        assert 64 % (lay["dp"] * lay["micro_batch"]) == 0
        assert w.heads % lay["tp"] == 0


def test_the_best_layout_is_what_the_engine_gives_when_applied(result):
    design = small_design()
    best = result.best
    design.workload = plan.apply(design, best.layout)
    again = pipeline.run(design, CAT)
    assert again.iteration_time_s == pytest.approx(best.iteration_time_s, rel=1e-9)
    assert {k: again.workload[k] for k in best.layout} == best.layout


def test_the_best_is_no_slower_than_the_designs_own_layout(result):
    mine = pipeline.run(small_design(), CAT)
    assert result.best.iteration_time_s <= mine.iteration_time_s * (1 + 1e-9)
    if result.current is not None:  # the design's layout is run too, on the same terms
        assert result.current.iteration_time_s == pytest.approx(mine.iteration_time_s, rel=1e-9)


def test_dropped_layouts_are_counted_with_reasons(result):
    assert result.searched == result.fit + sum(n for k, n in result.dropped.items()
                                               if k not in ("estimate", "engine"))
    assert set(result.dropped) <= set(plan.REASONS)
    assert result.dropped["estimate"] == result.fit - len(result.ranked)


def test_models_too_big_for_the_gpus_are_refused_with_a_fix():
    design = small_design(servers=1)
    design.workload = {"preset": "llama3-70b", "dp": 0, "gpus": 0, "global_batch": 8,
                       "optimizer_sharded": False}
    # 70.6B parameters x 16 bytes / 8 GPUs = 141 GB per GPU of model state at best (ZeRO §3.1)
    with pytest.raises(UsageError, match=r"no layout .* on 8 GPUs fits in 85.9 GB per GPU.*optimizer"):
        plan.search(design, CAT)


def test_expert_parallelism_is_searched_only_for_mixture_of_experts_models():
    dense = from_dict({"layers": 8, "hidden": 1024, "heads": 16, "global_batch": 64}, 64)
    names = HAS
    assert all(lay.get("ep", 1) == 1 for lay in plan._layout_space(dense, 64, 8, names))
    if "experts" not in HAS:
        pytest.skip("the workload model has no mixture of experts")
    moe = from_dict({"layers": 8, "hidden": 1024, "heads": 16, "global_batch": 64, "experts": 8,
                     "top_k": 2, "moe_ffn_hidden": 2048}, 64)
    eps = {lay.get("ep", 1) for lay in plan._layout_space(moe, 64, 8, names)}
    assert eps == {1, 2, 4, 8}  # the divisors of 8 experts (each also divides some dp·cp)


def test_interleaved_layouts_keep_micro_batches_a_multiple_of_pp():
    r = plan.search(small_design(), CAT, top=20, evaluate=20)
    for c in r.ranked:
        lay = c.layout
        if lay["interleave"] > 1:
            m = 64 // (lay["dp"] * lay["micro_batch"])
            assert m % lay["pp"] == 0


def test_the_search_is_a_generator_that_stops_before_the_engine_when_closed(monkeypatch):
    calls = []
    monkeypatch.setattr(pipeline, "run", lambda *a, **k: calls.append(1))
    steps = plan.search_steps(small_design(), CAT)
    first = next(steps)
    assert first[:2] == ("progress", "estimate")
    steps.close()
    assert calls == []


def test_an_illegal_design_layout_is_searched_from_scratch_and_named():
    design = small_design(micro_batch=16)  # 64 is not a multiple of dp 16 x micro-batch 16
    with pytest.raises(UsageError):
        pipeline.run(design, CAT)
    r = plan.search(design, CAT, top=1, evaluate=1)
    assert r.best is not None and r.current is None
    assert "design's own layout is refused" in r.current_note and "global batch" in r.current_note


def test_vision_workloads_are_refused():
    design = small_design()
    design.workload = {"kind": "vision", "samples_per_s_per_gpu": 1000, "global_batch": 256}
    with pytest.raises(UsageError, match="transformer"):
        plan.search(design, CAT)


def test_cli_table_json_and_apply(tmp_path, capsys):
    src = tmp_path / "d.json"
    fileformat.save(small_design(), src)
    assert main(["plan", str(src), "--top", "2", "--evaluate", "2"]) == 0
    out = capsys.readouterr().out
    assert "iteration s" in out and "MFU" in out and "dropped" in out
    assert main(["plan", str(src), "--top", "2", "--evaluate", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gpus"] == 16 and len(data["layouts"]) >= 2 and data["saved_to"] is None
    best = data["best"]
    out_file = tmp_path / "best.json"
    assert main(["plan", str(src), "--evaluate", "2", "-o", str(out_file)]) == 0
    saved = fileformat.load(out_file)
    assert {k: saved.workload[k] for k in best} == best
    assert saved.workload["preset"] == "megatron-gpt-1.7b"
    assert fileformat.load(src).workload == small_design().workload  # FILE is not changed


def test_cli_set_changes_the_searched_workload(tmp_path, capsys):
    src = tmp_path / "d.json"
    fileformat.save(small_design(), src)
    assert main(["plan", str(src), "--evaluate", "2", "--json", "--set", "workload.global_batch=16"]) == 0
    data = json.loads(capsys.readouterr().out)
    for row in data["layouts"]:  # every replica gets whole micro-batches of the new batch
        assert 16 % (row["layout"]["dp"] * row["layout"]["micro_batch"]) == 0
    assert main(["plan", str(src), "--set", "workload.nope=1"]) == 2
    assert "unknown workload setting 'nope'" in capsys.readouterr().err


def test_cli_bad_input_is_one_line(capsys):
    assert main(["plan", EXAMPLE, "--top", "0"]) == 2
    assert main(["plan", EXAMPLE, "-o", EXAMPLE]) == 2
    assert main(["plan", EXAMPLE, "--apply", "-o", "x.json"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 3


def test_llama3_405b_published_layout_passes_the_rules():
    # Llama 3 Herd of Models §3.3.2 / Table 4: TP8, PP16, 126 layers on 16 stages with the
    # interleaved schedule, an embedding-only first and a loss-only last chunk: pp·v = 128 = l + 2
    w0 = from_dict(dict(CAT.workload("llama3-405b")), 16384)
    lay = {"tp": 8, "pp": 16, "dp": 128, "micro_batch": 1, "interleave": 8, "recompute": False}
    assert plan._rule(w0, lay, 8) is None
    assert plan._rule(w0, {**lay, "interleave": 9}, 8) == "interleave"  # 144 > 128
    assert plan._rule(w0, {**lay, "tp": 3, "dp": 16384 // 48}, 8) == "heads"


def test_the_estimate_bounds_the_engine_so_the_search_can_stop(result, monkeypatch):
    # the estimate uses the engine's own compute and timing stages on communicators at least as
    # fast as the engine's (line rate, no congestion, SHARP where any switch has it) and leaves
    # out the resources stage, which only adds: it never exceeds the engine's figure
    for c in result.ranked:
        assert c.estimate_s <= c.iteration_time_s * (1 + 1e-9), c.label
    # a smaller space, every fitting layout run: the bounded search finds the same best
    monkeypatch.setattr(plan, "MICRO_BATCHES", (1, 2))
    monkeypatch.setattr(plan, "INTERLEAVES", (1, 2))
    monkeypatch.setattr(plan, "CP_SIZES", (1,))
    bounded = plan.search(small_design(), CAT, top=1, evaluate=2)
    full = plan.search(small_design(), CAT, top=1, evaluate=bounded.fit)
    assert len(full.ranked) == full.fit and full.unsettled == 0
    for c in full.ranked:
        assert c.estimate_s <= c.iteration_time_s * (1 + 1e-9), c.label
    assert bounded.unsettled == 0 and len(bounded.ranked) < full.fit
    assert bounded.best.iteration_time_s == pytest.approx(full.best.iteration_time_s)


def test_interleaved_layouts_are_also_tried_with_their_sends_overlapped():
    """Issue #24 (c): the overlap of the pipeline's sends/receives belongs to the interleaved
    schedule (NeMo's GPT-3 175B recipe: virtual pipeline 12 with overlap_p2p_comm; Megatron-LM
    turns it off without interleaving), so the search adds it to each v > 1 of a workload that
    has it off, keeps v 1 as the workload has it, and adds nothing where it is on already. The
    overlapped twin is the plain layout plus pp_overlap, ranked by the engine like any layout,
    and applying it saves the setting in the design's workload."""
    w_off = from_dict({**plan.workload_data(small_design(), CAT), "pp": 2, "dp": 8}, 16)
    assert not w_off.pp_overlap
    got = plan._schedules(w_off, 4, HAS)
    assert got == [(1, None)] + [(v, ov) for v in plan.INTERLEAVES[1:] for ov in (None, True)]
    assert plan._schedules(w_off, 1, HAS) == [(1, None)]
    w_on = from_dict({**plan.workload_data(small_design(), CAT), "pp": 2, "dp": 8, "pp_overlap": True}, 16)
    assert plan._schedules(w_on, 4, HAS) == [(v, None) for v in plan.INTERLEAVES]
    lay = {"tp": 1, "cp": 1, "pp": 2, "dp": 8, "micro_batch": 1, "interleave": 2, "pp_overlap": True,
           "recompute": False}
    assert plan.layout_label(lay) == "tp1 pp2 dp8 mb1 v2 p2p-overlap rc=none"
    assert not plan._same_layout(lay, {k: v for k, v in lay.items() if k != "pp_overlap"})
    design = small_design()
    design.workload = plan.apply(design, lay)
    assert design.workload["pp_overlap"] is True and design.workload["interleave"] == 2
    plain = pipeline.run(small_design(pp=2, dp=8, interleave=2), CAT)
    over = pipeline.run(design, CAT)
    assert over.breakdown_s["pp_comm"] < plain.breakdown_s["pp_comm"]
