"""Where the studio renders a project — this computer or a Ray cluster — and the words the window says about it.
No widgets, no Ray: the address is checked here by its form only (a connection test asks the cluster itself).

A cluster address is what ``python -m core project DIR --render --ray [ADDRESS]`` takes: empty for a Ray instance
started on this computer, ``auto`` for the cluster this computer is a node of (``ray start`` ran here), or
``ray://HOST:PORT`` for a cluster elsewhere through Ray Client (its head listens on port 10001 unless told
otherwise); ``HOST:PORT`` (a cluster's own address, port 6379) is passed on as Ray takes it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.wording import describe, describe_error

from ..settings import Key, Settings

LOCAL, CLUSTER = "local", "cluster"
"""The two values of :attr:`Key.RENDER_ON`."""
CLIENT_PORT = 10001
"""Ray Client's port on a cluster's head node (``ray start --head`` opens it)."""
EXAMPLE = f"ray://HOST:{CLIENT_PORT}"
NOT_IN_BUILD = (
    "Ray is not part of the desktop build, which renders on this computer only. To render on a Ray cluster, run "
    "Chatterbox Desk from its source with Ray (pip install '.[cluster]', then python -m app), or use the command "
    "line: python -m core project DIR --render --ray ADDRESS."
)
"""What the desktop build says when a cluster is asked for (the core's ``cluster.not_installed`` names a pip command
that cannot add Ray to a built app)."""
_HOST = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
"""A host name or an IPv4 address (an IPv6 address comes in brackets and is checked apart)."""


@dataclass(frozen=True)
class AddressCheck:
    """What the address field holds: the address Ray is given (``None``: a Ray instance on this computer), or what
    is wrong with it (``problem``, in words)."""

    address: str | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def check_address(text: str) -> AddressCheck:
    """The address typed in the field, checked by its form: empty, ``auto``, ``ray://HOST[:PORT]`` or ``HOST:PORT``.
    A ``ray://`` address without a port gets Ray Client's (10001)."""
    text = text.strip()
    if not text:
        return AddressCheck(None)
    if text.lower() == "auto":
        return AddressCheck("auto")
    if any(c.isspace() for c in text):
        return AddressCheck(problem=f"A Ray address has no spaces: write {EXAMPLE}, auto, or leave it empty.")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return _host_and_port(text)
    if scheme.lower() != "ray":
        return AddressCheck(
            problem=f"“{scheme}://” is not a Ray address: a cluster elsewhere is reached through Ray Client, "
            f"{EXAMPLE} (the head node's name or IP address, port {CLIENT_PORT})."
        )
    try:
        parts = urlsplit("ray://" + rest)
        port = parts.port
    except ValueError:
        return AddressCheck(problem=_bad_port(rest.rpartition(":")[2]))
    if parts.path.strip("/") or parts.query or parts.fragment or parts.username or parts.password:
        return AddressCheck(problem=f"A Ray address is a host and a port only, like {EXAMPLE} (no path or user).")
    host = parts.hostname or ""
    if not host:
        return AddressCheck(problem=f"ray:// needs the head node's name or IP address: {EXAMPLE}.")
    if not _valid_host(host, bracketed="[" in parts.netloc):
        return AddressCheck(problem=f"“{host}” is not a host name or an IP address: {EXAMPLE}.")
    if port == 0:
        return AddressCheck(problem=_bad_port("0"))
    shown = f"[{host}]" if ":" in host else host
    return AddressCheck(f"ray://{shown}:{port or CLIENT_PORT}")


def _host_and_port(text: str) -> AddressCheck:
    """An address without ``ray://``: a cluster's own address (``HOST:PORT``, on a machine that can reach it)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        return AddressCheck(
            problem=f"Write {EXAMPLE.replace('HOST', text)} for a cluster whose head node is {text}, auto on a "
            "machine that is part of the cluster, or leave it empty for a Ray instance on this computer."
        )
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return AddressCheck(problem=_bad_port(port))
    if not _valid_host(host.strip("[]"), bracketed=host.startswith("[")):
        return AddressCheck(problem=f"“{host}” is not a host name or an IP address: {EXAMPLE}.")
    return AddressCheck(text)


def _valid_host(host: str, bracketed: bool) -> bool:
    if bracketed:  # an IPv6 address
        return bool(host) and all(c in "0123456789abcdefABCDEF:." for c in host) and ":" in host
    return bool(_HOST.match(host))


def _bad_port(port: str) -> str:
    return f"The port must be a number from 1 to 65535, not “{port}” (Ray Client listens on {CLIENT_PORT})."


@dataclass(frozen=True)
class RenderTarget:
    """Where a render of the pending segments goes: this computer (``cluster`` False) or a Ray cluster at
    ``address`` (``None``: a Ray instance started on this computer). ``problem``: the stored address is wrong (in
    words), and nothing renders until it is fixed."""

    cluster: bool = False
    address: str | None = None
    problem: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> RenderTarget:
        if settings.get(Key.RENDER_ON) != CLUSTER:
            return cls()
        checked = check_address(str(settings.get(Key.CLUSTER_ADDRESS) or ""))
        return cls(True, checked.address, checked.problem)


def ray_installed() -> bool:
    """Ray's package is on the import path (looked for, not imported: that takes seconds, and only a cluster render
    needs it; the desktop build leaves it out)."""
    return any((Path(folder or ".") / "ray" / "__init__.py").is_file() for folder in sys.path)


def where(address: str | None) -> str:
    """The cluster in words: "the Ray cluster at ray://gpu1:10001", "a Ray instance on this computer"."""
    if address is None:
        return "a Ray instance on this computer"
    if address == "auto":
        return "the Ray cluster this computer is part of"
    return f"the Ray cluster at {address}"


def rendering_text(address: str | None, actors: int | None = None) -> str:
    """The studio's status line while a cluster renders: "Rendering on the Ray cluster at …, 2 actors"."""
    if actors is None:
        return f"Connecting to {where(address)}…"
    return f"Rendering on {where(address)}, {actors} actor{'' if actors == 1 else 's'}."


def cluster_summary(info: Any) -> str:
    """A connection test's result: "3 nodes · 4 GPUs · 48 CPUs (Ray 2.40.0)" (``info``: a ``ClusterInfo``)."""
    nodes, gpus, cpus = (_count(getattr(info, name, 0)) for name in ("nodes", "gpus", "cpus"))
    version = getattr(info, "ray_version", "") or "?"
    counts = " · ".join((_plural(nodes, "node"), _plural(gpus, "GPU"), _plural(cpus, "CPU")))
    return f"{counts} (Ray\u00a0{version})"  # a version is not split from its name


def _count(value: Any) -> float:
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


def _plural(count: float, noun: str) -> str:
    if not count:  # no-break spaces: a number stays with its noun on a narrow panel
        return f"no\u00a0{noun}"
    return f"{count:g}\u00a0{noun}{'' if count == 1 else 's'}"


def refusal(target: RenderTarget, frozen: bool = False) -> str | None:
    """Why a render cannot go to the cluster now, in words (``None``: it can; the cluster itself answers then)."""
    if not target.cluster:
        return None
    if target.problem is not None:
        return f"The Ray cluster address in Settings → Render on is wrong: {target.problem}"
    if not ray_installed():
        return not_installed_text(frozen)
    return None


def not_installed_text(frozen: bool = False) -> str:
    """Ray is missing: how to get it (the desktop build has none; a source install takes the ``cluster`` extra)."""
    return NOT_IN_BUILD if frozen else describe("cluster.not_installed", {})


def failure_text(exc: BaseException, frozen: bool = False) -> str:
    """Why a connection test failed, in words; in the desktop build (``frozen``), which has no Ray, how to get it."""
    code = getattr(exc, "code", None)
    if code == "cluster.not_installed":
        return not_installed_text(frozen)
    if isinstance(code, str):
        return describe_error(exc)
    return f"The connection test failed: {type(exc).__name__}: {exc}"
