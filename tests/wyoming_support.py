"""Helpers for the Wyoming tests: a server on loopback and a free port, and a client that talks to it as Home
Assistant's Wyoming integration does (the ``wyoming`` library's ``AsyncTcpClient``)."""

from __future__ import annotations

import asyncio
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped, SynthesizeVoice

from core.api.wyoming import WyomingConfig, WyomingServer
from core.voices import VoiceLibrary

TIMEOUT = 60.0


@contextmanager
def wyoming_serving(worker, library_dir: Path, config: WyomingConfig | None = None, **kwargs):
    server = WyomingServer(worker, VoiceLibrary(library_dir), config, "127.0.0.1", 0, **kwargs)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Heard:
    """What a client received: the events in order with their arrival times, and the audio."""

    events: list[tuple[float, Event]] = field(default_factory=list)
    start: AudioStart | None = None
    chunks: list[tuple[float, AudioChunk]] = field(default_factory=list)
    errors: list[Error] = field(default_factory=list)
    stopped: bool = False
    synthesize_stopped: bool = False

    @property
    def audio(self) -> bytes:
        return b"".join(c.audio for _, c in self.chunks)

    @property
    def samples(self) -> int:
        return len(self.audio) // 2

    @property
    def types(self) -> list[str]:
        return [e.type for _, e in self.events]


async def listen(client: AsyncTcpClient, heard: Heard, until: str) -> Heard:
    """Read events until ``until`` (``audio-stop`` or ``synthesize-stopped``), an error, or the connection's end."""
    while True:
        event = await asyncio.wait_for(client.read_event(), TIMEOUT)
        if event is None:
            return heard
        now = time.monotonic()
        heard.events.append((now, event))
        if AudioStart.is_type(event.type):
            heard.start = AudioStart.from_event(event)
        elif AudioChunk.is_type(event.type):
            heard.chunks.append((now, AudioChunk.from_event(event)))
        elif AudioStop.is_type(event.type):
            heard.stopped = True
        elif SynthesizeStopped.is_type(event.type):
            heard.synthesize_stopped = True
        elif Error.is_type(event.type):
            heard.errors.append(Error.from_event(event))
            return heard
        if event.type == until:
            return heard


async def synthesize(port: int, text: str, voice: str | None = None) -> Heard:
    """Home Assistant's plain request (``async_get_tts_audio``): one ``synthesize``, audio until ``audio-stop``."""
    async with AsyncTcpClient("127.0.0.1", port) as client:
        chosen = SynthesizeVoice(name=voice) if voice is not None else None
        await client.write_event(Synthesize(text=text, voice=chosen).event())
        return await listen(client, Heard(), "audio-stop")


async def synthesize_streamed(port: int, pieces: list[str], voice: str | None = None) -> Heard:
    """Home Assistant's streamed request (``async_stream_tts_audio``): ``synthesize-start``, the text in pieces, the
    whole text once more as ``synthesize`` (for older servers), ``synthesize-stop``; the audio is read meanwhile."""
    chosen = SynthesizeVoice(name=voice) if voice is not None else None
    async with AsyncTcpClient("127.0.0.1", port) as client:

        async def write() -> None:
            await client.write_event(SynthesizeStart(voice=chosen).event())
            for piece in pieces:
                await client.write_event(SynthesizeChunk(text=piece).event())
            await client.write_event(Synthesize(text="".join(pieces), voice=chosen).event())
            await client.write_event(SynthesizeStop().event())

        writer = asyncio.ensure_future(write())
        try:
            heard = await listen(client, Heard(), "synthesize-stopped")
            await writer
        finally:
            writer.cancel()
        return heard


async def synthesize_raw(port: int, text: str, voice: dict, streamed: bool = False) -> Heard:
    """A request whose ``voice`` is sent as it is (the library's ``SynthesizeVoice`` drops a ``language`` beside a
    ``name``, which other clients may send together); streamed as Home Assistant streams, its text written while
    the answer is read, and a refusal that ends the connection meanwhile is no failure of the client's."""
    async with AsyncTcpClient("127.0.0.1", port) as client:
        if not streamed:
            await client.write_event(Event(type="synthesize", data={"text": text, "voice": voice}))
            return await listen(client, Heard(), "audio-stop")

        async def write() -> None:
            with suppress(ConnectionError):
                await client.write_event(Event(type="synthesize-start", data={"voice": voice}))
                await client.write_event(SynthesizeChunk(text=text).event())
                await client.write_event(SynthesizeStop().event())

        writer = asyncio.ensure_future(write())
        try:
            return await listen(client, Heard(), "synthesize-stopped")
        finally:
            await writer
