#!/usr/bin/python3
"""attnlab against PyTorch on the same model, batch, thread count and BLAS kernel, in one call.

Runs `attnlab bench --json` (the ceiling and the models; the attention sweep is skipped), then builds the
same two models in PyTorch and times them the same way (median of --repeats after one warm-up):
  encoder-decoder: torch.nn.Transformer (post-norm, ReLU, a final LayerNorm per stack, as attnlab),
                   one embedding shared by source, target and output projection (tied), x sqrt(d_model),
                   plus the interleaved sinusoidal positions; causal mask in the decoder;
  decoder-only:    torch.nn.TransformerEncoder with a causal mask (self-attention + feed-forward per
                   layer, as attnlab's decoder-only model), a final LayerNorm, tied embeddings.
float32, train mode with dropout 0 (or --dropout P, below), cross-entropy with label smoothing 0.1,
gradient clipping at 1.0, Adam(0.9, 0.98, 1e-9). "forward" is the training-mode forward (autograd
recording, as attnlab's forward keeps its activations); "step" is forward + backward + clip + Adam.
Tokens = source + target tokens.

PyTorch gets the same OpenBLAS kernel as attnlab: OPENBLAS_CORETYPE is set to the kernel attnlab
reports before torch (and with it OpenBLAS) is loaded, unless you set it yourself; so is attnlab's
OPENBLAS_THREAD_TIMEOUT (how long idle BLAS threads spin); OPENBLAS_NUM_THREADS and
torch.set_num_threads get the same thread count.

--rounds N repeats the whole comparison N times, alternating which side runs first, and reports the
median of the N per-round ratios (each round's numbers are in "rounds"). On a shared virtual machine
whose speed drifts by tens of percent within minutes, one round compares attnlab on a fast minute with
PyTorch on a slow one (or the reverse); rounds taken close together and alternated cancel most of it.

--backend cuda compares the two on the GPU instead: `attnlab bench --backend cuda` against PyTorch's
models on "cuda", both in float32 without TF32 (attnlab's gemm computes in fp32; PyTorch's
allow_tf32 is switched off for matrix products and cuDNN), every timed call followed by a
synchronize. The OpenBLAS settings above then matter for neither side. --precision tf32 (GPU only)
lets both sides' matrix products use TF32 tensor cores: `attnlab bench --precision tf32` and PyTorch's
allow_tf32 switched on; everything else stays float32 on both. --precision bf16 (GPU only) is not the
same arithmetic on both sides, because PyTorch on CUDA has no mode that rounds float32 buffers to bf16
inside its products: attnlab rounds the products' inputs to bf16 and keeps every buffer in float32
(`attnlab bench --precision bf16`), while PyTorch runs its usual bf16 mixed precision, the forward and
loss under torch.autocast("cuda", bfloat16): bf16 products and bf16 activations between them, float32
weights. That is "PyTorch eager at bf16" as people train with it, and it moves half the bytes.

--dropout P trains both sides with dropout rate P where attnlab applies it: the embeddings (source and
target) and each sub-layer's output before its residual add. PyTorch's layers also drop inside the
attention weights and between the feed-forward's two products; those two are switched off, so both
sides draw the same number of masks.

--compile runs PyTorch's models through torch.compile (its default inductor backend) instead of eager,
where that works on the machine; the compiling happens in untimed first calls, and a model whose
compilation fails is measured eager, with the reason in the report ("torch_compile").

--attention-max N (GPU only) also compares attention alone: attnlab's device sweep (`attnlab bench
--device-attention-max N`: one sequence, 16 heads of d_k = 64, no mask, n = 512 … N) against
torch.nn.functional.scaled_dot_product_attention on the same shapes, forward and forward + backward.
In fp32 and tf32 both sides run float32 attention. In bf16, attnlab runs attention's products on
tensor cores (bf16 inputs, float32 accumulation and softmax, forward and backward at d_k = 64) and
PyTorch's SDPA runs in bf16 (its flash kernel): the forward ratio is the full-size-runs issue's target
(≥ 0.7 of SDPA at n = 4096).

  /usr/bin/python3 bench/compare_torch.py --attnlab build/attnlab [--config NAME | --d-model ...]
         [--batch B] [--seq T] [--dropout P] [--threads K] [--repeats R] [--rounds N] [--backend cpu|cuda] [--precision fp32|tf32|bf16]
         [--attention-max N] [--compile] [--json] [--json-out FILE]

"""
import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attnlab", default="build/attnlab", help="the attnlab binary")
    p.add_argument("--config")
    p.add_argument("--d-model", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--layers", type=int)
    p.add_argument("--d-ff", type=int)
    p.add_argument("--vocab", type=int)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.0,
                   help="dropout rate of both sides' training-mode models, at attnlab's sites (see above)")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rounds", type=int, default=1,
                   help="repeat the comparison N times, alternating which side goes first; report median ratios")
    p.add_argument("--backend", choices=["cpu", "cuda"], default="cpu",
                   help="where both run the models: the CPU, or the GPU (attnlab --backend cuda, torch on 'cuda')")
    p.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32",
                   help="matrix products on both sides: fp32, or tf32 or bf16 on the GPU's tensor cores "
                        "(--backend cuda; bf16: PyTorch under autocast, see above)")
    p.add_argument("--compile", action="store_true",
                   help="run PyTorch's models through torch.compile where it works on this machine (else eager, "
                        "saying why)")
    p.add_argument("--attention-max", type=int, default=0,
                   help="also compare attention alone against PyTorch's SDPA, n = 512 ... N (--backend cuda; 0 = no)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--json-out", help="also write the JSON document to this file (the text report still prints)")
    a = p.parse_args()
    if a.precision != "fp32" and a.backend != "cuda":
        p.error(f"--precision {a.precision} needs --backend cuda: the CPU computes matrix products in float32 only")
    if not 0.0 <= a.dropout <= 0.99:
        p.error(f"--dropout: expected a rate from 0 to 0.99 (as attnlab bench), got {a.dropout}")
    if a.attention_max and a.backend != "cuda":
        p.error("--attention-max compares the GPU's attention: it needs --backend cuda")
    return a


def run_attnlab(a):
    cmd = [a.attnlab, "bench", "--json", "--quiet", "--attention-max", "0", "--batch", str(a.batch), "--seq", str(a.seq),
           "--threads", str(a.threads), "--repeats", str(a.repeats), "--backend", a.backend, "--precision", a.precision,
           "--dropout", repr(a.dropout)]
    if a.backend == "cuda":
        cmd += ["--device-attention-max", str(a.attention_max)]
    for flag, val in (("--config", a.config), ("--d-model", a.d_model), ("--heads", a.heads), ("--layers", a.layers),
                      ("--d-ff", a.d_ff), ("--vocab", a.vocab)):
        if val is not None:
            cmd += [flag, str(val)]
    print("running: " + " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    return cmd, json.loads(out)


def median_seconds(repeats, fn, sync=lambda: None):
    fn()  # warm-up
    sync()
    samples = []
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        fn()
        sync()  # a GPU's launches return before the work is done
        samples.append(time.perf_counter() - t)
    samples.sort()
    return samples[len(samples) // 2]


def main():
    a = parse_args()
    cmd, report = run_attnlab(a)
    kernel = report["blas"]["kernel"]
    if "OPENBLAS_CORETYPE" not in os.environ:
        os.environ["OPENBLAS_CORETYPE"] = kernel  # read when OpenBLAS loads, i.e. at `import torch`
    # attnlab restarts itself with a short OpenBLAS idle-spin timeout (backend/cpu/blas_setup.hpp); PyTorch gets
    # the same setting (it also runs its own threads between products), unless you set it yourself.
    timeout = report["blas"].get("thread_timeout", "default")
    if timeout.startswith("2^") and "OPENBLAS_THREAD_TIMEOUT" not in os.environ:
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = timeout[2:].split()[0]
    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    os.environ["OMP_NUM_THREADS"] = str(a.threads)

    import ctypes
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    dev = torch.device(a.backend)
    sync = torch.cuda.synchronize if a.backend == "cuda" else (lambda: None)
    if a.backend == "cuda":
        tf32 = a.precision == "tf32"  # fp32 products by default, as attnlab's cuBLAS calls
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    try:  # the OpenBLAS that torch loaded (Debian's torch calls BLAS through libblas.so.3 -> OpenBLAS)
        ob = ctypes.CDLL("libopenblas.so.0")
        ob.openblas_get_corename.restype = ctypes.c_char_p
        torch_kernel = ob.openblas_get_corename().decode()
        torch_blas_threads = ob.openblas_get_num_threads()
    except OSError:
        torch_kernel, torch_blas_threads = "unknown", 0
    blas_lines = []
    for line in torch.__config__.show().splitlines():
        line = line.strip()
        if line.startswith("- Build settings:") or line.startswith("Build settings:"):  # keep only the BLAS/LAPACK entries of the long flag list
            line = "- Build settings: " + ", ".join(
                w.strip() for w in line.split(":", 1)[1].split(",") if "BLAS_INFO" in w or "LAPACK_INFO" in w)
        if any(w in line for w in ("BLAS", "LAPACK", "MKL", "CPU capability")):
            blas_lines.append(line)

    c = report["config"]
    C, H, L, Fd, V, B, T = c["d_model"], c["heads"], c["layers"], c["d_ff"], c["vocab"], c["batch"], c["seq"]
    P = c["dropout"]  # the rate attnlab ran with

    def positions(n):
        pe = torch.zeros(n, C)
        pos = torch.arange(n, dtype=torch.float64)[:, None]
        i = torch.arange(0, C, 2, dtype=torch.float64)
        ang = pos / torch.pow(10000.0, i / C)
        pe[:, 0::2] = torch.sin(ang).float()
        pe[:, 1::2] = torch.cos(ang[:, : C // 2]).float()
        return pe

    class Model(nn.Module):
        def __init__(self, decoder_only):
            super().__init__()
            self.decoder_only = decoder_only
            self.emb = nn.Embedding(V, C)
            self.register_buffer("pe", positions(T))
            self.drop = nn.Dropout(P)  # on the embeddings, as attnlab
            if decoder_only:
                layer = nn.TransformerEncoderLayer(C, H, Fd, dropout=P, batch_first=True)
                self.body = nn.TransformerEncoder(layer, L, norm=nn.LayerNorm(C), enable_nested_tensor=False)
            else:
                self.body = nn.Transformer(C, H, L, L, Fd, dropout=P, batch_first=True)
            # attnlab drops each sub-layer's output (PyTorch's dropout1/2/3) but neither the attention
            # weights nor the feed-forward's hidden layer: those two off here.
            for m in self.body.modules():
                if isinstance(m, nn.MultiheadAttention):
                    m.dropout = 0.0
                if isinstance(m, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
                    m.dropout = nn.Identity()
            self.register_buffer("causal", torch.triu(torch.full((T, T), float("-inf")), diagonal=1))

        def embed(self, tok):
            return self.drop(self.emb(tok) * math.sqrt(C) + self.pe[: tok.shape[1]])

        def forward(self, src, tgt):
            if self.decoder_only:
                h = self.body(self.embed(tgt), mask=self.causal)
            else:
                h = self.body(self.embed(src), self.embed(tgt), tgt_mask=self.causal)
            return h @ self.emb.weight.t()  # tied output projection

    g = torch.Generator().manual_seed(7)
    src = torch.randint(4, V, (B, T), generator=g).to(dev)
    tgt_in = torch.randint(4, V, (B, T), generator=g).to(dev)
    tgt_out = torch.randint(4, V, (B, T), generator=g).to(dev)

    compile_status = {}  # model -> "compiled", or why torch.compile could not be used (then eager)

    def build(md, compiled):
        decoder_only = md["model"] == "decoder-only"
        torch.manual_seed(1)
        model = Model(decoder_only).to(dev).train()
        run = torch.compile(model) if compiled else model
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        params = sum(p.numel() for p in model.parameters())

        def loss_fn():
            # (a disabled torch.autocast("cuda") still asks CUDA about bf16, which a CPU-only torch cannot answer)
            with torch.autocast("cuda", dtype=torch.bfloat16) if a.precision == "bf16" else contextlib.nullcontext():
                logits = run(src, tgt_in)
                return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), label_smoothing=0.1)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

        return params, loss_fn, step

    def build_timed(md):
        """torch.compile where it works on this machine (--compile), else eager; compiling happens at the
        first calls, so they are made here, outside the timings."""
        if not a.compile:
            return build(md, False)
        try:
            built = build(md, True)
            print(f"torch {md['model']}: compiling (forward, then the training step)", file=sys.stderr, flush=True)
            built[1]()
            built[2]()
            sync()
            compile_status[md["model"]] = "compiled"
            return built
        except Exception as e:  # noqa: BLE001 -- any failure of the compiler stack means: measure eager
            why = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            compile_status[md["model"]] = f"torch.compile failed ({type(e).__name__}: {why}); eager"
            print(f"torch {md['model']}: {compile_status[md['model']]}", file=sys.stderr, flush=True)
            return build(md, False)

    torch_models = {md["model"]: build_timed(md) for md in report["models"]}

    def time_torch(rep):
        t = {"sdpa": time_sdpa(rep)}
        for name, (_, loss_fn, step) in torch_models.items():
            print(f"torch {name}: forward", file=sys.stderr, flush=True)
            fwd = median_seconds(a.repeats, loss_fn, sync)
            print(f"torch {name}: training step", file=sys.stderr, flush=True)
            t[name] = (fwd, median_seconds(a.repeats, step, sync))
        return t

    def time_sdpa(rep):
        """SDPA at the shapes of attnlab's device sweep: (1, H, n, d_k), no mask, forward and forward + backward."""
        if "device_attention" not in rep:
            return {}
        da = rep["device_attention"]
        H, dk = da["heads"], da["d_k"]
        dtype = torch.bfloat16 if a.precision == "bf16" else torch.float32
        t = {}
        for row in da["rows"]:
            n = row["n"]
            gen = torch.Generator(device=dev).manual_seed(n)
            q, k, v = (torch.randn(1, H, n, dk, device=dev, generator=gen, dtype=dtype).requires_grad_() for _ in range(3))
            dout = torch.randn(1, H, n, dk, device=dev, generator=gen, dtype=dtype)
            print(f"torch SDPA: n = {n}", file=sys.stderr, flush=True)
            fwd = median_seconds(a.repeats, lambda: F.scaled_dot_product_attention(q, k, v), sync)

            def fwd_bwd():
                q.grad = k.grad = v.grad = None
                F.scaled_dot_product_attention(q, k, v).backward(dout)
            both = median_seconds(a.repeats, fwd_bwd, sync)
            t[n] = (fwd, max(both - fwd, 1e-9))
            del q, k, v, dout
        return t

    def one_round(rep, t):
        r = {"sgemm_ceiling_gflops": rep["sgemm_ceiling_gflops"], "models": []}
        for md in rep["models"]:
            fwd, stp = t[md["model"]]
            tokens = md["tokens_per_step"]
            r["models"].append({
                "model": md["model"],
                "forward_tokens_per_s": {"attnlab": md["forward"]["tokens_per_s"], "torch": tokens / fwd,
                                         "ratio": md["forward"]["tokens_per_s"] / (tokens / fwd)},
                "step_tokens_per_s": {"attnlab": md["train_step"]["tokens_per_s"], "torch": tokens / stp,
                                      "ratio": md["train_step"]["tokens_per_s"] / (tokens / stp)},
            })
        sdpa = t.get("sdpa", {})
        if sdpa:
            r["attention"] = []
            for row in rep["device_attention"]["rows"]:
                f, b = sdpa[row["n"]]
                r["attention"].append({"n": row["n"],
                                       "forward_s": {"attnlab": row["forward_s"], "torch_sdpa": f, "ratio": f / row["forward_s"]},
                                       "backward_s": {"attnlab": row["backward_s"], "torch_sdpa": b, "ratio": b / row["backward_s"]}})
        return r

    # Round 0: attnlab ran first (above, before torch was imported); later rounds alternate.
    rounds = [one_round(report, time_torch(report))]
    for i in range(1, max(1, a.rounds)):
        print(f"round {i + 1} of {a.rounds}", file=sys.stderr, flush=True)
        if i % 2:
            t = time_torch(report)
            _, rep = run_attnlab(a)
        else:
            _, rep = run_attnlab(a)
            t = time_torch(rep)
        rounds.append(one_round(rep, t))

    def median(xs):
        xs = sorted(xs)
        n = len(xs)
        return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

    results = []
    for k, md in enumerate(report["models"]):
        entry = {"model": md["model"], "parameters": {"attnlab": md["parameters"], "torch": torch_models[md["model"]][0]}}
        for key in ("forward_tokens_per_s", "step_tokens_per_s"):
            per = [r["models"][k][key] for r in rounds]
            entry[key] = {side: median([x[side] for x in per]) for side in ("attnlab", "torch", "ratio")}
            entry[key]["ratio_range"] = [min(x["ratio"] for x in per), max(x["ratio"] for x in per)]
        results.append(entry)
    attention = []
    for k, row in enumerate(rounds[0].get("attention", [])):
        entry = {"n": row["n"]}
        for key in ("forward_s", "backward_s"):
            per = [r["attention"][k][key] for r in rounds]
            entry[key] = {side: median([x[side] for x in per]) for side in ("attnlab", "torch_sdpa", "ratio")}
            entry[key]["ratio_range"] = [min(x["ratio"] for x in per), max(x["ratio"] for x in per)]
        attention.append(entry)

    out = {
        "attnlab_command": " ".join(cmd),
        "config": c,
        "threads": a.threads,
        "backend": a.backend,
        "precision": a.precision,
        "torch_mode": "torch.compile" if a.compile else "eager",
        "torch_compile": compile_status or None,
        "torch_precision": {"fp32": "float32, allow_tf32 off", "tf32": "float32, allow_tf32 on",
                            "bf16": "torch.autocast(cuda, bfloat16): bf16 products and activations, fp32 weights"}[a.precision],
        "device": torch.cuda.get_device_name(0) if a.backend == "cuda" else None,
        "attnlab_blas": report["blas"],
        "torch": {"version": torch.__version__, "openblas_kernel": torch_kernel, "openblas_threads": torch_blas_threads,
                  "torch_threads": torch.get_num_threads(), "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
                  "OPENBLAS_THREAD_TIMEOUT": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
                  "config_blas_lines": blas_lines},
        "sgemm_ceiling_gflops": report["sgemm_ceiling_gflops"],
        "rounds_run": len(rounds),
        "what": "tokens/s are medians over the rounds; ratio is the median of the per-round ratios "
                "(ratio_range: the lowest and highest); rounds alternate which side runs first",
        "rounds": rounds,
        "load_average": [report["machine"]["load_average_at_start"], report["machine"]["load_average_at_end"]],
        "models": results,
    }
    if attention:
        da = report["device_attention"]
        out["attention"] = {
            "what": f"one sequence, {da['heads']} heads of d_k = {da['d_k']}, no mask; attnlab's fused kernels "
                    f"({da.get('precision', 'float32')}) against "
                    f"torch.nn.functional.scaled_dot_product_attention in "
                    f"{'bfloat16' if a.precision == 'bf16' else 'float32'}; ratio = torch seconds / attnlab seconds "
                    f"(above 1: attnlab faster); backward = forward + backward minus forward for torch",
            "rows": attention}
    if a.json_out:
        tmp = a.json_out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=2)
        os.replace(tmp, a.json_out)
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"attnlab vs PyTorch {torch.__version__}: {c['name']}, d_model {C}, {H} heads, d_ff {Fd}, {L} layers, "
          f"vocab {V}, batch {B} x {T} tokens, dropout {P:g}, {a.threads} thread(s)")
    if a.backend == "cuda":
        sides = {"fp32": "float32, TF32 off on both sides", "tf32": "TF32 matrix products on both sides",
                 "bf16": "attnlab: bf16 products on float32 buffers; torch: autocast bf16"}[a.precision]
        print(f"  both on the GPU: {out['device']} ({sides})")
    if a.compile:
        for name, status in compile_status.items():
            print(f"  torch {name}: {status}")
    print(f"  attnlab: OpenBLAS kernel {report['blas']['kernel']} ({report['blas']['threads']} threads)")
    print(f"  torch:   OpenBLAS kernel {torch_kernel} ({torch_blas_threads} BLAS threads, "
          f"{torch.get_num_threads()} torch threads); OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}")
    for l in blas_lines:
        print(f"           torch config: {l}")
    print(f"  load average during attnlab's run: {out['load_average'][0]} -> {out['load_average'][1]}")
    if len(rounds) > 1:
        print(f"  {len(rounds)} rounds, alternating which side ran first; medians over the rounds, and the "
              f"range of the per-round ratios")
    print(f"  {'':<30} {'attnlab tok/s':>10} {'torch tok/s':>14} {'ratio':>8}  {'range':>13}")
    for r in results:
        for key, label in (("forward_tokens_per_s", "forward"), ("step_tokens_per_s", "training step")):
            x = r[key]
            lo, hi = x["ratio_range"]
            print(f"  {r['model'] + ' ' + label:<30} {x['attnlab']:>10.0f} {x['torch']:>14.0f} {x['ratio']:>7.2f}x"
                  f"  {lo:>5.2f}-{hi:.2f}x")
    if attention:
        print(f"  attention alone: {out['attention']['what']}")
        print(f"  {'n':>7} {'attnlab fwd':>12} {'SDPA fwd':>10} {'ratio':>7}   {'attnlab bwd':>12} {'SDPA bwd':>10} {'ratio':>7}")
        for r in attention:
            f, b = r["forward_s"], r["backward_s"]
            print(f"  {r['n']:>7} {f['attnlab'] * 1e3:>10.3f}ms {f['torch_sdpa'] * 1e3:>8.3f}ms {f['ratio']:>6.2f}x"
                  f"   {b['attnlab'] * 1e3:>10.3f}ms {b['torch_sdpa'] * 1e3:>8.3f}ms {b['ratio']:>6.2f}x")


if __name__ == "__main__":
    main()
