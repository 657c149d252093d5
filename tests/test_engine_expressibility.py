"""Issue #22, expressibility: heads of their own width (Qwen3), selective recomputation of chosen
modules (Megatron-Core's ``recompute_modules``), MXFP8 as its own precision."""

import pytest

from designer.engine import timing as T
from designer.engine import traffic as tr
from designer.engine import workload as W
from designer.topology.catalog import load_catalog
from designer.topology.workload_spec import RECOMPUTE_MODULES, WORKLOAD_FIELD_TYPES, WorkloadSpec

CAT = load_catalog()
H100 = CAT.get("gpu", "h100-sxm")
B200 = CAT.get("gpu", "b200")

#: Qwen3 MoE shapes: Qwen3 Technical Report (arXiv 2505.09388) Table 2 (layers, 64/4 and 32/4
#: query/key-value heads, 128 experts, 8 routed per token) and the released config.json of
#: Qwen/Qwen3-235B-A22B and Qwen/Qwen3-30B-A3B (hidden_size, head_dim 128, moe_intermediate_size,
#: vocab_size 151936; untied embeddings); published sizes: 235B total / 22B activated and
#: 30.5B / 3.3B (model cards)
QWEN3 = {
    "235b": (dict(layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128, experts=128, top_k=8,
                  moe_ffn_hidden=1536, vocab=151936, mlp="swiglu"), 235.0, 22.0),
    "30b": (dict(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, experts=128, top_k=8,
                 moe_ffn_hidden=768, vocab=151936, mlp="swiglu"), 30.5, 3.3),
}


def _w(**kw) -> W.Workload:
    base = dict(seq_len=4096, tp=1, pp=1, dp=1, global_batch=1)
    return W.from_dict({**base, **kw}, 100000)


def test_the_engine_workload_is_the_topology_spec():
    assert issubclass(W.Workload, WorkloadSpec)
    assert set(WORKLOAD_FIELD_TYPES) >= {"head_dim", "recompute_modules"}


@pytest.mark.parametrize("name", sorted(QWEN3))
def test_qwen3_sizes_need_their_own_head_width(name):
    shape, total, active = QWEN3[name]
    w = _w(**shape)
    assert W.parameters(w) / 1e9 == pytest.approx(total, rel=0.01)
    act = (W._active_matrix_params_per_layer(w) * w.layers + 2 * w.vocab * w.hidden) / 1e9
    assert act == pytest.approx(active, rel=0.02)
    # with heads hidden/heads wide (64) the attention would be half its size
    narrow = _w(**{**shape, "head_dim": 0})
    assert W.parameters(narrow) < W.parameters(w) - w.layers * w.hidden * w.heads * 64 * 1.5


def test_head_dim_equal_to_hidden_over_heads_changes_nothing():
    a = _w(layers=4, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336)
    b = _w(layers=4, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, head_dim=128)
    assert W.parameters(a) == pytest.approx(W.parameters(b))
    assert W.compute(a, H100).micro_batch_s == pytest.approx(W.compute(b, H100).micro_batch_s)
    assert W.model_flops_per_iteration(a) == pytest.approx(W.model_flops_per_iteration(b))


def test_wide_heads_cost_attention_in_proportion():
    """Q·Kᵀ and scores·V scale with heads × head width: 64 heads of 128 on hidden 4096 is twice
    the score work of 64 heads of 64."""
    shape = QWEN3["235b"][0]
    wide, narrow = _w(**shape), _w(**{**shape, "head_dim": 0})
    assert W.attention_score_flops_per_token(wide) == pytest.approx(2 * W.attention_score_flops_per_token(narrow))


def test_head_dim_lets_heads_not_divide_hidden():
    _w(layers=2, hidden=1000, heads=16, head_dim=128)  # accepted (1000/16 is no whole width)
    with pytest.raises(W.UsageError, match="give head_dim"):
        _w(layers=2, hidden=1000, heads=16)


DENSE = dict(layers=8, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, vocab=32000, seq_len=4096,
             tp=1, pp=1, dp=1, global_batch=4, flash_attention=True, recompute=True,
             recompute_granularity="selective")


def test_selective_default_recomputes_the_attention_core_only():
    w = W.Workload(**DENSE)
    assert w.recomputes("core_attn") and not w.recomputes("mlp")
    assert W.Workload(**{**DENSE, "recompute_modules": "core_attn"}) == W.Workload(
        **{**DENSE, "recompute_modules": "core_attn"})
    a = W.compute(W.Workload(**DENSE), H100)
    b = W.compute(W.Workload(**{**DENSE, "recompute_modules": "core_attn"}), H100)
    assert a.micro_batch_s == pytest.approx(b.micro_batch_s)


def test_recomputing_the_mlp_adds_one_forward_of_its_gemms():
    """Megatron-Core's "mlp" module: the MLP's GEMMs run a fourth forward unit; the attention core
    is then not recomputed (it is not listed)."""
    base = W.compute(W.Workload(**{**DENSE, "recompute": False}), H100)
    mlp = W.compute(W.Workload(**{**DENSE, "recompute_modules": "mlp"}), H100)
    w = W.Workload(**DENSE)
    tokens = w.micro_batch * w.seq_len
    one_unit, _ = W._matrix_time(w, H100, W._mlp_shapes(w, w.ffn_hidden), tokens, 1, False,
                                 W.gpu_peak_tflops(H100, "bf16") * 1e12 * H100["gemm_efficiency"])
    assert mlp.linear_s - base.linear_s == pytest.approx(w.stage_layers * one_unit, rel=1e-6)
    assert mlp.attention_s == pytest.approx(base.attention_s)


MOE = dict(layers=8, dense_layers=1, hidden=2048, heads=16, experts=64, top_k=8, moe_ffn_hidden=1024,
           seq_len=4096, tp=1, pp=1, dp=8, ep=8, global_batch=8, flash_attention=True, recompute=True,
           recompute_granularity="selective")


def test_recomputing_the_moe_layer_reruns_its_experts_and_its_all_to_alls():
    plain = W.Workload(**MOE)
    moe = W.Workload(**{**MOE, "recompute_modules": "moe"})
    assert W.compute(moe, H100).expert_s == pytest.approx(W.compute(plain, H100).expert_s * 4 / 3)
    assert tr.volumes(moe).ep_calls_per_micro_batch == tr.volumes(plain).ep_calls_per_micro_batch * 3 // 2


def test_recomputing_mla_up_projections_costs_only_those():
    ds = dict(layers=4, hidden=7168, heads=128, q_lora_rank=1536, kv_lora_rank=512, qk_head_dim=128,
              rope_head_dim=64, v_head_dim=128, ffn_hidden=18432, seq_len=4096, tp=1, pp=1, dp=1,
              global_batch=1, flash_attention=True, recompute=True, recompute_granularity="selective")
    a = W.compute(W.Workload(**{**ds, "recompute_modules": "core_attn"}), H100)
    b = W.compute(W.Workload(**{**ds, "recompute_modules": "core_attn,mla_up_proj"}), H100)
    assert 0 < b.linear_s - a.linear_s < 0.25 * a.linear_s / 3


def test_unknown_recompute_module_is_refused_with_the_choices():
    with pytest.raises(W.UsageError, match="recompute_modules 'attention' unknown") as e:
        W.from_dict({**DENSE, "recompute_modules": "mlp,attention"}, 8)
    assert all(m in str(e.value) for m in RECOMPUTE_MODULES)


def test_mxfp8_runs_at_the_fp8_rate_with_its_block_scales():
    w8 = dict(DENSE, recompute=False, precision="fp8")
    fp8 = W.compute(W.from_dict(w8, 8, gpu=B200), B200)
    mx = W.compute(W.from_dict({**w8, "precision": "mxfp8"}, 8, gpu=B200), B200)
    assert mx.gemm_s == pytest.approx(fp8.gemm_s)
    assert mx.fp8_cast_s == pytest.approx(fp8.fp8_cast_s * (W.FP8_CAST_BYTES + 2 / 32) / W.FP8_CAST_BYTES)
    assert W.Workload(**{**w8, "precision": "mxfp8"}).bytes_per_value == 2


def test_mxfp8_needs_blackwell():
    with pytest.raises(W.UsageError, match="mxfp8.*Blackwell.*use 'fp8'"):
        W.from_dict({**DENSE, "precision": "mxfp8"}, 8, gpu=H100)


def test_timing_shows_exposed_and_hidden_per_dimension():
    """tp_comm_overlap off: every TP all-reduce is exposed; on: part of it is hidden, and the
    breakdown's tp_comm is the exposed part."""
    from test_engine_overlap import SHAPES
    w = W.Workload(**{**DENSE, "tp": 8, "dp": 1, "recompute": False, "sequence_parallel": True})
    ct, vol = W.compute(w, H100), tr.volumes(w)
    off = T.timing_of(w, ct, vol, SHAPES)
    on = T.timing_of(W.Workload(**{**w.to_dict(), "tp_comm_overlap": True}), ct, vol, SHAPES)
    assert off.hidden_s(w)["tp"] == 0 and off.breakdown["tp_comm"] > 0
    assert on.hidden_s(w)["tp"] > 0
    assert on.breakdown["tp_comm"] + on.hidden_s(w)["tp"] == pytest.approx(off.breakdown["tp_comm"])


LLAMA70 = dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, vocab=128256, seq_len=8192,
               tp=1, pp=1, dp=64, global_batch=128, micro_batch=2, zero_stage=3, flash_attention=True,
               recompute=False, precision="fp8")


def test_activation_offload_frees_the_offloaded_layers_memory():
    """Megatron-Bridge 25.09's GB200 Llama 3 70B FP8 recipe (FSDP, MBS 2, cpu_offloading_num_layers
    40): the activations of 40 of the 80 layers leave GPU memory, one layer in transit stays."""
    full, off = W.Workload(**LLAMA70), W.Workload(**LLAMA70, offload_layers=40)
    freed = (W.memory_per_gpu_GB(full) - W.memory_per_gpu_GB(off)) * 1e9
    assert freed == pytest.approx(39 * W.activation_bytes_megatron(full) * 1.05, rel=1e-6)
    assert W.kept_layers(off) == 41 and W.kept_layers(full) == 80


def test_activation_offload_costs_only_what_compute_does_not_hide():
    gb200 = CAT.get("gpu", "gb200-gpu")
    assert gb200["host_link_GBps"] == 225
    base = W.compute(W.Workload(**LLAMA70), gb200)
    hidden = W.compute(W.Workload(**LLAMA70, offload_layers=40), gb200)
    assert hidden.offload_s == 0 and hidden.micro_batch_s == pytest.approx(base.micro_batch_s)
    # over a PCIe Gen5 x16 (no host_link_GBps) the same copies exceed the forward and the backward
    slow = W.compute(W.Workload(**LLAMA70, offload_layers=80), {**gb200, "host_link_GBps": 0})
    t = 80 * W.activation_bytes_megatron(W.Workload(**LLAMA70)) / 50.4e9
    fwd = base.micro_batch_s - base.backward_s
    assert slow.offload_s == pytest.approx((t - fwd) + (t - base.backward_s), rel=1e-6)
    assert slow.micro_batch_s == pytest.approx(base.micro_batch_s + slow.offload_s)
