"""The window's Local API panel: on, a request from another program through the window's own worker, off."""

from __future__ import annotations

import httpx
import pytest

from tests.api_support import decoded_samples


def test_window_local_api_toggle(window, qtbot):
    panel = window.api_panel
    assert panel.parentWidget() is not None and not panel.running
    panel.port.setValue(0)  # any free port
    panel.enabled.setChecked(True)
    assert panel.running and panel.url.text().startswith("http://127.0.0.1:")
    r = httpx.post(
        panel.url.text() + "/audio/speech",
        json={"input": "From another program.", "voice": "alloy", "response_format": "wav"},
        timeout=60,
    )
    assert r.status_code == 200 and decoded_samples(r.content, "wav") > 0
    assert panel.server.app.state.api.worker is window.bridge.worker  # the window's own worker and caches
    qtbot.waitUntil(lambda: panel.served.text() == "1 request served", timeout=3000)
    url = panel.url.text()
    panel.enabled.setChecked(False)
    assert not panel.running and panel.url.text() == ""
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/models", timeout=2)
    assert window.bridge.worker.alive


def test_the_window_remembers_the_api_port_key_and_start(window, qtbot):
    from app.panels.api_panel import ApiPanel
    from app.settings import Key

    panel = window.api_panel
    panel.port.setValue(0)
    panel.key.setText("remembered-key")
    panel.key.editingFinished.emit()
    panel.start_with_app.setChecked(True)
    assert window.settings.get(Key.API_PORT) == 0
    assert window.settings.get(Key.API_KEY) == "remembered-key"
    assert window.settings.get(Key.API_START) is True
    # The next start of the app: a panel on the same settings serves at once, with that key.
    again = ApiPanel(window.bridge.worker, window.library, window, window.settings)
    try:
        assert again.port.value() == 0 and again.key.text() == "remembered-key" and again.start_with_app.isChecked()
        qtbot.waitUntil(lambda: again.running, timeout=5000)
        url = again.url.text()
        assert httpx.get(url + "/models", timeout=5).status_code == 401
        ok = httpx.get(url + "/models", headers={"Authorization": "Bearer remembered-key"}, timeout=5)
        assert ok.status_code == 200
    finally:
        again.shutdown()
    window.settings.set(Key.API_START, False)
