"""File menu of the studio: New project (from the editor's text), Import text/Markdown/EPUB, Open, Save, recent
projects, and the question before unsaved changes are lost."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from core.engine import ChatterboxError
from core.narration import (
    Document,
    Project,
    ProjectLock,
    create_project,
    import_document,
    is_project,
    open_project,
    parse_text,
    read_document,
    source_identity,
)
from core.voices import VoiceLibrary
from core.wording import describe_error, describe_notice

from ..messages import Messages
from ..settings import Key, Settings
from .studio_panel import StudioPanel

MAX_RECENT = 8
PROJECT_SUFFIX = ".cbproj"
IMPORT_FILTER = "Text, Markdown or EPUB (*.txt *.md *.markdown *.epub);;All files (*)"


class ProjectFiles:
    """The project commands of the File menu, on the studio panel.

    ``voice()`` names the voice a new project starts with (the current one), ``text()`` is the editor's text for
    New project, and ``show_project()`` brings the studio to the front once a project is open."""

    def __init__(
        self,
        studio: StudioPanel,
        menu: QMenu,
        settings: Settings,
        library: VoiceLibrary,
        messages: Messages,
        parent: QWidget,
        voice: Callable[[], str | None],
        text: Callable[[], str],
        show_project: Callable[[], None],
    ) -> None:
        self.studio, self.settings, self.library, self.messages = studio, settings, library, messages
        self.parent = parent
        self.voice, self.text, self.show_project = voice, text, show_project
        self.new_action = _add(menu, "&New project from the text…", self.new_from_text_dialog, "Ctrl+N")
        self.import_action = _add(menu, "&Import text, Markdown or EPUB…", self.import_dialog, "Ctrl+I")
        self.open_action = _add(menu, "&Open project…", self.open_dialog, "Ctrl+Shift+O")
        self.recent_menu = menu.addMenu("Open &recent")
        self.save_action = _add(menu, "&Save project", self.save, QKeySequence.StandardKey.Save)
        menu.addSeparator()
        self.refresh()

    # --- commands ----------------------------------------------------------------------------------------------
    def new_from_text(self, text: str, folder: Path) -> Project | None:
        if not text.strip():
            self.messages.show("Type or paste the text of the narration first, then choose New project.")
            return None
        return self._create(folder, parse_text(text, Path(folder).stem), text)

    def import_file(self, source: Path, folder: Path) -> Project | None:
        try:
            document = read_document(source)
            raw = Path(source).read_bytes()
        except (ChatterboxError, OSError) as exc:
            self.messages.show(describe_error(exc))
            return None
        project = self._create(folder, document, raw, Path(source).name, Path(source).parent)
        if project is not None:
            self.studio.show_imported()  # the chapters to review; rendering waits for Render
            if document.warnings:  # e.g. a file of the book that is missing: the rest was imported
                self.messages.show("\n".join(describe_notice(w) or "" for w in document.warnings), error=False)
        return project

    def _create(self, folder: Path, doc: Document, raw, name="text", base=None) -> Project | None:
        if not self.confirm_discard():
            return None
        voice = self.voice()
        try:  # an import writes the project: not while another process renders or edits it (ProjectLocked says who)
            with ProjectLock(folder, "edit"):
                project = open_project(folder) if is_project(folder) else create_project(folder, doc.title)
                import_document(project, doc, voice, self.library, base, source_identity(name, raw, voice))
                project.save()
        except ChatterboxError as exc:
            self.messages.show(describe_error(exc))
            return None
        self._opened(project)
        return project

    def open(self, folder: Path) -> Project | None:
        if not self.confirm_discard():
            return None
        try:
            project = open_project(folder)
        except ChatterboxError as exc:
            self.messages.show(describe_error(exc))
            return None
        self._opened(project)
        return project

    def save(self) -> bool:
        return self.studio.save()

    def confirm_discard(self) -> bool:
        """True when it is fine to drop the open project: saved, or the user chose Save or Discard."""
        if self.studio.project is None or not self.studio.dirty:
            return True
        answer = QMessageBox.question(
            self.parent,
            "Unsaved changes",
            f"Save the changes to “{self.studio.project.title}”?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.studio.save()
        return answer == QMessageBox.StandardButton.Discard

    def _opened(self, project: Project) -> None:
        self.studio.set_project(project)
        settings = self.settings
        folder = str(project.folder.resolve())
        recent = [folder] + [f for f in self.recent() if f != folder]
        settings.set(Key.RECENT_PROJECTS, "\n".join(recent[:MAX_RECENT]))
        settings.set(Key.PROJECT, folder)
        self.show_project()
        self.refresh()

    def recent(self) -> list[str]:
        return [line for line in str(self.settings.get(Key.RECENT_PROJECTS) or "").splitlines() if line]

    def refresh(self) -> None:
        self.recent_menu.clear()
        folders = [f for f in self.recent() if is_project(Path(f))]
        for number, folder in enumerate(folders, 1):
            action = QAction(f"&{number} {Path(folder).name}", self.recent_menu)
            action.setToolTip(folder)
            action.triggered.connect(partial(self._open_recent, folder))
            self.recent_menu.addAction(action)
        self.recent_menu.setEnabled(bool(folders))
        self.save_action.setEnabled(self.studio.project is not None)

    def _open_recent(self, folder: str, _checked: bool = False) -> None:
        self.open(Path(folder))

    # --- dialogs -----------------------------------------------------------------------------------------------
    def new_from_text_dialog(self) -> None:
        folder = self._ask_folder("narration")
        if folder is not None:
            self.new_from_text(self.text(), folder)

    def import_dialog(self) -> None:
        source, _ = QFileDialog.getOpenFileName(self.parent, "Import a book", str(Path.home()), IMPORT_FILTER)
        if source:
            folder = self._ask_folder(Path(source).stem, Path(source).parent)
            if folder is not None:
                self.import_file(Path(source), folder)

    def open_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.parent, "Open a narration project", str(Path.home()))
        if folder:
            self.open(Path(folder))

    def _ask_folder(self, stem: str, near: Path | None = None) -> Path | None:
        start = (near or Path.home()) / f"{stem}{PROJECT_SUFFIX}"
        chosen, _ = QFileDialog.getSaveFileName(
            self.parent, "Project folder (created)", str(start), f"Narration project (*{PROJECT_SUFFIX})"
        )
        if not chosen:
            return None
        path = Path(chosen)
        return path if path.suffix == PROJECT_SUFFIX else path.with_name(path.name + PROJECT_SUFFIX)


def _add(
    menu: QMenu, text: str, slot: Callable[[], object], shortcut: QKeySequence | QKeySequence.StandardKey | str
) -> QAction:
    action = QAction(text, menu)
    action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(slot)
    menu.addAction(action)
    return action
