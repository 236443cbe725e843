"""The waveform and latency plots: empty state, whole-number axes without SI scaling, one unit per axis, a readable
legend, values under the mouse, the settings behind each request, and History replays shown in the plots."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from app.settings import Key
from app.settings_summary import describe_settings, distinguishing_labels, summary_text
from app.widgets.latency_plot import LatencyPlot
from app.widgets.plot_axes import IntegerAxis
from app.widgets.waveform_plot import WaveformPlot
from tests.app_support import speak_and_wait

KV_OFF = describe_settings({Key.KV_CHAINING.value: False})
DEFAULTS = describe_settings({})


@pytest.fixture
def latency(qtbot):
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(900, 300)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


@pytest.fixture
def waveform(qtbot):
    plot = WaveformPlot(redraw_ms=10)
    qtbot.addWidget(plot)
    plot.resize(800, 200)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


def fill(latency: LatencyPlot, settings=(DEFAULTS, DEFAULTS, KV_OFF), chunks: int = 3) -> None:
    for r, group in enumerate(settings):
        latency.start_request(group)
        for i in range(chunks):
            latency.add_chunk(200.0 + 10 * i + r, 50.0 + i, 0.4 + 0.1 * i, at_ms=300.0 * (i + 1))
        latency.add_request(500.0 + 10 * r, 12.0 + r, 0.6 + 0.1 * r)


def hover(qtbot, widget, x: float, y: float) -> None:
    """A real mouse move over ``widget`` (a pyqtgraph PlotWidget) at data point (x, y)."""
    scene = widget.getPlotItem().vb.mapViewToScene(QPointF(x, y))
    qtbot.mouseMove(widget.viewport(), widget.mapFromScene(scene))
    qtbot.wait(20)


def y_range(widget):
    return widget.getPlotItem().vb.viewRange()[1]


def x_ticks(widget) -> list[float]:
    axis = widget.getPlotItem().getAxis("bottom")
    (low, high), width = axis.range, axis.geometry().width()
    return [v for _spacing, values in axis.tickValues(low, high, width) for v in values]


# --- empty state and axes --------------------------------------------------------------------------------------
def test_empty_plots_say_what_to_do_and_start_at_zero_and_one(latency, waveform):
    chunks, requests = latency.chunk_plot, latency.request_plot
    for plot, hint in (
        (chunks, "Speak to see\nlatency per chunk"),
        (requests, "Each request\nadds a point"),
        (waveform, "Speak to see the waveform"),
    ):
        assert plot.empty.isVisible() and plot.empty.toPlainText().startswith(hint)
    for plot in (chunks, requests):
        low, high = y_range(plot)
        assert -0.1 * high < low <= 0 < high  # never −400…400 ms
        assert plot.getPlotItem().vb.viewRange()[0] == [0.5, 5.5]
        assert x_ticks(plot) == [1, 2, 3, 4, 5]
    low, high = chunks.rtf_view.viewRange()[1]
    assert -0.1 * high < low <= 0 and high >= 1.0  # the real-time line is in view
    assert waveform.getPlotItem().vb.viewRange()[0] == [0, 5.0]


def test_one_chunk_keeps_whole_chunk_ticks_and_no_si_scaling(latency):
    latency.start_request(DEFAULTS)
    latency.add_chunk(120.0, 40.0, 0.5)
    chunks = latency.chunk_plot
    assert not chunks.empty.isVisible()
    assert chunks.getPlotItem().vb.viewRange()[0] == [0.5, 5.5]  # one point among 5 slots, not the whole width
    assert x_ticks(chunks) == [1, 2, 3, 4, 5]
    for plot in (chunks, latency.request_plot):
        for name in ("bottom", "left", "right"):
            axis = plot.getPlotItem().getAxis(name)
            assert axis.autoSIPrefix is False and "x0." not in axis.labelString()
    assert "x0.001" not in chunks.getPlotItem().getAxis("bottom").labelString()


@pytest.mark.parametrize(
    ("low", "high", "size", "expected"),
    [
        (0.9999, 1.0001, 300, [1]),  # what pyqtgraph scaled to "chunk (x0.001)"
        (0.5, 5.5, 300, [1, 2, 3, 4, 5]),
        (0.5, 40.5, 200, [10, 20, 30, 40]),  # 200 px: room for 5 labels
        (0.5, 40.5, 400, [5, 10, 15, 20, 25, 30, 35, 40]),
        (0.2, 0.8, 300, []),
    ],
)
def test_integer_axis_ticks_are_whole_numbers(qtbot, low, high, size, expected):
    ticks = [v for _s, values in IntegerAxis("bottom").tickValues(low, high, size) for v in values]
    assert ticks == expected and all(float(v).is_integer() for v in ticks)
    assert IntegerAxis("bottom").tickStrings([1, 2, 3], 1.0, 1) == ["1", "2", "3"]


# --- units ---------------------------------------------------------------------------------------------------
def test_rtf_has_its_own_right_axis_and_lm_step_is_in_plain_ms(latency):
    fill(latency)
    chunks, requests = latency.chunk_plot, latency.request_plot
    left, right = (chunks.getPlotItem().getAxis(n).labelString() for n in ("left", "right"))
    assert "ms" in left and "RTF" not in left and "RTF" in right and "ms" not in right
    assert chunks.rtf_curve.getViewBox() is chunks.rtf_view and chunks.rtf_view is not chunks.getPlotItem().vb
    assert list(chunks.rtf_curve.yData) == pytest.approx([0.4, 0.5, 0.6])
    assert list(chunks.lm_curve.yData) == pytest.approx([202.0, 212.0, 222.0])  # the last request's chunks
    shown = {}
    for index in range(latency.metric_choice.count()):
        latency.metric_choice.setCurrentIndex(index)
        label = requests.getPlotItem().getAxis("left").labelString()
        assert "×" not in label and "x10" not in label
        shown[latency.metric_choice.currentText()] = (label, list(requests.trend.yData))
    assert "ms" in shown["first audio"][0] and shown["first audio"][1] == pytest.approx([500.0, 510.0, 520.0])
    assert "ms" in shown["LM step"][0] and shown["LM step"][1] == pytest.approx([12.0, 13.0, 14.0])  # not ×10
    assert "RTF" in shown["real-time factor"][0] and shown["real-time factor"][1] == pytest.approx([0.6, 0.7, 0.8])


# --- legend --------------------------------------------------------------------------------------------------
def test_legends_are_on_a_semi_opaque_background_above_the_data(qtbot, latency):
    fill(latency)
    qtbot.wait(20)
    text = latency.palette().color(QPalette.ColorRole.Text)
    for plot, top in ((latency.chunk_plot, 222.0), (latency.request_plot, 520.0)):
        legend = plot.legend
        assert legend.isVisible() and legend.items
        assert 100 <= legend.opts["brush"].color().alpha() < 255
        assert all(label.opts["color"] == text for _sample, label in legend.items)
        highest = plot.getPlotItem().vb.mapViewToScene(QPointF(1, top))
        assert legend.sceneBoundingRect().bottom() < highest.y()  # the data stays below the legend


# --- values under the mouse ------------------------------------------------------------------------------------
def test_hovering_a_chunk_or_a_request_shows_its_values(qtbot, latency):
    fill(latency)
    chunks, requests = latency.chunk_plot, latency.request_plot
    hover(qtbot, chunks, 2, 100)
    assert chunks.hover.text.splitlines()[:3] == ["chunk 2", "LM 212 ms · decode 51 ms", "RTF 0.50"]
    assert "ready at 600 ms" in chunks.hover.text
    hover(qtbot, requests, 3.2, 100)
    lines = requests.hover.text.splitlines()
    assert lines[:4] == ["request 3", "first audio 520 ms", "LM step 14.0 ms", "RTF 0.80"]
    assert "KV chain off" in requests.hover.text and "KV chain on" not in requests.hover.text
    hover(qtbot, requests, 1, 100)
    assert "KV chain on" in requests.hover.text
    label = requests.hover.label  # drawn over the legend and the second axis's view, not under them
    assert label.parentItem() is None and label.zValue() > max(requests.legend.zValue(), chunks.rtf_view.zValue())
    QApplication.sendEvent(requests, QEvent(QEvent.Type.Leave))
    assert requests.hover.text == ""
    hover(qtbot, requests, 4.9, 100)  # no request 5
    assert requests.hover.text == ""


def test_hovering_the_waveform_reads_time_and_amplitude(qtbot, waveform):
    t = np.arange(24000) / 24000
    waveform.append((0.5 * np.sin(2 * np.pi * 200 * t)).astype(np.float32))
    qtbot.waitUntil(lambda: waveform.curve.xData is not None and len(waveform.curve.xData) > 0, timeout=2000)
    assert waveform.getPlotItem().vb.viewRange()[0] == pytest.approx([0, 1.0])
    assert not waveform.empty.isVisible()
    hover(qtbot, waveform, 0.5, 0)
    first, second = waveform.hover.text.splitlines()
    assert first.startswith("0.5") and first.endswith(" s")
    assert second == "amplitude -0.50 … +0.50"


def test_waveform_axes_say_amplitude_and_seconds(waveform):
    plot = waveform.getPlotItem()
    assert plot.getAxis("left").labelString().startswith("<span") and "amplitude" in plot.getAxis("left").labelString()
    assert "time (s)" in plot.getAxis("bottom").labelString()
    waveform.append(np.zeros(2400, np.float32))  # 0.1 s: an SI prefix would turn the axis into "(ms)"
    waveform._redraw()
    assert "(ms)" not in plot.getAxis("bottom").labelString() and plot.getAxis("bottom").autoSIPrefix is False


# --- settings per request ----------------------------------------------------------------------------------------
def test_settings_summary_names_the_switches_and_what_tells_groups_apart():
    assert summary_text(DEFAULTS) == "fp32 · KV chain on · prefix cache on · cond. cache on · streaming on"
    q4 = describe_settings({Key.PRECISION.value: "q4", Key.Q4_COMPUTE.value: "int8", Key.THREADS.value: 4})
    assert summary_text(q4).startswith("q4 int8 · ") and "4 threads" in summary_text(q4)
    assert distinguishing_labels([DEFAULTS, KV_OFF]) == ["KV chain on", "KV chain off"]
    assert distinguishing_labels([DEFAULTS]) == [summary_text(DEFAULTS)]
    assert describe_settings({Key.KV_CHAINING.value: "false"}) == KV_OFF  # a hand-edited history file
    never = describe_settings({Key.TAKE_TURNS.value: "never"})  # shown where it is not the default
    assert summary_text(never).endswith(" · take turns never") and "take turns" not in summary_text(DEFAULTS)
    assert distinguishing_labels([DEFAULTS, never]) == ["take turns auto", "take turns never"]


def test_requests_are_coloured_by_the_settings_that_made_them(latency):
    fill(latency, settings=(DEFAULTS, KV_OFF, DEFAULTS, KV_OFF))
    requests = latency.request_plot
    assert requests.group_labels() == ["KV chain on", "KV chain off"]
    assert [label.text for _sample, label in requests.legend.items] == ["KV chain on", "KV chain off"]
    on, off = requests.group_items
    assert list(on.data["x"]) == [1, 3] and list(off.data["x"]) == [2, 4]
    assert on.opts["brush"].color() != off.opts["brush"].color()


def test_toggling_an_optimisation_in_the_window_gives_comparable_groups(qtbot, window):
    speak_and_wait(qtbot, window, "Hello there.")
    window.settings_panel.controls[Key.KV_CHAINING].setChecked(False)
    speak_and_wait(qtbot, window, "Hello again.")
    requests = window.speak_panel.latency.request_plot
    assert len(window.speak_panel.latency.requests) == 2
    assert [r.settings for r in window.speak_panel.latency.requests] == [DEFAULTS, KV_OFF]
    assert requests.group_labels() == ["KV chain on", "KV chain off"]
    hover(qtbot, requests, 2, y_range(requests)[1] / 2)
    assert "request 2" in requests.hover.text and "KV chain off" in requests.hover.text
    assert window.history.entries[0].timings["chunks"] == window.speak_panel.latency.chunk_rows()


# --- History replay -----------------------------------------------------------------------------------------------
def test_replaying_from_history_shows_that_entry_in_the_plots(qtbot, window):
    speak_and_wait(qtbot, window, "Hello there, this is the first one.")
    first = window.speak_panel.latency.requests[0]
    speak_and_wait(qtbot, window, "A second, shorter one.")
    assert window.speak_panel.latency.chunk_plot.chunks == window.speak_panel.latency.requests[1].chunks
    older = window.history.entries[1]
    audio, _rate = window.history.audio(older)
    window.history_panel.list.setCurrentRow(1)
    qtbot.mouseClick(window.history_panel.play_button, Qt.MouseButton.LeftButton)
    curve = window.speak_panel.waveform.curve
    qtbot.waitUntil(lambda: curve.xData is not None and len(curve.xData) == 2 * (audio.size // 240), timeout=3000)
    assert window.speak_panel.waveform.samples == audio.size
    assert window.speak_panel.latency.chunk_plot.chunks == first.chunks and first.key == older.id
    assert window.speak_panel.latency.chunks_caption.text().startswith("Replay of ")
    assert list(window.speak_panel.latency.request_plot.highlight.data["x"]) == [1]  # its point is marked
    qtbot.waitUntil(lambda: window.player.finished, timeout=30000)


def test_replaying_an_entry_of_an_earlier_session_uses_its_saved_chunks(latency):
    fill(latency)
    rows = [[150.0, 40.0, 0.45, 310.0], [90.0, 30.0, 0.3, None], "garbled"]
    latency.show_replay("not-in-this-session", {"chunks": rows, "ttfa_ms": 310.0, "rtf": 0.4}, 0.0)
    plot = latency.chunk_plot
    assert [(c.lm_ms, c.at_ms) for c in plot.chunks] == [(150.0, 310.0), (90.0, None)]
    assert list(latency.request_plot.highlight.data["x"]) == []
    latency.show_replay("old", {"ttfa_ms": 310.0, "rtf": 0.4}, 0.0)  # written before chunks were kept
    assert plot.chunks == [] and plot.empty.isVisible()
    assert "No per-chunk timings" in plot.empty.toPlainText() and "first audio 310 ms" in plot.empty.toPlainText()
