"""The window's Wyoming switch (Settings → Local API): on, Home Assistant's client is answered through the window's
own worker; off, the port is free; a port in use or a bad address is said and the switch goes back off; the address
and the switch are remembered; the panel says who can reach it."""

from __future__ import annotations

import asyncio
import socket

from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

from app.panels.wyoming_switch import LOOPBACK, OPEN, WyomingSwitch
from app.settings import Key
from tests.wyoming_support import synthesize


async def _describe(port: int) -> Info:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Describe().event())
        while True:
            event = await asyncio.wait_for(client.read_event(), 30)
            assert event is not None
            if Info.is_type(event.type):
                return Info.from_event(event)


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _switch_on(qtbot, switch: WyomingSwitch, address: str) -> None:
    switch.address.setText(address)
    switch.enabled.setChecked(True)
    qtbot.waitUntil(lambda: switch.running, timeout=10000)


def test_the_wyoming_switch_serves_home_assistant_on_the_windows_worker_and_stops(window, qtbot):
    switch = window.api_panel.wyoming
    assert not switch.running and switch.address.text() == "tcp://127.0.0.1:10200"
    _switch_on(qtbot, switch, "tcp://127.0.0.1:0")  # any free port
    port = switch.server.port
    assert switch.status.text() == LOOPBACK and f"port: {port}" in switch.hint.text()
    assert switch.server.service.worker is window.bridge.worker  # the window's own worker and caches
    info = asyncio.run(_describe(port))
    assert [p.name for p in info.tts] == ["chatterbox-desk"]
    heard = asyncio.run(synthesize(port, "Home Assistant asks."))
    assert heard.errors == [] and heard.stopped and heard.samples > 0
    assert not window.api_panel.running  # the HTTP API stays off: each switch on its own
    switch.enabled.setChecked(False)
    assert not switch.running and switch.status.text() == "" and switch.address.isEnabled()
    assert _port_is_free(port)
    assert window.bridge.worker.alive


def test_turning_the_http_api_off_leaves_wyoming_serving(window, qtbot):
    panel = window.api_panel
    _switch_on(qtbot, panel.wyoming, "tcp://127.0.0.1:0")
    panel.port.setValue(0)
    panel.enabled.setChecked(True)
    panel.enabled.setChecked(False)
    assert not panel.running and panel.wyoming.running
    # Closing the window (the fixture) stops it: no thread is left running.


def test_a_port_in_use_is_said_and_the_switch_goes_back_off(window, qtbot):
    switch = window.api_panel.wyoming
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        switch.address.setText(f"tcp://127.0.0.1:{port}")
        switch.enabled.setChecked(True)
        assert not switch.enabled.isChecked() and not switch.running and not switch.starting
        assert switch.status.text().startswith(f"Not serving: cannot listen on 127.0.0.1:{port}")
        assert switch.address.isEnabled()


def test_a_bad_address_is_said_and_the_switch_goes_back_off(window):
    switch = window.api_panel.wyoming
    switch.address.setText("http://localhost")
    switch.enabled.setChecked(True)
    assert not switch.enabled.isChecked() and not switch.running
    assert "tcp://HOST:PORT" in switch.status.text() and "'http://localhost'" in switch.status.text()


def test_the_switch_and_its_address_are_remembered(window, qtbot):
    switch = window.api_panel.wyoming
    _switch_on(qtbot, switch, "tcp://127.0.0.1:0")
    assert window.settings.get(Key.WYOMING_ON) is True
    assert window.settings.get(Key.WYOMING_ADDRESS) == "tcp://127.0.0.1:0"
    switch.shutdown()  # as the window does when it closes: what was chosen stays chosen
    assert window.settings.get(Key.WYOMING_ON) is True
    # The next start of the app: a switch on the same settings serves at once, at that address.
    again = WyomingSwitch(window.bridge.worker, window.library, window, window.settings)
    try:
        assert again.address.text() == "tcp://127.0.0.1:0"
        qtbot.waitUntil(lambda: again.running, timeout=10000)
        assert asyncio.run(_describe(again.server.port)).tts
        again.enabled.setChecked(False)
        assert window.settings.get(Key.WYOMING_ON) is False
    finally:
        again.shutdown()


def test_listening_beyond_loopback_says_so_and_announces_itself(window, qtbot, monkeypatch):
    from core.api.wyoming.discovery import ZeroconfAnnouncer

    registered = []

    async def register(self, info):
        registered.append(info)

    async def unregister(self):
        registered.clear()

    monkeypatch.setattr(ZeroconfAnnouncer, "register", register)  # nothing is sent on the network
    monkeypatch.setattr(ZeroconfAnnouncer, "unregister", unregister)
    switch = window.api_panel.wyoming
    _switch_on(qtbot, switch, "tcp://0.0.0.0:0")
    assert switch.status.text() == OPEN and "without a password" in OPEN and "finds it by itself" in OPEN
    assert [info.port for info in registered] == [switch.server.port]
    switch.enabled.setChecked(False)
    assert registered == []


def test_a_model_without_a_voice_and_an_empty_library_is_refused_with_what_to_do(qtbot, tmp_path, bundles, voice_wav):
    """Turbo has no voice of its own: with no voice in the library every request would get an error, so the switch
    says so and stays off; with a voice saved, it serves."""
    from tests.app_support import make_window

    window = make_window(qtbot, tmp_path, bundles["turbo"])
    switch = window.api_panel.wyoming
    switch.address.setText("tcp://127.0.0.1:0")
    switch.enabled.setChecked(True)
    assert not switch.running and not switch.starting and not switch.enabled.isChecked()
    said = switch.status.text()
    assert said.startswith("Not serving: ") and "no usable voice" in said and "Save a voice to the library" in said
    window.library.add("Narrator", voice_wav)
    _switch_on(qtbot, switch, "tcp://127.0.0.1:0")
    heard = asyncio.run(synthesize(switch.server.port, "Home Assistant asks."))
    assert heard.errors == [] and heard.samples > 0
    window.close()
