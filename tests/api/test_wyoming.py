"""The Wyoming server, driven by the ``wyoming`` library's own client as Home Assistant's integration drives it."""

from __future__ import annotations

import asyncio

import httpx
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

from core.api.wyoming import WyomingConfig
from core.engine import SynthesisOptions
from tests.api_support import serving
from tests.wyoming_support import synthesize, synthesize_streamed, wyoming_serving


def test_describe_answers_one_tts_program_with_the_voices_and_streaming(worker, tmp_path):
    async def ask(port):
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            event = await asyncio.wait_for(client.read_event(), 10)
            return Info.from_event(event)

    with wyoming_serving(worker, tmp_path / "voices") as server:
        info = asyncio.run(ask(server.port))
    (program,) = info.tts
    assert program.name == "chatterbox-desk" and program.installed and program.supports_synthesize_streaming
    assert program.version and program.attribution.name
    names = [v.name for v in program.voices]
    assert names == ["default"]
    assert program.voices[0].languages == ["en"] and program.voices[0].installed


def test_a_plain_synthesize_streams_pcm_as_long_as_the_http_api_speaks_it(worker, tmp_path):
    text = "Hello there. This is the second sentence."
    config = WyomingConfig(options=SynthesisOptions(seed=11))
    with wyoming_serving(worker, tmp_path / "voices", config) as server:
        heard = asyncio.run(synthesize(server.port, text))
    assert heard.types[0] == "audio-start" and heard.types[-1] == "audio-stop"
    assert heard.start is not None and (heard.start.rate, heard.start.width, heard.start.channels) == (24000, 2, 1)
    assert all(c.samples <= 1024 for _, c in heard.chunks)
    with serving(worker, tmp_path / "voices") as api:
        body = {"input": text, "response_format": "pcm", "seed": 11}
        direct = httpx.post(api.url + "/audio/speech", json=body, timeout=60).content
    assert heard.samples == len(direct) // 2


def test_a_streamed_text_is_spoken_sentence_by_sentence(worker, tmp_path):
    pieces = ["Hello ", "there. ", "This is ", "the second sentence", "."]
    with wyoming_serving(worker, tmp_path / "voices") as server:
        heard = asyncio.run(synthesize_streamed(server.port, pieces))
    assert heard.types[0] == "audio-start"
    assert heard.types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert heard.types.count("audio-start") == 1 and heard.samples > 0
