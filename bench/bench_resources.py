"""Speed of the resources stage: 2,048 servers (16,384 GPUs) in 1 group and in 64 groups.

Run: PYTHONPATH=. python bench/bench_resources.py  (prints ms per assess call; the pipeline budget is < 1 s).
"""

import time
from dataclasses import replace

from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures


def main() -> None:
    fig = cost_figures()
    g = ServerGroup(count=2048, rdma_bytes=50e9, tcp_bytes=1e9, comm_s=0.5, dpus=8, encrypt=True,
                    isolated=True, storage_fabric_GBps=5)
    base = dict(iteration_s=5.0, samples_per_iteration=16384, sample_bytes=1e6,
                storage_read_GBps=500, storage_write_GBps=250, parameters=70e9,
                checkpoint_every_iterations=100)
    cases = {
        "1 group x 2048": (g,),
        "64 groups x 32": tuple(replace(g, count=32, scenario=("host", "dpu")[i % 2],
                                        rdma_bytes=50e9 + i * 1e8) for i in range(64)),
    }
    for name, groups in cases.items():
        inp = ResourceInputs(groups=groups, **base)
        n = 50
        t0 = time.perf_counter()
        for _ in range(n):
            assess(inp, fig)
        print(f"{name}: {(time.perf_counter() - t0) / n * 1e3:.2f} ms per assess")


if __name__ == "__main__":
    main()
