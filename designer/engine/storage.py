"""Storage ingest and checkpoints.

* Read demand = samples/s x bytes per sample (the MLPerf Storage definition: an emulated
  accelerator consumes ``batch_size`` samples every ``computation_time`` seconds; 3D U-Net needs
  ~3.1 GB/s and ResNet-50 ~205 MB/s per H100).
* Achieved read rate = the smallest of the path's limits (storage target share, fabric share, host
  CPU, DPU engines); :func:`achieved` names the limiting element.
* Data stall: reads are prefetched while the GPUs compute (framework data loaders overlap input
  with the step), so a step waits only for the part of the read that does not fit in it. The same
  holds for the host CPU's decoding of the samples (``resources``: the loaders' time on the cores
  they get); reading and decoding run as pipeline stages, so the slower one sets the wait.
* Checkpoint = parameters x bytes per parameter (``models/costs/storage.toml``), written by all
  servers in parallel; a synchronous checkpoint every ``k`` iterations costs ``write_s / k`` per
  iteration.
"""

from __future__ import annotations


def read_demand_Bps(samples_per_s: float, sample_bytes: float) -> float:
    """Bytes per second the GPUs consume."""
    return samples_per_s * sample_bytes


def converged_fabric_Bps(fabric_Bps: float, comm_s: float, iteration_s: float) -> float:
    """Storage share of a fabric path that also carries training traffic.

    Collectives keep the server's links busy for ``comm_s`` of every ``iteration_s``; storage reads
    get the links for the rest of the iteration.
    """
    if iteration_s <= 0:
        return fabric_Bps
    busy = min(max(comm_s / iteration_s, 0.0), 1.0)
    return fabric_Bps * (1.0 - busy)


def achieved(limits_Bps: dict[str, float]) -> tuple[float, str]:
    """The smallest limit and its name (limits with no value are left out by the caller)."""
    name = min(limits_Bps, key=limits_Bps.__getitem__)
    return max(limits_Bps[name], 0.0), name


def stall_s(work_s: float, overlap_s: float) -> float:
    """Time a step waits for input work of ``work_s`` prefetched during ``overlap_s``."""
    return max(0.0, work_s - overlap_s)


def transfer_s(nbytes: float, rate_Bps: float) -> float:
    """Time to move ``nbytes`` at ``rate_Bps`` (no bytes: 0; bytes but no rate: infinite)."""
    if nbytes <= 0:
        return 0.0
    return nbytes / rate_Bps if rate_Bps > 0 else float("inf")


def checkpoint_bytes(parameters: float, bytes_per_param: float) -> float:
    return parameters * bytes_per_param


def amortized_checkpoint_s(write_s: float, every_iterations: int) -> float:
    """Per-iteration cost of a synchronous checkpoint written every ``every_iterations``."""
    return write_s / every_iterations if every_iterations > 0 else 0.0
