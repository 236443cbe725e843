"""One Wyoming connection: its events read as they come, its speech spoken in order by a task of its own.

- ``describe`` → ``info``; ``ping`` → ``pong``.
- ``synthesize`` → ``audio-start``, ``audio-chunk``s, ``audio-stop``: the text goes to the worker as an API request
  (:class:`~core.api.jobs.JobQueue`, sentence by sentence in fair turns) and each chunk of audio is sent as the
  worker makes it, in pieces of at most :attr:`WyomingConfig.samples_per_chunk` samples.
- ``synthesize-start``, ``synthesize-chunk``…, ``synthesize-stop`` → the same, and ``synthesize-stopped``: each
  sentence goes to the worker the moment it is complete (:class:`~core.api.wyoming.sentences.SentenceStream`), so
  the first audio does not wait for the end of the text. A ``synthesize`` inside a stream is the copy of the whole
  text that Home Assistant sends for older servers: it is not spoken again.
- A voice named ``Name@code`` (as ``describe`` lists them for a Multilingual model) is voice ``Name`` speaking
  language ``code``; a language the model does not speak is refused with an ``error`` event naming it.

The events are read while the audio is being sent (Home Assistant writes the text and reads the audio at once), so
a client that goes away is noticed at once: its requests are cancelled on the worker. A malformed event, or one out
of place, ends that connection only (an ``error`` event says why first).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field, replace

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped

from core.api.audio import pcm16, silence
from core.api.jobs import Job, JobFailed, JobQueue, QueueFull, StreamedSpeechJob, plan
from core.api.voices import ApiVoices, UnknownVoice
from core.api.wyoming.config import WyomingConfig
from core.api.wyoming.events import BadEvent, read_event, text_field, voice_field
from core.api.wyoming.info import VoiceName, describe_server, languages, match_language, read_voice_name
from core.api.wyoming.sentences import SentenceStream
from core.engine import (
    SAMPLE_RATE,
    Capabilities,
    ChatterboxError,
    InferenceWorker,
    SynthesisRequest,
    TextInputError,
    VoiceReference,
)
from core.voices import VoiceLibrary
from core.wording import describe

log = logging.getLogger(__name__)
WIDTH, CHANNELS = 2, 1
MAX_PAYLOAD = 1024 * 1024
"""Audio payloads a client may send (none are expected from a TTS client; they are read and ignored)."""
LINGER_S = 2.0
"""After an ``error`` event, how long what the client still sends is read and dropped before the connection closes:
closed with the client's bytes unread, it would be reset, and the client could lose the error on its way (Home
Assistant writes a streamed text while it reads the answer)."""


@dataclass
class Service:
    """What every connection shares: the worker, the API's request queue, the voices and the settings."""

    worker: InferenceWorker
    jobs: JobQueue
    voices: ApiVoices
    library: VoiceLibrary
    config: WyomingConfig


@dataclass
class Utterance:
    """One text to speak: complete (``synthesize``) or arriving in pieces (a ``synthesize-start`` … stream)."""

    request: SynthesisRequest
    """Its voice and options (the text goes to the worker sentence by sentence)."""
    streamed: bool
    sentences: SentenceStream = field(default_factory=SentenceStream)
    job: Job | None = None
    ended: bool = False
    """All of its text has arrived."""
    failure: JobFailed | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when its job exists, when its text has ended, or when it failed."""

    def close(self) -> None:
        if self.job is not None:
            self.job.close()


class WyomingHandler(AsyncEventHandler):
    def __init__(self, service: Service, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        super().__init__(reader, writer)
        self.service = service
        self.peer = str(writer.get_extra_info("peername"))
        self._queue: asyncio.Queue[Utterance] = asyncio.Queue()
        self._utterances: list[Utterance] = []
        self._stream: Utterance | None = None
        self._speaker: asyncio.Task | None = None
        self._closed = False
        self._hanging_up = False
        self._linger: asyncio.TimerHandle | None = None

    # --- reading -----------------------------------------------------------------------------------------------
    async def run(self) -> None:
        """Read events until the client closes the connection, sends a bad event, or a request fails."""
        self._is_running = True
        self._speaker = asyncio.create_task(self._speak_all(), name="wyoming speaker")
        max_data = self.service.config.max_input_chars * 4 + 64 * 1024  # UTF-8 is at most 4 bytes a character
        try:
            while self._is_running:
                event = await read_event(self.reader, max_data, MAX_PAYLOAD)
                if event is None or not await self.handle_event(event):
                    break
        except BadEvent as exc:
            log.warning("Wyoming: ending the connection from %s: %s", self.peer, exc)
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.write_event(Error(text=f"Bad event: {exc}", code="bad_event").event())
            await self._hang_up(drain=True)
        except JobFailed as exc:
            await self._refuse(exc)
            await self._hang_up(drain=True)
        except ConnectionError:
            pass
        finally:
            if self._linger is not None:
                self._linger.cancel()
            await self.disconnect()
            self.writer.close()

    async def handle_event(self, event: Event) -> bool:
        if self._hanging_up:  # a request failed: what the client still sends is dropped until it closes
            return True
        if Describe.is_type(event.type):
            await self.write_event(self._info().event())
        elif Ping.is_type(event.type):
            await self.write_event(Pong(text=Ping.from_event(event).text).event())
        elif Synthesize.is_type(event.type):
            text = text_field(event)
            name, language = voice_field(event)
            if self._stream is None:  # inside a stream it is the copy for older servers: spoken from the chunks
                self._check_size(len(text))
                utterance = self._begin(name, language, streamed=False)
                self._add_text(utterance, text)
                self._end_text(utterance)
        elif SynthesizeStart.is_type(event.type):
            if self._stream is not None:
                raise BadEvent("synthesize-start inside a stream that has not stopped")
            self._stream = self._begin(*voice_field(event), streamed=True)
        elif SynthesizeChunk.is_type(event.type):
            if self._stream is None:
                raise BadEvent("synthesize-chunk without synthesize-start")
            text = text_field(event)
            self._check_size(self._stream.sentences.chars + len(text))
            if ready := self._stream.sentences.add(text):
                self._add_text(self._stream, ready)
        elif SynthesizeStop.is_type(event.type):
            if self._stream is None:
                raise BadEvent("synthesize-stop without synthesize-start")
            utterance, self._stream = self._stream, None
            if rest := utterance.sentences.finish():
                self._add_text(utterance, rest)
            self._end_text(utterance)
        else:
            log.debug("Wyoming: %s ignored from %s", event.type, self.peer)
        return True

    async def disconnect(self) -> None:
        """The connection is over: its speech stops and its requests are cancelled on the worker."""
        self._closed = True
        if self._speaker is not None and not self._speaker.done():
            self._speaker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._speaker
        for utterance in self._utterances:
            utterance.close()

    def _info(self):
        caps = self._caps()
        return describe_server(caps, self.service.library, self.service.config.language)

    def _caps(self) -> Capabilities:
        pipe = self.service.worker.pipeline
        if pipe is None or not self.service.worker.alive:
            raise JobFailed("wyoming.no_model")
        return pipe.capabilities

    def _check_size(self, chars: int) -> None:
        limit = self.service.config.max_input_chars
        if chars > limit:
            raise JobFailed("wyoming.text_too_long", {"chars": chars, "limit": limit})

    # --- requests ----------------------------------------------------------------------------------------------
    def _begin(self, name: str | None, language: str | None, streamed: bool) -> Utterance:
        caps = self._caps()
        chosen = VoiceName(None) if name is None else read_voice_name(name, self.service.voices.find(name) is not None)
        spoken = self._language(chosen, language, caps)
        options = replace(self.service.config.options, language=spoken)
        request = SynthesisRequest("", self._voice(chosen.voice, caps), options)
        utterance = Utterance(request, streamed)
        self._utterances.append(utterance)
        self._queue.put_nowait(utterance)
        return utterance

    def _voice(self, name: str | None, caps: Capabilities) -> VoiceReference | None:
        """The library voice asked for; the model's own voice when none is named, or (with a notice in the log) when
        the name is unknown or its recording unusable: Home Assistant shows no error text to its users."""
        voices = self.service.voices
        try:
            return voices.resolve(name, caps.has_default_voice)
        except UnknownVoice:
            log.warning("Wyoming: no voice named %r; speaking in the default voice", name)
        except ChatterboxError as exc:
            log.warning("Wyoming: the voice %r cannot be used (%s); speaking in the default voice", name, exc)
        if caps.has_default_voice:
            return None
        first = first_usable_voice(voices)  # a model without a voice of its own: the library's first usable voice
        if first is None:
            raise JobFailed("wyoming.no_voice")
        return first

    def _language(self, chosen: VoiceName, asked: str | None, caps: Capabilities) -> str | None:
        """The language to speak (``None``: the model's only one, English).

        A voice name's ``@code`` is the most specific choice (it was picked from this server's list, per language)
        and wins over the request's ``language``; one the model does not speak is refused, naming the language,
        rather than spoken in another. The ``language`` field alone (a client's locale, such as ``en-US``) is a
        hint: one the model does not speak is spoken in the server's default language, with a notice in the log.
        """
        if chosen.language is not None:
            code = match_language(chosen.language, caps)
            if code is None and caps.languages:
                raise JobFailed(
                    "text.language_unsupported", {"language": chosen.language, "languages": languages(caps)}
                )
            if code is None:
                raise JobFailed("text.english_only", {"language": chosen.language})
            if asked is not None and match_language(asked, caps) != code:
                log.info("Wyoming: the voice %r asks for %s; its language %r is not used", chosen.voice, code, asked)
            return code if caps.languages else None
        default = self.service.config.language
        if not caps.languages:
            return None
        if asked is None:
            return default
        if (code := match_language(asked, caps)) is not None:
            return code
        log.warning("Wyoming: the model does not speak %r; speaking %s", asked, default or "its default language")
        return default

    def _add_text(self, utterance: Utterance, text: str) -> None:
        """Send complete sentences to the worker: as a new request, or added to the utterance's request."""
        if utterance.failure is not None:
            return
        try:
            parts = plan(text)
        except TextInputError as exc:
            if exc.code != "text.nothing_to_say":
                raise JobFailed(exc.code, exc.data) from None
            return
        if utterance.job is not None:
            if isinstance(utterance.job, StreamedSpeechJob):
                utterance.job.extend(parts)
            return
        loop = asyncio.get_running_loop()
        request = replace(utterance.request, text=text)
        try:
            if utterance.streamed:
                utterance.job = self.service.jobs.stream(request, loop, parts)
            else:
                utterance.job = self.service.jobs.submit(request, loop, parts)
        except QueueFull as exc:
            utterance.failure = JobFailed("wyoming.queue_full", {"requests": exc.waiting})
        utterance.changed.set()

    def _end_text(self, utterance: Utterance) -> None:
        utterance.ended = True
        if isinstance(utterance.job, StreamedSpeechJob):
            utterance.job.end_text()
        utterance.changed.set()

    # --- speaking ----------------------------------------------------------------------------------------------
    async def _speak_all(self) -> None:
        try:
            while True:
                await self._speak(await self._queue.get())
        except JobFailed as exc:
            if exc.cancelled:
                await self.stop()
            else:
                await self._refuse(exc)
                await self._hang_up(drain=False)
        except ConnectionError:
            await self.stop()

    async def _speak(self, utterance: Utterance) -> None:
        await self.write_event(AudioStart(rate=SAMPLE_RATE, width=WIDTH, channels=CHANNELS).event())
        sent = 0
        while utterance.job is None and utterance.failure is None and not utterance.ended:
            utterance.changed.clear()
            await utterance.changed.wait()
        if utterance.failure is not None:
            raise utterance.failure
        if utterance.job is None:  # nothing to say ("." is how Home Assistant tests a server): a short silence
            sent = await self._send_audio(silence(), sent)
        else:
            try:
                async for chunk in utterance.job.chunks(self._gone):
                    sent = await self._send_audio(chunk.samples, sent)
            finally:
                utterance.job.close()
        await self.write_event(AudioStop(timestamp=_ms(sent)).event())
        if utterance.streamed:
            await self.write_event(SynthesizeStopped().event())

    async def _send_audio(self, samples: np.ndarray, sent: int) -> int:
        """Write ``samples`` as 16-bit mono PCM chunks (all that is here now; the last piece may be shorter)."""
        step = self.service.config.samples_per_chunk
        for start in range(0, samples.size, step):
            piece = samples[start : start + step]
            chunk = AudioChunk(
                rate=SAMPLE_RATE, width=WIDTH, channels=CHANNELS, audio=pcm16(piece), timestamp=_ms(sent)
            )
            await self.write_event(chunk.event())
            sent += piece.size
        return sent

    async def _gone(self) -> bool:
        return self._closed

    async def _hang_up(self, drain: bool) -> None:
        """End the connection after an ``error`` event: its requests are cancelled, the client is sent the end of
        the stream, and what it still sends is read and dropped until it closes its side too (at most
        :data:`LINGER_S`): by this task (``drain``, the event reader's), or by the event reader meanwhile."""
        self._hanging_up = True
        speaker = self._speaker
        if speaker is not None and speaker is not asyncio.current_task() and not speaker.done():
            speaker.cancel()  # nothing more is said after the error
            with contextlib.suppress(asyncio.CancelledError):
                await speaker
        for utterance in self._utterances:
            utterance.close()
        with contextlib.suppress(OSError, RuntimeError):
            if self.writer.can_write_eof():
                self.writer.write_eof()
        if not drain:
            self._linger = asyncio.get_running_loop().call_later(LINGER_S, self._cut)
            return
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(self._drop_input(), LINGER_S)

    async def _drop_input(self) -> None:
        while await self.reader.read(64 * 1024):
            pass

    def _cut(self) -> None:
        """The client has not closed its side in time: the event reader stops (and closes the connection)."""
        self._is_running = False
        self.reader.feed_eof()

    async def _refuse(self, exc: JobFailed) -> None:
        """Say why a request cannot be spoken (the connection is ended next)."""
        text = describe(exc.code, exc.data, "api")
        log.warning("Wyoming: %s (connection from %s)", text, self.peer)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.write_event(Error(text=text, code=exc.code).event())


def _ms(samples: int) -> int:
    return samples * 1000 // SAMPLE_RATE


def first_usable_voice(voices: ApiVoices) -> VoiceReference | None:
    """The library's first voice whose recording can be used (``None``: not one)."""
    for entry in voices.list():
        with contextlib.suppress(ChatterboxError):
            return voices.resolve(entry.name, False)
    return None


def without_voice(service: Service) -> bool:
    """The loaded model has no voice of its own and the library no usable voice: every request would fail."""
    pipe = service.worker.pipeline
    if pipe is None or pipe.capabilities.has_default_voice:
        return False
    return first_usable_voice(service.voices) is None
