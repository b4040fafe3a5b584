#!/usr/bin/python3
"""Kills `attnlab corpus --out DIR` while it replaces DIR, and checks that DIR is never a mix.

  1. References: the corpus of seed 1 and of seed 2 (large splits, so writing takes a while),
     each written to a folder of its own.
  2. DIR starts as seed 1's corpus. Then `corpus --seed 2 --out DIR` is started again and again and
     stopped after a random delay with SIGINT, SIGTERM or SIGKILL, in a seeded random order (the
     seed is printed; --seed repeats a run). After every stop DIR must equal one reference file for
     file, never a mix of the two seeds and never a partial file. SIGINT and SIGTERM must end in exit
     130 (or 0 when the run had finished) and leave nothing beside DIR; what a SIGKILL leaves (a
     hidden staging folder) must be removed by the next run.
  3. A folder holding a file the corpus did not write is refused (exit 2) and left untouched.

Usage: /usr/bin/python3 tests/errors/kill_corpus.py --binary build/attnlab [--seed N] [--kills 9] [--small]
"""

import argparse
import filecmp
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FILES = ["train.tsv", "valid.tsv", "test.tsv", "vocab.json", "lm_train.txt", "lm_valid.txt", "lm_test.txt",
         "lm_vocab.json"]
SIZES = ["--train", "60000", "--valid", "2000", "--test", "2000", "--lm-train", "60000"]
SMALL = ["--train", "15000", "--valid", "500", "--test", "500", "--lm-train", "15000"]  # --small: sanitized builds
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]


def same_as(folder, ref):
    if sorted(os.listdir(folder)) != sorted(FILES):
        return False
    return all(filecmp.cmp(os.path.join(folder, f), os.path.join(ref, f), shallow=False) for f in FILES)


def leftovers(parent, name):
    return sorted(n for n in os.listdir(parent) if n.startswith("." + name + "."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--kills", type=int, default=9)
    ap.add_argument("--small", action="store_true",
                    help="smaller splits (for sanitized builds, where generating is about ten times slower)")
    args = ap.parse_args()
    sizes = SMALL if args.small else SIZES
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    rng = random.Random(seed)
    print(f"kill_corpus: seed {seed} (repeat with --seed {seed})", flush=True)
    env = dict(os.environ, NO_COLOR="1")
    failures = []

    def corpus(seed_value, out, **kw):
        return [args.binary, "corpus", "--seed", str(seed_value), "--out", out, "--format", "json", *sizes]

    with tempfile.TemporaryDirectory(prefix="attnlab-kill-corpus-") as tmp:
        ref = {s: os.path.join(tmp, f"ref{s}") for s in (1, 2)}
        t0 = time.monotonic()
        for s, folder in ref.items():
            subprocess.run(corpus(s, folder), env=env, check=True, stdout=subprocess.DEVNULL)
        took = (time.monotonic() - t0) / 2
        print(f"  one corpus run takes {took:.2f} s", flush=True)
        if any(filecmp.cmp(os.path.join(ref[1], f), os.path.join(ref[2], f), shallow=False) for f in FILES[:3]):
            failures.append("seeds 1 and 2 gave the same splits: the test could not tell them apart")

        out = os.path.join(tmp, "out")
        shutil.copytree(ref[1], out)
        order = [SIGNALS[i % 3] for i in range(args.kills)]
        rng.shuffle(order)
        for i, sig in enumerate(order):
            before = 1 if same_as(out, ref[1]) else 2
            p = subprocess.Popen(corpus(2, out), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            delay = rng.uniform(0.05, took * 1.1)
            time.sleep(delay)
            p.send_signal(sig)
            _, err = p.communicate(timeout=120)
            code = p.returncode
            now = 1 if same_as(out, ref[1]) else 2 if same_as(out, ref[2]) else None
            left = leftovers(tmp, "out")
            print(f"  stop {i + 1}: {sig.name:7} after {delay:4.2f} s -> exit {code:4}, out = "
                  f"{'seed ' + str(now) if now else 'A MIX'}, left beside it: {len(left)}", flush=True)
            if now is None:
                failures.append(f"stop {i + 1} ({sig.name} after {delay:.2f} s) left out/ as neither corpus: "
                                f"{sorted(os.listdir(out)) if os.path.isdir(out) else 'missing'}")
            if sig != signal.SIGKILL:
                # A signal that lands while attnlab's handler is not installed ends the process by the
                # signal itself: before it is installed (the first tens of milliseconds, longer under
                # AddressSanitizer's start-up), when nothing has been written, or after the command has
                # put the new corpus in place and restored the default handlers on its way out (a
                # window that a loaded machine widens). out/ must then be the old corpus or the whole
                # new one, never anything else (a mix is caught above).
                early = code == -sig.value
                if early and now not in (before, 2):
                    failures.append(f"stop {i + 1}: {sig.name} ended it by the signal and out/ changed "
                                    f"from seed {before} to {now}")
                if code not in (0, 130) and not early:
                    failures.append(f"stop {i + 1}: {sig.name} gave exit {code} (expected 130, or 0 if done): "
                                    f"{err.decode(errors='replace').strip()}")
                if code == 130 and now != before:
                    failures.append(f"stop {i + 1}: exit 130 but out/ changed from seed {before} to {now}")
                if code == 130 and b"left as it was" not in err:
                    failures.append(f"stop {i + 1}: exit 130 without saying --out was left as it was: {err!r}")
                if left:
                    failures.append(f"stop {i + 1}: {sig.name} left {left} beside out/")
            # Back to seed 1 for the next round (and this run must clear what a SIGKILL left).
            subprocess.run(corpus(1, out), env=env, check=True, stdout=subprocess.DEVNULL)
            if leftovers(tmp, "out"):
                failures.append(f"after stop {i + 1}, the next run left {leftovers(tmp, 'out')} beside out/")
            if not same_as(out, ref[1]):
                failures.append(f"after stop {i + 1}, a full run did not write seed 1's corpus")

        foreign = os.path.join(tmp, "notes")
        os.makedirs(foreign)
        with open(os.path.join(foreign, "keep.txt"), "w") as f:
            f.write("mine\n")
        r = subprocess.run(corpus(1, foreign), env=env, capture_output=True, text=True)
        if r.returncode != 2 or "keep.txt" not in r.stderr or os.listdir(foreign) != ["keep.txt"]:
            failures.append(f"a folder holding keep.txt: exit {r.returncode}, {r.stderr.strip()!r}, "
                            f"now holds {os.listdir(foreign)}")

    if failures:
        print("kill_corpus: FAILED", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        sys.exit(1)
    print(f"kill_corpus: ok ({args.kills} stops, out/ always one whole corpus)")


if __name__ == "__main__":
    main()
