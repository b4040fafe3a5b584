#!/usr/bin/python3
"""`attnlab ship`, checked apart from the C++ that writes and reads checkpoints.

1. The shipped file is read here with its format (docs/checkpoint.md) by hand: magic, version 2, the
   FNV-1a trailer, the header's tensor table; every parameter stored in bf16 must be the float32
   parameter of the run rounded to nearest, ties to even, as PyTorch's bfloat16 conversion rounds it
   (NumPy by hand when torch is missing), and the tensor data must be 2 bytes a parameter.
2. What ship says about the narrowing is recounted by another command: `attnlab eval --limit N` on
   the run and on the shipped model gives the exact-match counts ship reports for both, and the
   number of differing translations must be small (translate-small: measured 0 of 300).
3. A language model (lm-small): both losses reported, within 0.01 of each other.

Usage: ship_bf16.py ATTNLAB
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import checkpoint  # noqa: E402  (tests/support/checkpoint.py: the format read by hand)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def read_checkpoint(path):
    """(version, header, tensor bytes, {name: float32 array}) of a checkpoint's params, read by hand."""
    version, header, data, params = checkpoint.read(path)
    return version, header, data, {k: v.reshape(-1) for k, v in params.items()}


def bf16_round(x):
    """float32 → bf16 → float32, to nearest even: PyTorch's conversion, or NumPy by hand."""
    try:
        import torch
        return torch.from_numpy(x.copy()).to(torch.bfloat16).to(torch.float32).numpy()
    except ImportError:
        b = x.view(np.uint32).astype(np.uint64)
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        return (b.astype(np.uint32) << 16).view(np.float32)


def main():
    attnlab = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = os.path.join(ROOT, "data/models/translate-small")
        out = os.path.join(tmp, "small-bf16")
        report = json.loads(run([attnlab, "ship", "--model", run_dir, "--out", out, "--compare", "300", "--format", "json"]))
        v1, h1, d1, fp32 = read_checkpoint(os.path.join(run_dir, "model.ckpt"))
        v2, h2, d2, b16 = read_checkpoint(os.path.join(out, "model.ckpt"))
        if v1 != 1 or v2 != 2:
            failures.append(f"versions {v1} and {v2}, expected 1 (the run's) and 2 (shipped in bf16)")
        if any(t.get("dtype") != "bf16" for t in h2["tensors"]):
            failures.append("a shipped tensor is not marked bf16")
        n = sum(a.size for a in fp32.values())
        if len(d2) != 2 * n:
            failures.append(f"shipped tensor data is {len(d2)} bytes, expected 2 × {n}")
        wrong = sum(int(np.count_nonzero(bf16_round(fp32[k]).view(np.uint32) != b16[k].view(np.uint32))) for k in fp32)
        if wrong:
            failures.append(f"{wrong} of {n} shipped parameters are not the run's rounded to nearest even")
        if h2["vocab"] != h1["vocab"] or h2["config"] != h1["config"]:
            failures.append("the shipped header's config or vocabulary differs from the run's")
        c = report["comparison"]
        print(f"translate-small: {n} parameters, {report['bytes_before']} → {report['bytes_shipped']} bytes; "
              f"{c['different_translation']} of {c['test_sentences']} test translations differ")
        if c["same_translation"] + c["different_translation"] != c["test_sentences"] or \
                len(c["differences"]) != c["different_translation"]:
            failures.append(f"the comparison's counts disagree: {c}")
        if c["different_translation"] > 3:
            failures.append(f"{c['different_translation']} of 300 translations differ in bf16 (measured 0 when shipped)")
        for model, key in ((run_dir, "exact_match_fp32"), (out, "exact_match_shipped")):
            e = json.loads(run([attnlab, "eval", "--model", model, "--limit", "300", "--format", "json"]))
            if e["exact_match"]["correct"] != c[key]:
                failures.append(f"eval counts {e['exact_match']['correct']} exact matches for {model}, ship reported {c[key]}")
            want = "bf16" if model == out else "fp32"
            if e["weights"] != want:
                failures.append(f"eval says weights {e['weights']} for {model}, expected {want}")

        lm_out = os.path.join(tmp, "lm-bf16")
        lm = json.loads(run([attnlab, "ship", "--model", os.path.join(ROOT, "data/models/lm-small"), "--out", lm_out,
                             "--compare", "100", "--format", "json"]))["comparison"]
        print(f"lm-small: loss {lm['loss_fp32']:.4f} → {lm['loss_shipped']:.4f} in bf16")
        if abs(lm["loss_fp32"] - lm["loss_shipped"]) > 0.01:
            failures.append(f"lm-small's test loss moved by more than 0.01 in bf16: {lm}")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
