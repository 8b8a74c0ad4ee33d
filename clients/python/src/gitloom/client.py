"""The blocking client: :class:`Client` for the server, :class:`Namespace` for one
store in it, with a method per op."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence

import httpx

from . import _http, errors
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


class Client:
    """A gitloom server (``gitloom serve``), authenticated by an API key.

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
        transport: Optional[httpx.BaseTransport] = None,
    ) -> None:
        self.config = _http.Config.make(base_url, api_key, timeout, max_retries, backoff, max_backoff)
        self._http = httpx.Client(
            base_url=self.config.base_url,
            headers=self.config.headers(),
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """Sends one API request (retrying 429s) and returns its ``result``."""
        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, json=body)
            except httpx.HTTPError as e:
                raise _http.transport_error(e, method, path) from e
            try:
                return _http.read(response)
            except errors.RateLimited as e:
                wait = _http.retry_delay(self.config, attempt, e)
                if wait is None:
                    raise
                time.sleep(wait)
                attempt += 1

    # --- the server
    def health(self) -> Dict[str, Any]:
        return self.request("GET", "/healthz")

    def openapi(self) -> Dict[str, Any]:
        """The OpenAPI document, with every op's parameter schema under ``x-gitloom-ops``."""
        return self.request("GET", "/openapi.json")

    def namespaces(self) -> List[str]:
        return list(self.request("GET", "/v1/namespaces")["namespaces"])

    def create_namespace(self, name: str) -> "Namespace":
        self.request("POST", "/v1/namespaces", {"name": name})
        return self.namespace(name)

    def delete_namespace(self, name: str) -> None:
        self.request("DELETE", f"/v1/namespaces/{_http.segment(name)}")

    def namespace(self, name: str) -> "Namespace":
        """A namespace (created or not: its first use says)."""
        return Namespace(self, name)

    # --- jobs
    def job(self, job_id: str) -> Job:
        return Job.from_dict(self.request("GET", f"/v1/jobs/{_http.segment(job_id)}"))

    def wait(self, job: "Job | str", *, timeout: float = 300.0, poll: float = 0.05) -> Job:
        """Polls a job until it finishes; a failed job raises its error."""
        job_id = job.id if isinstance(job, Job) else job
        deadline = time.monotonic() + timeout
        delay = poll
        while True:
            current = self.job(job_id)
            if not current.running:
                return _finished(current)
            if time.monotonic() > deadline:
                raise errors.GitloomError(f"job {job_id} still running after {timeout}s", code="timeout")
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


#: How long :meth:`Namespace.ingest` waits for its job, in seconds.
INGEST_TIMEOUT = 3600.0


def _finished(job: Job) -> Job:
    if job.status == "failed" and job.error is not None:
        raise errors.from_response(
            400, {"error": {"code": job.error.code, "message": f"job {job.id}: {job.error.message}"}}
        )
    return job


class Namespace:
    """One namespace (store) of a :class:`Client`: a method per op, returning typed
    results. Parameters left as ``None`` take the server's defaults."""

    def __init__(self, client: Client, name: str) -> None:
        self.client = client
        self.name = name

    def __repr__(self) -> str:
        return f"Namespace({self.name!r})"

    def call(self, op: str, **params: Any) -> Any:
        """Runs any op by name with JSON parameters; returns its raw JSON result."""
        path = f"/v1/namespaces/{_http.segment(self.name)}/ops/{_http.segment(op)}"
        return self.client.request("POST", path, _http.drop_none(params))

    def _op(self, op: str, tp: Any, **params: Any) -> Any:
        return _convert(tp, self.call(op, **params))

    def start_job(self, op: str, **params: Any) -> Job:
        """Starts an op as a job (202); poll it with :meth:`Client.wait`."""
        path = f"/v1/namespaces/{_http.segment(self.name)}/jobs"
        body = {"op": op, "params": _http.drop_none(params)}
        return Job.from_dict(self.client.request("POST", path, body))

    # --- writes
    def write(self, path: str, content: str, message: Optional[str] = None) -> WriteOutcome:
        """Writes a whole memory file (YAML frontmatter + markdown) as one commit."""
        return self._op("write", WriteOutcome, path=path, content=content, message=message)

    def remember(
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
        return self._op(
            "remember", WriteOutcome, title=title, tier=tier, topic=topic, summary=summary,
            body=body, cue=_list(cue), entity=_list(entity), tag=_list(tag),
            related=_list(related), supersedes=_list(supersedes), confidence=confidence,
            valid_from=valid_from, source=source,
        )  # fmt: skip

    def forget(self, path: str) -> WriteOutcome:
        return self._op("forget", WriteOutcome, path=path)

    def ingest(
        self, sessions: Any, *, concurrency: Optional[int] = None, reextract: Optional[bool] = None
    ) -> IngestReport:
        """Turns conversations into memories (one commit per session); blocks until
        done. The server runs ingestion only as a job (it takes long), so this starts
        one and waits for it (up to an hour); ``start_job("ingest", sessions=…)`` and
        :meth:`Client.wait` do the same without blocking."""
        job = self.start_job("ingest", sessions=sessions, concurrency=concurrency, reextract=reextract)
        done = self.client.wait(job, timeout=INGEST_TIMEOUT)
        return _convert(IngestReport, done.result)

    def embed_pending(self) -> EmbedReport:
        return self._op("embed_pending", EmbedReport)

    def rebuild(self) -> SyncReport:
        return self._op("rebuild", SyncReport)

    def sync(self) -> SyncReport:
        return self._op("sync", SyncReport)

    def gc(
        self,
        *,
        dry_run: Optional[bool] = None,
        repack: Optional[bool] = None,
        no_repack: Optional[bool] = None,
        repack_every: Optional[int] = None,
        now: Optional[str] = None,
        prune_expire: Optional[str] = None,
    ) -> GcReport:
        return self._op(
            "gc", GcReport, dry_run=dry_run, repack=repack, no_repack=no_repack,
            repack_every=repack_every, now=now, prune_expire=prune_expire,
        )  # fmt: skip

    # --- reads
    def get(self, path: str, *, at: Optional[str] = None) -> Memory:
        """One memory file, at HEAD or at a revision (sha, ``HEAD~2``) or date."""
        return self._op("get", Memory, path=path, at=at)

    def retrieve(
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
        return self._op("retrieve", Retrieval, query=query, limit=limit, tier=tier, topic=topic, explain=explain, at=at, now=now)

    def search(
        self, query: str, *, limit: Optional[int] = None, tier: Optional[str] = None, topic: Optional[str] = None
    ) -> SearchHits:
        return self._op("search", SearchHits, query=query, limit=limit, tier=tier, topic=topic)

    def semantic_search(
        self, query: str, *, limit: Optional[int] = None, tier: Optional[str] = None, topic: Optional[str] = None
    ) -> SemanticHits:
        return self._op("semantic_search", SemanticHits, query=query, limit=limit, tier=tier, topic=topic)

    def related(self, path: str) -> Links:
        return self._op("related", Links, path=path)

    def entity(self, name: str) -> EntityMentions:
        return self._op("entity", EntityMentions, name=name)

    def tree(self, topic: Optional[str] = None) -> TreeListing:
        return self._op("tree", TreeListing, topic=topic)

    def topics(self) -> List[TopicCount]:
        return self._op("topics", List[TopicCount])

    def vocab(self, term: Optional[str] = None) -> VocabListing:
        return self._op("vocab", VocabListing, term=term)

    def log(self, path: Optional[str] = None, *, limit: Optional[int] = None) -> List[LogEntry]:
        return self._op("log", List[LogEntry], path=path, limit=limit)

    def history(self, path: str, *, limit: Optional[int] = None) -> List[HistoryEntry]:
        return self._op("history", List[HistoryEntry], path=path, limit=limit)

    def stats(self) -> IndexStats:
        return self._op("stats", IndexStats)

    def answer(self, question: str, *, limit: Optional[int] = None) -> Answer:
        return self._op("answer", Answer, question=question, limit=limit)


def _list(items: Optional[Sequence[str]]) -> Optional[List[str]]:
    if items is None:
        return None
    if isinstance(items, str):
        return [items]
    return list(items)
