"""When playback may start so that it never runs dry: a forecast of every chunk's arrival from the measured costs.

The "play smoothly" policy (:mod:`.stream_plan`) holds the first audio back until the forecast says every later
chunk arrives before playback needs it, instead of starting at once and stalling mid-sentence. The forecast is a
small simulation of the request with the costs the stream plan measures on this machine (:class:`Costs`): the
language model's step, and the decoder's fixed and per-token cost, each alone and beside the other (on few cores
the two slow each other down). The text still to come is known as sentences; each one's speech tokens are
estimated from its characters (:data:`TOKENS_PER_CHAR` until finished sentences have refined it, never more than
the request's token cap).

Playback needs chunk *k* at ``start + audio before k``; the start is the earliest one that is not earlier than any
chunk's predicted arrival minus the audio before it, plus a margin. Two plans are simulated:

- the plan's usual shape: a first window decoded while the language model waits, the rest of the first sentence in
  one call at its end, then one call per sentence; the language model waits for every call (``serial``: always
  where the models take turns, and what happens anyway on two cores) or goes on beside it;
- where it waits, the plan's own rule (:func:`serial_forecast`): each window is decoded when one more token would
  make it late, so the windows grow with the audio ahead and the first sentence needs no single long call; the
  earliest start is found by bisection, and a start whose windows would only just pay for their calls is not
  taken (:data:`GROWTH`).

The earlier start of the two is planned. Pure functions on plain numbers: the tests feed them synthetic costs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.engine.constants import TOKENS_PER_SECOND

TOKEN_S = 1 / TOKENS_PER_SECOND
TOKENS_PER_CHAR = 1.8
"""Speech tokens per character of text before any sentence of this model has finished here: English read at about
14–15 characters a second makes 1.7–1.8 tokens (25 a second) a character. Too many tokens only start playback a
little later; too few would make it stall, so the estimate leans high until finished sentences refine it."""
SMOOTH_MARGIN_S = 0.25
"""Added to the start the forecast needs (a call's wake-up, the audio device's first block)."""
SMOOTH_SLACK = 0.10
"""And this share of the time until each chunk is predicted to arrive: a decoder call's or an LM step's time varies
by ±10–20 % from one to the next on a shared CPU, and the error of a prediction grows with how far ahead it looks.
It only costs a later start where the machine is near real time (RTF above 1 / 1.1 = 0.91 it grows with the text)."""
MAX_FIRST_WINDOW = 10 * TOKENS_PER_SECOND
"""The first window holds at most 10 s of speech (a longer wait is better spent decoding)."""
MARGIN_S = 0.15
"""The plan decodes a window while it can still be ready this long before playback would run dry (estimates are
medians; a call can take longer)."""
MIN_WINDOW = 5
"""Never decode fewer new tokens than this before the end of a sentence (0.2 s of speech)."""
HORIZON = 40
"""Sentences a forecast looks ahead. Past them the buffer has grown wherever the machine is faster than real time;
where it is slower, a smooth start for a whole book would mean waiting for most of it."""


@dataclass(frozen=True)
class Costs:
    """The measured costs a forecast uses (seconds)."""

    step_s: float
    """A language-model step with the decoder idle."""
    fixed_s: float
    per_token_s: float
    """A decoder call while the language model waits: fixed + per token × (new + context tokens)."""
    step_beside_s: float | None = None
    fixed_beside_s: float | None = None
    per_token_beside_s: float | None = None
    """The same with both running at once (``None``: never measured; taken as alone)."""
    prefill_s: float = 0.0
    """A sentence's prefill, before its first token (the serial forecast counts it for every sentence to come)."""

    def decode_s(self, tokens: int, beside: bool = False) -> float:
        if beside and self.fixed_beside_s is not None and self.per_token_beside_s is not None:
            return self.fixed_beside_s + self.per_token_beside_s * tokens
        return self.fixed_s + self.per_token_s * tokens

    def step(self, beside: bool = False) -> float:
        return self.step_beside_s if beside and self.step_beside_s is not None else self.step_s

    def rtf(self, sentence_tokens: int = 5 * TOKENS_PER_SECOND) -> float:
        """Real-time factor of one sentence (5 s by default) generated and decoded in one call, one after the other:
        what a one-shot request costs per second of speech."""
        work = sentence_tokens * self.step_s + self.decode_s(sentence_tokens)
        return work / (sentence_tokens * TOKEN_S)


@dataclass(frozen=True)
class Piece:
    """One sentence still to come (``tokens`` estimated) and the silence after it (a sentence gap or a pause)."""

    tokens: int
    silence_s: float = 0.0
    done: bool = False
    """Its tokens are all generated (the estimate is the real count)."""


def estimate_tokens(chars: int, tokens_per_char: float, cap: int) -> int:
    return max(1, min(cap, round(chars * tokens_per_char)))


@dataclass(frozen=True)
class ChunkForecast:
    tokens: int
    arrive_s: float
    """Predicted time the chunk is ready (the clock the forecast was given)."""
    play_s: float
    """When playback needs it: the planned start plus the audio before it."""


@dataclass(frozen=True)
class Forecast:
    start_s: float
    """The planned start of playback."""
    chunks: tuple[ChunkForecast, ...]
    first_window: int
    serial: bool
    """The language model waits for every decoder call."""

    @property
    def underruns(self) -> int:
        """Chunks predicted late for playback (0 for a smooth plan)."""
        return sum(1 for c in self.chunks if c.arrive_s > c.play_s + 1e-9)

    def shifted(self, start_s: float) -> Forecast:
        """The same arrivals with playback starting at ``start_s``."""
        delta = start_s - self.start_s
        chunks = tuple(replace(c, play_s=c.play_s + delta) for c in self.chunks)
        return replace(self, start_s=start_s, chunks=chunks)


@dataclass(frozen=True)
class _Job:
    lm_tokens: int
    """Tokens the language model generates before this call can start."""
    new_tokens: int
    context: int
    lm_waits: bool
    silence_s: float


def _jobs(pieces: list[Piece], first_window: int, generated: int, context: int, first_context: int) -> list[_Job]:
    """The calls the adaptive plan usually makes: ``first_window`` tokens of the first sentence (0: none), the rest
    of it, then one call per sentence. ``generated``: tokens of the first piece already generated; ``first_context``:
    context tokens its call sees again (its sentence had windows before)."""
    jobs: list[_Job] = []
    for i, piece in enumerate(pieces):
        if i == 0 and 0 < first_window < piece.tokens:
            jobs.append(_Job(max(0, first_window - generated), first_window, 0, True, 0.0))
            rest = piece.tokens - first_window
            lm = piece.tokens - max(first_window, generated)
            jobs.append(_Job(lm, rest, min(context, first_window), False, piece.silence_s))
        elif i == 0:
            lm = max(0, piece.tokens - generated)
            jobs.append(_Job(lm, piece.tokens, first_context, first_window > 0, piece.silence_s))
        else:
            jobs.append(_Job(piece.tokens, piece.tokens, 0, False, piece.silence_s))
    return jobs


def _arrivals(jobs: list[_Job], costs: Costs, now: float, decoder_free: float, serial: bool) -> list[float]:
    """When each call's audio is ready: the language model and the decoder as two lanes, each slower while the other
    runs (its beside costs), or one after the other (``serial``)."""
    lm_t, dec_t, out = now, max(now, decoder_free), []
    for k, job in enumerate(jobs):
        lm_t += job.lm_tokens * costs.step(beside=dec_t > lm_t)
        start = max(lm_t, dec_t)
        waits = serial or job.lm_waits
        more_lm = any(j.lm_tokens for j in jobs[k + 1 :])
        dec_t = start + costs.decode_s(job.new_tokens + job.context, beside=not waits and more_lm)
        if waits:
            lm_t = dec_t
        out.append(dec_t)
    return out


def forecast(
    costs: Costs,
    pieces: list[Piece],
    now: float,
    first_window: int,
    context: int,
    serial: bool,
    generated: int = 0,
    first_context: int = 0,
    decoder_free: float = 0.0,
    audio_before: float = 0.0,
    earliest_start: float = 0.0,
    margin_s: float = SMOOTH_MARGIN_S,
    slack: float = SMOOTH_SLACK,
) -> Forecast:
    """The arrival of every chunk still to come and the earliest start at which none is late.

    ``pieces`` start with the sentence being generated (``generated`` of its tokens exist; ``first_window`` > 0 cuts
    a first window from it, decoded while the language model waits; without one, its tokens not yet decoded with
    ``first_context`` tokens of context); ``decoder_free``: when the decoder finishes what it was given;
    ``audio_before``: seconds of audio already handed to the decoder or queued, which play before these chunks;
    ``earliest_start``: playback cannot start earlier (a start already planned). ``serial``: the earlier of the
    usual shape's start and :func:`serial_forecast`'s."""
    args = (generated, first_context, decoder_free, audio_before, earliest_start, margin_s, slack)
    shaped = _shaped_forecast(costs, pieces, now, first_window, context, serial, *args)
    if not serial:
        return shaped
    grown = serial_forecast(costs, pieces, now, context, first_window, *args)
    return grown if grown.start_s < shaped.start_s - 1e-6 else shaped


def _shaped_forecast(
    costs: Costs,
    pieces: list[Piece],
    now: float,
    first_window: int,
    context: int,
    serial: bool,
    generated: int = 0,
    first_context: int = 0,
    decoder_free: float = 0.0,
    audio_before: float = 0.0,
    earliest_start: float = 0.0,
    margin_s: float = SMOOTH_MARGIN_S,
    slack: float = SMOOTH_SLACK,
) -> Forecast:
    """:func:`forecast` for the plan's usual shape (:func:`_jobs`)."""
    jobs = _jobs(pieces[:HORIZON], first_window, generated, context, first_context)
    arrivals = _arrivals(jobs, costs, now, decoder_free, serial)
    before, offsets = audio_before, []
    for job in jobs:
        offsets.append(before)
        before += job.new_tokens * TOKEN_S + job.silence_s
    late = (a + slack * (a - now) - o for a, o in zip(arrivals, offsets, strict=True))
    need = max(late, default=now) + margin_s
    start = max(earliest_start, need)
    chunks = tuple(ChunkForecast(j.new_tokens, a, start + o) for j, a, o in zip(jobs, arrivals, offsets, strict=True))
    return Forecast(start, chunks, first_window, serial)


UNHURRIED_S = 1e6
"""A start so late that no window has a deadline: the serial forecast's upper bound."""
GROWTH = 2.0
"""A serial plan's windows in the middle of a sentence hold at least this many times the tokens that pay for their
own call (its fixed cost and context against the speech it adds). Decoded when one more token would be late, a
window that only pays for itself leaves playback as little ahead as before, and one call slower than measured then
starts a spiral of ever smaller windows; above it each window adds to the lead."""


def _serial_chunks(
    costs: Costs,
    pieces: list[Piece],
    now: float,
    start: float,
    context: int,
    first_window: int | None,
    generated: int,
    first_context: int,
    decoder_free: float,
    audio_before: float,
    low: int,
    slack: float,
) -> tuple[int, list[tuple[int, float, float]], bool]:
    """The plan's windows when playback starts at ``start`` and the language model waits for every call: the first
    window, every chunk as ``(tokens, arrival, audio before it)``, and whether a window in the middle of a sentence
    held fewer than :data:`GROWTH` times the tokens that pay for their call.

    After the first window, each is decoded as :meth:`.stream_plan.StreamPlan.window` decodes it: when one more
    token would make it late (ready less than :data:`MARGIN_S` before playback needs it); the rest of a sentence at
    its end, and in one call once even :data:`MIN_WINDOW` tokens would be late. The decisions take every duration
    ``slack`` longer than measured; the arrivals recorded are the measured ones. ``first_window``: the first
    window's size (``None``: the largest ready by ``start``, at least ``low`` tokens; 0: none, ``pieces[0]`` is the
    rest of a sentence whose windows so far are decoded)."""
    step, fixed, per = costs.step_s, costs.fixed_s, costs.per_token_s
    stretch = 1.0 + slack

    def room(deadline: float, at: float, pending: int, ctx: int) -> int:
        """The most new tokens a window started at ``at`` (``pending`` of them made) can hold and be ready by
        ``deadline`` with every duration stretched."""
        latest = now + (deadline - now) / stretch
        return int((latest - at - fixed - per * ctx + pending * step) // max(step + per, 1e-6))

    gain = TOKEN_S - step - per  # what a token adds to the lead, its call's fixed part aside
    thin_below = GROWTH * (fixed + per * context) / gain if gain > 0 else float("inf")
    t, before = max(now, decoder_free), audio_before
    chunks: list[tuple[int, float, float]] = []
    thin = False
    for i, piece in enumerate(pieces):
        made, decoded = (min(generated, piece.tokens) if i == 0 else 0), 0
        if i:
            t += costs.prefill_s
        while decoded < piece.tokens:
            remaining, pending = piece.tokens - decoded, made - decoded
            ctx = min(context, decoded) if decoded else (first_context if i == 0 else 0)
            if chunks or first_window == 0:
                n = room(start + before - MARGIN_S, t, pending, ctx)
                if n >= remaining or n < MIN_WINDOW:
                    n = remaining  # the sentence's end, or too late to split: the rest in one call
                thin = thin or n < min(remaining, thin_below)
            elif first_window is None:  # the first window: ready when playback starts
                n = max(low, made, min(piece.tokens, MAX_FIRST_WINDOW, room(start + before, t, pending, ctx)))
            else:
                n = first_window
            n = max(1, min(n, remaining))
            t += max(0, n - pending) * step + fixed + per * (n + ctx)
            made = max(made, decoded + n)
            chunks.append((n, t, before))
            before += n * TOKEN_S
            decoded += n
        before += piece.silence_s
    first = first_window if first_window is not None else chunks[0][0] if chunks else 0
    return first, chunks, thin


def serial_forecast(
    costs: Costs,
    pieces: list[Piece],
    now: float,
    context: int,
    first_window: int | None = None,
    generated: int = 0,
    first_context: int = 0,
    decoder_free: float = 0.0,
    audio_before: float = 0.0,
    earliest_start: float = 0.0,
    margin_s: float = SMOOTH_MARGIN_S,
    slack: float = SMOOTH_SLACK,
    low: int = 1,
) -> Forecast:
    """The earliest stall-free start where the language model waits for every decoder call, with the windows the
    plan makes against it (:func:`_serial_chunks`; ``first_window`` ``None``: the one that makes the start earliest,
    at least ``low`` tokens).

    A later start lets every window grow, so the start is found by bisection, between ``now`` and the start that
    the windows made against no deadline at all (each sentence in one call) need: the earliest at which no chunk
    arrives late with every duration ``slack`` longer than measured; then ``margin_s`` is added."""
    pieces = pieces[:HORIZON]
    if not pieces:
        return Forecast(max(now, earliest_start), (), 0, True)

    def plan(start: float) -> tuple[float, int, list[tuple[int, float, float]]]:
        args = (context, first_window, generated, first_context, decoder_free, audio_before, low, slack)
        window, chunks, thin = _serial_chunks(costs, pieces, now, start, *args)
        need = max((a + slack * (a - now) - before for _, a, before in chunks), default=now)
        return (float("inf") if thin else need), window, chunks

    best = plan(now + UNHURRIED_S)  # each sentence in one call: a start that is always possible
    lo, hi = now, max(now, best[0])
    while hi - lo > 0.005:
        mid = (lo + hi) / 2
        candidate = plan(mid)
        if candidate[0] <= mid + 1e-9:
            hi, best = mid, candidate
        else:
            lo = mid
    need, window, chunks = best
    start = max(earliest_start, need + margin_s)
    out = tuple(ChunkForecast(n, a, start + before) for n, a, before in chunks)
    return Forecast(start, out, window, True)


def fast_forecast(
    costs: Costs, pieces: list[Piece], now: float, first_window: int, context: int, generated: int = 0
) -> Forecast:
    """What "start fast" is predicted to do: playback from the first chunk's arrival, the rest beside the language
    model; its :attr:`Forecast.underruns` are the stalls it expects."""
    plan = forecast(costs, pieces, now, first_window, context, False, generated, margin_s=0.0, slack=0.0)
    return plan.shifted(plan.chunks[0].arrive_s) if plan.chunks else plan


def smooth_forecast(
    costs: Costs,
    pieces: list[Piece],
    now: float,
    context: int,
    low: int,
    generated: int = 0,
    serial_only: bool = False,
) -> Forecast:
    """The first window (from ``low`` tokens up to the first sentence or :data:`MAX_FIRST_WINDOW`) and the lane
    choice (serial or beside; ``serial_only`` where the models take turns) with the earliest stall-free start: the
    serial plan whose windows grow (:func:`serial_forecast`), or the usual shape with each first window; ties go to
    the former, then to serial lanes and smaller windows."""
    if not pieces:
        return Forecast(now, (), 0, True)
    pieces = pieces[:HORIZON]
    best = serial_forecast(costs, pieces, now, context, None, generated, low=low)
    high = max(generated, min(pieces[0].tokens, MAX_FIRST_WINDOW))
    for serial in (True,) if serial_only or costs.fixed_beside_s is None else (True, False):
        for window in range(min(max(1, low, generated), high), high + 1):
            candidate = _shaped_forecast(costs, pieces, now, window, context, serial, generated)
            if candidate.start_s < best.start_s - 1e-6:
                best = candidate
    return best


AUTO_SMOOTH_RTF = 0.5
""""auto" plays smoothly from this measured real-time factor on (docs/PERFORMANCE-LOG.md, "Playback policy"). The fast
plan's first window holds at most 1.5 s of speech, and the rest of a 5 s sentence (3.5 s) must be generated and
decoded before it has played: r × 3.5 s ≤ 1.5 s, so r ≤ ~0.43; above that "start fast" stalls in the first sentence
(measured on faithful Turbo: every run at RTF 0.71–0.78 on a quiet 2-core CPU, and at 3.7 on a loaded one)."""


def choose_policy(policy: str, costs: Costs | None) -> str:
    """``fast`` or ``smooth`` for a request: ``auto`` plays smoothly when the measured RTF leaves no margin (and
    starts fast while nothing is measured yet: there is nothing to forecast from)."""
    if policy != "auto":
        return policy
    if costs is None:
        return "fast"
    return "smooth" if costs.rtf() >= AUTO_SMOOTH_RTF else "fast"
