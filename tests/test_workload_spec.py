"""The file format's description of the workload settings (topology.workload_spec) is the
engine's Workload, field by field, and the topology layer loads without importing the engine."""

import subprocess
import sys
import typing
from dataclasses import fields

from designer.engine.workload import PRECISION_BYTES, Workload
from designer.topology import fileformat
from designer.topology.workload_spec import PRECISIONS, WORKLOAD_FIELD_TYPES


def test_every_workload_field_with_its_type():
    assert WORKLOAD_FIELD_TYPES == {f.name: str(f.type) for f in fields(Workload)}
    assert set(WORKLOAD_FIELD_TYPES.values()) <= {"str", "int", "bool", "float"}


def test_the_precisions_are_the_engines():
    assert set(PRECISIONS) == set(PRECISION_BYTES)


def test_the_file_format_checks_them():
    assert fileformat.workload_problem("tp", -1) == "must be at least 0"
    assert fileformat.workload_problem("recompute", 1) == "must be true or false"
    assert fileformat.workload_problem("precision", "fp4").startswith("must be one of bf16")
    assert fileformat.workload_problem("published_tflops", "x") is None  # other keys pass


def test_loading_a_design_imports_no_engine_module():
    code = ("import sys\nfrom designer.topology import fileformat, validation\n"
            "print(sorted(m for m in sys.modules if m.startswith('designer.engine')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
