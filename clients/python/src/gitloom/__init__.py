"""gitloom: a Python client for the gitloom memory server (``gitloom serve``).

    from gitloom import Client

    with Client("http://127.0.0.1:8080", api_key) as client:
        notes = client.create_namespace("notes")
        notes.remember("Cat", topic="pets", body="The cat is Miso.")
        for hit in notes.retrieve("what is my cat called").hits:
            print(hit.path, hit.evidence)

Every op of the server is a method of :class:`Namespace` (and, awaited, of
:class:`AsyncNamespace`), returning the dataclasses of :mod:`gitloom.types`; the
API's error codes raise the exceptions of :mod:`gitloom.errors`; requests answered
429 are retried after the wait the server names.
"""

from . import errors, types
from .aio import AsyncClient, AsyncNamespace
from .client import Client, Namespace
from .errors import GitloomError

__all__ = [
    "AsyncClient",
    "AsyncNamespace",
    "Client",
    "GitloomError",
    "Namespace",
    "errors",
    "types",
]
__version__ = "0.1.0"
