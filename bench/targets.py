#!/usr/bin/env python3
"""The full-size-runs issue's three speed targets, read from one GPU kit run's JSON reports.

usage: bench/targets.py LOGS_DIR [--json-out FILE]

LOGS_DIR is the folder bench/gpu.sh writes its reports into (logs/, also in logs.tar.gz). Read:
  compare_torch_cuda_bf16.json  Transformer-base's encoder-decoder training step against PyTorch eager
                                under bf16 autocast on the same GPU (target: at least 1.2 times its
                                tokens/s), and the fused attention forward against
                                scaled_dot_product_attention at n = 4096, d_k = 64, bf16 (target: at
                                least 70 % of its speed)
  bench_cuda_bf16_gpt2.json     the GPT-2-small-sized decoder-only training step (8 x 1024 tokens) as a
                                fraction of the GPU's bf16 datasheet peak (target: at least 35 %)

Prints one line per target: the figure, the target and "met", "not met" or "not measured" with why (a
report missing or without that figure: a step cut short, no CUDA torch). The figures are the reports'
own (medians over alternated rounds for the comparisons), not recomputed. Exits 0 whatever the
verdicts, 2 when LOGS_DIR is not a folder or a report is not valid JSON.
"""
import argparse
import json
import os
import sys

ATTENTION_N = 4096


def fail(message):
    """Bad input: one line on stderr, exit 2."""
    print(f"targets.py: {message}", file=sys.stderr)
    sys.exit(2)


def load(logs, name):
    """The report NAME in LOGS, or None when it is not there."""
    path = os.path.join(logs, name)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: not a JSON report ({e})")


def training_step(logs, name, model, point, field):
    """MODEL's training-step figures (the dict POINT) in the report NAME, when they include FIELD:
    (report, figures, None), else (report or None, None, why not)."""
    r = load(logs, name)
    if r is None:
        return None, None, f"{name} is missing"
    m = next((m for m in r.get("models", []) if m.get("model") == model), {})
    p = m.get(point, {})
    if p.get(field) is None:
        return r, None, f"{name} has no {model} training step with {point}.{field}"
    return r, p, None


def step_vs_torch(logs):
    name = "compare_torch_cuda_bf16.json"
    _, tps, why = training_step(logs, name, "encoder-decoder", "step_tokens_per_s", "ratio")
    if why:
        return None, why
    return tps["ratio"], f"{name}: attnlab {tps['attnlab']:,.0f} tokens/s, PyTorch {tps['torch']:,.0f}"


def attention_vs_sdpa(logs):
    name = "compare_torch_cuda_bf16.json"
    r = load(logs, name)
    if r is None:
        return None, f"{name} is missing"
    for row in r.get("attention", {}).get("rows", []):
        if row.get("n") == ATTENTION_N:
            f = row["forward_s"]
            return f["ratio"], (f"{name}: n = {ATTENTION_N}, forward {f['attnlab'] * 1e3:.3f} ms, "
                                f"SDPA {f['torch_sdpa'] * 1e3:.3f} ms")
    return None, f"{name} has no attention row at n = {ATTENTION_N}"


def gpt2_fraction_of_peak(logs):
    name = "bench_cuda_bf16_gpt2.json"
    r, step, why = training_step(logs, name, "decoder-only", "train_step", "fraction_of_peak")
    if why:
        return None, why
    gpu = r.get("gpu", {})
    peak, source = gpu.get("peak_tflops", "?"), gpu.get("peak_source", "peak unknown")
    return step["fraction_of_peak"], f"{name}: {step['gflops'] / 1e3:.1f} TFLOP/s of {peak} ({source})"


TARGETS = [
    ("transformer_base_step_vs_torch_eager_bf16", "Transformer-base training step, times PyTorch eager (bf16)", 1.2,
     lambda v: f"{v:.2f}x", step_vs_torch),
    ("attention_forward_vs_sdpa_n4096", "attention forward at n = 4096, d_k = 64, share of SDPA's speed (bf16)", 0.70,
     lambda v: f"{100 * v:.0f}%", attention_vs_sdpa),
    ("gpt2_small_step_fraction_of_bf16_peak", "GPT-2-small training step, share of the GPU's bf16 peak", 0.35,
     lambda v: f"{100 * v:.1f}%", gpt2_fraction_of_peak),
]


def evaluate(logs):
    """Each target's verdict from the reports in the folder LOGS, in TARGETS' order: dicts of target,
    what, value (None when not measured), goal, verdict and source. A report that holds the right
    entries but lacks a figure a rule reads gives "not measured" with what was missing."""
    out = []
    for key, what, goal, _, measure in TARGETS:
        try:
            value, source = measure(logs)
        except (KeyError, TypeError, ValueError) as e:
            value, source = None, f"a report lacks a figure this target reads ({type(e).__name__}: {e})"
        verdict = "not measured" if value is None else ("met" if value >= goal else "not met")
        out.append({"target": key, "what": what, "value": value, "goal": goal, "verdict": verdict, "source": source})
    return out


def main():
    ap = argparse.ArgumentParser(description="The full-size-runs issue's speed targets from a GPU kit run's reports.")
    ap.add_argument("logs", help="the folder of the kit's JSON reports (its logs/)")
    ap.add_argument("--json-out", help="also write the verdicts as JSON to this file")
    a = ap.parse_args()
    if not os.path.isdir(a.logs):
        fail(f"{a.logs}: not a folder (expected the GPU kit's logs/)")
    out = evaluate(a.logs)
    print(f"targets (from {a.logs}):")
    for t, (_, _, _, show, _) in zip(out, TARGETS):
        figure = "-" if t["value"] is None else show(t["value"])
        print(f"  {t['what']}: {figure} (target {show(t['goal'])}): {t['verdict']}; {t['source']}")
    if a.json_out:
        tmp = a.json_out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"targets": out}, f, indent=2)
        os.replace(tmp, a.json_out)


if __name__ == "__main__":
    main()
