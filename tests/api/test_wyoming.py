"""The Wyoming server, driven by the ``wyoming`` library's own client as Home Assistant's integration drives it:
the info it describes, a plain and a streamed synthesize, voices, two clients at once and a client that goes away."""

from __future__ import annotations

import asyncio
import logging
import shutil
import time

import httpx
import pytest
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from core.api.wyoming import WyomingConfig
from core.api.wyoming.info import VoiceName, read_voice_name
from core.engine import RuntimeOptions, SynthesisOptions
from tests.api_support import long_text, serving, started_worker, wait_idle
from tests.wyoming_support import Heard, listen, synthesize, synthesize_raw, synthesize_streamed, wyoming_serving

SEEDED = WyomingConfig(options=SynthesisOptions(seed=11))


async def _describe(port: int) -> Info:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Describe().event())
        event = await asyncio.wait_for(client.read_event(), 10)
        assert event is not None
        return Info.from_event(event)


def test_describe_answers_one_tts_program_with_the_voices_and_streaming(worker, tmp_path, voice_wav):
    with wyoming_serving(worker, tmp_path / "voices") as server:
        server.service.library.add("Kitchen Voice", voice_wav)
        info = asyncio.run(_describe(server.port))
    (program,) = info.tts
    assert program.name == "chatterbox-desk" and program.installed and program.supports_synthesize_streaming
    assert program.version and program.attribution.name
    assert [v.name for v in program.voices] == ["default", "Kitchen Voice"]
    assert all(v.languages == ["en"] and v.installed for v in program.voices)


@pytest.fixture(scope="module")
def multilingual(bundles):
    # The float32 decoder: an int8 one would be made on a loading thread that outlives the test that loads it.
    worker = started_worker(bundles["multilingual"], RuntimeOptions(provider="cpu", decoder_precision="fp32"))
    yield worker
    assert worker.shutdown()


def _as_home_assistant_lists(program) -> dict[str, list[tuple[str, str]]]:
    """The voices per language as Home Assistant's Wyoming integration builds its lists (tts.py): each installed
    voice under each of its ``languages``, as (voice_id, shown name), sorted by the shown name."""
    lists: dict[str, list[tuple[str, str]]] = {}
    for voice in program.voices:
        for language in voice.languages if voice.installed else []:
            lists.setdefault(language, []).append((voice.name, voice.description or voice.name))
    return {language: sorted(voices, key=lambda v: v[1]) for language, voices in lists.items()}


@pytest.mark.parametrize("configured", [None, "fr"])
def test_a_multilingual_model_offers_each_voice_once_per_language(multilingual, tmp_path, voice_wav, configured):
    codes = list(multilingual.pipeline.capabilities.languages)
    config = WyomingConfig(options=SynthesisOptions(language=configured))
    with wyoming_serving(multilingual, tmp_path / "voices", config) as server:
        server.service.library.add("Kitchen Voice", voice_wav)
        info = asyncio.run(_describe(server.port))
    (program,) = info.tts
    by_name = {v.name: v for v in program.voices}
    assert len(program.voices) == len(by_name) == 2 * (1 + len(codes)) and len(codes) > 1
    default = configured or "en"
    for name in ("default", "Kitchen Voice"):
        assert by_name[name].languages == [default]  # the plain names stay: automations that name them still work
        for code in codes:
            assert by_name[f"{name}@{code}"].languages == [code]
    assert "French (fr)" in by_name["Kitchen Voice@fr"].description
    lists = _as_home_assistant_lists(program)
    assert sorted(lists) == sorted(codes)
    assert [voice for voice, _ in lists["de"]] == ["default@de", "Kitchen Voice@de"]  # each voice once, in German
    assert len(lists[default]) == 4  # and the plain names beside their own language's
    assert all(len({shown for _, shown in voices}) == len(voices) for voices in lists.values())


def test_an_english_model_offers_no_language_variants(worker, tmp_path):
    with wyoming_serving(worker, tmp_path / "voices") as server:
        info = asyncio.run(_describe(server.port))
    assert [(v.name, v.languages) for v in info.tts[0].voices] == [("default", ["en"])]


def test_a_plain_synthesize_streams_pcm_as_long_as_the_http_api_speaks_it(worker, tmp_path):
    text = "Hello there. This is the second sentence."
    with wyoming_serving(worker, tmp_path / "voices", SEEDED) as server:
        heard = asyncio.run(synthesize(server.port, text))
    assert heard.types[0] == "audio-start" and heard.types[-1] == "audio-stop"
    assert heard.start is not None and (heard.start.rate, heard.start.width, heard.start.channels) == (24000, 2, 1)
    assert all(c.samples <= 1024 and (c.rate, c.width, c.channels) == (24000, 2, 1) for _, c in heard.chunks)
    with serving(worker, tmp_path / "voices") as api:
        body = {"input": text, "response_format": "pcm", "seed": 11}
        direct = httpx.post(api.url + "/audio/speech", json=body, timeout=60).content
    assert heard.samples == len(direct) // 2


def test_a_streamed_text_is_spoken_once_sentence_by_sentence(worker, tmp_path):
    """Home Assistant sends the whole text again as ``synthesize`` inside the stream: it is not spoken twice."""
    pieces = ["Hello ", "there. ", "This is ", "the second sentence", "."]
    with wyoming_serving(worker, tmp_path / "voices", SEEDED) as server:
        streamed = asyncio.run(synthesize_streamed(server.port, pieces))
        plain = asyncio.run(synthesize(server.port, "".join(pieces)))
    assert streamed.types[0] == "audio-start" and streamed.types.count("audio-start") == 1
    assert streamed.types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert streamed.samples == plain.samples  # the same sentences with the same seeds, once


def test_the_first_audio_of_a_stream_comes_before_synthesize_stop(worker, tmp_path):
    async def talk(port: int) -> tuple[Heard, Heard]:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(SynthesizeStart().event())
            await client.write_event(SynthesizeChunk(text="The first sentence is complete. ").event())
            await client.write_event(SynthesizeChunk(text="The second one is still being wri").event())
            early = await listen(client, Heard(), "audio-chunk")  # nothing more is sent until audio comes
            await client.write_event(SynthesizeChunk(text="tten.").event())
            await client.write_event(SynthesizeStop().event())
            rest = await listen(client, Heard(), "synthesize-stopped")
            return early, rest

    with wyoming_serving(worker, tmp_path / "voices") as server:
        early, rest = asyncio.run(talk(server.port))
        assert wait_idle(worker, server)
    assert early.types == ["audio-start", "audio-chunk"]
    assert rest.synthesize_stopped and rest.stopped and rest.samples > early.samples


def test_an_unknown_voice_falls_back_to_the_default_with_a_notice(worker, tmp_path, caplog):
    with wyoming_serving(worker, tmp_path / "voices") as server, caplog.at_level(logging.WARNING):
        heard = asyncio.run(synthesize(server.port, "Who is speaking?", voice="Nobody Here"))
    assert heard.stopped and heard.samples > 0 and not heard.errors
    assert any("Nobody Here" in r.getMessage() for r in caplog.records)


def test_a_library_voice_is_chosen_by_name(worker, tmp_path, voice_wav):
    with wyoming_serving(worker, tmp_path / "voices", SEEDED) as server:
        server.service.library.add("Kitchen Voice", voice_wav)
        named = asyncio.run(synthesize(server.port, "Dinner is ready now.", voice="kitchen voice"))
        default = asyncio.run(synthesize(server.port, "Dinner is ready now."))
    assert named.samples > 0 and named.audio != default.audio


def test_nothing_to_say_is_a_short_silence(worker, tmp_path):
    with wyoming_serving(worker, tmp_path / "voices") as server:
        heard = asyncio.run(synthesize(server.port, "."))
    assert heard.stopped and heard.samples > 0 and not any(heard.audio)


def test_two_clients_take_turns_sentence_by_sentence(worker, tmp_path):
    async def both(port: int) -> tuple[Heard, Heard, float]:
        long_task = asyncio.ensure_future(synthesize(port, long_text(12, "long")))
        await asyncio.sleep(0.3)
        short = await synthesize(port, "Just this one.")
        short_done = time.monotonic()
        return await long_task, short, short_done

    with wyoming_serving(worker, tmp_path / "voices") as server:
        long, short, short_done = asyncio.run(both(server.port))
        assert wait_idle(worker, server)
    assert long.stopped and short.stopped and short.samples > 0
    long_done = long.events[-1][0]
    assert short_done < long_done  # served between the long request's sentences, not after all of them


def test_a_client_that_disconnects_mid_stream_frees_the_worker(worker, tmp_path):
    async def leave(port: int) -> Heard:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Synthesize(text=long_text(30, "gone")).event())
            return await listen(client, Heard(), "audio-chunk")

    with wyoming_serving(worker, tmp_path / "voices") as server:
        first = asyncio.run(leave(server.port))
        assert first.chunks
        assert wait_idle(worker, server, timeout=5.0)  # its sentences were cancelled, not spoken to nobody
        started = time.monotonic()
        heard = asyncio.run(synthesize(server.port, "Still here."))
        assert heard.stopped and heard.samples > 0 and time.monotonic() - started < 10


def test_the_speaking_settings_and_a_voice_language_reach_the_worker(multilingual, tmp_path):
    config = WyomingConfig(options=SynthesisOptions(seed=5, language="fr"))
    with wyoming_serving(multilingual, tmp_path / "voices", config) as server:

        async def ask(language: str | None, name: str | None = None) -> Heard:
            async with AsyncTcpClient("127.0.0.1", server.port) as client:
                voice = SynthesizeVoice(name=name, language=language) if language or name else None
                await client.write_event(Synthesize(text="Bonjour tout le monde.", voice=voice).event())
                return await listen(client, Heard(), "audio-stop")

        french, german, default = (asyncio.run(ask(lang)) for lang in ("fr", "de", None))
        german_by_name, french_by_name = (asyncio.run(ask(None, f"default@{lang}")) for lang in ("de", "fr"))
    assert french.samples and german.samples
    assert french.audio == default.audio != german.audio
    assert german_by_name.audio == german.audio and french_by_name.audio == french.audio


def _requests(monkeypatch, server) -> list:
    """The requests the handler gives the API's queue, recorded."""
    asked: list = []
    for method in ("submit", "stream"):
        real = getattr(server.jobs, method)

        def spy(request, *args, _real=real):
            asked.append(request)
            return _real(request, *args)

        monkeypatch.setattr(server.jobs, method, spy)
    return asked


@pytest.mark.parametrize("streamed", [False, True])
def test_a_voice_at_a_language_speaks_that_voice_in_that_language(
    multilingual, tmp_path, voice_wav, monkeypatch, streamed
):
    with wyoming_serving(multilingual, tmp_path / "voices") as server:
        server.service.library.add("Kitchen Voice", voice_wav)
        asked = _requests(monkeypatch, server)
        if streamed:
            heard = asyncio.run(synthesize_streamed(server.port, ["Le dîner ", "est prêt."], "Kitchen Voice@fr"))
        else:
            heard = asyncio.run(synthesize(server.port, "Le dîner est prêt.", "kitchen voice@FR"))
        plain = asyncio.run(synthesize(server.port, "Le dîner est prêt.", "Kitchen Voice"))
    assert heard.stopped and heard.samples > 0 and not heard.errors
    assert [(r.options.language, r.voice is not None) for r in asked] == [("fr", True), (None, True)]
    assert plain.samples > 0  # the plain name: the library voice in the server's default language


def test_home_assistants_language_is_honoured_and_a_names_language_wins(multilingual, tmp_path, monkeypatch, caplog):
    with wyoming_serving(multilingual, tmp_path / "voices") as server, caplog.at_level(logging.WARNING):
        asked = _requests(monkeypatch, server)
        for voice in (
            {"language": "de_DE"},  # a language and no name: what the library's SynthesizeVoice sends
            {"name": "default", "language": "it"},  # both, as a client that writes its own events may send them
            {"name": "default@es", "language": "it"},  # the name's @code is the more specific choice
            {"language": "xx"},  # a language hint the model lacks: the server's default language, with a notice
        ):
            heard = asyncio.run(synthesize_raw(server.port, "Hallo.", voice))
            assert heard.stopped and heard.samples > 0 and not heard.errors
    assert [r.options.language for r in asked] == ["de", "it", "es", None]
    assert any("'xx'" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_voice_at_a_language_the_model_lacks_is_refused_naming_it(multilingual, tmp_path, voice_wav, streamed):
    with wyoming_serving(multilingual, tmp_path / "voices") as server:
        server.service.library.add("Kitchen Voice", voice_wav)
        heard = asyncio.run(synthesize_raw(server.port, "Hello.", {"name": "Kitchen Voice@xx"}, streamed))
        (error,) = heard.errors
        assert error.code == "text.language_unsupported" and "'xx'" in error.text and "fr" in error.text
        assert "audio-start" not in heard.types  # refused before speaking: nothing in another language
        assert wait_idle(multilingual, server)
        assert asyncio.run(synthesize(server.port, "Encore.", "Kitchen Voice@fr")).samples > 0


def test_an_english_model_refuses_another_language_by_name(worker, tmp_path):
    with wyoming_serving(worker, tmp_path / "voices") as server:
        refused = asyncio.run(synthesize(server.port, "Bonjour.", "default@fr"))
        english = asyncio.run(synthesize(server.port, "Hello.", "default@en"))
    assert [e.code for e in refused.errors] == ["text.english_only"] and "'fr'" in refused.errors[0].text
    assert english.samples > 0 and not english.errors


@pytest.mark.parametrize("streamed", [False, True])
def test_a_missing_language_file_reaches_the_client_as_an_error(bundles, tmp_path, streamed):
    copy = shutil.copytree(bundles["multilingual"], tmp_path / "ml")
    (copy / "Cangjie5_TC.json").unlink()
    worker = started_worker(copy, RuntimeOptions(provider="cpu", decoder_precision="fp32"))
    try:
        with wyoming_serving(worker, tmp_path / "voices") as server:
            heard = asyncio.run(synthesize_raw(server.port, "你好。", {"name": "default@zh"}, streamed))
            assert wait_idle(worker, server)
            other = asyncio.run(synthesize(server.port, "Bonjour.", "default@fr"))
        (error,) = heard.errors
        assert error.code == "text.language_file_missing"
        assert "Chinese (zh)" in error.text and "Cangjie5_TC.json" in error.text and "--download zh" in error.text
        assert heard.samples == 0 and other.samples > 0  # said, not silence; other languages still speak
    finally:
        assert worker.shutdown()


def test_a_voice_name_reads_its_language_only_where_it_is_one():
    assert read_voice_name("Narrator@fr", False) == VoiceName("Narrator", "fr")
    assert read_voice_name("Narrator One@fr-FR", False) == VoiceName("Narrator One", "fr-FR")
    assert read_voice_name("me@home", False) == VoiceName("me@home")  # no language tag: a name
    assert read_voice_name("@fr", False) == VoiceName("@fr")
    assert read_voice_name("Ada@fr", True) == VoiceName("Ada@fr")  # a library voice of that very name


@pytest.mark.parametrize("streamed", [False, True])
def test_a_text_over_the_limit_is_refused_with_an_error(worker, tmp_path, streamed):
    config = WyomingConfig(max_input_chars=40)
    text = "This sentence is long enough. And so is this one, which is over."
    with wyoming_serving(worker, tmp_path / "voices", config) as server:
        if streamed:
            heard = asyncio.run(synthesize_streamed(server.port, [text[:30], text[30:]]))
        else:
            heard = asyncio.run(synthesize(server.port, text))
        assert [e.code for e in heard.errors] == ["wyoming.text_too_long"]
        assert wait_idle(worker, server)
        assert asyncio.run(synthesize(server.port, "Short.")).samples > 0
