#!/usr/bin/env python3
"""A bounded load test of `gitloom serve`, loopback only, Python 3 stdlib only.

It stops by itself: every phase has a deadline, every request a timeout, and an
alarm ends the whole run (killing the server it started) if anything hangs.

    scripts/load_test.py --gitloom BIN [--seconds 30] [--clients 8] [--seed 300]
    scripts/load_test.py --gitloom BIN --jobs 10000
    scripts/load_test.py --url http://127.0.0.1:8080 --key glk_… --namespace NS

With --gitloom BIN it starts `BIN serve` on 127.0.0.1 (a free port) over a
temporary data directory, with an account and key made by
`BIN admin create-account` and the rate limit raised (--rate/--burst) so the
server, not the limiter, is measured; it creates the namespace over the API,
seeds it (--seed memories, written over the API by --clients writers), and kills
the server at the end. Without --gitloom it loads a server already running on
loopback (--url, --key, --namespace; the namespace must exist; --seed 0 skips
the seeding); it then cannot read the server's memory unless given --pid.

Modes:
  mixed (default): --clients concurrent clients for --seconds; even-numbered
      clients write (`remember` a new subject, each client its own topic), odd
      ones retrieve (a cue of a seed memory).  Prints requests/s, write and
      retrieve p50/p90/p99/max in ms, and counts by HTTP status.
  --jobs N: N `log` jobs from one key (POST /v1/namespaces/NS/jobs, each polled
      to its end; a 429 from the per-account running-jobs limit is waited out),
      stopping at N or after --jobs-seconds; prints the server's VmRSS
      (/proc/PID/status) at idle (after seeding and a warm-up retrieve) and after
      the jobs, and the difference.

The report is one JSON document on stdout; progress goes to stderr.
The environment variable GITLOOM_EMBEDDER (or --embedder) picks the server's
embedding model, as for `gitloom serve` itself.
"""

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import shutil
import urllib.parse

LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")

TOPICS = ["deploy", "database", "oncall", "billing", "search", "network", "storage", "auth"]
SERVICES = ["ledger", "gateway", "indexer", "scheduler", "mailer", "billing-api", "auth-proxy",
            "thumbnailer", "reporter", "queue", "cache", "exporter"]
REGIONS = ["eu-west", "us-east", "ap-south", "eu-north", "us-west"]
PEOPLE = ["Alice Moreau", "Bilal Khan", "Chen Wei", "Dana Ortiz", "Emeka Obi", "Farah Nasser"]
VERBS = ["migrated", "rolled back", "paged about", "resized", "rotated the keys of",
         "upgraded", "benchmarked", "split", "deprecated", "documented"]


def log(msg):
    print(f"[load_test {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout("the run's time budget is spent")


class Client:
    """One keep-alive HTTP/1.1 connection to the server (reconnects after an error)."""

    def __init__(self, host, port, key, timeout):
        self.host, self.port, self.key, self.timeout = host, port, key, timeout
        self.conn = None

    def request(self, method, path, body=None):
        """(status, parsed JSON or None); status 0 for a connection error or timeout."""
        headers = {"Authorization": f"Bearer {self.key}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                raw = r.read()
                try:
                    parsed = json.loads(raw) if raw else None
                except ValueError:
                    parsed = None
                if r.getheader("connection", "").lower() == "close":
                    self.close()
                return r.status, parsed
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                # A kept-alive connection the server closed: retry once on a new one.
                self.close()
                if attempt == 1:
                    log(f"request failed: {method} {path}: {e!r}")
                    return 0, None
            except (OSError, http.client.HTTPException) as e:
                self.close()
                log(f"request failed: {method} {path}: {e!r}")
                return 0, None
        return 0, None

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None


def percentile(sorted_ms, p):
    if not sorted_ms:
        return None
    i = round((len(sorted_ms) - 1) * p)
    return round(sorted_ms[min(i, len(sorted_ms) - 1)], 2)


def summary(ms):
    ms = sorted(ms)
    return {
        "count": len(ms),
        "p50_ms": percentile(ms, 0.50),
        "p90_ms": percentile(ms, 0.90),
        "p99_ms": percentile(ms, 0.99),
        "max_ms": round(ms[-1], 2) if ms else None,
    }


def seed_memory(i):
    """A deterministic synthetic memory (remember params) and the question its cue asks."""
    rnd = random.Random(i)
    service, region = rnd.choice(SERVICES), rnd.choice(REGIONS)
    person, verb = rnd.choice(PEOPLE), rnd.choice(VERBS)
    topic = rnd.choice(TOPICS)
    title = f"{service} {region} change {i}"
    body = (f"{person} {verb} {service} in {region} on 2026-{1 + i % 12:02d}-{1 + i % 28:02d}. "
            f"The change took {5 + i % 50} minutes; the ticket is OPS-{1000 + i}. "
            f"Follow-up: watch the {service} error budget in {region} for a week.")
    cue = f"who {verb} {service} in {region}"
    params = {
        "title": title,
        "topic": topic,
        "summary": f"{person} {verb} {service} ({region})",
        "body": body,
        "cue": [cue, f"what happened to {service} in {region} (OPS-{1000 + i})"],
        "entity": [f"{person} (person)", f"{service} (service)"],
    }
    return params, cue


def run_clients(n, target, deadline):
    """Run target(c) in n threads; they stop by the deadline. Returns their results."""
    results = [None] * n

    def wrap(c):
        try:
            results[c] = target(c)
        except Exception as e:  # a client's crash is a finding, not the end of the run
            log(f"client {c} crashed: {e!r}")

    threads = [threading.Thread(target=wrap, args=(c,), daemon=True) for c in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 90)
    return [r for r in results if r is not None]


def seed(host, port, key, ns, count, clients, seconds, timeout):
    """Write `count` seed memories over the API with `clients` writers; bounded by `seconds`."""
    deadline = time.monotonic() + seconds
    lock = threading.Lock()
    nxt = [0]
    statuses = {}
    started = time.monotonic()

    def writer(c):
        cl = Client(host, port, key, timeout)
        done = 0
        while time.monotonic() < deadline:
            with lock:
                i = nxt[0]
                if i >= count:
                    break
                nxt[0] += 1
            params, _ = seed_memory(i)
            s, _ = cl.request("POST", f"/v1/namespaces/{ns}/memories", params)
            with lock:
                statuses[str(s)] = statuses.get(str(s), 0) + 1
            done += 1
        cl.close()
        return done

    written = sum(run_clients(clients, writer, deadline))
    elapsed = time.monotonic() - started
    return {"requested": count, "written": written, "seconds": round(elapsed, 2),
            "statuses": statuses}


def mixed(host, port, key, ns, clients, seconds, queries, timeout):
    deadline = time.monotonic() + seconds
    started = time.monotonic()
    cpu0 = time.process_time()

    def client(c):
        cl = Client(host, port, key, timeout)
        me = {"write": [], "retrieve": [], "statuses": {}}
        n = 0
        while time.monotonic() < deadline:
            n += 1
            t = time.perf_counter()
            if c % 2 == 0:
                body = {
                    "title": f"load note {c} {n}",
                    "topic": f"load/c{c}",
                    "body": (f"Client {c} wrote note {n} about the rollout of service "
                             f"{SERVICES[n % len(SERVICES)]} in region {REGIONS[n % len(REGIONS)]}."),
                    "cue": [f"what did client {c} write in note {n}"],
                }
                s, _ = cl.request("POST", f"/v1/namespaces/{ns}/memories", body)
                me["write"].append((time.perf_counter() - t) * 1e3)
            else:
                q = queries[(c * 7919 + n) % len(queries)]
                s, _ = cl.request("GET", f"/v1/namespaces/{ns}/retrieve?q={urllib.parse.quote(q)}")
                me["retrieve"].append((time.perf_counter() - t) * 1e3)
            me["statuses"][str(s)] = me["statuses"].get(str(s), 0) + 1
        cl.close()
        return me

    # The machine's load average while the clients run (other work skews the figures).
    samples = []

    def sampler():
        while time.monotonic() < deadline:
            samples.append(loadavg())
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))

    threading.Thread(target=sampler, daemon=True).start()
    results = run_clients(clients, client, deadline)
    elapsed = time.monotonic() - started
    client_cpu = time.process_time() - cpu0
    writes, reads, statuses = [], [], {}
    for r in results:
        writes += r["write"]
        reads += r["retrieve"]
        for s, k in r["statuses"].items():
            statuses[s] = statuses.get(s, 0) + k
    total = len(writes) + len(reads)
    errors = {s: k for s, k in statuses.items() if not s.startswith("2")}
    return {
        "clients": clients,
        "writers": (clients + 1) // 2,
        "retrievers": clients // 2,
        "seconds": round(elapsed, 2),
        "requests": total,
        "requests_per_second": round(total / elapsed, 1) if elapsed > 0 else None,
        "write": summary(writes),
        "retrieve": summary(reads),
        "statuses": dict(sorted(statuses.items())),
        "errors_by_status": dict(sorted(errors.items())),
        "loadavg_1min_samples": [x[0] for x in samples if x],
        # CPU the load generator itself used (it shares the machine with the server).
        "client_cpu_seconds": round(client_cpu, 2),
    }


def jobs(host, port, key, ns, count, seconds, timeout):
    deadline = time.monotonic() + seconds
    cl = Client(host, port, key, timeout)
    started = time.monotonic()
    accepted = refused = failed = polls = 0
    statuses = {}
    job_statuses = {}
    while accepted < count and time.monotonic() < deadline:
        s, body = cl.request("POST", f"/v1/namespaces/{ns}/jobs", {"op": "log"})
        statuses[str(s)] = statuses.get(str(s), 0) + 1
        if s == 202:
            accepted += 1
            jid = ((body or {}).get("result") or {}).get("id")
            if not jid:
                failed += 1
                continue
            while time.monotonic() < deadline:
                s2, job = cl.request("GET", f"/v1/jobs/{jid}")
                polls += 1
                st = ((job or {}).get("result") or {}).get("status")
                if s2 != 200 or st not in ("running", "queued", "pending", "cancelling"):
                    job_statuses[st or f"http_{s2}"] = job_statuses.get(st or f"http_{s2}", 0) + 1
                    if st != "succeeded":
                        failed += 1
                    break
                time.sleep(0.001)
        elif s == 429:
            refused += 1
            time.sleep(0.005)
        else:
            failed += 1
            if failed > 100:
                log(f"jobs: more than 100 failures (last status {s}: {body}); stopping")
                break
    cl.close()
    elapsed = time.monotonic() - started
    return {
        "requested": count,
        "jobs": accepted,
        "completed_all": accepted >= count,
        "refused_429": refused,
        "failed": failed,
        "polls": polls,
        "seconds": round(elapsed, 2),
        "jobs_per_second": round(accepted / elapsed, 1) if elapsed > 0 else None,
        "submit_statuses": dict(sorted(statuses.items())),
        "job_outcomes": job_statuses,
    }


def proc_status(pid):
    """VmRSS and VmHWM of a process, in kB (None where unreadable)."""
    out = {"VmRSS": None, "VmHWM": None}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in out:
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def cpu_seconds(pid):
    """User + system CPU seconds a process has used (None where unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def rss_mb(pid):
    s = proc_status(pid)
    return {
        "rss_mb": round(s["VmRSS"] / 1024, 1) if s["VmRSS"] is not None else None,
        "peak_rss_mb": round(s["VmHWM"] / 1024, 1) if s["VmHWM"] is not None else None,
    }


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


class Server:
    """`BIN serve` over a temporary data directory, on a free loopback port."""

    def __init__(self, binary, embedder, extra, keep):
        self.binary = os.path.abspath(binary)
        self.dir = tempfile.mkdtemp(prefix="gitloom-load-")
        self.data = os.path.join(self.dir, "data")
        self.keep = keep
        self.proc = None
        self.env = dict(os.environ)
        if embedder:
            self.env["GITLOOM_EMBEDDER"] = embedder
        self.extra = extra
        self.errlog = None

    def account(self, name):
        out = subprocess.run(
            [self.binary, "--json", "admin", "--data", self.data, "create-account", name],
            env=self.env, capture_output=True, text=True, timeout=60, check=True).stdout
        return json.loads(out)["api_key"]

    def start(self, timeout=60):
        self.errlog = open(os.path.join(self.dir, "serve.err"), "w+")
        cmd = [self.binary, "serve", "--addr", "127.0.0.1:0", "--data", self.data] + self.extra
        log("starting: " + " ".join(cmd))
        self.proc = subprocess.Popen(cmd, env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=self.errlog, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gitloom serve exited ({self.proc.returncode}): {self.log_tail()}")
            self.errlog.flush()
            with open(self.errlog.name) as f:
                for line in f:
                    if "listening on http://" in line:
                        hostport = line.split("listening on http://", 1)[1].split()[0].rstrip("/")
                        host, _, port = hostport.rpartition(":")
                        return host, int(port)
            time.sleep(0.05)
        raise RuntimeError(f"gitloom serve printed no address within {timeout}s: {self.log_tail()}")

    def log_tail(self, n=20):
        try:
            with open(self.errlog.name) as f:
                return "".join(f.readlines()[-n:])
        except (OSError, AttributeError):
            return ""

    def failures(self):
        return [l.rstrip() for l in self.log_tail(100000).splitlines()
                if "panicked" in l or "ERROR" in l][:10]

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.errlog is not None:
            self.errlog.close()
        if self.keep:
            log(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--gitloom", metavar="BIN", help="start `BIN serve` over a temporary data dir")
    ap.add_argument("--url", help="an already running server (loopback only)")
    ap.add_argument("--key", help="its API key (with --url)")
    ap.add_argument("--pid", type=int, help="its process id, to read its memory (with --url)")
    ap.add_argument("--namespace", default="load", help="namespace to load (default: load)")
    ap.add_argument("--seconds", type=float, default=30, help="length of the mixed phase (default 30)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    ap.add_argument("--seed", type=int, default=300, help="seed memories written first (default 300)")
    ap.add_argument("--seed-seconds", type=float, default=60, help="time budget of the seeding (default 60)")
    ap.add_argument("--jobs", type=int, metavar="N", help="jobs mode: N `log` jobs from one key")
    ap.add_argument("--jobs-seconds", type=float, default=600, help="time budget of the jobs (default 600)")
    ap.add_argument("--timeout", type=float, default=30, help="per-request timeout, s (default 30)")
    ap.add_argument("--embedder", help="GITLOOM_EMBEDDER for the server it starts (none, default, …)")
    ap.add_argument("--rate", default="100000", help="serve --rate (default 100000)")
    ap.add_argument("--burst", default="100000", help="serve --burst (default 100000)")
    ap.add_argument("--serve-arg", action="append", default=[], help="extra `serve` argument (repeatable)")
    ap.add_argument("--keep-data", action="store_true", help="keep the temporary data dir")
    a = ap.parse_args()

    if bool(a.gitloom) == bool(a.url):
        ap.error("give either --gitloom BIN or --url URL (with --key)")
    if a.url and not a.key:
        ap.error("--url needs --key")

    budget = a.seed_seconds + 180 + (a.jobs_seconds if a.jobs else a.seconds + 2 * a.timeout)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_alarm)
    signal.alarm(int(budget))

    server = None
    report = {"mode": "jobs" if a.jobs else "mixed", "namespace": a.namespace,
              "loadavg_start": loadavg()}
    try:
        if a.gitloom:
            server = Server(a.gitloom, a.embedder, ["--rate", a.rate, "--burst", a.burst] + a.serve_arg,
                            a.keep_data)
            key = server.account("load")
            host, port = server.start()
            pid = server.proc.pid
            report["server"] = {"binary": server.binary, "pid": pid,
                                "embedder": server.env.get("GITLOOM_EMBEDDER", "default"),
                                "args": server.extra}
        else:
            u = urllib.parse.urlsplit(a.url)
            if u.scheme != "http" or u.hostname not in LOOPBACK:
                ap.error(f"{a.url!r} is not a loopback http:// address; this tool only loads one's own machine")
            host, port, key, pid = u.hostname, u.port or 80, a.key, a.pid
        if host not in LOOPBACK:
            raise RuntimeError(f"server address {host} is not loopback")
        report["url"] = f"http://{host}:{port}"
        ns = a.namespace
        admin = Client(host, port, key, a.timeout)
        s, body = admin.request("GET", "/healthz")
        report["build"] = (body or {}).get("build")
        if server is not None:
            s, body = admin.request("POST", "/v1/namespaces", {"name": ns})
            if s != 201:
                raise RuntimeError(f"creating namespace {ns}: {s} {body}")
        if a.seed > 0:
            log(f"seeding {a.seed} memories ({a.clients} writers, at most {a.seed_seconds:g}s)")
            report["seed"] = seed(host, port, key, ns, a.seed, a.clients, a.seed_seconds, a.timeout)
            log(f"seeded: {report['seed']}")
        n_seeded = max(1, report.get("seed", {}).get("written", 0))
        queries = [seed_memory(i)[1] for i in range(n_seeded)]
        random.Random(7).shuffle(queries)
        queries = queries[:200]
        # Open the namespace's reader engines (and the embedding model) before measuring.
        for q in queries[:4]:
            admin.request("GET", f"/v1/namespaces/{ns}/retrieve?q={urllib.parse.quote(q)}")
        time.sleep(1)
        if pid:
            report["idle"] = rss_mb(pid)
        if a.jobs:
            log(f"jobs: {a.jobs} log jobs (at most {a.jobs_seconds:g}s); idle {report.get('idle')}")
            report["jobs"] = jobs(host, port, key, ns, a.jobs, a.jobs_seconds, a.timeout)
            time.sleep(1)
            if pid:
                after = rss_mb(pid)
                report["after_jobs"] = after
                if report["idle"]["rss_mb"] is not None and after["rss_mb"] is not None:
                    report["rss_above_idle_mb"] = round(after["rss_mb"] - report["idle"]["rss_mb"], 1)
        else:
            log(f"mixed: {a.clients} clients for {a.seconds:g}s")
            cpu0 = cpu_seconds(pid) if pid else None
            report["mixed"] = mixed(host, port, key, ns, a.clients, a.seconds, queries, a.timeout)
            if pid:
                cpu1 = cpu_seconds(pid)
                if cpu0 is not None and cpu1 is not None:
                    report["mixed"]["server_cpu_seconds"] = round(cpu1 - cpu0, 2)
                report["after_mixed"] = rss_mb(pid)
        admin.close()
        report["loadavg_end"] = loadavg()
    except Timeout as e:
        report["aborted"] = str(e)
        log(f"aborted: {e}")
    finally:
        signal.alarm(0)
        if server is not None:
            report["server_log_failures"] = server.failures()
            server.stop()
    print(json.dumps(report, indent=2))
    return 1 if "aborted" in report else 0


if __name__ == "__main__":
    sys.exit(main())
