"""First audio through Wyoming (Home Assistant's protocol) beside the HTTP API's, on one server: ``bench-api --only
wyoming``.

The same two-sentence text, in rounds that alternate the three ways a client asks for it:

- **HTTP**: ``POST /v1/audio/speech`` as raw PCM; the time to the first audio byte.
- **Wyoming, plain**: one ``synthesize`` event (Home Assistant's ``async_get_tts_audio``); the time to the first
  ``audio-chunk``.
- **Wyoming, streamed**: ``synthesize-start``, the text word by word as a language model writes it (one
  ``synthesize-chunk`` every :data:`WORD_GAP_S`), the whole text once more as ``synthesize`` and ``synthesize-stop``
  (Home Assistant's ``async_stream_tts_audio``); the time to the first ``audio-chunk`` from ``synthesize-start``,
  and whether it came before ``synthesize-stop`` was sent (it must: the first sentence is spoken while the rest is
  still being written).

Each figure is the median of the rounds.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

TEXT = "The train left at seven. Most of us were still asleep."
"""Two short sentences: the first audio needs only the first; a faithful bundle's random weights never say STOP, so
each sentence runs to its token cap (16 a text token on Turbo), and short ones keep a round short."""
WORD_GAP_S = 0.05
"""A fast language model's pace: 20 words a second."""


async def _first_chunk_plain(port: int, voice: str | None) -> float:
    from wyoming.audio import AudioChunk, AudioStop
    from wyoming.client import AsyncTcpClient
    from wyoming.tts import Synthesize, SynthesizeVoice

    chosen = SynthesizeVoice(name=voice) if voice else None
    async with AsyncTcpClient("127.0.0.1", port) as client:
        started = time.perf_counter()
        await client.write_event(Synthesize(text=TEXT, voice=chosen).event())
        first = None
        while (event := await client.read_event()) is not None:
            if first is None and AudioChunk.is_type(event.type):
                first = time.perf_counter() - started
            if AudioStop.is_type(event.type) or event.type == "error":
                break
        return first if first is not None else float("nan")


async def _first_chunk_streamed(port: int, voice: str | None) -> tuple[float, bool]:
    from wyoming.audio import AudioChunk
    from wyoming.client import AsyncTcpClient
    from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

    chosen = SynthesizeVoice(name=voice) if voice else None
    stop_sent: list[float] = []
    async with AsyncTcpClient("127.0.0.1", port) as client:

        async def write() -> None:
            await client.write_event(SynthesizeStart(voice=chosen).event())
            for word in TEXT.split(" "):
                await client.write_event(SynthesizeChunk(text=word + " ").event())
                await asyncio.sleep(WORD_GAP_S)
            await client.write_event(Synthesize(text=TEXT, voice=chosen).event())
            await client.write_event(SynthesizeStop().event())
            stop_sent.append(time.perf_counter())

        started = time.perf_counter()
        writer = asyncio.ensure_future(write())
        first = None
        try:
            while (event := await client.read_event()) is not None:
                if first is None and AudioChunk.is_type(event.type):
                    first = time.perf_counter()
                if event.type in ("synthesize-stopped", "error"):
                    break
            await writer
        finally:
            writer.cancel()
    if first is None:
        return float("nan"), False
    return first - started, not stop_sent or first < stop_sent[0]


def first_audio(http_url: str, wyoming_port: int, voice: str | None, rounds: int, post) -> dict[str, Any]:
    """The three ways alternated for ``rounds``; ``post(url, body)`` is the HTTP bench's timed request."""
    found: dict[str, list[float]] = {"http": [], "wyoming_plain": [], "wyoming_streamed": []}
    before_stop = []
    asyncio.run(_first_chunk_plain(wyoming_port, voice))  # warm-up through Wyoming too
    for _ in range(rounds):
        found["http"].append(post(http_url, {"input": TEXT, "response_format": "pcm"})["first_audio_s"])
        found["wyoming_plain"].append(asyncio.run(_first_chunk_plain(wyoming_port, voice)))
        seconds, early = asyncio.run(_first_chunk_streamed(wyoming_port, voice))
        found["wyoming_streamed"].append(seconds)
        before_stop.append(early)
    report: dict[str, Any] = {name: round(statistics.median(v), 3) for name, v in found.items()}
    report["rounds"] = rounds
    report["streamed_first_audio_before_stop"] = all(before_stop)
    report["text_seconds_to_write"] = round(len(TEXT.split(" ")) * WORD_GAP_S, 2)
    return report
