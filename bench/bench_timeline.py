"""Timeline speed: a 60-day run on 16,384 GPUs (target: >= 10,000 samples in under 10 s).

Run: python bench/bench_timeline.py
"""

import time

from designer.engine.timeline import LLAMA3_FAILURES_PER_GPU_HOUR, TimelineInputs, simulate


def main() -> None:
    cases = {
        "8 s iterations, jitter + failures + checkpoints + storage": dict(iteration_s=8.0),
        "0.5 s iterations (10M iterations)": dict(iteration_s=0.5),
    }
    for name, kw in cases.items():
        it = kw["iteration_s"]
        inp = TimelineInputs(tokens_per_iteration=16e6, token_budget=16e6 * 60 * 86400 / it,
                             n_gpus=16384, breakdown_s={"compute": 0.7 * it}, jitter_sigma=0.01,
                             n_workers=16384, storage_read_GB_per_iteration=50 * it,
                             storage_read_achieved_GBps=80, checkpoint_interval_s=3600,
                             checkpoint_write_s=60, checkpoint_GB=6000,
                             failure_rate_per_gpu_hour=LLAMA3_FAILURES_PER_GPU_HOUR, **kw)
        t = time.perf_counter()
        samples, summary = simulate(inp)
        dt = time.perf_counter() - t
        print(f"{name}: {len(samples)} samples in {dt:.2f} s; {summary.failures} failures, "
              f"goodput {summary.goodput:.3f}, {summary.training_time_days:.1f} days")


if __name__ == "__main__":
    main()
