"""An agent loop that keeps its long-term memory in gitloom.

Each user turn, the agent first asks its memory (``retrieve``: only evidence comes
back, or nothing). A question is answered from what was recalled, or the agent says
it does not know; a statement is remembered (``remember``: one commit each). When the
conversation ends, the whole session is handed to ``ingest``, which keeps the
transcript and extracts memories from it the way the server's extractor does.

A real agent would put a language model where ``reply`` is; the memory calls stay
the same. Run it against a server:

    GITLOOM_URL=http://127.0.0.1:8080 GITLOOM_API_KEY=glk_... python examples/agent_loop.py
"""

from __future__ import annotations

import datetime
import os
import uuid

import gitloom
from gitloom import errors

CONVERSATION = [
    "I just adopted a cat called Miso.",
    "My sister Ana lives in Lisbon.",
    "What is my cat called?",
    "Where does my sister live?",
    "What is my blood type?",
]


def reply(turn: str, recalled: gitloom.types.Retrieval) -> str:
    """Stands in for the model: answers from the evidence, or admits it has none."""
    if not turn.rstrip().endswith("?"):
        return "Noted — I'll remember that."
    if recalled.abstained:
        return f"I don't know yet ({turn!r} has no memory behind it)."
    best = recalled.hits[0]
    return f"From memory ({best.path}): {best.title}"


def main() -> None:
    name = os.environ.get("GITLOOM_NAMESPACE") or "agent-" + uuid.uuid4().hex[:8]
    with gitloom.Client() as client:  # GITLOOM_URL, GITLOOM_API_KEY
        try:
            memory = client.create_namespace(name)
        except errors.NamespaceExists:
            memory = client.namespace(name)
        transcript = []
        for turn in CONVERSATION:
            recalled = memory.retrieve(turn, limit=3)
            if turn.rstrip().endswith("?"):
                if recalled.abstained:
                    print(f"no memory for {turn!r}")
                for hit in recalled.hits[:1]:
                    print(f"recalled {hit.path} ({hit.evidence}) for {turn!r}")
            else:
                out = memory.remember(turn.rstrip("."), topic="chat", body=turn)
                print(f"remembered: {', '.join(out.paths)}")
            answer = reply(turn, recalled)
            print(f"  user: {turn}\n  agent: {answer}")
            transcript += [{"role": "user", "content": turn}, {"role": "assistant", "content": answer}]
        session = {"id": f"chat-{uuid.uuid4().hex[:8]}", "date": datetime.date.today().isoformat(), "messages": transcript}
        report = memory.ingest([session])
        print(f"ingested the session: {report.facts} fact(s), {report.commits} commit(s)")


if __name__ == "__main__":
    main()
