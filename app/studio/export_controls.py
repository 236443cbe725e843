"""Export from the studio: the dialog (its choices remembered), the export on its own thread with its progress and
Cancel, the store check's report; and the wait for a running export when the window closes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ..controllers.studio import export_done_text, export_progress_text
from ..settings import Key
from .check_report import CheckReport
from .export_choices import ExportChoices
from .export_dialog import ExportDialog, default_folder

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class ExportControls(_Part):
    """Exporting, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def export_dialog(self) -> None:
        if self.project is None or self.busy:
            return
        settings = self.settings
        folder = default_folder(settings.get(Key.EXPORT_FOLDER))
        remembered = settings.get(Key.EXPORT_CHOICES)
        choices = (
            ExportChoices.from_json(remembered)
            if remembered
            else ExportChoices(loudness=self.project.finishing.get("loudness"))
        )
        dialog = ExportDialog(self.project, folder, choices, self.selected_segments(), self)
        if dialog.exec():
            settings.set(Key.EXPORT_CHOICES, dialog.choices().to_json())
            request = dialog.request()
            self.project.finishing["loudness"] = request.loudness
            self.export(request)

    def export(self, request) -> bool:
        """Start writing the export on its own thread (:attr:`export_finished` brings the result); ``False`` when
        it cannot start."""
        if self.project is None or self.busy:
            return False
        self._export_target = Path(request.out or request.per_chapter)
        if not self.export_runner.start(self.project, request):
            return False
        self.segments.editable = False
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("Exporting…")
        self.status.setText(f"Exporting to {self._export_target}…")
        self._update_controls()
        return True

    def cancel_export(self) -> None:
        self.export_runner.cancel()

    def _on_export_progress(self, progress) -> None:
        self.progress.setValue(round(1000 * min(1.0, max(0.0, float(progress.fraction)))))
        self.progress.setFormat(export_progress_text(progress))

    def _on_export_finished(self, result) -> None:
        target = self._export_target or Path(".")
        self.settings.set(Key.EXPORT_FOLDER, str(target.parent))
        self._export_ended(export_done_text(result, target))
        checks = list(getattr(result, "checks", None) or [])
        if checks:
            self.check_report = CheckReport(checks, parent=self)
            self.check_report.show()
        self.export_finished.emit(result)
        self.export_ended.emit()

    def _on_export_failed(self, message: str) -> None:
        self._export_ended("Export stopped: " + message)
        self.message.emit(message, True)
        self.export_ended.emit()

    def _on_export_cancelled(self) -> None:
        self._export_ended("Export cancelled: no file was written.")
        self.export_ended.emit()

    def _export_ended(self, text: str) -> None:
        self.segments.editable = not self.controller.read_only
        self.progress.setFormat("")
        self.progress.setValue(0)
        self.status.setText(text)
        self._update_controls()

    def shutdown(self, timeout: float = 10.0) -> None:
        """The window closes: an export is cancelled and waited for, and the project's lock is given back."""
        if not self.export_runner.shutdown(timeout):
            log.warning("the export did not stop within %.0f s", timeout)
        if not self.take_check.shutdown(timeout):
            log.warning("screening the takes did not stop within %.0f s", timeout)
        if not self.word_times.shutdown(timeout):
            log.warning("finding the word times did not stop within %.0f s", timeout)
        if not self.cast_finder.shutdown(timeout):
            log.warning("finding the characters did not stop within %.0f s", timeout)
        self.controller.close()
