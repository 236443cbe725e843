"""Settings: every optimisation switch and sampling knob, persisted through :class:`app.settings.Settings`.

Each control writes its key as soon as it changes; the next request reads the settings again, so changes apply
without a restart (provider, threads and precision reload the model). Controls the loaded variant lacks are
disabled with a tooltip that says why.
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.model_parts import Capabilities
from core.options import PRECISIONS, PROVIDERS, Q4_COMPUTE, upstream_defaults

from ..settings import Key, Settings

Q4_TIP = (
    "How a 4-bit (q4) language model computes on the CPU. int8: activations quantised to int8, integer dot products "
    "(faster, especially with CFG; logits differ by a few hundredths). fp32: weights expanded to float32 as exported. "
    "Changing it reloads the model."
)


class SettingsPanel(QWidget):
    changed = Signal(object)  # the Key that changed

    def __init__(self, settings: Settings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.capabilities: Capabilities | None = None
        self.controls: dict[Key, QWidget] = {}
        self._build_ui()
        self.load()
        self._connect_signals()

    def _build_ui(self) -> None:
        c = self.controls
        c[Key.PROVIDER] = _combo(PROVIDERS)
        c[Key.THREADS] = _spin(0, 64, "auto")
        c[Key.PRECISION] = _combo(PRECISIONS)
        c[Key.Q4_COMPUTE] = _combo(Q4_COMPUTE)
        c[Key.Q4_COMPUTE].setToolTip(Q4_TIP)
        c[Key.KV_CHAINING] = QCheckBox("KV chaining (IOBinding, no copies)")
        c[Key.CONDITIONING_CACHE] = QCheckBox("Conditioning cache")
        c[Key.PREFIX_CACHE] = QCheckBox("Voice-prefix KV cache")
        c[Key.STREAM] = QCheckBox("Stream (play while generating)")
        c[Key.FIRST_CHUNK_TOKENS] = _spin(1, 200)
        c[Key.CHUNK_TOKENS] = _spin(1, 400)
        c[Key.DECODER_PROMPT] = _spin(3, 10)
        c[Key.DECODER_PROMPT].setSuffix(" s")
        c[Key.DECODER_PROMPT].setToolTip(
            "Seconds of your recording the decoder hears on every call (10 s as upstream). The decoder pays for it "
            "on every call: 6 or 3 s make speech start sooner and render faster, with a little less of the voice's "
            "detail."
        )
        c[Key.TEMPERATURE] = _dspin(0.05, 5.0, 0.05)
        c[Key.TOP_P] = _dspin(0.05, 1.0, 0.01)
        c[Key.TOP_K] = _spin(0, 8194, "off")
        c[Key.MIN_P] = _dspin(0.0, 1.0, 0.01)
        c[Key.REPETITION_PENALTY] = _dspin(0.5, 5.0, 0.05)
        c[Key.CFG_WEIGHT] = _dspin(0.0, 3.0, 0.05)
        c[Key.EXAGGERATION] = _dspin(0.0, 2.0, 0.05)
        c[Key.RANDOM_SEED] = QCheckBox("Random seed each time")
        c[Key.SEED] = _spin(0, 2**31 - 1)
        c[Key.LANGUAGE] = _combo(("en",))
        self.reset_sampling = QPushButton("Model defaults")
        self.reset_sampling.setToolTip("Use the upstream sampling defaults of the loaded model")

        engine = QGroupBox("Engine")
        form = QFormLayout(engine)
        form.addRow("Provider", c[Key.PROVIDER])
        form.addRow("Threads", c[Key.THREADS])
        form.addRow("Precision", c[Key.PRECISION])
        form.addRow("4-bit compute", c[Key.Q4_COMPUTE])
        for key in (Key.KV_CHAINING, Key.CONDITIONING_CACHE, Key.PREFIX_CACHE, Key.STREAM):
            form.addRow(c[key])
        form.addRow("First chunk (tokens)", c[Key.FIRST_CHUNK_TOKENS])
        form.addRow("Chunk (tokens)", c[Key.CHUNK_TOKENS])
        form.addRow("Decoder voice prompt", c[Key.DECODER_PROMPT])
        sampling = QGroupBox("Voice and sampling")
        form = QFormLayout(sampling)
        form.addRow("Language", c[Key.LANGUAGE])
        form.addRow("Temperature", c[Key.TEMPERATURE])
        form.addRow("Top-p", c[Key.TOP_P])
        form.addRow("Top-k", c[Key.TOP_K])
        form.addRow("Min-p", c[Key.MIN_P])
        form.addRow("Repetition penalty", c[Key.REPETITION_PENALTY])
        form.addRow("CFG weight", c[Key.CFG_WEIGHT])
        form.addRow("Exaggeration", c[Key.EXAGGERATION])
        form.addRow(c[Key.RANDOM_SEED])
        form.addRow("Seed", c[Key.SEED])
        form.addRow(self.reset_sampling)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(engine)
        layout.addWidget(sampling)
        layout.addStretch(1)

    def _connect_signals(self) -> None:
        for key, control in self.controls.items():
            if isinstance(control, QCheckBox):
                control.toggled.connect(lambda _v, k=key: self._on_control_changed(k))
            elif isinstance(control, QComboBox):
                control.currentTextChanged.connect(lambda _v, k=key: self._on_control_changed(k))
            else:
                control.valueChanged.connect(lambda _v, k=key: self._on_control_changed(k))
        self.reset_sampling.clicked.connect(self._on_reset_clicked)

    def value(self, key: Key):
        control = self.controls[key]
        if isinstance(control, QCheckBox):
            return control.isChecked()
        if isinstance(control, QComboBox):
            return control.currentText()
        return control.value()

    def _set(self, key: Key, value) -> None:
        control = self.controls[key]
        control.blockSignals(True)
        if isinstance(control, QCheckBox):
            control.setChecked(bool(value))
        elif isinstance(control, QComboBox):
            if control.findText(str(value)) < 0:
                control.addItem(str(value))
            control.setCurrentText(str(value))
        elif isinstance(control, QSpinBox):
            control.setValue(int(value))
        else:
            control.setValue(float(value))
        control.blockSignals(False)

    @property
    def variant(self) -> str | None:
        return self.capabilities.variant if self.capabilities else None

    def load(self) -> None:
        """Show the stored settings; unset sampling keys show the loaded variant's defaults."""
        defaults = upstream_defaults(self.variant or "turbo")
        for key in self.controls:
            value = self.settings.get(key)
            if value is None:
                value = getattr(defaults, key.value.split("/")[1])
                value = 0 if value is None else value
            if key == Key.PRECISION and self.capabilities and value not in self.capabilities.precisions_present:
                value = self.capabilities.lm_precision  # the model lacks the stored choice: show what is used
            self._set(key, value)
        self.controls[Key.SEED].setEnabled(not self.value(Key.RANDOM_SEED))

    def set_capabilities(self, caps: Capabilities) -> None:
        """Offer what the loaded model has: its languages and precisions; disable what it cannot do."""
        self.capabilities = caps
        for key, items in ((Key.LANGUAGE, caps.languages or ("en",)), (Key.PRECISION, caps.precisions_present)):
            combo: QComboBox = self.controls[key]
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(list(items))
            combo.blockSignals(False)
        self.load()
        wanted = self.settings.get(Key.PRECISION)
        self.controls[Key.PRECISION].setToolTip(
            f"This model has no {wanted} language model; it runs {caps.lm_precision}."
            if wanted not in caps.precisions_present
            else f"Language model in {caps.lm_precision}; other graphs: "
            + ", ".join(sorted({p for g, p in caps.precisions.items() if g != "language_model"}))
        )
        cfg_why = "Turbo has no classifier-free guidance." if caps.variant == "turbo" else (
            "This model's text table was not found, so classifier-free guidance is unavailable.")  # fmt: skip
        for key, ok, why in (
            (Key.LANGUAGE, caps.variant == "multilingual", "Only the Multilingual model speaks other languages."),
            (Key.CFG_WEIGHT, caps.supports_cfg, cfg_why),
            (Key.EXAGGERATION, caps.supports_exaggeration, "Turbo has no exaggeration control."),
            (Key.MIN_P, True, ""),
            (Key.Q4_COMPUTE, caps.q4_compute is not None, "The language model in use has no 4-bit weights."),
        ):
            self.controls[key].setEnabled(ok)
            self.controls[key].setToolTip((Q4_TIP if key == Key.Q4_COMPUTE else "") if ok else why)

    @Slot()
    def _on_control_changed(self, key: Key) -> None:
        self.settings.set(key, self.value(key))
        if key == Key.RANDOM_SEED:
            self.controls[Key.SEED].setEnabled(not self.value(Key.RANDOM_SEED))
        self.changed.emit(key)

    @Slot()
    def _on_reset_clicked(self) -> None:
        self.settings.reset_sampling()
        self.load()
        self.changed.emit(Key.TEMPERATURE)


def _combo(items) -> QComboBox:
    combo = QComboBox()
    combo.addItems(list(items))
    return combo


def _spin(low: int, high: int, special: str | None = None) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    if special:
        spin.setSpecialValueText(special)
    return spin


def _dspin(low: float, high: float, step: float) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setDecimals(2)
    return spin
