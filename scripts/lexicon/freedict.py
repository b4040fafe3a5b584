"""Reads a FreeDict dictionary in dictd format (.index + .dict.dz, which gzip can read).

Each .index line is `headword<TAB>offset<TAB>length`, the numbers in dictd's base64 digits. The
article at that place is `headword /pronunciation/ <pos, gender>` followed by the translations,
comma-separated, in numbered senses when there are several.
"""
import gzip
import re

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _num(s):
    n = 0
    for ch in s:
        n = n * 64 + B64.index(ch)
    return n


def load(index_path, dict_path):
    """[(headword, pos, gender, [translations])]; pos is n/v/adj/adv or '' when unmarked."""
    data = gzip.open(dict_path).read()
    out = []
    seen = set()
    with open(index_path, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 3 or p[0].startswith("00database"):
                continue
            off, ln = _num(p[1]), _num(p[2])
            if (off, ln) in seen:
                continue
            seen.add((off, ln))
            lines = data[off:off + ln].decode("utf-8").strip("\n").split("\n")
            head = lines[0]
            word = re.split(r" /| <", head, 1)[0].strip()
            m = re.search(r"<([^>]*)>", head)
            info = [x.strip() for x in m.group(1).split(",")] if m else []
            pos = info[0] if info else ""
            gender = {"masc": "m", "fem": "f"}.get(info[1] if len(info) > 1 else "", "")
            trans = []
            for t in lines[1:]:
                t = re.sub(r"^\d+\.\s*", "", t.strip())
                trans.extend(x.strip() for x in t.split(",") if x.strip())
            out.append((word, pos, gender, trans))
    return out
