"""The playback policy in the window: the setting persists and reaches the core, the player honours a planned start,
and the latency plot draws the forecast beside the measured chunks."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from app.audio.playback import Player
from app.controllers.speak import PlaybackState, playback_text
from app.panels.settings_panel import SettingsPanel
from app.settings import Key, Settings
from app.settings_summary import describe_settings
from app.widgets.latency_plot import LatencyPlot


def _settings(tmp_path) -> Settings:
    return Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


def test_the_playback_row_persists_and_reaches_the_runtime(qtbot, tmp_path):
    settings = _settings(tmp_path)
    assert settings.runtime_options().playback_policy == "auto"
    panel = SettingsPanel(settings)
    qtbot.addWidget(panel)
    combo = panel.controls[Key.PLAYBACK_POLICY]
    labels = [combo.itemText(i) for i in range(combo.count())]
    assert labels == ["Start fast", "Play smoothly", "Automatic"] and combo.currentText() == "Automatic"
    tip = combo.toolTip().lower()
    assert "stall" in tip and "first audio" in tip and "real-time factor" in tip
    combo.setCurrentIndex(labels.index("Play smoothly"))
    assert settings.get(Key.PLAYBACK_POLICY) == "smooth"
    again = _settings(tmp_path)  # a restart reads it back
    assert again.runtime_options().playback_policy == "smooth"
    reloaded = SettingsPanel(again)
    qtbot.addWidget(reloaded)
    assert reloaded.controls[Key.PLAYBACK_POLICY].currentText() == "Play smoothly"
    assert "playback smooth" in describe_settings({Key.PLAYBACK_POLICY.value: "smooth"})
    settings.set(Key.PLAYBACK_POLICY, "soon")  # a hand-edited file: the default, not an error
    assert settings.runtime_options().playback_policy == "auto"


class _Stream:
    active = True

    def __init__(self, callback, **_kw):
        self.callback = callback

    def start(self):
        pass

    def abort(self):
        pass

    def close(self):
        pass


class _Device:
    def __init__(self):
        self.stream = None

    def OutputStream(self, callback, **kw):
        self.stream = _Stream(callback, **kw)
        return self.stream


def _pull(player: Player, device: _Device, frames: int = 256) -> np.ndarray:
    out = np.ones((frames, 1), np.float32)
    device.stream.callback(out, frames, None, None)
    return out[:, 0]


def test_the_player_does_not_start_before_the_planned_start():
    device = _Device()
    player = Player(sd=device)
    player.begin()
    player.hold_until(time.monotonic() + 60)
    player.feed(np.full(1000, 0.5, np.float32))
    assert player.holding_s > 50
    assert not _pull(player, device).any() and player.played == 0 and player.underruns == 0
    player.hold = time.monotonic() - 1  # the planned start has come
    assert _pull(player, device).all() and player.played == 256 and player.holding_s == 0
    player.hold_until(time.monotonic() + 60)  # once playing, a later plan cannot pause it
    assert _pull(player, device).all() and player.played == 512
    player.begin()
    assert player.hold == 0.0  # the next request starts at once unless told otherwise


def test_the_status_line_says_playback_waits_for_a_smooth_start():
    assert playback_text(PlaybackState(0.0, generating=True, holding_s=1.25)) == "starting smoothly in 1.2 s…"


FORECAST = {
    "policy": "smooth",
    "start_ms": 2500.0,
    "chunks": [
        {"tokens": 60, "arrive_ms": 2100.0, "play_ms": 2500.0},
        {"tokens": 65, "arrive_ms": 4700.0, "play_ms": 4900.0},
        {"tokens": 125, "arrive_ms": 9300.0, "play_ms": 7600.0 + 2500.0},
    ],
}


@pytest.fixture
def latency(qtbot):
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(1200, 300)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


def test_the_latency_plot_draws_the_forecast_beside_the_measured_chunks(latency):
    forecast = latency.forecast_plot
    assert not latency.forecast_column.isVisible() and not forecast.predicted  # before any request
    latency.start_request(())
    latency.set_forecast(FORECAST)
    assert latency.forecast_column.isVisible()
    for at in (2050.0, 4800.0):
        latency.add_chunk(100.0, 900.0, 0.5, at_ms=at)
    assert list(forecast.predicted_curve.yData) == [2.1, 4.7, 9.3]
    assert list(forecast.deadline_curve.yData) == [2.5, 4.9, 10.1]
    assert list(forecast.measured_curve.yData) == [2.05, 4.8]
    assert forecast.start_line.isVisible() and forecast.start_line.value() == 2.5
    assert not forecast.empty.isVisible() and forecast.legend.isVisible()
    low, high = forecast.getPlotItem().vb.viewRange()[1]
    assert low <= 0 and high >= 10.1  # every point in view
    assert "deadline" in forecast._describe(2, 1.0)[1] and "arrived 4.80 s" in forecast._describe(2, 1.0)[1]
    latency.start_request(())  # the next request (start fast): no forecast
    assert not forecast.predicted and not forecast.start_line.isVisible()
    assert not latency.forecast_column.isVisible()  # the other two plots get the room back


def test_a_replay_shows_the_forecast_it_was_made_with(latency):
    rows = [[100.0, 900.0, 0.5, 2050.0], [100.0, 900.0, 0.5, 4800.0]]
    latency.show_replay("old", {"chunks": rows, "forecast": FORECAST, "ttfa_ms": 2050.0, "rtf": 0.6}, 0.0)
    assert list(latency.forecast_plot.measured_curve.yData) == [2.05, 4.8]
    assert len(latency.forecast_plot.predicted) == 3
    latency.show_replay("older", {"chunks": rows, "forecast": "garbled"}, 0.0)
    assert not latency.forecast_plot.predicted
