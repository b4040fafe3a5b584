"""What the tests of the GPU kit's Python scripts (bench/targets.py, bench/collect_gpu.py) share: run the
script as a program, record each failed check as it happens, and end with one line and the exit status."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ScriptCheck:
    def __init__(self, script):
        self.script = os.path.join(ROOT, script)
        self.failures = []

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
            print(f"FAIL: {what}")

    def run(self, *args):
        """The script with ARGS under this Python: its exit status, stdout and stderr."""
        return subprocess.run([sys.executable, self.script, *args], capture_output=True, text=True)

    def finish(self, name):
        print(f"{name}: " + (f"{len(self.failures)} check(s) FAILED" if self.failures else "all checks passed"))
        sys.exit(1 if self.failures else 0)
