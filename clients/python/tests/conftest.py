"""A real ``gitloom serve`` for the tests: a temporary data directory, accounts made
with ``gitloom admin``, the server on an ephemeral loopback port.

The binary is ``$GITLOOM_BIN``, else the workspace's ``target/debug/gitloom`` (or
release), else ``gitloom`` on ``PATH``. Without one the tests are skipped, except
under CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]


def gitloom_bin() -> Optional[str]:
    env = os.environ.get("GITLOOM_BIN")
    if env:
        return env
    for profile in ("debug", "release"):
        candidate = REPO / "target" / profile / "gitloom"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("gitloom")


class Server:
    """A running ``gitloom serve`` with two accounts."""

    def __init__(self, binary: str, extra: List[str]) -> None:
        self.binary = binary
        self.dir = tempfile.TemporaryDirectory(prefix="gitloom-py-")
        self.data = os.path.join(self.dir.name, "data")
        self.env = dict(os.environ, GITLOOM_EMBEDDER="none")
        # The operator's chat model must not leak into the tests.
        for var in ("GITLOOM_LLM_URL", "GITLOOM_LLM_MODEL"):
            self.env.pop(var, None)
        self.key = self.account("acme")
        self.other_key = self.account("other")
        self.proc = subprocess.Popen(
            [binary, "serve", "--addr", "127.0.0.1:0", "--data", self.data, *extra],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.url = self._address()
        # Keep reading stderr so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        self._wait_healthy()

    def account(self, name: str) -> str:
        out = subprocess.run(
            [self.binary, "admin", "--data", self.data, "create-account", name, "--json"],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(out.stdout)["api_key"]

    def _address(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError(f"gitloom serve exited ({self.proc.wait()}) before listening")
            m = re.search(r"http://[0-9.]+:[0-9]+", line)
            if m:
                return m.group(0)
        raise RuntimeError("gitloom serve did not say where it listens")

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gitloom serve is not healthy")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.dir.cleanup()


def _start(extra: List[str]) -> Server:
    binary = gitloom_bin()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("no gitloom binary: build it (cargo build -p gitloom) or set GITLOOM_BIN")
        pytest.skip("no gitloom binary (cargo build -p gitloom, or set GITLOOM_BIN)")
    return Server(binary, extra)


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    s = _start([])
    yield s
    s.stop()


@pytest.fixture(scope="session")
def slow_server() -> Iterator[Server]:
    """A server that lets a key make one request, then one every half second."""
    s = _start(["--rate", "2", "--burst", "1"])
    yield s
    s.stop()


@pytest.fixture
def ns_name() -> str:
    return "t-" + uuid.uuid4().hex[:12]


SESSIONS: List[Dict[str, object]] = [
    {
        "id": "py-s1",
        "date": "2026-03-02",
        "messages": [
            {"role": "user", "content": "I work at Acme Robotics as a perception engineer."},
            {"role": "assistant", "content": "Noted."},
        ],
    },
    {
        "id": "py-s2",
        "date": "2026-05-20",
        "messages": [
            {"role": "user", "content": "Today I started at Orbital AI as an ML engineer."},
            {"role": "assistant", "content": "Congratulations!"},
        ],
    },
]
