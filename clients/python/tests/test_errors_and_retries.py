"""The API's error codes as exceptions, and retries on 429, against real servers."""

from __future__ import annotations

import asyncio

import httpx
import pytest

import gitloom
from gitloom import errors


def test_error_codes_raise_their_exceptions(server, ns_name):
    with gitloom.Client(server.url, "glk_not-a-key") as bad:
        with pytest.raises(errors.Unauthorized) as e:
            bad.namespaces()
        assert e.value.status == 401 and e.value.code == "unauthorized"

    with gitloom.Client(server.url, server.key) as client:
        with pytest.raises(errors.NamespaceNotFound):
            client.namespace("never-made").stats()
        with pytest.raises(errors.InvalidName):
            client.create_namespace("Not A Name!")
        ns = client.create_namespace(ns_name)
        with pytest.raises(errors.NamespaceExists):
            client.create_namespace(ns_name)
        with pytest.raises(errors.MemoryNotFound, match="facts/none.md"):
            ns.get("facts/none.md")
        with pytest.raises(errors.InvalidPath):
            ns.write("../outside.md", "---\ntitle: x\n---\n")
        with pytest.raises(errors.InvalidMemory) as e:
            ns.write("facts/bad.md", "---\ntitle: [unclosed\n---\nbody\n")
        assert e.value.status == 422 and "facts/bad.md" in e.value.message
        with pytest.raises(errors.BadRevision):
            ns.retrieve("cat", at="no-such-rev")
        with pytest.raises(errors.InvalidParams, match="unknown field"):
            ns.call("retrieve", query="cat", misspelt=True)
        with pytest.raises(errors.UnknownOp):
            ns.call("teleport")
        # Every exception is a GitloomError and names its code.
        with pytest.raises(gitloom.GitloomError) as e:
            ns.get("facts/none.md")
        assert e.value.code == "not_found" and e.value.status == 404

    # An account cannot see another's namespace.
    with gitloom.Client(server.url, server.other_key) as other:
        with pytest.raises(errors.NamespaceNotFound):
            other.namespace(ns_name).stats()


def test_an_unreachable_server_is_a_transport_error():
    with gitloom.Client("http://127.0.0.1:9", "k", timeout=2) as client:
        with pytest.raises(errors.TransportError):
            client.health()


class Counting(httpx.HTTPTransport):
    """The real transport, counting the 429s it hands back."""

    def __init__(self) -> None:
        super().__init__()
        self.limited = 0

    def handle_request(self, request):
        response = super().handle_request(request)
        if response.status_code == 429:
            self.limited += 1
        return response


def test_rate_limited_requests_are_retried_after_the_wait(slow_server):
    transport = Counting()
    with gitloom.Client(slow_server.url, slow_server.key, transport=transport, max_retries=8) as client:
        # One request per half second is allowed: four in a row must wait, and succeed.
        for _ in range(4):
            assert isinstance(client.namespaces(), list)
    assert transport.limited >= 1, "the server rate-limited and the client retried"


def test_a_rate_limit_past_the_retries_raises_with_the_wait(slow_server):
    with gitloom.Client(slow_server.url, slow_server.key, max_retries=0) as client:
        with pytest.raises(errors.RateLimited) as e:
            for _ in range(5):
                client.namespaces()
    assert e.value.status == 429 and e.value.retry_after is not None and e.value.retry_after > 0


def test_the_async_client_retries_too(slow_server):
    async def go() -> int:
        async with gitloom.AsyncClient(slow_server.url, slow_server.key, max_retries=8) as client:
            results = await asyncio.gather(*(client.namespaces() for _ in range(3)))
            return len(results)

    assert asyncio.run(go()) == 3
