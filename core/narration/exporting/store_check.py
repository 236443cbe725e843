"""The store check: an exported audio file measured against the rules audiobook stores hold narrators to.

ACX (Audible's production platform) publishes the rules; its QA measures them as the "ACX Check" analyzer of
Audacity does (Steve Daulton, after Will McCown), and this module follows that analyzer:

- **RMS**: the root mean square of every sample of the whole file (of both channels together for stereo), unweighted,
  in dBFS; ACX asks for −23 to −18 dBFS.
- **Peak**: the largest absolute sample value of the decoded file (sample peak, as ACX Check; an MP3 decoder's
  overshoot is therefore included); at most −3 dBFS.
- **Noise floor**: the RMS of the quietest 500 ms of the file (windows of 0.5 s stepped every 0.1 s, the last full
  window included); at most −60 dBFS. A quietest window of *digital silence* (below −90 dBFS: nothing survives a
  16-bit file there) fails as well: ACX Check flags "−inf dB: dead silence sounds unnatural", because ACX wants a
  constant low room tone, not gated silence.
- **Room tone at the head and tail**: the time before the first and after the last 10 ms whose RMS rises above
  −50 dBFS (speech; room tone stays under −60); 0.5–1 s at the head, 1–5 s at the tail.
- **Format**: MP3 at 192 kb/s or more, constant bit rate, 44.1 kHz; mono or stereo, the same in every file of a book
  (:func:`check_files`); at most 120 minutes per file. One chapter per file is the caller's concern.

The file is decoded with PyAV (FFmpeg's libraries) as a stream of frames, so memory does not grow with its length.
Each failed rule is a :class:`core.engine.Notice` (a code and the measured figures); the front ends word it.
:data:`MASTERING` holds the presets an export applies so that its files pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.engine import ChatterboxError, Notice

BLOCK_S = 0.01
"""Head and tail are found on blocks of 10 ms."""
FLOOR_WINDOW_BLOCKS = 50
FLOOR_STEP_BLOCKS = 10
"""The noise floor: windows of 0.5 s every 0.1 s (as ACX Check)."""
MP3_CODECS = ("mp3", "mp3float")


class StoreCheckError(ChatterboxError):
    """A file cannot be checked (unreadable, no audio) or the rules asked for are unknown."""


@dataclass(frozen=True)
class StoreRules:
    """What a store accepts; levels in dBFS, times in seconds."""

    name: str
    rms_low: float = -23.0
    rms_high: float = -18.0
    peak_max: float = -3.0
    noise_max: float = -60.0
    silence_db: float = -90.0
    """A quietest window below this is digital silence, not room tone."""
    speech_db: float = -50.0
    """A 10 ms block above this is speech (where the head's room tone ends and the tail's begins)."""
    head_min: float = 0.5
    head_max: float = 1.0
    tail_min: float = 1.0
    tail_max: float = 5.0
    codecs: tuple[str, ...] = MP3_CODECS
    bitrate_min: int = 192_000
    cbr: bool = True
    sample_rates: tuple[int, ...] = (44_100,)
    channels: tuple[int, ...] = (1, 2)
    max_minutes: float = 120.0


STORE_RULES: dict[str, StoreRules] = {"acx": StoreRules("ACX")}


@dataclass(frozen=True)
class MasteringPreset:
    """What an export does so that its files pass a store's check (applied by the export stream)."""

    rms_db: float = -20.0
    """Gain to this RMS over the whole file (the middle of ACX's −23…−18)."""
    peak_db: float = -3.5
    """Limiter ceiling: 0.5 dB under the −3 dB rule, room for an MP3 decoder's overshoot."""
    head_s: float = 0.75
    tail_s: float = 2.0
    """Room tone before the first and after the last word of each file."""
    sample_rate: int = 44_100
    bitrate: int = 192_000
    vbr: bool = False
    room_tone_db: float = -72.0
    """Pauses and head/tail are filled with a constant noise this loud (RMS) instead of digital silence, which ACX
    rejects as unnatural; well under the −60 dB noise-floor rule."""
    channels: int = 1


MASTERING: dict[str, MasteringPreset] = {"acx": MasteringPreset()}


def room_tone(samples: int, level_db: float, seed: int = 0) -> np.ndarray:
    """``samples`` of steady noise at ``level_db`` dBFS RMS (float32, mono): room tone for pauses and the head and
    tail of a mastered file; the same seed gives the same samples."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(max(samples, 0)).astype(np.float32)
    return noise * np.float32(10.0 ** (level_db / 20.0))


@dataclass
class FileCheck:
    path: Path
    rms_db: float
    peak_db: float
    noise_floor_db: float
    head_s: float
    tail_s: float
    sample_rate: int
    bitrate: int | None
    """Average bits per second of the audio stream (``None`` when the file does not say)."""
    cbr: bool | None
    """Constant bit rate (``None``: not an MP3, where it is not defined)."""
    channels: int
    seconds: float = 0.0
    codec: str = ""
    rules: str = "acx"
    problems: list[Notice] = field(default_factory=list)
    """One notice per failed rule: its code (``acx.rms_low`` ...) and the figures its wording needs."""

    @property
    def failures(self) -> list[str]:
        return [p.code for p in self.problems]

    @property
    def passed(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "rules": self.rules,
            "passed": self.passed,
            "rms_db": _round(self.rms_db),
            "peak_db": _round(self.peak_db),
            "noise_floor_db": _round(self.noise_floor_db),
            "head_s": round(self.head_s, 3),
            "tail_s": round(self.tail_s, 3),
            "seconds": round(self.seconds, 3),
            "sample_rate": self.sample_rate,
            "bitrate": self.bitrate,
            "cbr": self.cbr,
            "channels": self.channels,
            "codec": self.codec,
            "failures": self.failures,
            "problems": [{"code": p.code, **p.data} for p in self.problems],
        }


def check_file(path: Path, rules: str = "acx") -> FileCheck:
    """Measure ``path`` (any format FFmpeg decodes: mp3, m4b/m4a, opus, ogg, flac, wav) against ``rules``."""
    store = _rules(rules)
    check = _measure(Path(path), store)
    check.rules = rules
    check.problems = _judge(check, store)
    return check


def check_files(paths: list[Path], rules: str = "acx") -> list[FileCheck]:
    """Each file checked, and the book's files held to one channel layout: a file whose channel count differs
    from the first file's fails ``acx.channels_mixed``."""
    checks = [check_file(p, rules) for p in paths]
    if checks:
        first = checks[0]
        for check in checks[1:]:
            if check.channels != first.channels:
                check.problems.append(
                    Notice(
                        "acx.channels_mixed",
                        {"channels": check.channels, "first_channels": first.channels, "first": first.path.name},
                    )
                )
    return checks


def _rules(name: str) -> StoreRules:
    if name not in STORE_RULES:
        raise StoreCheckError("store.unknown_rules", rules=name, choices=sorted(STORE_RULES))
    return STORE_RULES[name]


# --- measuring ---------------------------------------------------------------------------------------------------
class _Meter:
    """RMS, peak, noise floor and the first and last speech of a stream of samples (per-sample power of all
    channels), in constant memory."""

    def __init__(self, rate: int, speech_db: float):
        self.block = max(1, round(rate * BLOCK_S))
        self.speech_power = 10.0 ** (speech_db / 10.0) * self.block
        self.carry = np.zeros(0, np.float64)
        self.total = 0.0
        self.samples = 0
        self.peak = 0.0
        self.blocks = 0
        self.first_loud: int | None = None
        self.last_loud: int | None = None
        self.pending = np.zeros(0, np.float64)
        """Block sums from block ``self.base`` on whose noise-floor windows are not complete yet."""
        self.base = 0
        self.floor = math.inf

    def add(self, power: np.ndarray, peak: float) -> None:
        self.peak = max(self.peak, peak)
        self.total += float(power.sum(dtype=np.float64))
        self.samples += power.size
        data = np.concatenate([self.carry, power]) if self.carry.size else power.astype(np.float64)
        whole = data.size // self.block * self.block
        self.carry = data[whole:]
        sums = data[:whole].reshape(-1, self.block).sum(axis=1)
        loud = np.flatnonzero(sums > self.speech_power)
        if loud.size:
            if self.first_loud is None:
                self.first_loud = self.blocks + int(loud[0])
            self.last_loud = self.blocks + int(loud[-1])
        self.blocks += sums.size
        self._windows(sums)

    def _windows(self, sums: np.ndarray) -> None:
        """The quietest window so far, over the windows that the new blocks complete (each starts at a multiple of
        the step; ``pending`` always starts at one)."""
        pending = np.concatenate([self.pending, sums])
        count = (
            (pending.size - FLOOR_WINDOW_BLOCKS) // FLOOR_STEP_BLOCKS + 1 if pending.size >= FLOOR_WINDOW_BLOCKS else 0
        )
        if count > 0:
            cumulative = np.concatenate([[0.0], np.cumsum(pending)])
            starts = np.arange(count) * FLOOR_STEP_BLOCKS
            windows = cumulative[starts + FLOOR_WINDOW_BLOCKS] - cumulative[starts]
            self.floor = min(self.floor, float(windows.min()) / (FLOOR_WINDOW_BLOCKS * self.block))
            pending = pending[count * FLOOR_STEP_BLOCKS :]
            self.base += count * FLOOR_STEP_BLOCKS
        self.pending = pending

    def finish(self, rate: int) -> tuple[float, float, float, float, float]:
        """RMS, peak and noise floor (dBFS), head and tail (seconds)."""
        seconds = self.samples / rate
        floor = self.floor
        if math.isinf(floor):  # shorter than one window: the whole file is the quietest 0.5 s
            floor = self.total / max(self.samples, 1)
        rms = self.total / max(self.samples, 1)
        if self.first_loud is None or self.last_loud is None:
            head = tail = seconds
        else:
            head = self.first_loud * self.block / rate
            tail = max(0.0, seconds - (self.last_loud + 1) * self.block / rate)
        return _db_power(rms), _db_amplitude(self.peak), _db_power(floor), head, tail


def _measure(path: Path, store: StoreRules) -> FileCheck:
    import av

    try:
        container = av.open(str(path))
    except (OSError, av.FFmpegError) as exc:
        raise StoreCheckError("store.unreadable", path=str(path), reason=str(exc)) from exc
    try:
        if not container.streams.audio:
            raise StoreCheckError("store.no_audio", path=str(path))
        stream = container.streams.audio[0]
        context = stream.codec_context
        rate = int(context.sample_rate)
        channels = int(context.layout.nb_channels)
        codec = str(context.codec.name)
        meter = _Meter(rate, store.speech_db)
        # one conversion per second of audio, not per codec frame (a 1152-sample MP3 frame is 26 ms)
        resampler = av.AudioResampler(format="fltp", layout=context.layout, rate=rate, frame_size=rate)
        bits, packet_seconds, packet_kbps = 0, 0.0, set()
        time_base = float(stream.time_base) if stream.time_base else 0.0
        for packet in container.demux(stream):
            if packet.size and packet.duration and time_base:
                seconds = packet.duration * time_base
                bits += packet.size * 8
                packet_seconds += seconds
                packet_kbps.add(round(packet.size * 8 / seconds / 1000))
            for frame in packet.decode():
                for converted in resampler.resample(frame):
                    _feed(meter, converted.to_ndarray())
        for converted in resampler.resample(None):
            _feed(meter, converted.to_ndarray())
    except av.FFmpegError as exc:
        raise StoreCheckError("store.unreadable", path=str(path), reason=str(exc)) from exc
    finally:
        container.close()
    rms, peak, floor, head, tail = meter.finish(rate)
    mp3 = codec in MP3_CODECS
    return FileCheck(
        path=path,
        rms_db=rms,
        peak_db=peak,
        noise_floor_db=floor,
        head_s=head,
        tail_s=tail,
        sample_rate=rate,
        bitrate=round(bits / packet_seconds) if packet_seconds else None,
        cbr=(len(packet_kbps) <= 1 and not _vbr_header(path)) if mp3 else None,
        channels=channels,
        seconds=meter.samples / rate if rate else 0.0,
        codec="mp3" if mp3 else codec,
    )


def _feed(meter: _Meter, planes: np.ndarray) -> None:
    planes = planes.astype(np.float64, copy=False)
    power = np.mean(planes * planes, axis=0)  # stereo: the mean square of both channels, as ACX Check
    meter.add(power, float(np.abs(planes).max(initial=0.0)))


def _vbr_header(path: Path) -> bool:
    """Whether an MP3 declares itself variable-bit-rate in its first frame (a ``Xing`` or ``VBRI`` header; LAME
    and FFmpeg write ``Info`` for constant bit rate)."""
    try:
        with open(path, "rb") as file:
            head = file.read(10)
            start = 0
            if head[:3] == b"ID3" and len(head) == 10:  # ID3v2 tag: its size is four 7-bit bytes
                start = 10 + ((head[6] << 21) | (head[7] << 14) | (head[8] << 7) | head[9])
            file.seek(start)
            frame = file.read(4096)
    except OSError:
        return False
    sync = next((i for i in range(len(frame) - 1) if frame[i] == 0xFF and frame[i + 1] & 0xE0 == 0xE0), None)
    if sync is None:
        return False
    first = frame[sync : sync + 200]
    return b"Xing" in first or b"VBRI" in first


def _db_power(mean_square: float) -> float:
    return 10.0 * math.log10(mean_square) if mean_square > 0 else -math.inf


def _db_amplitude(value: float) -> float:
    return 20.0 * math.log10(value) if value > 0 else -math.inf


def _round(value: float) -> float | None:
    return round(value, 2) if math.isfinite(value) else None


def _r(value: float) -> float | str:
    return round(value, 1) if math.isfinite(value) else "-inf"


# --- judging -----------------------------------------------------------------------------------------------------
def _judge(c: FileCheck, r: StoreRules) -> list[Notice]:
    """The rules ``c`` fails, each with the figures its wording names."""
    out = []
    if c.rms_db < r.rms_low:
        out.append(Notice("acx.rms_low", {"rms_db": _r(c.rms_db), "low": r.rms_low, "high": r.rms_high}))
    if c.rms_db > r.rms_high:
        out.append(Notice("acx.rms_high", {"rms_db": _r(c.rms_db), "low": r.rms_low, "high": r.rms_high}))
    if c.peak_db > r.peak_max:
        out.append(Notice("acx.peak_high", {"peak_db": _r(c.peak_db), "high": r.peak_max}))
    if c.noise_floor_db > r.noise_max:
        out.append(Notice("acx.noise_high", {"noise_db": _r(c.noise_floor_db), "high": r.noise_max}))
    elif c.noise_floor_db < r.silence_db:
        out.append(Notice("acx.dead_silence", {"noise_db": _r(c.noise_floor_db), "low": r.silence_db}))
    if c.head_s < r.head_min or c.head_s > r.head_max:
        out.append(Notice("acx.head", {"seconds": round(c.head_s, 2), "low": r.head_min, "high": r.head_max}))
    if c.tail_s < r.tail_min or c.tail_s > r.tail_max:
        out.append(Notice("acx.tail", {"seconds": round(c.tail_s, 2), "low": r.tail_min, "high": r.tail_max}))
    if c.codec not in r.codecs:
        out.append(Notice("acx.not_mp3", {"codec": c.codec}))
    else:
        if c.bitrate is not None and c.bitrate < r.bitrate_min * 0.99:
            out.append(Notice("acx.bitrate_low", {"kbps": round(c.bitrate / 1000), "low": r.bitrate_min // 1000}))
        if r.cbr and c.cbr is False:
            out.append(Notice("acx.not_cbr", {"kbps": round((c.bitrate or 0) / 1000)}))
    if c.sample_rate not in r.sample_rates:
        out.append(Notice("acx.sample_rate", {"rate": c.sample_rate, "rates": list(r.sample_rates)}))
    if c.channels not in r.channels:
        out.append(Notice("acx.channels", {"channels": c.channels}))
    if c.seconds > r.max_minutes * 60:
        out.append(Notice("acx.too_long", {"minutes": round(c.seconds / 60, 1), "limit": r.max_minutes}))
    return out
