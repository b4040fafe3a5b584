#!/usr/bin/env python3
"""bench/collect_gpu.py on a made-up GPU kit run: what it files in the results folder, the Markdown it
writes from the reports, and exit 2 (nothing overwritten) for a second collection, a missing summary or
a report that is not JSON. Runs without a GPU."""
import io
import json
import os
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_check import ScriptCheck  # noqa: E402

kit = ScriptCheck("bench/collect_gpu.py")
check, run = kit.check, kit.run


def kit_run(folder, members):
    """An OUTDIR as bench/gpu.sh leaves it: summary.json and logs.tar.gz holding `members`."""
    summary = {"started": "2026-12-01T10:00:00Z", "seconds": 512, "budget_s": 540, "gpu_name": "NVIDIA H100 80GB HBM3",
               "gpu_driver": "580.1", "cuda_driver_version": "13.0", "nvcc_version": "13.0.88",
               "gpu_compute_cap": "9.0", "gpu_memory": "81559 MiB", "git_commit": "abc1234",
               "steps": [{"name": "build", "status": "ok"}, {"name": "bench_cuda_bf16", "status": "ok"},
                         {"name": "memcheck_gpu_tests", "status": "timeout"}]}
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(summary, f)
    with tarfile.open(os.path.join(folder, "logs.tar.gz"), "w:gz") as tar:
        for name, data in members.items():
            raw = data if isinstance(data, bytes) else json.dumps(data).encode()
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))


bench = {"format": "attnlab-bench", "precision": "bf16",
         "config": {"name": "transformer-base", "d_model": 512, "layers": 6, "batch": 16, "seq": 128},
         "gpu": {"measured": True, "device": "NVIDIA H100 80GB HBM3", "peak_tflops": 989.4,
                 "peak_source": "NVIDIA datasheet, H100 SXM bf16, dense", "ceiling_fraction_of_peak": 0.62},
         "device_gemm_ceiling_gflops": 613000.0,
         "device_gemm": [{"shape": "N×C · C×F", "m": 2048, "n": 2048, "k": 512, "trans_b": False,
                          "bf16_storage": {"float32_gflops": 300000.0, "bf16_inputs_gflops": 450000.0,
                                           "bf16_gflops": 480000.0, "bf16_inputs_speedup": 1.5, "bf16_speedup": 1.6}},
                         {"shape": "4096×4096 · 4096×4096", "m": 4096, "n": 4096, "k": 4096, "trans_b": False}],
         "models": [{"model": "encoder-decoder",
                     "forward": {"tokens_per_s": 1234567.0, "gflops": 250000.0},
                     "train_step": {"tokens_per_s": 456789.0, "gflops": 280000.0, "fraction_of_ceiling": 0.457,
                                    "fraction_of_peak": 0.283}}],
         "device_attention": {"heads": 16, "d_k": 64,
                              "rows": [{"n": 4096, "forward_s": 0.0021, "forward_tflops": 261.8, "backward_s": 0.0061,
                                        "backward_tflops": 225.3}]}}
compare = {"torch_mode": "eager", "precision": "bf16", "rounds_run": 3,
           "attnlab_command": "attnlab bench --backend cuda",
           "models": [{"model": "encoder-decoder",
                       "forward_tokens_per_s": {"attnlab": 2.0e5, "torch": 1.6e5, "ratio": 1.25},
                       "step_tokens_per_s": {"attnlab": 7.0e4, "torch": 5.0e4, "ratio": 1.4,
                                             "ratio_range": [1.31, 1.52]}}],
           "attention": {"rows": [{"n": 4096, "forward_s": {"attnlab": 0.004, "torch_sdpa": 0.00332, "ratio": 0.83},
                                   "backward_s": {"attnlab": 0.01, "torch_sdpa": 0.0061, "ratio": 0.61}}]}}
targets = {"targets": [{"what": "Transformer-base training step, times PyTorch eager (bf16)", "verdict": "met",
                        "value": 1.4, "goal": 1.2, "source": "compare_torch_cuda_bf16.json"}]}

with tempfile.TemporaryDirectory() as d:
    out, res = os.path.join(d, "out"), os.path.join(d, "results")
    os.makedirs(out)
    os.makedirs(res)
    kernel_log = (b"/src/tests/gpu/test_cuda_kernels.cpp:389: MESSAGE: gemm_bias m 37 n 33 k 129 bf16 ReLU: "
                  b"cuBLASLt's epilogue\n"
                  b"/src/tests/gpu/test_cuda_kernels.cpp:558: MESSAGE: gemm_bias_bf16_storage m 37 n 33 k 129 bias: "
                  b"cuBLASLt's epilogue\n"
                  b"/src/tests/gpu/test_cuda_kernels.cpp:558: MESSAGE: gemm_bias_bf16_storage m 1 n 1 k 1 ReLU: "
                  b"two-step (cuBLASLt declined)\n")
    kit_run(out, {"bench_cuda_bf16.json": bench, "compare_torch_cuda_bf16.json": compare, "targets.json": targets,
                  "build.log": b"not a report", "../escape.json": {"x": 1}, "sub/nested.json": {"x": 2},
                  "kernel_tests_verbose.log": kernel_log})
    md = os.path.join(d, "gpu.md")
    r = run(out, "--results", res, "--markdown", md)
    check(r.returncode == 0, f"a whole run: exit 0 (got {r.returncode}: {r.stderr})")
    dest = os.path.join(res, "gpu-2026-12-01-nvidia-h100-80gb-hbm3")
    filed = sorted(os.listdir(dest)) if os.path.isdir(dest) else []
    check(filed == ["bench_cuda_bf16.json", "compare_torch_cuda_bf16.json", "summary.json", "targets.json"],
          f"the reports and the summary are filed, logs and paths with folders are not ({filed})")
    check(not os.path.exists(os.path.join(d, "escape.json")), "a member named ../x is not written outside")
    check(json.load(open(os.path.join(dest, "bench_cuda_bf16.json"))) == bench, "a report is filed unchanged")
    text = open(md).read() if os.path.exists(md) else ""
    for want, what in [("### NVIDIA H100 80GB HBM3, 2026-12-01", "the heading names the GPU and the date"),
                       ("Driver 580.1", "the driver"), ("commit abc1234", "the commit"),
                       ("timeout 1 (memcheck_gpu_tests)", "steps not ok are named"),
                       ("| encoder-decoder | 1,234,567 | 456,789 | 280.0 | 45.7% | 28.3% |",
                        "the model row: tokens/s, TFLOP/s, shares of ceiling and peak"),
                       ("62.0% of the 989.4 TFLOP/s peak", "the ceiling against the peak"),
                       ("| N×C · C×F | 300.0 | 450.0 | 480.0 | ×1.50 / ×1.60 |", "the bf16-storage row"),
                       ("| 4096 | 2.100 | 261.8 | 6.100 | 225.3 |", "the attention sweep row"),
                       ("| encoder-decoder | 1.25 | 1.40 (1.31–1.52) | 70,000 | 50,000 |", "the PyTorch comparison"),
                       ("| 4096 | 0.83 | 0.61 |", "attention against SDPA"),
                       ("Transformer-base training step, times PyTorch eager (bf16): met (1.4 against 1.2)",
                        "the targets' verdicts"),
                       ("- `gemm_bias`: one cuBLASLt matmul in 1 of 1 cases", "the float32 epilogue's count"),
                       ("- `gemm_bias_bf16_storage`: one cuBLASLt matmul in 1 of 2 cases; declined (two-step): "
                        "m 1 n 1 k 1 ReLU", "the bf16 epilogue's count and the case declined")]:
        check(want in text, f"{what}: {want!r} in the Markdown")
    check("Not a GPU measurement" not in text, "a measured report is not flagged")
    check("| 4096×4096 · 4096×4096 |" not in text, "the large square has no bf16-storage row")

    r = run(out, "--results", res)
    check(r.returncode == 2 and "already there" in r.stderr,
          f"a second collection: exit 2 ({r.returncode}, {r.stderr})")
    check(json.load(open(os.path.join(dest, "bench_cuda_bf16.json"))) == bench, "... and the first is left as it was")

with tempfile.TemporaryDirectory() as d:
    # The kit's targets step did not run: the verdicts are worked out from the filed reports.
    gpt2 = dict(bench, config={"name": "gpt2-small"},
                models=[{"model": "decoder-only", "train_step": {"gflops": 300000.0, "fraction_of_peak": 0.303}}])
    kit_run(d, {"bench_cuda_bf16.json": bench, "compare_torch_cuda_bf16.json": compare,
                "bench_cuda_bf16_gpt2.json": gpt2})
    os.makedirs(os.path.join(d, "res"))
    r = run(d, "--results", os.path.join(d, "res"))
    check(r.returncode == 0, f"no targets.json: exit 0 ({r.stderr})")
    check("Targets (bench/targets.py here, on the filed reports" in r.stdout, "the verdicts say where they come from")
    check("cuBLASLt's bias epilogue" not in r.stdout, "no kernel tests' log: no epilogue section")
    for want in ["times PyTorch eager (bf16): met (1.4 against 1.2)", "share of SDPA's speed (bf16): met (0.83",
                 "share of the GPU's bf16 peak: not met (0.303 against 0.35)"]:
        check(want in r.stdout, f"a computed verdict: {want!r}")
    filed = os.listdir(os.path.join(d, "res", "gpu-2026-12-01-nvidia-h100-80gb-hbm3"))
    check("targets.json" not in filed, f"nothing but the kit's own files is filed ({filed})")

with tempfile.TemporaryDirectory() as d:
    r = run(d, "--results", d)
    check(r.returncode == 2 and "summary.json" in r.stderr, f"no summary.json: exit 2 naming it ({r.stderr})")
    emulated = dict(bench, gpu={"measured": False, "why": "CUDA is emulated on the CPU"})
    kit_run(d, {"bench_cuda_bf16.json": emulated})
    os.makedirs(os.path.join(d, "res"))
    r = run(d, "--results", os.path.join(d, "res"))
    check(r.returncode == 0 and "Not a GPU measurement**: CUDA is emulated" in r.stdout,
          f"an emulated report is flagged as not a GPU's ({r.stdout[-300:]})")
    r = run(d, "--results", os.path.join(d, "res2"))
    check(r.returncode == 2 and "not a folder" in r.stderr, f"a missing results folder: exit 2 ({r.stderr})")
    kit_run(d, {"bench_cuda_bf16.json": b"{ broken"})
    os.makedirs(os.path.join(d, "res2"))
    r = run(d, "--results", os.path.join(d, "res2"))
    check(r.returncode == 2 and "bench_cuda_bf16.json: not a JSON report" in r.stderr,
          f"a broken report: exit 2 naming it ({r.stderr})")
    check(os.listdir(os.path.join(d, "res2")) == [], "... and nothing is filed")

kit.finish("test_collect_gpu")
