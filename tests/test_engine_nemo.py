"""Issue #12 acceptance: NeMo's published DGX-H100 FP8 pre-training figures
(tests/data/nemo_h100_fp8.json, NeMo 24.07 performance summary), every row within ±15% of its
tokens/s per GPU, on a rail-optimized DGX H100 design with the row's layout and NeMo's settings.
No figure of the engine is fitted to these rows: GEMM rates come from the catalog (h100-sxm
gemm_efficiency, derived from the A100 Megatron runs and the measured GEMM ceilings) and the
FP8/BF16 (cuBLAS, one library) and attention tables of designer.engine.workload. Rows outside the
band are listed in ``KNOWN_GAPS`` with the gap explained by its parts."""

import json
from pathlib import Path

import numpy as np
import pytest

from designer.engine import workload as W
from designer.engine.pipeline import run
from designer.engine.placement import place, servers_of
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

REF = json.loads((Path(__file__).parent / "data" / "nemo_h100_fp8.json").read_text())
ROWS = [dict(zip(REF["columns"], r)) for r in REF["rows"]]
TOLERANCE = 0.15  #: the issue's acceptance band
CAT = load_catalog()


def spec(row: dict) -> dict:
    """The row's workload: model shape, layout and NeMo's settings (see the data file's sources)."""
    tp, pp, cp, vp = row["tp"], row["pp"], row["cp"], row["vp"]
    selective = row["model"] in REF["settings"]["selective_recompute"]
    return {**REF["models"][row["model"]], **REF["settings"]["common"],
            "seq_len": row["seq_len"], "tp": tp, "pp": pp, "cp": cp, "interleave": vp,
            "dp": row["gpus"] // (tp * pp * cp), "global_batch": row["global_batch"],
            "micro_batch": row["micro_batch"], "sequence_parallel": tp > 1,
            "tp_comm_overlap": tp > 1, "pp_overlap": vp > 1,
            "recompute": selective, "recompute_granularity": "selective" if selective else "full",
            "grad_reduce_in_fp32": row["model"] not in REF["settings"].get("grads_16bit", [])}


def _placement_has_cp() -> bool:
    """Whether placement puts cp·dp ranks in each data-parallel group (the integration edit the
    CP rows need; see the H2 report)."""
    d = rail_optimized(servers=1, server="dgx-h100", catalog=CAT, storage="none")
    w = W.Workload(tp=1, pp=1, dp=2, cp=2, global_batch=2, seq_len=64, layers=2, hidden=64, heads=2)
    pl = place(w, servers_of(d, CAT))
    return pl.groups["dp"].shape[1] == 4 and len(np.unique(pl.groups["dp"])) == 4


CP_READY = _placement_has_cp()


#: rows outside the band after the principled fixes of the review of issue 12, with the gap by parts
#: (xfail, not strict: they pass again when the model gets closer)
KNOWN_GAPS: dict[str, str] = {}  #: none at present (all twelve rows within the band)


def _row_param(row: dict):
    rid = f"{row['model']}-{row['gpus']}"
    marks = [pytest.mark.xfail(strict=False, reason=KNOWN_GAPS[rid])] if rid in KNOWN_GAPS else []
    return pytest.param(row, id=rid, marks=marks)


@pytest.mark.parametrize("row", [_row_param(r) for r in ROWS])
def test_nemo_fp8_row_within_15_percent(row):
    if row["cp"] > 1 and not CP_READY:
        pytest.skip("placement does not yet place cp x dp ranks per data-parallel group")
    design = rail_optimized(servers=max(1, row["gpus"] // 8), server="dgx-h100", catalog=CAT, storage="none")
    r = run(design, CAT, workload=spec(row), scenario={"checkpoint_interval_s": 0})
    assert r.gpus == row["gpus"]
    predicted = r.tokens_per_s / r.gpus
    ratio = predicted / row["tokens_per_s_per_gpu"]
    parts = {k: round(v / r.iteration_time_s, 3) for k, v in r.breakdown_s.items() if v}
    assert abs(ratio - 1) <= TOLERANCE, f"{predicted:.0f} vs {row['tokens_per_s_per_gpu']} tokens/s/GPU ({parts})"


def test_model_flops_count_matches_nemo_tflops_column():
    """NeMo's 'Model TFLOP/sec/GPU' is tokens/s/GPU × model FLOPs per token without recomputation;
    the engine's count of the same shapes gives the published column within 3% (vocabulary
    padding and NeMo's own rounding)."""
    for row in ROWS:
        w = W.Workload(**{k: v for k, v in spec(row).items() if k != "dp"}, dp=1)
        per_token = W.model_flops_per_iteration(w, recompute=False) / (w.global_batch * w.seq_len)
        tflops = row["tokens_per_s_per_gpu"] * per_token / 1e12
        assert tflops == pytest.approx(row["model_tflops_per_gpu"], rel=0.03), row["model"]


def test_fp8_is_faster_than_bf16_but_not_twice():
    """Same job in BF16 and FP8: the linear GEMMs speed up by the measured FP8/BF16 ratio, the
    attention core, the output layer and the memory-bound kernels do not, so the step is well
    short of twice as fast (NeMo reports FP8 speed-ups of 1.3-1.5x for such models)."""
    gpu = CAT.get("gpu", "h100-sxm")
    base = {**REF["models"]["llama2-7b"], "seq_len": 4096, "dp": 8, "global_batch": 128,
            "flash_attention": True, "recompute": False}
    bf16 = W.compute(W.from_dict({**base, "precision": "bf16"}, 8), gpu)
    fp8 = W.compute(W.from_dict({**base, "precision": "fp8"}, 8), gpu)
    assert fp8.attention_s == pytest.approx(bf16.attention_s)
    assert fp8.logit_s == pytest.approx(bf16.logit_s)
    assert bf16.linear_s / fp8.linear_s == pytest.approx(W.fp8_over_bf16(4096), rel=0.15)
    assert 1.2 < bf16.micro_batch_s / fp8.micro_batch_s < 1.7


def test_fp8_on_a_gpu_without_fp8_runs_at_the_16_bit_rate():
    """The A100 has no FP8 tensor cores (catalog fp8_dense_tflops 0): an FP8 run takes as long
    as the BF16 one, not the Hopper FP8 speed-up."""
    gpu = CAT.get("gpu", "a100-80gb")
    base = {**REF["models"]["llama2-7b"], "seq_len": 4096, "dp": 8, "global_batch": 128,
            "flash_attention": True, "recompute": False}
    bf16 = W.compute(W.from_dict({**base, "precision": "bf16"}, 8), gpu)
    fp8 = W.compute(W.from_dict({**base, "precision": "fp8"}, 8), gpu)
    assert fp8.gemm_s == pytest.approx(bf16.gemm_s) and fp8.micro_batch_s == pytest.approx(bf16.micro_batch_s)
