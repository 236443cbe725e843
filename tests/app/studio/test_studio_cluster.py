"""Render on a Ray cluster from the studio: Render (and a range of chapters) submits a ClusterRenderJob when Settings
→ Render on says so, a RenderJob otherwise; the progress and the status line work as for a local render; Ray
missing, a wrong address or an unreachable cluster are said and nothing is lost; Regenerate stays on this computer.

The cluster job is spied on at the worker's ``submit``: it is replaced by a local RenderJob with the same request id
(the same events a cluster render reports), its stats filled as a cluster render fills them."""

from __future__ import annotations

import pytest

from app.controllers import render_on
from app.settings import Key
from core.engine import Failed
from core.narration import ClusterRenderJob, RenderJob
from core.narration.projects.opening import open_project
from tests.app.studio.support import new_project


@pytest.fixture
def submitted(studio_window, monkeypatch):
    """The jobs the studio submits; a cluster job runs as a local render of the same request (2 actors, 1 node)."""
    worker = studio_window.bridge.worker
    submit, jobs = worker.submit, []

    def spy(job):
        jobs.append(job)
        if isinstance(job, ClusterRenderJob):
            job.stats.nodes, job.stats.actors = 1, 2
            job = RenderJob(job.request_id, job.project, numbers=job.numbers, runtime=job.runtime)
        return submit(job)

    monkeypatch.setattr(worker, "submit", spy)
    monkeypatch.setattr(render_on, "ray_installed", lambda: True)
    return jobs


def _on_cluster(window, address="ray://gpu1"):
    """Settings → Render on: a Ray cluster at ``address``."""
    panel = window.render_on_panel
    panel.cluster_choice.setChecked(True)
    panel.address.setText(address)
    panel.address.editingFinished.emit()


def test_render_submits_a_render_job_on_this_computer(qtbot, studio_window, submitted, tmp_path):
    new_project(studio_window, tmp_path)
    with qtbot.waitSignal(studio_window.bridge.render_done, timeout=60000):
        studio_window.studio_panel.render_button.click()
    assert [type(job) for job in submitted] == [RenderJob]


def test_render_on_a_cluster_submits_a_cluster_job_and_says_where(qtbot, studio_window, submitted, tmp_path):
    window, studio = studio_window, studio_window.studio_panel
    project = new_project(window, tmp_path)
    _on_cluster(window)
    studio.listen.setChecked(True)  # a cluster's takes come back whole: nothing is heard meanwhile
    assert studio.render_button.toolTip().endswith("on the Ray cluster at ray://gpu1:10001 (Settings → Render on)")
    assert not studio.listen.isEnabled() and "sends each take back whole" in studio.listen.toolTip()
    said, work = [], []
    window.bridge.cluster_changed.connect(lambda _stats: said.append(studio.status.text()))
    window.bridge.work_changed.connect(work.append)  # the status bar's words
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.render_button.click()
        assert studio.status.text() == "Connecting to the Ray cluster at ray://gpu1:10001…"
        assert studio.render_button.text() == "Rendering…" and not studio._live
        assert studio.on_cluster and not window.render_on_panel.run_test()  # one Ray connection: the render's
        assert "renders on the cluster now" in window.render_on_panel.result.text()
    (job,) = submitted
    assert not studio.on_cluster
    assert isinstance(job, ClusterRenderJob) and job.address == "ray://gpu1:10001" and job.numbers is None
    assert job.runtime is not None and job.runtime.stream is False  # nobody listens: whole segments
    assert said and said[0] == "Rendering on the Ray cluster at ray://gpu1:10001, 2 actors."
    assert studio.progress.value() == studio.progress.maximum() == 4  # the same progress as a local render
    assert studio.progress.format().startswith("Segment 4 of 4")
    assert studio.status.text().startswith("Rendered 4 segment(s)")
    assert studio.status.text().endswith("). On the Ray cluster at ray://gpu1:10001, 2 actors.")
    assert "Rendering “Story” on the Ray cluster at ray://gpu1:10001" in work
    assert open_project(project.folder).counts()["rendered"] == 4


def test_a_range_of_chapters_goes_to_the_cluster_and_regenerate_stays_here(qtbot, studio_window, submitted, tmp_path):
    window, studio = studio_window, studio_window.studio_panel
    new_project(window, tmp_path)
    _on_cluster(window, "")  # a Ray instance on this computer
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.render_chapters(1, 1)
        assert studio.status.text() == "Connecting to a Ray instance on this computer…"
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.regenerate(1)
    cluster, regenerate = submitted
    assert isinstance(cluster, ClusterRenderJob) and cluster.address is None and cluster.numbers
    assert isinstance(regenerate, RenderJob) and regenerate.regenerate == 1
    menu = studio.segments.menu_for(1)
    (action,) = [a for a in menu.actions() if a.text().startswith("&Regenerate")]
    assert "on this computer" in action.toolTip() and menu.toolTipsVisible()


def test_without_ray_render_says_how_to_get_it_and_nothing_starts(
    qtbot, studio_window, submitted, monkeypatch, tmp_path
):
    window, studio = studio_window, studio_window.studio_panel
    project = new_project(window, tmp_path)
    _on_cluster(window)
    monkeypatch.setattr(render_on, "ray_installed", lambda: False)
    studio.render_button.click()
    assert submitted == [] and studio.rendering is None and studio.render_button.isEnabled()
    assert "pip install .[cluster]" in window.message.text() and studio.status.text().startswith("Not rendered: ")
    assert project.counts()["pending"] == 4
    monkeypatch.setattr(studio_window.studio_panel.__class__, "frozen", property(lambda self: True))
    studio.render_button.click()
    assert "not part of the desktop build" in window.message.text()


def test_a_wrong_address_is_said_and_nothing_starts(qtbot, studio_window, submitted, tmp_path):
    window, studio = studio_window, studio_window.studio_panel
    new_project(window, tmp_path)
    _on_cluster(window, "http://gpu1:10001")
    studio.render_button.click()
    assert submitted == [] and studio.rendering is None
    assert "Settings → Render on is wrong" in window.message.text() and "“http://”" in window.message.text()


def test_an_unreachable_cluster_stops_the_render_and_loses_nothing(qtbot, studio_window, monkeypatch, tmp_path):
    window, studio = studio_window, studio_window.studio_panel
    project = new_project(window, tmp_path)
    _on_cluster(window)
    worker = window.bridge.worker
    monkeypatch.setattr(render_on, "ray_installed", lambda: True)
    reason = {"address": "ray://gpu1:10001", "reason": "Connection refused"}
    monkeypatch.setattr(
        worker, "submit", lambda job: worker.events.put(Failed(job.request_id, "cluster.unreachable", reason))
    )
    with qtbot.waitSignal(window.bridge.request_failed, timeout=10000):
        studio.render_button.click()
    assert studio.rendering is None and studio.render_button.isEnabled() and studio.segments.editable
    assert "ray://gpu1:10001 cannot be reached: Connection refused" in window.message.text()
    assert studio.status.text().startswith("Rendering stopped: The Ray cluster at ray://gpu1:10001")
    assert open_project(project.folder).counts()["pending"] == 4
    window.render_on_panel.local_choice.setChecked(True)  # the studio goes on: a render on this computer works
    assert studio.listen.isEnabled() and "Render on" not in studio.render_button.toolTip()
    assert window.settings.get(Key.RENDER_ON) == "local"
    monkeypatch.undo()
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.render_button.click()
    assert open_project(project.folder).counts()["rendered"] == 4


def test_a_real_render_on_a_ray_instance_on_this_computer(qtbot, studio_window, tmp_path):
    """The studio's Render on a local Ray instance (two CPUs): every segment rendered by the actor, one take each,
    and the status line says where and on how many actors."""
    ray = pytest.importorskip("ray")
    from core.narration.cluster.connect import disconnect

    window, studio = studio_window, studio_window.studio_panel
    project = new_project(window, tmp_path)
    _on_cluster(window, "")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        said = []
        window.bridge.cluster_changed.connect(lambda stats: said.append(studio.status.text()))
        with qtbot.waitSignal(window.bridge.render_done, timeout=180000):
            studio.render_button.click()
    finally:
        disconnect()
        ray.shutdown()
    assert "Rendering on a Ray instance on this computer, 1 actor." in said
    assert studio.status.text().endswith("). On a Ray instance on this computer, 1 actor.")
    assert studio.progress.format().startswith("Segment 4 of 4")
    final = open_project(project.folder)
    assert final.counts()["rendered"] == 4 and all(len(s.takes) == 1 for s in final.segments)
