"""Messages of the engine and the file checks in the window's words.

The engine's checks speak to the command line ("change --global-batch", "lower --tp/--pp"); in the
window the same figures are fields of the "Workload and scenario" panel. :func:`gui_words` swaps
the option names for the field labels (the labels of :mod:`designer.gui.scenario`), so a user is
told which field to change.
"""

from __future__ import annotations

import re

from designer.report.names import planner_words

#: command-line option -> the field of the window that sets the same figure
OPTION_FIELD = {
    "--global-batch": "Global batch",
    "--micro-batch": "Micro-batch",
    "--tp": "Tensor parallel",
    "--pp": "Pipeline parallel",
    "--dp": "the number of GPU servers (data parallel follows it)",
    "--seq": "the model's sequence length",
    "--tokens": "the model's training tokens",
    "--workload": "Model",
    "--seed": "Random seed",
    "--gpus": "the number of GPUs",
}
#: workload keys as the checks quote them ('global_batch') -> field label
KEY_FIELD = {"global_batch": "Global batch", "micro_batch": "Micro-batch", "tp": "Tensor parallel",
             "pp": "Pipeline parallel"}

_OPTION = re.compile(r"--[a-z][a-z-]*(?:/--[a-z][a-z-]*)*")
_SET = re.compile(r"--set scenario\.([a-z_]+)(?:=\S*)?")


def _option(match: re.Match) -> str:
    names = [OPTION_FIELD.get(o) for o in match.group(0).split("/")]
    if any(n is None for n in names):
        return match.group(0)
    return "the " + " / ".join(names) + (" fields" if len(names) > 1 else " field") \
        if all(n[0].isupper() for n in names) else " / ".join(names)


def gui_words(text: str) -> str:
    """``text`` with command-line option names replaced by the window's field names, and engine
    identifiers in words (:func:`designer.report.names.planner_words`)."""
    text = _SET.sub(lambda m: f"the scenario setting {m.group(1).replace('_', ' ')}", text)
    text = _OPTION.sub(_option, text)
    for key, label in KEY_FIELD.items():
        text = text.replace(f"'{key}'", label)
    text = re.sub(r"^(?:--workload|workload): ", "Workload: ", text)
    return planner_words(text)
