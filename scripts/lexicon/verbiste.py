"""Conjugates French verbs with verbiste's tables (verbs-fr.xml and conjugation-fr.xml).

verbs-fr.xml lists each verb with the name of its conjugation template, written `radical:ending`
(`aim:er` for aimer, `dor:mir` for dormir, `:être` for être). The verb's own radical is its
infinitive minus the template's ending; every form is that radical plus one of the endings the
template lists in conjugation-fr.xml (the first one where a person has alternatives).
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
        templates[t.get("name")] = {
            "present": _endings(ind.find("present")),
            "imperfect": _endings(ind.find("imperfect")),
            "past_participle": _endings(part.find("past-participle")),  # ms, mp, fs, fp
        }
    return verbs, templates


def conjugate(verb, verbs, templates):
    """{'present': [6], 'imperfect': [6], 'pp': (ms, fs, mp, fp), 'template', 'aspirate_h'} or None."""
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
    return {
        "present": forms(t["present"]),
        "imperfect": forms(t["imperfect"]),
        "pp": (pp[0], pp[2], pp[1], pp[3]),
        "template": tname,
        "aspirate_h": aspirate,
    }
