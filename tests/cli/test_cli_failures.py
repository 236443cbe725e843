"""Each failure is shown once on the command line, in the command line's words."""

from __future__ import annotations

import io
import json

import core.narration.rendering.render as render_module
from core.cli.main import main
from core.cli.render_progress import RenderBar
from core.engine import VoiceReferenceError
from core.narration import RenderProgress

REASON = "x.wav is silent. Choose a recording in which the speaker can be heard."


def _fail_segment(monkeypatch, numbers: set[int]) -> None:
    real = render_module._render_one

    def render_one(project, pipeline, segment, *args, **kwargs):
        if project.number(segment) in numbers:
            raise VoiceReferenceError("voice.silent", name="x.wav")
        return real(project, pipeline, segment, *args, **kwargs)

    monkeypatch.setattr(render_module, "_render_one", render_one)


def _book(tmp_path):
    book = tmp_path / "b.txt"
    book.write_text("One sentence here. Another one there. And a third.", encoding="utf-8")
    return book


def test_a_failed_segment_is_reported_once_with_its_reason(capsys, bundles, tmp_path, monkeypatch):
    _fail_segment(monkeypatch, {2})
    project = tmp_path / "P"
    code = main(["narrate", str(_book(tmp_path)), "--project", str(project), "--bundle", str(bundles["original"])])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.count(REASON) == 1 and "segment 2 failed: " + REASON in err
    assert err.rstrip().splitlines()[-1] == "error: 1 segment(s) failed (2); the reason of each is above."
    assert "Traceback" not in err and "voice.silent" not in err + out

    # Exporting later, without a render: the reason was not shown in this run, so the error says it.
    code = main(["project", str(project), "--export", "--out", str(tmp_path / "book.wav")])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == f"error: 1 segment(s) failed; the first, segment 2: {REASON} Nothing was exported."

    # The JSON listing gives the sentence, not the code.
    code = main(["project", str(project), "--list", "--json"])
    out, err = capsys.readouterr()
    assert out, (code, err)
    segments = json.loads(out)["segments"]
    assert [s["error"] for s in segments] == [None, REASON, None]


def test_a_failure_line_stays_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = RenderBar(stream)
    failed = RenderProgress(
        "failed",
        2,
        2,
        3,
        1.0,
        1.0,
        10,
        10,
        error="voice.silent: name='x.wav'",
        error_code="voice.silent",
        error_data={"name": "x.wav"},
    )
    bar.update(failed)
    bar.update(RenderProgress("segment", 3, 3, 3, 2.0, 2.0, 0, 20))
    failure_line, rest = stream.getvalue().split("\n", 1)
    assert failure_line.rstrip().endswith(f"segment 2 failed: {REASON}")  # not overwritten by the next update
    assert rest.startswith("\r[") and REASON not in rest
    assert bar.failures_shown == {2}
