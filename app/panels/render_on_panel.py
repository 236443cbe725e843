"""Settings → Render on: where the studio renders a project — this computer, or a Ray cluster at an address — and a
connection test that says what the cluster has (nodes, GPUs, CPUs) or why it cannot be used.

The choice and the address are remembered (app settings) and read when Render is pressed. The test runs on its own
thread (:class:`~app.panels.connection_test.ConnectionTest`): the window stays responsive while Ray connects or
waits for an unreachable head node. Ray is an optional extra (``pip install '.[cluster]'``) and not part of the
desktop build: the section is shown anyway and its test says how to get Ray.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QWidget,
)

from ..controllers.render_on import CLUSTER, EXAMPLE, LOCAL, check_address, cluster_summary, failure_text, where
from ..settings import Key, Settings
from .connection_test import ConnectionTest, Probe

TIPS = {
    LOCAL: "Render projects here, on this computer's CPU or GPU (Settings → Engine).",
    CLUSTER: "Render a project's pending segments on a Ray cluster: one actor per GPU (or per few CPU cores) on "
    "every machine of the cluster, each with its own copy of the model. The takes come back here and are saved "
    "as they arrive. Regenerating one take still renders here.",
    "address": f"Empty: a Ray instance started on this computer. auto: the cluster this computer is part of "
    f"(ray start ran here). {EXAMPLE}: a cluster elsewhere, through Ray Client on its head node.",
    "test": "Connect to the cluster and count its nodes, GPUs and CPUs (nothing is rendered).",
}
ERROR_STYLE = "color: #c62828;"
HINT_STYLE = "color: palette(placeholder-text);"
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
"""A command line's flag (``--render``): kept whole on one line, never broken after its hyphens."""


def label_html(text: str) -> str:
    """``text`` for a word-wrapped rich-text label: escaped, with each flag of a command kept on one line."""
    return _FLAG.sub(r"<nobr>\1</nobr>", html.escape(text, quote=False))


class RenderOnPanel(QGroupBox):
    changed = Signal()
    """The choice or the address changed (and is stored)."""

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        probe: Probe | None = None,
        frozen: bool | None = None,
        cluster_busy: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__("Render on", parent)
        self.settings = settings
        self.cluster_busy = cluster_busy or (lambda: False)
        """A render runs on the cluster now: a test (which may connect elsewhere) waits until it ends."""
        self.frozen = getattr(sys, "frozen", False) if frozen is None else frozen
        self.test = ConnectionTest(probe, self)
        self._build_ui()
        self._restore()
        self._connect_signals()
        self._update_controls()

    def _build_ui(self) -> None:
        self.local_choice = QRadioButton("This computer")
        self.local_choice.setToolTip(TIPS[LOCAL])
        self.cluster_choice = QRadioButton("A Ray cluster")
        self.cluster_choice.setToolTip(TIPS[CLUSTER])
        self.choice = QButtonGroup(self)
        self.choice.addButton(self.local_choice)
        self.choice.addButton(self.cluster_choice)
        self.address = QLineEdit()
        self.address.setPlaceholderText(f"auto or {EXAMPLE}")
        self.address.setToolTip(TIPS["address"])
        self.address.setClearButtonEnabled(True)
        self.address_note = QLabel("")  # where the address leads, or what is wrong with it
        self.address_note.setWordWrap(True)
        self.test_button = QPushButton("&Test connection")
        self.test_button.setToolTip(TIPS["test"])
        self.result = QLabel("")
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.RichText)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # a pip command to copy
        self.result.hide()
        test_row = QWidget()
        row = QHBoxLayout(test_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.test_button)
        row.addStretch(1)
        form = QFormLayout(self)
        form.addRow(self.local_choice)
        form.addRow(self.cluster_choice)
        form.addRow("Address", self.address)
        form.addRow(self.address_note)
        form.addRow(test_row)
        form.addRow(self.result)

    def _restore(self) -> None:
        on_cluster = self.settings.get(Key.RENDER_ON) == CLUSTER
        (self.cluster_choice if on_cluster else self.local_choice).setChecked(True)
        self.address.setText(str(self.settings.get(Key.CLUSTER_ADDRESS) or ""))
        self._show_problem()

    def _connect_signals(self) -> None:
        self.cluster_choice.toggled.connect(self._on_choice_changed)
        self.address.textChanged.connect(self._on_address_edited)
        self.address.editingFinished.connect(self._show_problem)
        self.test_button.clicked.connect(self.run_test)
        self.test.succeeded.connect(self._on_test_succeeded)
        self.test.failed.connect(self._on_test_failed)

    @property
    def testing(self) -> bool:
        return self.test.running

    # --- the choice and the address ----------------------------------------------------------------------------
    @Slot(bool)
    def _on_choice_changed(self, on_cluster: bool) -> None:
        self.settings.set(Key.RENDER_ON, CLUSTER if on_cluster else LOCAL)
        self._update_controls()
        self.changed.emit()

    @Slot(str)
    def _on_address_edited(self, text: str) -> None:
        self.settings.set(Key.CLUSTER_ADDRESS, text.strip())
        self._show_result("")  # a test of another address says nothing about this one
        if check_address(text).ok:  # a problem is said when the editing ends, not at every key
            self._show_problem()
        self.changed.emit()

    @Slot()
    def _show_problem(self) -> bool:
        """Under the field: what is wrong with the address, or where it leads; ``True`` when it is fine."""
        checked = check_address(self.address.text())
        if checked.problem is not None:
            self.address_note.setText(checked.problem)
            self.address_note.setStyleSheet(ERROR_STYLE)
        else:
            self.address_note.setText(f"→ {where(checked.address)}")
            self.address_note.setStyleSheet(HINT_STYLE)
        return checked.ok

    # --- the connection test -----------------------------------------------------------------------------------
    @Slot()
    def run_test(self) -> bool:
        """Probe the address on the test's thread; ``False`` when the address is wrong or a test already runs."""
        if self.testing:
            return False
        if not self._show_problem():
            self._show_result("")
            return False
        if self.cluster_busy():  # this process holds one Ray connection: a test elsewhere would end the render's
            self._show_result("A project renders on the cluster now: test the connection when it has finished.")
            return False
        address = check_address(self.address.text()).address
        if not self.test.start(address):
            return False
        self._show_result(f"Connecting to {where(address)}…")
        self._update_controls()
        return True

    @Slot(object)
    def _on_test_succeeded(self, info) -> None:
        self._show_result(f"✓ {cluster_summary(info)}")
        self._update_controls()

    @Slot(object)
    def _on_test_failed(self, exc) -> None:
        self._show_result(f"✗ {failure_text(exc, self.frozen)}", error=True)
        self._update_controls()

    def _show_result(self, text: str, error: bool = False) -> None:
        self.result.setText(label_html(text))
        self.result.setStyleSheet(ERROR_STYLE if error else "")
        self.result.setVisible(bool(text))

    def _update_controls(self) -> None:
        on_cluster, testing = self.cluster_choice.isChecked(), self.testing
        self.address.setEnabled(on_cluster and not testing)
        self.address_note.setEnabled(on_cluster)
        self.test_button.setEnabled(on_cluster and not testing)
        self.test_button.setText("Testing…" if testing else "&Test connection")

    def shutdown(self) -> None:
        """The window closes: a test in progress is given a moment (it cannot hold the exit)."""
        self.test.shutdown()
