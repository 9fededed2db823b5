//! The documentation's links stay true: every relative link in `README.md` and `docs/*.md` names a
//! file that exists and, for a `#section` of a Markdown page, a heading that page has (GitHub's
//! anchor rule); and `docs/README.md`, the table of contents, links every page of `docs/`. Pages
//! are split and renamed over time; a link that silently stops working is how a split
//! documentation goes stale.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Pages written on another branch that the docs already link to. When one arrives, this test
/// says so, and its entry goes.
const PENDING: &[&str] = &[];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every Markdown page of `docs/`, as repository-relative paths.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    for entry in fs::read_dir(repo().join("docs")).expect("docs/") {
        let name = entry.expect("a docs/ entry").file_name();
        if name.to_string_lossy().ends_with(".md") {
            pages.push(Path::new("docs").join(name));
        }
    }
    pages.sort();
    pages
}

#[test]
fn every_relative_link_resolves() {
    let mut problems = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(repo().join(&page)).expect("a page");
        for (line, target) in links(&text) {
            if let Some(problem) = check(&page, &target) {
                problems.push(format!("{}:{line}: {target}: {problem}", page.display()));
            }
        }
    }
    for pending in PENDING {
        if repo().join(pending).exists() {
            problems.push(format!(
                "{pending} exists now: remove it from PENDING in tests/docs.rs"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "broken documentation links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_table_of_contents_links_every_page() {
    let toc = fs::read_to_string(repo().join("docs/README.md")).expect("docs/README.md");
    let linked: BTreeSet<String> = links(&toc)
        .into_iter()
        .map(|(_, t)| t.split('#').next().unwrap_or_default().to_string())
        .collect();
    let missing: Vec<String> = pages()
        .iter()
        .filter_map(|p| p.strip_prefix("docs").ok())
        .map(|p| p.display().to_string())
        .filter(|p| p != "README.md" && !linked.contains(p))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/README.md does not link: {missing:?}"
    );
}

/// What is wrong with one link of `page`, if anything.
fn check(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        page.to_path_buf()
    } else {
        normalize(&page.parent().unwrap().join(path))
    };
    if PENDING.iter().any(|p| Path::new(p) == file) {
        return None;
    }
    if !repo().join(&file).exists() {
        return Some(format!("no file {}", file.display()));
    }
    let is_md = file.extension().is_some_and(|e| e == "md");
    if anchor.is_empty() || !is_md {
        return None;
    }
    let text = fs::read_to_string(repo().join(&file)).expect("a linked page");
    let known = headings(&text).iter().any(|h| slug(h) == anchor);
    (!known).then(|| format!("{} has no heading for #{anchor}", file.display()))
}

/// `a/../b` → `b`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Lines outside code fences, with their numbers.
fn prose(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter_map(move |(i, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((i + 1, line))
    })
}

/// The targets of `[text](target)` links outside code fences and inline code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in prose(text) {
        let outside_code: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = outside_code.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            found.push((number, rest[..end].trim().to_string()));
            rest = &rest[end..];
        }
    }
    found
}

fn headings(text: &str) -> Vec<String> {
    prose(text)
        .filter(|(_, l)| l.starts_with('#'))
        .map(|(_, l)| l.trim_start_matches('#').trim().to_string())
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped,
/// spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn anchors_follow_githubs_rule_and_code_is_not_a_link() {
    assert_eq!(
        slug("Restarts, lost connections and timeouts (`-e`, `--timeout`)"),
        "restarts-lost-connections-and-timeouts--e---timeout"
    );
    assert_eq!(
        slug("Push messages (`-3`, pub/sub)"),
        "push-messages--3-pubsub"
    );
    let text = "a [b](x.md#y) `[c](z.md)`\n```\n[d](w.md)\n```\n[e](../f.md)\n";
    let found: Vec<(usize, String)> = links(text);
    assert_eq!(
        found,
        [(1, "x.md#y".to_string()), (5, "../f.md".to_string())]
    );
    assert_eq!(
        normalize(Path::new("docs/../bench/README.md")),
        PathBuf::from("bench/README.md")
    );
    assert!(check(Path::new("docs/x.md"), "nowhere.md").is_some());
    assert!(check(Path::new("docs/x.md"), "README.md#no-such-heading").is_some());
    assert!(check(Path::new("docs/x.md"), "../README.md#quick-start").is_none());
}
