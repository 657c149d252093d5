"""The workload and scenario panel: which model is trained and under what conditions.

``design.workload`` names a catalog workload, either as ``{"preset": id, ...changed figures}`` (what
``dpu-designer new`` writes and what choosing a model here writes: see
:func:`designer.commands.new.fitted_workload`) or as the entry's figures with ``id`` (older files);
the scenario settings are those of ``designer.topology.design.SCENARIO_DEFAULTS``. Every change is
an undo step.
"""

from __future__ import annotations

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox,
                               QSpinBox, QVBoxLayout, QWidget)

from designer.gui.widgets import narrow_combo

from designer.errors import UsageError
from designer.gui.editor import Editor
from designer.topology.design import SCENARIO_CHOICES, SCENARIO_DEFAULTS, SCENARIO_SPEC

#: workload figures that can be changed per design: (field, label, min, max)
WORKLOAD_FIELDS = (
    ("global_batch", "Global batch", 1, 1 << 24),
    ("micro_batch", "Micro-batch", 1, 4096),
    ("tp", "Tensor parallel", 1, 512),
    ("pp", "Pipeline parallel", 1, 512),
)
SCENARIO_LABELS = {
    "offload": ("Infrastructure work on", {"host": "host CPU", "dpu": "DPU (offloaded)"}),
    "routing": ("Routing", {"ecmp": "ECMP (flow hash)", "adaptive": "adaptive (spread evenly)"}),
    "tenant_placement": ("Jobs placed", {"packed": "packed (own leaves)",
                                         "scattered": "scattered (fragmented)"}),
    "storage_transport": ("Storage transport", {"rdma": "NVMe-oF over RDMA", "tcp": "NVMe/TCP"}),
}

#: tooltips of the scenario rows whose labels are short
ROW_TIPS = {
    "offload": "Where the network, storage and security work of the servers runs: on the host "
               "CPUs, or offloaded to the DPUs",
    "encryption": "Encrypt all traffic in flight (IPsec/TLS)",
    "tenants": "Number of training jobs that share the network fabric: the servers are split "
               "into this many equal jobs, each running the workload",
    "tenant_placement": "Which servers each job gets: consecutive ones (packed) or every "
                        "tenants-th one (scattered, as a fragmented scheduler leaves them)",
    "storage_transport": "Transport of the NVMe-oF storage reads and checkpoint writes",
    "gds": "Storage reads go straight into GPU memory (GPUDirect Storage) instead of through "
           "a bounce buffer in host memory",
}


def workload_id(workload: dict) -> str | None:
    """The catalog workload a design's workload setting names."""
    return workload.get("preset") or workload.get("id")


def workload_entry(design, catalog) -> dict:
    """The catalog entry of the design's workload ({} if it names none or an unknown one)."""
    wid = workload_id(design.workload)
    try:
        return catalog.workload(wid) if wid else {}
    except KeyError:
        return {}


class ScenarioPanel(QWidget):
    def __init__(self, editor: Editor, parent=None) -> None:
        super().__init__(parent)
        self.editor = editor
        self._updating = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        wl = QGroupBox("Workload")
        wform = QFormLayout(wl)
        self.workload = narrow_combo(QComboBox())
        for entry in editor.catalog.workloads():
            self.workload.addItem(entry.get("name", entry["id"]), entry["id"])
        self.workload.activated.connect(self._set_workload)
        wform.addRow("Model", self.workload)
        self.wfields: dict[str, QSpinBox] = {}
        for name, label, lo, hi in WORKLOAD_FIELDS:
            spin = QSpinBox()
            spin.setRange(lo, hi)
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(lambda v, n=name: self._set_workload_field(n, v))
            wform.addRow(label, spin)
            self.wfields[name] = spin
        layout.addWidget(wl)
        sc = QGroupBox("Scenario")
        sform = QFormLayout(sc)
        self.choices: dict[str, QComboBox] = {}
        for key, values in SCENARIO_CHOICES.items():
            box = narrow_combo(QComboBox())
            names = SCENARIO_LABELS.get(key, (key, {}))[1]
            for v in values:
                box.addItem(names.get(v, v), v)
            box.activated.connect(lambda i, k=key, b=box: self._set_scenario(k, b.itemData(i)))
            self.choices[key] = box
        self.encryption = QCheckBox("in flight")
        self.encryption.clicked.connect(lambda c: self._set_scenario("encryption", bool(c)))
        self.gds = QCheckBox("GPUDirect Storage")
        self.gds.clicked.connect(lambda c: self._set_scenario("gpudirect_storage", bool(c)))
        self.tenants = self._spin(QSpinBox(), "tenants")
        self.checkpoint = self._spin(QDoubleSpinBox(suffix=" s", decimals=0), "checkpoint_interval_s")
        self.seed = self._spin(QSpinBox(), "seed")
        rows = [("offload", None), ("routing", None), ("Encryption", self.encryption),
                ("storage_transport", None), ("Storage reads", self.gds),
                ("Jobs on the fabric", self.tenants), ("tenant_placement", None),
                ("Checkpoint every", self.checkpoint), ("Random seed", self.seed)]
        rows += [(key, None) for key in self.choices if key not in dict(rows)]
        for label, widget in rows:
            if widget is None:
                widget, label = self.choices[label], SCENARIO_LABELS.get(label, (label, {}))[0]
            sform.addRow(label, widget)
        for field, tip in ROW_TIPS.items():
            sform.labelForField(self.choices.get(field) or getattr(self, field)).setToolTip(tip)
        layout.addWidget(sc)
        layout.addStretch(1)
        self.refresh()

    def _spin(self, spin, key: str):
        """A spin box editing the scenario setting ``key`` in the range of its spec (0 shown as
        what it means, "no checkpoints")."""
        spec = SCENARIO_SPEC[key]
        spin.setRange(spec.minimum, spec.maximum)
        if spec.zero:
            spin.setSpecialValueText(spec.zero)  # shown at the minimum, which is 0
        spin.setKeyboardTracking(False)
        spin.setToolTip(spec.meaning[0].upper() + spec.meaning[1:]
                        + (f"; 0: {spec.zero}" if spec.zero else ""))
        spin.valueChanged.connect(lambda v: self._set_scenario(key, spec.type(v)))
        return spin

    def refresh(self) -> None:
        self._updating = True
        try:
            design = self.editor.design
            wid = workload_id(design.workload)
            idx = self.workload.findData(wid)
            if idx < 0 and wid:
                self.workload.addItem(f"{wid} (not in the catalog)", wid)
                idx = self.workload.count() - 1
            self.workload.setCurrentIndex(idx)
            entry = workload_entry(design, self.editor.catalog)
            for name, spin in self.wfields.items():
                value = design.workload.get(name, entry.get(name))
                spin.setEnabled(value is not None)
                if value is not None:
                    spin.setValue(int(value))
                font = spin.font()
                font.setBold(value != entry.get(name))
                spin.setFont(font)
            sc = design.scenario
            for key, box in self.choices.items():
                box.setCurrentIndex(max(0, box.findData(sc.get(key))))
            self.encryption.setChecked(bool(sc.get("encryption")))
            self.gds.setChecked(bool(sc.get("gpudirect_storage")))
            for key, spin in (("tenants", self.tenants), ("checkpoint_interval_s", self.checkpoint),
                              ("seed", self.seed)):
                spin.setValue(SCENARIO_SPEC[key].type(sc.get(key, SCENARIO_DEFAULTS[key])))
        finally:
            self._updating = False

    def _set_workload(self, index: int) -> None:
        if self._updating:
            return
        from designer.commands.new import fitted_workload

        try:
            workload = fitted_workload(self.workload.itemData(index), self.editor.design,
                                       self.editor.catalog)
        except UsageError as exc:
            self.editor.refused.emit(str(exc).replace("--workload: ", "workload: "))
            self.refresh()
            return
        self.editor.set_design("workload", workload, "workload")

    def _set_workload_field(self, name: str, value: int) -> None:
        if self._updating:
            return
        workload = {**self.editor.design.workload, name: value}
        self.editor.set_design("workload", workload, f"workload {name}")

    def _set_scenario(self, key: str, value) -> None:
        if not self._updating:
            self.editor.set_design("scenario", {**self.editor.design.scenario, key: value}, key)
