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


def segment_rows(studio) -> dict[int, tuple[str, str]]:
    """Every segment row the studio's list shows, walked through its view's model: number → (text, status)."""
    from PySide6.QtCore import QModelIndex

    from app.studio.segment_model import NUMBER_ROLE, STATUS

    model, rows = studio.segments.model(), {}

    def walk(parent):
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            number = index.data(NUMBER_ROLE)
            if number is not None:
                rows[number] = (index.data(), index.siblingAtColumn(STATUS).data())
            walk(index)

    walk(QModelIndex())
    return rows


def chapter_rows(studio) -> list[tuple[str, str, str]]:
    """Every chapter row the studio's list shows: (title, what its status column says, its takes column)."""
    from PySide6.QtCore import QModelIndex

    from app.studio.segment_model import CHAPTER_ROLE

    model = studio.segments.model()
    rows = []
    for row in range(model.rowCount(QModelIndex())):
        index = model.index(row, 0, QModelIndex())
        if index.data(CHAPTER_ROLE) is not None:
            rows.append(tuple(index.siblingAtColumn(column).data() or "" for column in range(3)))
    return rows


def cell(studio, number, column=0, role=None):
    """What the list shows for segment ``number`` in ``column`` (its text by default); ``role``: Qt's display role
    unless given (a tooltip, a font)."""
    from PySide6.QtCore import Qt

    index = studio.segments.segment_index(number, column)
    assert index.isValid(), f"segment {number} is not shown"
    return index.data(Qt.ItemDataRole.DisplayRole if role is None else role)
