"""The example agent loop runs against a real server, as its README says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"


def test_the_agent_loop_example_stores_and_retrieves(server, ns_name):
    env = dict(os.environ, GITLOOM_URL=server.url, GITLOOM_API_KEY=server.key, GITLOOM_NAMESPACE=ns_name)
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout
    # It remembered what the user said, and later recalled it from the store.
    assert "remembered:" in lines, lines
    assert "recalled facts/" in lines, lines
    assert "no memory for" in lines, "an unknown question abstains: " + lines
