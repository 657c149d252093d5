"""The workload a catalog preset gets on a design, and its layout refitted when the batch changes.

Called by ``dpu-designer new --workload`` and by the window (its new design, its workload chooser).
The arithmetic (which layout divides the published batch) is :mod:`designer.engine.fit`, where
the engine's sweeps also reach it.
"""

from __future__ import annotations

from typing import Any

from designer.engine import fit

#: the workload of a design made without a template (the GUI's new design); ``new`` fits the one
#: its template suggests (``templates.suggested_workload``)
DEFAULT_WORKLOAD = "llama3-8b"


def fitted_workload(preset: str, design: Any, catalog: Any) -> dict[str, Any]:
    """:func:`designer.engine.fit.fitted_workload`, its messages naming ``--workload``."""
    return fit.fitted_workload(preset, design, catalog, where="--workload")


def suggested_workload(design: Any, catalog: Any) -> dict[str, Any]:
    """The fitted workload of the preset the design's template suggests
    (``templates.suggested_workload``; the default one for a design made without a template)."""
    from designer.topology.templates import suggested_workload as preset_of

    return fitted_workload(preset_of(design), design, catalog)


refit_for_batch = fit.refit_for_batch
