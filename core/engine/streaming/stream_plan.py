"""When to decode: as few decoder calls as keep playback ahead.

The real ``conditional_decoder`` pays a large fixed cost on every call (the voice prompt goes through every flow
step: 0.6–0.9 s for Turbo, 4–7 s for Original on a 2-core CPU) plus a cost per new token, so decoder calls are the unit
of cost. The ``adaptive`` plan decodes:

- a first window, for the first sentence of a request only, holding enough speech to cover the next call (sized from
  the costs of calls made with the cores to themselves, as the first window is; at most 1.5 s of speech;
  ``first_chunk_tokens`` until the costs are known);
- then nothing until waiting one more token would let playback run dry before the decoder could deliver — never
  while the decoder is still busy (a queued window would pay the fixed cost with fewer tokens) — so the windows
  grow with the audio already queued, and a sentence usually ends in one call; when all that is pending would be
  late, the largest first part that is not;
- and the rest at the end of each sentence, split in two only where that shortens the stall it would cause by more
  than a call's fixed cost.

When playback cannot be kept fed anyway (the machine is slower than real time), the plan stops splitting the
sentence: every extra call would only add its fixed cost. :class:`CostModel` learns the costs from the calls the model
makes (least squares over recent decoder calls, per prompt length, kept apart for calls made beside the language
model; LM steps) and lives as long as the loaded model. The ``fixed`` plan is the plain one: ``first_chunk_tokens``,
then every ``chunk_tokens``.

The playback policy chooses when playback starts. ``fast``: with the first window (the above). ``smooth``: when the
forecast (:mod:`.forecast`) says no later chunk will be late; the first window is the one that makes that start
earliest, the language model may wait for every decoder call (when the cores are too few for both), and the later
windows are planned against that later start. The plan keeps the forecast, refined at every sentence's end.
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine.constants import TOKENS_PER_SECOND
from core.engine.files.atomic import write_json_atomic
from core.engine.streaming.forecast import (
    MARGIN_S,
    MIN_WINDOW,
    TOKENS_PER_CHAR,
    ChunkForecast,
    Costs,
    Forecast,
    Piece,
    estimate_tokens,
    forecast,
    smooth_forecast,
)

log = logging.getLogger(__name__)

TOKEN_S = 1 / TOKENS_PER_SECOND


class CostModel:
    """Decoder call time = fixed + per_token × window tokens (per prompt length), and the LM step time."""

    def __init__(self, keep: int = 24):
        self._calls: dict[int, deque[tuple[int, float]]] = {}
        self._alone: dict[int, deque[tuple[int, float]]] = {}
        """Calls made while the language model was not running (on few cores, overlapped calls are slower)."""
        self._beside: dict[int, deque[tuple[int, float]]] = {}
        """Calls made while it ran (what the forecast takes as "both at once")."""
        self._steps: deque[float] = deque(maxlen=64)
        self._steps_alone: deque[float] = deque(maxlen=64)
        """Steps of requests whose language model waited for every decoder call (the smooth plan's serial lanes)."""
        self._prefills: deque[float] = deque(maxlen=32)
        """A sentence's prefill (its text after the cached voice prefix), before its first token."""
        self._chars: deque[float] = deque(maxlen=32)
        """Speech tokens per character of sentences that ended by themselves (not at the token cap)."""
        self.lm_running = False
        """Set by synthesis while the language model generates: decoder calls made meanwhile share the cores."""
        self._keep = keep
        self._lock = threading.Lock()  # the decoder thread adds calls while the inference thread plans
        self._lines: dict[tuple[int, bool, bool], tuple[float, float] | None] = {}
        """Fitted lines by (prompt, alone, beside), until the next call is added: the plan asks after every token."""
        self._medians: dict[str, float | None] = {}
        """The step times' medians, until the next steps are added."""

    def add_call(self, prompt_tokens: int, window_tokens: int, seconds: float, alone: bool = False) -> None:
        with self._lock:
            self._calls.setdefault(prompt_tokens, deque(maxlen=self._keep)).append((window_tokens, seconds))
            kept = self._alone if alone else self._beside
            kept.setdefault(prompt_tokens, deque(maxlen=self._keep)).append((window_tokens, seconds))
            self._lines.clear()

    def add_steps(self, step_ms: list[float], alone: bool = False) -> None:
        with self._lock:
            self._steps.extend(ms / 1000 for ms in step_ms)
            if alone:
                self._steps_alone.extend(ms / 1000 for ms in step_ms)
            self._medians.clear()

    def add_prefill(self, prefill_ms: float) -> None:
        with self._lock:
            self._prefills.append(prefill_ms / 1000)
            self._medians.clear()

    @property
    def prefill_s(self) -> float:
        """A sentence's prefill: the median of the recent ones (0 before any)."""
        with self._lock:
            if "prefill" not in self._medians:
                self._medians["prefill"] = statistics.median(self._prefills) if self._prefills else None
            return self._medians["prefill"] or 0.0

    def add_sentence(self, chars: int, tokens: int) -> None:
        """A sentence of ``chars`` characters ended by itself after ``tokens`` speech tokens."""
        if chars > 0 and tokens > 0:
            with self._lock:
                self._chars.append(tokens / chars)

    @property
    def tokens_per_char(self) -> float:
        with self._lock:
            return statistics.median(self._chars) if self._chars else TOKENS_PER_CHAR

    def snapshot(self, prompt_tokens: int) -> Costs | None:
        """The costs a forecast needs for this voice prompt, or ``None`` while any is unknown."""
        alone, beside = self.decoder_line(prompt_tokens, alone=True), self.decoder_line(prompt_tokens, beside=True)
        step, step_beside = self.lm_step_alone_s, self.lm_step_s
        if alone is None or step is None or beside is None:
            return None
        with self._lock:
            overlapped = bool(self._beside.get(prompt_tokens))
        prefill = self.prefill_s
        if not overlapped:  # every call was made alone: nothing is known about both at once
            return Costs(step, alone[0], alone[1], prefill_s=prefill)
        return Costs(step, alone[0], alone[1], step_beside, beside[0], beside[1], prefill)

    @property
    def lm_step_s(self) -> float | None:
        with self._lock:
            if "step" not in self._medians:
                self._medians["step"] = statistics.median(self._steps) if self._steps else None
            return self._medians["step"]

    @property
    def lm_step_alone_s(self) -> float | None:
        """An LM step without the decoder beside it: the median of steps known to be alone, else the fastest fifth of
        the recent steps."""
        with self._lock:
            if "alone" not in self._medians:
                if self._steps_alone:
                    self._medians["alone"] = statistics.median(self._steps_alone)
                else:
                    steps = sorted(self._steps)
                    self._medians["alone"] = steps[len(steps) // 5] if steps else None
            return self._medians["alone"]

    def decoder_line(self, prompt_tokens: int, alone: bool = False, beside: bool = False) -> tuple[float, float] | None:
        """``(fixed_s, per_token_s)`` for this prompt length (``alone``: from calls made while the language model
        was idle, ``beside``: while it ran, where there are such); ``None`` before any call. With calls of one size
        only, the cost is taken as all per-token (a safe over-estimate for larger windows)."""
        with self._lock:
            key = (prompt_tokens, alone, beside)
            if key in self._lines:
                return self._lines[key]
            source = self._alone if alone else self._beside if beside else self._calls
            calls = list((source if source.get(prompt_tokens) else self._calls).get(prompt_tokens, ()))
            line = self._lines[key] = _fit(calls)
        return line

    def to_json(self) -> dict[str, object]:
        with self._lock:
            return {
                "version": 1,
                "calls": {str(p): list(map(list, c)) for p, c in self._calls.items()},
                "alone": {str(p): list(map(list, c)) for p, c in self._alone.items()},
                "beside": {str(p): list(map(list, c)) for p, c in self._beside.items()},
                "steps": list(self._steps),
                "steps_alone": list(self._steps_alone),
                "tokens_per_char": list(self._chars),
                "prefills": list(self._prefills),
            }

    def load_json(self, data: dict[str, Any]) -> None:
        """Costs measured in an earlier session on this machine (malformed data raises; the caller ignores it)."""
        if data.get("version") != 1:
            raise ValueError("unknown cost file version")
        calls = {int(p): [(int(n), float(s)) for n, s in c] for p, c in data["calls"].items()}
        alone = {int(p): [(int(n), float(s)) for n, s in c] for p, c in data["alone"].items()}
        beside = {int(p): [(int(n), float(s)) for n, s in c] for p, c in data.get("beside", {}).items()}
        steps = [float(s) for s in data["steps"]]
        alone_steps = [float(s) for s in data.get("steps_alone", [])]
        chars = [float(r) for r in data.get("tokens_per_char", [])]  # files written before the forecast lack these
        prefills = [float(s) for s in data.get("prefills", [])]  # and before the serial forecast, these
        with self._lock:
            for target, source in ((self._calls, calls), (self._alone, alone), (self._beside, beside)):
                for p, items in source.items():
                    target.setdefault(p, deque(maxlen=self._keep)).extend(items)
            self._steps.extend(steps)
            self._steps_alone.extend(alone_steps)
            self._chars.extend(chars)
            self._prefills.extend(prefills)
            self._lines.clear()
            self._medians.clear()

    def decode_s(self, prompt_tokens: int, window_tokens: int, alone: bool = False) -> float | None:
        line = self.decoder_line(prompt_tokens, alone)
        return None if line is None else line[0] + line[1] * window_tokens


def _fit(calls: list[tuple[int, float]]) -> tuple[float, float] | None:
    """``(fixed_s, per_token_s)`` through ``(window tokens, seconds)`` calls; all per token for calls of one size."""
    if not calls:
        return None
    xs = [n for n, _ in calls]
    ys = [s for _, s in calls]
    if max(xs) - min(xs) < 4:
        per = statistics.median(ys) / max(1, statistics.median(xs))
        return 0.0, per
    slope, intercept = statistics.linear_regression(xs, ys)
    if slope < 0:  # noise: no cost per token to be seen, all of it fixed
        slope, intercept = 0.0, statistics.fmean(ys)
    return max(intercept, 0.0), slope


@dataclass
class StreamPlan:
    """Per request: decides after every generated token how much to decode now (see the module docstring)."""

    mode: str
    """``adaptive``, ``fixed`` or ``off`` (one decode per sentence)."""
    first_chunk_tokens: int
    chunk_tokens: int
    context_tokens: int
    costs: CostModel
    prompt_tokens: int
    playback_start: float | None = None
    """When the first chunk is (expected to be) ready: playback starts then."""
    scheduled_s: float = 0.0
    """Seconds of audio ready or being decoded."""
    decoder_free_at: float = 0.0
    """When the decoder finishes the windows already handed to it (estimated)."""
    behind: bool = False
    """Playback could not be kept fed: stop splitting sentences."""
    sentence_windows: int = 0
    """Windows decoded in the current sentence."""
    sentence_tokens: int = 0
    """Tokens handed to the decoder in the current sentence (the next window's context comes from them)."""
    in_flight: int = 0
    """Windows handed to the decoder and not delivered yet."""
    policy: str = "fast"
    """When playback starts: ``fast`` (with the first window) or ``smooth`` (when the forecast says no chunk will be
    late); ``auto`` is resolved before the plan is made (:func:`.forecast.choose_policy`)."""
    outline: list[Piece] = field(default_factory=list)
    """The request's sentences (tokens estimated from characters until generated) with the silence after each."""
    started: float = 0.0
    """When the request started (``time.perf_counter``): forecast times are reported from it."""
    serial: bool = False
    """The language model waits for every decoder call (chosen by the smooth forecast where the cores are few, and
    always where the models take turns)."""
    turns: bool = False
    """The models take turns (:attr:`core.engine.options.RuntimeOptions.take_turns`): :attr:`serial` from the start,
    whatever the policy; the smooth forecast plans serial lanes only."""
    forecast: Forecast | None = None
    """The last forecast (smooth only): planned start and every chunk's predicted arrival."""
    predictions: list[ChunkForecast] = field(default_factory=list)
    """Every speech window's predicted arrival and play time, the handed ones kept as they were predicted."""
    sentence: int = 0
    """Index in :attr:`outline` of the sentence being generated."""
    windows: int = 0
    """Speech windows handed to the decoder in this request."""

    chars: list[int] = field(default_factory=list)
    """Characters of each sentence of :attr:`outline`."""
    cap: int = 1000
    """No sentence has more speech tokens than this (the request's cap)."""

    def __post_init__(self) -> None:
        self.serial = self.serial or self.turns

    def set_outline(self, sentences: list[tuple[int, float]], cap: int) -> None:
        """The request's sentences as ``(characters, silence after)``: tokens estimated from the characters."""
        self.chars, self.cap = [chars for chars, _ in sentences], cap
        ratio = self.costs.tokens_per_char
        self.outline = [Piece(estimate_tokens(chars, ratio, cap), silence) for chars, silence in sentences]

    @property
    def smooth(self) -> bool:
        return self.policy == "smooth"

    def _decode_s(self, new_tokens: int) -> float | None:
        context = min(self.context_tokens, self.sentence_tokens)
        return self.costs.decode_s(self.prompt_tokens, new_tokens + context, alone=self.serial)

    def _known_decode_s(self, new_tokens: int) -> float:
        """:meth:`_decode_s` where the costs are known (once one window's estimate exists, every window's does)."""
        return self._decode_s(new_tokens) or 0.0

    def new_sentence(self, index: int | None = None) -> None:
        self.behind = False  # a pause or a long gap may have refilled the queue
        self.sentence_windows = 0
        self.sentence_tokens = 0
        if index is not None:
            self.sentence = index

    def _smooth_first_window(self, now: float, generated: int) -> int | None:
        """The smooth plan's first window (and lane choice), forecast once at the first token; ``None`` while the
        costs are unknown (the fast plan's window then)."""
        if self.forecast is None:
            costs = self.costs.snapshot(self.prompt_tokens)
            if costs is None or not self.outline:
                return None
            pieces = self.outline[self.sentence :]
            low = self.first_chunk_tokens
            self.forecast = smooth_forecast(costs, pieces, now, self.context_tokens, low, generated, self.turns)
            self.serial = self.forecast.serial or self.turns
        return self.forecast.first_window

    def _reforecast(self, now: float, first_window: int, generated: int) -> None:
        """Forecast the rest from now: the start moves later if the rest would be late (never earlier: a forecast
        that turns optimistic mid-request made runs stall; never once playback has started); the predictions of
        windows still to come are replaced. :meth:`finished` brings a start still ahead forward."""
        costs = self.costs.snapshot(self.prompt_tokens)
        if costs is None or not self.outline[self.sentence :]:
            return
        pieces = list(self.outline[self.sentence :])
        if first_window == 0:  # the sentence's windows so far are decoded: the rest of it is one call
            pieces[0] = Piece(max(0, pieces[0].tokens - self.sentence_tokens), pieces[0].silence_s, True)
        playing = self.playback_start is not None and now >= self.playback_start
        ahead = forecast(
            costs,
            pieces,
            now,
            first_window,
            self.context_tokens,
            self.serial,
            generated=generated if first_window else pieces[0].tokens,
            first_context=min(self.context_tokens, self.sentence_tokens),
            decoder_free=self.decoder_free_at,
            audio_before=self.scheduled_s,
            earliest_start=self.playback_start or 0.0,
        )
        if playing and self.playback_start is not None and ahead.start_s > self.playback_start:
            ahead = ahead.shifted(self.playback_start)  # too late to wait: the stalls it predicts are reported
        old = self.forecast.start_s if self.forecast else ahead.start_s
        kept = [ChunkForecast(c.tokens, c.arrive_s, c.play_s + ahead.start_s - old) for c in self.predictions]
        self.predictions = kept[: self.windows] + list(ahead.chunks)
        self.forecast = ahead
        if self.playback_start is not None and not playing:
            self.playback_start = max(self.playback_start, ahead.start_s)

    def sentence_done(self, tokens: int, chars: int, capped: bool, now: float) -> None:
        """The sentence's tokens are all generated: its real count replaces the estimate (and, when it ended by
        itself, refines the tokens-per-character ratio for the rest); the smooth plan forecasts again."""
        if not capped or (chars and tokens / chars > self.costs.tokens_per_char):  # a capped one: at least this
            self.costs.add_sentence(chars, tokens)
        if self.sentence < len(self.outline):
            old = self.outline[self.sentence]
            self.outline[self.sentence] = Piece(tokens, old.silence_s, True)
            ratio = self.costs.tokens_per_char
            for i in range(self.sentence + 1, len(self.outline)):
                later = self.outline[i]
                self.outline[i] = Piece(estimate_tokens(self.chars[i], ratio, self.cap), later.silence_s)
        if self.smooth and self.forecast is not None:
            self._reforecast(now, 0, tokens)

    def first_window(self) -> int:
        """Tokens in the first window: enough speech to cover the next decoder call, once the costs are known.

        A window gains audio only when it holds more speech than its call costs: n × 40 ms > fixed + per-token ×
        (n + context). The first window must last until such a window is decoded, or playback stalls after it."""
        # The first window is decoded with the cores to itself, while the language model waits.
        line, step = self.costs.decoder_line(self.prompt_tokens, alone=True), self.costs.lm_step_alone_s
        if line is None or step is None or line[0] == 0.0:
            return self.first_chunk_tokens
        fixed, per = line
        if per + step >= TOKEN_S:
            # Making a token (its step and its share of a call) takes longer than it plays: playback will stall
            # whatever the windows, so a larger first window only delays the first audio ("play smoothly" is the
            # policy that avoids the stalls).
            return self.first_chunk_tokens
        break_even = (fixed + per * self.context_tokens) / (TOKEN_S - per)
        needed = (fixed + per * (break_even + self.context_tokens) + MARGIN_S) / TOKEN_S
        # Capped at 1.5 s of speech: past that, the wait for the first audio costs more than a later stall.
        return max(self.first_chunk_tokens, min(int(needed) + 1, int(1.5 * TOKENS_PER_SECOND)))

    def window(self, pending: int, now: float, first_sentence: bool, sentence_done: bool = False) -> int:
        """How many of the ``pending`` tokens to decode now (0: wait). At the end of a sentence the rest is decoded
        anyway; a non-zero answer below ``pending`` then means: decode this much first, so that playback does not
        run dry while the rest is decoded."""
        if self.mode == "off" or pending == 0:
            return 0
        if self.mode == "fixed":
            size = self.first_chunk_tokens if self.sentence_windows == 0 else self.chunk_tokens
            return pending if pending >= size and not sentence_done else 0
        if self.playback_start is None:
            first = (self._smooth_first_window(now, pending) if self.smooth else None) or self.first_window()
            return pending if first_sentence and pending >= first and not sentence_done else 0
        if self.behind or (self.in_flight and not sentence_done) or pending < MIN_WINDOW:
            return 0  # a window queued behind a busy decoder would only pay the fixed cost with fewer tokens
        step = (self.costs.lm_step_alone_s if self.serial else self.costs.lm_step_s) or 0.0
        estimate = self._decode_s(pending)
        if estimate is None:  # costs not known yet: the fixed plan's windows
            return pending if pending >= self.chunk_tokens and not sentence_done else 0
        dry_at = self.playback_start + self.scheduled_s
        start = max(now, self.decoder_free_at)

        def fits(tokens: int, at: float = start) -> bool:
            return at + self._known_decode_s(tokens) + MARGIN_S <= dry_at

        if not fits(pending):  # all of it would be late: the largest first part that is not
            prefix = pending - 1
            while prefix >= MIN_WINDOW and not fits(prefix):
                prefix -= 1
            if prefix < MIN_WINDOW:
                self.behind = True  # too late even for a small window: splitting would only add fixed costs
                return 0
            if sentence_done:  # split the rest only where that shortens the stall by more than a call's fixed cost
                first_ready = start + self._known_decode_s(prefix)
                rest = pending - prefix + self.context_tokens
                second = self.costs.decode_s(self.prompt_tokens, rest, alone=self.serial) or 0.0
                stall_split = first_ready + second + MARGIN_S - (dry_at + prefix * TOKEN_S)
                stall_whole = start + self._known_decode_s(pending) + MARGIN_S - dry_at
                fixed = (self.costs.decoder_line(self.prompt_tokens, self.serial) or (0.0, 0.0))[0]
                if stall_split > 0 and stall_whole - stall_split < fixed:
                    self.behind = True
                    return 0
            return prefix
        if sentence_done:
            return 0
        return pending if not fits(pending + 1, max(now + step, self.decoder_free_at)) else 0

    def decoding(self, new_tokens: int, now: float) -> None:
        """A window of ``new_tokens`` goes to the decoder now."""
        estimate = self._decode_s(new_tokens) or 0.0
        first = self.playback_start is None
        if first and self.smooth and self.forecast is not None:  # the first window's real size and time
            self._reforecast(now, new_tokens, new_tokens)
        self.sentence_windows += 1
        self.sentence_tokens += new_tokens
        self.in_flight += 1
        self.windows += 1
        self.decoder_free_at = max(now, self.decoder_free_at) + estimate
        if first:
            self.playback_start = max(self.decoder_free_at, self.planned_start or 0.0)
        self.scheduled_s += new_tokens * TOKEN_S

    def finished(self, now: float) -> None:
        """Every chunk is ready: a start still ahead comes now (nothing can arrive late any more)."""
        if self.smooth and self.forecast is not None and self.forecast.start_s > now:
            delta = now - self.forecast.start_s
            self.forecast = self.forecast.shifted(now)
            self.predictions = [ChunkForecast(c.tokens, c.arrive_s, c.play_s + delta) for c in self.predictions]
            self.playback_start = now

    @property
    def planned_start(self) -> float | None:
        """The smooth plan's start: playback does not begin before it (``None``: with the first audio)."""
        return self.forecast.start_s if self.smooth and self.forecast is not None else None

    def forecast_report(self) -> dict[str, Any]:
        """The policy and the forecast, times in ms from the request's start (for reports and front ends)."""

        def ms(t: float) -> float:
            return round((t - self.started) * 1000, 1)

        report: dict[str, Any] = {"policy": self.policy, "serial": self.serial}
        costs = self.costs.snapshot(self.prompt_tokens)
        report["rtf"] = round(costs.rtf(), 3) if costs else None
        start = self.planned_start
        report["start_ms"] = ms(start) if start is not None else None
        report["chunks"] = [
            {"tokens": c.tokens, "arrive_ms": ms(c.arrive_s), "play_ms": ms(c.play_s)} for c in self.predictions
        ]
        return report

    def silence(self, seconds: float) -> None:
        """A pause or sentence gap joins the queue (ready at once)."""
        self.scheduled_s += seconds

    def delivered(self, at: float, first: bool) -> None:
        """A decoded window is ready: real times replace the estimates (playback starts with the first one)."""
        self.in_flight = max(0, self.in_flight - 1)
        if first:
            self.playback_start = max(at, self.planned_start or 0.0)
        if self.in_flight == 0:
            self.decoder_free_at = at


class CostFile:
    """The cost model of one bundle on this machine, kept between sessions, so that the first request after a start
    is planned from real costs too. Keyed by the graph files, precision and threads; a file that cannot be read is
    ignored and rewritten."""

    def __init__(self, directory: Path | None, identity: str):
        key = hashlib.sha256(f"v1|{identity}".encode()).hexdigest()[:40]
        self.path = directory / f"{key}.json" if directory else None

    def load_into(self, costs: CostModel) -> bool:
        if self.path is None or not self.path.is_file():
            return False
        try:
            costs.load_json(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring the decoder cost file %s (%s)", self.path.name, exc)
            return False
        return True

    def save(self, costs: CostModel) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.path, costs.to_json())
        except OSError as exc:  # only the next start's first request is planned less well
            log.info("cannot keep the decoder costs in %s (%s)", self.path.parent, exc)
