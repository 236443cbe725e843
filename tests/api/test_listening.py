"""The one listening socket of both servers (core/api/listening.py): a port in use, a port out of range and an
address this machine does not have are refused at once with the same codes by the HTTP API and by Wyoming."""

from __future__ import annotations

import socket

import pytest

from core.api import ApiServer, WyomingServer, create_app
from core.api.listening import listening_socket
from core.engine import InvalidOptions
from core.voices import VoiceLibrary


def test_a_free_port_is_bound_and_any_free_one_for_port_0():
    bound = listening_socket("127.0.0.1", 0)
    try:
        assert bound.getsockname()[1] > 0 and bound.family == socket.AF_INET
    finally:
        bound.close()


@pytest.mark.skipif(not socket.has_ipv6, reason="no IPv6 here")
def test_an_ipv6_address_in_brackets_is_bound_as_ipv6():
    try:
        bound = listening_socket("[::1]", 0)
    except InvalidOptions as exc:  # a machine with IPv6 compiled in but no ::1 configured
        assert exc.code == "api.cannot_listen"
        return
    try:
        assert bound.family == socket.AF_INET6
    finally:
        bound.close()


def test_both_servers_refuse_a_port_in_use_or_out_of_range_alike(tmp_path):
    taken = listening_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    library = VoiceLibrary(tmp_path / "voices")
    servers = {
        "http": lambda p: ApiServer(create_app(None, library), "127.0.0.1", p),  # type: ignore[arg-type]
        "wyoming": lambda p: WyomingServer(None, library, host="127.0.0.1", port=p),  # type: ignore[arg-type]
    }
    try:
        for make in servers.values():
            with pytest.raises(InvalidOptions) as in_use:
                make(port)
            assert in_use.value.code == "api.cannot_listen" and in_use.value.data["port"] == port
            assert in_use.value.data["reason"]
            with pytest.raises(InvalidOptions) as out_of_range:
                make(70000)
            assert out_of_range.value.code == "api.port_range"
        with pytest.raises(InvalidOptions) as not_here:
            listening_socket("192.0.2.1", 0)  # TEST-NET-1: an address no machine here has
        assert not_here.value.code == "api.cannot_listen"
    finally:
        taken.close()
