"""What a design file's ``workload`` object may hold: the value type of each workload setting and
the number formats (no Qt, no engine import).

The file format checks the workload settings a file sets against this table (type, no negative
number, a known precision); the engine checks the ranges that depend on the design when it runs.
It is a copy of the fields of :class:`designer.engine.workload.Workload` (``tests/test_workload_spec.py``
fails when the two differ), kept here so that ``designer.topology`` does not import the engine:
the topology layer sits below it.
"""

from __future__ import annotations

#: number formats a workload may name (``Workload.precision``); the engine's
#: ``workload.PRECISION_BYTES`` gives their sizes
PRECISIONS = ("bf16", "fp16", "fp8", "fp32", "tf32")

#: type of every workload setting: "str", "int", "bool" or "float"
WORKLOAD_FIELD_TYPES: dict[str, str] = {
    "name": "str", "kind": "str", "layers": "int", "hidden": "int", "heads": "int", "kv_heads": "int",
    "ffn_hidden": "int", "mlp": "str", "experts": "int", "top_k": "int", "moe_ffn_hidden": "int",
    "shared_experts": "int", "dense_layers": "int", "q_lora_rank": "int", "kv_lora_rank": "int",
    "qk_head_dim": "int", "rope_head_dim": "int", "v_head_dim": "int", "vocab": "int", "seq_len": "int",
    "tp": "int", "pp": "int", "dp": "int", "cp": "int", "ep": "int", "micro_batch": "int",
    "global_batch": "int", "precision": "str", "recompute": "bool", "recompute_granularity": "str",
    "interleave": "int", "optimizer_sharded": "bool", "zero_stage": "int", "tp_comm_overlap": "bool",
    "pp_overlap": "bool", "dp_overlap": "bool", "ep_overlap": "bool", "flash_attention": "bool",
    "sequence_parallel": "bool", "tokens": "float", "tflops_per_gpu": "float",
    "samples_per_s_per_gpu": "float", "bytes_per_sample": "float", "params": "float",
    "flops_per_sample": "float", "dataset_samples": "float", "epochs": "float",
    "preprocess_core_s_per_sample": "float",
}

_JSON_TYPE = {"str": {"type": "string"}, "bool": {"type": "boolean"},
              "int": {"type": "integer", "minimum": 0}, "float": {"type": "number", "minimum": 0}}


def json_schema_properties() -> dict[str, dict]:
    """JSON Schema of each workload setting (the file format's ``workload`` properties)."""
    props = {name: dict(_JSON_TYPE[kind]) for name, kind in WORKLOAD_FIELD_TYPES.items()}
    props["precision"] = {"enum": list(PRECISIONS)}
    return props
