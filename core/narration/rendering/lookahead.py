"""A render's look-ahead: the speech tokens of the next few segments, generated together in one batch.

When nobody listens to a render (``stream`` off), :func:`core.narration.rendering.render.render_pending` asks this for
each segment's tokens before it decodes the segment. On a miss it gathers the sentences of that segment and the
following ones (same voice, settings that can share a batch) up to ``lm_batch`` rows, generates them together
(:meth:`core.engine.Pipeline.generate_rows`) — or, for a model that cannot batch (Original, Multilingual, or with
guidance), up to four sentences one at a time (:meth:`core.engine.Pipeline.generate_alone`) — decodes neighbours
together in one decoder call (``joined_decoding``), and keeps the results for the segments that follow.
:meth:`TokenLookahead.prepare` does this work as steps (one per batch or decoder call), asking for the pipeline again
at each: a render running as a background job may pause between them. Anything
that stops a batch (an unknown voice, an error while generating) leaves those segments to the ordinary one-at-a-time
path, which reports the error per segment as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from core.engine import (
    ChatterboxError,
    Generated,
    Pipeline,
    Row,
    SynthesisCancelled,
    finish_sentence,
    wait_cancellable,
)
from core.narration.projects.project import Project, Segment
from core.narration.projects.voices import voice_reference
from core.narration.rendering.short_lines import render_options

log = logging.getLogger(__name__)

JOIN_TOKENS = 300
"""Longest joined decoder call, in speech tokens (12 s of speech): within what the decoder sees in one upstream
utterance, and long enough that the voice prompt's fixed cost is shared by several sentences."""


GROUP_ALONE = 4
"""Sentences generated ahead (one at a time) for models that cannot batch, so that the decoder can join them."""


class TokenLookahead:
    def __init__(
        self,
        project: Project,
        pipeline: Callable[[], Pipeline],
        todo: list[Segment],
        seeds: dict[int, int],
        voices: dict,
        cancelled: Callable[[], bool],
        ends: list[int] | None = None,
    ):
        """``pipeline()``: the pipeline to use now (asked again for every step). ``ends[i]``: where the work unit
        of ``todo[i]`` ends; sentences are never gathered across it (``None``: the end of ``todo``)."""
        runtime = pipeline().runtime
        self.active = not runtime.stream and (runtime.lm_batch > 1 or runtime.joined_decoding)
        self.project, self.pipeline, self.todo, self.seeds = project, pipeline, todo, seeds
        self.voices, self.cancelled = voices, cancelled
        self.ends = ends if ends is not None else [len(todo)] * len(todo)
        self._ready: dict[int, dict[int, Generated]] = {}

    def prepare(self, index: int) -> Iterator[None]:
        """Generate ``todo[index]``'s tokens ahead (with the following segments') unless they are ready: steps."""
        if self.active and self.todo[index].id not in self._ready:
            yield from self._fill(index)

    def tokens(self, index: int) -> dict[int, Generated] | None:
        """Speech tokens by sentence (piece) number for ``todo[index]`` (after :meth:`prepare`), or ``None``:
        generate it the usual way."""
        return self._ready.pop(self.todo[index].id, None)

    def _fill(self, index: int) -> Iterator[None]:
        """Gather the next segments' sentences: up to ``lm_batch`` rows in one batch where the model can batch them,
        else (with joined decoding) up to :data:`GROUP_ALONE` generated one at a time; then join them in the
        decoder. Yields between batches and decoder calls."""
        pipe = self.pipeline()
        runtime = pipe.runtime
        group: list[tuple[Segment, dict[int, Row], bool]] = []
        count, voice, batched = 0, None, None
        for segment in self.todo[index : self.ends[index]]:
            try:
                options = render_options(self.project, segment, self.seeds[segment.id], pipe)
                can = pipe.can_batch(options) and runtime.lm_batch > 1
                found = pipe.condition(voice_reference(self.project, self.project.voice_of(segment), self.voices))
                rows = pipe.request_rows(self.project.spoken_text(segment), options)
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
        if count < 2 or not batched and not runtime.joined_decoding or voice is None:
            return
        flat = [(s.id, n, row) for s, rows, _ in group for n, row in rows.items()]
        try:
            if batched:
                yield from self._generate_batches(flat, voice)
            else:
                for segment_id, number, row in flat:
                    generated = self.pipeline().generate_alone(voice.conditioning, voice.key, row, self.cancelled)
                    self._ready.setdefault(segment_id, {})[number] = generated
                    yield
            if runtime.joined_decoding:
                yield from self._decode_joined(group, voice.conditioning)
        except SynthesisCancelled:
            raise
        except Exception:
            log.exception("generating %d sentences ahead failed; rendering them one at a time", len(flat))
            for segment_id, _number, _row in flat:
                self._ready.pop(segment_id, None)

    def _generate_batches(self, flat: list, voice) -> Iterator[None]:
        # Rows of similar length share a batch, so that fewer finished rows ride along.
        flat = sorted(flat, key=lambda item: item[2].cap)
        size = self.pipeline().runtime.lm_batch
        for start in range(0, len(flat), size):
            part = flat[start : start + size]
            if len(part) == 1:
                break  # a lone row gains nothing from the batch path
            rows = [r for _, _, r in part]
            results = self.pipeline().generate_rows(voice.conditioning, voice.key, rows, self.cancelled)
            for (segment_id, number, _row), result in zip(part, results):
                self._ready.setdefault(segment_id, {})[number] = result
            yield

    def _decode_joined(self, group: list, conditioning) -> Iterator[None]:
        """Decode the group's sentences in reading order, neighbours joined in calls of up to :data:`JOIN_TOKENS`
        tokens; each sentence's audio goes with its tokens. A sentence left alone in a call is decoded later, the
        usual way."""
        runtime = self.pipeline().runtime
        cond = conditioning.with_decoder_prompt(runtime.decoder_prompt_seconds, runtime.decoder_prompt_window)
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
            pieces = self._interruptible(cond, [g.tokens for g, _ in call], call[0][0].seed)
            for (generated, trim), samples in zip(call, pieces):
                generated.audio = finish_sentence(samples, trim)
            yield

    def _interruptible(self, cond, sentences: list[list[int]], seed: int | None) -> list:
        """Run a long decoder call on a helper thread, so that a cancel stops it at once (a joined call of the
        Original decoder takes 15-20 s on a CPU)."""
        if self.cancelled():
            raise SynthesisCancelled()
        pipe = self.pipeline()
        with ThreadPoolExecutor(1, thread_name_prefix="joined-decode") as pool:
            future = pool.submit(pipe.decode_joined, cond, sentences, seed)
            wait_cancellable(future, self.cancelled, pipe.interrupt_decoder)
            return future.result()


def candidate_tokens(
    project: Project,
    pipe: Pipeline,
    segment: Segment,
    seeds: list[int],
    voices: dict,
    cancelled: Callable[[], bool],
) -> list[dict[int, Generated] | None]:
    """The speech tokens of several takes of one segment (one per seed), generated together in batches of
    ``lm_batch`` rows where the model can batch them: each take's sentences by piece number, as a one-at-a-time
    render with that seed would generate them; ``None`` for each take where it cannot (it is generated the usual
    way)."""
    alone: list[dict[int, Generated] | None] = [None] * len(seeds)
    runtime = pipe.runtime
    if len(seeds) < 2 or runtime.lm_batch < 2:
        return alone
    try:
        options = [render_options(project, segment, seed, pipe) for seed in seeds]
        if not pipe.can_batch(options[0]):
            return alone
        voice = pipe.condition(voice_reference(project, project.voice_of(segment), voices))
        text = project.spoken_text(segment)
        rows = [(take, n, row) for take, o in enumerate(options) for n, row in pipe.request_rows(text, o).items()]
        found: list[dict[int, Generated] | None] = [{} for _ in seeds]
        for start in range(0, len(rows), runtime.lm_batch):
            part = rows[start : start + runtime.lm_batch]
            results = pipe.generate_rows(voice.conditioning, voice.key, [row for _, _, row in part], cancelled)
            for (take, number, _row), result in zip(part, results):
                found[take][number] = result  # type: ignore[index]
        return found
    except SynthesisCancelled:
        raise
    except Exception:
        log.exception("generating %d takes of a segment together failed; generating them one at a time", len(seeds))
        return alone
