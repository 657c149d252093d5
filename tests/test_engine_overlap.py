"""Overlap settings (tp_comm_overlap, pp_overlap, dp_overlap), selective recomputation and
ZeRO-3 traffic in the timing stage (designer.engine.timing)."""

import pytest

from designer.engine import collectives as coll
from designer.engine import timing as T
from designer.engine import traffic as tr
from designer.engine import workload as W
from designer.topology.catalog import load_catalog

GPU = load_catalog().get("gpu", "h100-sxm")
#: a TP 8 group on one DGX H100, PP and DP across servers at 400 Gb/s per rail
SHAPES = {"tp": coll.GroupShape(ranks=8, nodes=1, nvlink_GBps=450, nvswitch=True, nvls=True),
          "pp": coll.GroupShape(ranks=4, nodes=4, nvlink_GBps=450, net_GBps=46.875, net_line_GBps=50),
          "dp": coll.GroupShape(ranks=8, nodes=8, nvlink_GBps=450, net_GBps=46.875, net_line_GBps=50)}
BASE = dict(layers=32, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, vocab=32000, seq_len=4096,
            tp=8, pp=4, dp=8, interleave=2, global_batch=256, micro_batch=1, precision="bf16",
            flash_attention=True, recompute=False, sequence_parallel=True, optimizer_sharded=True)


def _time(**changes):
    w = W.Workload(**{**BASE, **changes})
    colls, parts, it, _ = T.timing(w, W.compute(w, GPU), tr.volumes(w), SHAPES)
    return parts, it, colls


def test_tp_overlap_hides_the_collectives_behind_the_gemms():
    """TP comm is cut into tp chunks, one left exposed (Wang et al. ASPLOS 2023; TE userbuffers):
    here the collectives are shorter than the linear GEMMs, so 1/tp of them remains."""
    plain, _, _ = _time()
    hidden, _, _ = _time(tp_comm_overlap=True)
    assert hidden["tp_comm"] == pytest.approx(plain["tp_comm"] / 8)
    assert hidden["compute"] == plain["compute"]


def test_pp_overlap_hides_sends_shorter_than_a_micro_batch():
    plain, _, _ = _time()
    hidden, _, _ = _time(pp_overlap=True)
    assert plain["pp_comm"] > 0 and hidden["pp_comm"] == 0.0


def test_dp_overlap_leaves_the_last_bucket_or_what_exceeds_the_windows():
    plain, it_plain, colls = _time()
    over, it_over, _ = _time(dp_overlap=True)
    assert over["dp_exposed"] <= plain["dp_exposed"]
    rs = next(c for c in colls if c.name == "dp_reduce_scatter")
    # Megatron-Core's bucket: max(40M, 1M x dp) parameters of 2 bytes, at least that is exposed
    w = W.Workload(**BASE)
    last = rs.time_s * min(1.0, 40e6 * 2 / tr.volumes(w).dp_bytes)
    assert over["dp_exposed"] >= 2 * last * 0.999
    assert it_over <= it_plain


def test_selective_recompute_reruns_only_the_attention_core():
    """Korthikanti et al. 2023 §5: selective recomputation re-runs the attention core (its FLOPs
    once more), not the matrices; full recomputation re-runs the whole layer."""
    w = W.Workload(**{**BASE, "flash_attention": False})
    none = W.model_flops_per_iteration(w, recompute=False)
    sel = W.model_flops_per_iteration(W.Workload(**{**w.to_dict(), "recompute": True,
                                                    "recompute_granularity": "selective"}))
    full = W.model_flops_per_iteration(W.Workload(**{**w.to_dict(), "recompute": True}))
    tokens = w.global_batch * w.seq_len
    assert sel - none == pytest.approx(tokens * w.layers * W.attention_score_flops_per_token(w))
    assert full - none > 5 * (sel - none)
    # memory: selective drops the stored s x s scores (5·a·s²·b/t bytes per layer)
    m_none = W.activation_bytes_megatron(w)
    m_sel = W.activation_bytes_megatron(W.Workload(**{**w.to_dict(), "recompute": True,
                                                      "recompute_granularity": "selective"}))
    assert m_none - m_sel == pytest.approx(5 * 64 * 4096 * 4096 / 8)


def test_zero3_gathers_weights_every_micro_batch():
    """ZeRO-3 / FSDP: the weights are all-gathered before each forward and backward (Rajbhandari
    et al. 2020, §5.3: 1.5x the traffic of plain data parallelism)."""
    w = W.Workload(**{**BASE, "zero_stage": 3})
    v = tr.volumes(w)
    assert v.zero3_bytes == v.dp_bytes
    _, _, colls = _time(zero_stage=3)
    (ag,) = [c for c in colls if c.name == "dp_param_allgather"]
    assert ag.calls_per_iteration == 2 * w.micro_batches
