"""Llama-style transformers (GQA, SwiGLU, untied embeddings, uneven pipeline stages) against
the Llama 3 paper (tests/data/llama3_reference.json)."""

import json
from pathlib import Path

import pytest

from designer.engine import traffic as T
from designer.engine import workload as W
from designer.engine.pipeline import run
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

REF = json.loads((Path(__file__).parent / "data" / "llama3_reference.json").read_text())
MODELS = [dict(zip(REF["models"]["columns"], r)) for r in REF["models"]["rows"]]
TABLE4 = [dict(zip(REF["table4"]["columns"], r)) for r in REF["table4"]["rows"]]


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


@pytest.mark.parametrize("m", MODELS, ids=[m["catalog_id"] for m in MODELS])
def test_preset_shapes_and_parameters_match_the_paper(cat, m):
    entry = cat.workload(m["catalog_id"])
    for key in ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab"):
        assert entry[key] == m[key], key
    w = W.from_dict(entry, 20000)
    assert W.parameters(w) / 1e9 == pytest.approx(m["params_B"], rel=0.02)


def test_llama_flops_follow_the_matrix_shapes():
    # hand count: Q,O 2·64² = 8192; K,V 2·64·32 = 4096; SwiGLU 3·64·96 = 18432 -> M = 30720
    w = W.Workload(layers=2, hidden=64, heads=4, kv_heads=2, ffn_hidden=96, vocab=1000, seq_len=32,
                   dp=1, global_batch=4, recompute=True)
    layers_fwd = 2 * (2 * 30720 + 4 * 32 * 64)  # per token: 2·M + attention 4·s·h, per layer
    logit_fwd = 2 * 1000 * 64
    assert W.model_flops_per_iteration(w) == pytest.approx(4 * 32 * (4 * layers_fwd + 3 * logit_fwd))
    assert W.parameters(w) == pytest.approx(2 * (30720 + 2 * 64) + 64 + 2 * 1000 * 64)


def test_gqa_shrinks_only_the_kv_projections():
    mha = W.Workload(layers=4, hidden=512, heads=8, vocab=1000, dp=1)
    gqa = W.Workload(**{**mha.to_dict(), "kv_heads": 2})
    # K and V: 2·h·h·(1 - 2/8) weights and 2·h·(1 - 2/8) biases fewer per layer
    assert W.parameters(mha) - W.parameters(gqa) == pytest.approx(4 * (2 * 512 * 512 + 2 * 512) * 0.75)


def test_uneven_stages_run_at_the_pace_of_the_busiest_gpu(cat):
    gpu = cat.get("gpu", "h100-sxm")
    base = dict(hidden=1024, heads=8, ffn_hidden=3584, kv_heads=8, vocab=32000, seq_len=2048,
                pp=16, global_batch=64, recompute=False)
    uneven = W.from_dict({**base, "layers": 126}, 16)
    even = W.from_dict({**base, "layers": 128}, 16)
    assert uneven.stage_layers == even.stage_layers == 8
    a, b = W.compute(uneven, gpu), W.compute(even, gpu)
    assert a.memory_s == pytest.approx(b.memory_s)
    even_share = W.model_flops_per_iteration(uneven) / uneven.gpus / uneven.micro_batches
    assert a.gemm_s * a.peak_tflops * 1e12 * a.gemm_efficiency == pytest.approx(even_share * 128 / 126)
    assert T.volumes(uneven).tp_calls_per_micro_batch == T.volumes(even).tp_calls_per_micro_batch
    assert W.from_dict({**base, "layers": 126, "interleave": 4}, 16).stage_layers == 8


def test_pipeline_may_add_an_embedding_and_a_loss_chunk():
    # Llama 3 §3.3.2: 126 layers in 16 x 8 one-layer chunks, the first holding only the embedding
    # and the last only the output layer and loss: the busiest GPU holds 8 layers
    base = dict(hidden=1024, heads=8, ffn_hidden=3584, kv_heads=8, vocab=32000, pp=16, global_batch=64)
    assert W.from_dict({**base, "layers": 126, "interleave": 8}, 16).stage_layers == 8
    with pytest.raises(UsageError, match="more than the 125 layers plus an embedding-only"):
        W.from_dict({**base, "layers": 125, "interleave": 8}, 16)
    with pytest.raises(UsageError, match="more than the 126 layers"):
        W.from_dict({**base, "layers": 126, "interleave": 9}, 16)


def test_bad_kv_heads_is_a_usage_error():
    with pytest.raises(UsageError, match="kv_heads"):
        W.from_dict(dict(heads=16, kv_heads=3, hidden=2048), 8)


# Engine vs Table 4 on a rail-optimized DGX H100 / NDR design (Meta used RoCE at the same 400 Gb/s
# per GPU). Like with like: the engine's tokens/s are converted to FLOPs with Meta's count
# (PaLM appendix B: 6N + 12·l·h·s per token) before dividing by n × 989 TFLOP/s. Issue #12
# acceptance: within ±10% of the paper's MFU at 8,192 and 16,384 GPUs. The band was (0.75, 1.05)
# while the engine charged the pipeline sends Meta overlaps and counted the causal attention over
# the full square (0.85 / 0.80 then); with the compute model by part (flash attention on the causal
# half at its own rate) and the preset's overlap settings from the paper (asynchronous PP sends,
# FSDP prefetch: pp_overlap, dp_overlap) it is the issue's ±10%.
BAND = (0.90, 1.10)


@pytest.fixture(scope="module")
def table4_results(cat):
    out = {}
    for row in TABLE4[:2]:
        design = rail_optimized(servers=row["gpus"] // 8, server="dgx-h100", catalog=cat)
        out[row["gpus"], row["dp"]] = run(design, cat, workload="llama3-405b", dp=row["dp"],
                                          global_batch=row["batch_per_dp"] * row["dp"])
    return out


#: Table 4 rows outside the band after the review of issue 12 (principled GEMM rates), gap by parts
KNOWN_GAPS: dict[int, str] = {}  #: none at present (both rows within the band)


@pytest.mark.parametrize("row", [pytest.param(
    r, id=f"{r['gpus']}gpus",
    marks=[pytest.mark.xfail(strict=False, reason=KNOWN_GAPS[r["gpus"]])] if r["gpus"] in KNOWN_GAPS else [])
    for r in TABLE4[:2]])
def test_405b_mfu_against_table4(row, table4_results):
    r = table4_results[row["gpus"], row["dp"]]
    assert r.workload["tp"] == row["tp"] and r.workload["pp"] == row["pp"]
    assert r.workload["global_batch"] * r.workload["seq_len"] == pytest.approx(
        row["tokens_per_batch_M"] * 2 ** 20, rel=0.05)
    w = W.Workload(**r.workload)
    meta_flops_per_token = 6 * W.parameters(w) + 12 * w.layers * w.hidden * w.seq_len
    peak = REF["mfu_flop_count"]["h100_bf16_dense_tflops"] * 1e12
    mfu_meta_count = r.tokens_per_s * meta_flops_per_token / (r.gpus * peak)
    assert mfu_meta_count == pytest.approx(r.mfu, rel=0.01)  # the two counts agree within 1%
    ratio = mfu_meta_count / (row["bf16_mfu_percent"] / 100)
    assert BAND[0] <= ratio <= BAND[1], f"engine/paper MFU = {ratio:.3f}"


def test_halving_the_batch_per_dp_group_lowers_mfu_as_in_table4(table4_results):
    small, large = table4_results[16384, 128], table4_results[8192, 64]
    assert small.mfu < large.mfu
    assert small.breakdown_s["bubble"] / small.iteration_time_s > \
        large.breakdown_s["bubble"] / large.iteration_time_s
