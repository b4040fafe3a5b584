"""Reads the French Hunspell dictionary of hunspell-fr-comprehensive (Dicollecte's fr.dic / fr.aff).

Each fr.dic line is `lemma/FLAGS po:... is:...`: po: gives the part of speech (po:nom, po:adj,
po:v1_it_q__a for verbs) and is: gender and number (is:mas, is:fem, is:epi for both genders,
is:inv for one form in both numbers). Flags are two characters long (FLAG long); each names a set
of suffix rules in fr.aff (`SFX flag strip add/contflags condition is:...`), which this module
applies to list every inflected form of a noun or adjective with its gender and number.
"""
import re


class Entry:
    __slots__ = ("lemma", "po", "tags", "verb", "forms")

    def __init__(self, lemma, po, tags, verb):
        self.lemma, self.po, self.tags, self.verb = lemma, po, tags, verb
        self.forms = []  # [(form, frozenset of is: tags)]


def _rules(aff_path):
    rules = {}
    with open(aff_path, encoding="utf-8") as f:
        for line in f:
            p = line.split()
            if len(p) < 5 or p[0] != "SFX":
                continue
            flag, strip, add, cond = p[1], p[2], p[3], p[4]
            add = add.split("/", 1)[0]
            strip = "" if strip == "0" else strip
            add = "" if add == "0" else add
            tags = frozenset(t[3:] for t in p[5:] if t.startswith("is:"))
            rules.setdefault(flag, []).append((strip, add, re.compile("(?:" + cond + ")$"), tags))
    return rules


def load(aff_path, dic_path):
    """{lemma: [Entry]} for nouns, adjectives and verbs."""
    rules = _rules(aff_path)
    lex = {}
    with open(dic_path, encoding="utf-8") as f:
        next(f)  # word count
        for line in f:
            parts = line.rstrip("\n").split()
            if not parts:
                continue
            word, _, flags = parts[0].partition("/")
            po = {t[3:] for t in parts[1:] if t.startswith("po:")}
            tags = frozenset(t[3:] for t in parts[1:] if t.startswith("is:"))
            verb = next((p for p in po if re.match(r"v\d", p)), None)
            if not (po & {"nom", "adj"}) and not verb:
                continue
            e = Entry(word, po, tags, verb)
            if po & {"nom", "adj"}:
                for i in range(0, len(flags), 2):
                    for strip, add, cond, rtags in rules.get(flags[i:i + 2], ()):
                        if cond.search(word) and word.endswith(strip):
                            form = word[: len(word) - len(strip)] + add
                            e.forms.append((form, tags | rtags))
                if not e.forms:
                    e.forms.append((word, tags))
            lex.setdefault(word, []).append(e)
    return lex


def verb_info(code):
    """po:v code -> (transitive, auxiliary). Dicollecte's code is v<group>_<7 letters>: i, t (direct
    object), n (indirect object), p/q/e/x (pronominal use), m (impersonal), e (être), a (avoir);
    `zz` in the last two places means not yet classified."""
    flags = code[3:] if len(code) > 3 else ""
    transitive = len(flags) > 1 and flags[1] == "t"
    if len(flags) >= 7 and flags[5] == "e" and flags[6] != "a":
        aux = "être"
    elif len(flags) >= 7 and flags[5] == "e" and flags[6] == "a":
        aux = "avoir|être"
    else:
        aux = "avoir"
    return transitive, aux
