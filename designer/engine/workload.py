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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from designer.errors import UsageError

#: bytes per value of each training precision (weights, activations and gradients)
PRECISION_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4, "tf32": 4}
#: catalog GPU field holding the dense tensor-core peak of each precision
PRECISION_PEAK_FIELD = {"bf16": "bf16_dense_tflops", "fp16": "bf16_dense_tflops",
                        "fp8": "fp8_dense_tflops", "fp32": "tf32_dense_tflops",
                        "tf32": "tf32_dense_tflops"}


@dataclass(frozen=True)
class Workload:
    """One training job. Sizes are counts; ``tokens`` is the training token budget.

    ``dp`` = 0 means "as many data-parallel replicas as the GPUs of the design allow".
    ``optimizer_sharded`` (ZeRO-1 / distributed optimizer) turns the DP all-reduce into a
    reduce-scatter of gradients plus an all-gather of parameters.
    ``tflops_per_gpu`` > 0 replaces the predicted throughput (to reproduce published estimates).
    """

    name: str = "custom"
    kind: str = "transformer"  #: "transformer" (LLM) or "vision"
    layers: int = 24
    hidden: int = 2048
    heads: int = 16
    kv_heads: int = 0  #: key/value heads (grouped-query attention); 0 = heads (multi-head)
    ffn_hidden: int = 0  #: SwiGLU MLP width (Llama-style block); 0 = GPT MLP of width 4·hidden
    vocab: int = 51200
    seq_len: int = 2048
    tp: int = 1
    pp: int = 1
    dp: int = 0
    micro_batch: int = 1
    global_batch: int = 512
    precision: str = "bf16"
    recompute: bool = True
    interleave: int = 1  #: virtual pipeline stages per GPU (1 = plain 1F1B)
    optimizer_sharded: bool = False
    flash_attention: bool = False  #: fused attention that never stores the s×s scores
    sequence_parallel: bool = False  #: LayerNorm/dropout activations split over the TP ranks
    tokens: float = 300e9
    tflops_per_gpu: float = 0.0
    # vision / data ingest
    samples_per_s_per_gpu: float = 0.0  #: vision: samples one GPU trains per second
    bytes_per_sample: float = 0.0  #: bytes read from storage per sample (0 = none)
    params: float = 0.0  #: vision: model parameters (gradient all-reduce, memory; 0 = not given)
    flops_per_sample: float = 0.0  #: vision: training FLOPs per sample (0 = not given)
    dataset_samples: float = 0.0  #: vision: training set size (0 = ``DEFAULT_DATASET_SAMPLES``)
    epochs: float = 1.0  #: vision: passes over the training set
    #: host CPU core-seconds the data loader spends on one sample before the GPU gets it (decode,
    #: augmentation, tensor conversion; for LLMs the slice of pre-tokenized ids); 0 = none. The
    #: resources stage gives the loader the cores the training processes and the host stacks leave
    preprocess_core_s_per_sample: float = 0.0

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

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
        return PRECISION_BYTES[self.precision]

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

_BOOL_FIELDS = ("recompute", "optimizer_sharded", "flash_attention", "sequence_parallel")
_INT_FIELDS = {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len", "tp", "pp", "dp", "micro_batch",
               "global_batch", "interleave"}
#: real-valued fields (and ``tokens_B``) and their lower bound (value, inclusive);
#: ``tflops_per_gpu`` also stays at or below the GPU's dense peak (checked in :func:`from_dict`)
_FLOAT_FIELDS = {"tokens": (0.0, False), "tokens_B": (0.0, False), "tflops_per_gpu": (0.0, True),
                 "samples_per_s_per_gpu": (0.0, True), "bytes_per_sample": (0.0, True),
                 "params": (0.0, True), "flops_per_sample": (0.0, True),
                 "dataset_samples": (0.0, True), "epochs": (0.0, False),
                 "preprocess_core_s_per_sample": (0.0, True)}
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
    values: dict[str, Any] = {}
    data = dict(data)
    gpu_model = str((gpu or {}).get("id", ""))
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
    w = Workload(**values)
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
    if gpu and w.tflops_per_gpu > (peak := gpu_peak_tflops(gpu, w.precision)):
        raise UsageError(f"{where}: 'tflops_per_gpu' {w.tflops_per_gpu:g} is above the {gpu_model} "
                         f"dense {w.precision} peak of {peak:g} TFLOP/s; give an achieved rate "
                         f"(below the peak) or 0 to let the engine predict it")
    for key in ("layers", "hidden", "heads", "vocab", "seq_len", "tp", "pp", "micro_batch",
                "global_batch", "interleave"):
        if getattr(w, key) < 1:
            raise UsageError(f"{where}: '{key}' must be at least 1, got {getattr(w, key)}")
    for key in ("kv_heads", "ffn_hidden"):
        if getattr(w, key) < 0:
            raise UsageError(f"{where}: '{key}' must be 0 (GPT default) or positive, got {getattr(w, key)}")
    if w.dp < 0:
        raise UsageError(f"{where}: 'dp' must be 0 (fill the design) or positive, got {w.dp}")
    if w.dp == 0:
        wanted = data.get("gpus")
        if wanted is not None:
            _check_numbers({"gpus": wanted}, where)
        pool = int(wanted) if wanted and int(wanted) <= total_gpus else total_gpus
        dp = pool // (w.tp * w.pp)
        if dp < 1:
            raise UsageError(f"{where}: tp x pp = {short(w.tp * w.pp)} needs more GPUs than the design "
                             f"has ({total_gpus}); lower --tp/--pp or add GPU servers")
        w = replace(w, dp=dp)
    if w.gpus > total_gpus:
        raise UsageError(f"{where}: tp x pp x dp = {short(w.gpus)} GPUs, but the design has only "
                         f"{total_gpus}; lower the parallelism or add GPU servers")
    if w.global_batch % (w.dp * w.micro_batch):
        raise UsageError(f"{where}: global batch {w.global_batch} is not a multiple of "
                         f"dp x micro-batch = {w.dp} x {w.micro_batch}; change --global-batch")
    if w.kind == "transformer":
        if w.pp * w.interleave > w.layers + MAX_LAYERLESS_CHUNKS:
            raise UsageError(f"{where}: pp x interleave = {w.pp} x {w.interleave} stages is more "
                             f"than the {w.layers} layers plus an embedding-only and a loss-only "
                             f"chunk ({w.layers + MAX_LAYERLESS_CHUNKS}); lower --pp or interleave")
        if w.hidden % w.heads or w.heads % w.tp:
            raise UsageError(f"{where}: hidden {w.hidden} / heads {w.heads} / tp {w.tp} must "
                             f"divide evenly (heads split across TP ranks)")
        if w.kv_heads and w.heads % w.kv_heads:
            raise UsageError(f"{where}: heads {w.heads} must be a multiple of kv_heads {w.kv_heads} "
                             f"(each key/value head serves a group of query heads)")
    return w


def _layer_matrix_params(w: Workload) -> float:
    """Weights of the matrices of one transformer layer (each used in one GEMM per token).

    Attention: Q and O are h×h, K and V are h×(h·kv/a) (kv = a without grouped-query attention):
    2h² + 2h²·kv/a. MLP: two h×4h matrices (GPT, 8h²) or three h×ffn matrices (SwiGLU: gate, up,
    down; 3·h·ffn). GPT: 4h² + 8h² = 12h², Megatron's per-layer figure.
    """
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
    if w.ffn_hidden:
        return l * (_layer_matrix_params(w) + 2.0 * h) + h + 2.0 * V * h
    kv = (w.kv_heads or w.heads) / w.heads
    biases = (11.0 + 2.0 * kv) * h  # Q, O: h each; K, V: kv·h each; MLP 4h + h; two LayerNorms 4h
    return l * (_layer_matrix_params(w) + biases) + (V + s) * h


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
    """
    if w.kind == "vision":
        return w.flops_per_sample * w.global_batch
    B, s, l, h, V = w.global_batch, w.seq_len, w.layers, w.hidden, w.vocab
    passes = 4.0 if (w.recompute if recompute is None else recompute) else 3.0
    return B * s * (passes * l * (2.0 * _layer_matrix_params(w) + 4.0 * s * h) + 6.0 * V * h)


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
    s, b, h, a, t = w.seq_len, w.micro_batch, w.hidden, w.heads, w.tp
    if w.flash_attention:
        return s * b * h * (10 + 24.0 / t) * w.bytes_per_value / 2.0 + 4.0 * a * s * b / t
    return s * b * h * (10 + 24.0 / t + 5.0 * a * s / (h * t)) * w.bytes_per_value / 2.0


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
    gemm_efficiency: float
    recompute: bool = True

    @property
    def micro_batch_s(self) -> float:
        return self.gemm_s + self.memory_s

    @property
    def backward_fraction(self) -> float:
        """Share of a micro-batch's compute that is backward pass (2 of 3 or 2 of 4 forward units
        with recomputation; a backward pass costs two forwards)."""
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


def compute(w: Workload, gpu: dict[str, Any]) -> ComputeTimes:
    """Compute time of one micro-batch on one GPU of one pipeline stage.

    GEMM time = model FLOPs per GPU per micro-batch / (dense peak × gemm_efficiency), where the
    FLOPs per GPU are F / (tp·pp·dp) spread over m micro-batches and gemm_efficiency is the
    catalog constant of the GPU type. Memory-bound time = MEMORY_PASSES × activation bytes per
    layer × layers per stage / HBM bandwidth (catalog ``memory_bw_TBps``); this is what makes
    small-hidden models slower per FLOP than large ones. Uneven stages: both are for the busiest
    GPU (``Workload.stage_layers``), i.e. the even share scaled by p·stage_layers/l (the logit
    work is taken as spread over the stages like the layers, which is what Llama 3 arranged by
    giving the first and the last stage one layer fewer).
    """
    peak = gpu_peak_tflops(gpu, w.precision)
    eff = float(gpu.get("gemm_efficiency") or 0.0)
    if not 0 < eff <= 1:
        raise UsageError(f"GPU model '{gpu.get('id', '?')}' needs gemm_efficiency in (0, 1] in the "
                         f"catalog, got {eff}")
    flops_gpu = model_flops_per_iteration(w) / w.gpus
    m = w.micro_batches
    if w.kind == "vision":
        sample_s = w.global_batch / w.gpus / m / w.samples_per_s_per_gpu
        return ComputeTimes(flops_gpu, sample_s, 0.0, peak, eff, w.recompute)
    busiest = w.stage_layers * w.pp / w.layers
    gemm_s = flops_gpu * busiest / m / (peak * 1e12 * eff)
    memory_s = 0.0
    hbm = float(gpu.get("memory_bw_TBps") or 0.0)
    if hbm > 0:
        memory_s = MEMORY_PASSES[w.recompute] * activation_bytes_per_layer(w) * w.stage_layers / (hbm * 1e12)
    return ComputeTimes(flops_gpu, gemm_s, memory_s, peak, eff, w.recompute)


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


#: bytes per parameter of mixed-precision Adam training: 16-bit weights (2) and gradients (2),
#: plus fp32 master weights, momentum and variance (4 + 4 + 4 = 12, the optimizer state).
#: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
#: SC'20 (arXiv 1910.02054), §3.1: "2Ψ + 2Ψ + KΨ" bytes with K = 12 for mixed-precision Adam
WEIGHT_GRAD_BYTES_PER_PARAM = 4.0
OPTIMIZER_BYTES_PER_PARAM = 12.0


def model_state_GB(w: Workload) -> float | None:
    """Weights, gradients and optimizer state one GPU holds (GB), or None without a parameter
    count: P/(tp·pp) parameters at 16 bytes (ZeRO §3.1), the 12 optimizer bytes split over dp as
    well with ``optimizer_sharded``. The part of :func:`memory_per_gpu_GB` that does not depend
    on the activation model: a job whose model state exceeds a GPU's memory cannot run."""
    P = parameters(w)
    if P <= 0:
        return None
    optimizer = OPTIMIZER_BYTES_PER_PARAM / (w.dp if w.optimizer_sharded else 1)
    return P / (w.tp * w.pp) * (WEIGHT_GRAD_BYTES_PER_PARAM + optimizer) / 1e9


def memory_per_gpu_GB(w: Workload) -> float | None:
    """Estimated memory one GPU needs (GB, 10^9 bytes), or None when the parameters are not given.

    Model state (ZeRO §3.1, see the constants above): each GPU holds P/(tp·pp) parameters and
    16 bytes for each (4 for weights and gradients, 12 of optimizer state); with
    ``optimizer_sharded`` (ZeRO-1, Megatron's distributed optimizer) the 12 bytes are split over
    the dp replicas too. Activations (transformers) on the first pipeline stage, which holds the
    most micro-batches in flight: 1F1B keeps min(p, m) micro-batches (Narayanan et al. SC'21
    §2.2.1), the interleaved schedule (v > 1) 1 + (p−1)/(p·v) times more (Korthikanti et al.
    2023, §4.2.3). Per micro-batch and layer: with ``recompute`` (full recomputation) only the
    layer input, 2·s·b·h bytes at 16 bits (Korthikanti §4.1; split over t with
    ``sequence_parallel``), plus one layer's full activations
    while it is recomputed; without, every layer's full activations
    (:func:`activation_bytes_per_layer`). Vision: model state only (activations are not modelled).
    Not counted: framework workspace, fragmentation, communication buffers.
    """
    state_GB = model_state_GB(w)
    if state_GB is None:
        return None
    state = state_GB * 1e9
    if w.kind == "vision":
        return state_GB
    in_flight = min(w.pp, w.micro_batches)
    if w.interleave > 1:
        in_flight *= 1.0 + (w.pp - 1) / (w.pp * w.interleave)
    full = activation_bytes_per_layer(w)
    if w.sequence_parallel and w.tp > 1:
        # Korthikanti et al. 2023, §4.2.2, eq. (4): sequence parallelism splits the 10·s·b·h
        # bytes that tensor parallelism replicates (LayerNorms, dropouts) over the t ranks too
        full -= w.seq_len * w.micro_batch * w.hidden * 10.0 * (1.0 - 1.0 / w.tp) * w.bytes_per_value / 2.0
    if w.recompute:
        layer_input = w.seq_len * w.micro_batch * w.hidden * w.bytes_per_value
        if w.sequence_parallel:
            layer_input /= w.tp
        acts = in_flight * w.stage_layers * layer_input + full
    else:
        acts = in_flight * w.stage_layers * full
    return (state + acts) / 1e9
