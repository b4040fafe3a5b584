#!/usr/bin/env python3
"""Files one GPU kit run's reports into bench/results/ and writes their figures as Markdown for
docs/performance.md ("On a GPU") and docs/cuda.md.

usage: bench/collect_gpu.py OUTDIR [--results DIR] [--markdown FILE]

OUTDIR is what bench/gpu.sh wrote and the device tool brought back: summary.json (the GPU, driver,
versions and every step's status) and logs.tar.gz (each step's log, and each report's JSON). The
summary and every *.json inside logs.tar.gz are copied, unchanged, to
RESULTS/gpu-DATE-GPU/ (RESULTS: bench/results; DATE: when the run started; GPU: the device's name),
a folder that must not exist yet: a second collection of the same run stops with exit 2 rather than
overwrite the first. The folder is written under a temporary name and renamed when complete.

Then prints (or writes to FILE) one Markdown section: the machine, the kit's steps, and for each
report its figures (the models' tokens/s, TFLOP/s and share of the datasheet peak; the device's gemm
ceiling and the bf16-storage comparison; the attention sweep; the PyTorch comparisons; the speed
targets' verdicts, from the kit's targets.json or, where its step did not run, by bench/targets.py
from the filed reports), each under the name of the kit's step that wrote it (bench/gpu.sh has the
command; gpu.log, its output). The figures are the reports' own, not recomputed. From the verbose
kernel tests' log (kernel_tests_verbose.log), which linear-layer products ran as one cuBLASLt matmul
with the bias epilogue and which cuBLASLt declined (the tests' MESSAGE lines).

Exit status: 0 when filed, 2 for bad input (no summary.json, a report that is not JSON, the
destination already there), naming the file and what was wrong.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    print(f"collect_gpu.py: {message}", file=sys.stderr)
    sys.exit(2)


def slug(text):
    """"NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"."""
    s = re.sub(r"[^a-z0-9]+", "-", (text or "unknown-gpu").lower()).strip("-")
    return s or "unknown-gpu"


def read_archive(tar_path):
    """({name: (bytes, parsed JSON)} for every regular file ending in .json in the archive, {name: text}
    for every one ending in .log), by base name; members with a folder in their name, or links, are
    passed over (the kit writes flat names)."""
    reports, logs = {}, {}
    if not os.path.exists(tar_path):
        return reports, logs
    try:
        with tarfile.open(tar_path) as tar:
            for m in tar.getmembers():
                name = m.name[2:] if m.name.startswith("./") else m.name
                if not m.isfile() or "/" in name or not name.endswith((".json", ".log")):
                    continue
                data = tar.extractfile(m).read()
                if name.endswith(".log"):
                    logs[name] = data.decode("utf-8", "replace")
                    continue
                try:
                    reports[name] = (data, json.loads(data))
                except ValueError as e:
                    fail(f"{tar_path}:{name}: not a JSON report ({e})")
    except tarfile.TarError as e:
        fail(f"{tar_path}: not a readable tar archive ({e})")
    return reports, logs


# The kernel tests' MESSAGE for each product with a bias or ReLU they ran on the GPU
# (tests/gpu/test_cuda_kernels.cpp): "gemm_bias m 37 n 33 k 129 bf16 ReLU: cuBLASLt's epilogue".
EPILOGUE_LINE = re.compile(r"MESSAGE: (gemm_bias(?:_bf16_storage)?) (m \d+ n \d+ k \d+[^:]*): "
                           r"(cuBLASLt's epilogue|two-step \(cuBLASLt declined\))")


def epilogue_section(log, lines):
    """Per product kind, how many cases cuBLASLt fused, and the ones it declined."""
    seen = {}
    for m in EPILOGUE_LINE.finditer(log or ""):
        fused, declined = seen.setdefault(m.group(1), ([], []))
        (fused if m.group(3).startswith("cuBLASLt") else declined).append(m.group(2).strip())
    if not seen:
        return
    lines.append("cuBLASLt's bias epilogue (kernel_tests_verbose):")
    lines.append("")
    for kind, (fused, declined) in sorted(seen.items()):
        text = f"- `{kind}`: one cuBLASLt matmul in {len(fused)} of {len(fused) + len(declined)} cases"
        if declined:
            text += "; declined (two-step): " + "; ".join(declined[:8]) + ("; …" if len(declined) > 8 else "")
        lines.append(text)
    lines.append("")


def fmt_rate(x):
    return "-" if x is None else f"{x:,.0f}"


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def table(lines, heads, rows):
    """A Markdown table: HEADS the column titles, the first left-aligned and the rest right-aligned
    (numbers); ROWS lists of cells. Then a blank line."""
    lines.append("| " + " | ".join(heads) + " |")
    lines.append("|" + "---|" + "---:|" * (len(heads) - 1))
    for cells in rows:
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines.append("")


def bench_section(name, r, lines):
    cfg = r.get("config", {})
    layers = cfg.get("layers")
    gpu = r.get("gpu", {})
    flag = "" if gpu.get("measured") else f". **Not a GPU measurement**: {gpu.get('why', 'no GPU in the report')}"
    lines.append(f"**{name}** (step `{name[:-5]}`): `{cfg.get('name', '?')}` (d_model {cfg.get('d_model')}, {layers} "
                 f"layer{'' if layers == 1 else 's'}, batch {cfg.get('batch')} × {cfg.get('seq')}), precision "
                 f"{r.get('precision', 'fp32')}{flag}")
    lines.append("")
    if r.get("models"):
        rows = []
        for m in r["models"]:
            f, s = m.get("forward", {}), m.get("train_step", {})
            rows.append([m.get("model"), fmt_rate(f.get("tokens_per_s")), fmt_rate(s.get("tokens_per_s")),
                         f"{s.get('gflops', 0) / 1e3:.1f}", pct(s.get("fraction_of_ceiling")),
                         pct(s.get("fraction_of_peak"))])
        table(lines, ["model", "forward tokens/s", "step tokens/s", "step TFLOP/s", "of ceiling", "of peak"], rows)
    if r.get("device_gemm"):
        peak = gpu.get("peak_tflops")
        lines.append(f"Device gemm ceiling {r.get('device_gemm_ceiling_gflops', 0) / 1e3:.1f} TFLOP/s"
                     + (f", {pct(gpu.get('ceiling_fraction_of_peak'))} of the {peak} TFLOP/s peak "
                        f"({gpu.get('peak_source')})" if peak else "") + ".")
        lines.append("")
        rows = [[g["shape"], f"{b['float32_gflops'] / 1e3:.1f}", f"{b['bf16_inputs_gflops'] / 1e3:.1f}",
                 f"{b['bf16_gflops'] / 1e3:.1f}", f"×{b['bf16_inputs_speedup']:.2f} / ×{b['bf16_speedup']:.2f}"]
                for g in r["device_gemm"] if (b := g.get("bf16_storage"))]
        if rows:
            table(lines, ["product", "float32 stored TFLOP/s", "bf16 in, float32 out", "all bf16", "speedups"], rows)
    da = r.get("device_attention")
    if da and da.get("rows"):
        lines.append(f"Attention alone, {da.get('heads')} heads of d_k {da.get('d_k')}:")
        lines.append("")
        table(lines, ["n", "forward ms", "TFLOP/s", "backward ms", "TFLOP/s"],
              [[row["n"], f"{row['forward_s'] * 1e3:.3f}", f"{row['forward_tflops']:.1f}",
                f"{row['backward_s'] * 1e3:.3f}", f"{row['backward_tflops']:.1f}"] for row in da["rows"]])


def compare_section(name, r, lines):
    lines.append(f"**{name}** (step `{name[:-5]}`): PyTorch {r.get('torch_mode', 'eager')}"
                 + (f" ({r['torch_compile']})" if r.get("torch_compile") else "")
                 + f", precision {r.get('precision', 'fp32')}, {r.get('rounds_run', '?')} alternated rounds; "
                   "ratio = attnlab's speed over PyTorch's (median, range); attnlab ran "
                 f"`{r.get('attnlab_command', '?')}`")
    lines.append("")
    if r.get("models"):
        rows = []
        for m in r["models"]:
            f, s = m["forward_tokens_per_s"], m["step_tokens_per_s"]
            lo, hi = s.get("ratio_range", [s["ratio"], s["ratio"]])
            rows.append([m["model"], f"{f['ratio']:.2f}", f"{s['ratio']:.2f} ({lo:.2f}–{hi:.2f})",
                         fmt_rate(s["attnlab"]), fmt_rate(s["torch"])])
        table(lines, ["model", "forward ratio", "step ratio", "attnlab step tokens/s", "PyTorch"], rows)
    att = r.get("attention", {})
    if att.get("rows"):
        table(lines, ["n", "forward: SDPA s / attnlab s", "backward"],
              [[row["n"], f"{row['forward_s']['ratio']:.2f}", f"{row['backward_s']['ratio']:.2f}"]
               for row in att["rows"]])


def main():
    ap = argparse.ArgumentParser(description="File a GPU kit run's reports in bench/results/ and summarise them.")
    ap.add_argument("outdir", help="what bench/gpu.sh wrote (summary.json, logs.tar.gz)")
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"), help="where to file them")
    ap.add_argument("--markdown", help="write the Markdown here instead of standard output")
    a = ap.parse_args()

    summary_path = os.path.join(a.outdir, "summary.json")
    if not os.path.isfile(summary_path):
        fail(f"{summary_path}: missing (expected the GPU kit's summary.json in {a.outdir})")
    try:
        with open(summary_path, "rb") as f:
            summary_raw = f.read()
        summary = json.loads(summary_raw)
    except ValueError as e:
        fail(f"{summary_path}: not JSON ({e})")
    reports, logs = read_archive(os.path.join(a.outdir, "logs.tar.gz"))

    started = summary.get("started") or datetime.datetime.now(datetime.timezone.utc).isoformat()
    date = started[:10]
    if not os.path.isdir(a.results):
        fail(f"--results {a.results}: not a folder")
    dest = os.path.join(a.results, f"gpu-{date}-{slug(summary.get('gpu_name'))}")
    if os.path.exists(dest):
        fail(f"{dest}: already there (this run was filed before?); move it away to file again")
    tmp = dest + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with open(os.path.join(tmp, "summary.json"), "wb") as f:
        f.write(summary_raw)
    for name, (data, _) in sorted(reports.items()):
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    os.replace(tmp, dest)
    rel = os.path.relpath(dest, ROOT)

    lines = [f"### {summary.get('gpu_name') or 'no GPU'}, {date}", ""]
    lines.append(f"Driver {summary.get('gpu_driver')}, CUDA driver {summary.get('cuda_driver_version')}, "
                 f"nvcc {summary.get('nvcc_version')}, compute capability {summary.get('gpu_compute_cap')}, "
                 f"memory {summary.get('gpu_memory')}; commit {summary.get('git_commit') or 'not recorded'}. "
                 f"`bench/gpu.sh` ran {summary.get('seconds')} s of a {summary.get('budget_s')} s budget; "
                 f"raw reports in `{rel}/`.")
    lines.append("")
    steps = summary.get("steps", [])
    by = {}
    for s in steps:
        by.setdefault(s.get("status"), []).append(s.get("name"))
    lines.append("Steps: " + "; ".join(f"{status} {len(names)} ({', '.join(names)})" if status != "ok"
                                       else f"ok {len(names)}" for status, names in by.items()) + ".")
    lines.append("")
    for name, (_, r) in sorted(reports.items()):
        if not isinstance(r, dict):
            continue
        if r.get("format") == "attnlab-bench":
            bench_section(name, r, lines)
        elif "torch_mode" in r:
            compare_section(name, r, lines)
    epilogue_section(logs.get("kernel_tests_verbose.log"), lines)
    targets = reports.get("targets.json", (None, None))[1]
    how = "the kit's `targets` step"
    if not (isinstance(targets, dict) and targets.get("targets")):
        # The kit's targets step did not run (the budget ran out first): the same verdicts from the
        # reports just filed, by bench/targets.py's own rules.
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import targets as target_rules
        targets = {"targets": target_rules.evaluate(dest)}
        how = "bench/targets.py here, on the filed reports: the kit's `targets` step did not run"
    if targets["targets"]:
        lines.append(f"Targets ({how}):")
        lines.append("")
        for t in targets["targets"]:
            lines.append(f"- {t['what']}: {t['verdict']}"
                         + (f" ({t['value']:.3g} against {t['goal']})" if t.get("value") is not None else "")
                         + f"; {t['source']}")
        lines.append("")
    text = "\n".join(lines)
    if a.markdown:
        with open(a.markdown + ".tmp", "w") as f:
            f.write(text + "\n")
        os.replace(a.markdown + ".tmp", a.markdown)
    else:
        print(text)
    print(f"collect_gpu.py: filed {len(reports)} report(s) and summary.json in {rel}/", file=sys.stderr)


if __name__ == "__main__":
    main()
