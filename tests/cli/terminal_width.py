#!/usr/bin/python3
"""No line of a lesson, the tour's first lessons, check/watch/hint, attend, translate or generate is
wider than the terminal, at 60, 80 and 120 columns (COLUMNS, no colour, output to a pipe). --full, which asks for every
column whatever the width, is the one way past the width and is not run here.

Widths are counted in terminal columns (East Asian wide characters take two, combining marks none),
independently of attnlab's own display_width. Each failure names the command, the width and the line.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unicodedata

WIDTHS = (60, 80, 120)


def columns(line):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnlab", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="attnlab-width-")
    sentence = "The animal didn't cross the street because it was too tired."
    commands = [["lesson", str(n), "--no-pause"] for n in range(1, 11)]
    commands += [["lesson", str(n), "--no-pause", "--random"] for n in (1, 7, 9)]
    commands += [["lesson", "9", "--no-pause", "--sentence", "The girl sees the small cat near the old house.",
                  "--target", "La fille voit le petit chat près de la vieille maison."]]
    commands += [["attend", sentence], ["attend", sentence, "--focus", "it"],
                 ["translate", sentence], ["translate", "The boy trains the puppy.", "--show-attention"],
                 ["generate", "Your journey starts with one step", "-n", "2"],
                 ["generate", "Every effort moves you", "-t", "0", "--show-attention"],
                 ["check", "softmax"], ["hint", "softmax"], ["hint", "softmax"], ["check", "attention"], ["lessons"]]
    failures, runs = [], 0
    try:
        for width in WIDTHS:
            env = dict(os.environ, NO_COLOR="1", COLUMNS=str(width), HOME=home, ATTNLAB_DATA_DIR=args.source)
            for cmd in commands:
                r = subprocess.run([args.attnlab] + cmd, capture_output=True, text=True, env=env, timeout=600)
                runs += 1
                if r.returncode not in (0, 1):  # check exits 1 for a file that does not pass yet
                    failures.append(f"{' '.join(cmd)} at {width}: exit {r.returncode}: {r.stderr.strip()[:300]}")
                    continue
                for stream, text in (("stdout", r.stdout), ("stderr", r.stderr)):
                    for line in text.split("\n"):
                        if columns(line) > width:
                            failures.append(f"{' '.join(cmd)} at {width} ({stream}, {columns(line)} columns): {line[:100]}")
            # watch checks once at start, then waits for a save: its first screen, then it is stopped.
            p = subprocess.Popen([args.attnlab, "watch", "softmax"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, env=env, start_new_session=True)
            try:
                out, _ = p.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGINT)
                out, _ = p.communicate(timeout=20)
            runs += 1
            for line in out.split("\n"):
                if columns(line) > width:
                    failures.append(f"watch softmax at {width} ({columns(line)} columns): {line[:100]}")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    # What the narrow terminal must not lose: every lesson's summary whole (wrapped, not cut), and in
    # an abbreviated attention table the focus word and the sentence's nouns.
    env = dict(os.environ, NO_COLOR="1", COLUMNS="60", HOME=home, ATTNLAB_DATA_DIR=args.source)
    listing = subprocess.run([args.attnlab, "lessons"], capture_output=True, text=True, env=env, timeout=60).stdout
    summaries = json.loads(subprocess.run([args.attnlab, "lessons", "--format", "json"], capture_output=True, text=True,
                                          env=env, timeout=60).stdout)["lessons"]
    flat = " ".join(listing.split())
    for l in summaries:
        if " ".join(l["summary"].split()) not in flat:
            failures.append(f"lessons at 60: the summary of lesson {l['number']} is not shown whole")
    focus = subprocess.run([args.attnlab, "attend", sentence, "--focus", "it"], capture_output=True, text=True, env=env,
                           timeout=120).stdout
    lines = focus.split("\n")  # the column header is the line after the title, which ends with its note
    end = next((i for i, l in enumerate(lines) if l.endswith("shows all)")), None)
    header = lines[end + 1] if end is not None and end + 1 < len(lines) else ""
    for word in ("it", "animal", "street"):
        if f" {word}" not in header:
            failures.append(f"attend --focus it at 60: the abbreviated table drops the column of \"{word}\" ({header.strip()})")
    for f in failures:
        print("FAIL", f)
    print(f"terminal width: {runs} runs at {', '.join(map(str, WIDTHS))} columns, {len(failures)} lines too wide")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
