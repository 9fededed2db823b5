#!/usr/bin/env python3
"""Helper for bench/compare.sh (Python 3.9+, standard library only).

Subcommands:
  prefill SOCK KEYS SIZE        SET key:000000000000 .. key:<KEYS-1> to SIZE-byte values
  run ...                       run one client command, measure it, append a JSON line
  strace-summary FILE REQUESTS  summarise an `strace -f -c` file as JSON
  perf-summary FILE             parse `perf stat -x,` output (one event) as JSON
  callgrind-summary FILE        print the total instruction count of a callgrind out file
  report ...                    print the Markdown report

Measurements made by `run`:
  * wall time: monotonic clock from just before fork/exec to just after the client is reaped;
  * client CPU: user+system time from the rusage that wait4() returns for the child. It covers
    every thread of the client and every descendant it waited for (the client runs as
    `timeout ... taskset ... client`; taskset execs, timeout waits for its child, so the figure is
    the client's own CPU plus timeout's, which is a millisecond or so). Microsecond resolution,
    no sampling, nothing to parse;
  * server CPU: the server's on-CPU time summed over its threads from
    /proc/<pid>/task/*/schedstat (nanoseconds) read before and after the run; when schedstat is
    not available, utime+stime from /proc/<pid>/stat (clock ticks, usually 10 ms).
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import statistics
import subprocess
import sys
import time

TOOLS = ("redis-benchmark", "respbench")
RESULT_RE = re.compile(r"([A-Za-z0-9_:() -]+?): ([0-9]+(?:\.[0-9]+)?) requests per second")


def die(msg: str) -> None:
    print(f"compare.py: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------
# Server helpers


def resp_command(*args: bytes) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def prefill(sock_path: str, keys: int, size: int) -> None:
    """Same key names as both tools use for key:__rand_int__ (12 digits), so GET always hits."""
    value = b"x" * size
    batch = 1000
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30.0)
        s.connect(sock_path)
        f = s.makefile("rb")
        for start in range(0, keys, batch):
            n = min(batch, keys - start)
            s.sendall(b"".join(resp_command(b"SET", b"key:%012d" % k, value)
                               for k in range(start, start + n)))
            for _ in range(n):
                line = f.readline()
                if line != b"+OK\r\n":
                    die(f"prefill: unexpected reply {line!r}")


# ---------------------------------------------------------------------------------------------
# Running one measured client


def server_cpu_seconds(pid: int) -> tuple[float, str]:
    """On-CPU time of all the server's threads, and which source it came from."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        for t in tasks:
            try:
                with open(f"/proc/{pid}/task/{t}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except FileNotFoundError:
                pass  # a thread that just exited
        return total / 1e9, "schedstat"
    except (FileNotFoundError, PermissionError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except FileNotFoundError:
        die(f"server process {pid} is gone (see the server log)")
    fields = stat[stat.rindex(")") + 2:].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK"), "stat"


def parse_quiet(text: str, test: str) -> float | None:
    """Requests per second for `test` from `-q` output (redis-benchmark redraws a progress line
    with carriage returns before the final one, so split on both CR and LF)."""
    found = None
    for line in re.split(r"[\r\n]", text):
        m = RESULT_RE.search(line)
        if m and m.group(1).strip().upper() == test.upper():
            found = float(m.group(2))
    return found


def run(argv: list[str]) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="compare.py run")
    p.add_argument("--results", required=True)
    p.add_argument("--tool", required=True, choices=TOOLS)
    p.add_argument("--test", required=True)
    p.add_argument("--pipeline", type=int, required=True)
    p.add_argument("--transport", required=True)
    p.add_argument("--rep", type=int, required=True)
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--server-pid", type=int, required=True)
    p.add_argument("--log", required=True, help="file for the client's stdout+stderr")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        die("run: no command")

    with open(a.log, "wb") as log:
        s0, source = server_cpu_seconds(a.server_pid)
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(proc.pid, 0)
        t1 = time.monotonic()
        s1, _ = server_cpu_seconds(a.server_pid)
        proc.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from reaping again
    with open(a.log, "rb") as fh:
        out = fh.read().decode("utf-8", "replace")

    desc = f"{a.tool} {a.test} -P {a.pipeline} {a.transport} (rep {a.rep})"
    rc = proc.returncode
    if rc != 0:
        why = "timed out" if rc in (124, 137, -9) else f"exited with status {rc}"
        tail = "\n".join(out.replace("\r", "\n").splitlines()[-10:])
        die(f"{desc} {why}; command: {' '.join(cmd)}\n--- last output ---\n{tail}")
    rps = parse_quiet(out, a.test)
    if rps is None:
        tail = "\n".join(out.replace("\r", "\n").splitlines()[-10:])
        die(f"{desc}: no '{a.test}: ... requests per second' line in the output\n"
            f"--- last output ---\n{tail}")

    wall = t1 - t0
    client_cpu = ru.ru_utime + ru.ru_stime
    server_cpu = s1 - s0
    rec = {
        "tool": a.tool, "test": a.test.upper(), "pipeline": a.pipeline,
        "transport": a.transport, "rep": a.rep, "requests": a.requests,
        "rps": rps, "wall_s": wall,
        "client_user_s": ru.ru_utime, "client_sys_s": ru.ru_stime,
        "client_cpu_us_per_req": client_cpu / a.requests * 1e6,
        "server_cpu_s": server_cpu, "server_cpu_source": source,
        "server_busy_pct": 100.0 * server_cpu / wall if wall > 0 else float("nan"),
        "server_cpu_us_per_req": server_cpu / a.requests * 1e6,
        "client_max_rss_kb": ru.ru_maxrss,
    }
    with open(a.results, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(f"  {a.tool:<15} {a.test.upper():<3} -P {a.pipeline:<2} {a.transport:<4} rep {a.rep}: "
          f"{rps:>12,.0f} req/s  client {rec['client_cpu_us_per_req']:6.2f} us/req  "
          f"server busy {rec['server_busy_pct']:5.1f}%", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# strace / perf / callgrind


def strace_summary(path: str, requests: int) -> None:
    """`strace -c` table: % time, seconds, usecs/call, calls, [errors], syscall."""
    per = {}
    total = None
    with open(path) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) < 5 or not re.fullmatch(r"[0-9.]+", parts[0]):
                continue
            calls = int(parts[3])
            if parts[-1] == "total":
                total = calls
            else:
                per[parts[-1]] = per.get(parts[-1], 0) + calls
    if total is None:
        total = sum(per.values())
    if not per:
        die(f"strace-summary: no syscall table in {path}")
    top = sorted(per.items(), key=lambda kv: -kv[1])[:5]
    print(json.dumps({"total": total, "per_req": total / requests,
                      "top": [[name, n / requests] for name, n in top]}))


def perf_summary(path: str) -> None:
    """`perf stat -x,` line: value,unit,event,run-time,percentage,... Prints {} if unsupported."""
    with open(path) as fh:
        for line in fh:
            parts = line.strip().split(",")
            if len(parts) >= 3 and parts[2].startswith("instructions"):
                if re.fullmatch(r"[0-9]+", parts[0]):
                    print(json.dumps({"instructions": int(parts[0]), "event": parts[2]}))
                    return
    print("{}")


def callgrind_summary(path: str) -> None:
    with open(path) as fh:
        for line in fh:
            if line.startswith(("summary:", "totals:")):
                print(int(line.split()[1]))
                return
    die(f"callgrind-summary: no summary line in {path}")


# ---------------------------------------------------------------------------------------------
# Report


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def fmt_num(x: float, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:,.{digits}f}"


def fmt_range(xs: list[float], digits: int = 0) -> str:
    if len(xs) < 2:
        return "–"
    return f"{fmt_num(min(xs), digits)} – {fmt_num(max(xs), digits)}"


def report(argv: list[str]) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="compare.py report")
    p.add_argument("--results", required=True)
    p.add_argument("--meta", action="append", default=[], help="KEY=VALUE")
    p.add_argument("--syscalls", action="append", default=[], help="TOOL=JSONFILE")
    p.add_argument("--perf", action="append", default=[], help="TOOL=JSONFILE")
    p.add_argument("--callgrind", action="append", default=[],
                   help="TOOL=N1:INSTR1,N2:INSTR2")
    p.add_argument("--note", action="append", default=[])
    a = p.parse_args(argv)
    meta = dict(kv.split("=", 1) for kv in a.meta)

    recs = []
    with open(a.results) as fh:
        for line in fh:
            if line.strip():
                recs.append(json.loads(line))
    if not recs:
        die(f"report: no results in {a.results}")

    cases = []
    for r in recs:
        key = (r["test"], r["pipeline"], r["transport"])
        if key not in cases:
            cases.append(key)

    def sel(case, tool):
        return sorted((r for r in recs if (r["test"], r["pipeline"], r["transport"]) == case
                       and r["tool"] == tool), key=lambda r: r["rep"])

    out = []
    w = out.append
    w("# respbench vs redis-benchmark")
    w("")
    w(f"- Date: {meta.get('date', '?')}")
    w(f"- Machine: Linux {meta.get('kernel', '?')}, {meta.get('cpu', '?')}, "
      f"nproc={meta.get('nproc', '?')}")
    w(f"- Pinning: {meta.get('pinning', '?')}")
    w(f"- Server: {meta.get('server_version', '?')}")
    w(f"- Clients: {meta.get('redis_benchmark_version', '?')}; {meta.get('respbench_version', '?')}")
    w(f"- Workload: `{meta.get('workload', '?')}`, {meta.get('reps', '?')} interleaved rep(s) "
      f"per case; GET keys prefilled")
    sources = sorted({r["server_cpu_source"] for r in recs})
    w("- Client CPU = user+sys from wait4() rusage ÷ requests; server busy = server CPU time "
      f"during the run ({'/'.join('/proc/<pid>/task/*/' + s if s == 'schedstat' else '/proc/<pid>/stat' for s in sources)}) ÷ the run's wall time")
    w("")
    w("## Results (medians over reps)")
    w("")
    w("| case | tool | req/s | req/s min – max | client CPU µs/req | server busy % | server CPU µs/req |")
    w("|---|---|---:|---:|---:|---:|---:|")
    for case in cases:
        name = f"{case[0]} -P {case[1]} {case[2]}"
        for tool in TOOLS:
            rs = sel(case, tool)
            if not rs:
                continue
            rps = [r["rps"] for r in rs]
            w(f"| {name} | {tool} | {fmt_num(median(rps))} | {fmt_range(rps)} | "
              f"{fmt_num(median([r['client_cpu_us_per_req'] for r in rs]), 2)} | "
              f"{fmt_num(median([r['server_busy_pct'] for r in rs]), 1)} | "
              f"{fmt_num(median([r['server_cpu_us_per_req'] for r in rs]), 2)} |")
    w("")
    w("## Ratios respbench / redis-benchmark")
    w("")
    w("Median over reps of the per-rep ratio (the two tools' runs of a rep are back to back). "
      "Throughput: > 1 means respbench is faster. Client CPU per request: < 1 means respbench "
      "uses less CPU per request.")
    w("")
    w("| case | throughput ratio | (min – max) | client CPU/req ratio | (min – max) |")
    w("|---|---:|---:|---:|---:|")
    all_tp, all_cpu = [], []
    for case in cases:
        a_ = {r["rep"]: r for r in sel(case, "redis-benchmark")}
        b_ = {r["rep"]: r for r in sel(case, "respbench")}
        reps = sorted(set(a_) & set(b_))
        tp = [b_[k]["rps"] / a_[k]["rps"] for k in reps]
        cpu = [b_[k]["client_cpu_us_per_req"] / a_[k]["client_cpu_us_per_req"]
               for k in reps if a_[k]["client_cpu_us_per_req"] > 0]
        if tp:
            all_tp.append(median(tp))
        if cpu:
            all_cpu.append(median(cpu))
        w(f"| {case[0]} -P {case[1]} {case[2]} | {fmt_num(median(tp), 3)} | {fmt_range(tp, 3)} | "
          f"{fmt_num(median(cpu), 3)} | {fmt_range(cpu, 3)} |")
    if all_tp and all_cpu:
        gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
        w(f"| **geometric mean** | **{gm(all_tp):.3f}** | | **{gm(all_cpu):.3f}** | |")
    w("")

    # The cost of TLS for each tool: TLS ÷ plain TCP, per rep, then the median.
    tls_cases = [c for c in cases if c[2] == "tls" and (c[0], c[1], "tcp") in cases]
    if tls_cases:
        w("## TLS cost: TLS ÷ plain TCP, same tool")
        w("")
        w("Median over reps of the per-rep ratio of each tool's TLS run to its TCP run (same "
          "rep). Client CPU per request: how much more CPU a request costs the client over TLS. "
          "Throughput: < 1 means TLS is slower.")
        w("")
        w("| case | tool | client CPU/req TLS ÷ TCP | (min – max) | throughput TLS ÷ TCP | (min – max) |")
        w("|---|---|---:|---:|---:|---:|")
        for case in tls_cases:
            plain = (case[0], case[1], "tcp")
            for tool in TOOLS:
                t_ = {r["rep"]: r for r in sel(case, tool)}
                p_ = {r["rep"]: r for r in sel(plain, tool)}
                reps = sorted(set(t_) & set(p_))
                cpu = [t_[k]["client_cpu_us_per_req"] / p_[k]["client_cpu_us_per_req"]
                       for k in reps if p_[k]["client_cpu_us_per_req"] > 0]
                tp = [t_[k]["rps"] / p_[k]["rps"] for k in reps]
                w(f"| {case[0]} -P {case[1]} | {tool} | {fmt_num(median(cpu), 2)} | "
                  f"{fmt_range(cpu, 2)} | {fmt_num(median(tp), 2)} | {fmt_range(tp, 2)} |")
        w("")

    if a.syscalls or a.perf or a.callgrind or a.note:
        w(f"## Per-request costs at {meta.get('cost_case', 'SET -P 1 tcp')}")
        w("")
    if a.syscalls:
        w(f"Syscalls per request: `strace -f -c` over a whole run of "
          f"-n {meta.get('cost_requests', '?')} (includes start-up and connection set-up).")
        w("")
        w("| tool | syscalls/req | top syscalls (per req) |")
        w("|---|---:|---|")
        for item in a.syscalls:
            tool, path = item.split("=", 1)
            with open(path) as fh:
                s = json.load(fh)
            top = ", ".join(f"{n} {v:.2f}" for n, v in s["top"])
            w(f"| {tool} | {s['per_req']:.2f} | {top} |")
        w("")
    if a.perf:
        w(f"Instructions per request: `perf stat -e instructions` on the client, -n "
          f"{meta.get('cost_requests', '?')} (whole process, incl. start-up).")
        w("")
        w("| tool | event | instructions/req |")
        w("|---|---|---:|")
        for item in a.perf:
            tool, path = item.split("=", 1)
            with open(path) as fh:
                s = json.load(fh)
            n = int(meta.get("cost_requests", "1"))
            w(f"| {tool} | {s['event']} | {s['instructions'] / n:,.0f} |")
        w("")
    if a.callgrind:
        w("User-space instructions per request from `valgrind --tool=callgrind` (callgrind counts "
          "user-space instructions only: no kernel time, no syscalls). \"whole run\" = total ÷ "
          "requests of the shorter run (includes start-up); \"marginal\" = difference between "
          "the two runs ÷ difference in requests (start-up cancels out).")
        w("")
        w("| tool | whole run instr/req | marginal instr/req |")
        w("|---|---:|---:|")
        for item in a.callgrind:
            tool, spec = item.split("=", 1)
            pts = [tuple(int(x) for x in pt.split(":")) for pt in spec.split(",")]
            pts.sort()
            n1, i1 = pts[0]
            whole = f"{i1 / n1:,.0f} (n={n1})"
            marg = "n/a"
            if len(pts) > 1 and pts[-1][0] > n1:
                n2, i2 = pts[-1]
                marg = f"{(i2 - i1) / (n2 - n1):,.0f}"
            w(f"| {tool} | {whole} | {marg} |")
        w("")
    for note in a.note:
        w(f"- {note}")
    if a.note:
        w("")
    print("\n".join(out))


def main() -> None:
    if len(sys.argv) < 2:
        die("usage: compare.py SUBCOMMAND ... (see the docstring)")
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "prefill":
        prefill(rest[0], int(rest[1]), int(rest[2]))
    elif cmd == "run":
        run(rest)
    elif cmd == "strace-summary":
        strace_summary(rest[0], int(rest[1]))
    elif cmd == "perf-summary":
        perf_summary(rest[0])
    elif cmd == "callgrind-summary":
        callgrind_summary(rest[0])
    elif cmd == "report":
        report(rest)
    else:
        die(f"unknown subcommand {cmd!r}")


if __name__ == "__main__":
    main()
