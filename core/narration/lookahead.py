"""A render's look-ahead: the speech tokens of the next few segments, generated together in one batch.

When nobody listens to a render (``stream`` off), :func:`core.narration.render.render_pending` asks this for each
segment's tokens before it decodes the segment. On a miss it gathers the sentences of that segment and the following
ones (same voice, settings that can share a batch) up to ``lm_batch`` rows, generates them together
(:func:`core.engine.generate_rows`) — or, for a model that cannot batch (Original, Multilingual, or with
guidance), up to four sentences one at a time (:func:`core.engine.generate_alone`) — decodes neighbours
together in one decoder call (``joined_decoding``), and keeps the results for the segments that follow. Anything
that stops a batch (an unknown voice, an error while generating) leaves those segments to the ordinary one-at-a-time
path, which reports the error per segment as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from core.engine import (
    ChatterboxError,
    Generated,
    Pipeline,
    SynthesisCancelled,
    can_batch,
    finish_sentence,
    generate_alone,
    generate_rows,
    request_rows,
    wait_cancellable,
)
from core.narration.project import Project, Segment
from core.narration.voices import voice_reference

log = logging.getLogger(__name__)

JOIN_TOKENS = 300
"""Longest joined decoder call, in speech tokens (12 s of speech): within what the decoder sees in one upstream
utterance, and long enough that the voice prompt's fixed cost is shared by several sentences."""


GROUP_ALONE = 4
"""Sentences generated ahead (one at a time) for models that cannot batch, so that the decoder can join them."""


class TokenLookahead:
    def __init__(self, project: Project, pipeline: Pipeline, todo: list[Segment], seeds: dict[str, int],
                 voices: dict, cancelled: Callable[[], bool]):  # fmt: skip
        runtime = pipeline.runtime
        self.active = not runtime.stream and (runtime.lm_batch > 1 or runtime.joined_decoding)
        self.project, self.parts, self.todo, self.seeds = project, pipeline.parts, todo, seeds
        self.voices, self.cancelled = voices, cancelled
        self._ready: dict[str, dict[int, Generated]] = {}

    def tokens(self, index: int) -> dict[int, Generated] | None:
        """Speech tokens by sentence (piece) number for ``todo[index]``, or ``None``: generate it the usual way."""
        if not self.active:
            return None
        segment = self.todo[index]
        if segment.id not in self._ready:
            self._fill(index)
        return self._ready.pop(segment.id, None)

    def _fill(self, index: int) -> None:
        """Gather the next segments' sentences: up to ``lm_batch`` rows in one batch where the model can batch them,
        else (with joined decoding) up to :data:`GROUP_ALONE` generated one at a time; then join them in the
        decoder."""
        parts, runtime = self.parts, self.parts.runtime
        group, count, voice, batched = [], 0, None, None
        for segment in self.todo[index:]:
            options = self.project.synthesis_options(segment, self.seeds[segment.id])
            try:
                can = can_batch(parts, options) and runtime.lm_batch > 1
                found = parts.voices.lookup(parts.reference(voice_reference(self.project, segment.voice, self.voices)))
                rows = request_rows(parts, segment.text, options)
            except ChatterboxError:
                break  # the one-at-a-time path reports it for this segment
            if batched is None:
                batched = can
                limit = runtime.lm_batch if can else GROUP_ALONE
            if can != batched or voice is not None and found.key != voice.key or group and count + len(rows) > limit:
                break
            voice = found
            group.append((segment, rows, options.trim_silence))
            count += len(rows)
            if count >= limit:
                break
        if count < 2 or not batched and not runtime.joined_decoding:
            return
        flat = [(s.id, n, row) for s, rows, _ in group for n, row in rows.items()]
        try:
            if batched:
                self._generate_batches(flat, voice)
            else:
                for segment_id, number, row in flat:
                    generated = generate_alone(parts, voice.conditioning, voice.key, row, self.cancelled)
                    self._ready.setdefault(segment_id, {})[number] = generated
            if runtime.joined_decoding:
                self._decode_joined(group, voice.conditioning)
        except SynthesisCancelled:
            raise
        except Exception:
            log.exception("generating %d sentences ahead failed; rendering them one at a time", len(flat))
            for segment_id, _number, _row in flat:
                self._ready.pop(segment_id, None)

    def _generate_batches(self, flat: list, voice) -> None:
        # Rows of similar length share a batch, so that fewer finished rows ride along.
        flat = sorted(flat, key=lambda item: item[2].cap)
        size = self.parts.runtime.lm_batch
        for start in range(0, len(flat), size):
            part = flat[start : start + size]
            if len(part) == 1:
                break  # a lone row gains nothing from the batch path
            results = generate_rows(self.parts, voice.conditioning, voice.key, [r for _, _, r in part], self.cancelled)
            for (segment_id, number, _row), result in zip(part, results):
                self._ready.setdefault(segment_id, {})[number] = result

    def _decode_joined(self, group: list, conditioning) -> None:
        """Decode the group's sentences in reading order, neighbours joined in calls of up to :data:`JOIN_TOKENS`
        tokens; each sentence's audio goes with its tokens. A sentence left alone in a call is decoded later, the
        usual way."""
        cond = conditioning.with_decoder_prompt(self.parts.runtime.decoder_prompt_seconds)
        calls: list[list] = [[]]
        for segment, rows, trim in group:
            for number in rows:
                generated = self._ready.get(segment.id, {}).get(number)
                if generated is None:
                    continue
                if calls[-1] and sum(len(g.tokens) for g, _ in calls[-1]) + len(generated.tokens) > JOIN_TOKENS:
                    calls.append([])
                calls[-1].append((generated, trim))
        for call in calls:
            if len(call) < 2:
                continue
            pieces = self._interruptible(self.parts.decoder.decode_joined, cond, [g.tokens for g, _ in call])
            for (generated, trim), samples in zip(call, pieces):
                generated.audio = finish_sentence(samples, trim)

    def _interruptible(self, function, *args):
        """Run a long decoder call on a helper thread, so that a cancel stops it at once (a joined call of the
        Original decoder takes 15-20 s on a CPU)."""
        if self.cancelled():
            raise SynthesisCancelled()
        with ThreadPoolExecutor(1, thread_name_prefix="joined-decode") as pool:
            future = pool.submit(function, *args)
            wait_cancellable(future, self.cancelled, self.parts.decoder.interrupt)
            return future.result()
