"""Layouts whose global batch divides: the layout a catalog workload starts from on a design, and
the data parallelism / micro-batch refitted when the global batch changes.

A layout (tp, cp, pp, dp, micro-batch, interleave v) runs a global batch B only when B is a
multiple of dp x micro-batch (every replica gets whole micro-batches; ``workload.from_dict``), and
an interleaved schedule (v > 1) also wants the m = B / (dp x micro-batch) micro-batches of a
replica to be a multiple of pp (Megatron-LM's interleaved 1F1B; ``engine.plan`` drops others).

Neither function changes B: the published batch is a property of the training recipe (its
convergence), not of the cluster; what adapts is how many replicas share it.

Score of a layout (higher is better), derived: the GPUs it uses times the share of an iteration
that is not pipeline bubble. With m micro-batches per replica, pp stages and v virtual stages per
GPU, the bubble of (interleaved) 1F1B is (pp - 1) / v micro-batch times against m of work
(Narayanan et al., SC'21, eqs. 1 and 2: bubble fraction (p - 1) / (v·m)), so the useful share is
m / (m + (pp - 1) / v), times the stage balance l / (pp·v·ceil(l / (pp·v))) for l layers (the
pipeline runs at the pace of its busiest GPU, ``Workload.stage_layers``). Ties go to a layout keeping the preset's expert parallelism (cp·dp a
multiple of ep), then to the larger micro-batch (the preset's, as published), then to the
pipeline depth nearest the preset's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from designer.errors import UsageError

#: the fields a fitted layout sets in a design's workload
LAYOUT_KEYS = ("tp", "cp", "pp", "dp", "micro_batch")


@dataclass(frozen=True)
class Fit:
    tp: int
    cp: int
    pp: int
    dp: int
    micro_batch: int
    score: float

    @property
    def gpus(self) -> int:
        return self.tp * self.cp * self.pp * self.dp

    def fields(self) -> dict[str, int]:
        return {"tp": self.tp, "cp": self.cp, "pp": self.pp, "dp": self.dp,
                "micro_batch": self.micro_batch}

    def label(self) -> str:
        return (f"tp{self.tp}" + (f" cp{self.cp}" if self.cp > 1 else "")
                + f" pp{self.pp} dp{self.dp} mb{self.micro_batch}")


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _int(entry: dict[str, Any], key: str, default: int = 1) -> int:
    value = entry.get(key)
    if value is None or isinstance(value, bool):
        return default
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"workload: '{key}' must be a whole number, got {value!r}") from None
    return out


def _best(entry: dict[str, Any], gpus: int, pps: list[int], mbs: list[int]) -> Fit | None:
    tp, cp = max(_int(entry, "tp"), 1), max(_int(entry, "cp"), 1)
    v = max(_int(entry, "interleave"), 1)
    ep = max(_int(entry, "ep"), 1)
    pp0 = max(_int(entry, "pp"), 1)
    mb0 = max(_int(entry, "micro_batch"), 1)
    batch = _int(entry, "global_batch", 0)
    if batch < 1:
        raise UsageError(f"workload: 'global_batch' must be at least 1, got {batch}")
    layers = max(_int(entry, "layers", 1), 1)

    def balance(pp: int) -> float:
        # the pipeline runs at the pace of its busiest GPU, v·ceil(l / (pp·v)) layers
        # (Workload.stage_layers): the share of that the average GPU has
        return layers / (pp * v * math.ceil(layers / (pp * v))) if pp * v <= layers else 1.0

    best: tuple | None = None
    for mb in mbs:
        if batch % mb:
            continue
        for pp in pps:
            room = gpus // (tp * cp * pp)
            if room < 1:
                continue
            dps = [d for d in _divisors(batch // mb) if d <= room]
            for dp in dps:
                m = batch // (dp * mb)
                if v > 1 and pp > 1 and m % pp:
                    continue
                used = tp * cp * pp * dp
                score = used * m / (m + (pp - 1) / v) * balance(pp)
                # ties: the preset's expert parallelism kept (its groups split the cp·dp ranks;
                # else from_dict shrinks it, with a warning), its micro-batch and depth
                key = (round(score, 9), (cp * dp) % ep == 0, mb == mb0, mb, -abs(pp - pp0))
                if best is None or key > best[0]:
                    best = (key, Fit(tp, cp, pp, dp, mb, score))
    return best[1] if best else None


def divisible_layout(entry: dict[str, Any], gpus: int) -> Fit:
    """The layout (see the module docstring) a workload ``entry`` (catalog preset plus design
    fields) starts from on ``gpus`` GPUs: tp and cp as given, pp at least the entry's (its weights
    per GPU were published to fit) and at most the layers plus an embedding-only and a loss-only
    chunk per virtual stage, micro-batch a divisor of the entry's, dp any divisor of the batch.
    Raises UsageError when one replica of the published tp x pp x cp needs more GPUs than given."""
    from designer.engine.workload import MAX_LAYERLESS_CHUNKS

    pp0 = max(_int(entry, "pp"), 1)
    v = max(_int(entry, "interleave"), 1)
    layers = _int(entry, "layers", pp0)
    top = max((layers + MAX_LAYERLESS_CHUNKS) // v, pp0) if entry.get("kind", "transformer") != "vision" else 1
    mb0 = max(_int(entry, "micro_batch"), 1)
    mbs = sorted(_divisors(mb0), reverse=True)
    fit = _best(entry, gpus, list(range(pp0, top + 1)), mbs)
    if fit is None:
        # fewer GPUs than one published replica needs (a shallower pipeline would not hold the
        # weights the published depth was chosen for): as from_dict words it
        tp, cp = max(_int(entry, "tp"), 1), max(_int(entry, "cp"), 1)
        raise UsageError(f"workload: tp x pp{' x cp' if cp > 1 else ''} = {tp * pp0 * cp} needs more "
                         f"GPUs than the design has ({gpus}); lower --tp/--pp or add GPU servers")
    return fit


def refit_batch(entry: dict[str, Any], gpus: int) -> Fit | None:
    """dp and micro-batch for the entry's (changed) global batch, tp, cp and pp kept, or None when
    the entry's own dp x micro-batch already divides it (nothing to refit) or nothing does.
    dp: any divisor of the batch that fits the GPUs; micro-batch: a divisor of the entry's."""
    dp = _int(entry, "dp", 0)
    mb0 = max(_int(entry, "micro_batch"), 1)
    batch = _int(entry, "global_batch", 0)
    tp, cp, pp = (max(_int(entry, k), 1) for k in ("tp", "cp", "pp"))
    if dp < 1:  # fill the design, as from_dict does
        cap = _int(entry, "gpus", 0)
        pool = cap if 0 < cap <= gpus else gpus
        dp = max(pool // (tp * cp * pp), 1)
    if batch >= 1 and batch % (dp * mb0) == 0:
        return None
    mbs = sorted(_divisors(mb0), reverse=True)
    # an interleaved schedule that no divisor keeps whole runs as the engine allows (from_dict
    # does not require m to be a multiple of pp; only the planner's search does)
    return _best(entry, gpus, [pp], mbs) or _best({**entry, "interleave": 1}, gpus, [pp], mbs)


def design_gpus(design: Any, catalog: Any) -> tuple[int, dict[str, Any] | None]:
    """The design's GPU count and the catalog entry of its first server's GPU (None: no server or
    an unknown GPU model)."""
    from designer.topology.validation import Resolver

    resolve = Resolver(catalog)  # once per server model and overrides, not per server
    gpus, gpu = 0, None
    for server in design.topology.servers():
        fields = resolve(server)
        gpus += int(fields["gpu_count"])
        if gpu is None and fields.get("gpu_model"):
            try:
                gpu = catalog.get("gpu", fields["gpu_model"])
            except KeyError:
                gpu = None
    return gpus, gpu


def fitted_workload(preset: str, design: Any, catalog: Any, where: str = "workload") -> dict[str, Any]:
    """The design's workload setting for a catalog preset: the preset's published global batch kept,
    and a layout that divides it on the design's GPUs (:func:`divisible_layout`), so that ``plan``
    and ``sweep`` start from a layout that runs: ``dp`` 0 (fill the design) when the preset's own
    layout filling it divides the batch, else ``dp`` and whichever of ``pp`` and ``micro_batch``
    differ from the preset's (``gpus`` 0 either way). Raises UsageError (``{where}: ...``) for an unknown preset or
    one the design cannot run (checked by ``engine.workload.from_dict`` with the design's GPU, so
    a vision preset takes its ``samples_per_s_<gpu model>`` figure as a run does)."""
    from designer.engine.workload import from_dict

    try:
        entry = catalog.workload(preset)
    except KeyError as exc:
        raise UsageError(f"{where}: {exc.args[0]}") from None
    gpus, gpu = design_gpus(design, catalog)
    if gpus < 1:
        raise UsageError(f"{where}: the design has no GPUs; add GPU servers first")
    if not entry.get("global_batch"):
        # no published batch to keep (the MLPerf Storage vision entries): every GPU a replica,
        # one micro-batch each, also after the design grows (dp 0 fills it)
        from designer.engine.workload import whole_batch

        plain: dict[str, Any] = {"preset": preset, "dp": 0, "gpus": 0,
                                 "global_batch": whole_batch({**entry, "gpus": 0}, gpus)}
        from_dict({**entry, **plain}, gpus, where=where, gpu=gpu)
        return plain
    try:
        fit = divisible_layout(entry, gpus)
    except UsageError as exc:
        raise UsageError(f"{where}: {str(exc).removeprefix('workload: ')}") from None
    batch = _int(entry, "global_batch")
    tp, cp, pp = (max(_int(entry, k), 1) for k in ("tp", "cp", "pp"))
    mb = max(_int(entry, "micro_batch"), 1)
    out: dict[str, Any] = {"preset": preset}
    if (fit.pp, fit.micro_batch) == (pp, mb) and fit.dp == gpus // (tp * cp * pp):
        # the preset's own layout filling the design divides the batch: saved as "fill" (dp 0),
        # as before layouts were fitted, so that another preset set over it brings its own
        out["dp"] = 0
    else:  # only what differs from the preset (tp and cp never do)
        out.update({k: v for k, v in (("pp", fit.pp), ("micro_batch", fit.micro_batch))
                    if v != {"pp": pp, "micro_batch": mb}[k]})
        out["dp"] = fit.dp
    out.update({"gpus": 0, "global_batch": batch})
    from_dict({**entry, **out}, gpus, where=where, gpu=gpu)
    return out


def layout_of(workload: dict[str, Any], catalog: Any, gpus: int) -> Fit:
    """The layout a workload setting resolves to on ``gpus`` GPUs (its preset's fields under its
    own; dp 0 fills the GPUs), as a :class:`Fit` (score 0)."""
    from types import SimpleNamespace

    from designer.engine.pipeline import workload_data

    data = workload_data(SimpleNamespace(workload=workload), catalog)
    tp, cp, pp = (max(_int(data, k), 1) for k in ("tp", "cp", "pp"))
    dp = _int(data, "dp", 0)
    if dp < 1:
        cap = _int(data, "gpus", 0)
        dp = max((cap if 0 < cap <= gpus else gpus) // (tp * cp * pp), 1)
    return Fit(tp, cp, pp, dp, max(_int(data, "micro_batch"), 1), 0.0)


def is_fitted(workload: dict[str, Any], design: Any, catalog: Any) -> bool:
    """``workload`` is what :func:`fitted_workload` gives its preset on ``design`` (a layout nobody
    chose by hand, so it may be fitted again when the design changes size)."""
    preset = workload.get("preset")
    if not preset:
        return False
    try:
        fitted = fitted_workload(str(preset), design, catalog)
    except UsageError:
        return False
    keys = {*fitted, *workload} - {"preset"}
    return all(workload.get(k) == fitted.get(k) for k in keys if k in (*LAYOUT_KEYS, "gpus", "global_batch"))


def refit_for_batch(workload: dict[str, Any], design: Any, catalog: Any,
                    gpus: int | None = None) -> str | None:
    """When the workload's global batch does not split into dp x micro-batch, set dp and
    micro-batch (tp, cp, pp kept; :func:`refit_batch`) in place and return the line that says so;
    None when nothing changed (the layout divides, or no layout does: the engine's own message
    then names the problem). ``gpus``: the design's GPU count if known (else counted)."""
    from types import SimpleNamespace

    from designer.engine.pipeline import workload_data

    data = workload_data(SimpleNamespace(workload=workload), catalog)
    if gpus is None:
        gpus, _ = design_gpus(design, catalog)
    try:
        fit = refit_batch(data, gpus)
    except UsageError:
        return None
    if fit is None:
        return None
    old = f"{data.get('dp') or 'fill'} x {data.get('micro_batch', 1)}"
    workload.update({"dp": fit.dp, "micro_batch": fit.micro_batch, "gpus": 0})
    return (f"global batch {data.get('global_batch')} does not split into dp x micro-batch = "
            f"{old}: refitted to dp {fit.dp}, micro-batch {fit.micro_batch} ({fit.label()}, "
            f"{fit.gpus} of {gpus} GPUs)")
