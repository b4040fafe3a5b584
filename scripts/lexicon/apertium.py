"""Reads the entries of a compiled Apertium bilingual dictionary (an lttoolbox .bin transducer).

Debian's apertium-* binary packages ship the dictionaries compiled, not as .dix XML, so the entries
are recovered from the transducer itself: `lt-print` (from lttoolbox-dev) writes it in AT&T text
form, and every path from the start state to a final state is one dictionary entry, its input side
the source-language lemma and tags, its output side the target-language lemma and tags.
"""
import re
import subprocess
import sys

TAG = re.compile(r"<([^<>]+)>")
_NOISE = re.compile(r"^[^\w\s'·#<-]$|^\d$")


def _sections(att_text):
    """Yields (transitions {state: [(dst, in, out)]}, finals) for each section of lt-print output."""
    arcs, finals = {}, set()
    for line in att_text.split("\n"):
        if line == "--":
            yield arcs, finals
            arcs, finals = {}, set()
            continue
        if not line:
            continue
        f = line.split("\t")
        if len(f) >= 4:
            arcs.setdefault(int(f[0]), []).append((int(f[1]), f[2], f[3]))
        else:
            finals.add(int(f[0]))
    if arcs:
        yield arcs, finals


def _paths(arcs, finals, limit=2_000_000):
    """Every start-to-final path without a repeated state (loops belong to regex entries, skipped)."""
    out = []
    stack = [(0, "", "", frozenset([0]))]
    while stack:
        state, left, right, seen = stack.pop()
        if state in finals:
            out.append((left, right))
            if len(out) >= limit:
                raise RuntimeError("transducer has more paths than expected")
        for dst, a, b in arcs.get(state, ()):
            if dst in seen:
                continue
            a = "" if a == "ε" else a
            b = "" if b == "ε" else b
            if _NOISE.search(a) or _NOISE.search(b):
                continue  # digits and symbols: regex entries for numbers, dates, URLs
            stack.append((dst, left + a, right + b, seen | {dst}))
    return out


def split(side):
    """'casa<n><f>' -> ('casa', ['n', 'f'])."""
    i = side.find("<")
    if i < 0:
        return side, []
    return side[:i], TAG.findall(side[i:])


def entries(lt_print, binfile, env=None):
    """[(src_lemma, src_tags, dst_lemma, dst_tags)] for every entry of every section."""
    res = subprocess.run([lt_print, binfile], capture_output=True, env=env)
    if res.returncode != 0:
        sys.exit(f"lexicon: lt-print failed on {binfile}: {res.stderr.decode(errors='replace').strip()}")
    text = res.stdout.decode("utf-8")
    result = []
    for arcs, finals in _sections(text):
        for left, right in _paths(arcs, finals):
            sl, st = split(left)
            dl, dt = split(right)
            if not sl or not st:
                continue
            result.append((sl, st, dl, dt))
    return result
