#!/usr/bin/env python3
"""Each exercise's function signature has one source, the "function" field of its exercise.json; the
three C++ copies are checked against it:

  exercise.cpp and solution.cpp   define it        (the signature followed by "{")
  grader.cpp                      declares it      (the signature followed by ";")

  /usr/bin/python3 tests/exercises/check_signatures.py [--root DIR]     # exit 1 naming each mismatch

A "function" may hold several signatures separated by ";" (split-merge-heads). Whitespace, line
breaks, comments and the "ex::" qualifier (the files are inside namespace ex) do not count.
"""
import argparse
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def norm(text):
    text = text.replace("ex::", "")
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([(),&<>*{};])\s*", r"\1", text).strip()


def signatures(function_field):
    return [s.strip() for s in function_field.split(";") if s.strip()]


def check(root):
    inv = json.load(open(os.path.join(root, "lessons", "exercises.json"), encoding="utf-8"))
    problems = []
    checked = 0
    for e in inv["exercises"]:
        folder = os.path.join(root, "lessons", e["lesson"], "exercises", e["slug"])
        meta = json.load(open(os.path.join(folder, "exercise.json"), encoding="utf-8"))
        sigs = signatures(meta.get("function", ""))
        if not sigs:
            problems.append(f"{e['slug']}: exercise.json has no \"function\"")
            continue
        for name, end, what in (("exercise.cpp", "{", "define"), ("solution.cpp", "{", "define"), ("grader.cpp", ";", "declare")):
            path = os.path.join(folder, name)
            body = norm(strip_comments(open(path, encoding="utf-8").read()))
            for sig in sigs:
                checked += 1
                if norm(sig) + end not in body:
                    problems.append(f"{os.path.relpath(path, root)}: does not {what} `{sig}` as exercise.json states it")
    return problems, checked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=ROOT)
    args = ap.parse_args()
    problems, checked = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"exercise_signatures: {len(problems)} of {checked} copies differ from their exercise.json")
        return 1
    print(f"exercise_signatures: all {checked} copies (exercise.cpp, solution.cpp, grader.cpp) match exercise.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
