"""Connecting to Ray (10-16 s for a local instance) does not hold the inference worker: the render's steps yield
while the connection is made on its own thread, so Speak and API requests run meanwhile."""

from __future__ import annotations

import threading

import pytest

from core.narration.cluster import render as cluster_render
from core.narration.cluster.connect import ClusterError


def test_the_steps_yield_while_ray_connects_and_go_on_once_connected(monkeypatch):
    release = threading.Event()
    threads: list[str] = []

    def slow_connect(address):
        threads.append(threading.current_thread().name)
        release.wait(10)
        return "the ray module"

    monkeypatch.setattr(cluster_render, "connect", slow_connect)
    steps = cluster_render._connecting("ray://head:10001")
    yields = 0
    while yields < 3:
        next(steps)  # the worker gets its turn: nothing blocks here for the connection
        yields += 1
    release.set()
    with pytest.raises(StopIteration) as done:
        while True:
            next(steps)
    assert done.value.value == "the ray module"
    assert threads and threads[0] != threading.current_thread().name


def test_a_failed_connection_is_raised_on_the_owners_thread(monkeypatch):
    def refused(address):
        raise ClusterError("cluster.unreachable", address=address, reason="connection refused")

    monkeypatch.setattr(cluster_render, "connect", refused)
    with pytest.raises(ClusterError) as err:
        for _ in cluster_render._connecting("ray://head:10001"):
            pass
    assert err.value.code == "cluster.unreachable"
