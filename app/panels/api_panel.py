"""Settings → Local API: serve the OpenAI-compatible speech API from the window, on this machine only.

The server runs in a thread inside the app on the window's own inference worker, so the caches are shared and API
requests take turns with the window's, sentence by sentence. It listens on 127.0.0.1 only (the command line's
``python -m core serve --host`` is for other machines); the key, when given, is required as ``Authorization: Bearer
KEY``. The port, the key and whether it starts with the app are remembered (app settings).

Below it, the Wyoming server for Home Assistant (:class:`~app.panels.wyoming_switch.WyomingSwitch`), on the same
worker, switched on and off on its own.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from core.engine import ChatterboxError
from core.wording import describe_error

from ..settings import Key
from .wyoming_switch import WyomingSwitch

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765
"""As ``python -m core serve``. The server code (FastAPI, uvicorn) is imported only when the API is turned on."""

TIP = (
    "Lets other programs on this computer (chat front ends, readers, scripts) speak through this app's model with "
    "an OpenAI client: base URL below, any key unless you set one. Requests wait in line with your own."
)


class ApiPanel(QGroupBox):
    state_changed = Signal(bool)

    def __init__(self, worker, library, parent=None, settings=None):
        super().__init__("Local API", parent)
        self.worker, self.library, self.settings = worker, library, settings
        self.server = None
        self.enabled = QCheckBox("Serve the local speech API")
        self.enabled.setToolTip(TIP)
        self.start_with_app = QCheckBox("Start it with the app")
        self.start_with_app.setToolTip("Serve the API as soon as the window opens, on the port and key below.")
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setSpecialValueText("any free")
        self.port.setValue(DEFAULT_PORT)
        self.key = QLineEdit()
        self.key.setPlaceholderText("none (only this computer can connect)")
        self.key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.url = QLineEdit()
        self.url.setReadOnly(True)
        self.url.setPlaceholderText("off")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the base URL for an OpenAI client")
        self.served = QLabel("0 requests served")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        url_row = QWidget()
        row = QHBoxLayout(url_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.url, 1)
        row.addWidget(self.copy_button)
        form = QFormLayout(self)
        form.addRow(self.enabled)
        form.addRow(self.start_with_app)
        form.addRow("Port", self.port)
        form.addRow("API key", self.key)
        form.addRow("Base URL", url_row)
        form.addRow(self.served)
        form.addRow(self.status)
        self.wyoming = WyomingSwitch(worker, library, self, settings)  # Home Assistant's way in, switched on its own
        self.wyoming.add_rows(form)
        self._timer = QTimer(self)
        self._timer.setInterval(500)
        self._timer.timeout.connect(self._refresh)
        self.enabled.toggled.connect(self._on_toggled)
        self.copy_button.clicked.connect(self._copy)
        self._remembered()

    def _remembered(self) -> None:
        """Take the port, key and start-with-the-app from the settings; keep them there as they change."""
        if self.settings is None:
            return
        self.port.setValue(self.settings.get(Key.API_PORT))
        self.key.setText(self.settings.get(Key.API_KEY) or "")
        self.start_with_app.setChecked(self.settings.get(Key.API_START))
        self.port.valueChanged.connect(lambda value: self.settings.set(Key.API_PORT, value))
        self.key.editingFinished.connect(lambda: self.settings.set(Key.API_KEY, self.key.text().strip()))
        self.start_with_app.toggled.connect(lambda on: self.settings.set(Key.API_START, on))
        if self.start_with_app.isChecked():
            QTimer.singleShot(0, self.start)  # once the window is built

    @property
    def running(self) -> bool:
        return self.server is not None

    def start(self) -> bool:
        if self.server is not None:
            return True
        from core.api import ApiConfig, ApiServer, create_app

        if self.settings is not None:
            self.settings.set(Key.API_KEY, self.key.text().strip())
        config = ApiConfig(api_key=self.key.text().strip() or None)
        try:
            server = ApiServer(create_app(self.worker, self.library, config), DEFAULT_HOST, self.port.value())
            server.start()
        except ChatterboxError as exc:
            self.status.setText(f"Not serving: {describe_error(exc)}")
            self._show(False)
            return False
        self.server = server
        self.status.setText("Serving on this computer only.")
        self._show(True)
        return True

    def shutdown(self) -> None:
        """Stop serving both (requests in progress are cancelled); the window calls it when it closes."""
        self.stop_http()
        self.wyoming.shutdown()

    def stop_http(self) -> None:
        """Stop serving the HTTP API (its requests are cancelled); Wyoming goes on."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        self._show(False)
        self.status.setText("")

    def _show(self, on: bool) -> None:
        self.enabled.blockSignals(True)
        self.enabled.setChecked(on)
        self.enabled.blockSignals(False)
        self.port.setEnabled(not on)
        self.key.setEnabled(not on)
        self.url.setText(self.server.url if on and self.server else "")
        self._timer.start() if on else self._timer.stop()
        self._refresh()
        self.state_changed.emit(on)

    @Slot(bool)
    def _on_toggled(self, on: bool) -> None:
        self.start() if on else self.stop_http()

    @Slot()
    def _copy(self) -> None:
        if self.url.text():
            QGuiApplication.clipboard().setText(self.url.text())

    @Slot()
    def _refresh(self) -> None:
        count = self.server.jobs.served if self.server else 0
        self.served.setText(f"{count} request{'s' if count != 1 else ''} served")
