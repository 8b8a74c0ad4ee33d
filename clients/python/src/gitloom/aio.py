"""The asyncio client: :class:`AsyncClient` and :class:`AsyncNamespace`, the same
methods as the blocking client, awaited."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict, List, Optional, Sequence

import httpx

from . import _http, errors
from .client import INGEST_TIMEOUT, _finished, _list
from .types import (
    Answer,
    EmbedReport,
    EntityMentions,
    GcReport,
    HistoryEntry,
    IndexStats,
    IngestReport,
    Job,
    Links,
    LogEntry,
    Memory,
    Retrieval,
    SearchHits,
    SemanticHits,
    SyncReport,
    TopicCount,
    TreeListing,
    VocabListing,
    WriteOutcome,
    _convert,
)


class AsyncClient:
    """A gitloom server (``gitloom serve``) for asyncio code; see :class:`gitloom.Client`.

    ``base_url`` defaults to ``$GITLOOM_URL`` (else ``http://127.0.0.1:8080``) and
    ``api_key`` to ``$GITLOOM_API_KEY``. A request answered 429 is retried up to
    ``max_retries`` times, after the wait the server names (else an exponential
    backoff from ``backoff`` seconds). Errors raise :mod:`gitloom.errors` classes.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        transport: Optional[httpx.AsyncBaseTransport] = None,
    ) -> None:
        self.config = _http.Config.make(base_url, api_key, timeout, max_retries, backoff, max_backoff)
        self._http = httpx.AsyncClient(
            base_url=self.config.base_url,
            headers=self.config.headers(),
            timeout=timeout,
            transport=transport,
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """Sends one API request (retrying 429s) and returns its ``result``."""
        attempt = 0
        while True:
            try:
                response = await self._http.request(method, path, json=body)
            except httpx.HTTPError as e:
                raise _http.transport_error(e, method, path) from e
            try:
                return _http.read(response)
            except errors.RateLimited as e:
                wait = _http.retry_delay(self.config, attempt, e)
                if wait is None:
                    raise
                await asyncio.sleep(wait)
                attempt += 1

    # --- the server
    async def health(self) -> Dict[str, Any]:
        return await self.request("GET", "/healthz")

    async def openapi(self) -> Dict[str, Any]:
        """The OpenAPI document, with every op's parameter schema under ``x-gitloom-ops``."""
        return await self.request("GET", "/openapi.json")

    async def namespaces(self) -> List[str]:
        return list((await self.request("GET", "/v1/namespaces"))["namespaces"])

    async def create_namespace(self, name: str) -> "AsyncNamespace":
        await self.request("POST", "/v1/namespaces", {"name": name})
        return self.namespace(name)

    async def delete_namespace(self, name: str) -> None:
        await self.request("DELETE", f"/v1/namespaces/{_http.segment(name)}")

    def namespace(self, name: str) -> "AsyncNamespace":
        """A namespace (created or not: its first use says)."""
        return AsyncNamespace(self, name)

    # --- jobs
    async def job(self, job_id: str) -> Job:
        return Job.from_dict(await self.request("GET", f"/v1/jobs/{_http.segment(job_id)}"))

    async def wait(self, job: "Job | str", *, timeout: float = 300.0, poll: float = 0.05) -> Job:
        """Polls a job until it finishes; a failed job raises its error."""
        job_id = job.id if isinstance(job, Job) else job
        deadline = time.monotonic() + timeout
        delay = poll
        while True:
            current = await self.job(job_id)
            if not current.running:
                return _finished(current)
            if time.monotonic() > deadline:
                raise errors.GitloomError(f"job {job_id} still running after {timeout}s", code="timeout")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)



class AsyncNamespace:
    """One namespace of an :class:`AsyncClient`; see :class:`gitloom.Namespace`."""

    def __init__(self, client: AsyncClient, name: str) -> None:
        self.client = client
        self.name = name

    def __repr__(self) -> str:
        return f"AsyncNamespace({self.name!r})"

    async def call(self, op: str, **params: Any) -> Any:
        """Runs any op by name with JSON parameters; returns its raw JSON result."""
        path = f"/v1/namespaces/{_http.segment(self.name)}/ops/{_http.segment(op)}"
        return await self.client.request("POST", path, _http.drop_none(params))

    async def _op(self, op: str, tp: Any, **params: Any) -> Any:
        return _convert(tp, await self.call(op, **params))

    async def start_job(self, op: str, **params: Any) -> Job:
        """Starts an op as a job (202); poll it with :meth:`AsyncClient.wait`."""
        path = f"/v1/namespaces/{_http.segment(self.name)}/jobs"
        body = {"op": op, "params": _http.drop_none(params)}
        return Job.from_dict(await self.client.request("POST", path, body))

    # --- writes
    async def write(self, path: str, content: str, message: Optional[str] = None) -> WriteOutcome:
        """Writes a whole memory file (YAML frontmatter + markdown) as one commit."""
        return await self._op("write", WriteOutcome, path=path, content=content, message=message)

    async def remember(
        self,
        title: str,
        *,
        tier: Optional[str] = None,
        topic: Optional[str] = None,
        summary: Optional[str] = None,
        body: Optional[str] = None,
        cue: Optional[Sequence[str]] = None,
        entity: Optional[Sequence[str]] = None,
        tag: Optional[Sequence[str]] = None,
        related: Optional[Sequence[str]] = None,
        supersedes: Optional[Sequence[str]] = None,
        confidence: Optional[float] = None,
        valid_from: Optional[str] = None,
        source: Optional[str] = None,
    ) -> WriteOutcome:
        """Writes a memory from fields; its path is derived from tier, topic and title."""
        return await self._op(
            "remember", WriteOutcome, title=title, tier=tier, topic=topic, summary=summary,
            body=body, cue=_list(cue), entity=_list(entity), tag=_list(tag),
            related=_list(related), supersedes=_list(supersedes), confidence=confidence,
            valid_from=valid_from, source=source,
        )  # fmt: skip

    async def forget(self, path: str) -> WriteOutcome:
        return await self._op("forget", WriteOutcome, path=path)

    async def ingest(
        self, sessions: Any, *, concurrency: Optional[int] = None, reextract: Optional[bool] = None
    ) -> IngestReport:
        """Turns conversations into memories (one commit per session); returns when
        done. The server runs ingestion only as a job, so this starts one and waits
        for it (up to an hour)."""
        job = await self.start_job("ingest", sessions=sessions, concurrency=concurrency, reextract=reextract)
        done = await self.client.wait(job, timeout=INGEST_TIMEOUT)
        return _convert(IngestReport, done.result)

    async def embed_pending(self) -> EmbedReport:
        return await self._op("embed_pending", EmbedReport)

    async def rebuild(self) -> SyncReport:
        return await self._op("rebuild", SyncReport)

    async def sync(self) -> SyncReport:
        return await self._op("sync", SyncReport)

    async def gc(
        self,
        *,
        dry_run: Optional[bool] = None,
        repack: Optional[bool] = None,
        no_repack: Optional[bool] = None,
        repack_every: Optional[int] = None,
        now: Optional[str] = None,
        prune_expire: Optional[str] = None,
    ) -> GcReport:
        return await self._op(
            "gc", GcReport, dry_run=dry_run, repack=repack, no_repack=no_repack,
            repack_every=repack_every, now=now, prune_expire=prune_expire,
        )  # fmt: skip

    # --- reads
    async def get(self, path: str, *, at: Optional[str] = None) -> Memory:
        """One memory file, at HEAD or at a revision (sha, ``HEAD~2``) or date."""
        return await self._op("get", Memory, path=path, at=at)

    async def retrieve(
        self,
        query: str,
        *,
        limit: Optional[int] = None,
        tier: Optional[str] = None,
        topic: Optional[str] = None,
        explain: Optional[bool] = None,
        at: Optional[str] = None,
        now: Optional[str] = None,
    ) -> Retrieval:
        """The memories that are evidence for ``query``, best first; none (and
        ``abstained``) when nothing clears the evidence floor. ``now`` (a date or
        an RFC 3339 time) is the moment the question is asked as of: what
        relative dates in it count from (default: the current time)."""
        return await self._op("retrieve", Retrieval, query=query, limit=limit, tier=tier, topic=topic, explain=explain, at=at, now=now)

    async def search(
        self, query: str, *, limit: Optional[int] = None, tier: Optional[str] = None, topic: Optional[str] = None
    ) -> SearchHits:
        return await self._op("search", SearchHits, query=query, limit=limit, tier=tier, topic=topic)

    async def semantic_search(
        self, query: str, *, limit: Optional[int] = None, tier: Optional[str] = None, topic: Optional[str] = None
    ) -> SemanticHits:
        return await self._op("semantic_search", SemanticHits, query=query, limit=limit, tier=tier, topic=topic)

    async def related(self, path: str) -> Links:
        return await self._op("related", Links, path=path)

    async def entity(self, name: str) -> EntityMentions:
        return await self._op("entity", EntityMentions, name=name)

    async def tree(self, topic: Optional[str] = None) -> TreeListing:
        return await self._op("tree", TreeListing, topic=topic)

    async def topics(self) -> List[TopicCount]:
        return await self._op("topics", List[TopicCount])

    async def vocab(self, term: Optional[str] = None) -> VocabListing:
        return await self._op("vocab", VocabListing, term=term)

    async def log(self, path: Optional[str] = None, *, limit: Optional[int] = None) -> List[LogEntry]:
        return await self._op("log", List[LogEntry], path=path, limit=limit)

    async def history(self, path: str, *, limit: Optional[int] = None) -> List[HistoryEntry]:
        return await self._op("history", List[HistoryEntry], path=path, limit=limit)

    async def stats(self) -> IndexStats:
        return await self._op("stats", IndexStats)

    async def answer(self, question: str, *, limit: Optional[int] = None) -> Answer:
        return await self._op("answer", Answer, question=question, limit=limit)
