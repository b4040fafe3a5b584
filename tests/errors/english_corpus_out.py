#!/usr/bin/python3
"""scripts/english-corpus.sh writes only where it may: never over a folder holding other files.

Round three of the adversarial passes: `english-corpus.sh $PWD/mydocs` replaced a folder holding a thesis
with the corpus, exit 0, and a relative OUT was taken from the repository root, so `cd elsewhere;
english-corpus.sh data` replaced the repository's whole data/ (models, configs, lexicon). The script runs
here from a copy of itself in a scratch "repository" (scripts/english-corpus.sh and prepare.py), so that
even the old behaviour can only replace scratch files. Checks:

  1. OUT holding a file the script did not write (and a subfolder): exit 2 naming it, nothing changed,
     nothing fetched.
  2. A relative OUT is the caller's: run from another folder, `data` is that folder's data/, and the
     repository's data/ is left as it was; the script says what it wrote.
  3. Running again into that OUT replaces it and says what it replaced.
  4. OUT = "." (the caller's folder) and OUT = a folder holding it: exit 2, the folder kept.

Parts 2 and 3 need WordNet (Debian's wordnet-base, the smallest source, read from /usr/share/wordnet);
without it they are skipped (exit 77), as the script would install it. Run with /usr/bin/python3.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def main():
    failures, skipped = [], None
    work = tempfile.mkdtemp(prefix="attnlab-english-out-")
    try:
        repo = os.path.join(work, "repo")
        os.makedirs(os.path.join(repo, "scripts"))
        shutil.copy(os.path.join(SOURCE, "scripts", "english-corpus.sh"), os.path.join(repo, "scripts"))
        shutil.copytree(os.path.join(SOURCE, "scripts", "english-corpus"), os.path.join(repo, "scripts", "english-corpus"))
        os.makedirs(os.path.join(repo, "data", "models"))
        with open(os.path.join(repo, "data", "models", "model.ckpt"), "w") as f:
            f.write("the shipped model\n")
        script = os.path.join(repo, "scripts", "english-corpus.sh")
        elsewhere = os.path.join(work, "elsewhere")
        os.makedirs(elsewhere)

        def run(args, cwd):
            p = subprocess.run(["bash", script] + args, cwd=cwd, capture_output=True, text=True, timeout=300)
            print(f"$ (cd {os.path.relpath(cwd, work)}; english-corpus.sh {' '.join(args)}) -> exit {p.returncode}")
            for line in (p.stdout + p.stderr).strip().splitlines()[:4]:
                print(f"    {line.replace(work, '.')}")
            return p

        def check(ok, what):
            print(f"  {'ok  ' if ok else 'FAIL'} {what}")
            if not ok:
                failures.append(what)

        # 1. A folder of the user's own.
        mydocs = os.path.join(elsewhere, "mydocs")
        os.makedirs(os.path.join(mydocs, "sub"))
        with open(os.path.join(mydocs, "thesis.tex"), "w") as f:
            f.write("work\n")
        p = run([mydocs, "--sources", "wordnet"], elsewhere)
        check(p.returncode == 2, "OUT holding the user's files: exit 2")
        check("which this script did not write" in p.stderr and ("\"sub\"" in p.stderr or "thesis.tex" in p.stderr),
              "the message names what OUT holds")
        check(sorted(os.listdir(mydocs)) == ["sub", "thesis.tex"], "the user's folder is left as it was")
        check(not os.path.exists(os.path.join(repo, ".cache")), "nothing installed or fetched before the refusal")

        # 4. The caller's own folder, and one that holds it.
        p = run([".", "--sources", "wordnet"], mydocs)
        check(p.returncode == 2 and "is the folder you are in" in p.stderr, "OUT = . is refused, exit 2")
        inner = os.path.join(work, "empty", "inner")
        os.makedirs(inner)
        p = run(["..", "--sources", "wordnet"], inner)
        check(p.returncode == 2 and "holds the folder you are in" in p.stderr, "OUT = .. (holding the caller) is refused")
        check(os.path.isdir(inner), "the caller's folder is still there")

        if not os.path.isfile("/usr/share/wordnet/data.noun"):
            skipped = "WordNet (Debian's wordnet-base) is not installed: the writing checks need a source"
        else:
            # 2. A relative OUT from another folder.
            p = run(["data", "--sources", "wordnet"], elsewhere)
            check(p.returncode == 0, "a relative OUT from another folder: exit 0")
            written = os.path.join(elsewhere, "data")
            check(os.path.isdir(written) and
                  sorted(os.listdir(written)) == ["manifest.json", "test.txt", "train.txt", "valid.txt"],
                  "written into the caller's data/")
            shipped = os.path.join(repo, "data", "models", "model.ckpt")
            check(sorted(os.listdir(os.path.join(repo, "data"))) == ["models"] and os.path.isfile(shipped) and
                  open(shipped).read() == "the shipped model\n", "the repository's data/ is left as it was")
            check(f"writing {os.path.join(elsewhere, 'data')}" in p.stdout, "it says where it writes")
            # 3. Again: replaced, and said so.
            p = run(["data", "--sources", "wordnet"], elsewhere)
            check(p.returncode == 0 and "replaced the earlier" in p.stdout, "a second run replaces its own corpus and says so")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    if skipped:
        print(f"skipped: {skipped}")
        return 77
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
