#!/usr/bin/python3
"""Cross-check `attnlab params` against PyTorch: build the same architectures from torch.nn modules,
count their parameters, and compare with the numbers attnlab prints (--format json).

  encoder-decoder  torch.nn.Transformer(d_model, nhead, N, N, d_ff) (which, like attnlab, ends each stack
                   in a LayerNorm) + one shared nn.Embedding(V, C) when tied (the output projection reuses
                   it), else source and target embeddings + nn.Linear(C, V, bias=False)
  decoder-only     torch.nn.TransformerEncoder of norm_first layers (a GPT block is an encoder layer run
                   with a causal mask: no cross-attention) + a final LayerNorm + nn.Embedding(V, C);
                   GPT-2's own layout adds a learned nn.Embedding(1024, C) of positions

The modules are built on the 'meta' device: shapes only, no memory. Run with Debian's python3-torch:
  /usr/bin/python3 tests/torch/crosscheck_params.py --attnlab build/attnlab
"""
import argparse
import json
import subprocess
import sys

import torch
from torch import nn

DEV = "meta"


def count(*modules):
    return sum(p.numel() for m in modules for p in m.parameters())


def attnlab_params(binary, config, vocab):
    out = subprocess.run([binary, "params", "--config", config, "--vocab", str(vocab), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def encoder_decoder(C, H, N, F, V, tied):
    body = nn.Transformer(d_model=C, nhead=H, num_encoder_layers=N, num_decoder_layers=N, dim_feedforward=F,
                          device=DEV)
    if tied:
        return body, count(body, nn.Embedding(V, C, device=DEV))
    return body, count(body, nn.Embedding(V, C, device=DEV), nn.Embedding(V, C, device=DEV),
                       nn.Linear(C, V, bias=False, device=DEV))


def decoder_only(C, H, N, F, V, learned_positions=0):
    layer = nn.TransformerEncoderLayer(d_model=C, nhead=H, dim_feedforward=F, norm_first=True, device=DEV)
    stack = nn.TransformerEncoder(layer, num_layers=N, norm=nn.LayerNorm(C, device=DEV),
                                  enable_nested_tensor=False)
    extra = [nn.Embedding(learned_positions, C, device=DEV)] if learned_positions else []
    return stack, count(stack, nn.Embedding(V, C, device=DEV), *extra)


failures = []


def check(what, got, want):
    ok = got == want
    print(f"  {'ok  ' if ok else 'FAIL'} {what}: attnlab {got:,}  torch {want:,}")
    if not ok:
        failures.append(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attnlab", required=True)
    args = ap.parse_args()

    # The paper's base and big models with the shared 37K vocabulary; tied and untied embeddings.
    for name, C, H, F in (("transformer-base", 512, 8, 2048), ("transformer-big", 1024, 16, 4096)):
        j = attnlab_params(args.attnlab, name, 37000)
        print(f"{name} (V = 37000)")
        body, total = encoder_decoder(C, H, 6, F, 37000, tied=True)
        check("total, tied", j["params"]["total"], total)
        check("encoder layer", j["params"]["encoder"]["per_layer"]["total"], count(body.encoder.layers[0]))
        check("decoder layer", j["params"]["decoder"]["per_layer"]["total"], count(body.decoder.layers[0]))
        check("encoder (layers + final norm)", j["params"]["encoder"]["total"], count(body.encoder))
        check("decoder (layers + final norm)", j["params"]["decoder"]["total"], count(body.decoder))
        check("self-attention block", j["params"]["decoder"]["per_layer"]["self_attention"],
              count(body.decoder.layers[0].self_attn))
        untied = next(a["params"] for a in j["reference"]["alternatives"] if a["what"].startswith("untied"))
        check("total, untied (source, target, output)", int(untied), encoder_decoder(C, H, 6, F, 37000, False)[1])

    # GPT-2 small: attnlab's count (sinusoidal positions) and with GPT-2's learned position table.
    j = attnlab_params(args.attnlab, "gpt2-small", 50257)
    print("gpt2-small (V = 50257)")
    stack, total = decoder_only(768, 12, 12, 3072, 50257)
    check("total (no position table)", j["params"]["total"], total)
    check("decoder layer", j["params"]["decoder"]["per_layer"]["total"], count(stack.layers[0]))
    check("with the learned 1024 x 768 positions", int(j["reference"]["comparable"]["params"]),
          decoder_only(768, 12, 12, 3072, 50257, learned_positions=1024)[1])
    check("the released GPT-2 checkpoint's count", int(j["reference"]["comparable"]["params"]), 124439808)

    # The lab's own small models, at a vocabulary of 97 (any would do).
    for name, C, H, F, N, dec_only in (("translate-small", 64, 4, 256, 2, False), ("lm-small", 64, 4, 256, 2, True)):
        j = attnlab_params(args.attnlab, name, 97)
        print(f"{name} (V = 97)")
        want = decoder_only(C, H, N, F, 97)[1] if dec_only else encoder_decoder(C, H, N, F, 97, True)[1]
        check("total", j["params"]["total"], want)

    if failures:
        print(f"{len(failures)} mismatch(es): {', '.join(failures)}")
        return 1
    print("all parameter counts agree with PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
