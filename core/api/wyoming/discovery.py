"""Zeroconf: a server that listens beyond loopback announces itself as ``_wyoming._tcp.local.``, the service type
Home Assistant's Wyoming integration discovers (it then offers the server under Settings → Devices & services).

The announcer is injectable (:class:`Announcer`): tests check the :class:`~zeroconf.ServiceInfo` that would be
registered without sending anything on the network."""

from __future__ import annotations

import logging
import re
import socket
from typing import TYPE_CHECKING, Protocol

from zeroconf import ServiceInfo

if TYPE_CHECKING:
    from zeroconf.asyncio import AsyncZeroconf

log = logging.getLogger(__name__)
SERVICE_TYPE = "_wyoming._tcp.local."
MDNS_GROUP = "224.0.0.251"


class Announcer(Protocol):
    async def register(self, info: ServiceInfo) -> None: ...

    async def unregister(self) -> None: ...


def instance_name(hostname: str | None = None) -> str:
    """``chatterbox-desk-<host>``: a DNS label (at most 63 characters) that says which machine serves."""
    host = re.sub(r"[^a-z0-9-]+", "-", (hostname or socket.gethostname()).split(".")[0].lower()).strip("-")
    return f"chatterbox-desk-{host or 'host'}"[:63]


def announced_address(host: str) -> str:
    """The IPv4 address to announce: the one listened on, or for ``0.0.0.0`` / ``::`` the address of the interface
    that would carry multicast (found by connecting a UDP socket, which sends nothing)."""
    if host not in ("", "0.0.0.0", "::"):
        return socket.gethostbyname(host.strip("[]"))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((MDNS_GROUP, 1))
        address: str = probe.getsockname()[0]
        return address


def service_info(address: str, port: int, name: str | None = None) -> ServiceInfo:
    """What is registered: ``<name>._wyoming._tcp.local.`` at ``address:port``."""
    name = name or instance_name()
    return ServiceInfo(
        SERVICE_TYPE,
        f"{name}.{SERVICE_TYPE}",
        addresses=[socket.inet_aton(address)],
        port=port,
        properties={"program": "chatterbox-desk"},
        server=f"{name}.local.",
    )


class ZeroconfAnnouncer:
    """Registers the service with the ``zeroconf`` library (multicast on the local network)."""

    def __init__(self) -> None:
        self._zeroconf: AsyncZeroconf | None = None
        self._info: ServiceInfo | None = None

    async def register(self, info: ServiceInfo) -> None:
        from zeroconf.asyncio import AsyncZeroconf

        zeroconf = AsyncZeroconf()
        self._zeroconf, self._info = zeroconf, info
        await zeroconf.async_register_service(info)
        log.info("announced %s on the local network (zeroconf)", info.name)

    async def unregister(self) -> None:
        if self._zeroconf is None:
            return
        try:
            if self._info is not None:
                await self._zeroconf.async_unregister_service(self._info)
        finally:
            await self._zeroconf.async_close()
            self._zeroconf = None
