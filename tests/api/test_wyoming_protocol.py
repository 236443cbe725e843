"""The Wyoming server's edges: malformed events end that connection only, the connection limit, zeroconf (checked
without sending anything on the network), the address ``serve --wyoming`` takes, and cutting streamed text at
sentence ends."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.ping import Ping
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart

from core.api.wyoming import DEFAULT_URI, WyomingConfig, WyomingServer, parse_uri
from core.api.wyoming.discovery import SERVICE_TYPE, instance_name, service_info
from core.api.wyoming.sentences import SentenceStream
from core.cli.serve import WYOMING_URI
from core.engine import InvalidOptions
from core.voices import VoiceLibrary
from tests.api_support import wait_idle
from tests.wyoming_support import Heard, listen, synthesize, wyoming_serving


async def _raw(port: int, data: bytes) -> list[dict]:
    """Send raw bytes; return the events answered (headers) until the server closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answered = []
    try:
        while line := await asyncio.wait_for(reader.readline(), 10):
            header = json.loads(line)
            if header.get("data_length"):
                data = json.loads(await reader.readexactly(header["data_length"]))
                header["data"] = {**header.get("data", {}), **data}
            answered.append(header)
    except ConnectionResetError:  # closed with our bytes unread: the kernel resets the connection
        pass
    writer.close()
    return answered


def _line(event: dict) -> bytes:
    return json.dumps(event).encode() + b"\n"


MALFORMED = {
    "not JSON": b"this is not an event\n",
    "no type": _line({"data": {"text": "x"}}),
    "text not a string": _line({"type": "synthesize", "data": {"text": 42}}),
    "synthesize without text": _line({"type": "synthesize", "data": {}}),
    "voice not an object": _line({"type": "synthesize", "data": {"text": "Hi.", "voice": "Ada"}}),
    "chunk outside a stream": _line({"type": "synthesize-chunk", "data": {"text": "Hi."}}),
    "stop outside a stream": _line({"type": "synthesize-stop"}),
    "huge data": _line({"type": "synthesize", "data_length": 10**12}),
    "negative payload": _line({"type": "audio-chunk", "payload_length": -1}),
    "a line too long": b'{"type": "synthesize", "data": {"text": "' + b"a" * 200_000 + b'"}}\n',
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_event_ends_that_connection_only(worker, tmp_path, case):
    with wyoming_serving(worker, tmp_path / "voices") as server:

        async def both() -> tuple[list[dict], Heard]:
            async with AsyncTcpClient("127.0.0.1", server.port) as bystander:  # another client, connected before
                await bystander.write_event(Describe().event())
                answered = await _raw(server.port, MALFORMED[case])
                assert Info.is_type((await bystander.read_event()).type)
                await bystander.write_event(Synthesize(text="Still serving.").event())
                return answered, await listen(bystander, Heard(), "audio-stop")

        answered, heard = asyncio.run(both())
        assert [a["type"] for a in answered] == ["error"]  # said why (the rest read, not reset), then closed
        assert heard.stopped and heard.samples > 0
        assert wait_idle(worker, server)


def test_unknown_events_are_ignored_and_ping_is_answered(worker, tmp_path):
    with wyoming_serving(worker, tmp_path / "voices") as server:

        async def talk() -> list[str]:
            async with AsyncTcpClient("127.0.0.1", server.port) as client:
                await client.write_event(Event(type="run-satellite"))
                await client.write_event(Ping(text="hello").event())
                pong = await asyncio.wait_for(client.read_event(), 10)
                return [pong.type, pong.data["text"]]

        assert asyncio.run(talk()) == ["pong", "hello"]


def test_a_connection_over_the_limit_is_told_and_closed(worker, tmp_path):
    with wyoming_serving(worker, tmp_path / "voices", WyomingConfig(max_connections=1)) as server:

        async def crowd() -> list[dict]:
            async with AsyncTcpClient("127.0.0.1", server.port) as first:
                await first.write_event(Describe().event())
                await asyncio.wait_for(first.read_event(), 10)
                return await _raw(server.port, b"")

        answered = asyncio.run(crowd())
        assert [(a["type"], a["data"]["code"]) for a in answered] == [("error", "wyoming.busy")]
        assert asyncio.run(synthesize(server.port, "Room again.")).samples > 0


def test_a_stream_that_is_never_finished_is_cancelled_when_its_client_leaves(worker, tmp_path):
    with wyoming_serving(worker, tmp_path / "voices") as server:

        async def leave() -> None:
            async with AsyncTcpClient("127.0.0.1", server.port) as client:
                await client.write_event(SynthesizeStart().event())
                await client.write_event(SynthesizeChunk(text="One sentence is here. And another one. Then").event())
                await listen(client, Heard(), "audio-chunk")

        asyncio.run(leave())
        assert wait_idle(worker, server)


# --- zeroconf ------------------------------------------------------------------------------------------------------
class RecordingAnnouncer:
    """Records what would be registered; sends nothing."""

    registered: list = []
    unregistered = 0

    async def register(self, info) -> None:
        RecordingAnnouncer.registered.append(info)

    async def unregister(self) -> None:
        RecordingAnnouncer.unregistered += 1


def test_zeroconf_announces_a_wyoming_service_at_the_address_and_port(worker, tmp_path):
    RecordingAnnouncer.registered, RecordingAnnouncer.unregistered = [], 0
    with wyoming_serving(worker, tmp_path / "voices", announce=True, announcer=RecordingAnnouncer) as server:
        (info,) = RecordingAnnouncer.registered
        assert server.announced is info
        assert info.type == SERVICE_TYPE == "_wyoming._tcp.local."
        assert info.name == f"{instance_name()}._wyoming._tcp.local." and info.name.startswith("chatterbox-desk-")
        assert info.port == server.port and info.parsed_addresses() == ["127.0.0.1"]
    assert RecordingAnnouncer.unregistered == 1


def test_loopback_is_not_announced_by_default(worker, tmp_path):
    RecordingAnnouncer.registered = []
    with wyoming_serving(worker, tmp_path / "voices", announcer=RecordingAnnouncer) as server:
        assert not server.open and not server.announce and server.announced is None
    assert RecordingAnnouncer.registered == []


def test_the_service_name_is_a_dns_label_naming_the_machine():
    assert instance_name("Kitchen_PC.local") == "chatterbox-desk-kitchen-pc"
    assert len(instance_name("x" * 200)) == 63
    info = service_info("192.168.1.20", 10200, "chatterbox-desk-test")
    assert info.server == "chatterbox-desk-test.local." and info.parsed_addresses() == ["192.168.1.20"]


# --- the address ---------------------------------------------------------------------------------------------------
def test_the_address_is_tcp_host_and_port():
    assert parse_uri(DEFAULT_URI) == ("127.0.0.1", 10200) and DEFAULT_URI == WYOMING_URI
    assert parse_uri("tcp://0.0.0.0:10222") == ("0.0.0.0", 10222)
    assert parse_uri("localhost:10200") == ("localhost", 10200)
    assert parse_uri("tcp://[::1]:10200") == ("::1", 10200)
    for wrong in ("tcp://127.0.0.1", "unix:///tmp/x", "http://h:1", "tcp://h:99999", "tcp://h:1/path"):
        with pytest.raises(InvalidOptions) as caught:
            parse_uri(wrong)
        assert caught.value.code == "wyoming.address"


def test_a_port_in_use_is_a_clear_error(worker, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(InvalidOptions) as caught:
            WyomingServer(worker, VoiceLibrary(tmp_path / "voices"), host="127.0.0.1", port=port)
        assert caught.value.code == "api.cannot_listen"


# --- streamed text, cut at sentence ends ---------------------------------------------------------------------------
def _feed(pieces: list[str]) -> list[str]:
    stream = SentenceStream()
    released = [stream.add(piece) for piece in pieces]
    return [*released, stream.finish()]


def test_a_sentence_is_released_once_more_text_can_no_longer_join_it():
    assert _feed(["Hello ", "there. ", "How are", " you?"]) == ["", "Hello there. ", "", "", "How are you?"]
    assert _feed(["Hello there.", " How", " are you?"]) == ["", "Hello there. ", "", "How are you?"]


def test_a_number_is_not_cut_at_its_point():
    assert _feed(["It costs 3.", "14 dollars. ", "Then"]) == ["", "It costs 3.14 dollars. ", "", "Then"]


def test_paragraphs_pauses_and_other_scripts_end_sentences():
    assert _feed(["A heading\n\n", "Body"]) == ["A heading\n\n", "", "Body"]
    assert _feed(["Wait [pause:1s]", " then go"]) == ["Wait [pause:1s]", "", " then go"]
    assert _feed(["Wait [pau", "se] then"]) == ["", "Wait [pause] ", "then"]
    assert _feed(["你好。", "再见"]) == ["你好。", "", "再见"]


def test_text_with_nothing_to_say_waits_for_the_sentence_after_it():
    assert _feed(["[pause] ", "... ", "Now."]) == ["", "", "", "[pause] ... Now."]
