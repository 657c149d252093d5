"""The workload a design file (or a preset, or the command line) describes: every setting with its
type, default and meaning, and the number formats (no Qt, no engine import).

:class:`WorkloadSpec` is the one list of the workload fields; the engine's
:class:`designer.engine.workload.Workload` derives from it (adding what the engine computes from
the fields), so the two cannot differ. The file format checks the workload settings a file sets
against :data:`WORKLOAD_FIELD_TYPES` (type, no negative number, a known precision); the engine
checks the ranges that depend on the design when it runs. It lives here so that
``designer.topology`` does not import the engine: the topology layer sits below it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

#: number formats a workload may name (``Workload.precision``); the engine's
#: ``workload.PRECISION_BYTES`` gives their sizes
PRECISIONS = ("bf16", "fp16", "fp8", "fp32", "tf32", "mxfp8")
#: modules a selective recomputation may re-run, by Megatron-Core's names
#: (``TransformerConfig.recompute_modules``, megatron/core/transformer/transformer_config.py:
#: "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"; default
#: ["core_attn"])
RECOMPUTE_MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts")


@dataclass(frozen=True)
class WorkloadSpec:
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
    #: width of each query/key/value head; 0 = hidden / heads. Set apart from it where a model's
    #: heads are wider than hidden/heads (Qwen3-235B-A22B: hidden 4096, 64 heads of 128,
    #: config.json ``head_dim``; Qwen3 technical report, arXiv 2505.09388, Table 2)
    head_dim: int = 0
    ffn_hidden: int = 0  #: SwiGLU MLP width (Llama-style block); 0 = GPT MLP of width 4·hidden
    #: MLP kind: "" = GPT GELU MLP without ffn_hidden, SwiGLU with it; "gelu" / "relu2" (two
    #: matrices, e.g. Nemotron's squared ReLU); "swiglu" (three: gate, up, down)
    mlp: str = ""
    # mixture of experts (0 = dense): routed experts, experts per token, their MLP width, shared
    # experts every token also passes, and how many first layers stay dense (with ffn_hidden)
    experts: int = 0
    top_k: int = 0
    moe_ffn_hidden: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    # multi-head latent attention (DeepSeek-V2/V3; 0 = none): low-rank query and key/value
    # projections, per-head query/key width without and with rotary part, value width
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_head_dim: int = 0
    rope_head_dim: int = 0
    v_head_dim: int = 0
    vocab: int = 51200
    seq_len: int = 2048
    tp: int = 1
    pp: int = 1
    dp: int = 0
    cp: int = 1  #: context parallelism: the sequence split over cp GPUs (ring attention)
    ep: int = 1  #: expert parallelism: the routed experts split over ep GPUs of the DP·CP group
    micro_batch: int = 1
    global_batch: int = 512
    precision: str = "bf16"
    recompute: bool = True
    #: with ``recompute``: "full" (each layer's forward re-run), "selective" (only the attention
    #: core, Korthikanti et al. 2023 §5, or the ``recompute_modules``) or "op" (torchtitan's per-op
    #: policy, ``activation_checkpoint.selective_ac_option = "op"``: every layer keeps the outputs of
    #: its matrix multiplications "except every second mm" and of the fused attention, and re-runs
    #: the rest; ``workload.op_policy_matrices``)
    recompute_granularity: str = "full"
    #: with granularity "selective": the modules re-run in the backward pass, comma-separated
    #: (``RECOMPUTE_MODULES``, Megatron-Core's ``--recompute-modules``); "" = "core_attn"
    recompute_modules: str = ""
    interleave: int = 1  #: virtual pipeline stages per GPU (1 = plain 1F1B)
    optimizer_sharded: bool = False
    #: ZeRO stage (Rajbhandari et al. 2020): 1 optimizer state, 2 + gradients, 3 + weights (FSDP)
    #: sharded over the data-parallel ranks; 0 = as ``optimizer_sharded`` says (1 if true)
    zero_stage: int = 0
    #: Megatron-Core/NeMo overlap settings: TP collectives pipelined with the GEMMs (Transformer
    #: Engine userbuffers, ``tp_comm_overlap``), pipeline send/receive overlapped with compute
    #: (``overlap_p2p_comm``), DP gradient reduce-scatter / parameter all-gather per bucket during
    #: backward / forward (``overlap_grad_reduce`` / ``overlap_param_gather``). Off here, as in
    #: the 2021 Megatron-LM runs of the A100 presets. Today's defaults: Megatron-LM's training
    #: arguments turn p2p overlap on with the interleaved schedule (``--no-overlap-p2p-
    #: communication`` turns it off; megatron/training/arguments.py) and leave the others off;
    #: NeMo's training configs (NeMo-Framework-Launcher conf/training/gpt3/*.yaml) set
    #: ``overlap_grad_sync`` / ``overlap_param_sync`` on, ``ub_tp_comm_overlap`` on where TP > 1 and
    #: ``overlap_p2p_comm`` on with virtual pipeline stages; presets and reference runs set them
    tp_comm_overlap: bool = False
    pp_overlap: bool = False
    dp_overlap: bool = False
    #: the EP all-to-all of one micro-batch runs during another's compute (DeepSeek-V3's
    #: DualPipe, technical report §3.2.1; Megatron-Core's ``overlap_moe_expert_parallel_comm``)
    ep_overlap: bool = False
    #: activation offload (Megatron-Core ``cpu_offloading_num_layers`` with
    #: ``cpu_offloading_activations``): the activations of this many of a stage's layers go to host
    #: memory after their forward and come back before their backward; 0 = none
    offload_layers: int = 0
    #: multi-token prediction modules (DeepSeek-V3 technical report §2.2; Megatron-Core
    #: ``mtp_num_layers``): each one more transformer block, a 2h→h projection and a second pass
    #: of the shared output layer and loss, on the pipeline's last stage; 0 = none
    mtp_layers: int = 0
    #: the pipeline split counts the embedding as a layer of the first stage and the output layer
    #: (with the loss) as one of the last (Megatron-DeepSpeed ``--pp-partition-method
    #: 'type:transformer|embedding'``, BLOOM's tr11-176B-ml.slurm; Megatron-LM
    #: ``--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split``): the
    #: last GPU runs one layer fewer beside the output layer (``workload.output_layer_slot``)
    embedding_in_pipeline_split: bool = False
    #: the MoE dispatcher reads the tokens per expert on the host in every MoE layer (Megatron-Core's
    #: alltoall and flex dispatchers as of 2025, to size the grouped GEMMs): the GPU's queue runs
    #: dry there and the launches that follow are host-bound (``workload.moe_host_s``)
    moe_host_sync: bool = False
    #: the static parts of each layer (attention, router, EP preprocess, shared experts) replay as
    #: CUDA graphs (Megatron-Core ``--cuda-graph-impl transformer_engine --cuda-graph-scope ...``);
    #: without them a host-synchronized MoE layer also pays the launches they save
    cuda_graphs: bool = False
    #: MoE token dispatcher (Megatron-Core ``moe_token_dispatcher_type``): "alltoall" sends one
    #: copy of a token per chosen expert; "flex" (DeepEP / HybridEP backends) sends it once per
    #: other server holding one of its experts and fans it out there over NVLink
    moe_dispatcher: str = "alltoall"
    #: gradients accumulate and reduce in an fp32 buffer (Megatron-Core DDP ``grad_reduce_in_fp32``,
    #: 4 bytes per parameter, as Megatron's estimator counts); false: in the 16-bit weights' type (2),
    #: as NeMo's Nemotron-4 340B performance recipe sets it (nemo/collections/llm/recipes/
    #: nemotron4_340b.py ``pretrain_performance_optimizations``: ``grad_reduce_in_fp32 = False``)
    grad_reduce_in_fp32: bool = True
    #: the optimizer runs on the host CPU (Megatron-Core ``--optimizer-cpu-offload``,
    #: megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py ``HybridDeviceOptimizer``): the
    #: fp32 master weights and Adam moments of ``optimizer_offload_fraction`` of the GPU's shard live
    #: in host memory; every step copies their gradients to the host, runs Adam on the CPU and copies
    #: the updated weights back (``workload.optimizer_offload_s``, the breakdown's optimizer_offload)
    optimizer_cpu_offload: bool = False
    #: share of the shard's parameters whose optimizer goes to the host (``--optimizer-offload-fraction``,
    #: Megatron's default 1.0); 0..1, used only with ``optimizer_cpu_offload``
    optimizer_offload_fraction: float = 1.0
    #: the gradient copies, the CPU step and the weight copies run concurrently, parameter by parameter
    #: (``--overlap-cpu-optimizer-d2h-h2d``: one CPU optimizer per parameter and a copy stream each
    #: way); false (Megatron's default): one after the other
    overlap_cpu_optimizer_d2h_h2d: bool = False
    #: the loss is Megatron's vocab-parallel cross-entropy, computed in place on one fp32 copy of
    #: the logits (megatron/core/tensor_parallel/cross_entropy.py; its estimator's 4·s·b·V/t); false:
    #: PyTorch's cross-entropy on the logits cast to fp32 (torchtitan: the model returns
    #: ``self.output(h).float()``), which holds three fp32 copies at the loss's peak
    #: (``workload.UNFUSED_LOSS_FP32_COPIES``)
    fused_cross_entropy: bool = True
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


#: type of every workload setting: "str", "int", "bool" or "float" (the annotations of
#: :class:`WorkloadSpec`)
WORKLOAD_FIELD_TYPES: dict[str, str] = {f.name: str(f.type) for f in fields(WorkloadSpec)}

_JSON_TYPE: dict[str, dict[str, Any]] = {"str": {"type": "string"}, "bool": {"type": "boolean"},
              "int": {"type": "integer", "minimum": 0}, "float": {"type": "number", "minimum": 0}}


def json_schema_properties() -> dict[str, dict]:
    """JSON Schema of each workload setting (the file format's ``workload`` properties)."""
    props = {name: dict(_JSON_TYPE[kind]) for name, kind in WORKLOAD_FIELD_TYPES.items()}
    props["precision"] = {"enum": list(PRECISIONS)}
    return props
