"""Typed results of the ops: dataclasses built from the server's JSON.

Every class keeps the JSON it was built from in ``raw``, and ignores keys it does not
know, so a newer server (which may add fields) does not break an older client.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, TypeVar, Union

T = TypeVar("T", bound="Model")


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if isinstance(tp, type) and issubclass(tp, Model):
        return tp.from_dict(value)
    if origin is Union:
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin in (list, List):
        return [_convert(args[0], v) for v in value] if args else list(value)
    if origin in (dict, Dict):
        return {k: _convert(args[1], v) for k, v in value.items()} if args else dict(value)
    if origin in (tuple, Tuple):
        return tuple(_convert(a, v) for a, v in zip(args, value))
    return value


@dataclass
class Model:
    """Base of the result types."""

    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls: type[T], data: Dict[str, Any]) -> T:
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__} expects a JSON object, got {type(data).__name__}")
        hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name == "raw" or f.name not in data:
                continue
            kwargs[f.name] = _convert(hints[f.name], data[f.name])
        return cls(raw=data, **kwargs)


@dataclass
class SyncReport(Model):
    commit: str = ""
    full: bool = False
    visited_entries: int = 0
    changed_files: int = 0
    upserted: int = 0
    removed: int = 0
    problems: List[str] = field(default_factory=list)
    embedded: int = 0
    cached: int = 0
    ms: float = 0.0


@dataclass
class WriteOutcome(Model):
    """A write's commit (``None`` when nothing changed) and the paths it wrote."""

    commit: Optional[str] = None
    paths: List[str] = field(default_factory=list)
    message: str = ""
    sync: Optional[SyncReport] = None


@dataclass
class Memory(Model):
    """One memory file as read at a revision (the ``get`` op)."""

    path: str = ""
    commit: str = ""
    content: str = ""
    title: Optional[str] = None


@dataclass
class ArmScore(Model):
    score: float = 0.0
    rank: int = 0


@dataclass
class HitSection(Model):
    heading: str = ""
    anchor: str = ""
    start_line: int = 0
    end_line: int = 0


@dataclass
class GraphStep(Model):
    #: The hit it was reached from, and how.
    from_: str = ""
    via: str = ""
    label: Optional[str] = None

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "GraphStep":
        step = super().from_dict(data)
        step.from_ = data.get("from", "")
        return step


@dataclass
class Hit(Model):
    """A retrieved memory with why it was returned."""

    path: str = ""
    title: str = ""
    score: float = 0.0
    #: Per arm that found it (lexical, cues, bodies, entities, graph): raw score and rank.
    arms: Dict[str, ArmScore] = field(default_factory=dict)
    #: Which bars it cleared: ``strong:cues``, ``weak:lexical+bodies``, ``context:…``.
    evidence: str = ""
    snippet: str = ""
    section: Optional[HitSection] = None
    matched_terms: List[str] = field(default_factory=list)
    coverage: Optional[float] = None
    matched_cue: Optional[str] = None
    # The cited message (``sessions/…md#m3``) whose words matched better than the memory's prose.
    matched_said: Optional[str] = None
    entities: List[str] = field(default_factory=list)
    graph: Optional[GraphStep] = None
    priors: List[str] = field(default_factory=list)


@dataclass
class ArmCandidates(Model):
    arm: str = ""
    candidates: List[Tuple[str, float]] = field(default_factory=list)


@dataclass
class Retrieval(Model):
    """The answer to ``retrieve``: hits best first, or none when it abstained."""

    query: str = ""
    shape: str = ""
    hits: List[Hit] = field(default_factory=list)
    abstained: bool = False
    # When it abstained, why: {"why": "no_candidates" | "no_evidence" | "refused" |
    # "value_not_stored", ...} with the memory ("path") a refusal names.
    abstention: Optional[Dict[str, Any]] = None
    timings_ms: Dict[str, float] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    explain: Optional[List[ArmCandidates]] = None
    build: str = ""


@dataclass
class SearchHits(Model):
    query: str = ""
    hits: List[Hit] = field(default_factory=list)


@dataclass
class SemanticHits(Model):
    query: str = ""
    model: str = ""
    cues: List[Tuple[str, float]] = field(default_factory=list)
    bodies: List[Tuple[str, float]] = field(default_factory=list)


@dataclass
class LinkRow(Model):
    src: str = ""
    #: ``wiki``, ``related`` or ``supersedes``.
    kind: str = ""
    target_raw: str = ""
    label: Optional[str] = None
    section: Optional[str] = None
    #: The file it points at; ``None`` while dangling.
    resolved: Optional[str] = None


@dataclass
class Links(Model):
    path: str = ""
    outgoing: List[LinkRow] = field(default_factory=list)
    incoming: List[LinkRow] = field(default_factory=list)


@dataclass
class Mention(Model):
    path: str = ""
    entity: str = ""
    kind: Optional[str] = None
    role: Optional[str] = None


@dataclass
class EntityMentions(Model):
    name: str = ""
    mentions: List[Mention] = field(default_factory=list)


@dataclass
class TopicCount(Model):
    topic: str = ""
    name: str = ""
    direct: int = 0
    total: int = 0


@dataclass
class TreeFile(Model):
    path: str = ""
    title: str = ""


@dataclass
class TreeListing(Model):
    topic: Optional[str] = None
    total: int = 0
    children: List[TopicCount] = field(default_factory=list)
    files: List[TreeFile] = field(default_factory=list)


@dataclass
class VocabGroup(Model):
    file: str = ""
    line: int = 0
    terms: List[str] = field(default_factory=list)


@dataclass
class VocabListing(Model):
    groups: List[VocabGroup] = field(default_factory=list)


@dataclass
class LogEntry(Model):
    commit: str = ""
    time: str = ""
    summary: str = ""
    message: str = ""


@dataclass
class HistoryEntry(Model):
    commit: str = ""
    time: str = ""
    summary: str = ""
    #: The file at that commit; ``None`` where the commit deleted it.
    content: Optional[str] = None


@dataclass
class EmbedReport(Model):
    model: Optional[str] = None
    embedded: int = 0
    cached: int = 0


@dataclass
class IndexStats(Model):
    files: int = 0
    sections: int = 0
    cues: int = 0
    links: int = 0
    dangling_links: int = 0
    entities: int = 0
    mentions: int = 0
    timeline: int = 0
    problems: int = 0
    per_tier: Dict[str, int] = field(default_factory=dict)


@dataclass
class SessionReport(Model):
    id: str = ""
    date: str = ""
    transcript: str = ""
    commit: Optional[str] = None
    facts: int = 0
    new: int = 0
    extended: int = 0
    corrected: int = 0
    superseded: int = 0
    duplicate: int = 0
    paths: List[str] = field(default_factory=list)
    skipped: bool = False
    errors: List[str] = field(default_factory=list)


@dataclass
class Flagged(Model):
    session: str = ""
    path: str = ""
    reference: str = ""
    resolved: Optional[str] = None


@dataclass
class IngestReport(Model):
    extractor: str = ""
    sessions: List[SessionReport] = field(default_factory=list)
    turns: int = 0
    facts: int = 0
    new: int = 0
    extended: int = 0
    corrected: int = 0
    superseded: int = 0
    duplicate: int = 0
    commits: int = 0
    flagged: List[Flagged] = field(default_factory=list)
    errors: int = 0
    elapsed_ms: float = 0.0
    cancelled: bool = False


@dataclass
class AnswerEvidence(Model):
    path: str = ""
    title: str = ""
    score: float = 0.0
    snippet: str = ""


@dataclass
class Answer(Model):
    #: The model's answer; ``None`` with no model configured, or when it does not know.
    text: Optional[str] = None
    cited: List[str] = field(default_factory=list)
    abstained: bool = False
    evidence: List[AnswerEvidence] = field(default_factory=list)


@dataclass
class Expired(Model):
    path: str = ""
    at: str = ""
    by: str = ""


@dataclass
class GcReport(Model):
    dry_run: bool = False
    expired: List[Expired] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    commit: Optional[str] = None
    commits_since_repack: int = 0
    repack_due: bool = False
    repack: Optional[Dict[str, Any]] = None
    sync: Optional[SyncReport] = None


@dataclass
class JobError(Model):
    code: str = ""
    message: str = ""


@dataclass
class Job(Model):
    """An op running on the server (``start_job``); poll with ``job`` or ``wait``."""

    id: str = ""
    namespace: str = ""
    kind: str = ""
    #: ``running``, ``succeeded`` or ``failed``.
    status: str = ""
    created: str = ""
    finished: Optional[str] = None
    result: Optional[Any] = None
    error: Optional[JobError] = None

    @property
    def running(self) -> bool:
        return self.status == "running"
