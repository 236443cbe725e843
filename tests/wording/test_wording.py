"""Every error code raised anywhere has wording for every front end, and the layers below the front ends raise only
codes (never a sentence for a person)."""

from __future__ import annotations

import ast
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

import core.api
import core.bench
import core.cli
import core.narration
import core.standin
import core.voices
from core.api.voices import UnknownVoice
from core.cli.errors import CliError
from core.engine import ChatterboxError, Failed, ModelFailed, VoiceReferenceError
from core.engine.errors import is_code
from core.wording import CATALOG, FRONTS, describe, describe_error, describe_failure, generic

ROOT = Path(__file__).resolve().parents[2]
BELOW_FRONT_ENDS = ("core/engine", "core/voices", "core/narration")
_ = (core.api, core.bench, core.cli, core.narration, core.standin, core.voices)  # their error classes are loaded


def _subclasses(kind: type) -> set[type]:
    found = set()
    for sub in kind.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


FIXED_CODES = {
    "CliError": "cli.message",
    "UnknownVoice": "api.unknown_voice",
    "SynthesisCancelled": "synthesis.cancelled",
}
"""Error classes whose constructor sets the code itself."""
ERROR_CLASSES = ({c.__name__ for c in _subclasses(ChatterboxError)} | {"ChatterboxError"}) - {
    "CliError",
    "UnknownVoice",
}
EVENT_CALLS = {"Failed": 1, "ModelFailed": 1, "JobFailed": 0, "fail": 0, "Notice": 0, "_no_words": 0}
"""Calls that take a code (not an exception class): the index of the code among their positional arguments. They
count where a code is given (``fail`` also names helpers that take a sentence part; ``_no_words`` is a take's failed
alignment, stored with the take and worded when it is shown)."""

NUMBERS = set(
    [
        "seconds",
        "minimum",
        "recommended",
        "chars",
        "limit",
        "low",
        "high",
        "value",
        "speed",
        "port",
        "number",
        "count",
        "segment",
        "take",
        "takes",
        "total",
        "schema",
        "supported",
        "requests",
        "warmup",
        "minutes",
        "used",
        "rate",
    ]
)
LISTS = {"languages", "suffixes", "choices", "fields", "tables", "names", "known", "voices", "pending"}
FLAGS = {"low_open", "unset_ok", "builtin_name"}


def _python_files() -> Iterator[Path]:
    for top in ("core", "app"):
        yield from sorted((ROOT / top).rglob("*.py"))


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _code_calls() -> Iterator[tuple[Path, ast.Call, ast.expr | None]]:
    """Each call that raises or reports an error code, with the expression in the code's place."""
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            if name in ERROR_CLASSES:
                index = 0
            elif name in EVENT_CALLS:
                index = EVENT_CALLS[name]
                given = node.args[index] if len(node.args) > index else None
                if not (isinstance(given, ast.Constant) and isinstance(given.value, str) and is_code(given.value)):
                    continue
            else:
                continue
            yield path, node, node.args[index] if len(node.args) > index else None


def _sample(key: str) -> object:
    if key in NUMBERS:
        return 2.5
    if key in LISTS:
        return ["a", "b"]
    if key in FLAGS:
        return True
    if key == "presets":
        return {"podcast": -16.0}
    return "x"


def _raised() -> dict[str, set[frozenset[str]]]:
    """Code → the sets of data keys it is raised with (calls whose data is spread from elsewhere are left out)."""
    codes: dict[str, set[frozenset[str]]] = {
        "cli.message": {frozenset(CliError("x").data)},
        "api.unknown_voice": {frozenset(UnknownVoice("alloy", ["Ada"]).data)},
        "synthesis.cancelled": {frozenset()},
    }
    for _path, call, code in _code_calls():
        if not (isinstance(code, ast.Constant) and isinstance(code.value, str)):
            continue
        keys = {k.arg for k in call.keywords if k.arg is not None}
        if any(k.arg is None for k in call.keywords):
            keys = None
        for arg in call.args:  # Failed(rid, code, {...}), fail(code, {...})
            if isinstance(arg, ast.Dict) and keys is not None:
                keys |= {k.value for k in arg.keys if isinstance(k, ast.Constant)}
        codes.setdefault(code.value, set())
        if keys is not None:
            codes[code.value].add(frozenset(keys))
    return codes


RAISED = _raised()


def test_the_collection_finds_the_codes_raised_in_each_layer():
    assert {"voice.too_short", "bundle.file_missing", "text.nothing_to_say", "options.out_of_range"} <= set(RAISED)
    assert {"worker.no_model", "worker.internal", "project.invalid", "cli.message", "api.unknown_voice"} <= set(RAISED)
    assert len(RAISED) > 60


def test_below_the_front_ends_every_error_is_raised_with_a_literal_code():
    wrong = []
    for path, call, code in _code_calls():
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(BELOW_FRONT_ENDS) or _name(call.func) == "Notice":
            continue
        if not (isinstance(code, ast.Constant) and isinstance(code.value, str) and is_code(code.value)):
            if _name(call.func) == "SynthesisCancelled" and code is None:
                continue  # its code is "synthesis.cancelled" by default
            if isinstance(code, ast.Attribute) and code.attr == "code":
                continue  # an error passed on with its own code (``exc.code, **exc.data``)
            wrong.append(f"{rel}:{call.lineno}")
    assert not wrong, f"errors raised without a literal code: {wrong}"


@pytest.mark.parametrize("code", sorted(RAISED))
def test_every_raised_code_has_wording_for_every_front_end(code):
    assert code in CATALOG, f"{code} has no wording in core/wording/catalog.py"
    for keys in RAISED[code] or {frozenset()}:
        data = {key: _sample(key) for key in keys}
        for front in FRONTS:
            text = describe(code, data, front)
            assert text != generic(code, data), f"the wording of {code} for {front} does not fit {sorted(keys)}"
            assert text.strip() and "{" not in text, text


def test_every_catalog_entry_is_raised_somewhere():
    assert sorted(set(CATALOG) - set(RAISED)) == []


def test_an_unknown_code_or_data_that_does_not_fit_gets_a_generic_sentence():
    text = describe("flux.capacitor_empty", {"gigawatts": 1.21})
    assert text == "The operation failed (flux.capacitor_empty; gigawatts: 1.21)."
    assert describe(None) == "The operation failed (unknown error)."
    assert describe("voice.too_short", {"name": "a.wav"}) == "The operation failed (voice.too_short; name: a.wav)."
    assert describe_error(OSError("disk on fire")) == "disk on fire"


def test_an_error_carries_its_code_and_data_and_a_technical_line_for_logs():
    error = VoiceReferenceError("voice.too_short", name="a.wav", seconds=0.3, minimum=1.0, recommended=5.0)
    assert error.code == "voice.too_short" and error.data["seconds"] == 0.3
    assert str(error) == "voice.too_short: name='a.wav', seconds=0.3, minimum=1.0, recommended=5.0"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is VoiceReferenceError and copy.code == error.code and copy.data == error.data
    assert (
        describe_error(error)
        == "a.wav is only 0.3 s long; a voice needs at least 1 s (ideally 5–10 s of clean speech)."
    )
    cli = pickle.loads(pickle.dumps(CliError("--seed must be a number.")))
    assert type(cli) is CliError and cli.data == {"text": "--seed must be a number."}
    with pytest.raises(ValueError, match="not an error code"):
        ChatterboxError("Something went wrong, choose another file.")


def test_each_front_end_has_its_own_words_where_they_differ():
    assert "Models menu" in describe("worker.no_model", {}, "window")
    assert "--bundle" in describe("worker.no_model", {}, "cli")
    assert describe("worker.no_model", {}, "api") == "No model is loaded yet."
    reason = {"reason": "CUDA error 700"}
    assert "press Speak" in describe("worker.gpu_failed", reason, "window")
    assert "Speak" not in describe("worker.gpu_failed", reason, "cli") + describe("worker.gpu_failed", reason, "api")
    folder = {"path": "/nope"}
    assert "make-standin" in describe("bundle.not_a_folder", folder, "cli")
    assert "Models menu" in describe("bundle.not_a_folder", folder, "window")
    assert "--voice" in describe("voice.no_default", {"variant": "turbo"}, "cli")


def test_worker_events_are_worded_from_their_code():
    failed = Failed(3, "worker.internal", {"kind": "RuntimeError", "detail": "injected"}, internal=True)
    assert describe_failure(failed, "cli") == "Internal error: RuntimeError: injected"
    loaded = ModelFailed(Path("/b"), "bundle.file_missing", {"path": "/b/onnx/x.onnx"})
    assert describe_failure(loaded).startswith("/b/onnx/x.onnx is missing.")


def test_the_layers_below_the_front_ends_never_import_the_wording():
    importers = []
    for path in _python_files():
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(BELOW_FRONT_ENDS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "core.wording" or n.startswith("core.wording.") for n in names):
                importers.append(rel)
    assert not importers
