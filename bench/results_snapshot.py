"""Engine results on a fixed set of designs, dumped field by field, to show that a speed change
leaves every figure as it was.

    python bench/results_snapshot.py dump OUT.json [--quick]   # run the engine, write every field
    python bench/results_snapshot.py compare A.json B.json      # largest relative difference

``dump`` runs ``designer.engine.pipeline.run`` on the embedded example, the designs under
tests/data, and template designs of a few sizes and options (leaf-spine, fat-tree,
rail-optimized with DPUs, converged/separate/no storage, oversubscription, several jobs packed and
scattered, adaptive routing, a 2,048-server GPT-3 175B run) and flattens ``Result.to_json()`` into
``path -> value`` (``links[12].utilization``, ``breakdown_s.compute``...). ``compare`` prints the
largest relative difference over the numeric fields (|a - b| / max(|a|, |b|, 1e-300)), every
non-numeric field that differs and every field present on one side only; exit 1 when the largest
difference is above 1e-9 or anything else differs. This is a check run by hand around a speed
change (issue 15), not a test: its reference is the previous code's output, not a published figure.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))

ROOT = Path(__file__).absolute().parent.parent
TOLERANCE = 1e-9


def _cases(quick: bool):
    """(name, design factory, run keywords)."""
    from designer.paths import resources_dir
    from designer.topology import fileformat, templates

    def load(path):
        return lambda: fileformat.load(path)

    def tpl(name, **opts):
        return lambda: templates.TEMPLATES[name](**opts)

    example = resources_dir() / "examples" / "example.json"
    gpt = dict(workload="gpt3-175b", tp=8, pp=8)
    small = dict(workload="llama3-8b", tp=8, pp=1)
    cases = [
        ("example", load(example), {}),
        ("example-adaptive", load(example), dict(scenario={"routing": "adaptive"})),
        ("example-dpu-seed3", load(example), dict(scenario={"offload": "dpu"}, seed=3)),
        ("design_v1_sample", load(ROOT / "tests" / "data" / "design_v1_sample.json"), {}),
        ("leaf-spine-16", tpl("leaf-spine", servers=16), small),
        ("leaf-spine-24-oversub2-converged", tpl("leaf-spine", servers=24, oversubscription=2.0,
                                                  storage="converged"), dict(small, global_batch=480)),
        ("fat-tree-k8", tpl("fat-tree", k=8), dict(workload="llama3-8b", tp=1, pp=1, global_batch=1024)),
        ("fat-tree-k8-adaptive", tpl("fat-tree", k=8), dict(workload="llama3-8b", tp=1, pp=2,
                                                            scenario={"routing": "adaptive"})),
        ("rail-64-dpu", tpl("rail-optimized", servers=64, dpu="bluefield-3"), small),
        ("rail-64-converged-tenants3", tpl("rail-optimized", servers=64, storage="converged"),
         dict(small, global_batch=168, scenario={"tenants": 3, "tenant_placement": "scattered"})),
        ("rail-96-oversub2-tenants4-packed", tpl("rail-optimized", servers=96, oversubscription=2.0),
         dict(small, global_batch=240, scenario={"tenants": 4})),
        ("rail-128-none-adaptive", tpl("rail-optimized", servers=128, storage="none"),
         dict(gpt, scenario={"routing": "adaptive"})),
        ("rail-256-gpt3", tpl("rail-optimized", servers=256), gpt),
        ("rail-256-gpt3-tenants2-scattered", tpl("rail-optimized", servers=256),
         dict(gpt, scenario={"tenants": 2, "tenant_placement": "scattered"})),
    ]
    if not quick:
        cases += [
            ("rail-2048-gpt3", tpl("rail-optimized", servers=2048), gpt),
            ("rail-2048-gpt3-tenants8-scattered", tpl("rail-optimized", servers=2048),
             dict(gpt, scenario={"tenants": 8, "tenant_placement": "scattered"})),
        ]
    return cases


def flatten(value, path: str = "", out: dict | None = None) -> dict:
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            flatten(v, f"{path}[{i}]", out)
    else:
        out[path] = value
    return out


def dump(out_path: str, quick: bool = False) -> None:
    from designer.engine.pipeline import run
    from designer.topology.catalog import load_catalog

    cat = load_catalog()
    data = {}
    for name, make, kw in _cases(quick):
        design = make()
        kw = dict(kw)
        t0 = time.perf_counter()
        try:
            res = run(design, cat, **kw).to_json()
        except Exception as exc:  # a case the engine refuses is a result too
            res = {"error": f"{type(exc).__name__}: {exc}"}
        print(f"{name:40s} {time.perf_counter() - t0:6.2f} s", flush=True)
        data[name] = flatten(res)
    Path(out_path).write_text(json.dumps(data))
    print(f"wrote {out_path}: {len(data)} cases, {sum(map(len, data.values()))} fields")


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def compare(a_path: str, b_path: str) -> int:
    a, b = json.loads(Path(a_path).read_text()), json.loads(Path(b_path).read_text())
    worst, where, other, checked = 0.0, "", [], 0
    for case in sorted(set(a) | set(b)):
        if case not in a or case not in b:
            other.append(f"{case}: only in {'first' if case in a else 'second'}")
            continue
        fa, fb = a[case], b[case]
        for key in sorted(set(fa) | set(fb)):
            if key not in fa or key not in fb:
                other.append(f"{case} {key}: only in {'first' if key in fa else 'second'}")
                continue
            x, y = fa[key], fb[key]
            if _number(x) and _number(y):
                checked += 1
                if x == y or (math.isnan(x) and math.isnan(y)):
                    continue
                rel = abs(x - y) / max(abs(x), abs(y), 1e-300)
                if rel > worst:
                    worst, where = rel, f"{case} {key}: {x!r} vs {y!r}"
            elif x != y:
                other.append(f"{case} {key}: {x!r} vs {y!r}")
    print(f"{len(a)} cases, {checked} numeric fields compared; largest relative difference "
          f"{worst:.3g}" + (f" ({where})" if where else ""))
    print(f"{len(other)} non-numeric or missing fields differ")
    for line in other[:20]:
        print("  " + line[:300])
    return 0 if worst <= TOLERANCE and not other else 1


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "dump":
        dump(argv[1], "--quick" in argv)
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(argv[1], argv[2])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
