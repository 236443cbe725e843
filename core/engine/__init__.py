"""The engine: bundles, sessions, the decode loop, caches, streaming, the inference worker and its scheduler.

It knows nothing of narration, HTTP or Qt. The layers above (voices, narration, api, cli, bench, app) use only the
names below."""

from core.engine.audio.audio_io import FORMATS, AudioWriteError, audio_format, write_audio, write_audio_stream
from core.engine.audio.finishing import DEFAULT_TRUE_PEAK, normalize_loudness, parse_loudness, stretch
from core.engine.audio.speech_decoder import finish_sentence
from core.engine.audio.voice_reference import VoiceReference, load_voice, voice_from_array
from core.engine.caches.conditioning import Conditioning
from core.engine.caches.conditioning_cache import ConditioningLookup
from core.engine.constants import (
    EXAGGERATION_TOKEN,
    LOGITS_VOCAB,
    SAMPLE_RATE,
    SAMPLES_PER_TOKEN,
    SILENCE_TOKEN,
    START_SPEECH,
    STOP_SPEECH,
    TEXT_START,
    TEXT_STOP,
)
from core.engine.errors import (
    BundleError,
    ChatterboxError,
    InvalidOptions,
    Notice,
    SynthesisCancelled,
    TextInputError,
    VoiceReferenceError,
)
from core.engine.files.atomic import (
    atomic_path,
    copy_file_atomic,
    remove_partial_files,
    write_json_atomic,
    write_text_atomic,
)
from core.engine.files.user_dirs import (
    APP_NAME,
    conditioning_cache_dir,
    decoder_costs_dir,
    user_cache,
    user_data,
    user_logs,
    voices_dir,
)
from core.engine.generation.batch_generate import Generated, Row
from core.engine.generation.decode_loop import DecodeStats, generate, step_overhead_share
from core.engine.generation.lm_runners import ChainedKV, CopiedKV
from core.engine.generation.sampler import Sampler
from core.engine.languages import language_label
from core.engine.model.bundle import GRAPHS, SUFFIXES, file_stamp
from core.engine.model.model_parts import Capabilities
from core.engine.options import (
    PRECISIONS,
    PROVIDERS,
    Q4_COMPUTE,
    SESSION_FIELDS,
    STREAM_PLANS,
    RuntimeOptions,
    SynthesisOptions,
    upstream_defaults,
)
from core.engine.pipeline import Pipeline
from core.engine.streaming.synthesis import AudioChunk, RequestReport, SynthesisRequest, new_seed, wait_cancellable
from core.engine.text import (
    MAX_TEXT_CHARS,
    SENTENCE_GAP_S,
    Pause,
    Sentence,
    clean_text,
    find_pauses,
    fit_sentence,
    is_speakable,
    split_text,
    unknown_tags,
)
from core.engine.worker.events import (
    Cancelled,
    Chunk,
    Failed,
    Finished,
    LoadProgress,
    ModelFailed,
    ModelLoaded,
    Started,
)
from core.engine.worker.inference_worker import InferenceWorker, LoadModel
from core.engine.worker.jobs import EventSink, Job, JobContext, JobInfo, Priority, Speak, WorkerStatus
from core.engine.worker.scheduler import Scheduler

__all__ = [
    "DEFAULT_TRUE_PEAK",
    "normalize_loudness",
    "parse_loudness",
    "stretch",
    "APP_NAME",
    "AudioChunk",
    "AudioWriteError",
    "BundleError",
    "Cancelled",
    "Capabilities",
    "ChainedKV",
    "ChatterboxError",
    "Chunk",
    "CopiedKV",
    "DecodeStats",
    "EXAGGERATION_TOKEN",
    "FORMATS",
    "Failed",
    "Finished",
    "GRAPHS",
    "Generated",
    "InferenceWorker",
    "InvalidOptions",
    "LOGITS_VOCAB",
    "LoadProgress",
    "MAX_TEXT_CHARS",
    "ModelFailed",
    "ModelLoaded",
    "Notice",
    "PRECISIONS",
    "PROVIDERS",
    "Pause",
    "Pipeline",
    "Q4_COMPUTE",
    "RequestReport",
    "RuntimeOptions",
    "SAMPLES_PER_TOKEN",
    "SAMPLE_RATE",
    "SENTENCE_GAP_S",
    "SESSION_FIELDS",
    "SILENCE_TOKEN",
    "START_SPEECH",
    "STOP_SPEECH",
    "STREAM_PLANS",
    "SUFFIXES",
    "Sampler",
    "Sentence",
    "Started",
    "SynthesisCancelled",
    "SynthesisOptions",
    "SynthesisRequest",
    "TEXT_START",
    "TEXT_STOP",
    "TextInputError",
    "VoiceReference",
    "VoiceReferenceError",
    "atomic_path",
    "audio_format",
    "clean_text",
    "fit_sentence",
    "conditioning_cache_dir",
    "copy_file_atomic",
    "decoder_costs_dir",
    "file_stamp",
    "find_pauses",
    "finish_sentence",
    "generate",
    "is_speakable",
    "language_label",
    "load_voice",
    "new_seed",
    "remove_partial_files",
    "split_text",
    "step_overhead_share",
    "unknown_tags",
    "upstream_defaults",
    "user_cache",
    "user_data",
    "user_logs",
    "voice_from_array",
    "voices_dir",
    "wait_cancellable",
    "write_audio",
    "write_audio_stream",
    "write_json_atomic",
    "write_text_atomic",
    "Conditioning",
    "ConditioningLookup",
    "Row",
    "LoadModel",
    "EventSink",
    "Job",
    "JobContext",
    "JobInfo",
    "Priority",
    "Speak",
    "WorkerStatus",
    "Scheduler",
]
