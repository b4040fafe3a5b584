#!/usr/bin/python3
"""attnlab timeline on a terminal (a pseudo-terminal): its chart markers in colour, and none with NO_COLOR
or --no-color; every line within COLUMNS either way (docs/timeline.md)."""
import os
import pty
import shutil
import subprocess
import sys
import tempfile


def on_tty(cmd, env):
    """Runs cmd with stdout on a pseudo-terminal; its output as text."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    os.close(master)
    if p.returncode != 0:
        sys.exit(f"{cmd}: exit {p.returncode}: {p.stderr.read().decode()}")
    return out.decode()


def main():
    attnlab, source = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="attnlab-timeline-tty-")
    try:
        run = os.path.join(tmp, "run")
        subprocess.run([attnlab, "train", "--config", os.path.join(source, "data/configs/tiny-test.json"), "--out", run,
                        "--snapshots", "3"], check=True, capture_output=True)
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update(COLUMNS="64", TERM="xterm-256color")
        failures = []
        coloured = on_tty([attnlab, "timeline", "--model", run], env)
        if "\x1b[36m*\x1b[0m" not in coloured:
            failures.append("no coloured marker on a terminal")
        for name, cmd, e in (("NO_COLOR=1", [attnlab, "timeline", "--model", run], dict(env, NO_COLOR="1")),
                             ("--no-color", [attnlab, "timeline", "--model", run, "--no-color"], env)):
            plain = on_tty(cmd, e)
            if "\x1b" in plain:
                failures.append(f"{name}: an escape sequence in the output")
            for line in plain.replace("\r\n", "\n").split("\n"):
                if len(line) > 64:
                    failures.append(f"{name}: a line of {len(line)} columns: {line!r}")
        if failures:
            sys.exit("\n".join(failures))
        print("timeline on a terminal: colour, NO_COLOR and --no-color, width: ok")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
