#!/usr/bin/env python3
"""bench/targets.py on made-up kit reports: each verdict (met, not met, not measured), its JSON, and the
exit status 2 for a missing folder or a broken report. Runs without a GPU."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_check import ScriptCheck  # noqa: E402

kit = ScriptCheck("bench/targets.py")
check, run = kit.check, kit.run


def write(folder, name, obj):
    with open(os.path.join(folder, name), "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))


compare = {"models": [{"model": "encoder-decoder",
                       "step_tokens_per_s": {"attnlab": 130000.0, "torch": 100000.0, "ratio": 1.3}},
                      {"model": "decoder-only",
                       "step_tokens_per_s": {"attnlab": 90000.0, "torch": 100000.0, "ratio": 0.9}}],
           "attention": {"rows": [{"n": 2048, "forward_s": {"attnlab": 1.0, "torch_sdpa": 0.9, "ratio": 0.9}},
                                  {"n": 4096, "forward_s": {"attnlab": 0.004, "torch_sdpa": 0.0026, "ratio": 0.65}}]}}
gpt2 = {"gpu": {"peak_tflops": 989.4, "peak_source": "H100 SXM datasheet"},
        "models": [{"model": "encoder-decoder", "train_step": {"gflops": 500000.0, "fraction_of_peak": 0.9}},
                   {"model": "decoder-only", "train_step": {"gflops": 400000.0, "fraction_of_peak": 0.404}}]}

with tempfile.TemporaryDirectory() as d:
    write(d, "compare_torch_cuda_bf16.json", compare)
    write(d, "bench_cuda_bf16_gpt2.json", gpt2)
    out = os.path.join(d, "targets.json")
    r = run(d, "--json-out", out)
    check(r.returncode == 0, f"all reports: exit 0 (got {r.returncode}: {r.stderr})")
    lines = r.stdout.splitlines()
    check(any("Transformer-base" in l and "1.30x" in l and ": met;" in l for l in lines),
          "the step ratio 1.3 meets 1.2")
    check(any("attention forward" in l and "65%" in l and "not met" in l for l in lines),
          "the n = 4096 row (not n = 2048) is read, 65 % misses 70 %")
    check(any("GPT-2" in l and "40.4%" in l and ": met;" in l for l in lines),
          "the decoder-only step's 40.4 % meets 35 %")
    j = json.load(open(out))
    check([t["verdict"] for t in j["targets"]] == ["met", "not met", "met"], f"the JSON verdicts ({j})")
    check(j["targets"][0]["value"] == 1.3 and j["targets"][0]["goal"] == 1.2, "the JSON carries value and goal")

with tempfile.TemporaryDirectory() as d:
    write(d, "compare_torch_cuda_bf16.json", {"models": []})
    r = run(d)
    check(r.returncode == 0, "missing figures: still exit 0")
    check(r.stdout.count("not measured") == 3, f"every target not measured, each with why:\n{r.stdout}")
    check("bench_cuda_bf16_gpt2.json is missing" in r.stdout, "a missing report is named")
    check("has no encoder-decoder training step" in r.stdout, "a report without the figure is named")

with tempfile.TemporaryDirectory() as d:
    # The n = 4096 row is there but without the seconds the line quotes: not measured, not a traceback.
    write(d, "compare_torch_cuda_bf16.json", {"attention": {"rows": [{"n": 4096, "forward_s": {"ratio": 0.8}}]}})
    r = run(d)
    check(r.returncode == 0 and "a report lacks a figure this target reads (KeyError: 'attnlab')" in r.stdout,
          f"a row without a figure: not measured, with what was missing ({r.returncode}: {r.stdout}{r.stderr})")

with tempfile.TemporaryDirectory() as d:
    write(d, "bench_cuda_bf16_gpt2.json", "{ truncated")
    r = run(d)
    check(r.returncode == 2 and "not a JSON report" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          f"a broken report: exit 2 and one line (got {r.returncode}: {r.stderr!r})")
    r = run(os.path.join(d, "nowhere"))
    check(r.returncode == 2 and "not a folder" in r.stderr,
          f"no such folder: exit 2 (got {r.returncode}: {r.stderr!r})")

kit.finish("test_targets")
