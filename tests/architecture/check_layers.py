#!/usr/bin/env python3
"""The architecture, checked: every #include in src/ against the layer table in src/CMakeLists.txt
(ATTNLAB_LAYERS), and the table in docs/architecture.md against the same table.

A source file belongs to the layer whose folder (or file) entry matches it most specifically. Fails when
  - a file under src/ belongs to no layer;
  - a file includes a header of a layer its own layer does not declare (an upward or sideways include);
  - a layer declares a dependency that none of its files includes (the table says more than the code);
  - the declared dependencies are not acyclic;
  - docs/architecture.md's layer table differs from the build's;
  - a unit test's file name does not start with the layer it tests (tests/unit/test_<layer>[_topic].cpp).
Prints one line per problem and exits 1, or prints a summary and exits 0.

  /usr/bin/python3 tests/architecture/check_layers.py [--root DIR] [--planted]

--planted checks the checker: on a copy of the tree, an include of the CPU backend planted in the
model (which may see only the backend interface) must make it fail, naming that line.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def parse_layers(cmake_text):
    m = re.search(r"set\(ATTNLAB_LAYERS\s*\n(.*?)\n\)", cmake_text, re.S)
    if not m:
        raise SystemExit("check_layers: src/CMakeLists.txt has no set(ATTNLAB_LAYERS ...) block")
    layers = []
    for row in re.findall(r'"([^"]*)"', m.group(1)):
        fields = row.split("|")
        if len(fields) != 4:
            raise SystemExit(f"check_layers: a layer row needs 4 fields separated by |, got {row!r}")
        name, places, deps, what = fields
        layers.append({
            "name": name,
            "places": [p for p in places.split(",") if p],
            "deps": [] if deps == "-" else deps.split(","),
            "what": what,
        })
    return layers


def layer_of(path, layers):
    """The layer of a path relative to src/: the longest matching file or folder entry."""
    best, best_len = None, -1
    for layer in layers:
        for place in layer["places"]:
            if path == place or path.startswith(place + "/"):
                # a file entry is as specific as it gets; deeper folders beat shallower ones
                length = 10_000 if path == place else len(place)
                if length > best_len:
                    best, best_len = layer["name"], length
    return best


def planted(root):
    """The checker on a copy of src/, docs/architecture.md and tests/unit's names, with
    #include "backend/cpu/ops.hpp" planted in model/transformer.cpp: it must fail on that line."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
        os.makedirs(os.path.join(tmp, "docs"))
        shutil.copy(os.path.join(root, "docs", "architecture.md"), os.path.join(tmp, "docs"))
        os.makedirs(os.path.join(tmp, "tests", "unit"))
        for f in os.listdir(os.path.join(root, "tests", "unit")):
            open(os.path.join(tmp, "tests", "unit", f), "w").close()
        clean = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", tmp], capture_output=True, text=True)
        if clean.returncode != 0:
            print("check_layers --planted: the unplanted copy already fails:\n" + clean.stdout)
            return 1
        target = os.path.join(tmp, "src", "model", "transformer.cpp")
        text = open(target, encoding="utf-8").read()
        open(target, "w", encoding="utf-8").write('#include "backend/cpu/ops.hpp"\n' + text)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", tmp], capture_output=True, text=True)
        want = "src/model/transformer.cpp:1: includes backend/cpu/ops.hpp (layer backend_cpu), which layer model does not declare"
        if r.returncode != 1 or want not in r.stdout:
            print(f"check_layers --planted: expected exit 1 and \"{want}\", got exit {r.returncode}:\n{r.stdout}")
            return 1
    print("check_layers --planted: ok (the model including the CPU backend is caught)")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--planted", action="store_true", help="check that a planted model → backend/cpu include fails")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if args.planted:
        return planted(root)
    src = os.path.join(root, "src")
    layers = parse_layers(open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8").read())
    by_name = {l["name"]: l for l in layers}
    problems = []

    for l in layers:
        for d in l["deps"]:
            if d not in by_name:
                problems.append(f"layer {l['name']}: depends on {d}, which is not a layer")

    # Acyclic: a depth-first search over the declared edges.
    state = {}

    def visit(n, trail):
        if state.get(n) == 1:
            problems.append("layer cycle: " + " → ".join(trail + [n]))
            return
        if state.get(n) == 2:
            return
        state[n] = 1
        for d in by_name.get(n, {"deps": []})["deps"]:
            visit(d, trail + [n])
        state[n] = 2

    for l in layers:
        visit(l["name"], [])

    used = {l["name"]: set() for l in layers}
    files = 0
    includes = 0
    for dirpath, _, names in os.walk(src):
        for f in sorted(names):
            if not f.endswith((".cpp", ".hpp", ".cu", ".cuh", ".h")):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src).replace(os.sep, "/")
            # the CUDA emulation's stand-ins for <cuda_runtime.h> and friends belong with the CUDA layer
            own = layer_of(rel, layers)
            if own is None:
                problems.append(f"src/{rel}: belongs to no layer (add its folder to ATTNLAB_LAYERS)")
                continue
            files += 1
            for n, line in enumerate(open(full, encoding="utf-8", errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                if not os.path.exists(os.path.join(src, inc)):
                    continue  # a header next to the file, or generated (render/explorer_assets.hpp)
                includes += 1
                other = layer_of(inc, layers)
                if other is None or other == own:
                    continue
                if other not in by_name[own]["deps"]:
                    problems.append(f"src/{rel}:{n}: includes {inc} (layer {other}), which layer {own} does not declare")
                else:
                    used[own].add(other)
    for l in layers:
        for d in l["deps"]:
            if d in by_name and d not in used[l["name"]]:
                problems.append(f"layer {l['name']}: declares {d}, but none of its files includes it")

    # docs/architecture.md: | folder | library | depends on | what it is for |
    doc = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    rows = {}
    for line in doc.splitlines():
        m = re.match(r"\|\s*`?([a-z_]+)`?\s*\|\s*(.*?)\s*\|\s*([^|]*attnlab[^|]*?)\s*\|\s*(.*?)\s*\|", line)
        if m and m.group(1) in by_name:
            deps = re.findall(r"[a-z_]+", m.group(4)) if m.group(4) not in ("", "—", "-") else []
            rows[m.group(1)] = set(deps)
    for l in layers:
        if l["name"] not in rows:
            problems.append(f"docs/architecture.md: the layer table has no row for {l['name']}")
        elif rows[l["name"]] != set(l["deps"]):
            problems.append(f"docs/architecture.md: layer {l['name']} depends on {sorted(rows[l['name']])} there, "
                            f"{sorted(l['deps'])} in the build")

    # Unit tests are found by the layer they test: tests/unit/test_<layer>[_topic].cpp.
    unit = os.path.join(root, "tests", "unit")
    names = sorted((l["name"] for l in layers), key=len, reverse=True)
    for f in sorted(os.listdir(unit)):
        if f.startswith("test_") and f.endswith(".cpp"):
            stem = f[len("test_"):-len(".cpp")]
            if not any(stem == n or stem.startswith(n + "_") for n in names):
                problems.append(f"tests/unit/{f}: name it test_<layer>[_topic].cpp after the layer it tests "
                                f"(one of {', '.join(sorted(names))})")

    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s)")
        return 1
    print(f"check_layers: ok ({len(layers)} layers, {files} files, {includes} includes of src/ headers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
