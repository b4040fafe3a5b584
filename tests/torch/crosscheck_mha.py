#!/usr/bin/python3
"""Independent cross-check of `attnlab attention` against torch.nn.MultiheadAttention.

Random problems (several n, m, d_model, h; with and without a causal mask and a cross-attention
memory) are written in attnlab's JSON schema, run through `attnlab attention --format json`, and
through torch.nn.MultiheadAttention (bias off) in float64 on the same float32 numbers. Outputs and
per-head attention weights must agree to 1e-5 relative (max |a - b| / max |b|).

Weight mapping (torch computes x @ W.T + b; attnlab computes x @ W + b with W of shape d_model x d_k):
  torch in_proj_weight = [W_q; W_k; W_v], each E x E, rows i*d_k:(i+1)*d_k belong to head i, so
    attnlab heads[i].w_q = W_q[i*d_k:(i+1)*d_k, :].T      (E x d_k), likewise w_k, w_v
  torch out_proj.weight (E x E): output = concat @ out_proj.weight.T, so attnlab w_o = out_proj.weight.T
  torch attn_mask (bool, True = may NOT attend) = not attnlab mask.
  torch in_proj_bias = [b_q; b_k; b_v]: attnlab heads[i].b_q = b_q[i*d_k:(i+1)*d_k], likewise b_k, b_v;
  torch out_proj.bias = attnlab b_o. Eight of the problems carry biases; the rest use bias=False.
A problem without w_o is compared with torch's out_proj set to the identity (and a zero out_proj bias).
Run with /usr/bin/python3 (Debian's python3-torch).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

TOL = 1e-5


def rel_err(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    scale = max(np.max(np.abs(b)), 1e-12)
    return float(np.max(np.abs(a - b)) / scale)


def make_problem(rng, n, m, d_model, h, cross, causal, with_wo, with_bias=False):
    d_k = d_model // h
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x = f32(n, d_model)
    mem = f32(m, d_model) if cross else None
    scale = np.float32(1.0 / np.sqrt(d_model))
    w_q, w_k, w_v = (f32(d_model, d_model) * scale for _ in range(3))  # torch layout (out x in)
    w_o = f32(d_model, d_model) * scale if with_wo else np.eye(d_model, dtype=np.float32)
    kv_len = m if cross else n
    problem = {
        "tokens": [f"t{i}" for i in range(n)],
        "x": x.tolist(),
        "heads": [
            {
                "w_q": w_q[i * d_k:(i + 1) * d_k, :].T.tolist(),
                "w_k": w_k[i * d_k:(i + 1) * d_k, :].T.tolist(),
                "w_v": w_v[i * d_k:(i + 1) * d_k, :].T.tolist(),
            }
            for i in range(h)
        ],
        "mask": "causal" if causal else "none",
    }
    if cross:
        problem["memory"] = mem.tolist()
    if with_wo:
        problem["w_o"] = w_o.T.tolist()
    biases = None
    if with_bias:
        # torch's in_proj_bias = [b_q; b_k; b_v]; head i owns entries i*d_k:(i+1)*d_k of each.
        biases = [f32(d_model) * np.float32(0.5) for _ in range(4)]
        for i, head in enumerate(problem["heads"]):
            head["b_q"] = biases[0][i * d_k:(i + 1) * d_k].tolist()
            head["b_k"] = biases[1][i * d_k:(i + 1) * d_k].tolist()
            head["b_v"] = biases[2][i * d_k:(i + 1) * d_k].tolist()
        if with_wo:
            problem["b_o"] = biases[3].tolist()
        else:
            biases[3] = np.zeros(d_model, dtype=np.float32)
    return problem, dict(x=x, mem=mem, w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, kv_len=kv_len, biases=biases)


def torch_reference(n, d_model, h, causal, t):
    b = t["biases"]
    mha = torch.nn.MultiheadAttention(d_model, h, bias=b is not None, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([t["w_q"], t["w_k"], t["w_v"]]).astype(np.float64)))
        mha.out_proj.weight.copy_(torch.from_numpy(t["w_o"].astype(np.float64)))
        if b is not None:
            mha.in_proj_bias.copy_(torch.from_numpy(np.concatenate(b[:3]).astype(np.float64)))
            mha.out_proj.bias.copy_(torch.from_numpy(b[3].astype(np.float64)))
    x = torch.from_numpy(t["x"].astype(np.float64))[None]
    kv = x if t["mem"] is None else torch.from_numpy(t["mem"].astype(np.float64))[None]
    mask = None
    if causal:
        mask = torch.triu(torch.ones(n, t["kv_len"], dtype=torch.bool), diagonal=1)
    with torch.no_grad():
        out, weights = mha(x, kv, kv, attn_mask=mask, need_weights=True, average_attn_weights=False)
    return out[0].numpy(), weights[0].numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnlab", required=True, help="path to the attnlab binary")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"torch {torch.__version__}, numpy {np.__version__}, tolerance {TOL:g} relative")

    cases = []
    for n, m, d_model, h in [(1, 3, 4, 2), (4, 4, 8, 2), (5, 9, 12, 3), (16, 7, 32, 4), (33, 20, 64, 8), (64, 64, 64, 1)]:
        for cross in (False, True):
            for causal in (False, True):
                with_wo = (n + m + causal) % 2 == 0 or h == 1
                cases.append((n, m, d_model, h, cross, causal, with_wo, False))
    # The same with biases (b_q, b_k, b_v per head; b_o with W_O), as trained models carry them.
    for n, m, d_model, h in [(3, 5, 8, 2), (12, 7, 24, 3)]:
        for cross in (False, True):
            for with_wo in (False, True):
                cases.append((n, m, d_model, h, cross, not with_wo, with_wo, True))
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for idx, (n, m, d_model, h, cross, causal, with_wo, with_bias) in enumerate(cases):
            problem, tensors = make_problem(rng, n, m, d_model, h, cross, causal, with_wo, with_bias)
            path = os.path.join(tmp, f"p{idx}.json")
            with open(path, "w") as f:
                json.dump(problem, f)
            proc = subprocess.run([args.attnlab, "attention", "--input", path, "--format", "json"],
                                  capture_output=True, text=True)
            label = (f"n={n} m={m if cross else n} d_model={d_model} h={h} "
                     f"{'cross' if cross else 'self'} {'causal' if causal else 'no-mask'} "
                     f"{'W_O' if with_wo else 'no-W_O'}{' biases' if with_bias else ''}")
            if proc.returncode != 0:
                print(f"FAIL {label}: attnlab exited {proc.returncode}: {proc.stderr.strip()}")
                failed += 1
                continue
            got = json.loads(proc.stdout)
            ref_out, ref_w = torch_reference(n, d_model, h, causal, tensors)
            e_out = rel_err(got["output"], ref_out)
            e_w = max(rel_err(got["heads"][i]["weights"], ref_w[i]) for i in range(h))
            ok = e_out <= TOL and e_w <= TOL
            print(f"{'ok  ' if ok else 'FAIL'} {label}: output rel err {e_out:.2e}, weights rel err {e_w:.2e}")
            passed += ok
            failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
