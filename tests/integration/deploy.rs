//! `deploy/`: the Kubernetes Indexed Job manifest checked offline (`tests/deploy/check_manifest.py`
//! with PyYAML: an Indexed Job whose completions, parallelism and `--shards` agree, with
//! `--start-at` and a per-shard `--json` on a volume, and only options respbench has), the
//! Prometheus Operator's PodMonitor against it (its selector matches the Job's pods, its endpoint
//! is the port `--metrics-listen` serves, on `/metrics`, scraped more often than
//! `--metrics-linger` lasts), and the container build file's inputs present in the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::TempDir;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn check(manifest: &Path) -> (bool, String) {
    let respbench = Path::new(env!("CARGO_BIN_EXE_respbench"));
    checker(&[manifest, respbench])
}

/// `check_manifest.py ARGS`: whether it passed, and what it said.
fn checker(args: &[&Path]) -> (bool, String) {
    let out = Command::new("python3")
        .arg(repo("tests/deploy/check_manifest.py"))
        .args(args)
        .output()
        .expect("python3 runs tests/deploy/check_manifest.py");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains("ModuleNotFoundError"),
        "PyYAML is missing: `bash scripts/test.sh` installs it\n{text}"
    );
    (out.status.success(), text)
}

#[test]
fn the_indexed_job_manifest_is_consistent() {
    let manifest = repo("deploy/k8s/indexed-job.yaml");
    let (ok, text) = check(&manifest);
    assert!(ok, "{text}");

    // The checker is not a rubber stamp: each broken variant is caught, naming the problem.
    let original = std::fs::read_to_string(&manifest).unwrap();
    let dir = TempDir::new();
    for (from, to, needle) in [
        (
            "parallelism: 4",
            "parallelism: 3",
            "parallelism != completions",
        ),
        (
            "completionMode: Indexed",
            "completionMode: NonIndexed",
            "not Indexed",
        ),
        (
            "\"--shards\"\n            - \"4\"",
            "\"--shards\"\n            - \"5\"",
            "--shards 5",
        ),
        ("out-{shard}.json", "out.json", "does not name the shard"),
        (
            "\"--start-at\"",
            "\"--start-after\"",
            "--start-after is not a respbench option",
        ),
        ("completions: 4", "completions: [4", ""),
    ] {
        assert!(original.contains(from), "{from}");
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, original.replacen(from, to, 1)).unwrap();
        let (ok, text) = check(&bad);
        assert!(!ok && text.contains(needle), "{to}: {text}");
    }
}

#[test]
fn the_podmonitor_scrapes_the_jobs_metrics_port() {
    let podmonitor = repo("deploy/prometheus/podmonitor.yaml");
    let job = repo("deploy/k8s/indexed-job.yaml");
    let (ok, text) = checker(&[Path::new("--podmonitor"), &podmonitor, &job]);
    assert!(ok, "{text}");

    // Each broken variant, of the PodMonitor or of the Job it scrapes, is caught by name.
    let original = std::fs::read_to_string(&podmonitor).unwrap();
    let job_text = std::fs::read_to_string(&job).unwrap();
    let dir = TempDir::new();
    let (bad_pm, bad_job) = (dir.path().join("pm.yaml"), dir.path().join("job.yaml"));
    for (from, to, needle) in [
        (
            "kind: PodMonitor",
            "kind: ServiceMonitor",
            "expected one PodMonitor",
        ),
        (
            "monitoring.coreos.com/v1",
            "monitoring.coreos.com/v1alpha1",
            "apiVersion",
        ),
        (
            "    matchLabels:\n      app.kubernetes.io/name: respbench",
            "    matchLabels:\n      app.kubernetes.io/name: respbench-other",
            "matches no label",
        ),
        ("- port: metrics", "- port: http", "'http' is not a port"),
        ("path: /metrics", "path: /stats", "is not /metrics"),
        (
            "interval: 5s",
            "interval: 30s",
            "not shorter than --metrics-linger 15",
        ),
        ("interval: 5s", "interval: soon", "is not a duration"),
    ] {
        assert!(original.contains(from), "{from}");
        std::fs::write(&bad_pm, original.replacen(from, to, 1)).unwrap();
        let (ok, text) = checker(&[Path::new("--podmonitor"), &bad_pm, &job]);
        assert!(!ok && text.contains(needle), "{to}: {text}");
    }
    for (from, to, needle) in [
        (
            "- \"0.0.0.0:9100\"",
            "- \"0.0.0.0:9200\"",
            "--metrics-listen serves 9200",
        ),
        ("containerPort: 9100", "containerPort: 9300", "is 9300"),
        (
            "prometheus.io/port: \"9100\"",
            "prometheus.io/port: \"9101\"",
            "prometheus.io/port",
        ),
    ] {
        assert!(job_text.contains(from), "{from}");
        std::fs::write(&bad_job, job_text.replacen(from, to, 1)).unwrap();
        let (ok, text) = checker(&[Path::new("--podmonitor"), &podmonitor, &bad_job]);
        assert!(!ok && text.contains(needle), "{to}: {text}");
    }
}

#[test]
fn the_container_build_copies_what_exists() {
    let dockerfile = std::fs::read_to_string(repo("deploy/Dockerfile")).unwrap();
    let mut copies = 0;
    for line in dockerfile
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let parts: Vec<&str> = line.split_whitespace().collect();
        for src in &parts[1..parts.len() - 1] {
            assert!(
                repo(src).exists(),
                "deploy/Dockerfile copies {src}, which is missing"
            );
            copies += 1;
        }
    }
    assert!(copies >= 3, "{dockerfile}");
    assert!(dockerfile.contains("ENTRYPOINT [\"/usr/local/bin/respbench\"]"));
}
