#!/usr/bin/python3
"""Cross-check attnlab's transformer against PyTorch: same weights, same batch, same logits, loss and
gradients to 1e-4 relative.

attnlab_model_dump (C++, float32, the real code path) prints a tiny model's parameters, a padded batch,
its logits, loss (label smoothing 0.1) and every gradient. Here the same weights go into
torch.nn.Transformer (encoder-decoder) or torch.nn.TransformerEncoder with a causal mask
(decoder-only), plus embeddings, in float64.

Mapping (attnlab uses x @ W with W of shape in x out; torch's Linear computes x @ weight.T):
  tok_emb (V x C)            -> nn.Embedding for source and target; tied output: logits = h @ tok_emb.T
  src_emb / tgt_emb          -> separate embeddings when untied; out_proj (C x V) -> Linear.weight = out_proj.T
  embeddings                 -> emb(tokens) * sqrt(C) + PE[:T] (interleaved sin/cos), as in the paper
  X.attn / X.self (wq,wk,wv) -> self_attn.in_proj_weight = [wq.T; wk.T; wv.T], in_proj_bias = [bq; bk; bv]
  X.cross                    -> multihead_attn (same packing); wo -> out_proj.weight = wo.T, bo -> out_proj.bias
  ffn.w1, b1, w2, b2         -> linear1.weight = w1.T, linear1.bias, linear2.weight = w2.T, linear2.bias
  enc.l.ln1/ln2              -> encoder.layers[l].norm1/norm2;  dec.l.ln1/ln2/ln3 -> decoder.layers[l].norm1/2/3
  enc.ln_f / dec.ln_f        -> encoder.norm / decoder.norm (decoder-only: a separate final LayerNorm)
  masks                      -> src_key_padding_mask = memory_key_padding_mask = (position >= src_len);
                                tgt_mask = causal (True above the diagonal); padding targets are ignore_index 0
  "norm": "pre"              -> norm_first=True
Dropout is 0 and the modules are in train mode (which keeps torch off its fused inference fast path).
"""
import argparse
import json
import math
import subprocess
import sys

import numpy as np
import torch

TOL = 1e-4


def pe_table(T, C):
    pe = np.zeros((T, C))
    for pos in range(T):
        for i in range(0, C, 2):
            angle = pos / (10000 ** (i / C))
            pe[pos, i] = math.sin(angle)
            if i + 1 < C:
                pe[pos, i + 1] = math.cos(angle)
    return torch.from_numpy(pe)


def t(params, name, transpose=False):
    p = params[name]
    a = np.asarray(p["data"], dtype=np.float64).reshape(p["shape"])
    return torch.from_numpy(a.T.copy() if transpose else a)


def load_attn(mha, params, prefix):
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([t(params, f"{prefix}.w{x}", True) for x in "qkv"]))
        mha.in_proj_bias.copy_(torch.cat([t(params, f"{prefix}.b{x}") for x in "qkv"]))
        mha.out_proj.weight.copy_(t(params, f"{prefix}.wo", True))
        mha.out_proj.bias.copy_(t(params, f"{prefix}.bo"))
    return {f"{prefix}.w{x}": ("in_proj_weight", i) for i, x in enumerate("qkv")}


def load_norm(ln, params, prefix):
    with torch.no_grad():
        ln.weight.copy_(t(params, f"{prefix}.g"))
        ln.bias.copy_(t(params, f"{prefix}.b"))


def load_ffn(layer, params, prefix):
    with torch.no_grad():
        layer.linear1.weight.copy_(t(params, f"{prefix}.w1", True))
        layer.linear1.bias.copy_(t(params, f"{prefix}.b1"))
        layer.linear2.weight.copy_(t(params, f"{prefix}.w2", True))
        layer.linear2.bias.copy_(t(params, f"{prefix}.b2"))


def grads_of_attn(mha, C):
    g = {}
    w, b = mha.in_proj_weight.grad, mha.in_proj_bias.grad
    for i, x in enumerate("qkv"):
        g[f"w{x}"] = w[i * C:(i + 1) * C].T
        g[f"b{x}"] = b[i * C:(i + 1) * C]
    g["wo"] = mha.out_proj.weight.grad.T
    g["bo"] = mha.out_proj.bias.grad
    return g


def rel_err(a, b):
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


def run_case(dump_bin, cfg):
    out = subprocess.run([dump_bin, json.dumps(cfg)], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    c, P, bt = d["config"], d["params"], d["batch"]
    C, V, H, F = c["d_model"], c["vocab_size"], c["heads"], c["d_ff"]
    B, S, T = bt["B"], bt["S"], bt["T"]
    pre = c["norm"] == "pre"
    tied = c["tie_embeddings"]
    dec_only = c["decoder_only"]
    torch.manual_seed(0)
    pe = pe_table(max(S, T), C)
    dt = torch.float64

    emb_tgt = torch.nn.Parameter(t(P, "tok_emb" if (tied or dec_only) else "tgt_emb").clone())
    emb_src = emb_tgt if (tied or dec_only) else torch.nn.Parameter(t(P, "src_emb").clone())
    out_w = None if tied else torch.nn.Parameter(t(P, "out_proj").clone())  # C x V

    tgt_in = torch.tensor(bt["tgt_in"]).view(B, T)
    tgt_out = torch.tensor(bt["tgt_out"]).view(B * T)
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    y = emb_tgt[tgt_in] * math.sqrt(C) + pe[:T]

    if dec_only:
        layer = torch.nn.TransformerEncoderLayer(C, H, F, dropout=0.0, batch_first=True, norm_first=pre, dtype=dt)
        stack = torch.nn.TransformerEncoder(layer, c["decoder_layers"], enable_nested_tensor=False)
        final = torch.nn.LayerNorm(C, dtype=dt)
        for l, lay in enumerate(stack.layers):
            load_attn(lay.self_attn, P, f"dec.{l}.self")
            load_norm(lay.norm1, P, f"dec.{l}.ln1")
            load_ffn(lay, P, f"dec.{l}.ffn")
            load_norm(lay.norm2, P, f"dec.{l}.ln2")
        load_norm(final, P, "dec.ln_f")
        stack.train()
        h = final(stack(y, mask=causal))
    else:
        model = torch.nn.Transformer(C, H, c["encoder_layers"], c["decoder_layers"], F, dropout=0.0,
                                     batch_first=True, norm_first=pre, dtype=dt)
        for l, lay in enumerate(model.encoder.layers):
            load_attn(lay.self_attn, P, f"enc.{l}.attn")
            load_norm(lay.norm1, P, f"enc.{l}.ln1")
            load_ffn(lay, P, f"enc.{l}.ffn")
            load_norm(lay.norm2, P, f"enc.{l}.ln2")
        for l, lay in enumerate(model.decoder.layers):
            load_attn(lay.self_attn, P, f"dec.{l}.self")
            load_norm(lay.norm1, P, f"dec.{l}.ln1")
            load_attn(lay.multihead_attn, P, f"dec.{l}.cross")
            load_norm(lay.norm2, P, f"dec.{l}.ln2")
            load_ffn(lay, P, f"dec.{l}.ffn")
            load_norm(lay.norm3, P, f"dec.{l}.ln3")
        load_norm(model.encoder.norm, P, "enc.ln_f")
        load_norm(model.decoder.norm, P, "dec.ln_f")
        model.train()
        src = torch.tensor(bt["src"]).view(B, S)
        pad = torch.arange(S)[None, :] >= torch.tensor(bt["src_len"])[:, None]
        x = emb_src[src] * math.sqrt(C) + pe[:S]
        h = model(x, y, tgt_mask=causal, src_key_padding_mask=pad, memory_key_padding_mask=pad)
        stack = model

    logits = (h @ emb_tgt.T if tied else h @ out_w).reshape(B * T, V)
    loss = torch.nn.functional.cross_entropy(logits, tgt_out, ignore_index=0, label_smoothing=0.1)
    loss.backward()

    errors = {"logits": rel_err(d["logits"], logits.detach().numpy()),
              "loss": abs(d["loss"] - loss.item()) / abs(loss.item())}
    G = d["grads"]
    ref = {}
    ref["tok_emb" if (tied or dec_only) else "tgt_emb"] = emb_tgt.grad
    if not (tied or dec_only):
        ref["src_emb"] = emb_src.grad
    if not tied:
        ref["out_proj"] = out_w.grad

    def attn_grads(mha, prefix):
        for k, v in grads_of_attn(mha, C).items():
            ref[f"{prefix}.{k}"] = v

    def norm_grads(ln, prefix):
        ref[f"{prefix}.g"], ref[f"{prefix}.b"] = ln.weight.grad, ln.bias.grad

    def ffn_grads(lay, prefix):
        ref[f"{prefix}.w1"], ref[f"{prefix}.b1"] = lay.linear1.weight.grad.T, lay.linear1.bias.grad
        ref[f"{prefix}.w2"], ref[f"{prefix}.b2"] = lay.linear2.weight.grad.T, lay.linear2.bias.grad

    if dec_only:
        for l, lay in enumerate(stack.layers):
            attn_grads(lay.self_attn, f"dec.{l}.self")
            norm_grads(lay.norm1, f"dec.{l}.ln1")
            ffn_grads(lay, f"dec.{l}.ffn")
            norm_grads(lay.norm2, f"dec.{l}.ln2")
        norm_grads(final, "dec.ln_f")
    else:
        for l, lay in enumerate(stack.encoder.layers):
            attn_grads(lay.self_attn, f"enc.{l}.attn")
            norm_grads(lay.norm1, f"enc.{l}.ln1")
            ffn_grads(lay, f"enc.{l}.ffn")
            norm_grads(lay.norm2, f"enc.{l}.ln2")
        for l, lay in enumerate(stack.decoder.layers):
            attn_grads(lay.self_attn, f"dec.{l}.self")
            norm_grads(lay.norm1, f"dec.{l}.ln1")
            attn_grads(lay.multihead_attn, f"dec.{l}.cross")
            norm_grads(lay.norm2, f"dec.{l}.ln2")
            ffn_grads(lay, f"dec.{l}.ffn")
            norm_grads(lay.norm3, f"dec.{l}.ln3")
        norm_grads(stack.encoder.norm, "enc.ln_f")
        norm_grads(stack.decoder.norm, "dec.ln_f")
    missing = sorted(set(G) ^ set(ref))
    if missing:
        raise SystemExit(f"gradient names differ between attnlab and the torch mapping: {missing}")
    # The key bias's gradient is exactly zero in exact arithmetic (adding q.b_k to a whole row of scores
    # leaves the softmax unchanged), so both sides hold only rounding noise there; such structurally
    # zero tensors are compared against the largest gradient of the model instead of their own scale.
    global_scale = max(float(np.max(np.abs(g.detach().numpy()))) for g in ref.values())
    worst_name, worst = None, 0.0
    for name, g in ref.items():
        gn = g.detach().numpy()
        own = float(np.max(np.abs(gn)))
        scale = own if own > 1e-6 * global_scale else global_scale
        e = float(np.max(np.abs(np.asarray(G[name], dtype=np.float64).ravel() - gn.ravel()))) / scale
        if e > worst:
            worst_name, worst = name, e
    errors["grads"] = worst
    return errors, worst_name, len(ref)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump", required=True, help="path to attnlab_model_dump")
    args = ap.parse_args()
    print(f"torch {torch.__version__}; tolerance {TOL:g} relative (float32 attnlab vs float64 torch)")
    base = dict(vocab_size=13, d_model=8, heads=2, d_ff=16, encoder_layers=2, decoder_layers=2, max_len=8, dropout=0.0)
    cases = [
        dict(base, norm="post", tie_embeddings=True),
        dict(base, norm="pre", tie_embeddings=False),
        dict(base, norm="post", tie_embeddings=False, d_model=12, heads=3),
        dict(base, decoder_only=True, norm="pre", tie_embeddings=True),
        dict(base, decoder_only=True, norm="post", tie_embeddings=False),
    ]
    passed = failed = 0
    for cfg in cases:
        errors, worst_name, n = run_case(args.dump, cfg)
        ok = all(v <= TOL for v in errors.values())
        label = ("decoder-only" if cfg.get("decoder_only") else "encoder-decoder") + \
            f" {cfg['norm']}-norm {'tied' if cfg['tie_embeddings'] else 'untied'} C={cfg['d_model']} H={cfg['heads']}"
        print(f"{'ok  ' if ok else 'FAIL'} {label}: logits {errors['logits']:.1e}, loss {errors['loss']:.1e}, "
              f"grads of {n} tensors {errors['grads']:.1e} (worst: {worst_name})")
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
