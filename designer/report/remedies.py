"""What would relieve a bottleneck: advice for each part of the iteration time and each kind of
bottleneck the engine names (no Qt).

The advice follows the engine's own model: each remedy shrinks the term of the iteration-time
formula (``designer.engine.pipeline`` module docstring) that the bottleneck inflates.
"""

from __future__ import annotations

import re

#: iteration-time parts (``Result.breakdown_s`` keys) and what shrinks each
BREAKDOWN_REMEDY = {
    "tp_comm": "Keep tensor parallelism inside one NVLink domain (tp no larger than the GPUs "
               "joined by NVLink); inside it, a lower tp or GPUs with faster NVLink shorten it.",
    "pp_comm": "Fewer pipeline stages (lower pp), or faster links between the servers that hold "
               "neighbouring stages.",
    "dp_exposed": "More network bandwidth per GPU (faster NICs/DPUs, lower leaf oversubscription), "
                  "in-network reduction (SHARP switches), or a larger global batch so the gradient "
                  "all-reduce hides behind the backward pass.",
    "bubble": "More micro-batches per pipeline (larger global batch or smaller micro-batch), an "
              "interleaved schedule (interleave > 1), or fewer pipeline stages.",
    "host_cpu_slowdown": "Move the network, storage and crypto stacks onto DPUs, use RDMA instead of "
                         "kernel TCP, or give the servers more CPU cores.",
    "cp_comm": "Keep the context-parallel ring on fast links (cp no larger than the GPUs joined "
               "by NVLink, or one rail per GPU across servers), or a lower cp.",
    "ep_comm": "Keep the expert all-to-all inside one NVLink domain (ep no larger than the GPUs "
               "joined by NVLink), a lower ep, more network bandwidth per GPU across servers, or "
               "overlap it with the expert compute (workload ep_overlap).",
    "dpu_slowdown": "An adapter (DPU or SmartNIC) with a faster engine (crypto rate, Arm cores, line "
                    "rate), fewer services per adapter, or more adapters per server.",
    "data_stall": "Raise the storage read rate per server: more or faster storage appliances, a "
                  "storage fabric separate from the training fabric, GPUDirect Storage, or DPU "
                  "storage offload.",
    "straggler": "Cut host-stack interruptions on the GPU servers (offload the stacks to DPUs) so "
                 "the slowest worker is closer to the mean.",
    "checkpoint": "Checkpoint less often (longer interval), write checkpoints asynchronously, or "
                  "add storage write bandwidth.",
    "activation_offload": "Offload fewer layers (workload offload_layers), recompute instead, or a "
                          "GPU with a faster host link (NVLink-C2C on GB200/GB300).",
    "optimizer_offload": "Overlap the copies with the CPU step (overlap_cpu_optimizer_d2h_h2d), "
                         "offload a smaller share (optimizer_offload_fraction), shard the optimizer "
                         "over more ranks, or hosts with more memory bandwidth per GPU.",
}

#: who owns an adapter engine in the engine's sentences (``designer.engine.resources._explain``:
#: "<owner> <engine> engine on ... is over-subscribed"): a SmartNIC-offloaded server's SmartNICs,
#: a DPU-offloaded server's DPUs, or, in a DPU server that keeps ConnectX on its rails, the rail
#: SmartNICs (collectives) and the rail SmartNICs or storage DPU (other work); a host-managed
#: server's NICs, whose only engine is the embedded switch (``eswitch``: SR-IOV tenant packets)
ENGINE_OWNERS = ("SmartNIC", "rail SmartNIC (ConnectX)", "rail SmartNIC or storage DPU", "DPU", "NIC")
_OWNER = "(?:" + "|".join(re.escape(o) for o in sorted(ENGINE_OWNERS, key=len, reverse=True)) + ")"

#: patterns of the engine's bottleneck sentences (``designer.engine.bottlenecks`` and the
#: resources stage), matched case-insensitively in this order, and the remedy; first match wins
#: (path problems come first: their sentences also name the phase they slow down)
PATTERN_REMEDY = tuple((re.compile(p, re.IGNORECASE), advice) for p, advice in (
    (rf"(?<!\w){_OWNER} crypto engine", "Use adapters (DPUs or SmartNICs) with a higher inline "
                                        "crypto rate, or encrypt only the tenants that need it."),
    (rf"(?<!\w){_OWNER} arm engine", "Turn on the DPU hardware offloads (ASAP2 virtual switch, SNAP "
                                     "storage emulation) so the Arm cores only handle control work, "
                                     "or use a DPU with more Arm cores."),
    (rf"(?<!\w){_OWNER} dram engine", "Keep bulk data off the DPU memory: turn on the DPU hardware "
                                      "offloads (ASAP2, SNAP) so the Arm cores do not copy the data, "
                                      "or use a DPU with more memory bandwidth."),
    (rf"(?<!\w){_OWNER} eswitch engine", "The adapters' embedded switch forwards too many packets "
                                         "per second: send larger packets (batch small messages, "
                                         "raise the tenants' packet size), spread the tenants over "
                                         "more adapters per server, or use adapters whose embedded "
                                         "switch has a higher packet rate (catalog eswitch_Mpps)."),
    (rf"(?<!\w){_OWNER} line engine", "Give each server more adapter line rate: more DPUs or "
                                      "SmartNICs, or adapters with faster ports."),
    (r"\bhost CPU\b", "Move the network, storage and crypto stacks onto DPUs (scenario offload = "
                      "dpu), use RDMA collectives instead of kernel TCP, or use servers with more "
                      "CPU cores."),
    (r"\bECMP hash collisions", "Turn on adaptive routing (scenario routing = adaptive) so flows "
                               "spread evenly over the uplinks."),
    (r"\boversubscription\b", "Add uplinks or spine switches to bring the oversubscription down "
                              "to 1:1 for training traffic."),
    (r"\bcrosses the .* links", "Align the rails: connect NIC/DPU i of every server to the leaf "
                               "of rail i, so same-rail traffic stays on one leaf."),
    (r"\blink .* saturates|reaches only .* line rate", "Add capacity on the saturated link (more "
                                                      "parallel cables or faster ports), or spread "
                                                      "flows with adaptive routing."),
    (r"\bpipeline bubble", BREAKDOWN_REMEDY["bubble"]),
    (r"\bTP all-reduces?\b", BREAKDOWN_REMEDY["tp_comm"]),
    (r"\bpipeline send/receive", BREAKDOWN_REMEDY["pp_comm"]),
    (r"\bexposed DP\b", BREAKDOWN_REMEDY["dp_exposed"]),
    (r"\bstorage reads\b|\bdata stall", BREAKDOWN_REMEDY["data_stall"]),
    (r"\bstragglers?\b", BREAKDOWN_REMEDY["straggler"]),
    (r"\bcheckpoints?\b", BREAKDOWN_REMEDY["checkpoint"]),
))


def remedy(bottleneck: str) -> str:
    """Advice for one bottleneck sentence of the engine; "" when no pattern matches."""
    for pattern, advice in PATTERN_REMEDY:
        if pattern.search(bottleneck):
            return advice
    return ""
