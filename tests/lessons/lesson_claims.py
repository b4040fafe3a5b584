#!/usr/bin/python3
"""The lessons' claims about the model they run on, checked against the model itself.

Every lesson (and the tour) runs with --format json on every model it can use: the shipped translation
models, the language models (the causal-mask lesson), and seeded random weights. What the lessons say is
then checked by computations that share no code with them:

- the model's own forward pass is recomputed here in numpy (float64) straight from the checkpoint file
  (docs/checkpoint.md: the header, the float32 or bf16 tensors), so a probability the lesson prints is compared
  with the model's probability for that token, under the same teacher forcing;
- a matrix titled LayerNorm…(…) must have rows of mean 0 and variance 1 once the checkpoint's own γ and β
  are taken off again, and a matrix said to be normalised must be so;
- counts and widths the text states (layers, d_ff, d_model, heads, the norm arrangement) must equal the
  checkpoint's config, and no lesson may leave a {{fact}} unfilled or state a count in words;
- a head the text names as the extreme one by some measure must be that head, recomputed from the
  weights the lesson printed;
- lesson 7's worked example must be the course notes' own matrices and give X · W_V per head.

Exit status 0 when every claim holds; otherwise each failure is printed with the lesson, the model and
the claim, and the status is 1.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import checkpoint  # noqa: E402  (tests/support/checkpoint.py: the format read by hand)

FAILURES = []


def fail(where, msg):
    FAILURES.append(f"{where}: {msg}")


# ---- the checkpoint and the model, independently of attnlab's code -----------------------------

class Checkpoint:
    def __init__(self, path):
        try:
            _, self.header, _, params = checkpoint.read(path, check_hash_below=0)
        except ValueError as e:
            raise SystemExit(f"{path}: {e}")
        self.cfg = self.header["config"]
        self.vocab = self.header["vocab"]
        self.p = {name: a.astype(np.float64) for name, a in params.items()}
        self.eps = float(self.cfg.get("ln_eps", 1e-5))
        self.pre = self.cfg.get("norm", "post") == "pre"


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def pe_table(T, C):
    pe = np.zeros((T, C))
    for pos in range(T):
        for i in range(0, C, 2):
            angle = pos / (10000 ** (i / C))
            pe[pos, i] = math.sin(angle)
            if i + 1 < C:
                pe[pos, i + 1] = math.cos(angle)
    return pe


def softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def mha(ck, prefix, xq, xkv, causal=False):
    """Returns the output and the per-head weights (H × n × m); heads own contiguous columns."""
    P, H = ck.p, ck.cfg["heads"]
    q = xq @ P[prefix + ".wq"] + P[prefix + ".bq"]
    k = xkv @ P[prefix + ".wk"] + P[prefix + ".bk"]
    v = xkv @ P[prefix + ".wv"] + P[prefix + ".bv"]
    C = q.shape[1]
    dk = C // H
    outs, weights = [], []
    for h in range(H):
        s = q[:, h * dk:(h + 1) * dk] @ k[:, h * dk:(h + 1) * dk].T / math.sqrt(dk)
        if causal:
            s = s + np.triu(np.full(s.shape, -np.inf), 1)
        w = softmax(s)
        weights.append(w)
        outs.append(w @ v[:, h * dk:(h + 1) * dk])
    return np.concatenate(outs, 1) @ P[prefix + ".wo"] + P[prefix + ".bo"], np.array(weights)


def ffn(ck, prefix, x):
    P = ck.p
    return np.maximum(0, x @ P[prefix + ".w1"] + P[prefix + ".b1"]) @ P[prefix + ".w2"] + P[prefix + ".b2"]


def ln(ck, name, x):
    return layer_norm(x, ck.p[name + ".g"], ck.p[name + ".b"], ck.eps)


def embed(ck, table, ids):
    C = ck.cfg["d_model"]
    return ck.p[table][ids] * math.sqrt(C) + pe_table(len(ids), C)


def encode(ck, src):
    """The encoder's output and every layer's attention weights."""
    tied = ck.cfg.get("tie_embeddings", True)
    x = embed(ck, "tok_emb" if tied else "src_emb", src)
    att = []
    for l in range(ck.cfg["encoder_layers"]):
        pfx = f"enc.{l}"
        if ck.pre:
            a, w = mha(ck, pfx + ".attn", ln(ck, pfx + ".ln1", x), ln(ck, pfx + ".ln1", x))
            h = x + a
            x = h + ffn(ck, pfx + ".ffn", ln(ck, pfx + ".ln2", h))
        else:
            a, w = mha(ck, pfx + ".attn", x, x)
            h = ln(ck, pfx + ".ln1", x + a)
            x = ln(ck, pfx + ".ln2", h + ffn(ck, pfx + ".ffn", h))
        att.append(w)
    return ln(ck, "enc.ln_f", x), att


def next_token_probs(ck, src, tgt_in):
    """P(next token) at every decoder position (teacher forced), rows = positions."""
    tied = ck.cfg.get("tie_embeddings", True)
    mem, _ = encode(ck, src)
    y = embed(ck, "tok_emb" if tied else "tgt_emb", tgt_in)
    for l in range(ck.cfg["decoder_layers"]):
        pfx = f"dec.{l}"
        if ck.pre:
            a, _ = mha(ck, pfx + ".self", ln(ck, pfx + ".ln1", y), ln(ck, pfx + ".ln1", y), causal=True)
            h = y + a
            c, _ = mha(ck, pfx + ".cross", ln(ck, pfx + ".ln2", h), mem)
            h2 = h + c
            y = h2 + ffn(ck, pfx + ".ffn", ln(ck, pfx + ".ln3", h2))
        else:
            a, _ = mha(ck, pfx + ".self", y, y, causal=True)
            h = ln(ck, pfx + ".ln1", y + a)
            c, _ = mha(ck, pfx + ".cross", h, mem)
            h2 = ln(ck, pfx + ".ln2", h + c)
            y = ln(ck, pfx + ".ln3", h2 + ffn(ck, pfx + ".ffn", h2))
    out = ln(ck, "dec.ln_f", y)
    logits = out @ ck.p["tok_emb"].T if tied else out @ ck.p["out_proj"]
    return softmax(logits)


# ---- running the lessons ----------------------------------------------------------------------

def run_lesson(binary, number, args, env):
    cmd = [binary, "lesson", str(number), "--no-pause", "--format", "json"] + args
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:
        return None, f"`{' '.join(cmd)}` exited {r.returncode}: {r.stderr.strip()[:400]}"
    return json.loads(r.stdout)["lessons"][0], None


def shows(lesson):
    for st in lesson["steps"]:
        for b in st["blocks"]:
            if b["type"] == "show":
                yield st["title"], b


def prose(lesson):
    for st in lesson["steps"]:
        for b in st["blocks"]:
            if b["type"] == "text":
                yield b["text"]


def matrix(m):
    return np.array([[float(v) for v in row] for row in m["data"]], dtype=np.float64) if m["data"] and isinstance(
        m["data"][0], list) else np.array([float(v) for v in m["data"]], dtype=np.float64).reshape(m["rows"], m["cols"])


WORD_COUNTS = r"\b(two|three|four|five|six|seven|eight|both)\s+(encoder|decoder)\s+layers\b|\b(two|three|four|five|six|seven|eight) (encoder|decoder) and (two|three|four|five|six|seven|eight) (encoder|decoder)"


def check_text(where, lesson, ck, lm):
    texts = list(prose(lesson))
    lines = [ln_ for _, b in shows(lesson) for ln_ in b.get("lines", [])]
    for t in texts + lines:
        flat = " ".join(t.split())
        if "{{" in flat or "}}" in flat:
            fail(where, f"an unfilled fact in: {flat[:120]}")
        if ck is None:
            continue
        for m in re.finditer(r"(\d+) encoder and (\d+) decoder layers", flat):
            if (int(m.group(1)), int(m.group(2))) != (ck.cfg["encoder_layers"], ck.cfg["decoder_layers"]):
                fail(where, f"says '{m.group(0)}' but the model has {ck.cfg['encoder_layers']} and {ck.cfg['decoder_layers']}")
        for m in re.finditer(r"d_ff = (\d+)(?!\s*·)", flat):
            if int(m.group(1)) != ck.cfg["d_ff"]:
                fail(where, f"says '{m.group(0)}' but the model's d_ff is {ck.cfg['d_ff']}")
        for m in re.finditer(r"d_model = (\d+)", flat):
            if int(m.group(1)) != ck.cfg["d_model"]:
                fail(where, f"says '{m.group(0)}' but the model's d_model is {ck.cfg['d_model']}")
        for m in re.finditer(r"d_ff = 4 · d_model too", flat):
            if ck.cfg["d_ff"] != 4 * ck.cfg["d_model"]:
                fail(where, f"says '{m.group(0)}' but d_ff / d_model = {ck.cfg['d_ff'] / ck.cfg['d_model']}")
        for m in re.finditer(WORD_COUNTS, flat, re.I):
            fail(where, f"states a layer count in words ('{m.group(0)}'): it must come from the model")
        for m in re.finditer(r"\b(?:This model|It)(?: \([^)]*\))? is (pre|post)-norm", flat):
            cfg = lm.cfg if (lm is not None and lesson["number"] == 6) else ck.cfg
            if cfg.get("norm", "post") != m.group(1):
                fail(where, f"says '{m.group(0)}' but the model is {cfg.get('norm', 'post')}-norm")
    facts = lesson["settings"].get("facts")
    if facts is None:
        fail(where, "the lesson's settings name no facts")
        return
    if lm is not None and lesson["number"] == 6 and ck is not None:
        for k, v in {"lm_decoder_layers": lm.cfg["decoder_layers"], "lm_norm": lm.cfg.get("norm", "post") + "-norm",
                     "lm_d_model": lm.cfg["d_model"], "lm_vocab_size": len(lm.vocab)}.items():
            if str(facts.get(k)) != str(v):
                fail(where, f"fact {k} is {facts.get(k)!r}, the language model's checkpoint says {v!r}")
    if ck is not None:
        want = {"encoder_layers": ck.cfg["encoder_layers"], "decoder_layers": ck.cfg["decoder_layers"],
                "heads": ck.cfg["heads"], "d_model": ck.cfg["d_model"], "d_ff": ck.cfg["d_ff"],
                "norm": ck.cfg.get("norm", "post") + "-norm", "vocab_size": len(ck.vocab)}
        for k, v in want.items():
            if str(facts.get(k)) != str(v):
                fail(where, f"fact {k} is {facts.get(k)!r}, the checkpoint says {v!r}")


def is_layer_norm_title(title):
    """The LayerNorm a matrix claims to be the output of: 1, 2 or '' (unnumbered), else None."""
    m = re.search(r"(?:^|= )LayerNorm ?([12]?)\(", title)
    if not m:
        return None
    if m.group(1):
        return m.group(1)
    m2 = re.search(r"LayerNorm ([12])'s", title)
    return m2.group(1) if m2 else ""


def check_normalised(where, name, M, tol_mean=2e-3, tol_var=3e-2):
    mu = M.mean(1)
    var = M.var(1)
    if np.max(np.abs(mu)) > tol_mean or np.max(np.abs(var - 1)) > tol_var:
        fail(where, f"{name}: rows should have mean 0 and variance 1, have means up to {np.max(np.abs(mu)):.3g} and "
                    f"variances {var.min():.3g} to {var.max():.3g}")


def check_matrices(where, lesson, ck):
    for title, b in shows(lesson):
        for m in b.get("matrices", []):
            M = matrix(m)
            t = m["title"]
            if "mean 0, variance 1" in t:
                check_normalised(where, f"'{t}'", M)
            k = is_layer_norm_title(t)
            if k is None or ck is None:
                continue
            if k == "":
                fail(where, f"'{t}' does not say which LayerNorm's γ and β it applied")
                continue
            g, bias = ck.p[f"enc.0.ln{k}.g"], ck.p[f"enc.0.ln{k}.b"]
            check_normalised(where, f"'{t}' with LayerNorm {k}'s γ and β taken off", (M - bias) / g)


# One position of lesson 9's next-token step: "after X  most likely Y (p); right one: Z (q)" (and the
# earlier form "…; the right word Z gets q"): the input, the top probability, the right token's.
RIGHT_LINE = r"after (.*?) +most likely:? .*?\(([0-9.]+)\); (?:right one: .*\(([0-9.]+)\)|the right .*? gets ([0-9.]+))"



def right_of(m):
    return float(m.group(3) or m.group(4))


def check_next_token(where, lesson, ck, default_sentence):
    for _, b in shows(lesson):
        if b["name"] != "next-token":
            continue
        v = b.get("values", {})
        # On the lesson's own sentence a trained model must give each right token most of the
        # probability (read from the printed lines, so this holds whatever the JSON carries).
        if default_sentence:
            for line in b["lines"]:
                m = re.search(RIGHT_LINE, line)
                if m and right_of(m) < 0.5:
                    fail(where, f"next-token: after {m.group(1)} the right token gets {right_of(m):.4f} on the lesson's own sentence (< 0.5)")
        src = lesson["settings"].get("ids")
        tgt = v.get("target_ids")
        if src is None or tgt is None:
            fail(where, "next-token: the lesson's JSON gives no source ids (settings.ids) or target_ids, so its "
                        "probabilities cannot be checked against the model")
            return
        tgt_in = [2] + tgt[:-1]  # <bos> is id 2 (docs/checkpoint.md: the four specials first)
        P = next_token_probs(ck, src, tgt_in)
        want = np.array([P[i, t] for i, t in enumerate(tgt)])
        got = np.array(v.get("right_token_probabilities", []), dtype=np.float64)
        if got.shape != want.shape or np.max(np.abs(got - want)) > 1e-4:
            fail(where, f"next-token: the right tokens' probabilities {np.round(got, 4).tolist()} differ from the model's "
                        f"{np.round(want, 4).tolist()}")
        # The printed lines: "after X   most likely Y (p); right one: Z (q)".
        printed = [(float(m.group(2)), right_of(m)) for m in (re.search(RIGHT_LINE, l) for l in b["lines"]) if m]
        if len(printed) != len(tgt):
            fail(where, f"next-token: {len(printed)} 'most likely' lines for {len(tgt)} positions")
        for i, (top_p, right_p) in enumerate(printed[:len(tgt)]):
            if abs(top_p - P[i].max()) > 6e-5 or abs(right_p - want[i]) > 6e-5:
                fail(where, f"next-token position {i}: prints {top_p:.4f} (top) and {right_p:.4f} (right), the model gives "
                            f"{P[i].max():.4f} and {want[i]:.4f}")
        top = int(sum(int(np.argmax(P[i]) == t) for i, t in enumerate(tgt)))
        if v.get("right_token_is_top") != top:
            fail(where, f"next-token: says the right token is top at {v.get('right_token_is_top')} positions, the model: {top}")
        for m in (re.search(r"most likely one at (\d+) of (\d+) positions", l) for l in b["lines"]):
            if m and (int(m.group(1)), int(m.group(2))) != (top, len(tgt)):
                fail(where, f"next-token: '{m.group(0)}', the model: {top} of {len(tgt)}")
        for w in v.get("word_probabilities", []):
            first, n = w["first"], len(w["pieces"])
            p = float(np.prod(want[first:first + n]))
            if abs(p - w["probability"]) > 1e-4:
                fail(where, f"next-token: \"{w['word']}\" gets {w['probability']:.4f}, the product of its pieces' is {p:.4f}")
            if default_sentence and p < 0.5:
                fail(where, f"next-token: the right word \"{w['word']}\" gets {p:.4f} on the lesson's own sentence (< 0.5)")


def check_coreference(where, lesson):
    for _, b in shows(lesson):
        if b["name"] != "coreference":
            continue
        mats = {m["key"]: m for m in b.get("matrices", [])}
        if "it_encoder_weights" not in mats:
            return  # random weights: no per-layer table
        m = mats["it_encoder_weights"]
        E = matrix(m).T  # (layer, head) × (s0 noun0, s0 noun1, s1 noun0, s1 noun1)
        heads = m["col_labels"]
        v = b["values"]
        right = [heads[r] for r in range(len(heads)) if E[r, 0] > E[r, 1] and E[r, 3] > E[r, 2]]
        if v.get("heads_right_in_both") != right:
            fail(where, f"coreference: heads right in both sentences {v.get('heads_right_in_both')}, the weights say {right}")
        shift = (E[:, 0] - E[:, 1]) - (E[:, 2] - E[:, 3])
        if v.get("most_shifting_head") != heads[int(np.argmax(shift))]:
            fail(where, f"coreference: names {v.get('most_shifting_head')} as moving most, the weights say {heads[int(np.argmax(shift))]}")
        heaviest = heads[int(np.argmax(E.max(1)))]
        if v.get("heaviest_head") != heaviest:
            fail(where, f"coreference: names {v.get('heaviest_head')} as the heaviest, the weights say {heaviest}")
        move = float(max(np.max(np.abs(E[:, 0] - E[:, 2])), np.max(np.abs(E[:, 1] - E[:, 3]))))
        if abs(v.get("largest_weight_change", -1) - move) > 1e-5:
            fail(where, f"coreference: largest change {v.get('largest_weight_change')}, the weights say {move}")
        for line in b["lines"]:
            if "best separates" in line:
                fail(where, f"coreference: '{line.strip()[:80]}' names a head by a measure it does not state")


def notes_matrices(path):
    """The two heads' W_Q, W_K, W_V and the assumed outputs, read from the course notes' text."""
    text = open(path, encoding="utf-8").read()
    mats = {}
    for m in re.finditer(r"(W[QKV][12]) = (\[\[.*?\]\])", text):
        mats[m.group(1)] = json.loads(m.group(2))
    assumed = [json.loads(m.group(2).replace("−", "-")) for m in re.finditer(r"head([12])_output = (\[[^\]]*\])", text)]
    return mats, assumed


def check_lesson7(where, lesson, source, shared):
    path = os.path.join(source, "data/examples/notes_x1234_two_heads.json")
    if not os.path.exists(path):
        fail(where, "data/examples/notes_x1234_two_heads.json (the course notes' own example) is missing")
        return
    ex = json.load(open(path))
    X = np.array(ex["x"], dtype=np.float64)
    if shared and os.path.exists(os.path.join(shared, "sources/multi-head-attention-notes.txt")):
        mats, assumed = notes_matrices(os.path.join(shared, "sources/multi-head-attention-notes.txt"))
        for h in (1, 2):
            for x, key in (("Q", "w_q"), ("K", "w_k"), ("V", "w_v")):
                if mats.get(f"W{x}{h}") != ex["heads"][h - 1][key]:
                    fail(where, f"data/examples/notes_x1234_two_heads.json: head {h}'s {key} is not the notes' W{x}{h}")
        if X.tolist() != [[1, 2, 3, 4]]:
            fail(where, "data/examples/notes_x1234_two_heads.json: X is not the notes' [1, 2, 3, 4]")
    else:
        assumed = None
    for _, b in shows(lesson):
        if b["name"] != "one-token-heads":
            continue
        v = b["values"]
        for h in range(2):
            vrow = (X @ np.array(ex["heads"][h]["w_v"], dtype=np.float64))[0]
            if abs(v[f"head_{h}_weight"] - 1.0) > 1e-6:
                fail(where, f"lesson 7: head {h}'s weight on its only token is {v[f'head_{h}_weight']}, not 1")
            if np.max(np.abs(np.array(v[f"head_{h}_output"]) - vrow)) > 1e-5:
                fail(where, f"lesson 7: head {h}'s output {v[f'head_{h}_output']} is not X · W_V = {vrow.tolist()}")
        if assumed is not None and v.get("notes_assumed_outputs") != assumed:
            fail(where, f"lesson 7: quotes the notes' assumed outputs as {v.get('notes_assumed_outputs')}, the notes say {assumed}")


def check_cited_sources(shared):
    """What the lessons say of the explainers they cite, checked against the explainers' text."""
    src = os.path.join(shared, "sources")
    if not os.path.isdir(src):
        return 0
    # Lesson 5: the blog post draws "I love you" as 20 % / 60 % / 20 %, "love" mostly on itself.
    blog = open(os.path.join(src, "self-attention-blog-post.txt"), encoding="utf-8").read()
    if not re.search(r"I love you.*?20% attention to .I.*?60% attention to .love.*?20% attention to .you", blog, re.S):
        fail("lesson 5's citation", "the blog post does not draw 'I love you' as 20 % / 60 % / 20 %")
    # Lesson 6: the slides' mask table hides every key of its first row, and their "Your journey
    # starts with one" weights have rows that do not sum to 1.
    slides = open(os.path.join(src, "self-attention-slides.txt"), encoding="utf-8").read()
    pre = slides[slides.find("Pre-Softmax Scores"):]
    first = next((l for l in pre.split("\n")[1:] if l.strip()), "")
    if not first.split() or any(v != "-inf" for v in first.split()):
        fail("lesson 6's citation", f"the slides' mask table does not hide every key of its first row: {first!r}")
    table = slides[slides.find("Your journey starts with one"):].split("\n")[1:6]
    sums = [sum(float(v) for v in row.split()[1:]) for row in table if row.strip()]
    if not sums or all(abs(x - 1) < 1e-6 for x in sums):
        fail("lesson 6's citation", f"every row of the slides' 'Your journey' weights sums to 1: {sums}")
    post = slides[slides.find("Post-Softmax Probabilities"):].split("\n")[1:8]
    rows = [[float(v) for v in r.split()] for r in post if r.strip() and re.fullmatch(r"[0-9.\s]+", r.strip())]
    if not any(abs(sum(r) - 1) > 1e-6 for r in rows):
        fail("lesson 6's citation", "every row of the slides' post-softmax table sums to 1")
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnlab", required=True)
    ap.add_argument("--source", required=True, help="the source tree (data/, lessons/)")
    ap.add_argument("--shared", default=None, help="the team's shared/ folder, for the sources lesson 7 cites")
    ap.add_argument("--lessons", default="1-10")
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.lessons.split("-"))
    env = dict(os.environ, NO_COLOR="1", COLUMNS="80", ATTNLAB_DATA_DIR=args.source)
    models = os.path.join(args.source, "data/models")
    translation = [m for m in ("translate-wide", "translate-small") if os.path.exists(os.path.join(models, m, "model.ckpt"))]
    if os.environ.get("CI") == "true" and len(translation) < 2:
        raise SystemExit("CI=true and the shipped translation models are missing: " + ", ".join(translation))
    lm = Checkpoint(os.path.join(models, "lm-english/model.ckpt")) if os.path.exists(
        os.path.join(models, "lm-english/model.ckpt")) else None
    runs = [(m, ["--model", os.path.join("data/models", m)]) for m in translation] + [("random", ["--random"])]
    checked = 0
    for name, margs in runs:
        ck = None if name == "random" else Checkpoint(os.path.join(models, name, "model.ckpt"))
        for n in range(lo, hi + 1):
            where = f"lesson {n} on {name}"
            lesson, err = run_lesson(args.attnlab, n, margs, env)
            if err:
                fail(where, err)
                continue
            checked += 1
            check_text(where, lesson, ck, lm)
            check_matrices(where, lesson, ck)
            if ck is not None and n == 9:
                check_next_token(where, lesson, ck, default_sentence=True)
            if n == 9:
                check_coreference(where, lesson)
            if n == 7:
                check_lesson7(where, lesson, args.source, args.shared)
    # The tour: every lesson on one sentence, with the default model.
    if translation and lo == 1 and hi == 10:
        ck = Checkpoint(os.path.join(models, translation[0], "model.ckpt"))
        r = subprocess.run([args.attnlab, "tour", "--format", "json"], capture_output=True, text=True, env=env, timeout=900)
        if r.returncode != 0:
            fail("tour", f"exited {r.returncode}: {r.stderr.strip()[:400]}")
        else:
            for lesson in json.loads(r.stdout)["lessons"]:
                where = f"tour, lesson {lesson['number']}"
                checked += 1
                check_text(where, lesson, ck, lm)
                check_matrices(where, lesson, ck)
                if lesson["number"] == 9:
                    check_next_token(where, lesson, ck, default_sentence=False)
                    check_coreference(where, lesson)
    # A learner's own sentence on the default model: the probabilities must still be the model's.
    if translation:
        ck = Checkpoint(os.path.join(models, translation[0], "model.ckpt"))
        lesson, err = run_lesson(args.attnlab, 9, ["--sentence", "The girl sees the cat.", "--target", "La fille voit le chat."], env)
        if err:
            fail("lesson 9 with --sentence", err)
        else:
            checked += 1
            check_next_token(f"lesson 9 on {translation[0]} with a learner's sentence", lesson, ck, default_sentence=False)
            check_matrices("lesson 9 with a learner's sentence", lesson, ck)
    if args.shared:
        checked += check_cited_sources(args.shared)
    for f in FAILURES:
        print("FAIL", f)
    print(f"lesson claims: {checked} lesson runs checked, {len(FAILURES)} failed claims")
    sys.exit(1 if FAILURES or checked == 0 else 0)


if __name__ == "__main__":
    main()
