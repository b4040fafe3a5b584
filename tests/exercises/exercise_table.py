#!/usr/bin/env python3
"""docs/exercises.md's table of exercises, generated from the inventory lessons/exercises.json.

  /usr/bin/python3 tests/exercises/exercise_table.py            # exit 1 with a diff when the doc's table is stale
  /usr/bin/python3 tests/exercises/exercise_table.py --write-doc docs/exercises.md

The table sits between the lines "<!-- exercise table: ... -->" and "<!-- end of exercise table -->".
"""
import argparse
import difflib
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BEGIN = "<!-- exercise table: generated from lessons/exercises.json by tests/exercises/exercise_table.py; edit that file -->"
END = "<!-- end of exercise table -->"


def table(root):
    inv = json.load(open(os.path.join(root, "lessons", "exercises.json"), encoding="utf-8"))
    lines = ["| # | name | lesson folder | difficulty | time |", "|---|---|---|---|---|"]
    for n, e in enumerate(inv["exercises"], 1):
        name = e["slug"] + (f" ({e['topic']})" if e.get("topic") else "")
        lines.append(f"| {n} | {name} | {e['lesson']} | {e['difficulty']} | {e['minutes']} min |")
    return "\n".join(lines)


def with_table(doc, tbl):
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"exercise_table: the doc has no {BEGIN!r} … {END!r} block")
    a = doc.index(BEGIN) + len(BEGIN)
    b = doc.index(END)
    return doc[:a] + "\n" + tbl + "\n" + doc[b:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--write-doc", metavar="FILE")
    args = ap.parse_args()
    path = args.write_doc or os.path.join(args.root, "docs", "exercises.md")
    doc = open(path, encoding="utf-8").read()
    new = with_table(doc, table(args.root))
    if args.write_doc:
        tmp = path + ".tmp"
        open(tmp, "w", encoding="utf-8").write(new)
        os.replace(tmp, path)
        print(f"wrote {path}")
        return 0
    if new != doc:
        sys.stdout.writelines(difflib.unified_diff(doc.splitlines(True), new.splitlines(True), "docs/exercises.md (committed)",
                                                   "docs/exercises.md (from lessons/exercises.json)"))
        print("docs/exercises.md's table is stale; regenerate it with:\n"
              "  /usr/bin/python3 tests/exercises/exercise_table.py --write-doc docs/exercises.md")
        return 1
    print("exercise_table: docs/exercises.md's table matches lessons/exercises.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
