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

from core.engine import (
    AUTO_SMOOTH_RTF,
    DECODER_PRECISIONS,
    PRECISIONS,
    PROVIDERS,
    Q4_COMPUTE,
    STREAM_PLANS,
    TAKE_TURNS,
    Capabilities,
    language_label,
    upstream_defaults,
)

from ..settings import Key, Settings

Q4_TIP = (
    "How a 4-bit (q4) language model computes on the CPU. int8: activations quantised to int8, integer dot products "
    "(faster, especially with CFG; logits differ by a few hundredths). fp32: weights expanded to float32 as exported. "
    "Changing it reloads the model."
)
TIPS = {
    Key.PROVIDER: "Where the model runs. auto: the NVIDIA GPU (CUDA) when it loads, else the CPU; cuda: ask for the "
    "GPU and say why when it cannot be used; cpu: never try the GPU. Changing it reloads the model.",
    Key.THREADS: "CPU threads per model part. auto: one per physical core (fastest here). Fewer leave cores to other "
    "programs and make speech slower; more than the cores only adds contention. Changing it reloads the model.",
    Key.PRECISION: "Number format of the language model's weights. fp32: as exported, largest and slowest; fp16, q8, "
    "q4 (4-bit): smaller files and memory, usually faster steps, with slightly different speech. A precision the "
    "model lacks falls back to fp32. Changing it reloads the model.",
    Key.Q4_COMPUTE: Q4_TIP,
    Key.KV_CHAINING: "Keeps the language model's attention cache where it is between steps instead of copying it "
    "(IOBinding). A large gain on a GPU (no copy to the CPU and back every step), about even on the CPU. Costs "
    "nothing; leave it on.",
    Key.SHAPE_FOLDING: "Replaces the sizes the language model works out again at every step (thousands of tiny "
    "operations) with the constants they always are, checked against the model as exported when the model first "
    "loads (a few seconds, once). Fewer operations per step, the same numbers. Changing it reloads the model.",
    Key.FUSED_ATTENTION: "Runs each layer's attention as one onnxruntime operator that appends to the language "
    "model's cache and attends in one pass, instead of copying the whole cache and reading it five times every "
    "step; checked against the model as exported when the model first loads. The longer the text, the more it "
    "saves. Changing it reloads the model.",
    Key.SHARED_KV_CACHE: "With fused attention: keeps the language model's cache in one buffer per layer that each "
    "step writes one position into, instead of copying the whole cache into new memory every step; checked "
    "against the model as exported when the model first loads. About a tenth of a step saved on a short text, a "
    "third on a long one. Changing it reloads the model.",
    Key.CONDITIONING_CACHE: "Remembers what the voice encoder made of each voice (in memory and on disk), so a voice "
    "used before starts speaking without running the encoder again. Costs a little disk space per voice.",
    Key.PREFIX_CACHE: "Keeps the language model's state after the voice part of the prompt, per voice, so each "
    "request only reads its own text (up to 90 % less time before the first sound on Turbo). Costs some memory "
    "per voice.",
    Key.STREAM: "Decode and play audio while the language model is still generating: the first sound comes within "
    "about a second whatever the length. Off: each sentence is decoded in one go (a little less total work, a much "
    "later start).",
    Key.STREAM_PLAN: "How streaming cuts speech into decoder calls. adaptive: a small first window, then as few "
    "calls as keep playback fed (measured on this computer; usually one per sentence). fixed: the first chunk, then "
    "a call every chunk, whatever it costs.",
    Key.PLAYBACK_POLICY: "When spoken audio starts playing. Start fast: the first audio as soon as it exists (Turbo "
    "on a 2-core CPU: 1.4–1.7 s), with stalls later where the computer is barely faster than speech (there: 2–3 "
    "stalls, 3–8 s in all, in a five-sentence paragraph). Play smoothly: one wait at the start, as long as a forecast "
    "from this computer's measured speed says is needed for nothing to arrive late, then no stalls (the slower the "
    "computer, the longer the wait). Automatic: smoothly when the measured real-time factor is "
    f"{AUTO_SMOOTH_RTF} or more (no margin left), fast otherwise.",
    Key.FIRST_CHUNK_TOKENS: "Speech tokens (25 per second of speech) generated before the first audio is decoded. "
    "Smaller starts sooner; too small wastes decoder calls.",
    Key.CHUNK_TOKENS: "Speech tokens per later decoder call with the fixed plan. Larger chunks mean fewer calls (less "
    "total work) and a longer wait for each piece of audio.",
    Key.TAKE_TURNS: "Whether the language model and the decoder take turns on the processor: the language model waits "
    "while a decoder call runs, and each has every core to itself, its idle threads spinning while it runs. Two models "
    "at once on the same cores slow each other by more than they overlap: on 2 cores a smooth start came 0.77× as "
    "late and without a stall, a book rendered 1.06× as fast; a request spoken without streaming took 1.05× as long. "
    "auto: when both run on the CPU; never: the decoder runs beside the language model. Takes effect when the model "
    "is loaded again.",
    Key.DECODER_THREAD: "Decode audio on a second thread while the language model goes on with the next words. "
    "Faster where there are cores to spare (or a GPU); on two cores it gains only a few per cent.",
    Key.DECODER_PROMPT: "Seconds of your recording the decoder hears on every call: its most voiced stretch, 3 s by "
    "default (10 s as upstream). Every second more costs every call: on a 2-core CPU a 3 s prompt made a decoder "
    "call 0.65× of a 6–8 s prompt's, on Turbo and Original alike. Longer prompts give the decoder more "
    "of the voice's detail; it was trained with prompts of at most 30 % of an utterance.",
    Key.DECODER_PRECISION: "Number format of the speech decoder's matrix products on the CPU. q8: int8 (made once "
    "from the float32 file, about a minute for Original/Multilingual, seconds for Turbo, kept beside the model or "
    "in the cache): 0.66–0.76× per Original decoder call and 0.77–0.79× per Turbo one, the sound 61 dB (Original) "
    "and 67 dB (Turbo) from float32's for the same noise, where two float32 calls differ by 27 dB by themselves. "
    "fp32: as exported. auto (default): q8 on the CPU. Changing it reloads the model.",
    Key.DECODER_FLOW_STEPS: "Refinement steps of the Original/Multilingual decoder: 5 by default, 10 as exported. "
    "Each step is one pass of the decoder's largest part: 5 make a call about half as long as 10, 3 about a third, "
    "about doubling (5) or tripling (3) the step error the exported 10 already have; judge fewer by ear. Turbo "
    "keeps its own 2. Changing it reloads the model.",
    Key.BLOCKED_CONVOLUTIONS: "Runs the speech decoder's convolutions in onnxruntime's blocked channel layout on the "
    "CPU (as 2-D convolutions of height 1): the same arithmetic, about a tenth off a Turbo decoder call of a "
    "sentence on two cores (1–2 % on Original, whose decoder is mostly its flow steps). Made into the int8 decoder "
    "file; on a GPU the decoder stays as exported. Changing it reloads the model.",
    Key.LM_BATCH: "Sentences the language model generates together when a project renders without listening "
    "(Turbo): four at once take about half the language model's time per sentence, and hold four sentences' memory. "
    "1: one at a time. Speaking, and listening while rendering, are not affected.",
    Key.JOINED_DECODING: "When a project renders without listening, decode up to 12 s of neighbouring sentences in one "
    "decoder call and cut it back into sentences: the decoder's fixed cost (your voice prompt) is paid once per call "
    "instead of once per sentence. Each sentence then hears its neighbours, as sentences spoken together do.",
    Key.LANGUAGE: "The language of the text (Multilingual model only). A wrong language reads the words with the "
    "wrong pronunciation.",
    Key.TEMPERATURE: "Randomness of the speech tokens. Lower: steadier, flatter delivery; higher: livelier and more "
    "varied, with more risk of mumbling or odd sounds. No effect on speed.",
    Key.TOP_K: "Only the k most likely tokens are considered at each step (off: all). A small k is safer and duller. "
    "No effect on speed.",
    Key.TOP_P: "Only the most likely tokens that together make up this share of the probability are considered "
    "(1.0: all). Lower is safer and less varied. No effect on speed.",
    Key.MIN_P: "Tokens less likely than this fraction of the most likely one are dropped (0: off). Cuts rare, odd "
    "sounds while keeping variety; 0.02–0.1 is typical. No effect on speed.",
    Key.REPETITION_PENALTY: "Makes tokens the model has just produced less likely: above 1 against stutters and "
    "loops; too high makes speech rushed or garbled. No effect on speed.",
    Key.CFG_WEIGHT: "Classifier-free guidance: how strongly the speech follows the text and the voice (0: off). "
    "Higher is clearer and slower-paced; each step runs the language model twice, so any value above 0 costs up to "
    "twice the time per step on the CPU.",
    Key.EXAGGERATION: "Emotional intensity of the delivery: 0.5 is neutral, higher is more expressive and dramatic "
    "(often faster; lower the CFG weight to slow it down). No effect on speed.",
    Key.RANDOM_SEED: "Pick a new random seed for every request, so speaking the same text again gives a different "
    "take.",
    Key.SEED: "The same seed, text, voice and settings give the same speech again: use it to reproduce a take you "
    "liked. The seed of each take is kept in the history.",
}
"""What each control does and what it costs: the tooltip it shows while it is available."""


class SettingsPanel(QWidget):
    changed = Signal(object)  # the Key that changed

    def __init__(self, settings: Settings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.capabilities: Capabilities | None = None
        self.controls: dict[Key, Control] = {}
        self._build_ui()
        self.load()
        self._connect_signals()

    def _build_ui(self) -> None:
        c = self.controls
        c[Key.PROVIDER] = _combo(PROVIDERS)
        c[Key.THREADS] = _spin(0, 64, "auto")
        c[Key.PRECISION] = self.precision = _combo(PRECISIONS)
        c[Key.Q4_COMPUTE] = _combo(Q4_COMPUTE)
        c[Key.KV_CHAINING] = QCheckBox("KV chaining (IOBinding, no copies)")
        c[Key.SHAPE_FOLDING] = QCheckBox("Shape folding")
        c[Key.FUSED_ATTENTION] = QCheckBox("Fused attention")
        c[Key.SHARED_KV_CACHE] = QCheckBox("Cache written in place")
        c[Key.CONDITIONING_CACHE] = QCheckBox("Conditioning cache")
        c[Key.PREFIX_CACHE] = QCheckBox("Voice-prefix KV cache")
        c[Key.STREAM] = QCheckBox("Stream (play while generating)")
        c[Key.STREAM_PLAN] = _combo(STREAM_PLANS)
        c[Key.PLAYBACK_POLICY] = _labelled_combo(PLAYBACK_LABELS)
        c[Key.DECODER_THREAD] = QCheckBox("Decoder thread (beside the LM)")
        c[Key.TAKE_TURNS] = _combo(TAKE_TURNS)
        c[Key.FIRST_CHUNK_TOKENS] = _spin(1, 200)
        c[Key.CHUNK_TOKENS] = _spin(1, 400)
        c[Key.DECODER_PROMPT] = prompt = _spin(3, 10)
        prompt.setSuffix(" s")
        c[Key.DECODER_PRECISION] = _combo(DECODER_PRECISIONS)
        c[Key.DECODER_FLOW_STEPS] = _spin(0, 10, "10")
        c[Key.BLOCKED_CONVOLUTIONS] = QCheckBox("Blocked decoder convolutions")
        c[Key.LM_BATCH] = _spin(1, 16)
        c[Key.JOINED_DECODING] = QCheckBox("Join sentences in decoder calls")
        c[Key.TEMPERATURE] = _dspin(0.05, 5.0, 0.05)
        c[Key.TOP_P] = _dspin(0.05, 1.0, 0.01)
        c[Key.TOP_K] = _spin(0, 8194, "off")
        c[Key.MIN_P] = _dspin(0.0, 1.0, 0.01)
        c[Key.REPETITION_PENALTY] = _dspin(0.5, 5.0, 0.05)
        c[Key.CFG_WEIGHT] = _dspin(0.0, 3.0, 0.05)
        c[Key.EXAGGERATION] = _dspin(0.0, 2.0, 0.05)
        c[Key.RANDOM_SEED] = QCheckBox("Random seed each time")
        c[Key.SEED] = _spin(0, 2**31 - 1)
        c[Key.LANGUAGE] = self.language = _combo(("en",))
        _set_languages(self.language, ("en",))
        for key, control in c.items():
            control.setToolTip(TIPS[key])
        self.reset_sampling = QPushButton("Model &defaults")
        self.reset_sampling.setToolTip("Use the upstream sampling defaults of the loaded model")

        engine = QGroupBox("Engine")
        form = QFormLayout(engine)
        form.addRow("Provider", c[Key.PROVIDER])
        form.addRow("Threads", c[Key.THREADS])
        form.addRow("Precision", c[Key.PRECISION])
        form.addRow("4-bit compute", c[Key.Q4_COMPUTE])
        for key in (
            Key.KV_CHAINING,
            Key.SHAPE_FOLDING,
            Key.FUSED_ATTENTION,
            Key.SHARED_KV_CACHE,
            Key.CONDITIONING_CACHE,
            Key.PREFIX_CACHE,
            Key.STREAM,
        ):
            form.addRow(c[key])
        form.addRow("Stream plan", c[Key.STREAM_PLAN])
        form.addRow("Playback", c[Key.PLAYBACK_POLICY])
        form.addRow("First chunk (tokens)", c[Key.FIRST_CHUNK_TOKENS])
        form.addRow("Chunk (tokens)", c[Key.CHUNK_TOKENS])
        form.addRow(c[Key.DECODER_THREAD])
        form.addRow("Models take turns", c[Key.TAKE_TURNS])
        form.addRow("Decoder voice prompt", c[Key.DECODER_PROMPT])
        form.addRow("Decoder precision", c[Key.DECODER_PRECISION])
        form.addRow("Decoder flow steps", c[Key.DECODER_FLOW_STEPS])
        form.addRow(c[Key.BLOCKED_CONVOLUTIONS])
        form.addRow("Project render batch", c[Key.LM_BATCH])
        form.addRow(c[Key.JOINED_DECODING])
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
        self._layout = layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(engine)
        layout.addWidget(sampling)
        layout.addStretch(1)

    def add_section(self, widget: QWidget) -> None:
        """Another group below the settings (the window adds the Local API)."""
        self._layout.insertWidget(self._layout.count() - 1, widget)

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
        if isinstance(control, QComboBox):  # the language combo shows "French (fr)" and holds "fr"
            data = control.currentData()
            return data if isinstance(data, str) else control.currentText()
        return control.value()

    def _set(self, key: Key, value) -> None:
        control = self.controls[key]
        control.blockSignals(True)
        if isinstance(control, QCheckBox):
            control.setChecked(bool(value))
        elif isinstance(control, QComboBox):
            index = control.findData(str(value))
            if index < 0:
                index = control.findText(str(value))
            if index < 0:
                control.addItem(language_label(str(value)) if key == Key.LANGUAGE else str(value), str(value))
                index = control.count() - 1
            control.setCurrentIndex(index)
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
        self.controls[Key.SHARED_KV_CACHE].setEnabled(bool(self.value(Key.FUSED_ATTENTION)))

    def set_capabilities(self, caps: Capabilities) -> None:
        """Offer what the loaded model has: its languages and precisions; disable what it cannot do."""
        self.capabilities = caps
        _set_languages(self.language, caps.languages or ("en",))
        combo = self.precision
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(list(caps.precisions_present))
        combo.blockSignals(False)
        self.load()
        wanted = self.settings.get(Key.PRECISION)
        self.controls[Key.PRECISION].setToolTip(
            (
                f"This model has no {wanted} language model; it runs {caps.lm_precision}."
                if wanted not in caps.precisions_present
                else f"Language model in {caps.lm_precision}; other graphs: "
                + ", ".join(sorted({p for g, p in caps.precisions.items() if g != "language_model"}))
            )
            + "\n\n"
            + TIPS[Key.PRECISION]
        )
        cfg_why = (
            "Turbo has no classifier-free guidance."
            if caps.variant == "turbo"
            else ("This model's text table was not found, so classifier-free guidance is unavailable.")
        )
        for key, ok, why in (
            (Key.LANGUAGE, caps.variant == "multilingual", "Only the Multilingual model speaks other languages."),
            (Key.CFG_WEIGHT, caps.supports_cfg, cfg_why),
            (Key.EXAGGERATION, caps.supports_exaggeration, "Turbo has no exaggeration control."),
            (Key.MIN_P, True, ""),
            (Key.Q4_COMPUTE, caps.q4_compute is not None, "The language model in use has no 4-bit weights."),
        ):
            self.controls[key].setEnabled(ok)
            self.controls[key].setToolTip(TIPS[key] if ok else f"{why}\n\n{TIPS[key]}")

    @Slot()
    def _on_control_changed(self, key: Key) -> None:
        self.settings.set(key, self.value(key))
        if key == Key.RANDOM_SEED:
            self.controls[Key.SEED].setEnabled(not self.value(Key.RANDOM_SEED))
        if key == Key.FUSED_ATTENTION:  # the cache is written in place by the fused operator only
            self.controls[Key.SHARED_KV_CACHE].setEnabled(bool(self.value(Key.FUSED_ATTENTION)))
        self.changed.emit(key)

    @Slot()
    def _on_reset_clicked(self) -> None:
        self.settings.reset_sampling()
        self.load()
        self.changed.emit(Key.TEMPERATURE)


def _set_languages(combo: QComboBox, codes) -> None:
    """Language names with their code ("French (fr)"); the item data is the code the core takes."""
    combo.blockSignals(True)
    combo.clear()
    for code in codes:
        combo.addItem(language_label(code), code)
    combo.blockSignals(False)


Control = QCheckBox | QComboBox | QSpinBox | QDoubleSpinBox
"""A setting's control."""


PLAYBACK_LABELS = (("fast", "Start fast"), ("smooth", "Play smoothly"), ("auto", "Automatic"))
"""The playback policies as the combo shows them (the item data is the core's value)."""


def _labelled_combo(items) -> QComboBox:
    combo = QComboBox()
    for value, label in items:
        combo.addItem(label, value)
    # Sized by six characters rather than its longest item: the side panel is narrow, and the row takes its width.
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(6)
    return combo


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
