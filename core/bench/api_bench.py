"""The local speech API measured through HTTP, as a client sees it: ``python -m core bench-api``.

- **Time to first byte per format**: a five-sentence request in each ``response_format`` (one run each); the first
  byte of the body, the first *audio* byte (past the container's header: the first byte of the first encoded frame
  is what a player needs), and the whole response, with the ratio first audio ÷ total.
- **Fair turns**: a 20-sentence request streams; after its third sentence a one-sentence request is sent; its first
  byte comes after how many sentences' time (one sentence's time: the 20-sentence request's total ÷ 20)? Once with
  the short request alone for reference, then while the long one streams.

Runs on a real server (uvicorn on a free port) over the app's inference worker, with a stand-in bundle by default
(``--standin original --size full --precision q4``), or ``--bundle``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

FORMATS = ("pcm", "wav", "mp3", "aac", "opus", "flac")
FIVE = (
    "The morning train left the station a little after seven. "
    "Most of the passengers were still half asleep. "
    "A woman by the window was reading a letter for the third time. "
    "Outside, the fields were white with frost. "
    "Nobody noticed when the train began to slow down."
)
HEADER_BYTES = {"wav": 44}
"""Bytes before the first audio sample where the container's header has a fixed size."""


VOICE: dict[str, str] = {}
"""``{"voice": NAME}`` sent with every request when the model has no voice of its own (Turbo)."""


def _post(url: str, body: dict, key: str | None = None) -> dict[str, Any]:
    """POST and read the body as it comes: when the first byte and the first audio came, the total, the data."""
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {**VOICE, **body}
    started = time.perf_counter()
    first = first_audio = None
    data = b""
    with httpx.stream("POST", url, json=body, headers=headers, timeout=600) as r:
        r.raise_for_status()
        for part in r.iter_bytes():
            now = time.perf_counter()
            first = first or now
            data += part
            if first_audio is None and len(data) > _header_size(body.get("response_format", "mp3"), data):
                first_audio = now
    total = time.perf_counter() - started
    return {
        "first_byte_s": (first or started) - started,
        "first_audio_s": (first_audio or started) - started,
        "total_s": total,
        "bytes": len(data),
        "request_id": int(r.headers["x-request-id"]),
    }


def _header_size(fmt: str, data: bytes) -> int:
    """Bytes of ``data`` that are only the container's header (0 for raw formats and for ADTS/MP3 frames)."""
    if fmt in HEADER_BYTES:
        return HEADER_BYTES[fmt]
    if fmt == "opus":  # Ogg: the OpusHead and OpusTags pages come first
        return _ogg_header_pages(data)
    if fmt == "flac":  # "fLaC" and the metadata blocks
        return _flac_metadata(data)
    if fmt == "mp3" and data[:3] == b"ID3" and len(data) >= 10:
        size = data[6:10]
        return 10 + ((size[0] << 21) | (size[1] << 14) | (size[2] << 7) | size[3])
    return 0


def _ogg_header_pages(data: bytes, pages: int = 2) -> int:
    offset = 0
    for _ in range(pages):
        if len(data) < offset + 27 or data[offset : offset + 4] != b"OggS":
            return len(data)
        segments = data[offset + 26]
        if len(data) < offset + 27 + segments:
            return len(data)
        offset += 27 + segments + sum(data[offset + 27 : offset + 27 + segments])
    return offset


def _flac_metadata(data: bytes) -> int:
    if data[:4] != b"fLaC":
        return len(data)
    offset = 4
    while len(data) >= offset + 4:
        last = data[offset] & 0x80
        offset += 4 + int.from_bytes(data[offset + 1 : offset + 4], "big")
        if last:
            return offset
    return len(data)


def first_bytes(url: str, key: str | None) -> list[dict[str, Any]]:
    rows = []
    print("format  first byte  first audio   total  first audio / total", flush=True)
    for fmt in FORMATS:
        result = _post(url, {"input": FIVE, "response_format": fmt, "seed": 1}, key)
        row = {"format": fmt, **result, "ratio": result["first_audio_s"] / result["total_s"]}
        rows.append(row)
        print(
            f"{fmt:<6} {row['first_byte_s']:>9.2f}s {row['first_audio_s']:>10.2f}s {row['total_s']:>7.2f}s  "
            f"{row['ratio']:.2f}",
            flush=True,
        )
    return rows


def fair_turns(url: str, key: str | None, health_url: str) -> dict[str, Any]:
    import httpx

    long_text = " ".join(f"This is sentence number {i} of the long request, read at an even pace." for i in range(20))
    short = {"input": "A short question.", "response_format": "pcm", "seed": 3}
    alone = _post(url, short, key)
    holder: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: holder.update(_post(url, {"input": long_text, "response_format": "pcm", "seed": 2}, key))
    )
    thread.start()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:  # wait until three of its sentences are done
        requests = httpx.get(health_url, timeout=10).json().get("api_requests", [])
        if requests and requests[0]["sentences_done"] >= 3:
            break
        time.sleep(0.02)
    during = _post(url, short, key)
    thread.join()
    sentence_s = holder["total_s"] / 20
    return {
        "sentence_s": sentence_s,
        "short_alone_first_byte_s": alone["first_byte_s"],
        "short_during_first_byte_s": during["first_byte_s"],
        "in_sentences": during["first_byte_s"] / sentence_s,
        "long_total_s": holder["total_s"],
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The bench's options (``python -m core bench-api`` takes the same)."""
    p.add_argument("--bundle", type=Path, help="a model folder (default: a stand-in)")
    p.add_argument("--standin", default="original", help="stand-in variant (default original: it has a voice)")
    p.add_argument("--size", default="full", help="stand-in size (default full)")
    p.add_argument("--precision", default="q4", help="the stand-in's language model (default q4, the fast one)")
    p.add_argument("--provider", default="cpu")
    p.add_argument(
        "--only",
        default="formats,turns",
        help="formats, turns, wyoming (first audio through Wyoming beside HTTP), comma-separated (default "
        "formats,turns)",
    )
    p.add_argument("--rounds", type=int, default=3, help="rounds of the Wyoming comparison (default 3)")
    p.add_argument(
        "--playback-policy",
        choices=("auto", "fast", "smooth"),
        default="auto",
        help="when streamed audio starts (default auto, as the server runs)",
    )
    p.add_argument("--json", type=Path, help="also write the report as JSON")


def run(args: argparse.Namespace) -> int:
    """Serve the bundle on loopback and measure (the options of :func:`add_arguments`)."""
    from core.api import ApiConfig, ApiServer, create_app
    from core.engine import InferenceWorker, ModelFailed, ModelLoaded, RuntimeOptions
    from core.standin import cached_standin
    from core.voices import VoiceLibrary

    bundle = args.bundle or cached_standin(args.standin, args.size, args.precision, announce=print)
    worker = InferenceWorker()
    worker.start()
    report: dict[str, Any] = {"bundle": str(bundle), "provider": args.provider, "playback_policy": args.playback_policy}
    try:
        precision = "q4" if (not args.bundle and args.precision == "q4") else "fp32"
        runtime = RuntimeOptions(provider=args.provider, precision=precision, playback_policy=args.playback_policy)
        worker.load(bundle, runtime)
        while not isinstance(event := worker.events.get(timeout=600), ModelLoaded | ModelFailed):
            pass
        if isinstance(event, ModelFailed):
            print(f"the bundle did not load: {event.code} {event.data}", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as voices:
            library = VoiceLibrary(Path(voices))
            if not event.capabilities.has_default_voice:  # Turbo: a synthetic reference voice
                import soundfile as sf

                from core.standin import synthetic_voice

                sf.write(Path(voices) / "reference.wav", synthetic_voice(seconds=6.0, seed=0), 24000)
                library.add("Reference", Path(voices) / "reference.wav")
                VOICE["voice"] = "Reference"
            server = ApiServer(create_app(worker, library, ApiConfig()), "127.0.0.1", 0)
            server.start()
            wyoming = None
            if "wyoming" in args.only:
                from core.api.wyoming import WyomingServer

                wyoming = WyomingServer(worker, library, host="127.0.0.1", port=0)
                wyoming.start()
            try:
                url = server.url + "/audio/speech"
                _post(url, {"input": "Warm up.", "response_format": "pcm"})
                if "formats" in args.only:
                    report["first_bytes"] = first_bytes(url, None)
                if "turns" in args.only:
                    health = server.url.removesuffix("/v1") + "/health"
                    turns = report["fair_turns"] = fair_turns(url, None, health)
                    print(
                        f"fair turns: one sentence ≈ {turns['sentence_s']:.2f}s; a one-sentence request's first byte "
                        f"alone {turns['short_alone_first_byte_s']:.2f}s, while a 20-sentence request streams "
                        f"{turns['short_during_first_byte_s']:.2f}s = {turns['in_sentences']:.2f} sentences' time",
                        flush=True,
                    )
                if wyoming is not None:
                    from core.bench.wyoming_bench import first_audio

                    found = report["wyoming"] = first_audio(url, wyoming.port, VOICE.get("voice"), args.rounds, _post)
                    print(
                        f"first audio: HTTP {found['http']:.2f}s, Wyoming {found['wyoming_plain']:.2f}s, Wyoming "
                        f"streamed {found['wyoming_streamed']:.2f}s (text written over "
                        f"{found['text_seconds_to_write']:.2f}s; before synthesize-stop: "
                        f"{found['streamed_first_audio_before_stop']})",
                        flush=True,
                    )
            finally:
                if wyoming is not None:
                    wyoming.stop()
                server.stop()
    finally:
        worker.shutdown()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0
