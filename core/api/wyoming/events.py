"""Reading Wyoming events from a connection with limits: a header line, optional JSON data, an optional payload
(the protocol of the ``wyoming`` library's ``async_read_event``), refusing what is malformed or too large instead of
reading it into memory, and the speech events' fields checked before they are used."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from wyoming.event import Event

MAX_LINE = 64 * 1024
"""A header line (the event's type and lengths, and small data) is at most this long."""


class BadEvent(Exception):
    """An event this server cannot take: the connection that sent it is ended."""


async def read_event(reader: asyncio.StreamReader, max_data: int, max_payload: int) -> Event | None:
    """The next event, or ``None`` when the client has closed the connection (:class:`BadEvent` if malformed)."""
    try:
        line = await reader.readline()
    except ValueError:  # asyncio's LimitOverrunError: a line longer than the reader's limit
        raise BadEvent("a header line is too long") from None
    if not line:
        return None
    if not line.endswith(b"\n"):
        return None  # the connection ended in the middle of a line
    header = _json(line, "header")
    kind = header.get("type")
    if not isinstance(kind, str) or not kind:
        raise BadEvent("an event without a type")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise BadEvent(f"{kind}: its data is not an object")
    data_length = _length(header, "data_length", max_data, kind)
    payload_length = _length(header, "payload_length", max_payload, kind)
    try:
        if data_length:
            extra = _json(await reader.readexactly(data_length), f"{kind} data")
            data = {**data, **extra}
        payload = await reader.readexactly(payload_length) if payload_length else None
    except asyncio.IncompleteReadError:
        return None
    return Event(type=kind, data=data, payload=payload)


def _json(raw: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BadEvent(f"the {what} is not JSON") from None
    if not isinstance(value, dict):
        raise BadEvent(f"the {what} is not a JSON object")
    return value


def _length(header: dict[str, Any], key: str, limit: int, kind: str) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BadEvent(f"{kind}: {key} is not a length")
    if value > limit:
        raise BadEvent(f"{kind}: {key} {value} is over the limit of {limit}")
    return value


def text_field(event: Event) -> str:
    """The ``text`` of a ``synthesize`` or ``synthesize-chunk`` event (:class:`BadEvent` when it is not a string)."""
    text = event.data.get("text")
    if not isinstance(text, str):
        raise BadEvent(f"{event.type}: 'text' is not a string")
    return text


def voice_field(event: Event) -> tuple[str | None, str | None]:
    """The voice's ``name`` and ``language`` asked for (either may be missing); read from the raw data, since the
    library's ``SynthesizeVoice.from_dict`` drops the language when a name is given."""
    voice = event.data.get("voice") or {}
    if not isinstance(voice, dict):
        raise BadEvent(f"{event.type}: 'voice' is not an object")
    name, language = voice.get("name"), voice.get("language")
    if name is not None and not isinstance(name, str):
        raise BadEvent(f"{event.type}: the voice's name is not a string")
    if language is not None and not isinstance(language, str):
        raise BadEvent(f"{event.type}: the voice's language is not a string")
    return name, language
