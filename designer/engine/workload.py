"""Workload stage: what one training iteration asks of each GPU (no network yet).

A :class:`Workload` is a transformer LLM trained with tensor (TP), pipeline (PP) and data (DP)
parallelism as in Megatron-LM, or a vision workload described by samples/s and bytes per sample
(which matters for storage, not for the GPU model here). :func:`compute` turns it plus a GPU's
catalog figures into per-micro-batch compute times.

Architectures: without ``kv_heads``/``ffn_hidden`` a transformer is Megatron's GPT (multi-head
attention, a 4h GELU MLP with biases, LayerNorm, tied input/output embedding, learned position
embedding) and every count below reduces exactly to the Megatron formulas. ``kv_heads`` gives
grouped-query attention (K and V projected to h·kv_heads/heads); ``ffn_hidden`` gives a Llama-style
block (SwiGLU MLP of width ffn_hidden with three weight matrices, no biases, RMSNorm, rotary
positions, untied input and output embeddings).

Sources
- Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
  Megatron-LM", SC'21 (arXiv 2104.04473): model FLOPs (§5.1), parameter count, pipeline bubble
  (§2.2), training-time estimate (eq. 4).
- Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
  MLSys 2023 (arXiv 2205.05198), §4.1: activation bytes per layer.
- Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
  NeurIPS 2022 (arXiv 2205.14135), §3.1: the attention score matrix is never written to HBM; the
  backward pass recomputes it from Q, K, V and the per-row softmax statistics.
- Llama Team, AI @ Meta, "The Llama 3 Herd of Models" (arXiv 2407.21783, 2024), Table 3 (shapes:
  GQA, SwiGLU, 128K vocabulary) and §3.3.2 (pipeline: one layer fewer on the first and the last
  stage, whose end chunks hold only the embedding and only the output layer and loss).
- Compute by part, FP8, attention: see ``FP8_OVER_BF16_BY_SIDE``, ``ATTENTION_EFFICIENCY`` and
  :func:`compute` (cuBLAS FP8 over BF16 on Hopper, Azure cuBLASLt and FlashAttention benchmarks, FlashAttention-2/3).
- Mixture of experts and latent attention: Jiang et al., "Mixtral of Experts" (arXiv 2401.04088,
  Table 1); DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv 2412.19437, §2.1 and §4.2).
- Memory: Megatron-LM's estimator (megatron/training/theoretical_memory_usage.py), Korthikanti
  et al. 2023 Table 2, ZeRO (Rajbhandari et al. 2020) stages 1-3.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from designer.engine.collectives import PCIE_X16_GBPS
from designer.errors import UsageError
from designer.topology.workload_spec import RECOMPUTE_MODULES, WorkloadSpec

#: bytes per value of each training precision (weights, activations and gradients)
PRECISION_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4, "tf32": 4, "mxfp8": 1}
#: the 8-bit GEMM formats: per-tensor scaled FP8 (Hopper and later) and MXFP8, FP8 values with an
#: 8-bit power-of-two scale per block of 32 (OCP Microscaling Formats MX v1.0, 2023, §5; run by the
#: Blackwell tensor cores at the FP8 rate, Transformer Engine's MXFP8BlockScaling recipe)
FP8_FORMATS = ("fp8", "mxfp8")
#: catalog GPU field holding the dense tensor-core peak of each precision
PRECISION_PEAK_FIELD = {"bf16": "bf16_dense_tflops", "fp16": "bf16_dense_tflops",
                        "fp8": "fp8_dense_tflops", "mxfp8": "fp8_dense_tflops", "fp32": "tf32_dense_tflops",
                        "tf32": "tf32_dense_tflops"}


@dataclass(frozen=True)
class Workload(WorkloadSpec):
    """One training job: the settings of :class:`designer.topology.workload_spec.WorkloadSpec`
    (the one list of the fields, their defaults and meaning) and what the engine derives from
    them (GPU count, micro-batches, the busiest stage's layers ...)."""

    @property
    def gpus(self) -> int:
        """tp·cp·pp·dp (expert parallelism is carved out of the DP·CP ranks, as in Megatron-Core)."""
        return self.tp * self.cp * self.pp * self.dp

    @property
    def dp_ranks(self) -> int:
        """Ranks of the gradient-reduction (placement "dp") dimension: cp·dp. In Megatron's rank
        order (tp-cp-ep-dp-pp) the CP and EP groups are inner chunks of it."""
        return self.cp * self.dp

    @property
    def zero(self) -> int:
        """Effective ZeRO stage: ``zero_stage``, at least 1 with ``optimizer_sharded``."""
        return max(self.zero_stage, 1 if self.optimizer_sharded else 0)

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    @property
    def micro_batches(self) -> int:
        """m = B / (dp * b): micro-batches per pipeline per iteration."""
        return self.global_batch // (self.dp * self.micro_batch)

    @property
    def stage_layers(self) -> int:
        """Layers on the busiest GPU of the pipeline: v·⌈l/(p·v)⌉ (v virtual stages per GPU).

        When l is not a multiple of p·v some (virtual) stages hold one layer fewer (Llama 3 405B:
        126 layers on 16 stages, the first and the last with 7); the pipeline runs at the pace of
        a GPU whose every chunk has the larger count, so that count sets the micro-batch time.
        The p·v chunks may exceed l by up to two (see ``MAX_LAYERLESS_CHUNKS``): then every chunk
        holds one layer, except the first (embedding only) and the last (output layer and loss
        only), and the busiest GPU holds v layers, which is what the formula gives for p·v > l.
        """
        return self.interleave * math.ceil(self.layers / (self.pp * self.interleave))

    @property
    def bytes_per_value(self) -> int:
        """Bytes of an activation, gradient or weight value as stored and communicated. FP8
        training keeps 16-bit activations, weights and gradients and casts to FP8 only at the
        GEMM inputs (Micikevicius et al., "FP8 Formats for Deep Learning", arXiv 2209.05433, §4;
        NVIDIA Transformer Engine: FP8 for the Linear GEMMs, higher precision elsewhere), so 2;
        the GEMM inputs kept for the backward are the exception, FP8 casts of one byte
        (``FP8_SAVED_GEMM_INPUTS``, in :func:`activation_bytes_megatron`)."""
        return 2 if self.precision in FP8_FORMATS else PRECISION_BYTES[self.precision]

    @property
    def head_width(self) -> int:
        """Width of one attention head: ``head_dim``, else hidden / heads."""
        return self.head_dim or self.hidden // self.heads

    def recomputes(self, module: str) -> bool:
        """Whether the backward pass re-runs ``module`` (``RECOMPUTE_MODULES``): every module with
        full recomputation, the listed ones (default core_attn) with selective recomputation."""
        if not self.recompute:
            return False
        if self.recompute_granularity == "full":
            return True
        if self.recompute_granularity == "op":
            return False  # no whole module: every other matrix product (``op_policy_matrices``)
        listed = [m.strip() for m in self.recompute_modules.split(",") if m.strip()] or ["core_attn"]
        return module in listed

    @property
    def training_samples(self) -> float:
        """Samples of the whole run: dataset_samples × epochs (vision; the default data set when
        none is given), global batches of seq_len tokens (transformer)."""
        if self.kind == "vision":
            return (self.dataset_samples or DEFAULT_DATASET_SAMPLES) * self.epochs
        return self.tokens / self.seq_len

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: training set of a vision workload that names none: ImageNet-1k's 1,281,167 training images
#: (Russakovsky et al., "ImageNet Large Scale Visual Recognition Challenge", IJCV 2015, Table 2;
#: the ResNet-50 benchmark data set of MLPerf Training and Storage)
DEFAULT_DATASET_SAMPLES = 1_281_167


#: model chunks without a transformer layer that a pipeline may have: the embedding-only first
#: chunk and the chunk holding only the output layer and the loss (Llama 3 §3.3.2: "the first
#: model chunk on the first stage has only the embedding, and the last model chunk on the last
#: stage has only output projection and loss calculation"), so p·v ≤ l + 2
MAX_LAYERLESS_CHUNKS = 2

_BOOL_FIELDS = ("recompute", "optimizer_sharded", "flash_attention", "sequence_parallel", "fused_cross_entropy",
                "grad_reduce_in_fp32", "optimizer_cpu_offload", "overlap_cpu_optimizer_d2h_h2d",
                "tp_comm_overlap", "pp_overlap", "dp_overlap", "ep_overlap", "moe_host_sync", "cuda_graphs",
                "embedding_in_pipeline_split")
_INT_FIELDS = {"layers", "hidden", "heads", "kv_heads", "head_dim", "offload_layers", "mtp_layers", "ffn_hidden", "vocab", "seq_len", "tp", "pp", "dp", "micro_batch",
               "global_batch", "interleave", "cp", "ep", "experts", "top_k", "moe_ffn_hidden",
               "shared_experts", "dense_layers", "q_lora_rank", "kv_lora_rank", "qk_head_dim",
               "rope_head_dim", "v_head_dim", "zero_stage"}
#: string fields and their choices
_CHOICE_FIELDS = {"mlp": ("", "gelu", "relu2", "swiglu"), "recompute_granularity": ("full", "selective", "op"),
                  "moe_dispatcher": ("alltoall", "flex")}
#: real-valued fields (and ``tokens_B``) and their lower bound (value, inclusive);
#: ``tflops_per_gpu`` also stays at or below the GPU's dense peak (checked in :func:`from_dict`)
_FLOAT_FIELDS = {"tokens": (0.0, False), "tokens_B": (0.0, False), "tflops_per_gpu": (0.0, True),
                 "samples_per_s_per_gpu": (0.0, True), "bytes_per_sample": (0.0, True),
                 "params": (0.0, True), "flops_per_sample": (0.0, True),
                 "dataset_samples": (0.0, True), "epochs": (0.0, False),
                 "preprocess_core_s_per_sample": (0.0, True), "optimizer_offload_fraction": (0.0, True)}
#: most host CPU time a sample's preprocessing may take: one core-minute, far beyond any published
#: pipeline (an ImageNet JPEG decode plus augmentation takes milliseconds); a larger value is most
#: likely milliseconds written as seconds
MAX_PREPROCESS_CORE_S = 60.0
#: largest count a field may hold (tp, layers, global batch ...): far beyond any machine, small
#: enough that products of counts stay exact and messages short
MAX_COUNT = 10 ** 9
_COUNTS = _INT_FIELDS | {"gpus"}  #: whole-number keys (``gpus``: a catalog entry's job size)
_FIELD_NAMES = {f.name for f in fields(Workload)}


def short(value: Any) -> str:
    """A value for a message: huge or long numbers in 3 significant digits (not 300 of them)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 1e12:
        return f"{float(value):.3g}"
    return repr(value)


def _check_numbers(values: dict[str, Any], where: str) -> None:
    """Every numeric field is a real, finite number in its range (``_COUNTS`` whole numbers)."""
    for key in [k for k in values if k in _COUNTS or k in _FLOAT_FIELDS]:
        v = values[key]
        kind = "a whole number" if key in _COUNTS else "a finite number"
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise UsageError(f"{where}: '{key}' must be {kind}, got {short(v)}")
        if key in _COUNTS and not float(v).is_integer():
            raise UsageError(f"{where}: '{key}' must be a whole number, got {short(v)}")
        if abs(v) > MAX_COUNT and key in _COUNTS:
            raise UsageError(f"{where}: '{key}' = {short(v)} is beyond any cluster (at most "
                             f"{MAX_COUNT:.0e}); check the value")
        low, inclusive = _FLOAT_FIELDS.get(key, (None, True))
        if low is not None and (v < low if inclusive else v <= low):
            bound = f"at least {low:g}" if inclusive else f"more than {low:g}"
            raise UsageError(f"{where}: '{key}' must be {bound}, got {short(v)}")
        if key in _COUNTS:
            values[key] = int(v)


def from_dict(data: dict[str, Any], total_gpus: int, where: str = "workload",
              gpu: dict[str, Any] | None = None) -> Workload:
    """Build and check a Workload from a dict (catalog entry, design file, CLI overrides).

    Unknown keys are ignored (catalog entries carry sources, ids ...); ``gpus`` of a catalog entry
    sets ``dp`` when ``dp`` is not given; ``tokens_B`` gives ``tokens`` in billions; a vision
    entry's ``samples_per_s_<gpu model>`` gives ``samples_per_s_per_gpu`` for ``gpu`` (the catalog
    entry of the design's GPU, which also bounds ``tflops_per_gpu`` by its dense peak). Raises
    UsageError naming the bad field.
    """
    data = dict(data)
    gpu_model = str((gpu or {}).get("id", ""))
    w = Workload(**_field_values(data, gpu_model, where))
    _check_kind(w, where, gpu, gpu_model)
    _check_ranges(w, where)
    w = _sized(w, data, total_gpus, where)
    _check_shapes(w, where)
    return w


def _field_values(data: dict[str, Any], gpu_model: str, where: str) -> dict[str, Any]:
    """The Workload fields ``data`` sets (``from_dict``), numbers and booleans checked; ``data``
    gains the fields its aliases give (``kind`` "llm", ``tokens_B``, ``samples_per_s_<gpu>``)."""
    values: dict[str, Any] = {}
    if data.get("kind") == "llm":
        data["kind"] = "transformer"
    if "tokens" not in data and data.get("tokens_B"):
        _check_numbers({"tokens_B": data["tokens_B"]}, where)
        data["tokens"] = float(data["tokens_B"]) * 1e9
    if data.get("kind") == "vision" and not data.get("samples_per_s_per_gpu") and gpu_model:
        data["samples_per_s_per_gpu"] = data.get("samples_per_s_" + gpu_model.replace("-", "_"), 0.0)
    for key, value in data.items():
        if key in _FIELD_NAMES and value is not None:
            values[key] = value
    if "id" in data and "name" not in values:
        values["name"] = str(data["id"])
    _check_numbers(values, where)
    for key in _BOOL_FIELDS:
        if key in values and not isinstance(values[key], bool):
            raise UsageError(f"{where}: '{key}' must be true or false, got {values[key]!r}")
    return values


def _check_kind(w: Workload, where: str, gpu: dict[str, Any] | None, gpu_model: str) -> None:
    """Kind, precision, recomputed modules and the achieved rate against the design's GPU."""
    if w.preprocess_core_s_per_sample > MAX_PREPROCESS_CORE_S:
        raise UsageError(f"{where}: 'preprocess_core_s_per_sample' = {short(w.preprocess_core_s_per_sample)} "
                         f"core-seconds per sample is beyond any data pipeline (at most "
                         f"{MAX_PREPROCESS_CORE_S:g}); give seconds, e.g. 0.003 for 3 ms")
    if w.kind not in ("transformer", "vision"):
        raise UsageError(f"{where}: kind must be 'transformer' or 'vision', got {w.kind!r}")
    if w.kind == "vision" and w.samples_per_s_per_gpu <= 0:
        raise UsageError(f"{where}: a vision workload needs samples_per_s_per_gpu > 0 (or a "
                         f"samples_per_s_<gpu model> figure for the design's GPU)")
    if not isinstance(w.precision, str) or w.precision not in PRECISION_BYTES:
        raise UsageError(f"{where}: precision must be one of {', '.join(PRECISION_BYTES)}, "
                         f"got {w.precision!r}")
    if gpu and w.precision == "mxfp8" and not gpu.get("mxfp8"):
        raise UsageError(f"{where}: precision 'mxfp8' needs tensor cores that scale each block of 32 "
                         f"values (Blackwell); the {gpu_model or 'design'} GPU has none: use 'fp8' "
                         f"(per-tensor scaling) or 'bf16'")
    if w.recompute_modules:
        bad = [m for m in (x.strip() for x in w.recompute_modules.split(",")) if m and m not in RECOMPUTE_MODULES]
        if bad:
            raise UsageError(f"{where}: recompute_modules {', '.join(repr(b) for b in bad)} unknown; "
                             f"give a comma-separated list of {', '.join(RECOMPUTE_MODULES)}")
    if gpu and w.tflops_per_gpu > (peak := gpu_peak_tflops(gpu, w.precision)):
        raise UsageError(f"{where}: 'tflops_per_gpu' {w.tflops_per_gpu:g} is above the {gpu_model} "
                         f"dense {w.precision} peak of {peak:g} TFLOP/s; give an achieved rate "
                         f"(below the peak) or 0 to let the engine predict it")


def _check_ranges(w: Workload, where: str) -> None:
    """Counts in their ranges, choices among their choices, a consistent MoE."""
    for key in ("layers", "hidden", "heads", "vocab", "seq_len", "tp", "pp", "micro_batch",
                "global_batch", "interleave"):
        if getattr(w, key) < 1:
            raise UsageError(f"{where}: '{key}' must be at least 1, got {getattr(w, key)}")
    for key in ("kv_heads", "head_dim", "offload_layers", "mtp_layers", "ffn_hidden", "experts", "top_k", "moe_ffn_hidden", "shared_experts",
                "dense_layers", "q_lora_rank", "kv_lora_rank", "qk_head_dim", "rope_head_dim",
                "v_head_dim", "zero_stage"):
        if getattr(w, key) < 0:
            raise UsageError(f"{where}: '{key}' must be 0 (GPT default) or positive, got {getattr(w, key)}")
    for key, choices in _CHOICE_FIELDS.items():
        if getattr(w, key) not in choices:
            raise UsageError(f"{where}: '{key}' must be one of {', '.join(repr(c) for c in choices)}, "
                             f"got {getattr(w, key)!r}")
    for key in ("cp", "ep"):
        if getattr(w, key) < 1:
            raise UsageError(f"{where}: '{key}' must be at least 1, got {getattr(w, key)}")
    if w.zero_stage > 3:
        raise UsageError(f"{where}: 'zero_stage' must be 0, 1, 2 or 3, got {w.zero_stage}")
    if w.optimizer_offload_fraction > 1:
        raise UsageError(f"{where}: 'optimizer_offload_fraction' is the share of the optimizer sent to "
                         f"the host, 0 to 1; got {w.optimizer_offload_fraction:g}")
    if w.recompute and w.recompute_granularity == "op" and (w.moe or w.kv_lora_rank):
        raise UsageError(f"{where}: recompute_granularity 'op' (torchtitan's per-op policy) is modelled "
                         f"for dense attention and MLP layers, not for mixture-of-experts or latent "
                         f"attention; use 'selective' with recompute_modules, or 'full'")
    _check_moe(w, where)


def _sized(w: Workload, data: dict[str, Any], total_gpus: int, where: str) -> Workload:
    """``w`` with dp filled from the design (or the entry's ``gpus``) and ep lowered to what the
    cp·dp ranks split into; refused when it needs more GPUs than the design has."""
    if w.dp < 0:
        raise UsageError(f"{where}: 'dp' must be 0 (fill the design) or positive, got {w.dp}")
    if w.dp == 0:
        wanted = data.get("gpus")
        if wanted is not None:
            _check_numbers({"gpus": wanted}, where)
        pool = int(wanted) if wanted and int(wanted) <= total_gpus else total_gpus
        dp = pool // (w.tp * w.pp * w.cp)
        if dp < 1:
            raise UsageError(f"{where}: tp x pp{' x cp' if w.cp > 1 else ''} = {short(w.tp * w.pp * w.cp)} "
                             f"needs more GPUs than the design has ({total_gpus}); lower --tp/--pp or add "
                             f"GPU servers")
        w = replace(w, dp=dp)
    if w.gpus > total_gpus:
        raise UsageError(f"{where}: tp x pp x dp{' x cp' if w.cp > 1 else ''} = {short(w.gpus)} GPUs, "
                         f"but the design has only {total_gpus}; lower the parallelism or add GPU servers")
    if w.ep > 1 and w.dp_ranks % w.ep:
        # a preset's EP on a data-parallel size it does not divide (EP 8 on 7 replicas): the
        # largest expert-parallel size that splits both the experts and the cp·dp ranks (the
        # result's workload shows the ep used)
        w = replace(w, ep=max(d for d in range(1, w.ep + 1) if w.experts % d == 0 and w.dp_ranks % d == 0))
    return w


def _check_shapes(w: Workload, where: str) -> None:
    """Sequence, batch, pipeline and head shapes that must divide evenly."""
    if w.cp > 1 and w.seq_len % (2 * w.cp):
        raise UsageError(f"{where}: seq_len {w.seq_len} must be a multiple of 2 x cp = {2 * w.cp} "
                         f"(each context-parallel rank holds two balanced chunks of the sequence)")
    if w.global_batch % (w.dp * w.micro_batch):
        raise UsageError(f"{where}: global batch {w.global_batch} is not a multiple of "
                         f"dp x micro-batch = {w.dp} x {w.micro_batch}; change --global-batch")
    if w.kind == "transformer":
        if w.pp * w.interleave > w.layers + MAX_LAYERLESS_CHUNKS:
            raise UsageError(f"{where}: pp x interleave = {w.pp} x {w.interleave} stages is more "
                             f"than the {w.layers} layers plus an embedding-only and a loss-only "
                             f"chunk ({w.layers + MAX_LAYERLESS_CHUNKS}); lower --pp or interleave")
        if (w.hidden % w.heads and not w.head_dim) or w.heads % w.tp:
            raise UsageError(f"{where}: hidden {w.hidden} / heads {w.heads} / tp {w.tp} must "
                             f"divide evenly (heads split across TP ranks; give head_dim when the "
                             f"heads are not hidden/heads wide)")
        if w.kv_heads and w.heads % w.kv_heads:
            raise UsageError(f"{where}: heads {w.heads} must be a multiple of kv_heads {w.kv_heads} "
                             f"(each key/value head serves a group of query heads)")


def shrunk_ep_warning(data: dict[str, Any], w: Workload) -> str | None:
    """The run's warning when :func:`from_dict` lowered the expert parallelism ``data`` asked for
    (EP groups are whole chunks of the cp·dp ranks, so an ep that does not divide them cannot be
    placed), or None: what was asked, what is used, and how to keep the asked size."""
    try:
        asked = int(data.get("ep") or 1)
    except (TypeError, ValueError):
        return None
    if asked <= w.ep:
        return None
    return (f"expert parallelism {asked} does not split the {w.dp_ranks} data-parallel ranks "
            f"(cp x dp) into whole groups; ep {w.ep} is used (the largest size dividing the "
            f"{w.experts} experts and the ranks): give dp a multiple of {asked} to keep ep {asked}")


def _check_moe(w: Workload, where: str) -> None:
    """A mixture-of-experts workload names its experts, their width and how many a token uses."""
    if not w.experts:
        if w.ep > 1:
            raise UsageError(f"{where}: ep {w.ep} needs a mixture-of-experts model (experts > 0)")
        return
    if not 0 < w.top_k <= w.experts:
        raise UsageError(f"{where}: top_k must be from 1 to experts ({w.experts}), got {w.top_k}")
    if w.moe_ffn_hidden < 1:
        raise UsageError(f"{where}: a mixture-of-experts model needs moe_ffn_hidden (each expert's "
                         f"MLP width) > 0")
    if w.experts % w.ep:
        raise UsageError(f"{where}: ep {w.ep} must divide the {w.experts} experts")
    if w.dense_layers >= w.layers:
        raise UsageError(f"{where}: dense_layers {w.dense_layers} leaves no MoE layer of {w.layers}")


def _mlp_matrices(w: Workload) -> int:
    """Weight matrices of an MLP: 3 for SwiGLU (gate, up, down), 2 for GELU / squared ReLU."""
    if w.mlp:
        return 3 if w.mlp == "swiglu" else 2
    return 3 if w.ffn_hidden else 2


def _attention_matrices(w: Workload) -> list[tuple[float, float]]:
    """(input, output) widths of one layer's attention weight matrices.

    Multi-head / grouped-query: QKV h → h + 2h·kv/a, output h → h. Multi-head latent attention
    (DeepSeek-V3 technical report, arXiv 2412.19437, §2.1.1, eqs. 1-11): query down h → d_c',
    up d_c' → a·(d_h + d_hR); key/value down h → d_c + d_hR (the shared rotary key), up
    d_c → a·(d_h + d_v); output a·d_v → h (no q_lora_rank: query h → a·(d_h + d_hR))."""
    h, a = w.hidden, w.heads
    if w.kv_lora_rank:
        dh, dr = w.qk_head_dim or h // a, w.rope_head_dim
        dv = w.v_head_dim or dh
        q: list[tuple[float, float]] = [(h, w.q_lora_rank), (w.q_lora_rank, a * (dh + dr))] \
            if w.q_lora_rank else [(h, a * (dh + dr))]
        return q + [(h, w.kv_lora_rank + dr), (w.kv_lora_rank, a * (dh + dv)), (a * dv, h)]
    kv = w.kv_heads or a
    if w.head_dim:  # heads of their own width d: Q a·d, K and V kv·d each, output a·d → h
        d = w.head_dim
        return [(h, a * d + 2.0 * kv * d), (a * d, h)]
    return [(h, h + 2.0 * h * kv / a), (h, h)]


def _mlp_shapes(w: Workload, width: float) -> list[tuple[float, float]]:
    """(input, output) widths of an MLP of inner ``width`` (the up/gate matrices fused, as run)."""
    if _mlp_matrices(w) == 3:
        return [(w.hidden, 2.0 * width), (width, w.hidden)]
    return [(w.hidden, width), (width, w.hidden)]


def attention_score_flops_per_token(w: Workload) -> float:
    """Forward FLOPs of Q·Kᵀ and scores·V per token and layer over the full s×s square:
    2·s·a·(d_qk + d_v); 4·s·h with d_qk = d_v = h/a (Megatron's count)."""
    if w.kv_lora_rank:
        dqk = (w.qk_head_dim or w.hidden // w.heads) + w.rope_head_dim
        dv = w.v_head_dim or (w.qk_head_dim or w.hidden // w.heads)
        return 2.0 * w.seq_len * w.heads * (dqk + dv)
    return 4.0 * w.seq_len * w.heads * w.head_width if w.head_dim else 4.0 * w.seq_len * w.hidden


def _dense_layer_params(w: Workload) -> float:
    ffn = w.ffn_hidden or 4 * w.hidden
    return sum(i * o for i, o in _attention_matrices(w)) + _mlp_matrices(w) * w.hidden * ffn


def _moe_layer_params(w: Workload, active: bool) -> float:
    """Matrix weights of an MoE layer: attention, router (h × experts), the routed experts (all,
    or top_k of them a token uses) and the shared experts."""
    n = (w.top_k if active else w.experts) + w.shared_experts
    return (sum(i * o for i, o in _attention_matrices(w)) + w.hidden * w.experts
            + n * _mlp_matrices(w) * w.hidden * w.moe_ffn_hidden)


def _active_matrix_params_per_layer(w: Workload) -> float:
    """Matrix weights one token passes through per layer, averaged over the layers (dense and
    MoE): ``_layer_matrix_params`` for a dense model."""
    if not w.moe:
        return _layer_matrix_params(w)
    return (w.dense_layers * _dense_layer_params(w) + w.moe_layers * _moe_layer_params(w, True)) / w.layers


def _layer_matrix_params(w: Workload) -> float:
    """Weights of the matrices of one transformer layer (each used in one GEMM per token).

    Attention: Q and O are h×h, K and V are h×(h·kv/a) (kv = a without grouped-query attention):
    2h² + 2h²·kv/a. MLP: two h×4h matrices (GPT, 8h²) or three h×ffn matrices (SwiGLU: gate, up,
    down; 3·h·ffn). GPT: 4h² + 8h² = 12h², Megatron's per-layer figure.
    """
    if w.kv_lora_rank or w.mlp or w.head_dim:
        return _dense_layer_params(w)
    h = w.hidden
    kv = w.kv_heads or w.heads
    attention = 2.0 * h * h + 2.0 * h * h * kv / w.heads
    mlp = 3.0 * h * w.ffn_hidden if w.ffn_hidden else 8.0 * h * h
    return attention + mlp


def whole_batch(entry: dict[str, Any], gpus: int) -> int:
    """The global batch of a workload that fills ``gpus`` GPUs (dp = gpus // (tp·pp), or the
    entry's own ``gpus`` if smaller and positive): the entry's global batch rounded up to the next
    multiple of dp × micro-batch, so that every data-parallel replica gets whole micro-batches."""
    cap = int(entry.get("gpus") or 0)
    pool = cap if 0 < cap <= gpus else gpus
    dp = max(pool // (int(entry.get("tp", 1)) * int(entry.get("pp", 1))), 1)
    step = dp * int(entry.get("micro_batch", 1))
    return -(-int(entry.get("global_batch", step)) // step) * step


def parameters(w: Workload) -> float:
    """Parameter count: l·(layer matrices + small vectors) + embeddings.

    GPT (no ffn_hidden): 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)), Narayanan et al. SC'21 §5.1:
    13h biases and LayerNorm weights per layer, a tied V×h token embedding and an s×h position
    embedding (with kv_heads, the K/V matrices and biases shrink to kv/a of their size).
    Llama-style (ffn_hidden given): no biases, two RMSNorm weight vectors per layer plus a final
    one (2h·l + h), rotary positions (no weights), untied V×h input and output embeddings (2·V·h).
    Llama 3 (Table 3 shapes, V = 128,000): 8.03B, 70.55B, 405.85B. Vision: the ``params`` figure given.
    """
    if w.kind == "vision":
        return w.params
    l, h, V, s = w.layers, w.hidden, w.vocab, w.seq_len
    if w.moe or w.kv_lora_rank:
        # untied embeddings and two RMSNorms per layer, as Llama (DeepSeek-V3, Mixtral); the
        # multi-token-prediction module of DeepSeek-V3 (§2.2) is not counted (its 671B exclude it)
        layers = w.dense_layers * _dense_layer_params(w) + w.moe_layers * _moe_layer_params(w, False) \
            if w.moe else l * _dense_layer_params(w)
        return layers + l * 2.0 * h + h + 2.0 * V * h
    if w.ffn_hidden:
        return l * (_layer_matrix_params(w) + 2.0 * h) + h + 2.0 * V * h
    kv = (w.kv_heads or w.heads) / w.heads
    biases = (11.0 + 2.0 * kv) * h  # Q, O: h each; K, V: kv·h each; MLP 4h + h; two LayerNorms 4h
    return l * (_layer_matrix_params(w) + biases) + (V + s) * h


def expert_parameters(w: Workload) -> float:
    """Weights of the routed experts (split over ep; reduced over the expert-data-parallel ranks)."""
    if not w.moe:
        return 0.0
    return w.moe_layers * w.experts * _mlp_matrices(w) * w.hidden * w.moe_ffn_hidden


def model_flops_per_iteration(w: Workload, recompute: bool | None = None) -> float:
    """FLOPs of one iteration (2 FLOPs per multiply-add; matrix multiplications only), counting
    the recomputed forward pass when ``recompute`` is true (default: the workload's setting).

    Per token and layer, forward: 2 × the layer's matrix weights (see ``_layer_matrix_params``)
    plus attention 4·s·h (Q·Kᵀ scores 2·s·h and scores·V 2·s·h over the full s×s square, no
    causal-mask saving, as Megatron counts); the output (logit) layer 2·V·h per token. The input
    embedding is a lookup (no FLOPs); norms, softmax and activations are not counted. Backward
    costs two forwards, so a layer costs 3 forwards and 4 with recomputation (which re-runs the
    transformer layers, not the logit layer):
        F = B·s·[k·l·(2·M + 4·s·h) + 3·2·V·h],   M = layer matrix weights, k = 3 or 4 (recompute).
    GPT (M = 12h²): with recomputation 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), Narayanan et al.
    SC'21 §5.1 eq. (3) (their Table 1 TFLOP/s); without it 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)),
    the model FLOPs that MFU divides (Chowdhery et al. 2023, App. B: no recomputation counted).
    The matrix part is the 6·N·D rule (N = matrix weights incl. the output embedding, D = B·s
    tokens) and 4·s·h·l per token and pass is the attention it leaves out.
    Vision: ``flops_per_sample`` × samples (0 when not given: a convolution reuses each weight
    at every position, so the 6·N rule of transformers does not apply).
    Mixture of experts: M is the weights a token passes (router, top_k routed and the shared
    experts, averaged with the dense layers); multi-head latent attention: its five projections
    and 2·s·a·(d_qk + d_v) for the scores (``attention_score_flops_per_token``). Selective
    recomputation re-runs only the attention core (4 units for it, 3 for the matrices).
    """
    if w.kind == "vision":
        return w.flops_per_sample * w.global_batch
    B, s, l, h, V = w.global_batch, w.seq_len, w.layers, w.hidden, w.vocab
    matrix_passes, attention_passes = _passes(w, recompute)
    return B * s * (l * (matrix_passes * 2.0 * _active_matrix_params_per_layer(w)
                         + attention_passes * attention_score_flops_per_token(w)) + 6.0 * V * h)


def _passes(w: Workload, recompute: bool | None = None) -> tuple[float, float]:
    """Forward-pass units of the layer matrices and of the attention core per micro-batch: 3
    (forward + a backward of two), 4 for what is recomputed: everything with full recomputation,
    only the attention core with selective recomputation (Korthikanti et al. 2023, §5)."""
    on = w.recompute if recompute is None else recompute
    if not on:
        return 3.0, 3.0
    if w.recompute_granularity == "op":
        # torchtitan's per-op policy: the re-run products (op_policy_recomputed_share), not the core
        att_share, mlp_share = op_policy_recomputed_share(w)
        att = sum(i * o for i, o in _attention_matrices(w))
        mlp = _layer_matrix_params(w) - att
        return 3.0 + (att_share * att + mlp_share * mlp) / _layer_matrix_params(w), 3.0
    if w.recompute_granularity == "selective":
        return 3.0, 4.0
    return 4.0, 4.0


def activation_bytes_per_layer(w: Workload) -> float:
    """Activation bytes one GPU stores per transformer layer and micro-batch.

    s·b·h·(10 + 24/t + 5·a·s/(h·t)) for 16-bit activations with tensor parallelism t and no
    sequence parallelism: Korthikanti et al. 2023, §4.1, eq. (2). Scaled for other precisions.
    Its 5·a·s²·b/t term is the s×s attention part (per head: softmax output 2·s²·b, dropout
    mask s²·b, dropout output 2·s²·b bytes); the s·b·h terms are the h-wide tensors (attention
    11, MLP 19, two LayerNorms 4 → 34 = 10 replicated + 24 split over t).
    With ``flash_attention`` (Dao et al. 2022, §3.1) no s×s tensor is stored: the backward pass
    rebuilds the scores block by block from Q, K, V (already among the s·b·h terms) and keeps
    only each row's softmax statistic (log-sum-exp, one fp32 value per head and token: 4·a·s·b/t
    bytes), so the bytes are s·b·h·(10 + 24/t)·(bytes/2) + 4·a·s·b/t.
    """
    s, b, h, a, t = w.seq_len / w.cp, w.micro_batch, w.hidden, w.heads, w.tp
    if w.flash_attention:
        return s * b * h * (10 + 24.0 / t) * w.bytes_per_value / 2.0 + 4.0 * a * s * b / t
    return s * b * h * (10 + 24.0 / t + 5.0 * a * w.seq_len / (h * t)) * w.bytes_per_value / 2.0


#: passes over the activation bytes per micro-batch: forward writes them, backward reads them
#: and writes their gradients (3); recomputation writes them once more (4). Derivation: the
#: element-wise and normalisation kernels are memory-bound and touch each stored activation in
#: every one of those passes.
MEMORY_PASSES = {False: 3, True: 4}


@dataclass(frozen=True)
class ComputeTimes:
    """Per GPU, per micro-batch, per pipeline stage (all virtual stages of the GPU), in seconds."""

    flops_per_gpu_per_iteration: float
    gemm_s: float  #: tensor-core time at the GPU's achievable GEMM efficiency
    memory_s: float  #: memory-bound element-wise time (activations over HBM bandwidth)
    peak_tflops: float  #: dense peak of the GPU in the workload's precision
    gemm_efficiency: float  #: effective: counted model FLOPs / (gemm_s × peak)
    recompute: bool = True
    #: parts of ``gemm_s``: the layers' linear GEMMs (what TP communication can overlap), the
    #: attention core, the output (logit) layer, the MoE experts' grouped GEMMs
    linear_s: float = 0.0
    attention_s: float = 0.0
    logit_s: float = 0.0
    expert_s: float = 0.0
    fp8_cast_s: float = 0.0  #: part of ``memory_s``: casting GEMM inputs to FP8 (and transposing)
    #: the backward pass's share of ``micro_batch_s`` by part (see :func:`compute`); -1 = not
    #: computed (vision), then the 2-of-3 / 2-of-4 unit rule
    backward_s: float = -1.0
    #: part of ``memory_s``: the MoE layers' token permutation, unpermutation and expert
    #: activation kernels (:func:`moe_memory_bytes`)
    moe_memory_s: float = 0.0
    sms: int = 0  #: the GPU's streaming multiprocessors (catalog ``sms``; 0 = not given)
    #: part of ``memory_s``: activation offload beyond the compute it overlaps (:func:`offload_s`)
    offload_s: float = 0.0
    #: part of ``gemm_s``: what the multi-token-prediction modules on the last stage add to the
    #: busiest GPU's micro-batch (:func:`mtp_s`); 0 when they fit in the last stage's spare chunks
    mtp_s: float = 0.0
    #: host-bound time of the MoE layers, GPU idle waiting for launches (:func:`moe_host_s`)
    host_s: float = 0.0
    #: per iteration, not in ``micro_batch_s``: the CPU optimizer step the iteration waits for
    #: (``optimizer_cpu_offload``; :func:`optimizer_offload_times`)
    optimizer_offload_s: float = 0.0

    @property
    def micro_batch_s(self) -> float:
        return self.gemm_s + self.memory_s + self.host_s

    @property
    def backward_fraction(self) -> float:
        """Share of a micro-batch's compute that is backward pass (a backward costs two forwards;
        a recomputed forward is not counted as backward). Derived by part (``backward_s``, set by
        :func:`compute`): 2 of the 3 units of every GEMM without recomputation, 2 of 4 of what is
        recomputed; with selective recomputation only the attention core is re-run (Korthikanti
        et al. 2023, §5), so the fraction stays near 2/3, not 1/2. Without the parts: 2/3, or
        1/2 with recomputation."""
        if self.backward_s >= 0 and self.micro_batch_s > 0:
            return self.backward_s / self.micro_batch_s
        return 0.5 if self.recompute else 2.0 / 3.0


def gpu_peak_tflops(gpu: dict[str, Any], precision: str) -> float:
    """Dense tensor peak of a catalog GPU entry for a precision (falls back to bf16)."""
    peak = float(gpu.get(PRECISION_PEAK_FIELD[precision]) or 0.0)
    if peak <= 0:
        peak = float(gpu.get("bf16_dense_tflops") or 0.0)
    if peak <= 0:
        raise UsageError(f"GPU model '{gpu.get('id', '?')}' has no dense tensor peak in the catalog "
                         f"(bf16_dense_tflops); add it to the GPU entry")
    return peak


#: Achievable FP8 GEMM rate over the achievable BF16 GEMM rate of the same GPU and library, by the
#: GEMM's reduction side K. Both precisions from one library: NVIDIA, "Boosting Matrix
#: Multiplication Speed and Flexibility with NVIDIA cuBLAS 12.9" (developer.nvidia.com blog, 2025):
#: on Hopper, scaled FP8 matmuls run 1.75x the BF16 baseline for large matmuls and at least 1.25x
#: for most other cases. Where "large" begins, from the same library's FP8 square sweep (Azure
#: AI-benchmarking-guide, ND H100 v5 results, cuBLASLt FP8, random data, 10,000 warm-ups: 1,011 /
#: 1,217 / 1,290 / 1,377 TFLOP/s at M = N = K = 2048 / 4096 / 8192 / 16384): 0.73 of its plateau
#: at 2048, 0.93 and more from 8192. So 1.25 up to K = 2048, 1.75 from K = 8192, linear in log2 K
#: between (derived); never below 1.25 (no measurement shows FP8 slower than BF16 in cuBLAS; small
#: sides such as the 512/1536 ranks of multi-head latent attention keep the 1.25 floor). Replaces
#: a ratio that divided a tilelang FP8 sweep on H800 by another benchmark's BF16 ceiling (1.84 at
#: K = 8192, 0.47 at K = 256: two libraries, review finding 2).
FP8_OVER_BF16_BY_SIDE = ((2048, 1.25), (8192, 1.75))

#: Fused (flash) attention rate as a fraction of the dense BF16 peak, forward and backward, by
#: GPU generation (catalog ``nvlink_gen``: 3 Ampere, 4 Hopper, 5 Blackwell), and the kernel each
#: assumes:
#: - Ampere, FlashAttention-2 (measured): 50-73% of the A100 peak forward, less backward (Dao,
#:   arXiv 2307.08691, abstract and §4.1); Azure AI-benchmarking-guide, ND A100 v4: FA2 179.5
#:   TFLOP/s at head dim 64, batch 2, sequence 8192 = 0.58 of 312. 0.5 for both passes.
#: - Hopper, cuDNN / FlashAttention-3-class fused attention (ASSUMPTION between two measurements):
#:   FlashAttention-2 reaches only 0.33 of H100 (Azure ND H100 v5: 327.9 TFLOP/s at head dim 128,
#:   sequence 8192; "35%", Shah et al., arXiv 2407.08608, abstract), FlashAttention-3 0.60-0.75
#:   forward in BF16 (same paper; pytorch/benchmark FA3 runs at head dim 128: 590-614 TFLOP/s),
#:   its backward slower. The NeMo/Megatron-Core presets run Transformer Engine's cuDNN fused
#:   attention, a Hopper-specific kernel of the FA3 class: 0.5 for both passes is assumed. An FA2
#:   run on Hopper would be ~0.33.
#: - Blackwell: ASSUMPTION, as Hopper (no published fused-attention fraction of the B200 peak was
#:   found).
ATTENTION_EFFICIENCY = {3: 0.5, 4: 0.5, 5: 0.5}
#: Unfused ("standard") attention core as a fraction of the dense BF16 peak: the two batched GEMMs
#: over the full s x s square (Q.K^T has K = head dim: below the GPU's ridge point), the mask, the
#: softmax and their backward, each through HBM. Measured with flash-attention's benchmark
#: (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py, PyTorch reference
#: implementation, causal, fwd + bwd credited 3.5 x 4·b·s²·h_heads·d / 2: the causal half) on ND
#: A100 v4: 46.0 TFLOP/s and ND H100 v5: 145.1 TFLOP/s (Azure AI-benchmarking-guide results,
#: batch 2, sequence 8192). The implementation computes the whole square, so its rate over the
#: full square is twice that: 92.0 / 312 = 0.295 and 290.2 / 989 = 0.293 of the peak. Derived:
#: 0.29 for every generation (both measured generations agree; Blackwell assumed alike).
#: Replaces running Megatron's unfused attention at the linear-GEMM rate (review finding 1: the
#: A100 GEMM efficiency absorbed it, so small-width models came out fast and wide ones slow).
UNFUSED_ATTENTION_EFFICIENCY = 0.29
#: share of the per-layer s x s activation bytes (Korthikanti: softmax output 2, dropout mask 1,
#: dropout output 2 of 5·a·s²·b) that the measured unfused attention time already includes (the
#: softmax; the benchmark runs without dropout): taken out of the memory-bound passes
UNFUSED_SCORE_BYTES_IN_KERNEL = 2.0 / 5.0
#: FlashAttention's backward pass runs 5 matrix products to the forward's 2 (it recomputes the
#: scores; Dao, arXiv 2307.08691, §3.1.2), 2.5 forward units instead of the 2 counted: executed
#: attention units = counted passes + 0.5
FLASH_BACKWARD_EXTRA = 0.5
#: bytes moved per value cast to FP8 for a GEMM. Derived: read the 16-bit value (2), write the FP8
#: copy (1) and its transpose (1). FP8 GEMMs on Hopper need some operands physically transposed
#: in memory, so Transformer Engine keeps a row-wise and a column-wise FP8 copy of each GEMM input
#: (forward and weight-gradient GEMMs) and writes both in one fused cast-transpose kernel
#: (Transformer Engine documentation, low-precision training, "Performance considerations:
#: Handling transposes"; C API ``nvte_cast_transpose``).
FP8_CAST_BYTES = 4.0
#: MXFP8 adds one 8-bit scale per block of 32 values to each of the two copies (row-wise and
#: column-wise, Transformer Engine MXFP8 tensors; OCP MX v1.0 §5: E8M0 scale per 32-element
#: block): 2/32 bytes per value (derived)
MXFP8_SCALE_BYTES = 2.0 / 32.0


def fp8_over_bf16(side: float, gpu: dict[str, Any] | None = None) -> float:
    """Achievable FP8 over BF16 GEMM rate for a GEMM whose reduction side K is ``side``
    (``FP8_OVER_BF16_BY_SIDE``, interpolated in log2 of the side, held at the table's ends);
    1 on a GPU without FP8 tensor cores (catalog ``fp8_dense_tflops`` 0)."""
    table = FP8_OVER_BF16_BY_SIDE
    x = math.log2(max(side, 1.0))
    xs = [math.log2(d) for d, _ in table]
    if x <= xs[0]:
        r = table[0][1]
    elif x >= xs[-1]:
        r = table[-1][1]
    else:
        i = next(k for k in range(1, len(xs)) if x <= xs[k])
        f = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
        r = table[i - 1][1] + f * (table[i][1] - table[i - 1][1])
    if gpu:
        bf16, fp8 = float(gpu.get("bf16_dense_tflops") or 0), float(gpu.get("fp8_dense_tflops") or 0)
        if fp8 <= 0:  # no FP8 tensor cores (A100): the GEMMs run in 16 bits
            return 1.0
        if bf16 > 0:
            r *= fp8 / bf16 / 2.0
    return r


def logit_share(w: Workload) -> float:
    """Share of the output layer's work on the busiest GPU of a pipeline. With every chunk holding
    layers (p·v ≤ l, Megatron's even split) the last stage holds the output layer and the loss on
    top of its layers: all of it. With chunks to spare (p·v > l) the output layer gets a chunk of
    its own in place of a layer (Llama 3 §3.3.2: one layer fewer on the first and the last stage),
    which balances the stages: the busiest GPU's even share, stage_layers/l."""
    if w.pp > 1 and w.pp * w.interleave <= w.layers:
        return 1.0
    return w.stage_layers / w.layers


def _gemm_efficiency(gpu: dict[str, Any]) -> float:
    eff = float(gpu.get("gemm_efficiency") or 0.0)
    if not 0 < eff <= 1:
        raise UsageError(f"GPU model '{gpu.get('id', '?')}' needs gemm_efficiency in (0, 1] in the "
                         f"catalog, got {eff}")
    return eff


def _mla_up_matrices(w: Workload) -> list[tuple[float, float]]:
    """The up-projections of multi-head latent attention (query d_c' → a·(d_h + d_hR), key/value
    d_c → a·(d_h + d_v)): what Megatron-Core's ``mla_up_proj`` recomputation re-runs; none
    without latent attention."""
    if not w.kv_lora_rank:
        return []
    m = _attention_matrices(w)
    return [m[1], m[3]] if w.q_lora_rank else [m[2]]


def _matrix_time(w: Workload, gpu: dict[str, Any], shapes, tokens: float, split: int,
                 fp8: bool, bf16_rate: float, row_last: bool = True) -> tuple[float, float]:
    """One forward unit of ``shapes`` ((in, out) widths) for ``tokens`` rows with the weights
    split ``split`` ways: the last matrix (attention output, MLP down) is row-parallel (its input
    split), the others column-parallel (their output split), as in Megatron (Shoeybi et al. 2019,
    §3). Returns (seconds, values cast to FP8 for it)."""
    t, cast = 0.0, 0.0
    for k, (i, o) in enumerate(shapes):
        if row_last and k == len(shapes) - 1:  # the last (output projection, MLP down) is row-parallel
            il, ol = i / split, o
        else:
            il, ol = i, o / split
        flops = 2.0 * tokens * il * ol
        if fp8:  # forward (K = in), data gradient (K = out), weight gradient (K = tokens)
            t += flops / bf16_rate * sum(1.0 / fp8_over_bf16(k, gpu) for k in (il, ol, tokens)) / 3.0
        else:
            t += flops / bf16_rate
        cast += tokens * (il + ol)
    return t, cast


@dataclass(frozen=True)
class _Gemms:
    """How a micro-batch's GEMMs run on a GPU: FP8 or not, the 16-bit GEMM rate (FLOP/s), the
    GPU's tokens (b·s/cp)."""

    gpu: dict[str, Any]
    fp8: bool
    rate: float
    tokens: float


def _linear_parts(w: Workload, g: _Gemms) -> tuple[float, float, float]:
    """The stage's attention and dense-MLP GEMMs: (seconds over all forward units run, seconds of
    one unit, values cast to FP8). Forward units per module: 3 (a forward and a backward of two),
    4 when it is recomputed (:meth:`Workload.recomputes`: everything with full recomputation, the
    listed modules with selective), the MLA up-projections alone with ``mla_up_proj``."""
    L, ffn = w.stage_layers, w.ffn_hidden or 4 * w.hidden
    att_t, att_cast = _matrix_time(w, g.gpu, _attention_matrices(w), g.tokens, w.tp, g.fp8, g.rate)
    mlp_t, mlp_cast = _matrix_time(w, g.gpu, _mlp_shapes(w, ffn), g.tokens, w.tp, g.fp8, g.rate)
    dense_frac = 1.0 - (w.moe_layers / w.layers)
    full = 4.0 if w.recompute and w.recompute_granularity == "full" else 3.0
    up_t = _matrix_time(w, g.gpu, _mla_up_matrices(w), g.tokens, w.tp, g.fp8, g.rate, row_last=False)[0]
    att_units = full * att_t + (1.0 if w.recomputes("mla_up_proj") and full == 3.0 else 0.0) * up_t
    mlp_units = 4.0 if w.recomputes("mlp") else 3.0
    if w.recompute and w.recompute_granularity == "op":
        # torchtitan's per-op policy re-runs every second product (op_policy_recomputed_share)
        att_share, mlp_share = op_policy_recomputed_share(w)
        att_units, mlp_units = (3.0 + att_share) * att_t, 3.0 + mlp_share
    return (L * (att_units + dense_frac * mlp_units * mlp_t), L * (att_t + dense_frac * mlp_t),
            L * (att_cast + dense_frac * mlp_cast))


def _expert_parts(w: Workload, g: _Gemms) -> tuple[float, float, float]:
    """The stage's MoE GEMMs (routed experts as grouped GEMMs with top_k·tokens rows, each local
    expert seeing tokens·top_k·ep/experts of them, the router, the shared experts): (seconds over
    the units run, one unit, values cast to FP8); 4 units for what ``moe`` / ``shared_experts``
    recomputation re-runs."""
    if not w.moe:
        return 0.0, 0.0, 0.0
    L, moe_frac = w.stage_layers, w.moe_layers / w.layers
    shapes = _mlp_shapes(w, w.moe_ffn_hidden)
    per_expert = g.tokens * w.top_k * w.ep / w.experts
    rows = g.tokens * w.top_k
    et, ec = _matrix_time(w, g.gpu, shapes, per_expert, w.tp, g.fp8, g.rate)
    routed = et * rows / per_expert
    cast = L * moe_frac * ec * rows / per_expert
    shared = 0.0
    if w.shared_experts:
        shared, sc = _matrix_time(w, g.gpu, _mlp_shapes(w, w.moe_ffn_hidden * w.shared_experts),
                                  g.tokens, w.tp, g.fp8, g.rate)
        cast += L * moe_frac * sc
    router = 2.0 * g.tokens * w.hidden * w.experts / g.rate
    moe_units = 4.0 if w.recomputes("moe") else 3.0
    shared_units = 4.0 if w.recomputes("moe") or w.recomputes("shared_experts") else 3.0
    return (L * moe_frac * (moe_units * (routed + router) + shared_units * shared),
            L * moe_frac * (routed + router + shared), cast)


def _attention_parts(w: Workload, gpu: dict[str, Any], tokens: float) -> tuple[float, float]:
    """The stage's attention core (seconds, and its backward share): with ``flash_attention`` the
    causal half at ``ATTENTION_EFFICIENCY`` with FlashAttention's extra backward products, else
    Megatron's unfused core over the full square at the measured standard-attention rate, forward
    1 and backward 2.5 units as that benchmark credits them; recomputation of ``core_attn``: +1."""
    L = w.stage_layers
    ap = 4.0 if w.recomputes("core_attn") else 3.0
    score = tokens * attention_score_flops_per_token(w) / w.tp
    if w.flash_attention:
        att_rate = gpu_peak_tflops(gpu, "bf16") * 1e12 * ATTENTION_EFFICIENCY.get(
            int(gpu.get("nvlink_gen") or 4), 0.5)
        attention = L * 0.5 * score * (ap + FLASH_BACKWARD_EXTRA) / att_rate
    else:
        std_rate = gpu_peak_tflops(gpu, "bf16") * 1e12 * UNFUSED_ATTENTION_EFFICIENCY
        attention = L * score * (ap + FLASH_BACKWARD_EXTRA) / std_rate
    return attention, attention * (2.0 + FLASH_BACKWARD_EXTRA) / (ap + FLASH_BACKWARD_EXTRA)


def _memory_parts(w: Workload, gpu: dict[str, Any], fp8: bool, cast: float, mp: float
                  ) -> tuple[float, float, float, float]:
    """The stage's memory-bound time over HBM: (all of it, the FP8 casts in it, the MoE kernels in
    it, the backward share of the MoE kernels). Activation passes (``MEMORY_PASSES``) over the
    layer's activation bytes (the unfused softmax's bytes are inside the measured attention
    time), the casts of every GEMM input and output gradient (``FP8_CAST_BYTES`` per value, MXFP8
    with its block scales), the MoE layers' permutations and activation (:func:`moe_memory_bytes`)."""
    hbm = float(gpu.get("memory_bw_TBps") or 0.0)
    if hbm <= 0:
        return 0.0, 0.0, 0.0, 0.0
    L = w.stage_layers
    act = activation_bytes_per_layer(w)
    if not w.flash_attention:
        s_loc = w.seq_len / w.cp
        act -= UNFUSED_SCORE_BYTES_IN_KERNEL * 5.0 * w.heads * s_loc * w.seq_len * w.micro_batch \
            / w.tp * w.bytes_per_value / 2.0
    memory_s = MEMORY_PASSES[w.recompute] * act * L / (hbm * 1e12)
    cast_s = 0.0
    if fp8:
        # forward: the inputs; backward: the output gradients (both sides of every GEMM)
        per_value = FP8_CAST_BYTES + (MXFP8_SCALE_BYTES if w.precision == "mxfp8" else 0.0)
        cast_s = cast * per_value * (mp / 3.0) / (hbm * 1e12)
        memory_s += cast_s
    moe_fwd, moe_bwd = moe_memory_bytes(w)
    if not w.moe or moe_fwd + moe_bwd <= 0:
        return memory_s, cast_s, 0.0, 0.0
    moe_mem = L * (w.moe_layers / w.layers) * (moe_fwd + moe_bwd) / (hbm * 1e12)
    return memory_s + moe_mem, cast_s, moe_mem, moe_bwd / (moe_fwd + moe_bwd)


def compute(w: Workload, gpu: dict[str, Any], host_memory_GBps: float | None = None) -> ComputeTimes:
    """Compute time of one micro-batch on the busiest GPU of a pipeline (all its layers).

    Tensor-core time (``gemm_s``), per part:
    - the layers' linear GEMMs: 2·tokens·in·out FLOPs per matrix and forward unit (3 units, 4
      with full recomputation, see :func:`_passes`), the weights split over tp, the tokens of a
      GPU b·s/cp. BF16/FP16 run at the catalog ``gemm_efficiency`` × the BF16 peak; FP8 at that
      rate × :func:`fp8_over_bf16` of each GEMM's reduction side (forward: the matrix input,
      data gradient: its output, weight gradient: the tokens), so shapes and micro-batch size
      matter;
    - the attention core: with ``flash_attention`` a causal kernel skips the masked half of the
      s×s square and runs in BF16 even in an FP8 run (Transformer Engine's FP8 recipe leaves dot-
      product attention in BF16 unless asked), at ``ATTENTION_EFFICIENCY``, its backward
      recomputing the scores (``FLASH_BACKWARD_EXTRA``); without it, Megatron's unfused core
      (batched GEMMs, mask, softmax) computes the full square at the measured standard-attention
      rate ``UNFUSED_ATTENTION_EFFICIENCY`` (its softmax bytes then leave the memory-bound passes);
    - the output layer in BF16 (Megatron keeps it out of the FP8 recipe), on the last stage on top
      of its layers, or balanced as its own chunk when the pipeline has one to spare
      (:func:`logit_share`);
    - MoE layers: the routed experts' grouped GEMMs with top_k·tokens rows, each local expert
      seeing tokens·top_k·ep/experts of them (the weight-gradient GEMM's K), plus shared experts.
    Memory-bound time (``memory_s``) = MEMORY_PASSES × activation bytes per layer × layers / HBM
    bandwidth (catalog ``memory_bw_TBps``), plus in FP8 the casts of every GEMM input and output
    gradient (``FP8_CAST_BYTES`` per value). ``gemm_efficiency`` of the result is the effective
    one: counted model FLOPs of the busiest GPU / (gemm_s × peak). Also: multi-token-prediction
    modules beyond the last stage's empty slots (``mtp_s``, in ``gemm_s``) and host-bound MoE
    launches (``host_s``, :func:`moe_host_s`, in ``micro_batch_s``). Per iteration, outside the
    micro-batch: the CPU optimizer step of ``optimizer_cpu_offload`` (``optimizer_offload_s``,
    :func:`optimizer_offload_times`, with ``host_memory_GBps`` the host memory bandwidth per GPU).
    """
    peak = gpu_peak_tflops(gpu, w.precision)
    eff = _gemm_efficiency(gpu)
    flops_gpu = model_flops_per_iteration(w) / w.gpus
    m = w.micro_batches
    if w.kind == "vision":
        sample_s = w.global_batch / w.gpus / m / w.samples_per_s_per_gpu
        return ComputeTimes(flops_gpu, sample_s, 0.0, peak, eff, w.recompute,
                            optimizer_offload_s=optimizer_offload_times(w, gpu, host_memory_GBps).exposed_s)
    # a 16-bit run's GEMMs run at its own peak (fp16 = bf16 peak; tf32/fp32 at theirs)
    fp8 = w.precision in FP8_FORMATS and float(gpu.get("fp8_dense_tflops") or 0) > 0
    bf16_peak = gpu_peak_tflops(gpu, "bf16") if fp8 else peak
    rate = bf16_peak * 1e12 * eff
    tokens = w.micro_batch * w.seq_len / w.cp
    mp = _passes(w)[0]
    L = w.stage_layers
    g = _Gemms(gpu, fp8, rate, tokens)
    linear, linear_unit, cast = _linear_parts(w, g)
    expert, expert_unit, expert_cast = _expert_parts(w, g)
    cast += expert_cast
    attention, attention_bwd = _attention_parts(w, gpu, tokens)
    logit = 3.0 * 2.0 * tokens * w.vocab * w.hidden / w.tp / rate * logit_share(w)
    gemm_s = linear + expert + attention + logit
    memory_s, cast_s, moe_mem, moe_bwd_share = _memory_parts(w, gpu, fp8, cast, mp)
    busiest = flops_gpu * (L * w.pp / w.layers) / m
    effective = busiest / (gemm_s * peak * 1e12) if gemm_s > 0 else eff
    # backward by part: 2 forward units of each GEMM, of the 3 or 4 run; the attention core's
    # backward (with flash attention 2.5 units); the logit layer 2 of 3 (never recomputed); the
    # memory-bound passes 2 of MEMORY_PASSES (reading activations, writing their gradients)
    backward = 2.0 * (linear_unit + expert_unit) + attention_bwd + logit * 2.0 / 3.0 \
        + (memory_s - moe_mem) * 2.0 / MEMORY_PASSES[w.recompute] + moe_mem * moe_bwd_share
    head = logit / logit_share(w)
    slot = output_layer_slot(w, (gemm_s - logit + memory_s) / L, logit)
    if slot == "layer":
        # the last GPU, one layer fewer beside the output layer, is the busiest: every per-layer
        # part (each is L x one layer's) shrinks by (L - 1)/L, the output layer stays
        f = (L - 1) / L
        layers_bwd = backward - logit * 2.0 / 3.0
        linear, expert, attention, cast_s, moe_mem = linear * f, expert * f, attention * f, cast_s * f, moe_mem * f
        memory_s *= f
        backward = layers_bwd * f + logit * 2.0 / 3.0
        gemm_s = linear + expert + attention + logit
    elif slot == "head":
        # a middle GPU's full complement of layers, without the output layer, is the busiest
        backward -= logit * 2.0 / 3.0
        gemm_s -= logit
        logit = 0.0
    mtp = mtp_s(w, (gemm_s - logit + memory_s) / (L - (slot == "layer")), head, g)
    gemm_s += mtp
    backward += mtp * 2.0 / 3.0
    off_f, off_b = offload_s(w, gpu, gemm_s + memory_s - backward, backward)
    host = moe_host_s(w)
    return ComputeTimes(flops_gpu, gemm_s, memory_s + off_f + off_b, peak, effective, w.recompute,
                        linear, attention, logit, expert, cast_s, backward + off_b + host * 2.0 / 3.0,
                        moe_memory_s=moe_mem, sms=int(gpu.get("sms") or 0), offload_s=off_f + off_b,
                        mtp_s=mtp, host_s=host,
                        optimizer_offload_s=optimizer_offload_times(w, gpu, host_memory_GBps).exposed_s)


#: Host-bound time of one MoE layer and micro-batch (forward and backward) that a device-host
#: synchronization in the layer exposes even with every static part in CUDA graphs. Calibrated
#: on one study (not a measurement of this figure; the fidelity rows that charge it are no
#: independent check): Megatron-LM docs/discussions/deepseek-v3-gb200-optimization (2025-11), DeepSeek-V3
#: MXFP8 on 256 GB200, TP1 PP8 VPP4 EP32, micro-batch 1, global batch 2,048 (64 micro-batches,
#: 8 MoE layers on the busiest GPU): at 970 TFLOP/s per GPU, "eliminate the device-host sync in
#: the MoE model (its purpose is to get the tokens per expert information) ... at least a 10%
#: additional performance gain" (§3.1). Its step at 970 TFLOP/s is this engine's model FLOPs of
#: that job, 9.21e15 per GPU, / 970e12 = 9.50 s; 10% faster is 0.863 s less over 8 × 64 layer
#: passes: 1.69 ms each (a lower bound: "at least"); :func:`moe_host_s` charges those 8 layers
#: on that job, so it gives back the study's 10%. Assumed the same on every GPU and host:
#: the host's launch rate, not the GPU, sets it (a slower GPU would hide some of it).
MOE_SYNC_HOST_S = 1.69e-3
#: What the same study's CUDA graphs of attention, router, EP preprocess (610.71 -> 663.27
#: TFLOP/s) and shared experts (797.67 -> 829.93) saved per MoE layer and micro-batch: 9.21e15 ×
#: (1/610.71e12 − 1/663.27e12 + 1/797.67e12 − 1/829.93e12) = 1.64 s over 512 layer passes =
#: 3.21 ms (calibrated on the same study, as above): charged on top when ``cuda_graphs`` is off.
MOE_GRAPHABLE_HOST_S = 3.21e-3


def moe_host_s(w: Workload) -> float:
    """Host-bound time per micro-batch of the busiest GPU's MoE layers (``moe_host_sync``): each
    MoE layer on the busiest GPU waits ``MOE_SYNC_HOST_S`` for launches after its sync, and
    ``MOE_GRAPHABLE_HOST_S`` more without ``cuda_graphs``. The busiest GPU holds
    min(``stage_layers``, ``moe_layers``) MoE layers: the dense layers come first (DeepSeek-V3's
    3) and sit on the first stage, so another stage's slots are all MoE layers (DeepSeek-V3 at
    PP 8 VPP 4: 8 of 8, the count the constants are calibrated with, not 8 × 58/61). The GPU is
    idle then, so the time adds to the micro-batch; 2 of its 3 units are counted as backward
    (the backward launches about twice the kernels)."""
    if not (w.moe and w.moe_host_sync):
        return 0.0
    per_layer = MOE_SYNC_HOST_S + (0.0 if w.cuda_graphs else MOE_GRAPHABLE_HOST_S)
    return min(w.stage_layers, w.moe_layers) * per_layer


def output_layer_slot(w: Workload, layer_s: float, head_s: float) -> str:
    """What ``embedding_in_pipeline_split`` takes off the busiest GPU's micro-batch: "layer" when
    the last GPU, which then holds one layer fewer (its slot goes to the output layer and the
    loss), stays the busiest (output layer ≥ one layer: its L − 1 layers + the output layer);
    "head" when a middle GPU's L layers outweigh that, so the output layer is off the critical
    path; "" when the switch is off or does not apply (no pipeline, or chunks to spare, where
    :func:`logit_share` already balances the output layer). Derived from the partition: BLOOM's
    Megatron-DeepSpeed run (``--pp-partition-method 'type:transformer|embedding'``, bigscience
    train/tr11-176B-ml/tr11-176B-ml.slurm) splits 70 layers + 2 embeddings into 12 × 6: the
    first stage the embedding and 5 layers, 10 stages 6 layers, the last 5 layers and the
    (tied) output layer. ``stage_layers`` (and the TP calls and memory counted from it) stays
    the middle GPUs' count."""
    if not w.embedding_in_pipeline_split or w.pp <= 1 or logit_share(w) != 1.0 or w.stage_layers < 2:
        return ""
    return "layer" if head_s >= layer_s else "head"


def spare_layers(w: Workload) -> int:
    """Layer slots the pipeline's chunks leave empty: p·v·⌈l/(p·v)⌉ − l. The busiest GPU holds
    ⌈l/(p·v)⌉ layers per chunk (:attr:`Workload.stage_layers`); Megatron-Bridge's DeepSeek-V3
    layouts (recipes/deepseek/deepseek_v3.py ``set_deepseek_v3_pipeline_model_parallel_layout``,
    e.g. PP 16: the embedding and 4 layers, 14 stages of 4, the last 1 layer with the MTP module
    and the loss) take these slots from the last stage, which also holds the output layer."""
    chunks = w.pp * w.interleave
    return chunks * math.ceil(w.layers / chunks) - w.layers


def mtp_s(w: Workload, layer_s: float, head_s: float, g: _Gemms) -> float:
    """What ``mtp_layers`` multi-token-prediction modules add to the busiest GPU per micro-batch.

    Each module (DeepSeek-V3 technical report §2.2, Fig. 3) runs one transformer block, a
    projection of the concatenated [h; embedding] (2h → h: 2·tokens·2h²/tp FLOPs per forward
    unit, 3 units, at the 16-bit GEMM rate) and the shared output layer and loss once more, all
    on the pipeline's last stage (Megatron-Core builds MTP there; Megatron-Bridge's layouts
    put it with the loss). The last GPU then runs its layers less the empty slots
    (:func:`spare_layers`), the output layer 1 + m times, and m blocks and projections; the
    engine's busiest GPU already runs every slot full plus the output layer
    (``stage_layers`` × ``layer_s`` + ``head_s`` × :func:`logit_share`). The MTP part is what the
    last GPU needs beyond that, or 0 when the modules fit in the spare slots (derived; layer_s is
    the stage's average layer, head_s the whole output layer's three units)."""
    m = w.mtp_layers
    if m <= 0 or w.kind == "vision":
        return 0.0
    proj_s = 3.0 * 2.0 * g.tokens * 2.0 * w.hidden * w.hidden / w.tp / g.rate
    last = max(0, w.stage_layers - spare_layers(w)) * layer_s + (1 + m) * head_s + m * (layer_s + proj_s)
    busiest = w.stage_layers * layer_s + head_s * logit_share(w)
    return max(0.0, last - busiest)


def moe_memory_bytes(w: Workload) -> tuple[float, float]:
    """HBM bytes of one MoE layer's memory-bound kernels per micro-batch on a GPU, forward and
    backward (derived by counting the tensors each kernel reads and writes, as Korthikanti et
    al. 2023 count activations; Megatron-Core's token dispatcher, megatron/core/transformer/moe/
    token_dispatcher.py and moe_utils.py ``permute``/``unpermute``/``sort_chunks_by_idxs``):
    the GPU's t = b·s/(cp·tp) tokens make c = t·top_k copies of h values.
    Forward: permute (read t·h, write c·h) before the dispatch, the received copies sorted by
    local expert (read and write c·h) and back after the experts (read and write c·h), unpermute
    weighting and summing the copies (read c·h, write t·h); the experts' activation (SwiGLU:
    read 2F, write F per copy; GELU/ReLU²: read F, write F): 2t·h + 6c·h + c·(2F + F).
    Backward: the same permutations for the gradients, and the activation's backward (read the
    2F input and the F output gradient, write 2F), 2t·h + 6c·h + 5c·F; one forward more of the
    activation when Megatron-Core recomputes ``moe_act`` (or the whole ``moe`` layer, which
    also re-runs the permutations). 16-bit values (``bytes_per_value``). The router's softmax
    and top-k read t·experts logits (small next to these) and are not counted."""
    if not w.moe:
        return 0.0, 0.0
    t = w.micro_batch * w.seq_len / (w.cp * w.tp)
    c, h, F = t * w.top_k, w.hidden, w.moe_ffn_hidden
    act_in = 2.0 * F if _mlp_matrices(w) == 3 else F
    perm = 2.0 * t * h + 6.0 * c * h
    fwd = perm + c * (act_in + F)
    bwd = perm + c * (act_in + F + act_in)
    if w.recomputes("moe"):
        bwd += fwd
    elif w.recomputes("moe_act"):
        bwd += c * (act_in + F)
    return fwd * w.bytes_per_value, bwd * w.bytes_per_value


def bubble_s(w: Workload, micro_batch_s: float) -> float:
    """Pipeline bubble time = (p − 1)/v × t_micro-batch.

    Narayanan et al. SC'21 §2.2: the bubble fraction of the ideal time m·t is (p−1)/(v·m) for 1F1B
    (v = 1) and the interleaved schedule with v model chunks per GPU.
    """
    return (w.pp - 1) / w.interleave * micro_batch_s


def training_time_s(tokens: float, params: float, gpus: int, tflops_per_gpu: float,
                    recompute: bool = True) -> float:
    """End-to-end training time ≈ k·T·P / (n·X) (Narayanan et al. SC'21 eq. 4; T tokens,
    P parameters, n GPUs, X FLOP/s per GPU). One token costs 2·P FLOPs forward and 4·P backward
    (6·P, the matrix part of :func:`model_flops_per_iteration`); recomputation runs the forward
    pass once more, 8·P. So k = 8 with ``recompute`` (the paper's setting) and 6 without, so that
    X counts the same FLOPs as the engine's ``tflops_per_gpu``."""
    if tflops_per_gpu <= 0 or gpus <= 0:
        return math.inf
    return (8.0 if recompute else 6.0) * tokens * params / (gpus * tflops_per_gpu * 1e12)


#: FP8 training keeps the inputs of its GEMMs for the backward's weight gradient as the FP8 casts
#: it made for the forward, one byte a value: Transformer Engine's Linear / LayerNormLinear
#: (transformer_engine/pytorch/module/linear.py: "Discard row-wise data since it is not needed in
#: backward pass", ``inputmat.update_usage(rowwise_usage=False, columnwise_usage=True)``, the
#: quantized input saved; TE's docs: "With FP8, TE saves quantized tensors — half the memory");
#: DeepSeek-V3 report §3.3.3 ("we cache the activations in FP8 format for the backward pass of the
#: Linear operator"). Of Korthikanti's per-layer terms these are the QKV, projection and fc1
#: inputs (2·s·b·h each) and the fc2 input (2·s·b·F); the rest (norm inputs, attention Q/K/V and
#: output for the fused kernel, the MLP activation's input) stay 16-bit
FP8_SAVED_GEMM_INPUTS = ("qkv", "proj", "fc1", "fc2")

#: bytes per parameter of mixed-precision Adam training as Megatron-LM holds them: 16-bit
#: weights (2) and fp32 gradient buffers (4, the ``main_grad`` gradients accumulate and reduce
#: in), plus fp32 master weights, momentum and variance (4 + 4 + 4 = 12, the optimizer state):
#: 18 bytes, "2 bytes for model parameters used for fprop and bprop, 4 bytes for main parameters,
#: 4 bytes for gradients, 8 bytes for Adam states" (NVIDIA/Megatron-LM issue #654, maintainer's
#: answer on megatron/training/theoretical_memory_usage.py); the optimizer state is the ZeRO
#: paper's K = 12 (Rajbhandari et al., SC'20, arXiv 1910.02054, §3.1)
WEIGHT_BYTES_PER_PARAM = 2.0
GRAD_BYTES_PER_PARAM = 4.0
WEIGHT_GRAD_BYTES_PER_PARAM = WEIGHT_BYTES_PER_PARAM + GRAD_BYTES_PER_PARAM
OPTIMIZER_BYTES_PER_PARAM = 12.0
#: Megatron's estimate of temporaries beyond the activations (compute_activation_memory_without_sp
#: in megatron/training/theoretical_memory_usage.py: "buffer for optimizer and miscellaneous
#: temporaries (5% overhead)"); applied, as there, only without sequence parallelism
ACTIVATION_OVERHEAD = 1.05


#: bytes in one "GB" of a GPU's memory as vendors quote it: a binary gigabyte (GiB, 2^30). The
#: memory NVML reports (nvidia-smi, total) is within 1% of the datasheet figure read as GiB and 7%
#: above it read as 10^9 bytes: A100 80GB 81,920 MiB (80.0 GiB), H100 80GB 81,559 MiB (79.65 GiB),
#: H200 141 GB 143,771 MiB (140.4 GiB) (thundergolfer.com/blog/nvidia-gpu-memory-capacity, Modal's
#: table "Why does an NVIDIA H100 80GB card offer 85.52 GB?"); B200 183,359 MiB (179.1 GiB of the
#: catalog's 180) and GB200 189,471 MiB (185.0 GiB of 186) in published nvidia-smi output
GPU_MEMORY_GB_BYTES = 2.0 ** 30


def gpu_memory_GB(gpu: dict[str, Any]) -> float:
    """The memory a GPU has, in GB of 10^9 bytes (the unit of :func:`memory_per_gpu_GB`): its
    catalog ``memory_GB`` read as binary gigabytes (``GPU_MEMORY_GB_BYTES``), so an "80 GB" H100
    holds 85.9 GB; 0 when the catalog gives none."""
    return float(gpu.get("memory_GB") or 0.0) * GPU_MEMORY_GB_BYTES / 1e9


#: fp32 copies of the logits PyTorch's (unfused) cross-entropy holds at the loss's peak, with
#: ``fused_cross_entropy`` false: the logits the model returns cast to fp32 (torchtitan's
#: ``self.output(h).float()``), and inside log-softmax the max-shifted logits and their exponential
#: (torch/distributed/tensor/parallel/loss.py ``_log_softmax``: ``shifted = x - x_max``,
#: ``torch.exp(shifted)`` summed; the same steps as aten's log_softmax); the logits of one micro-
#: batch are 4·s·b·V/t bytes each. Megatron's fused loss works in place on one copy (4 bytes)
UNFUSED_LOSS_FP32_COPIES = 3


def params_on_busiest_gpu(w: Workload) -> float:
    """Parameters of the most loaded model shard: the transformer layers' share, l/(pp) of them
    over tp (routed experts over tp·ep as well), plus the input embedding V·h/tp on the first
    stage (and the untied output layer too when one stage holds everything), as Megatron's
    estimator counts them (compute_weight_and_optimizer_memory). Vision: ``params`` over tp·pp."""
    P = parameters(w)
    if w.kind == "vision":
        return P / (w.tp * w.pp)
    embedding = w.vocab * w.hidden
    untied = bool(w.ffn_hidden or w.moe or w.kv_lora_rank)
    experts = expert_parameters(w)
    block = P - embedding * (2 if untied else 1) - (0 if untied else w.seq_len * w.hidden)
    shard = (block - experts) / (w.pp * w.tp) + experts / (w.pp * w.tp * w.ep) + embedding / w.tp
    if untied and w.pp == 1:
        shard += embedding / w.tp
    return shard


def model_state_GB(w: Workload) -> float | None:
    """Weights, gradients and optimizer state one GPU holds (GB), or None without a parameter
    count: the busiest shard's parameters (:func:`params_on_busiest_gpu`) at 18 bytes (see the
    constants above; 16 with 16-bit gradients, ``grad_reduce_in_fp32`` false). ZeRO (``zero``): stage 1 (``optimizer_sharded``, Megatron's distributed
    optimizer) splits the 12 optimizer bytes over the cp·dp ranks ("6 + 12/d" in Megatron's
    estimator), stage 2 the 4 gradient bytes too, stage 3 (FSDP) the 2 weight bytes as well
    (Rajbhandari et al. 2020, §5). Routed experts' state is split over the expert-data-parallel
    ranks cp·dp/ep. ``optimizer_cpu_offload`` keeps ``optimizer_offload_fraction`` of the 12
    optimizer bytes in host memory (Megatron-Core's HybridDeviceOptimizer holds the fp32 master
    weights and moments of the offloaded parameters on the CPU). A job whose model state exceeds
    a GPU's memory cannot run."""
    state = _state_parts(w)
    return None if state is None else sum(state)


def activation_bytes_megatron(w: Workload) -> float:
    """Activation bytes one layer stores per micro-batch, Korthikanti et al. 2023 Table 2 in the
    form of Megatron's estimator: with sequence parallelism s·b·h·(18 + 4·F/h)/t (F the MLP
    width; 34/t for the GPT MLP of 4h), without it s·b·h·(10 + (8 + 4·F/h)/t) (10 + 24/t for
    GPT), both without the s×s scores (flash attention or selective recomputation); with the
    scores stored add 5·a·s²·b/t. 16-bit values; s is a GPU's share s/cp. In FP8 (``fp8``,
    ``mxfp8``) the GEMM inputs among them are kept as FP8 casts (``FP8_SAVED_GEMM_INPUTS``):
    s·b·h·(3 + F/h)/t bytes fewer with sequence parallelism, s·b·h·(2 + (1 + F/h)/t) without."""
    s, b, h, t = w.seq_len / w.cp, w.micro_batch, w.hidden, w.tp
    F = w.ffn_hidden or 4 * h
    if w.moe:
        F = (w.top_k + w.shared_experts) * w.moe_ffn_hidden
    inner = 8.0 + 4.0 * F / h
    sp = w.sequence_parallel and t > 1
    per = (10.0 + inner) / t if sp else 10.0 + inner / t
    if w.precision in FP8_FORMATS:
        # the four GEMM inputs a layer keeps (QKV, projection, fc1: 2·s·b·h each; fc2: 2·s·b·F)
        # are kept as their FP8 casts, one byte a value (FP8_SAVED_GEMM_INPUTS); without sequence
        # parallelism the QKV and fc1 inputs are among the replicated terms
        per -= (3.0 + F / h) / t if sp else 2.0 + (1.0 + F / h) / t
    acts = s * b * h * per
    if not w.flash_attention and not (w.recompute and w.recompute_granularity == "selective"):
        acts += 5.0 * w.heads * s * w.seq_len * b / t
    return acts * w.bytes_per_value / 2.0


def op_policy_matrices(w: Workload) -> list[tuple[str, float, bool]]:
    """One dense layer's matrix products in forward order as torchtitan's Llama runs them, with
    the output width one GPU holds and whether the per-op policy (``recompute_granularity`` "op")
    keeps it: (name, width, saved).

    torchtitan (models/llama/model.py; parallelize_llama.py ``_apply_ac_to_transformer_block`` at
    commit 9dec370, the one of its H100 benchmarks) keeps the outputs of the ops in its save list
    (``aten.mm``, the fused attention, reduce-scatters) "except every second mm", counting the
    products of a layer from 1 in forward order: attention wq, wk, wv, wo; then the MLP w1, w3,
    w2 (SwiGLU: ``w2(silu(w1(x)) * w3(x))``) or w1, w2. So wq, wv, w1 and w2 are kept and wk, wo
    and w3 (w2 of a two-matrix MLP) re-run. Column-parallel outputs are split over tp; a row-
    parallel product (wo, w2) is a full s·b·h partial sum before its reduction (PyTorch's
    RowwiseParallel)."""
    h, t, d = w.hidden, w.tp, w.head_width
    kv = w.kv_heads or w.heads
    F = w.ffn_hidden or 4 * h
    order = [("wq", w.heads * d / t), ("wk", kv * d / t), ("wv", kv * d / t), ("wo", float(h))]
    order += [("w1", F / t), ("w3", F / t), ("w2", float(h))] if _mlp_matrices(w) == 3 else \
        [("w1", F / t), ("w2", float(h))]
    return [(name, width, i % 2 == 1) for i, (name, width) in enumerate(order, start=1)]


def op_policy_bytes_per_layer(w: Workload) -> float:
    """Bytes one layer keeps per micro-batch under torchtitan's per-op policy
    (:func:`op_policy_matrices`): the layer's input, which the checkpoint wrapper holds (s·b·h,
    over tp with sequence parallelism), the kept products' outputs, the fused attention's output
    (s·b·a·d/t) and its per-row log-sum-exp (fp32, 4·a·s·b/t bytes), and with sequence
    parallelism the two reduce-scatters' outputs (s·b·h/t each); 16-bit values (``bytes_per_value``)."""
    s, b, h, t = w.seq_len / w.cp, w.micro_batch, w.hidden, w.tp
    sp = w.sequence_parallel and t > 1
    widths = (h / t if sp else h) + sum(width for _, width, saved in op_policy_matrices(w) if saved) \
        + w.heads * w.head_width / t + (2.0 * h / t if sp else 0.0)
    return s * b * widths * w.bytes_per_value + 4.0 * w.heads * s * b / t


def op_policy_recomputed_share(w: Workload) -> tuple[float, float]:
    """Shares of the attention and of the MLP matrix weights whose products the per-op policy
    re-runs in the backward (:func:`op_policy_matrices`): (wk + wo)/(wq + wk + wv + wo) and 1/3
    (w3 of three equal matrices) or 1/2 (w2 of two)."""
    a, kv, d, h = w.heads, w.kv_heads or w.heads, w.head_width, w.hidden
    attention = (kv * d + a * d) / (2.0 * a * d + 2.0 * kv * d) if h else 0.0
    return attention, (1.0 / 3.0 if _mlp_matrices(w) == 3 else 0.5)


def kept_layers(w: Workload) -> int:
    """Layers of the busiest stage whose activations stay in GPU memory: all but the
    ``offload_layers`` sent to the host, of which one stays, the layer in transit (derived: its
    copy to or from the host is under way while it is computed)."""
    off = min(w.offload_layers, w.stage_layers)
    return w.stage_layers - off + (1 if off else 0)


def layer_input_bytes(w: Workload) -> float:
    """One layer's input per micro-batch and GPU, what full recomputation keeps of a layer (and
    what an offloaded one copies to the host): s·b·h values of ``bytes_per_value`` (2·s·b·h bytes
    in 16 bits, Korthikanti et al. 2023 §5; Megatron-LM theoretical_memory_usage.py), s the
    sequence over ``cp``, split over the tp ranks with sequence parallelism."""
    return w.seq_len / w.cp * w.micro_batch * w.hidden * w.bytes_per_value / (w.tp if w.sequence_parallel else 1)


def offload_s(w: Workload, gpu: dict[str, Any], forward_s: float, backward_s: float) -> tuple[float, float]:
    """Exposed time of activation offload per micro-batch: the ``offload_layers`` layers'
    stored activations (:func:`activation_bytes_megatron`, or the layer input with full
    recomputation) copied to the host during the forward and back during the backward, over the
    GPU's host link (catalog ``host_link_GBps``, else a PCIe x16 of its ``pcie_gen``) at the same
    time as compute; exposed what exceeds the forward (copy out) and the backward (copy in):
    (forward part, backward part)."""
    off = min(w.offload_layers, w.stage_layers)
    if off <= 0:
        return 0.0, 0.0
    layer = activation_bytes_megatron(w)
    if w.recompute and w.recompute_granularity == "full":
        layer = layer_input_bytes(w)
    elif w.recompute and w.recompute_granularity == "op":
        layer = op_policy_bytes_per_layer(w)
    t = off * layer / (host_link_GBps(gpu) * 1e9)
    return max(0.0, t - forward_s), max(0.0, t - backward_s)


def host_link_GBps(gpu: dict[str, Any]) -> float:
    """GB/s one way between a GPU and host memory: the catalog's ``host_link_GBps`` (GB200/GB300:
    NVLink-C2C, its derivation in models/hardware/gpu.toml), else a PCIe x16 of the GPU's
    ``pcie_gen`` at its achievable rate (``collectives.PCIE_X16_GBPS``)."""
    return float(gpu.get("host_link_GBps") or 0.0) or PCIE_X16_GBPS.get(int(gpu.get("pcie_gen") or 5), PCIE_X16_GBPS[5])


#: bytes per parameter each copy of the CPU optimizer step moves over the host link: the fp32 main
#: gradient to the host and the fp32 master weight back. derived: Megatron-Core's
#: HybridDeviceOptimizer (megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py) copies each
#: gradient into a pinned CPU tensor of the master weight's type (fp32, ``param_update_in_fp32``)
#: and each updated CPU weight into the GPU parameter, both with ``non_blocking=True``; PyTorch's
#: non-blocking CPU<->GPU ``copy_`` converts types on the GPU (aten/src/ATen/native/cuda/Copy.cu:
#: "If non_blocking is true - type conversions are performed on the GPU"), so fp32 crosses the link
#: both ways: 4 bytes each
CPU_OPTIMIZER_COPY_BYTES = 4.0
#: host-memory bytes one Adam(W) step touches per parameter on the CPU: it reads the fp32 weight,
#: gradient and two moments and writes the weight and both moments back, 7 x 4 = 28 bytes
#: (derived from the update of Loshchilov & Hutter, ICLR 2019, Alg. 2: m, v, then the weight). A
#: lower bound of PyTorch's CPU AdamW, which Megatron-Core steps the host shard with and which runs
#: the update as several element-wise passes; Adam at a few FLOPs per 28 bytes is bound by memory
#: bandwidth on these CPUs, not by their cores
CPU_ADAM_BYTES_PER_PARAM = 28.0


@dataclass(frozen=True)
class OptimizerOffload:
    """One step of the CPU optimizer on the busiest GPU (:func:`optimizer_offload_times`), seconds:
    gradients to the host, Adam on the CPU, weights back, and what the iteration waits for."""

    d2h_s: float
    cpu_step_s: float
    h2d_s: float
    exposed_s: float
    params: float  #: parameters whose optimizer runs on the host


def optimizer_offload_times(w: Workload, gpu: dict[str, Any], host_memory_GBps: float | None
                            ) -> OptimizerOffload:
    """The CPU optimizer step of ``optimizer_cpu_offload`` per iteration on the busiest GPU.

    N = ``optimizer_offload_fraction`` × the GPU's optimizer shard (:func:`params_on_busiest_gpu`,
    / d with ZeRO 1 and up, the distributed optimizer). Copies: N × ``CPU_OPTIMIZER_COPY_BYTES``
    each way over the host link (:func:`host_link_GBps`; PCIe and NVLink-C2C are full duplex, so
    the two directions do not share it). CPU step: N × (``CPU_ADAM_BYTES_PER_PARAM`` + the two
    copies' bytes, which the DMA reads and writes in the same host memory) over ``host_memory_GBps``,
    the host's memory bandwidth per GPU (the server's sockets × channels × MT/s × 8 B,
    ``hostcpu.memory_GBps`` of its catalog CPU, / its GPUs: every rank steps at the same time).
    The step runs after the backward and the gradient reduction and before the next forward, so no
    compute hides it (Megatron-Core calls ``optimizer.step()`` between them). How the three
    overlap is Megatron-Core's (hybrid_optimizer.py): without ``overlap_cpu_optimizer_d2h_h2d``
    they run on the compute stream, one after the other: d2h + step + h2d; with it, one CPU
    optimizer per parameter, each waiting only for its own gradient's copy, and its weight copied
    back by a post-step hook on a second stream, a three-stage pipeline: max(d2h, step, h2d) plus
    filling and draining it with the largest parameter (the embedding or the output layer,
    V·h/t, or an MLP matrix h·F/t, / d with the distributed optimizer): its d2h and h2d. Not
    subtracted: the GPU's own Adam step, which the engine does not charge without offload.
    ``host_memory_GBps`` None (a caller that knows no host CPU: ``plan``'s estimate): the copies
    only, the CPU step left out; 0: refused (the catalog CPU has no memory figures)."""
    if not w.optimizer_cpu_offload or w.optimizer_offload_fraction <= 0:
        return OptimizerOffload(0.0, 0.0, 0.0, 0.0, 0.0)
    shard = params_on_busiest_gpu(w) / (w.dp_ranks if w.zero >= 1 else 1)
    n = w.optimizer_offload_fraction * shard
    link = host_link_GBps(gpu) * 1e9
    d2h = h2d = n * CPU_OPTIMIZER_COPY_BYTES / link
    if host_memory_GBps is not None and host_memory_GBps <= 0:
        raise UsageError("optimizer_cpu_offload: the GPU server's host CPU has no memory bandwidth in "
                         "the catalog (cpu_model memory_channels and memory_MTps); give them, or set "
                         "workload.optimizer_cpu_offload=false")
    step = 0.0 if host_memory_GBps is None else \
        n * (CPU_ADAM_BYTES_PER_PARAM + 2 * CPU_OPTIMIZER_COPY_BYTES) / (host_memory_GBps * 1e9)
    if w.overlap_cpu_optimizer_d2h_h2d:
        F = w.ffn_hidden or 4 * w.hidden
        largest = max(w.vocab * w.hidden, w.hidden * F) / w.tp / (w.dp_ranks if w.zero >= 1 else 1)
        edge = min(n, largest) * 2 * CPU_OPTIMIZER_COPY_BYTES / link
        exposed = max(d2h, step, h2d) + edge
    else:
        exposed = d2h + step + h2d
    return OptimizerOffload(d2h, step, h2d, exposed, n)


@dataclass(frozen=True)
class MemoryParts:
    """What one GPU holds at its peak, by part, in GB (10^9 bytes): :func:`memory_parts`. The
    parts add up to :func:`memory_per_gpu_GB` (``total``); ``recompute`` names the activation
    mode ("none", "selective: core_attn", "full"), ``in_flight`` the micro-batches whose
    activations the busiest (first) stage holds and ``kept_layers`` the layers of each kept on
    the GPU (the rest offloaded)."""

    weights: float  #: 16-bit weights (2 bytes per parameter of the shard, / d with ZeRO 3)
    gradients: float  #: gradient buffers (4 bytes, 2 without ``grad_reduce_in_fp32``; / d from ZeRO 2)
    optimizer: float  #: fp32 master weights, Adam momentum and variance (12 bytes, / d from ZeRO 1)
    activations: float  #: the transformer layers' stored activations of every micro-batch in flight
    embedding: float  #: the embedding's input and dropout output of every micro-batch in flight
    output_layer: float  #: the output layer's and the loss's inputs (one pipeline stage only)
    overhead: float  #: Megatron's 5% for temporaries (``ACTIVATION_OVERHEAD``; no sequence parallelism)
    #: ZeRO 3 / FSDP: the unsharded weights and gradients of the layers in use (:func:`fsdp_buffer_bytes`)
    buffers: float = 0.0
    recompute: str = "none"
    in_flight: float = 0.0
    kept_layers: int = 0

    @property
    def model_state(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> float:
        return self.model_state + self.activations + self.embedding + self.output_layer + self.overhead \
            + self.buffers

    def to_dict(self) -> dict[str, float]:
        """The GB parts by name (``Result.memory_parts_GB``): they add up to the total."""
        return {"weights": self.weights, "gradients": self.gradients, "optimizer": self.optimizer,
                "activations": self.activations, "embedding": self.embedding,
                "output_layer": self.output_layer, "overhead": self.overhead, "buffers": self.buffers}


def _state_parts(w: Workload) -> tuple[float, float, float] | None:
    """(weights, gradients, optimizer state) GB of :func:`model_state_GB`, or None."""
    if parameters(w) <= 0:
        return None
    shard, d = params_on_busiest_gpu(w), w.dp_ranks
    grad = GRAD_BYTES_PER_PARAM if w.grad_reduce_in_fp32 else WEIGHT_BYTES_PER_PARAM
    # optimizer_cpu_offload: that share of the fp32 master weights and moments lives in host memory
    kept = 1.0 - (w.optimizer_offload_fraction if w.optimizer_cpu_offload else 0.0)
    return (shard * WEIGHT_BYTES_PER_PARAM / (d if w.zero >= 3 else 1) / 1e9,
            shard * grad / (d if w.zero >= 2 else 1) / 1e9,
            shard * OPTIMIZER_BYTES_PER_PARAM / (d if w.zero >= 1 else 1) / 1e9 * kept)


#: bytes per parameter of a layer that ZeRO 3 / FSDP holds unsharded at its peak, the backward of
#: a layer: 16-bit weights of two layers, the one computing and the next, whose all-gather is
#: issued while it computes (PyTorch FSDP notes, "FSDP Prefetch Nuances": implicit prefetching
#: always on, "layer 1 all-gather can overlap with layer 0 forward compute"; in backward the
#: previous layer's), 2 x 2; and that layer's unsharded gradient before its reduce-scatter
#: ("inside backward, local unsharded gradients are reduce-scattered into sharded gradients",
#: PyTorch's FSDP2 tutorial), 16-bit as computed (2) and its fp32 copy in the reduce dtype
#: (torchtitan's ``mixed_precision_reduce`` "float32" default, FSDP2 MixedPrecisionPolicy
#: ``reduce_dtype``) (4): 10 bytes
FSDP_UNSHARDED_BYTES_PER_LAYER_PARAM = 2 * 2.0 + 2.0 + 4.0


def fsdp_buffer_bytes(w: Workload) -> float:
    """Bytes of unsharded weights and gradients ZeRO 3 / FSDP holds (``zero`` 3; 0 below it):
    ``FSDP_UNSHARDED_BYTES_PER_LAYER_PARAM`` × the parameters of the largest layer on one GPU
    (its matrices over tp, routed experts over tp·ep as well)."""
    if w.zero < 3 or w.kind != "transformer":
        return 0.0
    layer = _dense_layer_params(w) / w.tp
    if w.moe:
        routed = w.experts * _mlp_matrices(w) * w.hidden * w.moe_ffn_hidden
        layer = max(layer, (_moe_layer_params(w, False) - routed) / w.tp + routed / (w.tp * w.ep))
    return FSDP_UNSHARDED_BYTES_PER_LAYER_PARAM * layer


def recompute_mode(w: Workload) -> str:
    """The activation recomputation a workload asks for, in words: "none", "full" or
    "selective: " and the modules re-run (Megatron-Core's names)."""
    if not w.recompute:
        return "none"
    if w.recompute_granularity == "full":
        return "full"
    if w.recompute_granularity == "op":
        return "op: every second matrix product"
    return "selective: " + (", ".join(m.strip() for m in w.recompute_modules.split(",") if m.strip()) or "core_attn")


def memory_parts(w: Workload) -> MemoryParts | None:
    """Estimated memory one GPU needs, by part (:class:`MemoryParts`, GB of 10^9 bytes), or None
    when the parameters are not given.

    Model state: :func:`model_state_GB`. Activations (transformers) on the first pipeline stage,
    which holds the most micro-batches in flight: 1F1B keeps min(p, m) micro-batches (Narayanan et
    al. SC'21 §2.2.1), the interleaved schedule (v > 1) 1 + (p−1)/(p·v) times more (Korthikanti et
    al. 2023, §4.2.3). Per micro-batch and layer (:func:`activation_bytes_megatron`, the estimator
    of Megatron-LM's megatron/training/theoretical_memory_usage.py): every layer's activations, or
    with full recomputation (``recompute``, granularity "full") only each layer's input, 2·s·b·h
    bytes (split over t with sequence parallelism), plus one layer's full activations while it is
    recomputed. Plus, as Megatron counts: the embedding's input (8·s·b bytes) and dropout output
    (s·b·h) for each micro-batch in flight, and with one pipeline stage the output layer's inputs.
    With sequence parallelism (Megatron's compute_activation_memory) all of it is split over the
    tp ranks and the output layer's and loss's inputs are 4·s·b·(h + V)/t, without overhead;
    without it (compute_activation_memory_without_sp) the embedding terms stay whole, the output
    layer is (s·b·V/t + s·b·h)·2 and everything × ``ACTIVATION_OVERHEAD``. Vision: model state only.
    Frameworks other than Megatron, as their recipes run: torchtitan's per-op recomputation
    (granularity "op": :func:`op_policy_bytes_per_layer` per layer, plus the rest of one layer while
    it is re-run), PyTorch's unfused cross-entropy (``fused_cross_entropy`` false:
    ``UNFUSED_LOSS_FP32_COPIES`` fp32 copies of the logits and the output layer's s·b·h input in
    place of Megatron's output-layer terms) and ZeRO 3's unsharded layers (:func:`fsdp_buffer_bytes`).
    Not counted: the caching allocator's reserve over what is allocated (a measured peak of
    reserved memory, as torchtitan logs it, includes it), CUDA context, NCCL's own buffers.
    """
    state = _state_parts(w)
    if state is None:
        return None
    mode = recompute_mode(w)
    if w.kind == "vision":
        return MemoryParts(*state, 0.0, 0.0, 0.0, 0.0, recompute=mode)
    s, b, h = w.seq_len / w.cp, w.micro_batch, w.hidden
    in_flight: float = min(w.pp, w.micro_batches)
    if w.interleave > 1:
        in_flight = w.pp * (1.0 + (w.pp - 1) / (w.pp * w.interleave))
    layer = activation_bytes_megatron(w)
    kept = kept_layers(w)
    if w.recompute and w.recompute_granularity == "full":
        acts = in_flight * kept * layer_input_bytes(w) + layer
    elif w.recompute and w.recompute_granularity == "op":
        # what the per-op policy keeps, plus the rest of one layer while it is re-run
        saved = op_policy_bytes_per_layer(w)
        acts = in_flight * kept * saved + max(0.0, layer - saved)
    else:
        acts = in_flight * kept * layer
    # embedding input (8·s·b) and its dropout output (s·b·h) of every micro-batch in flight on the
    # first stage
    embedding = (8.0 * s * b + s * b * h * w.bytes_per_value / 2.0) * in_flight
    unfused = 0.0
    if not w.fused_cross_entropy and w.pp == 1:
        # PyTorch's cross-entropy on fp32 logits: UNFUSED_LOSS_FP32_COPIES copies of the GPU's
        # s·b·V/t logits, and the output layer's input as it keeps it (all-gathered: s·b·h)
        unfused = UNFUSED_LOSS_FP32_COPIES * 4.0 * s * b * w.vocab / w.tp + s * b * h * w.bytes_per_value
    if w.sequence_parallel and w.tp > 1:
        # Megatron's compute_activation_memory (sequence parallel): every term, the embedding's
        # and the output layer's included, is split over the tp ranks; the output layer's and the
        # loss's inputs with one stage are 4·s·b·(h + V); no 5% overhead on this path
        output = (unfused or 4.0 * s * b * (h + w.vocab) / w.tp) if w.pp == 1 else 0.0
        return MemoryParts(*state, acts / 1e9, embedding / w.tp / 1e9, output / 1e9, 0.0,
                           fsdp_buffer_bytes(w) / 1e9, recompute=mode, in_flight=in_flight, kept_layers=kept)
    output = (unfused or (s * b * w.vocab / w.tp + s * b * h) * 2.0) if w.pp == 1 else 0.0
    overhead = (acts + embedding + output) * (ACTIVATION_OVERHEAD - 1.0)
    return MemoryParts(*state, acts / 1e9, embedding / 1e9, output / 1e9, overhead / 1e9,
                       fsdp_buffer_bytes(w) / 1e9, recompute=mode, in_flight=in_flight, kept_layers=kept)


def memory_per_gpu_GB(w: Workload) -> float | None:
    """Estimated memory one GPU needs (GB, 10^9 bytes), or None when the parameters are not
    given: the sum of :func:`memory_parts` (its sources there)."""
    parts = memory_parts(w)
    return None if parts is None else parts.total
