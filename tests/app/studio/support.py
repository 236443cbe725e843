"""The studio tests' helpers: a new project from text in the window, a render and an export waited for."""

from __future__ import annotations

TEXT = "The first sentence is here. A second one follows!\n\nA new paragraph starts. And it ends."


def new_project(window, tmp_path, text=TEXT):
    window.speak_panel.text.set_text(text)
    project = window.project_files.new_from_text(window.speak_panel.text.text, tmp_path / "Story.cbproj")
    assert project is not None
    return project


def render(qtbot, window):
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        window.studio_panel.render_button.click()


def export(qtbot, studio, request):
    """Export on the studio's export thread and wait for the result."""
    with qtbot.waitSignal(studio.export_finished, timeout=60000) as finished:
        assert studio.export(request)
    return finished.args[0]
