#!/usr/bin/env python3
"""Checks deploy/k8s/indexed-job.yaml offline (no Kubernetes on the test machine), and the
Prometheus Operator's PodMonitor that scrapes its pods (deploy/prometheus/podmonitor.yaml).

Usage: check_manifest.py MANIFEST [RESPBENCH]
       check_manifest.py --podmonitor PODMONITOR MANIFEST

Parses the YAML (PyYAML, installed by scripts/test.sh) and checks what a sharded run depends on:
an Indexed batch/v1 Job whose completions, parallelism and the container's `--shards` agree, which
passes `--start-at`, writes `--json` under a mounted volume with `{shard}` in the name, does not
restart a failed shard, and uses respbench's own options correctly (every option the command line
gives is one `respbench --help` lists).

With --podmonitor: a monitoring.coreos.com/v1 PodMonitor whose selector matches the Job's pod
labels, and whose endpoint names the container port that `--metrics-listen` serves, on path
/metrics, scraped at an interval shorter than `--metrics-linger` (else the last figures are never
scraped before the pod ends); the pod's prometheus.io/* annotations name the same port and path.

Prints one line per problem; exit 1 if any.
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


def seconds(interval):
    """A Prometheus duration such as `5s` or `1m` in seconds (None if it is not one)."""
    m = re.fullmatch(r"(\d+)(ms|s|m|h)", str(interval))
    if not m:
        return None
    return int(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def podmonitor(path, job_path):
    """The PodMonitor at `path` against the Job at `job_path`: the problems found."""
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    with open(job_path) as f:
        jobs = [d for d in yaml.safe_load_all(f) if d is not None and d.get("kind") == "Job"]
    problems = []

    def expect(ok, what):
        if not ok:
            problems.append(what)

    monitors = [d for d in docs if d.get("kind") == "PodMonitor"]
    expect(len(monitors) == 1, f"expected one PodMonitor, found {len(monitors)}")
    expect(len(jobs) == 1, f"expected one Job in {job_path}, found {len(jobs)}")
    if not monitors or not jobs:
        return problems
    pm = monitors[0]
    expect(pm.get("apiVersion") == "monitoring.coreos.com/v1",
           "apiVersion is not monitoring.coreos.com/v1")
    spec = pm.get("spec") or {}
    template = jobs[0].get("spec", {}).get("template", {})
    pod_labels = template.get("metadata", {}).get("labels") or {}
    wanted = (spec.get("selector") or {}).get("matchLabels") or {}
    expect(wanted, "selector.matchLabels is empty")
    for k, v in wanted.items():
        expect(pod_labels.get(k) == v, f"selector {k}={v} matches no label of the Job's pods")
    endpoints = spec.get("podMetricsEndpoints") or []
    expect(len(endpoints) == 1, f"expected one podMetricsEndpoints entry, found {len(endpoints)}")
    if not endpoints:
        return problems
    ep = endpoints[0]
    containers = template.get("spec", {}).get("containers") or [{}]
    c = containers[0]
    args = [str(a) for a in c.get("command", [])[1:] + c.get("args", [])]

    def value(flag):
        return args[args.index(flag) + 1] if flag in args[:-1] else None

    listen = value("--metrics-listen") or ""
    served = listen.rsplit(":", 1)[-1] if ":" in listen else None
    expect(served is not None, "the Job's container has no --metrics-listen ADDR:PORT")
    ports = {p.get("name"): str(p.get("containerPort")) for p in c.get("ports", [])}
    name = ep.get("port")
    expect(name in ports, f"port {name!r} is not a port of the Job's container ({sorted(ports)})")
    expect(name not in ports or ports[name] == served,
           f"port {name!r} is {ports.get(name)}, --metrics-listen serves {served}")
    expect(ep.get("path", "/metrics") == "/metrics", f"path {ep.get('path')!r} is not /metrics")
    every = seconds(ep.get("interval", "30s"))
    expect(every is not None, f"interval {ep.get('interval')!r} is not a duration")
    linger = value("--metrics-linger")
    expect(linger is not None, "the Job's container has no --metrics-linger")
    if every is not None and linger is not None:
        expect(every < float(linger),
               f"interval {ep.get('interval')} is not shorter than --metrics-linger {linger}")
    notes = template.get("metadata", {}).get("annotations") or {}
    expect(str(notes.get("prometheus.io/port")) == served,
           f"prometheus.io/port {notes.get('prometheus.io/port')} != {served}")
    expect(notes.get("prometheus.io/path") == "/metrics", "prometheus.io/path is not /metrics")
    return problems


if __name__ == "__main__":
    if sys.argv[1:2] == ["--podmonitor"]:
        found = podmonitor(*sys.argv[2:4])
        shown = sys.argv[2]
    else:
        found = main(*sys.argv[1:])
        shown = sys.argv[1]
    for p in found:
        print(f"{shown}: {p}")
    sys.exit(1 if found else 0)
