"""The workload and scenario panel: which model is trained and under what conditions.

``design.workload`` names a catalog workload, either as ``{"preset": id, ...changed figures}`` (what
``dpu-designer new`` writes and what choosing a model here writes: see
:func:`designer.services.workloads.fitted_workload`) or as the entry's figures with ``id`` (older files);
the scenario settings are those of ``designer.topology.design.SCENARIO_DEFAULTS``. Every change is
an undo step.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QFrame,
                               QGroupBox, QScrollArea, QSpinBox, QVBoxLayout, QWidget)

from designer.gui.widgets import narrow_combo

from designer.errors import UsageError
from designer.gui.editor import Editor
from designer.topology.design import SCENARIO_SPEC

#: workload figures that can be changed per design: (field, label, min, max)
WORKLOAD_FIELDS = (
    ("global_batch", "Global batch", 1, 1 << 24),
    ("micro_batch", "Micro-batch", 1, 4096),
    ("tp", "Tensor parallel", 1, 512),
    ("pp", "Pipeline parallel", 1, 512),
)
SCENARIO_LABELS = {
    "offload": ("Infrastructure work on", {"host": "host CPU", "smartnic": "SmartNIC offloads",
                                           "dpu": "DPU (offloaded)"}),
    "isolation": ("Tenant isolation", {"auto": "auto", "none": "none", "sriov": "SR-IOV",
                                       "overlay": "overlay (VXLAN/OVS)", "bare-metal": "bare metal"}),
    "routing": ("Routing", {"ecmp": "ECMP (flow hash)", "adaptive": "adaptive (spread evenly)"}),
    "tenant_placement": ("Jobs placed", {"packed": "packed (own leaves)",
                                         "scattered": "scattered (fragmented)"}),
    "storage_transport": ("Storage transport", {"rdma": "NVMe-oF over RDMA", "tcp": "NVMe/TCP"}),
}

#: the first rows, in this order; every other setting follows in the spec's order
ROW_ORDER = ("offload", "routing", "encryption", "storage_transport", "gpudirect_storage",
             "tenants", "tenant_placement", "checkpoint_interval_s", "seed")
#: row labels of settings whose names say too little
ROW_LABELS = {"encryption": "Encryption", "gpudirect_storage": "Storage reads",
              "tenants": "Jobs on the fabric", "checkpoint_interval_s": "Checkpoint every",
              "seed": "Random seed", "tenant_qos": "Storage QoS per job",
              "nccl_proxy": "NCCL proxy threads", "parallel_fs_client": "Parallel FS client",
              "checkpoint_via_host": "Checkpoints via host", "object_store_tls": "Object store (TLS)",
              "k8s_agents": "Kubernetes agents", "irq_handling": "NIC interrupts",
              "kernel_copy_membw": "Kernel copies' memory BW", "storage_io_kib": "Storage IO size",
              "packet_bytes": "Packet size"}
#: the text beside a check box (else "on")
CHECK_TEXT = {"encryption": "in flight", "gpudirect_storage": "GPUDirect Storage"}
#: words of setting names shown otherwise in a label made from the name
WORD_LABELS = {"nccl": "NCCL", "fs": "FS", "tls": "TLS", "k8s": "Kubernetes", "irq": "IRQ",
               "qos": "QoS", "cpu": "CPU", "dpu": "DPU", "nic": "NIC", "gpu": "GPU", "io": "IO"}
#: most characters of the text a spin box shows at 0 ("no checkpoints"): a longer one sets the
#: box's least width and, with it, the whole panel's (the panel then scrolls sideways)
ZERO_CHARS = 18


def short_zero(text: str) -> str:
    """What a spin box shows at 0: ``text`` when short, else its words up to :data:`ZERO_CHARS`
    characters, cut before a word such as "in" that would end the phrase ("bulk flows in 64 KiB
    TSO/GRO aggregates" -> "bulk flows"); the tooltip keeps the whole meaning."""
    if len(text) <= ZERO_CHARS:
        return text
    out = ""
    for word in text.split():
        if len(out) + len(word) + 1 > ZERO_CHARS:
            break
        out = f"{out} {word}".strip()
    words = out.split()
    while len(words) > 1 and words[-1] in ("in", "of", "at", "for", "to", "the", "a", "and", "with"):
        words.pop()
    return " ".join(words) or text[:ZERO_CHARS]


#: a name's last word that is its unit (dropped from the label, shown as the spin box suffix)
UNIT_SUFFIX = {"_s": "s", "_Gbps": "Gb/s", "_GBps": "GB/s", "_pct": "%", "_ms": "ms", "_us": "us",
               "_kib": "KiB", "_bytes": "bytes"}
UNIT_WORDS = {u[1:] for u in UNIT_SUFFIX}
#: float settings edited in whole units
WHOLE = {"checkpoint_interval_s"}

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


def _label(key: str) -> str:
    """A row label made from a setting's name (``nccl_proxy`` -> "NCCL proxy")."""
    words = [WORD_LABELS.get(w, w) for w in key.split("_")]
    if words and words[-1] in UNIT_WORDS:
        words.pop()
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


class ScenarioPanel(QWidget):
    """The workload and every scenario setting of ``SCENARIO_SPEC`` (or of ``spec``), each with
    an editor derived from its spec (:meth:`_editor`)."""

    def __init__(self, editor: Editor, parent=None, spec=None) -> None:
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
        sc = QGroupBox("Scenario")
        sform = QFormLayout(sc)
        self.spec = dict(SCENARIO_SPEC if spec is None else spec)
        #: one editor per scenario setting, derived from its spec (a new setting gets one too)
        self.editors: dict[str, QWidget] = {}
        self.choices: dict[str, QComboBox] = {}
        keys = [k for k in ROW_ORDER if k in self.spec]
        keys += [k for k in self.spec if k not in keys and self.spec[k].type is not dict]
        for key in keys:
            label, editor = self._editor(key, self.spec[key])
            self.editors[key] = editor
            sform.addRow(label, editor)
            sform.labelForField(editor).setToolTip(ROW_TIPS.get(key) or _sentence(self.spec[key].meaning))
        self.encryption = self.editors.get("encryption")
        self.gds = self.editors.get("gpudirect_storage")
        self.tenants = self.editors.get("tenants")
        self.checkpoint = self.editors.get("checkpoint_interval_s")
        self.seed = self.editors.get("seed")
        scroll = QScrollArea()  # many settings: the panel scrolls rather than squeezing the rows
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        inner = QWidget()
        inner_layout = QVBoxLayout(inner)
        inner_layout.setContentsMargins(0, 0, 0, 0)
        inner_layout.addWidget(wl)
        inner_layout.addWidget(sc)
        inner_layout.addStretch(1)
        scroll.setWidget(inner)
        self._inner = inner
        layout.addWidget(scroll)
        self.refresh()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """Room for every row (the scroll area alone would ask for little)."""
        hint = super().sizeHint()
        return QSize(hint.width(), self._inner.sizeHint().height() + 14)

    def _editor(self, key: str, spec) -> tuple[str, QWidget]:
        """The row label and editor of one scenario setting: a list for a choice, a check box for
        a yes/no setting, a spin box in the spec's range for a number."""
        label = ROW_LABELS.get(key) or SCENARIO_LABELS.get(key, ("", {}))[0] or _label(key)
        if spec.type is str:
            box = narrow_combo(QComboBox())
            names = SCENARIO_LABELS.get(key, (key, {}))[1]
            for v in spec.choices:
                box.addItem(names.get(v, v), v)
            box.activated.connect(lambda i, k=key, b=box: self._set_scenario(k, b.itemData(i)))
            self.choices[key] = box
            return label, box
        if spec.type is bool:
            box = QCheckBox(CHECK_TEXT.get(key, ""))
            box.setToolTip(_sentence(spec.meaning))
            box.clicked.connect(lambda c, k=key: self._set_scenario(k, bool(c)))
            return label, box
        suffix = next((f" {u}" for end, u in UNIT_SUFFIX.items() if key.endswith(end)), "")
        if spec.type is int:
            spin = self._spin(QSpinBox(), key)
            spin.setSuffix(suffix)
            return label, spin
        return label, self._spin(QDoubleSpinBox(suffix=suffix, decimals=0 if key in WHOLE else 3), key)

    def _spin(self, spin, key: str):
        """A spin box editing the scenario setting ``key`` in the range of its spec (0 shown as
        what it means, "no checkpoints")."""
        spec = self.spec[key]
        whole = isinstance(spin, QSpinBox)
        lo = spec.minimum if spec.minimum is not None else (0 if whole else -1e12)
        hi = spec.maximum if spec.maximum is not None else (2**31 - 1 if whole else 1e12)
        spin.setRange(int(lo) if whole else float(lo), int(min(hi, 2**31 - 1)) if whole else float(hi))
        if spec.zero:  # shown at the minimum, which is 0; a long meaning in short (whole in the tooltip)
            spin.setSpecialValueText(short_zero(spec.zero))
        spin.setKeyboardTracking(False)
        spin.setToolTip(_sentence(spec.meaning) + (f"; 0: {spec.zero}" if spec.zero else ""))
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
            for key, editor in self.editors.items():
                spec = self.spec[key]
                value = sc.get(key, spec.default)
                if isinstance(editor, QComboBox):
                    editor.setCurrentIndex(max(0, editor.findData(value)))
                elif isinstance(editor, QCheckBox):
                    editor.setChecked(bool(value))
                else:
                    editor.setValue(spec.type(value))
        finally:
            self._updating = False

    def _set_workload(self, index: int) -> None:
        if self._updating:
            return
        from designer.services.workloads import fitted_workload

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
