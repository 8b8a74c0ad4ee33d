"""The client's methods against the server's op list, and every op run once
against a real server with typed results."""

from __future__ import annotations

import inspect
from typing import Dict, Set

import pytest

import gitloom
from gitloom import errors, types
from conftest import SESSIONS

#: Namespace methods that are not ops (they run any op, or start one as a job).
NOT_OPS = {"call", "start_job"}


def server_ops(server) -> Dict[str, dict]:
    with gitloom.Client(server.url, server.key) as client:
        return client.openapi()["x-gitloom-ops"]


def public_methods(cls) -> Set[str]:
    return {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}


@pytest.mark.parametrize("cls", [gitloom.Namespace, gitloom.AsyncNamespace])
def test_every_op_has_a_method_with_its_parameters(server, cls):
    ops = server_ops(server)
    assert len(ops) >= 20, ops.keys()
    methods = public_methods(cls)
    assert methods - NOT_OPS == set(ops), "methods that are not ops, or ops without a method"
    for name, op in ops.items():
        sig = inspect.signature(getattr(cls, name))
        params = {p: v for p, v in sig.parameters.items() if p != "self"}
        schema = op["params"]
        assert set(params) == set(schema.get("properties", {})), f"{cls.__name__}.{name}"
        required = {p for p, v in params.items() if v.default is inspect.Parameter.empty}
        assert required == set(schema.get("required", [])), f"{cls.__name__}.{name} required"
        if cls is gitloom.AsyncNamespace:
            assert inspect.iscoroutinefunction(getattr(cls, name)), name


VOCAB = "# Infra\n- k8s, kubernetes, kube\n"
CAT = "---\ntitle: Miso the cat\ncues: [what is my cat called]\nentities: [\"Miso (pet)\"]\n---\nThe cat is called Miso. See [[Cat food]].\n"
FOOD = "---\ntitle: Cat food\nrelated: [\"eater: facts/pets/miso.md\"]\n---\nMiso eats salmon kibble.\n"
OLD_INCIDENT = "---\ntitle: Router down\nexpires_at: 2020-01-01\n---\nThe router was down.\n"


def test_every_op_against_a_real_server(server, ns_name):
    covered: Set[str] = set()
    with gitloom.Client(server.url, server.key) as client:
        ns = client.create_namespace(ns_name)
        assert ns_name in client.namespaces()

        out = ns.write("facts/pets/miso.md", CAT, message="remember: the cat")
        assert isinstance(out, types.WriteOutcome) and out.commit and out.paths == ["facts/pets/miso.md"]
        assert out.message == "remember: the cat" and isinstance(out.sync, types.SyncReport)
        ns.write("facts/pets/cat-food.md", FOOD)
        ns.write("vocab/infra.md", VOCAB)
        ns.write("incidents/net/router.md", OLD_INCIDENT)
        covered.add("write")

        r = ns.remember(
            "Works at Orbital AI", topic="work", body="ML engineer.", cue=["where do I work"],
            entity=["Orbital AI (org)"], tag="work", confidence=0.9, valid_from="2026-05-20",
        )  # fmt: skip
        assert r.commit and r.paths[0].startswith("facts/work/")
        employer = r.paths[0]
        covered.add("remember")

        got = ns.get("facts/pets/miso.md")
        assert isinstance(got, types.Memory) and got.title == "Miso the cat" and "Miso" in got.content
        first = ns.get("facts/pets/miso.md", at=got.commit)
        assert first.content == got.content
        covered.add("get")

        rt = ns.retrieve("what is my cat called", explain=True, limit=5)
        assert isinstance(rt, types.Retrieval) and not rt.abstained
        top = rt.hits[0]
        assert isinstance(top, types.Hit) and top.path == "facts/pets/miso.md"
        assert top.evidence and all(isinstance(a, types.ArmScore) for a in top.arms.values())
        assert rt.explain and isinstance(rt.explain[0], types.ArmCandidates)
        nothing = ns.retrieve("what is the capital of peru")
        assert nothing.abstained and nothing.hits == []
        assert nothing.abstention and nothing.abstention["why"] in (
            "no_candidates",
            "no_evidence",
            "refused",
            "value_not_stored",
        )
        assert rt.abstention is None
        covered.add("retrieve")

        s = ns.search("salmon kibble")
        assert isinstance(s, types.SearchHits) and s.hits[0].path == "facts/pets/cat-food.md"
        covered.add("search")

        # The test server runs without an embedding model: the op says so, typed.
        with pytest.raises(errors.InvalidRequest, match="embedding model"):
            ns.semantic_search("my cat")
        covered.add("semantic_search")

        links = ns.related("facts/pets/miso.md")
        assert isinstance(links, types.Links)
        assert [l.kind for l in links.outgoing] == ["wiki"]
        assert links.outgoing[0].resolved == "facts/pets/cat-food.md"
        assert [(l.src, l.label) for l in links.incoming] == [("facts/pets/cat-food.md", "eater")]
        covered.add("related")

        e = ns.entity("Miso")
        assert isinstance(e, types.EntityMentions) and e.mentions[0].path == "facts/pets/miso.md"
        covered.add("entity")

        tree = ns.tree("facts")
        assert isinstance(tree, types.TreeListing) and {c.name for c in tree.children} >= {"pets", "work"}
        covered.add("tree")

        topics = ns.topics()
        assert all(isinstance(t, types.TopicCount) for t in topics)
        assert any(t.topic == "facts/pets" and t.total == 2 for t in topics), topics
        covered.add("topics")

        v = ns.vocab()
        assert isinstance(v, types.VocabListing)
        assert [g.terms for g in v.groups] == [["k8s", "kubernetes", "kube"]]
        covered.add("vocab")

        log = ns.log(limit=3)
        assert len(log) == 3 and all(isinstance(c, types.LogEntry) for c in log)
        assert ns.log("facts/pets/miso.md")[0].summary == "remember: the cat"
        covered.add("log")

        hist = ns.history(employer)
        assert len(hist) == 1 and isinstance(hist[0], types.HistoryEntry) and "ML engineer" in hist[0].content
        covered.add("history")

        with pytest.raises(errors.InvalidRequest, match="no embedding model"):
            ns.embed_pending()
        covered.add("embed_pending")

        assert isinstance(ns.rebuild(), types.SyncReport)
        covered.add("rebuild")
        sync = ns.sync()
        assert isinstance(sync, types.SyncReport) and sync.commit
        covered.add("sync")

        st = ns.stats()
        assert isinstance(st, types.IndexStats) and st.files == 4 and st.per_tier == {"facts": 3, "incidents": 1, "rules": 0, "skills": 0}
        covered.add("stats")

        ing = ns.ingest(SESSIONS)
        assert isinstance(ing, types.IngestReport) and ing.commits == 2
        assert [s.id for s in ing.sessions] == ["py-s1", "py-s2"]
        again = ns.ingest(SESSIONS)
        assert again.commits == 0 and all(s.skipped for s in again.sessions)
        covered.add("ingest")

        ans = ns.answer("what is my cat called")
        assert isinstance(ans, types.Answer) and ans.text is None and not ans.abstained
        assert ans.evidence[0].path == "facts/pets/miso.md"
        covered.add("answer")

        plan = ns.gc(dry_run=True, now="2026-06-01T00:00:00Z")
        assert isinstance(plan, types.GcReport) and plan.dry_run
        assert [x.path for x in plan.expired] == ["incidents/net/router.md"] and plan.commit is None
        done = ns.gc(now="2026-06-01T00:00:00Z", no_repack=True)
        assert done.commit and [x.by for x in done.expired] == ["expires_at"]
        covered.add("gc")

        gone = ns.forget("facts/pets/cat-food.md")
        assert gone.commit
        with pytest.raises(errors.MemoryNotFound):
            ns.get("facts/pets/cat-food.md")
        assert "salmon" in ns.get("facts/pets/cat-food.md", at=f"{gone.commit}~1").content
        covered.add("forget")

        # Any op by name, raw.
        raw = ns.call("stats")
        assert isinstance(raw, dict) and raw == ns.stats().raw

        client.delete_namespace(ns_name)
        assert ns_name not in client.namespaces()
    assert covered == set(server_ops(server)), "every op was run"


def test_jobs_run_any_op_and_report_their_result(server, ns_name):
    with gitloom.Client(server.url, server.key) as client:
        ns = client.create_namespace(ns_name)
        ns.remember("Cat", topic="pets", body="The cat is Miso.")
        job = ns.start_job("rebuild")
        assert isinstance(job, types.Job) and job.id and job.kind == "rebuild"
        done = client.wait(job)
        assert done.status == "succeeded" and done.result["full"] is True
        failed = ns.start_job("get", path="facts/none.md")
        with pytest.raises(errors.MemoryNotFound, match="facts/none.md"):
            client.wait(failed.id)
        with pytest.raises(errors.JobNotFound):
            client.job("no-such-job")


def test_vocab_written_through_the_api_is_seen_by_reads(server, ns_name):
    with gitloom.Client(server.url, server.key) as client:
        ns = client.create_namespace(ns_name)
        ns.write("vocab/infra.md", VOCAB)
        groups = ns.vocab("k8s").groups
        assert [g.terms for g in groups] == [["k8s", "kubernetes", "kube"]]
