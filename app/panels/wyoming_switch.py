"""Settings → Local API → Wyoming server: Home Assistant's text to speech from the window, on its own worker.

The server (``core.api``'s ``WyomingServer``) binds its socket here on the GUI thread, so that a port in use or a
bad address is said at once, and starts its loop from a short-lived thread, so that announcing it over zeroconf
(beyond loopback) never freezes the window. The address and whether it is on are remembered (app settings); the
window stops it when it closes.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QLineEdit

from core.engine import ChatterboxError
from core.wording import describe_error

from ..settings import Key

if TYPE_CHECKING:
    from core.api import WyomingServer

DEFAULT_ADDRESS = "tcp://127.0.0.1:10200"
"""``core.api``'s ``WYOMING_URI`` (not imported here, so that the window does not load the API at start)."""
LOOPBACK = "Only this computer can reach it."
OPEN = (
    "Reachable from your network without a password (Wyoming has no authentication); Home Assistant finds it by itself."
)
STARTING = "Starting…"
ADD_A_VOICE = "Save a voice to the library (Voice tab), then switch the server on again."
START_TIMEOUT = 15.0


def hint(port: int | str) -> str:
    return (
        "In Home Assistant: Settings → Devices & services → Add integration → Wyoming Protocol; host: this "
        f"computer's address, port: {port}."
    )


class WyomingSwitch(QObject):
    """The switch, its address and what it says; :meth:`add_rows` puts them in a panel's form (the Local API's), so
    that they line up with its rows."""

    state_changed = Signal(bool)
    _started = Signal(object, str)  # the server, and the reason it did not start ("" when it did)

    def __init__(self, worker, library, parent=None, settings=None):
        super().__init__(parent)
        self.worker, self.library, self.settings = worker, library, settings
        self.server: WyomingServer | None = None
        self._pending: WyomingServer | None = None
        self._starter: threading.Thread | None = None
        self.enabled = QCheckBox("Wyoming server (Home Assistant)")
        self.enabled.setToolTip(
            "Lets Home Assistant's voice assistants speak in your voices: Wyoming text to speech on the address below."
        )
        self.address = QLineEdit(DEFAULT_ADDRESS)
        self.address.setPlaceholderText(DEFAULT_ADDRESS)
        self.address.setToolTip(
            "tcp://HOST:PORT. 127.0.0.1: this computer only; 0.0.0.0 (or this computer's address): your network."
        )
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.hint = QLabel(hint(10200))
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)  # greyed: a note, not a control
        self.enabled.toggled.connect(self._on_toggled)
        self._started.connect(self._on_started)
        self._remembered()

    def _remembered(self) -> None:
        if self.settings is None:
            return
        self.address.setText(self.settings.get(Key.WYOMING_ADDRESS) or DEFAULT_ADDRESS)
        self.address.editingFinished.connect(
            lambda: self.settings.set(Key.WYOMING_ADDRESS, self.address.text().strip() or DEFAULT_ADDRESS)
        )
        # What the person chose (not what happened): a port in use today is tried again at the next start.
        self.enabled.toggled.connect(lambda on: self.settings.set(Key.WYOMING_ON, on))
        if self.settings.get(Key.WYOMING_ON):
            self.start()

    def add_rows(self, form: QFormLayout) -> None:
        form.addRow(self.enabled)
        form.addRow("Address", self.address)
        form.addRow(self.status)
        form.addRow(self.hint)

    @property
    def running(self) -> bool:
        return self.server is not None

    @property
    def starting(self) -> bool:
        return self._pending is not None

    def start(self) -> bool:
        """Bind the address and start serving in the background (:attr:`running` once it accepts connections);
        ``False`` (with the reason said) when the address is bad or taken."""
        if self.server is not None or self._pending is not None:
            return True
        from core.api import WyomingConfig, WyomingServer, parse_uri

        text = self.address.text().strip() or DEFAULT_ADDRESS
        if self.settings is not None:
            self.settings.set(Key.WYOMING_ADDRESS, text)
        options = self.settings.synthesis_options() if self.settings is not None else None
        config = WyomingConfig(options=options) if options is not None else WyomingConfig()
        try:
            host, port = parse_uri(text)
            server = WyomingServer(self.worker, self.library, config, host, port)
        except ChatterboxError as exc:
            self._failed(describe_error(exc))
            return False
        problem = server.voice_problem()
        if problem is not None:  # every request would fail: Home Assistant would only ever hear an error
            server.stop()
            self._failed(f"{describe_error(problem)} {ADD_A_VOICE}")
            return False
        self._pending = server
        self._starter = threading.Thread(target=self._start, args=(server,), name="wyoming-start", daemon=True)
        self._starter.start()
        self.status.setText(STARTING)
        self._show(True)
        return True

    def _start(self, server: WyomingServer) -> None:
        """On the starter thread: the server's loop is up (or not); the answer goes to the GUI thread."""
        try:
            server.start()
        except ChatterboxError as exc:
            self._started.emit(server, describe_error(exc))
        else:
            self._started.emit(server, "")

    @Slot(object, str)
    def _on_started(self, server: WyomingServer, error: str) -> None:
        if server is not self._pending:  # switched off (or the window closed) meanwhile: already stopped
            return
        self._pending = None
        self._join_starter()
        if error:
            server.stop()
            self._failed(error)
            return
        self.server = server
        self.status.setText(OPEN if server.open else LOOPBACK)
        self.hint.setText(hint(server.port))
        self._show(True)

    def shutdown(self) -> None:
        """Stop serving (connections are closed, their requests cancelled); the window calls it when it closes."""
        pending, self._pending = self._pending, None
        self._join_starter()  # its server's loop is up (or has failed) before it is told to stop
        for server in (pending, self.server):
            if server is not None:
                server.stop()
        self.server = None
        self.status.setText("")
        self._show(False)

    def _join_starter(self) -> None:
        if self._starter is not None:
            self._starter.join(START_TIMEOUT)
            self._starter = None

    def _failed(self, text: str) -> None:
        self.status.setText(f"Not serving: {text}")
        self._show(False)

    def _show(self, on: bool) -> None:
        self.enabled.blockSignals(True)
        self.enabled.setChecked(on)
        self.enabled.blockSignals(False)
        self.address.setEnabled(not on)
        self.state_changed.emit(self.running)

    @Slot(bool)
    def _on_toggled(self, on: bool) -> None:
        self.start() if on else self.shutdown()
