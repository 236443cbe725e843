"""The sentence a person reads for each error code, with the variant a front end needs where they differ.

An entry's text is a ``str.format`` template over the error's ``data`` or a function of it. ``window`` speaks of the
window's menus and buttons, ``cli`` of the command line's flags, ``api`` of HTTP requests; ``default`` serves the
front ends that have no variant of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Text = str | Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True)
class Words:
    default: Text
    window: Text | None = None
    cli: Text | None = None
    api: Text | None = None

    def for_front(self, front: str) -> Text:
        variant = {"window": self.window, "cli": self.cli, "api": self.api}.get(front)
        return self.default if variant is None else variant


def _join(values: Any) -> str:
    return ", ".join(str(v) for v in values)


def _quoted(values: Any) -> str:
    return ", ".join(repr(v) for v in values)


def _g(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


# --- the model bundle -----------------------------------------------------------------------------------------------
_NOT_A_FOLDER = "Model folder {path} does not exist or is not a folder. Choose the folder that holds tokenizer.json "
_SIGNATURE = "Use the graphs of one Chatterbox export (Turbo, Original or Multilingual) together, unmodified."

BUNDLE = {
    "bundle.not_a_folder": Words(
        _NOT_A_FOLDER + "and onnx/ (for example the downloaded bundle).",
        window=_NOT_A_FOLDER + "and onnx/ (for example the downloaded bundle) in the Models menu.",
        cli=_NOT_A_FOLDER + "and onnx/ (for example the downloaded bundle), or build a stand-in with "
        "`python -m core make-standin`.",
    ),
    "bundle.graph_missing": Words(
        "{path} is missing (no precision of {graph} found in {folder}). Download the bundle again or choose the "
        "folder that contains all four graphs."
    ),
    "bundle.file_missing": Words("{path} is missing. Download the bundle again or choose a complete folder."),
    "bundle.tokenizer_missing": Words(
        "{path} is missing. Every Chatterbox bundle ships tokenizer.json beside onnx/; download the bundle again or "
        "choose the folder that contains it."
    ),
    "bundle.tokenizer_invalid": Words("{path} is not a valid tokenizer file ({reason}). Download the bundle again."),
    "bundle.sidecar_missing": Words(
        lambda d: (
            f"{_name(d['path'])} is missing: it must stay beside {d['graph_file']} in {d['folder']}. "
            "Download the bundle again."
        )
    ),
    "bundle.sidecar_truncated": Words(
        "{path} is truncated or does not belong to {graph_file} (onnxruntime: {reason}). Download the bundle again."
    ),
    "bundle.graph_unreadable": Words(
        "{path} cannot be read as an ONNX graph ({reason}). The file may be corrupt or incomplete, or need a newer "
        "onnxruntime; download it again."
    ),
    "bundle.signature_mismatch": Words("{file} does not match the Chatterbox ONNX interface: {problem}. " + _SIGNATURE),
    "bundle.variants_mixed": Words(
        "{embed_file} and {lm_file} come from different Chatterbox variants (Turbo's language model takes "
        "position_ids and its embed_tokens only input_ids; the original/multilingual ones are the other way round). "
        "Use all graphs from one export."
    ),
    "bundle.no_text_table": Words(
        lambda d: (
            f"{d['file']}: cannot identify the text embedding table among its initializers "
            f"({_join(d['tables']) or 'none'}); classifier-free guidance needs it."
        )
    ),
}


def _name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


# --- the reference recording ----------------------------------------------------------------------------------------
_NO_DEFAULT = "This model has no default voice (Turbo bundles ship none): "

VOICE = {
    "voice.no_default": Words(
        _NO_DEFAULT + "choose a reference recording of 5-10 s of clean speech.",
        cli=_NO_DEFAULT + "give a reference recording of 5-10 s of clean speech with --voice.",
        api=_NO_DEFAULT + "send a reference recording of 5-10 s of clean speech or name a saved voice.",
    ),
    # A voice's reference and a recording to re-voice share these codes: their words fit either.
    "voice.missing": Words("The recording {path} no longer exists. Choose it again."),
    "voice.is_folder": Words("{path} is a folder; choose an audio file (wav, flac, ogg or mp3)."),
    "voice.permission_denied": Words("Cannot read {name}: permission denied. Check the file's permissions."),
    "voice.unreadable": Words("{name} is not a readable audio file ({reason}). Use a wav, flac, ogg or mp3 recording."),
    "voice.empty": Words(
        lambda d: (
            f"{d['name']} contains no audio. Record at least {d['recommended']:.0f} "
            f"second{'' if round(d['recommended']) == 1 else 's'}."
        )
    ),
    "voice.invalid_samples": Words("{name} contains invalid samples (NaN or infinity); export it again."),
    "voice.silent": Words("{name} is silent. Choose a recording in which the speaker can be heard."),
    "voice.too_short": Words(
        "{name} is only {seconds:.1f} s long; a voice needs at least {minimum:.0f} s (ideally {recommended:.0f}–10 s "
        "of clean speech)."
    ),
    "source.missing": Words("{path} does not exist. Check the recording's name and folder."),
    "source.too_long": Words(
        "{name} is {minutes} minutes long; re-voice at most {maximum_minutes} minutes at a time: split the recording "
        "at a pause or a chapter and convert each part."
    ),
    "source.too_short": Words(
        "{name} is only {seconds:.2f} s long; a recording to re-voice needs at least {minimum:.1f} s of speech."
    ),
    "voice.library_unreadable": Words("The library voice {name} cannot be read: {reason}."),
    "voice.upload_suffix": Words(
        lambda d: f"{d['name'] or 'The upload'} is not a supported recording: send a {_join(d['suffixes'])} file."
    ),
    "library.not_in_trash": Words("the recording of “{name}” is no longer in the trash"),
    "library.recording_gone": Words("the recording of “{name}” no longer exists"),
}

# --- what makes a request or a reference weaker (notices, not errors) -----------------------------------------------
NOTICES = {
    "voice.short": Words("The reference is short ({seconds:.1f} s); 5–10 s of speech clones the voice better."),
    "voice.truncated": Words("Only the first {used:.0f} s of the {seconds:.0f} s recording are used."),
    "voice.clipped": Words("The reference is clipped (too loud); the cloned voice may sound distorted."),
    "voice.noisy": Words("The reference sounds noisy; a recording without background noise clones the voice better."),
    "voice.low_rate": Words("This recording is sampled at {rate} Hz; a 16 kHz or better recording sounds clearer."),
    "cache.write_failed": Words(
        "The voice could not be saved to the cache ({reason}): free some disk space, or it is analysed again after "
        "a restart."
    ),
    "synthesis.no_cfg": Words("Classifier-free guidance is unavailable for this bundle; generating without it."),
    "text.unknown_tag": Words("Unknown tag {tag} was skipped."),
    "text.segmenter_missing": Words(
        "Chinese is read without word boundaries: the word segmenter (spacy_pkuseg's model, 7 MB) is not installed. "
        "Add it with: python -m core languages --download zh",
        window="Chinese is read without word boundaries: the word segmenter is not installed. Add it in Models → "
        "Language files.",
    ),
    "text.step_not_installed": Words(
        lambda d: (
            f"{_language(d)} is read as upstream sends it, without "
            f"{'diacritics' if d['language'] == 'he' else 'stress marks'}. To add them: {d['install']}."
        )
    ),
}

_LANGUAGE_NAMES = {"zh": "Chinese", "ja": "Japanese", "ko": "Korean", "he": "Hebrew", "ru": "Russian"}


def _language(data: Mapping[str, Any]) -> str:
    code = str(data.get("language"))
    name = _LANGUAGE_NAMES.get(code)
    return f"{name} ({code})" if name else f"Language {code!r}"


# --- text and options -----------------------------------------------------------------------------------------------
TEXT = {
    "text.not_text": Words("The text must be a string."),
    "text.too_long": Words(
        "The text has {chars:,} characters; the limit is {limit:,}. Split it into several files.",
        window="The text has {chars:,} characters; the limit is {limit:,}. Split it into several parts.",
        api="The text has {chars:,} characters; the limit is {limit:,}. Split it into several requests.",
    ),
    "text.nothing_to_say": Words(
        "There is nothing to say: type some words (punctuation and symbols alone are not read)."
    ),
    "text.language_unsupported": Words(
        lambda d: f"Language {d['language']!r} is not supported by this model; choose one of {_join(d['languages'])}."
    ),
    "text.english_only": Words("This model speaks English only; use the Multilingual model for {language!r}."),
    "text.language_file_missing": Words(
        lambda d: (
            f"{_language(d)} text needs {d['file']}, which is not in {d['folder']}. Download it with: "
            f"python -m core languages --bundle {d['folder']} --download {d['language']}"
        ),
        window=lambda d: (
            f"{_language(d)} text needs {d['file']}, which this model folder lacks. Download it in Models → "
            "Language files, then speak again."
        ),
        api=lambda d: (
            f"{_language(d)} text needs {d['file']}, which the server's model folder lacks; download it there "
            f"(python -m core languages --download {d['language']})."
        ),
    ),
    "text.language_bundle_needed": Words(
        "The Chinese table goes into the Multilingual model's folder: give it with --bundle.",
        window="Open a Multilingual model first: the Chinese table goes into its folder.",
        api="The Chinese table goes into the Multilingual model's folder.",
    ),
    "text.language_file_invalid": Words(
        lambda d: f"{_language(d)} text needs {d['file']}, which cannot be read ({d['reason']}). Download it again."
    ),
    "options.out_of_range": Words(
        lambda d: (
            f"{d['field']}={d['value']} is out of range {'(' if d.get('low_open') else '['}{d['low']}, {d['high']}]"
        )
    ),
    "options.top_k": Words("top_k must be at least 1 (or unset to disable it)"),
    "options.invalid_choice": Words(lambda d: f"{d['field']} must be one of {_join(d['choices'])}, not {d['value']!r}"),
    "options.setting_range": Words(
        lambda d: (
            f"{d['field']} must be between {_g(d['low'])} and {_g(d['high'])}"
            + (" (or unset for onnxruntime's default)" if d.get("unset_ok") else "")
        )
    ),
    "options.needs_reload": Words(lambda d: f"{_join(d['fields'])} change the sessions: load the bundle again"),
    "options.loudness_unknown": Words(
        lambda d: (
            f"Loudness {d['value']!r} is not a number of LUFS or a preset: "
            + ", ".join(f"{k} ({_g(v)})" for k, v in d["presets"].items())
            + "."
        )
    ),
    "options.loudness_range": Words(lambda d: f"Loudness must be between {_g(d['low'])} and {_g(d['high'])} LUFS."),
}

# --- audio files ----------------------------------------------------------------------------------------------------
AUDIO = {
    "audio.bad_suffix": Words(lambda d: f"Cannot write {d['name']}: use a file name ending in {_join(d['suffixes'])}."),
    "audio.folder_missing": Words("Cannot write {path}: the folder {folder} does not exist."),
    "audio.write_failed": Words("Cannot write {path}: {reason}. Check free space and permissions."),
    "encode.unknown_format": Words(lambda d: f"Cannot write {d['name']}: use one of {_join(d['formats'])}."),
    "encode.bad_bitrate": Words("{value} is not a bitrate: give bits per second such as 128k or 192000 (8k–512k)."),
    "encode.bad_rate": Words(
        lambda d: (
            f"{d['format']} cannot be written at {d['rate']} Hz"
            + (f": choose {_join(d['rates'])}." if d["rates"] else ": choose a rate between 8000 and 192000 Hz.")
        )
    ),
    "encode.failed": Words("The {format} encoder failed: {reason}."),
    "encode.folder_missing": Words("Cannot write {path}: the folder {folder} does not exist."),
    "encode.write_failed": Words("Cannot write {path}: {reason}. Check free space and permissions."),
    "subtitles.bad_suffix": Words("Cannot write subtitles to {name}: use a .srt or .vtt file name."),
    "subtitles.write_failed": Words("Cannot write {path}: {reason}. Check free space and permissions."),
}

# --- the sound device (the window's playback and microphone) -------------------------------------------------------
_STILL_WORKS = "Synthesis, export and the history still work."
SOUND = {
    "sound.portaudio_missing": Words(
        "Sound is unavailable: the PortAudio library is not installed ({reason}). Install it (Debian/Ubuntu: "
        "sudo apt-get install libportaudio2; Fedora: sudo dnf install portaudio) and restart. " + _STILL_WORKS
    ),
    "sound.no_output": Words(
        "No output device is available — connect speakers or headphones, or check that the system's sound service "
        "is running. " + _STILL_WORKS
    ),
    "sound.output_busy": Words(
        "The sound output is in use by another program or unavailable. Close that program or pick another output "
        "in the system's sound settings. " + _STILL_WORKS
    ),
    "sound.output_rate": Words(
        "The sound output refuses 24 kHz audio. Choose another output in the system's sound settings. " + _STILL_WORKS
    ),
    "sound.output_failed": Words("The sound output cannot be opened ({reason}). " + _STILL_WORKS),
    "sound.output_lost": Words(
        "The sound output stopped during playback (was the device unplugged?). Synthesis goes on and the result can "
        "be exported; the next playback tries the sound device again."
    ),
    "sound.no_input": Words("No microphone is available — connect one, or choose a recorded file instead."),
    "sound.input_busy": Words(
        "The microphone is in use by another program or unavailable. Close that program, or choose a recorded file."
    ),
    "sound.input_rate": Words(
        "The microphone refuses 24 kHz recording. Choose another input in the system's sound settings, or a file."
    ),
    "sound.input_failed": Words("The microphone cannot be opened ({reason}). Choose a recorded file instead."),
}

# --- requests on the inference thread -------------------------------------------------------------------------------
WORKER = {
    "synthesis.cancelled": Words("The request was cancelled."),
    "worker.no_model": Words(
        "No model is loaded.",
        window="No model is loaded: choose one in the Models menu.",
        cli="No model is loaded: give one with --bundle.",
        api="No model is loaded yet.",
    ),
    "worker.reload_failed": Words(lambda d: f"The model could not be reloaded with the new {_join(d['fields'])}."),
    "worker.gpu_failed": Words(
        "The GPU failed during synthesis ({reason}). Switched to the CPU: send the request again.",
        window="The GPU failed during synthesis ({reason}). Switched to the CPU: press Speak to try again.",
        cli="The GPU failed during synthesis ({reason}). Switched to the CPU: run the command again.",
    ),
    "worker.internal": Words("Internal error: {kind}: {detail}"),
    "worker.load_internal": Words("Unexpected error while loading the model: {detail}"),
    "worker.load_timeout": Words("{bundle} did not load within {minutes} minutes"),
    "provider.cpu_fallback": Words("Running on CPU: {reason}."),
    "provider.cuda_unusable": Words("CUDA was requested but is not usable, running on CPU instead: {reason}."),
    "provider.gpu_failed": Words(
        "Running on CPU: the GPU failed during synthesis ({reason}).",
        window="Running on CPU: the GPU failed during synthesis ({reason}). Press Speak to try again.",
    ),
}

# --- narration ------------------------------------------------------------------------------------------------------
_DRM = {"adept": "Adobe ADEPT", "fairplay": "Apple FairPlay", "encrypted": "its text is encrypted"}


def _mib(limit: Any) -> str:
    size = float(limit) / (1 << 20)
    return f"{size / 1024:g} GB" if size >= 1024 else f"{size:g} MB"


DOCUMENT = {
    "document.bad_suffix": Words(lambda d: f"Cannot import {d['name']}: use a {_join(d['suffixes'])} file."),
    "document.missing": Words("{path} does not exist."),
    "document.not_utf8": Words("{name} is not UTF-8 text; save it as UTF-8 and import it again."),
    "document.unreadable": Words("Cannot read {path}: {reason}."),
    "document.too_long": Words(
        "The text has {chars:,} characters; a project holds at most {limit:,}. Split the book into several projects."
    ),
    "document.bad_epub": Words("{name} is not a readable EPUB ({reason})."),
    "document.no_text": Words("{name} has no text to read (it may hold only images or scanned pages)."),
    "document.drm": Words(
        lambda d: (
            f"{d['name']} is protected by DRM ({_DRM.get(str(d.get('scheme')), 'its text is encrypted')}); "
            "it cannot be read aloud here."
        )
    ),
    "document.not_zip": Words("{name} is not an EPUB (it is not a valid ZIP archive)."),
    "document.damaged_zip": Words("{name} is damaged or incomplete (its ZIP archive is cut short or corrupt)."),
    "document.not_epub": Words("{name} is a ZIP archive but not an EPUB: it has no {missing}."),
    "document.too_large": Words(
        lambda d: f"{d['name']} is too large to import: more than {_mib(d['limit'])} (a book is at most that)."
    ),
    "document.member_too_large": Words(
        lambda d: f"{d['name']} holds {d['member']}, which is larger than {_mib(d['limit'])}; it cannot be imported."
    ),
    "document.zip_bomb": Words(
        "{name} is refused: {member} inflates more than {ratio} times its stored size (a damaged or malicious file)."
    ),
    "document.too_many_files": Words(
        "{name} is refused: it holds {files} files, more than the {limit:,} a book may have (a damaged or "
        "malicious file)."
    ),
    "document.item_missing": Words("{item} is missing from {name}; the rest of the book was imported without it."),
    "document.item_damaged": Words("{item} in {name} is damaged; the rest of the book was imported without it."),
    "document.nothing_to_say": Words("There is nothing to say in this text: it has no words to read."),
}


def _known_voices(d: Mapping[str, Any]) -> str:
    return f"Its voices: {_join(d['voices'])}." if d["voices"] else "It has no voices yet."


def _unknown_voices(d: Mapping[str, Any]) -> str:
    names, known = d["names"], d["known"]
    listing = f"Known voices: {_join(known)}." if known else "The voice library is empty."
    return (
        f"Unknown voice{'s' if len(names) > 1 else ''} {_quoted(names)}. {listing} "
        "Save the voice in the library first, or give the path of a recording."
    )


def _no_take(d: Mapping[str, Any]) -> str:
    have = f"takes 1 to {d['takes']}" if d["takes"] else "no takes yet"
    return f"Segment {d['segment']} has {have}; there is no take {d['take']}."


def _size(n: Any) -> str:
    if not isinstance(n, (int, float)):
        return str(n)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _flagged(d: Mapping[str, Any]) -> str:
    shown = _join(d["flagged"][:10]) + ("…" if d["count"] > 10 else "")
    return f"{d['count']} segment(s) to export have takes flagged for review ({shown}): nothing was exported."


def _not_rendered(d: Mapping[str, Any]) -> str:
    pending = d["pending"]
    shown = _join(pending[:10]) + ("…" if len(pending) > 10 else "")
    return f"{len(pending)} of {d['total']} segments are not rendered yet ({shown}): render the project first."


def _lock_purpose(d: Mapping[str, Any]) -> str:
    words = {"render": "being rendered", "narrate": "being narrated", "export": "being exported"}
    return words.get(str(d.get("purpose")), "in use")


def _lock_holder(d: Mapping[str, Any]) -> str:
    if not d.get("pid"):
        return "a process that did not say who it is"
    return f"process {d['pid']} on {d['host']}, since {d['since']}"


_NO_VOICE = "This model ({variant}) has no built-in voice, and segment {segment} has no voice of its own: "

PROJECT = {
    "project.no_segment": Words("There is no segment {number}: the project has segments 1 to {count}."),
    "project.bad_path": Words("{problem}."),
    "project.edit_empty": Words("The new text has nothing to say: type some words."),
    "project.no_take": Words(_no_take),
    "project.take_outdated": Words(
        "Take {take} of segment {segment} was made before its text, voice or settings changed; render it again instead."
    ),
    "project.pause_range": Words(
        lambda d: f"A pause must be between 0 and {_g(d['high'])} seconds, not {_g(d['seconds'])}."
    ),
    "project.speed_range": Words(
        lambda d: f"The pace must be between {d['low']} and {d['high']}×, not {_g(d['speed'])}."
    ),
    "project.unknown_voice": Words(lambda d: f"The project has no voice named {d['name']!r}. {_known_voices(d)}"),
    "project.save_failed": Words(
        "Cannot save the project in {folder}: {reason}. Free some disk space; the last saved version is kept."
    ),
    "project.is_a_file": Words("{folder} is a file; choose a folder for the project."),
    "project.folder_not_empty": Words(
        "{folder} is not empty and holds no {file}; choose a new or empty folder for the project."
    ),
    "project.not_a_project": Words("{folder} is not a narration project: it has no {file}."),
    "project.unreadable": Words("Cannot read {path}: {reason}."),
    "project.damaged": Words(
        "{path} is damaged (not valid JSON: {reason}). It was left as it is; restore it from a backup."
    ),
    "project.store_damaged": Words(
        "{path} cannot be opened as a project ({reason}). It was left as it is; restore it from a backup."
    ),
    "project.newer_format": Words(
        "{path} was saved by a newer version of Chatterbox Desk (project format {schema}; this version reads format "
        "{supported}). Update the app to open it; the file was not changed."
    ),
    "project.invalid": Words(
        "{path} is not a valid project file: {problem}. It was left as it is; fix it or restore a backup."
    ),
    "project.spoken_empty": Words("The spoken form of segment {segment} has nothing to say: type some words."),
    "project.bad_language": Words("{language!r} is not a language code; use one such as en, de, fr or pt-BR."),
    "lexicon.bad_entry": Words("A lexicon entry needs a word and how to say it (got {word!r} → {spoken!r})."),
    "lexicon.no_entry": Words(
        lambda d: (
            f"The lexicon has no entry {d['word']!r}."
            + (f" Its words: {_quoted(d['words'])}." if d.get("words") else " It is empty.")
        )
    ),
    "project.delete_only": Words("Segment {number} is the only segment of the project; it cannot be deleted."),
    "project.merge_last": Words("Segment {number} is the last segment: there is no next segment to merge it with."),
    "project.merge_chapters": Words(
        "Segments {number} and {next} are in different chapters; join the chapters first to merge them."
    ),
    "project.split_position": Words(
        "Segment {number} cannot be split at character {at}: both parts need words (it has {length} characters)."
    ),
    "project.no_mixed_speech": Words(
        "No sentence of this book holds quoted speech and narration together: there is nothing to cut at its quotes."
    ),
    "project.already_starts": Words("Segment {number} already starts chapter {chapter}."),
    "project.not_a_start": Words(
        "Segment {number} does not start a chapter after the first: there is no chapter boundary there to remove."
    ),
    "project.no_chapter": Words("There is no chapter {number}: the project has chapters 1 to {count}."),
    "project.title_empty": Words("A chapter title needs some words."),
    "project.nothing_to_undo": Words("There is nothing to undo."),
    "project.nothing_to_redo": Words("There is nothing to redo."),
    "project.history_stale": Words(
        "The project changed since that edit ({op}) in another way, so it cannot be undone or redone any more."
    ),
    "project.bundle_missing": Words(
        "The model folder this project was rendered with, {folder}, is not there any more; choose a model.",
        cli="The model folder this project was rendered with, {folder}, is not there any more; add --bundle DIR.",
    ),
    "project.locked": Words(
        lambda d: (
            f"{d['folder']} is {_lock_purpose(d)} by another Chatterbox Desk ({_lock_holder(d)}). It is "
            "opened read-only: wait until it is done, or close the project there."
        ),
        cli=lambda d: (
            f"{d['folder']} is {_lock_purpose(d)} by another Chatterbox Desk ({_lock_holder(d)}); wait "
            "until it is done, or close the project there, and run the command again."
        ),
        api=lambda d: f"The project is {_lock_purpose(d)} by another process ({_lock_holder(d)}).",
    ),
    "project.lock_failed": Words("Cannot lock the project in {folder}: {reason}."),
    "voices.unknown": Words(_unknown_voices),
    "render.no_voice": Words(
        _NO_VOICE + "give the project a voice (a recording or a voice-library name).",
        cli=_NO_VOICE + "give the project a voice with --voice (a recording or a voice-library name).",
    ),
    "render.internal": Words("Internal error: {kind}: {detail}"),
    "perform.no_recording": Words(
        "{path} does not exist: choose the recording of segment {segment} (a wav, flac, ogg or mp3 file) or record "
        "it with the microphone.",
        cli="{path} does not exist: give the recording of segment {segment} (a wav, flac, ogg or mp3 file).",
    ),
    "export.nothing": Words(
        "Nothing to export: give an audio file, a subtitle file or a folder for chapter files.",
        cli="Nothing to export: give --out FILE, --subtitles FILE or --per-chapter DIR.",
    ),
    "export.chapter_subtitles": Words("Chapter subtitles are .srt or .vtt."),
    "export.highlight_needs_book": Words(
        "Highlighting word by word is for a read-along book: export an EPUB, or highlight by sentence.",
        cli="--highlight {highlight} is for a read-along book: give --out BOOK.epub, or leave --highlight out.",
    ),
    "export.bad_highlight": Words(
        lambda d: f"A read-along book highlights by {' or by '.join(d['choices'])}, not {d['highlight']!r}."
    ),
    "export.subtitle_words_alone": Words(
        "Word timing is for subtitles: choose SRT or WebVTT subtitles, or leave word timing off.",
        cli="--subtitle-words is for subtitles: give --subtitles FILE.srt|.vtt (or --per-chapter with "
        "--chapter-subtitles); a read-along book takes --highlight word instead.",
    ),
    "export.subtitle_words": Words(
        "Word-timed subtitles need at least one word per cue, not {words}.",
        cli="--subtitle-words N needs N of 1 or more (words per SRT cue), not {words}.",
    ),
    "export.not_rendered": Words(_not_rendered),
    "export.flagged": Words(
        lambda d: f"{_flagged(d)} Listen to them and accept or regenerate each, or export without strict.",
        window=lambda d: f"{_flagged(d)} Review them (Needs review) and accept or regenerate each.",
        cli=lambda d: (
            f"{_flagged(d)} Listen to them, then --accept or --regenerate each (project DIR "
            "--check-takes lists them), or export without --strict."
        ),
    ),
    "export.take_unreadable": Words(
        "The audio of segment {segment} ({file}) cannot be read: {reason}. Regenerate the segment."
    ),
    "export.take_foreign": Words("{file} is not a take written by this app; regenerate segment {segment}."),
    "export.folder_failed": Words("Cannot create {folder}: {reason}."),
    "export.write_failed": Words("Cannot write {path}: {reason}."),
    "export.cancelled": Words("The export was cancelled; no file was left half written."),
    "export.no_chapter": Words("There is no chapter {number}: the project has chapters 1 to {count}."),
    "export.nothing_chosen": Words(
        "The chosen chapters and segments hold nothing to hear (they are skipped or empty): choose others."
    ),
    "export.bad_range": Words("{text!r} is not a choice of {what}: give numbers and ranges such as 3, 2-4 or 1,3,5-7."),
    "export.unknown_rules": Words(lambda d: f"There are no rules named {d['rules']!r}; known: {_join(d['known'])}."),
    "export.cover_unreadable": Words("The cover image {path} cannot be read: {reason}."),
    "export.cover_format": Words("The cover image {path} is not a JPEG or PNG picture."),
    "export.folder_missing": Words(
        "The folder {folder} does not exist: choose an existing folder (nothing was exported)."
    ),
    "export.no_permission": Words("You may not write to {folder}: choose another folder (nothing was exported)."),
    "export.no_space": Words(
        lambda d: (
            f"{d['folder']} has {_size(d['free'])} free, and this export needs about {_size(d['needed'])}: "
            "free some space or choose another disk (nothing was exported)."
        )
    ),
}


# --- the store check: one sentence per failed rule (core.narration.exporting.store_check)
# ------------------------------------
def _cast_names(d: Mapping[str, Any]) -> str:
    return f"Its characters: {_join(d['names'])}." if d["names"] else "It has no characters yet."


CAST = {
    "cast.unknown_character": Words(
        lambda d: f"The cast has no character {d['name']!r}. {_cast_names(d)}",
        cli=lambda d: (
            f"The cast has no character {d['name']!r}. {_cast_names(d)} List them with --cast, add one with "
            "--add-character NAME, or say 'narrator' for narration."
        ),
    ),
    "cast.same_character": Words("{name!r} cannot be merged into itself: choose another character to merge it into."),
    "cast.bad_name": Words(
        "{name!r} cannot be a character's name: a name needs some words, and 'narrator' or 'none' means narration."
    ),
    "cast.name_taken": Words(
        "The cast already has {name!r} (a name of {owner}); choose another name, or merge the two characters.",
        cli="The cast already has {name!r} (a name of {owner}); choose another name, or merge the two with "
        "--merge-character A --into B.",
    ),
    "cast.bad_gender": Words("{gender!r} is not a gender the cast knows: use m or f."),
}

STORE = {
    "store.unknown_rules": Words(
        lambda d: f"There are no store rules named {d['rules']!r}; use {_join(d['choices'])}."
    ),
    "store.unreadable": Words("{path} cannot be read as audio: {reason}."),
    "store.no_audio": Words("{path} holds no audio to check."),
    "acx.rms_low": Words("RMS {rms_db} dBFS is too quiet: ACX wants {low} to {high} dBFS."),
    "acx.rms_high": Words("RMS {rms_db} dBFS is too loud: ACX wants {low} to {high} dBFS."),
    "acx.peak_high": Words("Peak {peak_db} dBFS is too high: ACX allows at most {high} dBFS."),
    "acx.noise_high": Words("Noise floor {noise_db} dBFS is too high: ACX allows at most {high} dBFS."),
    "acx.dead_silence": Words(
        "Noise floor {noise_db} dBFS is digital silence: ACX wants a steady, low room tone between the words."
    ),
    "acx.head": Words("{seconds} s of room tone at the start: ACX wants {low} to {high} s."),
    "acx.tail": Words("{seconds} s of room tone at the end: ACX wants {low} to {high} s."),
    "acx.not_mp3": Words("The audio is {codec}: ACX takes MP3 files only."),
    "acx.bitrate_low": Words("{kbps} kb/s is too low: ACX wants MP3 at {low} kb/s or more."),
    "acx.not_cbr": Words("The MP3 has a variable bit rate (about {kbps} kb/s): ACX wants a constant bit rate."),
    "acx.sample_rate": Words(lambda d: f"{d['rate']} Hz: ACX wants {_join(d['rates'])} Hz."),
    "acx.channels": Words("{channels} channels: ACX takes mono or stereo."),
    "acx.channels_mixed": Words(
        "{channels} channel(s) here but {first_channels} in {first}: every file of a book must be mono, or every "
        "one stereo."
    ),
    "acx.too_long": Words("{minutes} minutes long: ACX takes files of at most {limit} minutes."),
}


def _chapters_not_rendered(d: Mapping[str, Any]) -> str:
    chapters = d["chapters"]
    shown = _join(chapters[:10]) + ("…" if len(chapters) > 10 else "")
    return (
        f"{len(chapters)} chapter(s) are not rendered yet ({shown}; {d['segments']} segment(s) pending): render "
        "them first, or export only rendered chapters."
    )


READALONG = {
    "readalong.not_rendered": Words(
        _chapters_not_rendered,
        cli=lambda d: _chapters_not_rendered(d).replace("export only rendered chapters", "choose them with --chapters"),
    ),
    "readalong.nothing": Words("Nothing to narrate in these chapters: every segment is skipped."),
    "readalong.no_book": Words(
        "The project does not keep the book {name} as it was imported: import it again (its segments and takes "
        "are kept), then export the read-along book.",
        cli="The project does not keep the book {name} as it was imported: run project DIR --import {name} (its "
        "segments and takes are kept), then export again.",
    ),
    "readalong.epub2": Words(
        "{name} is an EPUB 2 book: read-along books need EPUB 3. Convert it to EPUB 3 (Calibre, Sigil) and import "
        "it again."
    ),
    "readalong.book_damaged": Words("The project's copy of the book is damaged ({name}): import the book again."),
    "readalong.nothing_found": Words(
        "No narrated sentence of {name} was found in the book itself: import the book again, then export."
    ),
    "readalong.alone": Words(
        "A read-along book is exported on its own: export chapter files or subtitles in a second export.",
        cli="A read-along book (--out BOOK.epub) is exported on its own: drop --per-chapter and --subtitles.",
    ),
}


# --- what the front ends raise themselves ---------------------------------------------------------------------------
def _unknown_api_voice(d: Mapping[str, Any]) -> str:
    listed = _join(d["known"]) if d["known"] else "none yet (add one with POST /v1/voices)"
    if d.get("builtin_name"):
        return (
            f"There is no voice named {d['name']!r} (and the model has no built-in voice to use instead). "
            f"Known voices: {listed}."
        )
    return f"There is no voice named {d['name']!r}. Known voices: {listed}."


# --- rendering on a Ray cluster (core.narration.cluster.connect, cluster_render) -----------------------------------
def _cluster_gone(d: Mapping[str, Any], again: str) -> str:
    where = "The Ray instance on this computer" if d["address"] == "local" else f"The Ray cluster at {d['address']}"
    return (
        f"{where} went away during the render ({d['reason']}). {d['kept']} segment(s) of the render were stored "
        f"before that and are kept; {d['left']} are still pending: {again}."
    )


CLUSTER = {
    "cluster.not_installed": Words(
        "Rendering on a Ray cluster needs Ray, which is not installed: run  pip install .[cluster]  "
        "(or pip install 'ray[client]') and try again."
    ),
    "cluster.unreachable": Words(
        "The Ray cluster at {address} cannot be reached: {reason}. Check the address (auto, HOST:6379 or "
        "ray://HOST:10001) and that the cluster is running (ray start --head)."
    ),
    "cluster.start_failed": Words("Ray could not start on this computer: {reason}."),
    "cluster.no_resources": Words(
        "The Ray cluster at {address} has no CPU or GPU free for rendering: add a node or free one."
    ),
    "cluster.model_missing": Words(
        lambda d: (
            f"The Ray node {d['node']} has no copy of the model folder {d['folder']} with the same files "
            f"(looked in: {'; '.join(d['tried'])}). Copy the folder to that path on every node, or into "
            "$CHATTERBOX_MODELS there; a model downloaded in the app is fetched from the model hub by the node "
            "itself when it can reach the hub."
        )
    ),
    "cluster.lost": Words(
        lambda d: (
            f"The cluster lost its work on segments {_join(d['segments'])} three times ({d['reason']}); they are "
            "still pending: render again to finish them."
        )
    ),
    "cluster.gone": Words(
        lambda d: _cluster_gone(d, "render again to continue with them"),
        cli=lambda d: _cluster_gone(d, "run the same command again to continue with them"),
    ),
}


FRONTS = {
    "cli.message": Words("{text}"),
    "api.unknown_voice": Words(_unknown_api_voice),
    "api.disconnected": Words("The client disconnected."),
    "api.port_range": Words(
        "The port must be between 1 and 65535, not {port}.", cli="--port must be between 1 and 65535, not {port}"
    ),
    "api.open_host": Words(
        "Listening on {host} makes the API reachable from other machines: set an API key (or use 127.0.0.1).",
        cli="listening on {host} makes the API reachable from other machines: give an --api-key (or use 127.0.0.1)",
    ),
    "api.cannot_listen": Words("cannot listen on {host}:{port}: {reason}"),
    "api.not_started": Words("The local API server did not start."),
    "wyoming.address": Words(
        "The Wyoming address must be tcp://HOST:PORT (such as tcp://127.0.0.1:10200), not {address!r}.",
        cli="--wyoming takes tcp://HOST:PORT (such as tcp://127.0.0.1:10200), not {address!r}",
    ),
    "wyoming.not_started": Words("The Wyoming server did not start."),
    "wyoming.no_model": Words("No model is loaded yet."),
    "wyoming.no_voice": Words("The model has no voice of its own and the voice library has no usable voice."),
    "wyoming.text_too_long": Words(
        lambda d: f"The text has {d['chars']:,} characters; at most {d['limit']:,} are accepted per request."
    ),
    "wyoming.queue_full": Words(lambda d: f"{d['requests']:g} requests are already waiting; try again shortly."),
    "wyoming.busy": Words(lambda d: f"The server already serves {d['limit']:g} connections; try again shortly."),
    "standin.precision": Words(lambda d: f"stand-ins are built in {' or '.join(d['choices'])}, not {d['precision']}"),
    "soak.requests": Words("a soak needs at least 2 requests, not {requests}"),
    "soak.warmup": Words("warmup must be at least 1 and below the number of requests ({requests}), not {warmup}"),
}


def _listed(value: Any) -> str:
    return _join(value) if isinstance(value, (list, tuple)) else str(value)


def _asr_language(d: Mapping[str, Any]) -> str:
    return (
        f"{d['recogniser']} recognises only {_listed(d['supported'])}, not {d['language']}. For other languages "
        "install faster-whisper (pip install '.[asr]') and download its model."
    )


def _asr_model(d: Mapping[str, Any]) -> str:
    reason = f" ({d['reason']})" if d.get("reason") else ""
    return f"The speech-recognition model {d['model']} is not downloaded (looked in {d['folder']}){reason}."


SCREENING = {
    "asr.not_installed": Words(
        "Speech recognition needs {package}: install it with {install}, or screen takes without it.",
        cli="Speech recognition needs {package}: install it with {install}, or leave out --asr.",
    ),
    "asr.language": Words(_asr_language),
    "asr.model_missing": Words(
        lambda d: _asr_model(d) + " Download it once while online, or use pocketsphinx for English.",
        cli=lambda d: (
            _asr_model(d) + " Run once with --asr whisper while online to download it, or use --asr sphinx for English."
        ),
    ),
    "asr.failed": Words("Speech recognition with {recogniser} failed: {reason}. The take was screened without it."),
}


def _align_language(d: Mapping[str, Any]) -> str:
    language, reason = d["language"], d.get("reason")
    if reason == "no_espeak":
        return (
            f"Aligning words in {language} needs espeak-ng, a system program: install it (Debian and Ubuntu: "
            "sudo apt-get install espeak-ng). English is aligned without it."
        )
    if reason == "espeak_voice":
        return f"espeak-ng has no voice for {language!r}: give a language code that `espeak-ng --voices` lists."
    return f"espeak-ng could not pronounce the text in {language}; check that `espeak-ng --version` runs."


ALIGNMENT = {
    "align.not_matching": Words(
        lambda d: (
            f"Not one of the {d['words']} words of the text was heard in the recording ({_g(d['seconds'])} s): it "
            f"does not say this text, or not in {d['language']}."
        )
    ),
    "align.no_audio": Words(
        lambda d: f"The recording holds no sound ({_g(d['seconds'])} s): there are no words to place."
    ),
    "align.language": Words(_align_language),
    "align.not_installed": Words("Placing words in time needs {package}: install it with {install}."),
    "align.audio_unreadable": Words(
        "The take's recording could not be read (missing, moved or not 24 kHz mono): render the segment again."
    ),
    "align.internal": Words("The aligner failed on this take (see the log); Find word times tries it again."),
}


CATALOG: dict[str, Words] = {
    **BUNDLE,
    **VOICE,
    **NOTICES,
    **TEXT,
    **AUDIO,
    **SOUND,
    **WORKER,
    **DOCUMENT,
    **PROJECT,
    **CAST,
    **READALONG,
    **STORE,
    **CLUSTER,
    **SCREENING,
    **ALIGNMENT,
    **FRONTS,
}
