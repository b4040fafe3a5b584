#!/usr/bin/python3
"""Checks the committed lexicon tables in data/lexicon/ (see docs/lexicon.md).

Prints one line per problem and exits 1 if there is any, else prints a summary and exits 0.
Usage: /usr/bin/python3 tests/lexicon/check_tables.py [DATA_DIR]
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PERSONS = ("1s", "2s", "3s", "1p", "2p", "3p")
COLUMNS = {
    "nouns": ["rank", "count", "en", "en_pl", "fr", "fr_pl", "gender", "elides", "kind", "sense", "scope", "sources"],
    "verbs": ["rank", "count", "en", "en_3sg", "en_past", "en_pp", "en_ing", "fr", "template", "aux",
              "transitive", "elides",
              "pres_1s", "pres_2s", "pres_3s", "pres_1p", "pres_2p", "pres_3p",
              "impf_1s", "impf_2s", "impf_3s", "impf_1p", "impf_2p", "impf_3p",
              "pp_ms", "pp_fs", "pp_mp", "pp_fp"]
             + ["fut_" + p for p in PERSONS] + ["cond_" + p for p in PERSONS] + ["imp_2s", "imp_1p", "imp_2p"]
             + ["sense", "scope", "sources"],
    "adjectives": ["rank", "count", "en", "fr_ms", "fr_fs", "fr_mp", "fr_fp", "fr_ms_vowel", "before", "sense", "scope",
                   "sources"],
    "adverbs": ["rank", "count", "en", "fr", "sense", "scope", "sources"],
}
# Conjugated forms a defective verb lacks (il pleut has no je): empty, in rows of the everyday scope only.
CONJUGATED = {c for c in COLUMNS["verbs"] if c.startswith(("pres_", "impf_", "fut_", "cond_", "imp_"))}
FUT = ["rai", "ras", "ra", "rons", "rez", "ront"]
COND = ["rais", "rais", "rait", "rions", "riez", "raient"]
OPTIONAL = {"sense", "scope"}
IMPF = ["ais", "ais", "ait", "ions", "iez", "aient"]
KINDS = {"person", "animal", "place", "thing", "abstract"}

# The vocabulary of the course's key sentences: (table, en, sense, {column: value}).
KEY = [
    ("nouns", "animal", "", {"fr": "animal", "gender": "m", "fr_pl": "animaux", "elides": "1", "kind": "animal"}),
    ("nouns", "street", "", {"fr": "rue", "gender": "f", "elides": "0"}),
    ("nouns", "boy", "", {"fr": "garçon", "gender": "m"}),
    ("nouns", "puppy", "", {"fr": "chiot", "gender": "m", "en_pl": "puppies"}),
    ("nouns", "cat", "", {"fr": "chat", "gender": "m"}),
    ("nouns", "mouse", "", {"fr": "souris", "gender": "f", "fr_pl": "souris", "en_pl": "mice"}),
    ("nouns", "table", "", {"fr": "table", "gender": "f"}),
    ("nouns", "dog", "", {"fr": "chien", "gender": "m"}),
    ("nouns", "phone", "", {"fr": "téléphone", "gender": "m"}),
    ("nouns", "apple", "", {"fr": "pomme", "gender": "f"}),
    ("nouns", "apple pie", "", {"fr": "tarte aux pommes", "gender": "f"}),
    ("nouns", "journey", "", {"fr": "voyage", "gender": "m"}),
    ("nouns", "step", "", {"fr": "pas", "gender": "m", "fr_pl": "pas"}),
    ("nouns", "man", "", {"fr": "homme", "elides": "1", "en_pl": "men"}),
    ("verbs", "cross", "", {"fr": "traverser", "aux": "avoir", "transitive": "1"}),
    ("verbs", "train", "", {"fr": "entraîner", "pres_3s": "entraîne"}),
    ("verbs", "adopt", "", {"fr": "adopter", "elides": "1", "pp_ms": "adopté"}),
    ("verbs", "sleep", "", {"fr": "dormir", "pres_1s": "dors", "pres_3s": "dort", "impf_3s": "dormait",
                            "en_past": "slept"}),
    ("verbs", "chase", "", {"fr": "chasser"}),
    ("verbs", "chase", "pursue", {"fr": "poursuivre", "pres_3s": "poursuit"}),
    ("verbs", "unveil", "", {"fr": "dévoiler", "pp_ms": "dévoilé"}),
    ("verbs", "love", "", {"fr": "aimer", "elides": "1", "pres_1s": "aime"}),
    ("verbs", "start", "", {"fr": "commencer", "pres_1p": "commençons", "impf_3s": "commençait"}),
    ("verbs", "be", "", {"fr": "être", "pres_1s": "suis", "pres_3s": "est", "pres_3p": "sont", "impf_3s": "était",
                         "pp_ms": "été", "aux": "avoir", "en_3sg": "is", "en_past": "was", "en_pp": "been"}),
    ("verbs", "have", "", {"fr": "avoir", "pres_1s": "ai", "pres_3s": "a", "pres_3p": "ont", "pp_ms": "eu"}),
    ("verbs", "go", "", {"fr": "aller", "pres_1s": "vais", "pres_3p": "vont", "aux": "être", "pp_fs": "allée",
                         "en_past": "went", "en_pp": "gone"}),
    ("verbs", "do", "", {"fr": "faire", "pres_2p": "faites", "pres_3p": "font", "impf_1s": "faisais"}),
    ("verbs", "come", "", {"fr": "venir", "pres_3s": "vient", "pres_3p": "viennent", "aux": "être", "pp_ms": "venu"}),
    ("verbs", "take", "", {"fr": "prendre", "pres_1p": "prenons", "pres_3p": "prennent", "pp_ms": "pris"}),
    ("verbs", "see", "", {"fr": "voir", "pres_1p": "voyons", "impf_3s": "voyait", "pp_ms": "vu"}),
    ("verbs", "want", "", {"fr": "vouloir", "pres_1s": "veux", "pres_3p": "veulent", "pp_ms": "voulu",
                           "cond_1s": "voudrais", "fut_3s": "voudra"}),
    ("verbs", "be", "", {"fut_3s": "sera", "cond_1s": "serais", "imp_2s": "sois", "imp_1p": "soyons"}),
    ("verbs", "eat", "", {"fut_1s": "mangerai", "cond_3p": "mangeraient", "imp_2s": "mange", "imp_1p": "mangeons"}),
    ("verbs", "can", "modal", {"fr": "pouvoir", "pres_1s": "peux", "cond_1s": "pourrais", "fut_3s": "pourra",
                               "scope": "everyday"}),
    ("verbs", "must", "modal", {"fr": "devoir", "pres_3s": "doit", "cond_1s": "devrais", "impf_3s": "devait",
                                "scope": "everyday"}),
    ("verbs", "know", "fact", {"fr": "savoir", "pres_1s": "sais", "scope": "everyday"}),
    ("verbs", "rain", "", {"fr": "pleuvoir", "pres_3s": "pleut", "impf_3s": "pleuvait", "fut_3s": "pleuvra",
                           "pp_ms": "plu", "pres_1s": "", "scope": "everyday"}),
    ("adjectives", "tired", "", {"fr_ms": "fatigué", "fr_fs": "fatiguée"}),
    ("adjectives", "wide", "", {"fr_ms": "large", "fr_fs": "large", "fr_mp": "larges"}),
    ("adjectives", "old", "", {"fr_ms": "vieux", "fr_fs": "vieille", "fr_mp": "vieux", "fr_fp": "vieilles",
                               "fr_ms_vowel": "vieil", "before": "1"}),
    ("adjectives", "new", "", {"fr_ms": "nouveau", "fr_fs": "nouvelle", "fr_mp": "nouveaux",
                               "fr_fp": "nouvelles", "fr_ms_vowel": "nouvel", "before": "1"}),
    ("adjectives", "wooden", "", {"fr_ms": "en bois", "fr_fs": "en bois", "before": "0"}),
    ("adjectives", "delicious", "", {"fr_ms": "délicieux", "fr_fs": "délicieuse", "fr_mp": "délicieux",
                                     "fr_fp": "délicieuses", "before": "0"}),
    ("adjectives", "small", "", {"fr_ms": "petit", "before": "1"}),
    ("adjectives", "good", "", {"fr_ms": "bon", "fr_fs": "bonne", "before": "1"}),
    ("adjectives", "beautiful", "", {"fr_ms": "beau", "fr_fs": "belle", "fr_mp": "beaux", "fr_ms_vowel": "bel"}),
    ("adverbs", "happily", "", {"fr": "joyeusement"}),
    ("adverbs", "finally", "", {"fr": "enfin"}),
]


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "data", "lexicon")
    problems = []
    tables = {}
    for name, cols in COLUMNS.items():
        path = os.path.join(data, name + ".tsv")
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (OSError, UnicodeDecodeError) as e:
            problems.append(f"{path}: cannot read: {e}")
            continue
        if lines and lines[-1] == "":
            lines.pop()
        if not lines or lines[0].split("\t") != cols:
            problems.append(f"{name}.tsv: header is not {' '.join(cols)}")
            continue
        rows = []
        last_rank = 0
        seen = {}
        for n, line in enumerate(lines[1:], 2):
            p = line.split("\t")
            where = f"{name}.tsv:{n}"
            if len(p) != len(cols):
                problems.append(f"{where}: {len(p)} columns, expected {len(cols)}")
                continue
            r = dict(zip(cols, p))
            defective = name == "verbs" and r.get("scope") == "everyday" and r.get("pres_3s")
            for c in cols:
                if c not in OPTIONAL and not r[c].strip() and not (defective and c in CONJUGATED):
                    problems.append(f"{where}: empty {c}")
                if r[c] != r[c].strip():
                    problems.append(f"{where}: spaces around {c} '{r[c]}'")
            if not r["rank"].isdigit() or not r["count"].isdigit():
                problems.append(f"{where}: rank and count must be numbers")
                continue
            if int(r["rank"]) < last_rank:
                problems.append(f"{where}: not sorted by rank ({r['rank']} after {last_rank})")
            last_rank = int(r["rank"])
            key = (r["en"], r["sense"])
            if key in seen:
                problems.append(f"{where}: duplicate row for '{r['en']}' sense '{r['sense']}' (line {seen[key]})")
            seen[key] = n
            check_row(name, r, where, problems)
            rows.append(r)
        tables[name] = rows

    for table, en, sense, want in KEY:
        match = [r for r in tables.get(table, []) if r["en"] == en and r["sense"] == sense]
        if not match:
            problems.append(f"{table}.tsv: key word '{en}'{' (' + sense + ')' if sense else ''} is missing")
            continue
        for c, v in want.items():
            if match[0].get(c) != v:
                problems.append(f"{table}.tsv: key word '{en}': {c} is '{match[0].get(c)}', expected '{v}'")

    lemmas = {(r["en"], t) for t in ("nouns", "verbs", "adjectives") for r in tables.get(t, [])}
    words = {w for w, _ in lemmas}
    if len(words) < 3000:
        problems.append(f"only {len(words)} distinct English lemmas in nouns, verbs and adjectives (need 3000)")
    for p in problems:
        print(p)
    if problems:
        print(f"check_tables: {len(problems)} problem(s)")
        return 1
    counts = ", ".join(f"{t} {len(tables.get(t, []))}" for t in COLUMNS)
    print(f"check_tables: ok ({counts} rows; {len(words)} distinct English lemmas)")
    return 0


def check_row(name, r, where, problems):
    def flag(c):
        if r[c] not in ("0", "1"):
            problems.append(f"{where}: {c} must be 0 or 1, not '{r[c]}'")
    if name == "nouns":
        if r["gender"] not in ("m", "f"):
            problems.append(f"{where}: gender '{r['gender']}' not in m, f")
        if r["kind"] not in KINDS:
            problems.append(f"{where}: kind '{r['kind']}' not in {', '.join(sorted(KINDS))}")
        flag("elides")
    elif name == "verbs":
        if r["aux"] not in ("avoir", "être"):
            problems.append(f"{where}: aux '{r['aux']}' not in avoir, être")
        flag("transitive")
        flag("elides")
        for i, p in enumerate(PERSONS):
            for tense, ends in (("impf_", IMPF), ("fut_", FUT), ("cond_", COND)):
                form = r[tense + p]
                if form and not form.endswith(ends[i]):
                    problems.append(f"{where}: {tense}{p} '{form}' does not end in -{ends[i]}")
        # One stem for all six persons, up to the spelling of -cer/-ger verbs (commençais, commencions).
        stems = {re.sub(r"ge$", "g", r["impf_" + p][: -len(IMPF[i])].replace("ç", "c"))
                 for i, p in enumerate(PERSONS) if r["impf_" + p]}
        if len(stems) != 1:
            problems.append(f"{where}: imparfait stems differ: {sorted(stems)}")
        if not re.search(r"(er|ir|re|ïr)$", r["fr"]):
            problems.append(f"{where}: '{r['fr']}' is not an infinitive")
    elif name == "adjectives":
        flag("before")
    if r["scope"] not in ("", "everyday"):
        problems.append(f"{where}: scope '{r['scope']}' not in '', everyday")
    if not re.fullmatch(r"[a-z][a-z' -]*", r["en"]):
        problems.append(f"{where}: English '{r['en']}' is not a lower-case word")


if __name__ == "__main__":
    sys.exit(main())
