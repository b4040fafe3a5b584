#!/usr/bin/python3
"""`attnlab serve` over HTTP, from outside: Python's http.client against the real server.

1. /api/models lists the shipped models (the folders of data/models holding model.ckpt, listed here
   independently) with their task, and the commands' default model.
2. /api/attend and /api/translate (GET and POST) answer with the JSON that `attnlab attend/translate
   --format json` prints for the same sentence and model (equal after parsing); each attention row of
   the answers sums to 1, and a language model's weights above the diagonal are 0. With vectors=1
   (`--vectors`) the sets carry each head's q and k, and softmax over each row of q·k/√d_k, computed
   here in Python, reproduces every weight of the answer (the neuron view's check).
3. Every bad request gets 400 and a JSON error naming the field: sentence missing, empty, blank, over
   10 kB (in a URL and in a JSON body), invalid UTF-8, too many tokens for the model; model unknown,
   path-like, or of the wrong kind; an unknown parameter; a body that is not JSON; vectors not 0 or 1,
   or without attention=1 on /api/translate.
4. Load: 512 requests from 8 threads, attend and translate mixed, on a server computing two at once
   (--workers 2), every answer compared with the command's JSON. With --max-requests 1, requests sent
   at once get 503 (busy) or the right answer.
5. A second server on the port in use exits 2 with one line naming --port; SIGTERM stops the server
   with exit 0 within seconds, and the port can be bound again.

Usage: serve_http.py ATTNLAB
"""
import http.client
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "attnlab")
FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print(f"FAIL: {what}", flush=True)


def cli_json(*args):
    r = subprocess.run([BINARY, *args, "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    if r.returncode != 0:
        sys.exit(f"FAIL: attnlab {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def start(*extra):
    """Starts `attnlab serve --port 0 EXTRA` in the source tree; returns (process, port)."""
    p = subprocess.Popen([BINARY, "serve", "--port", "0", *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()  # "attnlab: serving the attention explorer at http://127.0.0.1:PORT/ ..."
    if "http://" not in line:
        p.kill()
        sys.exit(f"FAIL: attnlab serve did not start: {line!r} {p.stderr.read()!r}")
    port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    return p, port


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def get(port, path, **params):
    q = urllib.parse.urlencode(params)
    return request(port, "GET", path + ("?" + q if q else ""))


def post(port, path, obj):
    return request(port, "POST", path, json.dumps(obj), {"Content-Type": "application/json"})


def rows_sum_to_one(doc, what):
    for s in doc.get("attention", []):
        for per_layer in s["weights"]:
            for mat in per_layer:
                for i, row in enumerate(mat):
                    check(abs(sum(row) - 1) < 1e-4, f"{what}: {s['name']} row {i} sums to {sum(row)}, not 1")
                    if s["kind"] == "causal":
                        check(all(w == 0 for w in row[i + 1:]), f"{what}: {s['name']} row {i} has weight after the diagonal")


def softmax_of_vectors(doc, what):
    """Each set's weights from its own q and k: softmax over row i of q_i·k_j/√d_k (a causal set's keys
    after i masked), computed here, equal to the answer's weights (which have 6 decimals). Returns the
    number of weights checked."""
    checked = 0
    for s in doc["attention"]:
        v = s.get("vectors")
        check(v is not None, f"{what}: {s['name']} has no vectors")
        if v is None:
            continue
        dk = v["d_k"]
        worst = 0.0
        for L in range(len(s["layers"])):
            for H in range(len(s["heads"])):
                q, k = v["q"][L][H], v["k"][L][H]
                check(len(q) == len(s["rows"]) and len(k) == len(s["columns"]) and all(len(x) == dk for x in q + k),
                      f"{what}: {s['name']} layer {L} head {H}: vectors of the wrong shape")
                for i in range(len(s["rows"])):
                    scores = [(-math.inf if s["kind"] == "causal" and j > i else
                               math.fsum(a * b for a, b in zip(q[i], k[j])) / math.sqrt(dk)) for j in range(len(s["columns"]))]
                    top = max(scores)
                    e = [math.exp(x - top) for x in scores]
                    z = math.fsum(e)
                    for j, w in enumerate(s["weights"][L][H][i]):
                        worst = max(worst, abs(e[j] / z - w))
                        checked += 1
        check(worst <= 2e-6, f"{what}: {s['name']}: softmax(q·k/√d_k) differs from the weights by {worst}")
    return checked


def main():
    if not os.path.exists(os.path.join(ROOT, "data/models/translate-wide/model.ckpt")):
        print("SKIP: data/models/translate-wide is not here")
        return 77
    # Two lanes (--workers 2) even on a one-core machine: the load below runs two forward passes at once,
    # each on its own copy of the models, and every answer must still be the command's.
    server, port = start("--workers", "2")
    try:
        # 1. the models
        status, body = get(port, "/api/models")
        check(status == 200, f"/api/models: status {status}")
        listing = json.loads(body)
        shipped = sorted(d for d in os.listdir(os.path.join(ROOT, "data/models"))
                         if os.path.exists(os.path.join(ROOT, "data/models", d, "model.ckpt")))
        check([m["name"] for m in listing["models"]] == shipped, f"/api/models: {[m['name'] for m in listing['models']]} != {shipped}")
        for m in listing["models"]:
            task = "language model" if m["name"].startswith("lm-") else "translation"
            check(m["task"] == task, f"/api/models: {m['name']} task {m['task']}")
            check(bool(m["description"]) and "/" not in m["name"], f"/api/models: {m}")
        check(listing["defaults"] == {"attend": "translate-wide", "translate": "translate-wide"}, f"defaults {listing['defaults']}")

        # 2. the same JSON as the commands
        sentences = ["The boy trains the puppy.", "The animal did not cross the street because it was too tired.",
                     "She reads a book", "The teacher sees the girl near the bank of the river."]
        expected = {}
        for s in sentences:
            expected[("attend", "lm-english", s)] = cli_json("attend", s, "--model", "data/models/lm-english")
            expected[("translate", None, s)] = cli_json("translate", s)
        expected[("attend", None, sentences[0])] = cli_json("attend", sentences[0])
        expected[("translate", "translate-small", sentences[1], "1")] = cli_json(
            "translate", sentences[1], "--model", "data/models/translate-small", "--show-attention")
        for key, want in expected.items():
            api, model, s = key[0], key[1], key[2]
            params = {"sentence": s}
            if model:
                params["model"] = model
            if len(key) > 3:
                params["attention"] = key[3]
            for how, (status, body) in (("GET", get(port, "/api/" + api, **params)), ("POST", post(port, "/api/" + api, params))):
                check(status == 200, f"{how} /api/{api} {params}: status {status} {body[:200]!r}")
                if status == 200:
                    got = json.loads(body)
                    check(got == want, f"{how} /api/{api} {params}: not the JSON of the command")
                    rows_sum_to_one(got, f"/api/{api} {params}")
        check(expected[("attend", "lm-english", sentences[0])]["model"]["name"] == "lm-english", "model.name")

        # 2b. the neuron view's vectors: the command's JSON, and every weight from its q and k
        checked = 0
        for api, params, args in (
                ("attend", {"sentence": sentences[1], "model": "lm-english", "vectors": "1"},
                 ["attend", sentences[1], "--model", "data/models/lm-english", "--vectors"]),
                ("attend", {"sentence": sentences[0], "vectors": "1"}, ["attend", sentences[0], "--vectors"]),
                ("translate", {"sentence": sentences[0], "attention": "1", "vectors": "1"},
                 ["translate", sentences[0], "--show-attention", "--vectors"])):
            want = cli_json(*args)
            status, body = get(port, "/api/" + api, **params)
            check(status == 200, f"/api/{api} {params}: status {status} {body[:200]!r}")
            if status == 200:
                got = json.loads(body)
                check(got == want, f"/api/{api} {params}: not the JSON of attnlab {' '.join(args)}")
                checked += softmax_of_vectors(got, f"/api/{api} {params}")
        check(all("vectors" not in s for s in expected[("translate", "translate-small", sentences[1], "1")]["attention"]),
              "vectors in a set without vectors=1")
        print(f"vectors: {checked} weights reproduced from q and k", flush=True)

        # 3. bad requests
        def refused(status_body, field, pattern, what):
            status, body = status_body
            try:
                j = json.loads(body)
            except ValueError:
                j = {}
            check(status == 400, f"{what}: status {status}, expected 400 ({body[:200]!r})")
            check(j.get("field") == field and j.get("error", "").startswith(field + ":") and pattern in j.get("error", ""),
                  f"{what}: error {j!r} does not name {field} with {pattern!r}")

        refused(get(port, "/api/attend"), "sentence", "missing", "no sentence")
        refused(get(port, "/api/attend", sentence=""), "sentence", "empty", "empty sentence")
        refused(get(port, "/api/translate", sentence="  \t "), "sentence", "empty", "blank sentence")
        refused(request(port, "GET", "/api/attend?sentence=" + "a+" * 5121), "sentence", "10240", "10 kB sentence in a URL")
        refused(post(port, "/api/attend", {"sentence": "a " * 5121}), "sentence", "more than the limit of 10240", "10 kB sentence in a body")
        refused(request(port, "GET", "/api/attend?sentence=caf%C3%A9%FF"), "sentence", "UTF-8", "invalid UTF-8")
        refused(request(port, "GET", "/api/attend?sentence=%C0%AF"), "sentence", "UTF-8", "overlong UTF-8")
        refused(get(port, "/api/translate", sentence="the " * 100), "sentence", "more than the limit of 80", "too long for the model")
        refused(get(port, "/api/attend", sentence="Hi.", model="nope"), "model", "not a model of this server", "unknown model")
        refused(get(port, "/api/attend", sentence="Hi.", model="../../data/models/lm-english"), "model", "not a model", "path as model")
        refused(get(port, "/api/attend", sentence="Hi.", model="/etc/passwd"), "model", "not a model", "absolute path as model")
        refused(get(port, "/api/translate", sentence="Hi.", model="lm-english"), "model", "language model", "translate with an LM")
        refused(get(port, "/api/attend", sentence="Hi.", file="/etc/passwd"), "file", "not a parameter", "unknown parameter")
        refused(get(port, "/api/translate", sentence="Hi.", attention="2"), "attention", "0 or 1", "attention=2")
        refused(get(port, "/api/attend", sentence="Hi.", vectors="yes"), "vectors", "0 or 1", "vectors=yes")
        refused(get(port, "/api/translate", sentence="Hi.", vectors="1"), "vectors", "attention=1", "vectors without attention")
        refused(request(port, "POST", "/api/attend", "sentence=Hi", {"Content-Type": "application/json"}), "body", "not JSON", "bad body")
        refused(post(port, "/api/attend", {"sentence": 3}), "sentence", "string", "a number as sentence")
        status, body = get(port, "/no/such/page")
        check(status == 404 and "error" in json.loads(body), f"404: {status} {body[:100]!r}")
        status, body = get(port, "/")
        check(status == 200 and b'"live":true' in body and b"attnlab-data" in body, f"the page: {status}")

        # 4. load: 8 threads x 64 requests, every answer checked
        jobs = [k for k in expected if len(k) == 3 and k[1] in ("lm-english", None)]
        answers = []
        lock = threading.Lock()

        def client(t):
            for k in range(64):
                key = jobs[(t + k) % len(jobs)]
                params = {"sentence": key[2]}
                if key[1]:
                    params["model"] = key[1]
                status, body = get(port, "/api/" + key[0], **params)
                ok = status == 200 and json.loads(body) == expected[key]
                with lock:
                    answers.append((ok, status, key))

        t0 = time.time()
        threads = [threading.Thread(target=client, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        bad = [a for a in answers if not a[0]]
        check(len(answers) == 512 and not bad, f"load: {len(answers)} answers, {len(bad)} wrong: {bad[:3]}")
        print(f"load: {len(answers)} requests from 8 threads in {time.time() - t0:.1f} s, {len(bad)} wrong", flush=True)

        # 5. the port in use
        r = subprocess.run([BINARY, "serve", "--port", str(port)], capture_output=True, text=True, cwd=ROOT, timeout=60)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("attnlab: error: --port:") and "in use" in lines[0],
              f"port in use: exit {r.returncode}, stderr {r.stderr!r}")
    finally:
        stop_started = time.time()
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            code = "killed after 20 s"
    took = time.time() - stop_started
    check(code == 0, f"SIGTERM: exit {code}, expected 0")
    check(took < 5, f"SIGTERM: took {took:.1f} s")
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError as e:
        check(False, f"the port {port} is not free after the server stopped: {e}")
    finally:
        s.close()

    # 4b. bounded: one request at a time, the rest 503 (busy) or answered right
    server, port = start("--max-requests", "1")
    try:
        key = ("translate", None, sentences[1])
        seen = {}
        for _ in range(5):
            barrier = threading.Barrier(8)
            results = []

            def burst():
                barrier.wait()
                status, body = get(port, "/api/translate", sentence=key[2])
                results.append((status, body))

            threads = [threading.Thread(target=burst) for _ in range(8)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            for status, body in results:
                seen[status] = seen.get(status, 0) + 1
                if status == 200:
                    check(json.loads(body) == expected[key], "busy server: a wrong answer")
                elif status == 503:
                    check("busy" in json.loads(body).get("error", ""), f"503 without 'busy': {body!r}")
                else:
                    check(False, f"busy server: status {status}")
            if seen.get(503) and seen.get(200):
                break
        check(seen.get(503, 0) > 0 and seen.get(200, 0) > 0, f"--max-requests 1: statuses {seen}, expected some 200 and some 503")
        print(f"--max-requests 1: statuses {seen}", flush=True)
    finally:
        server.send_signal(signal.SIGINT)
        code = server.wait(timeout=20)
    check(code == 0, f"SIGINT: exit {code}, expected 0")

    # A host other than 127.0.0.1: a warning that anyone who reaches it can use it.
    server, port = start("--host", "0.0.0.0")
    server.send_signal(signal.SIGTERM)
    code = server.wait(timeout=20)
    err = server.stderr.read()
    check(code == 0 and "warning: --host 0.0.0.0: anyone who can reach" in err, f"--host 0.0.0.0: exit {code}, stderr {err!r}")

    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("serve_http: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
