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
