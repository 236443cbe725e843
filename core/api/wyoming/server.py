"""The Wyoming server: a TCP socket bound here (so a port in use is a clear error), an asyncio loop in a thread of
its own (beside the HTTP API) or in the calling thread (``python -m core serve --wyoming --no-http``), one
:class:`~core.api.wyoming.handler.WyomingHandler` per connection, all on the one inference worker.

It listens on loopback unless told otherwise; on any other address it says so in the log (Wyoming has no
authentication) and announces itself over zeroconf so that Home Assistant finds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Callable

from wyoming.error import Error

from core.api.jobs import JobFailed, JobQueue
from core.api.listening import listening_socket
from core.api.server import is_loopback
from core.api.voices import ApiVoices
from core.api.wyoming.config import DEFAULT_HOST, DEFAULT_PORT, WyomingConfig
from core.api.wyoming.discovery import Announcer, ZeroconfAnnouncer, announced_address, service_info
from core.api.wyoming.events import MAX_LINE
from core.api.wyoming.handler import Service, WyomingHandler, without_voice
from core.engine import ChatterboxError, InferenceWorker
from core.voices import VoiceLibrary
from core.wording import describe

log = logging.getLogger(__name__)
STOP_TIMEOUT = 5.0


class WyomingServer:
    """Serves Wyoming text to speech on ``host:port`` through ``jobs`` (the HTTP API's request queue when both run,
    so that both take turns and count against one waiting limit; a queue of its own otherwise).

    ``announce``: register with zeroconf (default: when listening beyond loopback); ``announcer`` does it (default:
    the ``zeroconf`` library; tests pass one that only records)."""

    def __init__(
        self,
        worker: InferenceWorker,
        library: VoiceLibrary,
        config: WyomingConfig | None = None,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        jobs: JobQueue | None = None,
        announce: bool | None = None,
        announcer: Callable[[], Announcer] = ZeroconfAnnouncer,
    ):
        self.config = config or WyomingConfig()
        self.host = host.strip("[]")
        self.socket = listening_socket(host, port)
        self.port: int = self.socket.getsockname()[1]
        self.jobs = jobs or JobQueue(worker, self.config.max_waiting)
        self.service = Service(worker, self.jobs, ApiVoices(library), library, self.config)
        self.open = not is_loopback(self.host)
        self.announce = self.open if announce is None else announce
        self._announcer_factory = announcer
        self.announced: object | None = None
        """The zeroconf service registered (a :class:`zeroconf.ServiceInfo`), while it is."""
        self._handlers: dict[asyncio.Task, WyomingHandler] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def uri(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"tcp://{host}:{self.port}"

    @property
    def connections(self) -> int:
        return len(self._handlers)

    # --- running -----------------------------------------------------------------------------------------------
    def serve(self) -> None:
        """Serve in this thread until :meth:`stop` (from another thread) or Ctrl-C (KeyboardInterrupt is raised)."""
        try:
            asyncio.run(self._main())
        finally:
            self._started.set()  # a start() waiting for a server that failed to come up
            self.socket.close()

    def voice_problem(self) -> ChatterboxError | None:
        """``wyoming.no_voice`` when the loaded model has no voice of its own and the library no usable voice (every
        request would get Wyoming's ``error`` event), else ``None`` (the model not loaded yet: ``None``)."""
        return ChatterboxError("wyoming.no_voice") if without_voice(self.service) else None

    def start(self, timeout: float = 10.0) -> None:
        """Serve in a background thread; returns once it accepts connections."""
        self._thread = threading.Thread(target=self.serve, name="wyoming-server", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout) or not self._thread.is_alive():
            self.stop()
            raise ChatterboxError("wyoming.not_started")

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None:
            self._thread.join(timeout)
        self.socket.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._connected, sock=self.socket, limit=MAX_LINE)
        announcer = await self._announce()
        if self.open:
            log.warning(
                "Wyoming server listening on %s: reachable from other machines, without authentication", self.uri
            )
        else:
            log.info("Wyoming server listening on %s (this machine only)", self.uri)
        if threading.current_thread() is threading.main_thread():  # serving alone: SIGTERM stops it as Ctrl-C does
            with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows' loop
                self._loop.add_signal_handler(signal.SIGTERM, self._stopping.set)
        self._started.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            await self._close_connections()
            if announcer is not None:
                with contextlib.suppress(Exception):  # the network may be gone: stopping must not fail
                    await announcer.unregister()
                self.announced = None

    async def _announce(self) -> Announcer | None:
        if not self.announce:
            return None
        announcer = self._announcer_factory()
        try:
            info = service_info(announced_address(self.host), self.port)
            await announcer.register(info)
        except Exception as exc:  # noqa: BLE001 - zeroconf, sockets: serving goes on without discovery
            log.warning("Wyoming: could not announce the server over zeroconf (%s); add it by host and port", exc)
            return None
        self.announced = info
        return announcer

    async def _close_connections(self) -> None:
        handlers = list(self._handlers.items())
        for _task, handler in handlers:
            await handler.stop()
        if handlers:
            await asyncio.wait([task for task, _ in handlers], timeout=STOP_TIMEOUT)

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = WyomingHandler(self.service, reader, writer)
        if len(self._handlers) >= self.config.max_connections:
            busy = JobFailed("wyoming.busy", {"limit": self.config.max_connections})
            text = describe(busy.code, busy.data, "api")
            log.warning("Wyoming: refusing a connection from %s: %s", handler.peer, text)
            with contextlib.suppress(ConnectionError):
                await handler.write_event(Error(text=text, code=busy.code).event())
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._handlers[task] = handler
        try:
            await handler.run()
        finally:
            self._handlers.pop(task, None)
