#!/usr/bin/python3
"""Kills `attnlab train` at random moments and checks that nothing is ever lost or corrupted.

  1. Run A: trains tests/errors/kill-test.json without interruption.
  2. Run B: the same config and seed, started again and again (with --resume once a checkpoint
     exists) and killed after a random delay with SIGINT, SIGTERM, SIGHUP or SIGKILL, each equally often in
     a random order (seeded: the seed is printed, --seed repeats a run). The delays follow the fastest
     training rate seen so far, so that every kill lands before the run ends on a machine whose speed
     changes under the test; should B finish anyway, it starts again from nothing (twice at most).
     After every kill the checkpoints in B must
     load (`attnlab eval` on model.ckpt and on train-state.ckpt), the saved step may never go back,
     and temporary files a SIGKILL left mid-write are counted (the next start removes them).
  3. A kill between the renames of train-state.ckpt and model.ckpt is made certain rather than left
     to chance: model.ckpt and train-log.json are replaced by older ones (the state ahead of the model
     and the log, what such a kill leaves) and half-written temporary files are added. Both files must still load, and
     --resume must write model.ckpt again at the state's step and remove the temporary files. Then
     train-state.ckpt is replaced by the oldest one (the model ahead of the state).
  4. B resumes to the end. Its model.ckpt, train-state.ckpt and train-log.json must be
     byte-identical to A's: resuming is bit-exact and the checkpoint files hold no time stamps.

Usage: /usr/bin/python3 tests/errors/kill_resume.py --binary build/attnlab [--seed N] [--kills 9]
"""

import argparse
import glob
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "kill-test.json")
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL]  # SIGHUP: a closed terminal


def step_of(path):
    """The trained_steps a checkpoint's header records (None when the file is missing)."""
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        head = f.read(24)
        hlen = struct.unpack_from("<Q", head, 16)[0]
        header = json.loads(f.read(hlen))
    return header["meta"]["trained_steps"]


def temporaries(folder):
    return sorted(glob.glob(os.path.join(folder, ".*.tmp-*")))


class Runner:
    def __init__(self, binary, env):
        self.binary, self.env = binary, env

    def start(self, *args):
        return subprocess.Popen([self.binary, *args], env=self.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def run(self, *args, timeout=300):
        p = subprocess.run([self.binary, *args], env=self.env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stderr

    def train(self, out, resume):
        return self.start("train", "--config", CONFIG, "--out", out, *(["--resume"] if resume else []))


def loads(runner, path):
    """Whether `attnlab eval` can load the checkpoint (a model folder or a .ckpt file)."""
    code, err = runner.run("eval", "--model", path, "--limit", "2", "--beam", "1", timeout=120)
    return code == 0, err.strip().splitlines()[-1:] if code else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--seed", type=int, default=None, help="the seed of the kill schedule (default: random)")
    ap.add_argument("--kills", type=int, default=9)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)
    print(f"kill schedule seed {seed} (repeat with --seed {seed})", flush=True)
    env = dict(os.environ, NO_COLOR="1", OPENBLAS_NUM_THREADS="1")
    runner = Runner(os.path.abspath(a.binary), env)
    failures = []
    work = tempfile.mkdtemp(prefix="attnlab-kill-")
    A, B, snaps = (os.path.join(work, d) for d in ("A", "B", "snapshots"))
    os.makedirs(snaps)
    t0 = time.monotonic()
    try:
        start = time.monotonic()
        code, err = runner.run("train", "--config", CONFIG, "--out", A)
        uninterrupted = time.monotonic() - start
        if code != 0:
            sys.exit(f"the uninterrupted run failed ({code}): {err}")
        print(f"run A: uninterrupted, {step_of(os.path.join(A, 'model.ckpt'))} steps in {uninterrupted:.1f} s", flush=True)

        total = step_of(os.path.join(A, "model.ckpt"))
        # Delays short enough that the run cannot finish before every kill has landed. A shared CI
        # machine's speed changes while the test runs (run A can be slowed by a neighbouring test
        # and B's runs not), so the delays follow the fastest training rate seen so far: steps per
        # second of delay, from run A and then from every kill that saved its step. Each delay is
        # drawn below the time the remaining steps, shared among the remaining kills and one more,
        # take at that rate.
        rate = total / uninterrupted
        # Every signal equally often (at least twice for 8 kills or more), in a random order.
        schedule = (SIGNALS * (a.kills // len(SIGNALS) + 1))[:a.kills]
        rng.shuffle(schedule)
        kills, tries, last_state, restarts = [], 0, -1, 0
        while len(kills) < a.kills and tries < 4 * a.kills:
            tries += 1
            resume = os.path.exists(os.path.join(B, "train-state.ckpt"))
            sig = schedule[len(kills)]
            left_steps = total - max(last_state, 0)
            longest = max(0.1, min(0.5, left_steps / (rate * (a.kills - len(kills) + 1))))
            delay = rng.uniform(0.05, longest)
            p = runner.train(B, resume)
            time.sleep(delay)
            if p.poll() is not None:
                err = p.stderr.read().decode(errors="replace")
                if p.returncode == 0 and restarts < 2:
                    # Faster than every estimate: start B again from nothing, at twice the rate.
                    # Run A still holds the bytes B must end with, so nothing is weakened.
                    restarts += 1
                    rate *= 2
                    print(f"  the run finished before kill {len(kills) + 1}; B starts again with shorter delays",
                          flush=True)
                    shutil.rmtree(B, ignore_errors=True)
                    shutil.rmtree(snaps, ignore_errors=True)
                    os.makedirs(snaps)
                    kills, last_state = [], -1
                    continue
                if p.returncode == 0:
                    print(f"  the run finished before kill {len(kills) + 1}; stopping the kills early", flush=True)
                    break
                failures.append(f"train exited with {p.returncode} before it was killed: {err.strip()}")
                break
            p.send_signal(sig)
            code = p.wait(timeout=120)
            err = p.stderr.read().decode(errors="replace")
            # SIGINT/SIGTERM/SIGHUP save and exit 130; during start-up, before the handlers are
            # installed, they kill like SIGKILL does (nothing was being written yet).
            if code not in (130, -sig) or (sig == signal.SIGKILL and code != -signal.SIGKILL):
                failures.append(f"{sig.name} after {delay:.2f} s: unexpected exit {code}: {err.strip()[-300:]}")
            state, model = os.path.join(B, "train-state.ckpt"), os.path.join(B, "model.ckpt")
            s_step, m_step = step_of(state), step_of(model)
            left = temporaries(B)
            kills.append(sig.name)
            print(f"  kill {len(kills)}: {sig.name:7} after {delay:4.2f} s of at most {longest:4.2f} "
                  f"({'resumed' if resume else 'fresh start'}) -> exit "
                  f"{code}; train-state.ckpt at step {s_step}, model.ckpt at step {m_step}"
                  f"{f', {len(left)} temporary file(s) left mid-write' if left else ''}", flush=True)
            if s_step is not None:
                if s_step < last_state:
                    failures.append(f"kill {len(kills)}: the saved step went back from {last_state} to {s_step}")
                rate = max(rate, (s_step - max(last_state, 0)) / delay)
                last_state = s_step
                for path in (B, state):
                    ok, why = loads(runner, path)
                    if not ok:
                        failures.append(f"kill {len(kills)}: {path} does not load: {why}")
                shutil.copy(state, os.path.join(snaps, f"state-{s_step}.ckpt"))
                if os.path.exists(os.path.join(B, "train-log.json")):
                    shutil.copy(os.path.join(B, "train-log.json"), os.path.join(snaps, f"log-{s_step}.json"))
                if m_step is not None:
                    shutil.copy(model, os.path.join(snaps, f"model-{m_step}.ckpt"))
        if len(kills) < a.kills:
            failures.append(f"only {len(kills)} kills landed (wanted {a.kills})")

        # A kill between the two renames, for certain: files that are each complete but disagree.
        states = sorted(glob.glob(os.path.join(snaps, "state-*.ckpt")), key=lambda p: int(p.split("-")[-1][:-5]))
        models = sorted(glob.glob(os.path.join(snaps, "model-*.ckpt")), key=lambda p: int(p.split("-")[-1][:-5]))
        state, model = os.path.join(B, "train-state.ckpt"), os.path.join(B, "model.ckpt")
        if states and models:
            # (i) state ahead of model and log, as a SIGKILL after renaming train-state.ckpt leaves them
            # (a checkpoint writes the state, then the model, then the log), with the half-written
            # temporary files of a kill during the next write. The log's missing steps come from the
            # state, which carries the log as it was saved: the final log is still byte-identical.
            shutil.copy(models[0], model)
            logs = sorted(glob.glob(os.path.join(snaps, "log-*.json")), key=lambda p: int(p.split("-")[-1][:-5]))
            if logs:
                shutil.copy(logs[0], os.path.join(B, "train-log.json"))
            for name in ("model.ckpt", "train-state.ckpt", "train-log.json"):
                with open(os.path.join(B, f".{name}.tmp-Xq3Zp9"), "wb") as f, open(states[-1], "rb") as g:
                    f.write(g.read()[:5000])
            s_step, m_step = step_of(state), step_of(model)
            print(f"  between the renames: train-state.ckpt at step {s_step}, model.ckpt at step {m_step}, "
                  f"{len(temporaries(B))} half-written temporary files", flush=True)
            for path in (B, state):
                ok, why = loads(runner, path)
                if not ok:
                    failures.append(f"between the renames, {path} does not load: {why}")
            p = runner.train(B, True)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and p.poll() is None and (step_of(model) or 0) < s_step:
                time.sleep(0.02)
            rewritten = step_of(model)
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
            code = p.wait(timeout=120)
            print(f"    --resume wrote model.ckpt again at step {rewritten} before training on; SIGINT -> exit {code}", flush=True)
            if rewritten is None or rewritten < s_step:
                failures.append(f"--resume did not bring model.ckpt ({m_step}) up to train-state.ckpt ({s_step})")
            if code not in (0, 130):
                failures.append(f"the resume after the simulated kill exited with {code}")
            if temporaries(B):
                failures.append(f"--resume left the stale temporary files: {temporaries(B)}")
            # The log has every step up to the state's again, none missing where it had fallen behind.
            with open(os.path.join(B, "train-log.json")) as f:
                logged = [e["step"] for e in json.load(f)["steps"]]
            saved = step_of(state)
            print(f"    train-log.json after that resume: steps 1 to {logged[-1] if logged else 0} "
                  f"({len(logged)} entries; train-state.ckpt at step {saved})", flush=True)
            if logged != list(range(1, saved + 1)):
                failures.append(f"after the resume from a state ahead of the log, train-log.json holds {len(logged)} "
                                f"steps, not 1 to {saved}")
            # (ii) model ahead of state (files copied around): resuming goes back to the state's step.
            shutil.copy(states[0], state)
            print(f"  model ahead of state: train-state.ckpt at step {step_of(state)}, model.ckpt at step "
                  f"{step_of(model)}", flush=True)
            for path in (B, state):
                ok, why = loads(runner, path)
                if not ok:
                    failures.append(f"with the model ahead of the state, {path} does not load: {why}")

        code, err = runner.run("train", "--config", CONFIG, "--out", B, "--resume")
        if code != 0:
            failures.append(f"the final --resume failed ({code}): {err.strip()[-300:]}")
        print(f"run B: resumed to the end (step {step_of(os.path.join(B, 'model.ckpt'))})", flush=True)
        if temporaries(B):
            failures.append(f"temporary files left in B after the final run: {temporaries(B)}")
        for name in ("model.ckpt", "train-state.ckpt", "train-log.json"):
            if not os.path.exists(os.path.join(B, name)):
                print(f"  {name:17} MISSING after the final --resume", flush=True)
                failures.append(f"{name} is missing after the final --resume")
                continue
            with open(os.path.join(A, name), "rb") as f, open(os.path.join(B, name), "rb") as g:
                same = f.read() == g.read()
            print(f"  {name:17} {'byte-identical to' if same else 'DIFFERS from'} the uninterrupted run", flush=True)
            if not same:
                failures.append(f"{name} differs from the uninterrupted run's")
        print(f"{len(kills)} kills ({', '.join(kills)}), {time.monotonic() - t0:.0f} s in all", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
