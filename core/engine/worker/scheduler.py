"""The inference thread's queue: two lanes (interactive before background), first come first served within each.

Thread-safe: any thread puts and cancels, the inference thread takes. Commands that are not jobs (loading a model,
stopping) travel in the interactive lane, in order with the interactive jobs; such a command is a barrier for
:meth:`Scheduler.take_interactive`, which the worker calls between two steps of a background job: a model load waits
until the background job under way ends (its takes stay those of the model it started with), and so does every
interactive job queued after the load (the person asked for them on the new model).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Generic, TypeVar

from core.engine.worker.jobs import Priority

T = TypeVar("T")


class Scheduler(Generic[T]):
    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._lanes: dict[Priority, deque[T]] = {p: deque() for p in Priority}

    def put(self, item: T, priority: Priority = Priority.INTERACTIVE) -> None:
        with self._ready:
            self._lanes[priority].append(item)
            self._ready.notify()

    def take(self, timeout: float | None = None) -> T | None:
        """The next item (interactive first); waits up to ``timeout`` seconds (``None``: forever) for one."""
        with self._ready:
            if not self._ready.wait_for(self._any, timeout):
                return None
            lane = self._lanes[Priority.INTERACTIVE] or self._lanes[Priority.BACKGROUND]
            return lane.popleft()

    def take_interactive(self, barriers: type | tuple[type, ...]) -> T | None:
        """The next interactive item unless it is one of the ``barriers`` (commands that must wait for the
        background job under way); ``None`` when no interactive item waits or a barrier is first."""
        with self._ready:
            lane = self._lanes[Priority.INTERACTIVE]
            if lane and not isinstance(lane[0], barriers):
                return lane.popleft()
            return None

    def remove(self, request_id: int) -> T | None:
        """Take the waiting job of ``request_id`` out of the queue (``None`` when no such job waits)."""
        with self._ready:
            for lane in self._lanes.values():
                for index, item in enumerate(lane):
                    if getattr(item, "request_id", None) == request_id:
                        del lane[index]  # by position: items need not compare equal
                        return item
        return None

    def drain(self) -> list[T]:
        """Everything waiting, removed (in the order it would have run)."""
        with self._ready:
            items = [*self._lanes[Priority.INTERACTIVE], *self._lanes[Priority.BACKGROUND]]
            for lane in self._lanes.values():
                lane.clear()
            return items

    def waiting(self) -> list[T]:
        """Everything waiting, in the order it will run (interactive first)."""
        with self._ready:
            return [*self._lanes[Priority.INTERACTIVE], *self._lanes[Priority.BACKGROUND]]

    def qsize(self) -> int:
        with self._ready:
            return sum(len(lane) for lane in self._lanes.values())

    def empty(self) -> bool:
        return self.qsize() == 0

    def _any(self) -> bool:
        return any(self._lanes.values())
