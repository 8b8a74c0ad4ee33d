"""The asyncio client against a real server: the same ops, awaited, typed."""

from __future__ import annotations

import asyncio

import pytest

import gitloom
from gitloom import errors, types
from conftest import SESSIONS


def test_async_client_writes_reads_and_runs_jobs(server, ns_name):
    async def go() -> None:
        async with gitloom.AsyncClient(server.url, server.key) as client:
            ns = await client.create_namespace(ns_name)
            assert isinstance(ns, gitloom.AsyncNamespace)
            out = await ns.remember("Miso the cat", topic="pets", body="The cat is called Miso.",
                                    cue=["what is my cat called"])  # fmt: skip
            assert isinstance(out, types.WriteOutcome) and out.commit
            # Reads side by side.
            r, s, t = await asyncio.gather(
                ns.retrieve("what is my cat called", explain=True),
                ns.search("Miso"),
                ns.topics(),
            )
            assert isinstance(r, types.Retrieval) and r.hits[0].title == "Miso the cat"
            assert s.hits and all(isinstance(x, types.TopicCount) for x in t)
            report = await ns.ingest(SESSIONS)
            assert isinstance(report, types.IngestReport) and report.commits == 2
            job = await ns.start_job("sync")
            done = await client.wait(job)
            assert done.status == "succeeded"
            with pytest.raises(errors.MemoryNotFound):
                await ns.get("facts/pets/none.md")
            await client.delete_namespace(ns_name)
            assert ns_name not in await client.namespaces()

    asyncio.run(go())
