#!/usr/bin/python3
"""Independent checks of two figures attnlab prints for issue 50's measures.

1. `attnlab corpus --coverage`: the corpus is written with --out, and the share of the word list
   that occurs in train.tsv's English column is recounted here with a regular expression (not the
   C++ scanner); the covered count and the missing words must be the same.
2. `attnlab eval --everyday --format json`: each sentence's verdict "correct" is recomputed from the
   printed translation and the set file itself (read here, not through attnlab), and every summary
   figure (right, by category, unsure among wrong and among right) is recounted from the per-sentence
   results. The translations themselves are the model's: tests/unit checks decoding.

Usage: coverage_oracle.py ATTNLAB [--everyday-limit N]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

WORD = re.compile(r"[a-z]+(?:['-][a-z]+)*")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def normalised(s):
    return " ".join(s.replace("\u2019", "'").split())


def main():
    attnlab = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    failures = []
    corpus = ["--grammar", "wide", "--seed", "3", "--train", "20000", "--valid", "300", "--test", "300"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "c")
        run([attnlab, "corpus", *corpus, "--out", out])
        got = json.loads(run([attnlab, "corpus", *corpus, "--coverage", "--format", "json"]))
        seen = set()
        with open(os.path.join(out, "train.tsv"), encoding="utf-8") as f:
            next(f)
            for line in f:
                seen.update(WORD.findall(line.split("\t")[0].lower()))
        words = [l.split("\t")[1] for l in open(os.path.join(root, "data/eval/brown-top-1000.tsv"), encoding="utf-8")
                 if l[:1].isdigit()]
        missing = [w for w in words if w not in seen]
        cov = got["coverage"]
        if cov["words"] != len(words) or cov["covered"] != len(words) - len(missing) or cov["missing"] != missing:
            failures.append(f"coverage: attnlab says {cov['covered']} of {cov['words']}, recounted {len(words) - len(missing)} of {len(words)}")
        else:
            print(f"ok   coverage: {cov['covered']} of {cov['words']} on a 20,000-pair wide corpus, recounted alike")

    ev = json.loads(run([attnlab, "eval", "--everyday", "--format", "json"]))
    accepted = {}
    with open(os.path.join(root, "data/eval/everyday-en-fr.tsv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#") or line.startswith("category\t"):
                continue
            cat, en, fr = line.split("\t")
            accepted[normalised(en)] = {normalised(t) for t in fr.split(" | ")}
    results = ev["results"]
    if len(results) != len(accepted):
        failures.append(f"everyday: {len(results)} results for {len(accepted)} sentences in the file")
    right = wrong_flagged = right_flagged = 0
    by_cat = {}
    for r in results:
        ok = normalised(r["got"]) in accepted[normalised(r["en"])]
        if ok != r["correct"]:
            failures.append(f"everyday: {r['en']!r} → {r['got']!r} marked correct={r['correct']}, recomputed {ok}")
        right += ok
        c = by_cat.setdefault(r["category"], [0, 0])
        c[0] += ok
        c[1] += 1
        if r["unsure"] != bool(r["unsure_why"]):
            failures.append(f"everyday: {r['en']!r}: unsure={r['unsure']} with reasons {r['unsure_why']}")
        if ok:
            right_flagged += r["unsure"]
        else:
            wrong_flagged += r["unsure"]
    n = len(results)
    checks = [("right", ev["right"]["correct"], right), ("total", ev["right"]["total"], n),
              ("unsure among wrong", ev["unsure"]["flagged_among_wrong"]["correct"], wrong_flagged),
              ("wrong", ev["unsure"]["flagged_among_wrong"]["total"], n - right),
              ("unsure among right", ev["unsure"]["flagged_among_right"]["correct"], right_flagged)]
    for cat, (k, t) in by_cat.items():
        checks.append((f"right in {cat}", ev["right_by_category"][cat]["correct"], k))
    for name, said, recount in checks:
        if said != recount:
            failures.append(f"everyday: {name}: attnlab says {said}, recounted {recount}")
    if not failures:
        print(f"ok   everyday: {right}/{n} right, unsure on {wrong_flagged}/{n - right} wrong and {right_flagged}/{right} right, recounted alike")
    for f in failures:
        print("FAIL", f)
    print(f"{2 - bool([f for f in failures if f.startswith('coverage')]) - bool([f for f in failures if f.startswith('everyday')])} passed, "
          f"{bool([f for f in failures if f.startswith('coverage')]) + bool([f for f in failures if f.startswith('everyday')])} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
