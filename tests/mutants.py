#!/usr/bin/env python3
"""Mutants of a capture, run through trace-replay --check, trace-replay
and trace-trim.

    mutants.py [--seed S] [--count N] [--seconds T] --replay BIN --trim BIN \\
        --frames F --work DIR TEXT RAW

Draws mutants of TEXT (a capture decoded to text) and RAW (the same
capture in the raw container, so that a flipped byte lands on a value, not
on compressed data) one after the other from seed S (a fresh one if not
given: printed first, so a failure repeats with it), until N are drawn or
T seconds have passed: one-line edits as sed makes them (a count, an
enum, a flag, an sType, a handle, a number, a record removed or two
swapped) and flipped bytes.  Mutant k of a seed is the same whatever N
and T.  Each runs through trace-replay --check, the replayer and the
trimmer (--frames F) under a timeout, with LD_PRELOAD set from
$MUTANT_PRELOAD for them alone (the sanitizer builds).  A run must exit 0,
or 1 with one line on standard error that names the mutant's file (after
replay's warnings and reports of calls that failed here, if any);
anything else (a signal, a sanitizer's exit 99, the timeout, more lines)
is listed, and so is a mutant --check refuses that the replay takes; a
replay that runs out of time on a draw whose vertex or instance count was
raised is counted as slow work, not listed.
Prints the counts per program; exit 1 if any failed.
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import time

COUNT = re.compile(r"(\w+Count|codeSize|\w+Size): (\d+)")
ENUM = re.compile(r"(?<!sType): (VK_[A-Z0-9_]+)(?=[,}])")
FLAGS = re.compile(r"(\w*(?:[Ff]lags|Mask|usage|Usage|Stages|Aspect)): ([A-Z0-9_|x ]+|\d+)(?=[,}])")
STYPE = re.compile(r"sType: (VK_STRUCTURE_TYPE_[A-Z0-9_]+)")
HANDLE = re.compile(r"0x[0-9a-f]{6,}")
NUMBER = re.compile(r"(?<=: )\d+(?=[,}\]])")
FAILED = re.compile(r"call \d+: (\w+ failed: .* at capture|warning: .*)$")


def pick(rng, lines, pattern):
    """A random line of LINES (a record) with a match of PATTERN, and one
    of its matches."""
    cands = [i for i in range(1, len(lines)) if pattern.search(lines[i])]
    if not cands:
        return None, None
    i = rng.choice(cands)
    return i, rng.choice(list(pattern.finditer(lines[i])))


def edit(line, m, group, new):
    return line[: m.start(group)] + new + line[m.end(group):]


def text_mutant(rng, lines, kind):
    """LINES with one edit of KIND, and what it was; None if none fits."""
    out = list(lines)
    if kind == "delete":
        i = rng.randrange(1, len(lines))
        del out[i]
        return out, "record %d removed" % (i - 1)
    if kind == "swap":
        i = rng.randrange(1, len(lines) - 2)
        out[i], out[i + 1] = out[i + 1], out[i]
        return out, "records %d and %d swapped" % (i - 1, i)
    table = {
        "count": (COUNT, 2, lambda m: rng.choice(["4294967295", "65536", str(int(m.group(2)) + 1), "0"])),
        "enum": (ENUM, 1, lambda m: rng.choice(["123456789", "-5", "1000"])),
        "flags": (FLAGS, 2, lambda m: rng.choice(["2147483648", "4294967295", "1073741824"])),
        "stype": (STYPE, 1, lambda m: rng.choice(["999999", "VK_STRUCTURE_TYPE_SUBMIT_INFO",
                                                  "VK_STRUCTURE_TYPE_MEMORY_BARRIER"])),
        "handle": (HANDLE, 0, lambda m: rng.choice(["0x999", "0x0", rng.choice(HANDLE.findall("".join(lines)))])),
        "number": (NUMBER, 0, lambda m: rng.choice(["4294967295", "0", "18446744073709551615"])),
    }
    pattern, group, new = table[kind]
    i, m = pick(rng, lines, pattern)
    if i is None:
        return None, None
    value = new(m)
    out[i] = edit(lines[i], m, group, value)
    if out[i] == lines[i]:
        return None, None
    fn = re.search(r"fn: ([\w.]+)", lines[i])
    return out, "record %d (%s): %s -> %s" % (i - 1, fn.group(1) if fn else "?", m.group(0), value)


def raw_mutant(rng, data):
    out = bytearray(data)
    n = rng.choice([1, 1, 2, 4])
    at = rng.randrange(64, len(data) - n)
    for k in range(n):
        out[at + k] = rng.randrange(256)
    return bytes(out), "%d bytes at %d replaced" % (n, at)


KINDS = ["count", "enum", "flags", "stype", "handle", "number", "delete", "swap", "flip"]


def draw(args, rng):
    """The mutants of the seed, one after the other: (path, kind, what)."""
    lines = open(args.text).read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    raw = open(args.raw, "rb").read()
    n = 0
    while True:
        kind = KINDS[n % len(KINDS)]
        if kind == "flip":
            data, what = raw_mutant(rng, raw)
            path = os.path.join(args.work, "m%03d.trace" % n)
            open(path, "wb").write(data)
        else:
            out, what = text_mutant(rng, lines, kind)
            if out is None:
                continue
            path = os.path.join(args.work, "m%03d.txt" % n)
            open(path, "w").write("\n".join(out) + "\n")
        n += 1
        yield path, kind, what


def run_one(args, prog, path):
    name = os.path.basename(prog)
    out = None
    if name == "trace-trim":
        out = path + ".out"
        cmd = [prog, "--frames", str(args.frames), "-o", out, path]
    elif prog == CHECK:
        name = "trace-replay"
        cmd = [args.replay, "--check", path]
    else:
        # a device busy past 5 + 5 s stops the replay (its watchdog),
        # inside the run's timeout
        cmd = [prog, "--wait-timeout", "5", path]
    env = dict(os.environ)
    if os.environ.get("MUTANT_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["MUTANT_PRELOAD"]
    try:
        p = subprocess.run(["timeout", "-s", "KILL", str(args.timeout)] + cmd, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors="replace")
    except OSError as e:
        return "crash", str(e)
    err = p.stderr.strip("\n")
    if out and os.path.exists(out):
        os.unlink(out)
    if p.returncode == 0:
        return "exit 0", err
    if p.returncode == 1:
        # one line; replay's warnings and reports of calls that failed
        # here (each naming the file and the call) may come before it
        lines = err.split("\n")
        head = "%s: %s: " % (name, path)
        one = all(l.startswith(head) for l in lines) and all(
            FAILED.match(l[len(head):]) for l in lines[:-1])
        return ("clean error" if one else "unclear error"), err
    if p.returncode in (124, 137) or p.returncode == -9:
        return "hang", err[-2000:]
    if p.returncode == 99:
        return "sanitizer", err[-4000:]
    return "crash", "exit %d: %s" % (p.returncode, err[-4000:])


CHECK = "--check"


# A draw's vertex or instance count raised: valid Vulkan, work the device
# must do, which can outlast the timeout on llvmpipe (65,536 instances of
# vkcube's cube a frame); a replay that runs out of time on one is slow,
# not hung (a wait that nothing signals is bounded by --wait-timeout, and
# a device that works past it stops the replay's watchdog).  A number
# mutation names no field: any number of a draw.
WORK = re.compile(r"\(vkCmdDraw\w*\): ((vertexCount|instanceCount): |\d+ -> )")


def run_mutant(args, m):
    """The runs of one mutant: (prog, verdict, message) each."""
    runs = [(prog,) + run_one(args, prog, m[0]) for prog in (CHECK, args.replay, args.trim)]
    return [(p, "slow work" if v == "hang" and p == args.replay and WORK.search(m[2]) else v, e)
            for p, v, e in runs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int)
    ap.add_argument("--count", type=int, default=0, help="at most (0: no bound)")
    ap.add_argument("--seconds", type=float, default=0, help="drawing stops after (0: no bound)")
    ap.add_argument("--replay", required=True)
    ap.add_argument("--trim", required=True)
    ap.add_argument("--frames", default="0")
    ap.add_argument("--timeout", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", required=True)
    ap.add_argument("text")
    ap.add_argument("raw")
    args = ap.parse_args()
    if not args.count and not args.seconds:
        ap.error("--count or --seconds")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    print("seed %d" % seed, flush=True)
    # the capture itself first: mutants refused cleanly say nothing where
    # the capture is refused the same way (a replay that stopped every
    # one of them at vkcube's first vkDestroyFence passed this battery)
    for prog in (CHECK, args.replay, args.trim):
        verdict, err = run_one(args, prog, args.text)
        if verdict != "exit 0":
            print("%s on the capture itself: %s\n  %s" % (
                "trace-replay --check" if prog == CHECK else os.path.basename(prog), verdict,
                err.replace("\n", "\n  ")))
            return 1
    t0 = time.monotonic()
    made = []
    done = {}
    gen = draw(args, random.Random(seed))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        running = set()
        while True:
            full = args.count and len(made) >= args.count
            late = args.seconds and time.monotonic() - t0 >= args.seconds
            if not full and not late and len(running) < args.jobs:
                m = next(gen)
                made.append(m)
                f = ex.submit(run_mutant, args, m)
                done[f] = m
                running.add(f)
                continue
            if not running:
                break
            finished, running = concurrent.futures.wait(
                running, return_when=concurrent.futures.FIRST_COMPLETED)
            running = set(running)
    tally = {}
    bad = 0
    for f, (path, kind, what) in done.items():
        runs = f.result()
        for prog, verdict, err in runs:
            name = "trace-replay --check" if prog == CHECK else os.path.basename(prog)
            tally.setdefault(name, {}).setdefault(verdict, 0)
            tally[name][verdict] += 1
            if verdict not in ("exit 0", "clean error", "slow work"):
                bad += 1
                print("%s %s (%s: %s): %s\n  %s" % (name, path, kind, what, verdict,
                                                 err.replace("\n", "\n  ")))
            elif os.environ.get("MUTANT_VERBOSE"):
                print("%s %s (%s: %s): %s: %s" % (name, path, kind, what, verdict, err))
        # --check refuses only what a replay refuses
        if runs[0][1] == "clean error" and runs[1][1] == "exit 0":
            bad += 1
            print("trace-replay --check %s (%s: %s): refused, but the replay took it\n  %s"
                  % (path, kind, what, runs[0][2]))
    print("%d mutants in %.0f s" % (len(made), time.monotonic() - t0))
    for name, t in sorted(tally.items()):
        print("%s: %s" % (name, ", ".join("%s %d" % kv for kv in sorted(t.items()))))
    if bad:
        print("seed %d: %d runs failed (MUTANT_SEED=%d repeats them)" % (seed, bad, seed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
