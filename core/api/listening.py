"""The listening socket both servers bind before they serve (the HTTP API's uvicorn and Wyoming), so that a port in
use, a port out of range or an address this machine does not have is a clear error at once, not in a log later."""

from __future__ import annotations

import socket

from core.engine import InvalidOptions


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host:port`` (IPv6 for an address with ``:``, brackets allowed; port 0: any free
    one); :class:`InvalidOptions` ``api.port_range`` or ``api.cannot_listen`` (with the system's reason) otherwise."""
    if not 0 <= port <= 65535:
        raise InvalidOptions("api.port_range", port=port)
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        return socket.create_server((address, port), family=family)
    except OSError as exc:
        raise InvalidOptions("api.cannot_listen", host=host, port=port, reason=str(exc.strerror or exc)) from exc
