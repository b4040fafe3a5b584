#!/usr/bin/python3
"""Load on `attnlab serve` over loopback: latency and throughput of /api/attend and /api/translate.

Starts `attnlab serve --port 0` from the source tree, then for each endpoint sends --requests requests
(default 256) from --clients threads (default 8), each on a new connection, and checks every answer:
status 200 and the same JSON as `attnlab attend/translate --format json` prints for the sentence. It
stops by itself. Prints, per endpoint, p50 and p95 latency (one request, client side, from connecting
to the last byte), requests per second (answers / wall time of the whole burst) and the server's CPU
time per request (its user + system time over the burst, from /proc, divided by the answers): on a
machine that other work shares, latency and throughput depend on what share of the cores the server
gets, and CPU time per request much less; 2 cores / CPU per request is what the server could answer per
second with both cores to itself and every core busy.

  /usr/bin/python3 bench/serve_load.py [--attnlab build/attnlab] [--requests 256] [--clients 8]

The attend model is lm-english, the translate model the default (translate-wide); the sentence has 12
words. Exit 1 when any answer is wrong.
"""
import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTENCE = "The animal did not cross the street because it was too tired."


def percentile(values, p):
    """The p-th percentile, nearest rank (the smallest value with at least p % of values at or below it)."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(k)]


def cpu_seconds(pid):
    """User + system CPU time of process pid so far (Linux /proc), or None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attnlab", default=os.path.join(ROOT, "build", "attnlab"))
    ap.add_argument("--requests", type=int, default=256)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--max-requests", type=int, default=8, help="the server's --max-requests")
    ap.add_argument("--workers", type=int, default=0, help="the server's --workers (0: its default)")
    a = ap.parse_args()
    binary = os.path.abspath(a.attnlab)
    cases = [("attend", {"sentence": SENTENCE, "model": "lm-english"}, ["attend", SENTENCE, "--model", "data/models/lm-english"]),
             ("translate", {"sentence": SENTENCE}, ["translate", SENTENCE])]
    extra = ["--workers", str(a.workers)] if a.workers else []
    server = subprocess.Popen([binary, "serve", "--port", "0", "--max-requests", str(a.max_requests), *extra], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    if "http://" not in line:
        sys.exit(f"attnlab serve did not start: {line!r}")
    port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    wrong = 0
    try:
        print(f"attnlab serve on 127.0.0.1:{port}, {a.clients} clients, {a.requests} requests per endpoint, "
              f"sentence of {len(SENTENCE.split())} words: \"{SENTENCE}\"")
        for api, params, command in cases:
            want = json.loads(subprocess.run([binary, *command, "--format", "json"], cwd=ROOT, capture_output=True, text=True,
                                             check=True).stdout)
            path = f"/api/{api}?" + urllib.parse.urlencode(params)
            latencies, statuses = [], {}
            lock = threading.Lock()
            left = [a.requests]

            def client():
                nonlocal wrong
                while True:
                    with lock:
                        if left[0] == 0:
                            return
                        left[0] -= 1
                    t0 = time.perf_counter()
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    c.request("GET", path)
                    r = c.getresponse()
                    body = r.read()
                    c.close()
                    dt = time.perf_counter() - t0
                    ok = r.status == 200 and json.loads(body) == want
                    with lock:
                        latencies.append(dt)
                        statuses[r.status] = statuses.get(r.status, 0) + 1
                        if not ok:
                            wrong += 1

            cpu0 = cpu_seconds(server.pid)
            start = time.perf_counter()
            threads = [threading.Thread(target=client) for _ in range(a.clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - start
            cpu1 = cpu_seconds(server.pid)
            cpu = f", server CPU {1000 * (cpu1 - cpu0) / len(latencies):.0f} ms/request" if cpu0 is not None and cpu1 is not None else ""
            print(f"{api:9s} ({params.get('model', 'default model')}): {len(latencies)} requests in {wall:.1f} s: "
                  f"p50 {1000 * percentile(latencies, 50):.0f} ms, p95 {1000 * percentile(latencies, 95):.0f} ms, "
                  f"mean {1000 * statistics.mean(latencies):.0f} ms, {len(latencies) / wall:.1f} requests/s{cpu}; statuses {statuses}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    if wrong:
        print(f"{wrong} wrong answers")
        return 1
    print("every answer equal to the command's JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main())
