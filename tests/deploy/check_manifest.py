#!/usr/bin/env python3
"""Checks deploy/k8s/indexed-job.yaml offline (no Kubernetes on the test machine).

Usage: check_manifest.py MANIFEST

Parses the YAML (PyYAML, installed by scripts/test.sh) and checks what a sharded run depends on:
an Indexed batch/v1 Job whose completions, parallelism and the container's `--shards` agree, which
passes `--start-at`, writes `--json` under a mounted volume with `{shard}` in the name, does not
restart a failed shard, and uses respbench's own options correctly (every option the command line
gives is one `respbench --help` lists). Prints one line per problem; exit 1 if any.
"""

import re
import subprocess
import sys

import yaml


def main(path, respbench=None):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    problems = []

    def expect(ok, what):
        if not ok:
            problems.append(what)

    jobs = [d for d in docs if d.get("kind") == "Job"]
    expect(len(jobs) == 1, f"expected one Job, found {len(jobs)}")
    if not jobs:
        return problems
    job = jobs[0]
    spec = job.get("spec", {})
    expect(job.get("apiVersion") == "batch/v1", "apiVersion is not batch/v1")
    expect(spec.get("completionMode") == "Indexed", "completionMode is not Indexed")
    n = spec.get("completions")
    expect(isinstance(n, int) and n >= 1, "completions is not a positive integer")
    expect(spec.get("parallelism") == n, "parallelism != completions (shards would not overlap)")
    pod = spec.get("template", {}).get("spec", {})
    expect(pod.get("restartPolicy") == "Never", "restartPolicy is not Never")
    containers = pod.get("containers", [])
    expect(len(containers) == 1, "expected one container")
    if not containers:
        return problems
    c = containers[0]
    args = [str(a) for a in c.get("command", [])[1:] + c.get("args", [])]

    def value(flag):
        return args[args.index(flag) + 1] if flag in args[:-1] else None

    expect(value("--shards") == str(n), f"--shards {value('--shards')} != completions {n}")
    expect(value("--start-at") is not None, "no --start-at: the shards would not start together")
    out = value("--json") or ""
    expect("{shard}" in out, "--json path does not name the shard ({shard})")
    mounts = [m.get("mountPath", "") for m in c.get("volumeMounts", [])]
    expect(any(out.startswith(m.rstrip("/") + "/") for m in mounts), "--json is not on a volume")
    if respbench:
        listed = set(re.findall(r"^ (-{1,2}[\w-]+)", subprocess.run(
            [respbench, "--help"], capture_output=True, text=True, check=True).stdout, re.M))
        for a in args:
            if a.startswith("-") and not re.fullmatch(r"-?\d+", a):
                expect(a in listed, f"{a} is not a respbench option")
    return problems


if __name__ == "__main__":
    found = main(*sys.argv[1:])
    for p in found:
        print(f"{sys.argv[1]}: {p}")
    sys.exit(1 if found else 0)
