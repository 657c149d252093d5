"""Issue #22: DeepSeek-V3 pre-training on H100, B200 and GB200 against Megatron-Bridge's published
25.09 table (tests/data/moe_megatron_bridge.json: layouts and settings from the same release's
performance configs), and the MoE parts the engine charges for them.

Not fitted: GEMM rates from the catalog, the MoE permutation bytes counted from the dispatcher's
kernels (``workload.moe_memory_bytes``), the flex dispatcher's copies from balanced routing
(``traffic.remote_nodes_per_token``), 20 SMs for an overlapped dispatch (DeepSeek-V3 report)."""

import importlib.util
import math
from pathlib import Path

import pytest

from designer.engine import traffic as tr
from designer.engine import workload as W

_spec = importlib.util.spec_from_file_location("fidelity_table", Path(__file__).parents[1] / "bench" / "fidelity_table.py")
FT = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FT)
REF = FT._load("moe_megatron_bridge.json")
BAND = 0.10  #: the issue's acceptance band
RUNS = {k: FT.moe_bridge_run(k)[0] for k in ("h100", "b200", "gb200")}


def _tps(key):
    return RUNS[key].tokens_per_s / RUNS[key].gpus


def _published(key):
    return REF["cases"][key]["published_tokens_per_s_per_gpu"]


@pytest.mark.parametrize("blackwell", ["b200", "gb200"])
def test_blackwell_over_hopper_within_10_percent(blackwell):
    """Published: B200/H100 = 2265/1297 = 1.75, GB200/H100 = 2.66 per GPU (the issue: the engine
    gave 2.35 where runs show ~1.65). GB200 comes out 2.86 (+7%): its own +5% over H100's -2%."""
    engine = _tps(blackwell) / _tps("h100")
    published = _published(blackwell) / _published("h100")
    assert engine == pytest.approx(published, rel=BAND), (engine, published)


#: each case's error and its parts (the prediction is the engine's sum of them)
PARTS = {
    "h100": "-2%: compute 82% of the step, of it host-bound MoE launches 39 of 166 ms per micro-batch "
            "(moe_host_sync, no CUDA graphs in this recipe: 8 MoE layers x (1.69 + 3.21) ms), "
            "ep_comm 11% (DeepEP dispatch hidden behind the other micro-batch, 20 of 132 SMs taken), straggler 4%",
    "b200": "+5%: compute 78% (host-bound launches 20 of 84 ms per micro-batch, no CUDA graphs), bubble 10% "
            "(pp 16, 128 micro-batches), exposed all-to-all 8% (no overlap in this recipe)",
    "gb200": "+5%: compute 73% (host-bound launches 27 of 208 ms per micro-batch: the sync's 1.69 ms per "
             "MoE layer only, cuda_graphs on), exposed NVLink dispatch 21% (EP 64 inside one rack, HybridEP "
             "at its measured 463 GB/s on GB200, BF16, 32 SMs: coll.HYBRIDEP_NVL5_GBPS; it was +14% with "
             "the link model's 740 GB/s); the recipe graphs only the router and EP preprocess, not "
             "attention, whose share of the 3.21 ms is not charged, and the sync figure is a lower bound",
}
#: cases still outside the band, by their parts (strict: the test fails once inside); none now
GAPS: dict[str, str] = {}


@pytest.mark.parametrize("key", ["h100", "b200", "gb200"])
def test_deepseek_v3_within_10_percent(key):
    """Megatron-Bridge 25.09, DGX-H100 1,297, DGX-B200 2,265 and DGX-GB200 3,454 tokens/s/GPU (FP8
    current scaling; tests/data/moe_megatron_bridge.json)."""
    assert _tps(key) == pytest.approx(_published(key), rel=BAND), PARTS[key]


def test_the_gb200_dispatch_runs_at_hybrideps_measured_rate():
    """The part that was wrong: EP 64 inside one NVL72 rack dispatched at the link model's
    0.82 x 900 = 740 GB/s, where HybridEP on GB200 measures 479 (BF16 dispatch) and 448 GB/s
    (combine) at 36 ranks with Megatron-Bridge's 32 SMs (DeepEP hybrid-ep README, Torch API).
    Each call moves one copy per token and destination rank, 4,096 x 7.64 x 7,168 x 2 bytes, at
    their harmonic mean, 463 GB/s."""
    from designer.engine import collectives as coll

    (ep,) = [c for c in RUNS["gb200"].collectives if c.name == "ep_alltoall"]
    assert ep.algorithm == "flex"
    rate = 2 / (1 / 479.02 + 1 / 447.89)
    received = 4096 * tr.ranks_per_token(256, 8, 64) * 7168 * 2
    lat = coll.NVLINK_LAT_US[("ring", "simple")] * 1e-6
    assert ep.time_s == pytest.approx(received / (rate * 1e9) + lat, rel=1e-9)
    assert tr.ranks_per_token(256, 8, 64) == pytest.approx(64 * (1 - math.comb(252, 8) / math.comb(256, 8)))
    assert 7.6 < tr.ranks_per_token(256, 8, 64) < 7.7


def test_hybridep_rate_follows_the_measured_ranks_and_only_on_nvlink_5():
    """The measured points are returned as measured (dispatch/combine harmonic mean), counts
    between them interpolated, beyond 36 held; NVLink 4 has no measurement and keeps the link
    model, so the H100 case (DeepEP over 8 servers) is unchanged by it."""
    from designer.engine import collectives as coll

    def shape(n, nvlink=900.0, nodes=1):
        return coll.GroupShape(ranks=n, nodes=nodes, nvlink_GBps=nvlink, nvswitch=True)

    hm = {n: 2 / (1 / d + 1 / c) for n, (d, c) in coll.HYBRIDEP_NVL5_GBPS.items()}
    assert coll.hybridep_GBps(shape(8)) == pytest.approx(hm[8])
    assert coll.hybridep_GBps(shape(36)) == pytest.approx(hm[36])
    assert coll.hybridep_GBps(shape(64)) == pytest.approx(hm[36])
    assert coll.hybridep_GBps(shape(12)) == pytest.approx((hm[8] + hm[16]) / 2)
    assert coll.hybridep_GBps(shape(128, nodes=2)) == pytest.approx(hm[36])  # 64 per domain
    assert coll.hybridep_GBps(shape(8, nvlink=450.0)) == 0.0
    assert hm[8] > hm[16] > hm[24] > hm[32] > hm[36]  # falls with the rank count, as measured


@pytest.mark.parametrize("key", ["h100", "b200", "gb200"])
def test_the_error_is_the_one_explained(key):
    """Each case sits where its PARTS / GAPS entry says (±3 points): a change that moves it must
    say why."""
    want = float({**PARTS, **GAPS}[key].split("%")[0]) / 100
    assert _tps(key) / _published(key) - 1 == pytest.approx(want, abs=0.03)


@pytest.mark.parametrize("key", ["h100", "b200", "gb200"])
def test_the_parts_add_up_and_compute_leads(key):
    r = RUNS[key]
    assert sum(r.breakdown_s.values()) == pytest.approx(r.iteration_time_s, rel=1e-6)
    assert r.breakdown_s["compute"] / r.iteration_time_s > 0.7


def test_one_ep_group_per_nvl72_rack_stays_on_nvlink():
    """64 GPUs per rack (the recipes' HybridEP ranks per NVLink domain): every EP 64 group is one
    rack, its dispatch crosses no network."""
    (ep,) = [c for c in RUNS["gb200"].collectives if c.name == "ep_alltoall"]
    assert (ep.ranks, ep.servers) == (64, 1)


def test_flex_dispatch_sends_a_token_once_per_remote_server():
    """DeepSeek-V3 on EP 64 over 8 servers: 256 experts, 32 per server, top 8, balanced: a server
    is missed with probability C(224, 8)/C(256, 8); 7 other servers."""
    want = 7 * (1 - math.comb(224, 8) / math.comb(256, 8))
    assert tr.remote_nodes_per_token(256, 8, 8) == pytest.approx(want)
    assert want < 8 * 7 / 8  # fewer than the all-to-all's copies for other servers
    assert tr.remote_nodes_per_token(256, 8, 1) == 0


def test_moe_permutation_bytes_are_charged_as_memory_time():
    w = W.Workload(layers=4, dense_layers=1, hidden=2048, heads=16, experts=64, top_k=8, moe_ffn_hidden=1024, mlp="swiglu",
                   seq_len=4096, tp=1, pp=1, dp=8, ep=8, global_batch=8, recompute=False, flash_attention=True)
    from designer.topology.catalog import load_catalog
    h100 = load_catalog().get("gpu", "h100-sxm")
    ct = W.compute(w, h100)
    fwd, bwd = W.moe_memory_bytes(w)
    t, c, h, F = 4096, 4096 * 8, 2048, 1024
    assert fwd == pytest.approx((2 * t * h + 6 * c * h + c * 3 * F) * 2)
    assert bwd == pytest.approx((2 * t * h + 6 * c * h + c * 5 * F) * 2)
    assert ct.moe_memory_s == pytest.approx(w.stage_layers * 3 / 4 * (fwd + bwd) / (h100["memory_bw_TBps"] * 1e12))
    assert W.moe_memory_bytes(W.Workload(layers=2, hidden=64, heads=2)) == (0.0, 0.0)


# --- parts examined for the remaining gap (issue #22) ------------------------------------------------

GPUS = {"h100": "h100-sxm", "b200": "b200", "gb200": "gb200-gpu"}


def _compute(key, **changes):
    from dataclasses import replace

    from designer.topology.catalog import load_catalog
    w = replace(W.Workload(**RUNS[key].workload), **changes)
    return w, W.compute(w, load_catalog().get("gpu", GPUS[key]))


@pytest.mark.parametrize("key", ["h100", "b200", "gb200"])
def test_the_mtp_module_fits_in_the_last_stages_spare_slots(key):
    """Megatron-Bridge v0.2.0 runs DeepSeek-V3 with one MTP module (mtp_num_layers=1) on the last
    stage, whose layout leaves 3 of the p·v·⌈61/(p·v)⌉ = 64 slots empty there (PP 16: 1 decoder
    layer + MTP + loss). By the engine's own parts the last GPU (its layers less 3, the output
    layer twice, one more block and the 2h→h projection) stays below a full GPU plus the output
    layer, the engine's busiest: the MTP adds nothing to the step, and is not the gap."""
    w, with_mtp = _compute(key)
    assert w.mtp_layers == 1 and W.spare_layers(w) == 3
    _, without = _compute(key, mtp_layers=0)
    assert with_mtp.mtp_s == 0 and with_mtp.micro_batch_s == without.micro_batch_s
    L = w.stage_layers
    layer = (without.gemm_s - without.logit_s + without.memory_s) / L
    head = without.logit_s / W.logit_share(w)
    last = (L - 3) * layer + 2 * head + layer  # + the projection, below 1% of a layer
    assert last < L * layer + without.logit_s


def test_an_mtp_module_without_spare_slots_costs_a_block_a_projection_and_the_output_layer():
    """64 layers on 16 stages (no empty slot): the last GPU runs its 4 layers and the output
    layer as the busiest one does, plus the MTP block, its 2h→h projection (3 units of
    2·tokens·2h² FLOPs at the 16-bit GEMM rate) and the output layer once more."""
    from designer.topology.catalog import load_catalog
    b200 = load_catalog().get("gpu", "b200")
    base = dict(layers=64, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, vocab=128256, mlp="swiglu",
                seq_len=4096, tp=1, pp=16, dp=1, global_batch=32, precision="bf16", recompute=False,
                flash_attention=True)
    plain, mtp = W.Workload(**base), W.Workload(**base, mtp_layers=1)
    a, b = W.compute(plain, b200), W.compute(mtp, b200)
    layer = (a.gemm_s - a.logit_s + a.memory_s) / plain.stage_layers
    proj = 3 * 2 * 4096 * 2 * 4096 ** 2 / (b200["bf16_dense_tflops"] * 1e12 * b200["gemm_efficiency"])
    assert b.mtp_s == pytest.approx(layer + proj + a.logit_s)
    assert b.micro_batch_s == pytest.approx(a.micro_batch_s + b.mtp_s)
    assert b.backward_fraction < a.backward_fraction + 0.01


#: measured grouped-GEMM rates at DeepSeek-V3's expert shapes (K = 7168 for fc1 forward)
GROUPED_GEMM = {
    # Megatron-LM docs/discussions/deepseek-v3-gb200-optimization (2025-11), §1 item 3: MXFP8
    # grouped GEMM, multi-stream cuBLAS, 2,672 TFLOP/s (flush L2) at K = 7,168, N = 2,048, GB200
    "gb200-gpu": 2672,
    # deepseek-ai/DeepGEMM README, 'Grouped GEMMs for MoE models (contiguous layout)', H800 (the
    # H100 SXM's tensor cores and clocks): 4 groups of M = 8,192, N = 4,096, K = 7,168: 1,297 TFLOPS
    "h100-sxm": 1297,
}


@pytest.mark.parametrize("gpu_id", sorted(GROUPED_GEMM))
def test_expert_gemms_run_no_faster_than_measured_grouped_gemms(gpu_id):
    """The issue's suspect 'grouped GEMMs of small experts': DeepSeek-V3's experts see
    M = 1,024 (B200, EP 8) to 8,192 (EP 64) rows per micro-batch, where measured grouped GEMMs
    run at dense rates. The engine's FP8 rate at K = 7,168 (BF16 rate x fp8_over_bf16) is at
    most the measured grouped rate and within 25% of it (training keeps 0.745 of a kernel's
    ceiling, see gpu.toml gemm_efficiency): a slower grouped-GEMM rate cannot close the gap."""
    from designer.topology.catalog import load_catalog
    g = load_catalog().get("gpu", gpu_id)
    engine = g["bf16_dense_tflops"] * g["gemm_efficiency"] * W.fp8_over_bf16(7168, g)
    assert 0.75 * GROUPED_GEMM[gpu_id] <= engine <= GROUPED_GEMM[gpu_id], engine


def test_host_bound_moe_time_is_charged_per_moe_layer_by_the_switches():
    """``moe_host_sync``: each MoE layer of the busiest stage waits MOE_SYNC_HOST_S, and
    MOE_GRAPHABLE_HOST_S more without ``cuda_graphs``; dense layers and models without the
    sync pay nothing. The figures convert the Megatron-LM GB200 DeepSeek-V3 study's TFLOP/s
    (970 at the end, +10% without the sync; 610.71 -> 663.27 and 797.67 -> 829.93 with CUDA
    graphs) with the engine's FLOPs of that job: 9.21e15 per GPU and step, 8 x 64 layer passes."""
    job = dict(FT._load("moe_reference.json")["deepseek_v3"]["workload"])
    job = {k: v for k, v in job.items() if k in W._FIELD_NAMES}
    job.update(tp=1, pp=8, interleave=4, ep=32, dp=32, global_batch=2048, micro_batch=1, seq_len=4096, mtp_layers=0)
    study = W.Workload(**job)
    flops = W.model_flops_per_iteration(study, recompute=False) / 256
    assert flops == pytest.approx(9.21e15, rel=0.005)
    passes = study.stage_layers * study.micro_batches
    assert W.MOE_SYNC_HOST_S == pytest.approx(flops / 970e12 * (1 - 1 / 1.1) / passes, rel=0.01)
    saved = flops * (1 / 610.71e12 - 1 / 663.27e12 + 1 / 797.67e12 - 1 / 829.93e12)
    assert W.MOE_GRAPHABLE_HOST_S == pytest.approx(saved / passes, rel=0.01)

    w, ct = _compute("b200")
    moe_layers = min(w.stage_layers, 58)  # every slot of a stage past the 3 dense layers
    assert ct.host_s == pytest.approx(moe_layers * (W.MOE_SYNC_HOST_S + W.MOE_GRAPHABLE_HOST_S))
    assert ct.micro_batch_s == pytest.approx(ct.gemm_s + ct.memory_s + ct.host_s)
    assert _compute("b200", cuda_graphs=True)[1].host_s == pytest.approx(moe_layers * W.MOE_SYNC_HOST_S)
    assert _compute("b200", moe_host_sync=False)[1].host_s == 0
    dense = W.Workload(layers=4, hidden=1024, heads=8, seq_len=1024, dp=1, global_batch=1, moe_host_sync=True)
    assert W.moe_host_s(dense) == 0


def _study():
    """The Megatron-LM GB200 DeepSeek-V3 study's job (docs/discussions/deepseek-v3-gb200-optimization,
    2025-11): 256 GB200, TP1 PP8 VPP4 EP32, micro-batch 1, global batch 2,048, no MTP."""
    job = dict(FT._load("moe_reference.json")["deepseek_v3"]["workload"])
    job = {k: v for k, v in job.items() if k in W._FIELD_NAMES}
    job.update(tp=1, pp=8, interleave=4, ep=32, dp=32, global_batch=2048, micro_batch=1, seq_len=4096,
               mtp_layers=0, moe_host_sync=True, cuda_graphs=True)
    return W.Workload(**job)


def test_the_host_bound_constants_give_back_the_study_they_are_calibrated_on():
    """The study's step at 970 TFLOP/s is the engine's FLOPs / 970e12; removing the time
    moe_host_s charges for the sync over its 64 micro-batches makes it the study's "at least 10%"
    faster, and turning its CUDA graphs off adds what the graphs saved there (610.71 -> 663.27 and
    797.67 -> 829.93 TFLOP/s): the busiest GPU's 8 MoE layers, not 8 x 58/61."""
    from dataclasses import replace

    study = _study()
    assert min(study.stage_layers, study.moe_layers) == 8
    flops = W.model_flops_per_iteration(study, recompute=False) / 256
    step = flops / 970e12
    sync = W.moe_host_s(study) * study.micro_batches
    assert step / (step - sync) == pytest.approx(1.10, rel=1e-3)
    graphs = (W.moe_host_s(replace(study, cuda_graphs=False)) - W.moe_host_s(study)) * study.micro_batches
    saved = flops * (1 / 610.71e12 - 1 / 663.27e12 + 1 / 797.67e12 - 1 / 829.93e12)
    assert graphs == pytest.approx(saved, rel=0.005)
