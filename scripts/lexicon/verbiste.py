"""Conjugates French verbs with verbiste's tables (verbs-fr.xml and conjugation-fr.xml).

verbs-fr.xml lists each verb with the name of its conjugation template, written `radical:ending`
(`aim:er` for aimer, `dor:mir` for dormir, `:être` for être). The verb's own radical is its
infinitive minus the template's ending; every form is that radical plus one of the endings the
template lists in conjugation-fr.xml (the first one where a person has alternatives). A person the
template gives no form for (il pleut has no je) is None.
`<aspirate-h/>` marks verbs whose h blocks elision (je hais, not j'hais).
"""
import xml.etree.ElementTree as ET


def _endings(node):
    """[first ending of each <p>] for a tense node; None for a person with no form."""
    out = []
    for p in node.findall("p"):
        i = p.find("i")
        out.append(None if i is None else (i.text or ""))
    return out


def load(verbs_xml, conj_xml):
    verbs = {}
    for v in ET.parse(verbs_xml).getroot().findall("v"):
        verbs[v.findtext("i")] = (v.findtext("t"), v.find("aspirate-h") is not None)
    templates = {}
    for t in ET.parse(conj_xml).getroot().findall("template"):
        ind = t.find("indicative")
        part = t.find("participle")
        cond = t.find("conditional")
        imp = t.find("imperative")
        templates[t.get("name")] = {
            "present": _endings(ind.find("present")),
            "imperfect": _endings(ind.find("imperfect")),
            "future": _endings(ind.find("future")),
            "conditional": _endings(cond.find("present")) if cond is not None else [None] * 6,
            # tu, nous, vous (mange, mangeons, mangez)
            "imperative": _endings(imp.find("imperative-present")) if imp is not None else [None] * 3,
            "past_participle": _endings(part.find("past-participle")),  # ms, mp, fs, fp
        }
    return verbs, templates


def conjugate(verb, verbs, templates):
    """{'present': [6], 'imperfect': [6], 'future': [6], 'conditional': [6], 'imperative': [3] (tu, nous,
    vous), 'pp': (ms, fs, mp, fp), 'template', 'aspirate_h'} or None."""
    if verb not in verbs:
        return None
    tname, aspirate = verbs[verb]
    if tname not in templates:
        return None
    ending = tname.split(":", 1)[1]
    if not verb.endswith(ending):
        return None
    radical = verb[: len(verb) - len(ending)]
    t = templates[tname]

    def forms(ends):
        return [None if e is None else radical + e for e in ends]

    pp = forms(t["past_participle"])
    if len(pp) != 4 or len(t["present"]) != 6 or len(t["imperfect"]) != 6:
        return None
    if len(t["future"]) != 6 or len(t["conditional"]) != 6 or len(t["imperative"]) != 3:
        return None
    return {
        "present": forms(t["present"]),
        "imperfect": forms(t["imperfect"]),
        "future": forms(t["future"]),
        "conditional": forms(t["conditional"]),
        "imperative": forms(t["imperative"]),
        "pp": (pp[0], pp[2], pp[1], pp[3]),
        "template": tname,
        "aspirate_h": aspirate,
    }
