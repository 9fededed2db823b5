//! The dependency line of `docs/architecture.md` ("Dependency direction …: `a → b, c`; …") checked
//! against the code, so it cannot go stale: every edge the code has between top-level modules must
//! be in the line, and every edge in the line must still be in the code.
//!
//! An edge `a → b` is a `crate::b` path (a `use`, a `crate::b::f()` call, a `crate::{b, …}` group)
//! in non-test code of top-level module `a` (`src/a.rs`, `src/a/mod.rs` or anything under `src/a/`;
//! `src/main.rs` is `main`, whose paths start with `respbench::`), or a `resp::` path for the
//! `resp` crate. Test code does not count: `#[cfg(test)]` items are cut out, and so are the files a
//! `#[cfg(test)] mod x;` declares (and `tests.rs`/`*_tests.rs`), because the line states what the
//! shipped program depends on. Comments and string literals are blanked first, so prose that
//! mentions `crate::x` is not an edge.
//!
//! In the doc, backticks and parenthesised notes are ignored (a note may say why an edge exists,
//! or list test-only edges as "(tests: also …)"); clauses are separated by `;`; the last clause
//! "`x`, `y` and `z` import nothing of the crate" names the modules without edges.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// An edge between top-level modules, mapped to where the code first shows it (`file:line`).
type Edges = BTreeMap<(String, String), String>;

const DOC: &str = "docs/architecture.md";

#[test]
fn dependency_line_matches_the_code() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join(DOC)).expect("docs/architecture.md");
    let line = DocLine::parse(&doc);
    let code = code_edges(&root.join("src"));
    let modules = top_level_modules(&root.join("src"));
    let mut problems = compare(&line, &code, &modules);
    problems.extend(a_loop(&code).map(|path| format!("a loop in the code: {path}")));
    assert!(
        problems.is_empty(),
        "the dependency line of {DOC} (\"Dependency direction\") disagrees with src/ \
         ({} problem(s)); fix the line:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The mode folders (issue 32): each holds a mode's plan, runtime, record block and report.
const MODES: &[&str] = &["storm", "fuzz", "replay", "memory", "delivery", "memtier"];
/// Modules every mode builds on, so none of them may import a mode: the record (a mode's block
/// is held through its kind, `record::block`), the HTML toolkit, and the command line (a mode's
/// options are held through their kind, `cli::ModeArgs`).
const BELOW_MODES: &[&str] = &["record", "html", "cli"];

/// The seam of issue 32: `record`, `html` and `cli` import no mode folder, and the registry
/// (`src/modes.rs`) is above the modes: only `main` imports it.
#[test]
fn record_html_and_cli_are_below_the_modes_and_the_registry_above() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let code = code_edges(&root.join("src"));
    let problems = seam_problems(&code);
    assert!(
        problems.is_empty(),
        "the modes' seam is broken ({} problem(s)):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The modes whose files have all moved into their folder (issue 32's "done when"): no file
/// elsewhere in `src/` is named after the mode, and outside the folder only the registry
/// (`src/modes.rs`) and the entry points (`src/lib.rs`, `src/main.rs`) name its module (a
/// `mode::` path, `crate::mode`, `mod mode`, or the mode in a `use` group), tests included.
/// This list only grows, up to [`MODES`].
const IN_THEIR_FOLDERS: &[&str] = &["memtier", "replay", "storm", "fuzz", "memory", "delivery"];
/// The files outside a mode's folder that may name it.
const MAY_NAME_A_MODE: &[&str] = &["modes.rs", "lib.rs", "main.rs"];

#[test]
fn a_moved_mode_lives_in_its_folder() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for mode in IN_THEIR_FOLDERS {
        for file in &files {
            let rel = file.strip_prefix(&src).unwrap();
            if rel.starts_with(mode) {
                continue;
            }
            let named_after = rel
                .components()
                .any(|c| c.as_os_str().to_string_lossy().contains(mode));
            if named_after {
                problems.push(format!(
                    "src/{} is named after `{mode}`: move it into src/{mode}/, or name it for \
                     what it is if a lower layer owns it",
                    rel.display()
                ));
            }
            if MAY_NAME_A_MODE.iter().any(|f| rel == Path::new(f)) {
                continue;
            }
            let code = blank_literals(&fs::read_to_string(file).expect("a source file"));
            if let Some(line) = names_module(&code, mode) {
                problems.push(format!(
                    "src/{}:{line} names the module `{mode}`: pass what it needs down, or let \
                     the registry (src/modes.rs) install it",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "a mode is not in its folder ({} problem(s)):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn a_mode_is_named_by_its_paths_not_by_a_field() {
    assert_eq!(names_module("use crate::memtier::cli;", "memtier"), Some(1));
    assert_eq!(
        names_module("x\nuse crate::{delivery, memtier};", "memtier"),
        Some(2)
    );
    assert_eq!(names_module("pub mod memtier;", "memtier"), Some(1));
    assert_eq!(
        names_module("let a = super::memtier ::f();", "memtier"),
        Some(1)
    );
    let fields = "struct P { memtier: Option<u8> }\nfn f(p: P) { p.memtier; with_memtier(); }";
    assert_eq!(names_module(fields, "memtier"), None);
    assert_eq!(
        names_module(&blank_literals("// crate::memtier::x\n"), "memtier"),
        None
    );
}

/// The line of the first place `code` (comments and literals blanked) names the module `name`
/// as a path: `name::…`, `…::name`, `mod name`, or `name` inside a `use` group.
fn names_module(code: &str, name: &str) -> Option<usize> {
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(found) = code[from..].find(name) {
        let at = from + found;
        let end = at + name.len();
        from = end;
        let ident = |i: usize| bytes.get(i).is_some_and(|&b| is_ident(b as char));
        if (at > 0 && ident(at - 1)) || ident(end) {
            continue;
        }
        let before = code[..at].trim_end();
        let after = code[end..].trim_start();
        let in_use = before.ends_with(['{', ',']) && {
            let statement = &code[before.rfind(';').unwrap_or(0)..at];
            statement.contains("use ")
        };
        if after.starts_with("::") || before.ends_with("::") || before.ends_with("mod") || in_use {
            return Some(code[..at].lines().count().max(1));
        }
    }
    None
}

/// Every edge across the seam that should not be there, one line each.
fn seam_problems(code: &Edges) -> Vec<String> {
    let mut problems = Vec::new();
    for ((from, to), at) in code {
        if BELOW_MODES.contains(&from.as_str()) && MODES.contains(&to.as_str()) {
            problems.push(format!(
                "`{from} → {to}` (first at {at}): `{from}` is below the modes; the mode's \
                 block goes through its kind (`record::block`), its options through theirs \
                 (`cli::ModeArgs`), both listed in `src/modes.rs`"
            ));
        }
        if to == "modes" && from != "main" {
            problems.push(format!(
                "`{from} → modes` (first at {at}): the registry is above the modes; only \
                 `main` imports it"
            ));
        }
    }
    problems
}

/// Every disagreement between the doc's line and the code, one line each.
fn compare(line: &DocLine, code: &Edges, modules: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for ((from, to), at) in code {
        if !line.edges.contains(&(from.clone(), to.clone())) {
            problems.push(format!(
                "missing from the line: `{from} → {to}` (the code has it, first at {at})"
            ));
        }
    }
    for (from, to) in &line.edges {
        if !code.contains_key(&(from.clone(), to.clone())) {
            problems.push(format!(
                "stale in the line: `{from} → {to}` (no `crate::{to}` path outside tests in \
                 module `{from}`)"
            ));
        }
    }
    for module in modules {
        if !line.named.contains(module) {
            problems.push(format!(
                "module `{module}` is not named in the line: add `{module} → …`, or add it to \
                 the modules that \"import nothing of the crate\""
            ));
        }
    }
    let targets = line.edges.iter().map(|(_, to)| to);
    let mut unknown: BTreeSet<&String> = line.named.iter().chain(targets).collect();
    unknown.retain(|m| m.as_str() != "resp" && !modules.contains(*m));
    for module in unknown {
        problems.push(format!(
            "the line names module `{module}`, which src/ does not have (renamed or moved?)"
        ));
    }
    problems
}

/// One dependency loop of the code (`a → b → a`), if it has any: the line promises none.
fn a_loop(code: &Edges) -> Option<String> {
    fn visit<'a>(
        node: &'a str,
        code: &'a Edges,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|&n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node);
            return Some(cycle.join(" → "));
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for (_, to) in code.keys().filter(|(from, _)| from == node) {
            if let Some(found) = visit(to, code, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    code.keys()
        .find_map(|(from, _)| visit(from, code, &mut Vec::new(), &mut done))
}

/// The doc's dependency line, read.
#[derive(Debug, Default)]
struct DocLine {
    edges: BTreeSet<(String, String)>,
    /// Every module the line speaks for: left of a `→`, or among those that import nothing.
    named: BTreeSet<String>,
}

impl DocLine {
    /// Reads the paragraph that starts with "Dependency direction" (up to the next blank line).
    fn parse(doc: &str) -> DocLine {
        let paragraph: Vec<&str> = doc
            .lines()
            .skip_while(|l| !l.starts_with("Dependency direction"))
            .take_while(|l| !l.trim().is_empty())
            .collect();
        assert!(
            !paragraph.is_empty(),
            "{DOC} has no paragraph starting with \"Dependency direction\""
        );
        let text = without_notes(&paragraph.join(" ").replace('`', ""));
        let (_, clauses) = text
            .split_once(':')
            .unwrap_or_else(|| panic!("{DOC}: the dependency line has no ':' before its clauses"));
        let mut line = DocLine::default();
        for clause in clauses
            .split(';')
            .map(|c| c.trim().trim_end_matches('.').trim())
        {
            if clause.is_empty() {
                continue;
            }
            line.add_clause(clause);
        }
        line
    }

    fn add_clause(&mut self, clause: &str) {
        if let Some((from, to)) = clause.split_once('→') {
            let from = one_name(from, clause);
            for to in to.split(',') {
                self.edges.insert((from.clone(), one_name(to, clause)));
            }
            self.named.insert(from);
        } else if let Some(names) = clause.strip_suffix("import nothing of the crate") {
            for name in names.replace(" and ", ",").split(',') {
                if !name.trim().is_empty() {
                    self.named.insert(one_name(name, clause));
                }
            }
        } else {
            panic!(
                "{DOC}: cannot read the clause \"{clause}\" of the dependency line \
                 (expected `a → b, c` or `x, y and z import nothing of the crate`)"
            );
        }
    }
}

/// A module name: one word, or the clause is not in the line's grammar.
fn one_name(word: &str, clause: &str) -> String {
    let word = word.trim();
    let ok = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    assert!(
        ok,
        "{DOC}: \"{word}\" in the clause \"{clause}\" is not a module name \
         (notes go in parentheses)"
    );
    word.to_string()
}

/// The text with every parenthesised note (nested ones too) removed.
fn without_notes(text: &str) -> String {
    let mut depth = 0usize;
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The top-level modules: `src/x.rs` and `src/x/`, plus `main`; not the crate root `lib.rs`.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for entry in fs::read_dir(src).expect("src/") {
        let path = entry.expect("a src/ entry").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            modules.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "lib"
        {
            modules.insert(stem.to_string());
        }
    }
    modules
}

/// Every edge the non-test code of `src/` has.
fn code_edges(src: &Path) -> Edges {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut cleaned = BTreeMap::new();
    let mut test_only = BTreeSet::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("a source file");
        let (code, test_mods) = without_tests(&blank_literals(&text));
        for name in test_mods {
            test_only.extend(child_module_paths(file, &name));
        }
        cleaned.insert(file.clone(), code);
    }
    let modules = top_level_modules(src);
    let mut edges = Edges::new();
    for (file, code) in &cleaned {
        let rel = file.strip_prefix(src).unwrap();
        let Some(from) = top_module(rel) else {
            continue;
        };
        if is_test_file(rel, &test_only, src) {
            continue;
        }
        let root = if from == "main" { "respbench" } else { "crate" };
        for (to, line) in paths(code, root) {
            if to != from && (to == "resp" || modules.contains(&to)) {
                let at = format!("src/{}:{line}", rel.display());
                edges.entry((from.clone(), to)).or_insert(at);
            }
        }
    }
    edges
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`None` for the crate root `lib.rs`).
fn top_module(rel: &Path) -> Option<String> {
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .to_string();
    match first.strip_suffix(".rs") {
        Some("lib") => None,
        Some(stem) => Some(stem.to_string()),
        None => Some(first),
    }
}

/// Whether a file holds only test code: declared by a `#[cfg(test)] mod x;` (or inside such a
/// module's directory), or named `tests.rs` / `*_tests.rs`.
fn is_test_file(rel: &Path, test_only: &BTreeSet<PathBuf>, src: &Path) -> bool {
    let name = rel.file_name().unwrap().to_string_lossy();
    let full = src.join(rel);
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || test_only.iter().any(|t| full == *t || full.starts_with(t))
}

/// Where `mod name;` declared in `file` lives: `name.rs`, `name/mod.rs` and the `name/` directory,
/// beside `file` when it is `mod.rs`/`lib.rs`/`main.rs`, else in the directory named after it.
fn child_module_paths(file: &Path, name: &str) -> Vec<PathBuf> {
    let stem = file.file_stem().unwrap().to_string_lossy();
    let parent = file.parent().unwrap();
    let dir = match stem.as_ref() {
        "mod" | "lib" | "main" => parent.to_path_buf(),
        _ => parent.join(stem.as_ref()),
    };
    vec![dir.join(format!("{name}.rs")), dir.join(name)]
}

/// The source with comments, string literals and char literals replaced by spaces (newlines
/// kept, so line numbers stay right), so that braces and paths in them are not seen as code.
fn blank_literals(text: &str) -> String {
    let s: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < s.len() {
        let end = literal_end(&s, i);
        if end > i {
            out.extend(
                s[i..end]
                    .iter()
                    .map(|&c| if c == '\n' { '\n' } else { ' ' }),
            );
            i = end;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// If a comment or literal starts at `i`, the index just past it; else `i`.
fn literal_end(s: &[char], i: usize) -> usize {
    let at = |k: usize| s.get(k).copied().unwrap_or('\0');
    let after_ident = i > 0 && is_ident(s[i - 1]);
    match (at(i), at(i + 1)) {
        ('/', '/') => (i..s.len()).find(|&k| s[k] == '\n').unwrap_or(s.len()),
        ('/', '*') => block_comment_end(s, i),
        ('"', _) => quoted_end(s, i + 1, '"'),
        ('b', '"') if !after_ident => quoted_end(s, i + 2, '"'),
        ('b', '\'') if !after_ident => quoted_end(s, i + 2, '\''),
        ('r', '"' | '#') if !after_ident => raw_end(s, i + 1).unwrap_or(i),
        ('b', 'r') if !after_ident && matches!(at(i + 2), '"' | '#') => {
            raw_end(s, i + 2).unwrap_or(i)
        }
        ('\'', '\\') => quoted_end(s, i + 1, '\''),
        ('\'', _) if at(i + 2) == '\'' => i + 3,
        _ => i,
    }
}

fn block_comment_end(s: &[char], start: usize) -> usize {
    let (mut depth, mut k) = (0usize, start);
    while k + 1 < s.len() {
        match (s[k], s[k + 1]) {
            ('/', '*') => (depth, k) = (depth + 1, k + 2),
            ('*', '/') => {
                (depth, k) = (depth - 1, k + 2);
                if depth == 0 {
                    return k;
                }
            }
            _ => k += 1,
        }
    }
    s.len()
}

/// Past the closing `quote` of a literal whose body starts at `k` (backslash escapes honoured).
fn quoted_end(s: &[char], mut k: usize, quote: char) -> usize {
    while k < s.len() {
        match s[k] {
            '\\' => k += 2,
            c if c == quote => return k + 1,
            _ => k += 1,
        }
    }
    s.len()
}

/// Past a raw string whose `#`s or `"` start at `k`; `None` if it is not one (`r#ident`).
fn raw_end(s: &[char], mut k: usize) -> Option<usize> {
    let mut hashes = 0;
    while s.get(k) == Some(&'#') {
        hashes += 1;
        k += 1;
    }
    if s.get(k) != Some(&'"') {
        return None;
    }
    k += 1;
    while k < s.len() {
        if s[k] == '"' && (1..=hashes).all(|h| s.get(k + h) == Some(&'#')) {
            return Some(k + 1 + hashes);
        }
        k += 1;
    }
    Some(s.len())
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The code with every `#[cfg(test)]` item blanked, and the names of the modules it declares
/// test-only in another file (`#[cfg(test)] mod name;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut s: Vec<char> = code.chars().collect();
    let mark: Vec<char> = MARK.chars().collect();
    let mut test_mods = Vec::new();
    let mut i = 0;
    while i + mark.len() <= s.len() {
        if s[i..i + mark.len()] != mark[..] {
            i += 1;
            continue;
        }
        let end = item_end(&s, i + mark.len());
        let item: String = s[i + mark.len()..end].iter().collect();
        let words: Vec<&str> = item
            .split(|c: char| !is_ident(c))
            .filter(|w| !w.is_empty())
            .collect();
        if item.trim_end().ends_with(';') && words.len() >= 2 && words[words.len() - 2] == "mod" {
            test_mods.push(words[words.len() - 1].to_string());
        }
        for c in &mut s[i..end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = end;
    }
    (s.into_iter().collect(), test_mods)
}

/// Past the item that starts at `k`: its `;` or its braced body, whichever comes first outside
/// parentheses and brackets (attributes before it contain neither).
fn item_end(s: &[char], mut k: usize) -> usize {
    let mut nesting = 0usize;
    while k < s.len() {
        match s[k] {
            '(' | '[' => nesting += 1,
            ')' | ']' => nesting = nesting.saturating_sub(1),
            ';' if nesting == 0 => return k + 1,
            '{' if nesting == 0 => return matching_brace(s, k),
            _ => {}
        }
        k += 1;
    }
    s.len()
}

/// Past the `}` that closes the `{` at `k`.
fn matching_brace(s: &[char], mut k: usize) -> usize {
    let mut depth = 0usize;
    while k < s.len() {
        match s[k] {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
        k += 1;
    }
    s.len()
}

/// The first segments of the paths that start with `root::` (with `crate::{a, b::c}` groups
/// giving each of theirs), and `resp` for `resp::` paths, each with its line number.
fn paths(code: &str, root: &str) -> Vec<(String, usize)> {
    let s: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < s.len() {
        if s[i] == '\n' {
            line += 1;
        }
        let starts_path = i == 0 || !(is_ident(s[i - 1]) || s[i - 1] == ':');
        if starts_path && followed_by(&s, i, "resp::") {
            found.push(("resp".to_string(), line));
        } else if starts_path && followed_by(&s, i, &format!("{root}::")) {
            let k = skip_space(&s, i + root.len() + 2);
            if s.get(k) == Some(&'{') {
                let group: String = s[k + 1..matching_brace(&s, k) - 1].iter().collect();
                for name in top_level_items(&group) {
                    found.push((name, line));
                }
            } else {
                found.push((ident_at(&s, k), line));
            }
        }
        i += 1;
    }
    found
}

fn followed_by(s: &[char], i: usize, word: &str) -> bool {
    word.chars()
        .enumerate()
        .all(|(k, c)| s.get(i + k) == Some(&c))
}

fn skip_space(s: &[char], mut k: usize) -> usize {
    while s.get(k).is_some_and(|c| c.is_whitespace()) {
        k += 1;
    }
    k
}

fn ident_at(s: &[char], k: usize) -> String {
    s[k.min(s.len())..]
        .iter()
        .take_while(|&&c| is_ident(c))
        .collect()
}

/// The first identifier of each comma-separated item of a `{…}` group (nested groups skipped).
fn top_level_items(group: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut depth = 0usize;
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => items.push(String::new()),
            _ if depth == 0 => items.last_mut().unwrap().push(c),
            _ => {}
        }
    }
    items
        .iter()
        .map(|item| {
            item.trim()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

// The checker's own parts: a broken scanner or parser would make the test above pass vacuously
// (no edges on either side) or fail for the wrong reason.

#[test]
fn paths_ignore_tests_comments_and_strings_and_read_groups() {
    let code = r##"
use crate::{engine::Target, metrics, workload::{keys, sizes}};
// crate::report in a comment
/* crate::record /* nested */ crate::report */
const S: &str = "crate::watch";
const R: &str = r#"crate::watch"#;
const C: char = '{';
fn f<'a>(x: &'a str) { let _ = crate::verdict::classify(x); let _ = resp::Value::Nil; }
#[cfg(test)]
mod tests {
    use crate::cli;
    fn g() { let _ = '}'; crate::clock::now(); }
}
#[cfg(test)]
mod fixtures;
pub(crate) fn h() { crate::slo::Search::new(); }
"##;
    let (code, test_mods) = without_tests(&blank_literals(code));
    assert_eq!(test_mods, ["fixtures"]);
    let names: BTreeSet<String> = paths(&code, "crate").into_iter().map(|(n, _)| n).collect();
    let want = ["engine", "metrics", "resp", "slo", "verdict", "workload"];
    assert_eq!(names, want.iter().map(|s| s.to_string()).collect());
}

#[test]
fn the_line_is_read_without_notes_and_with_its_no_import_clause() {
    let doc = "intro\n\nDependency direction (each module imports only those listed; no loops):\n\
               `main → cli, run (`--x`)`; `run → cli,\nplan`; `merge → plan` (tests: also `cli`);\n\
               `cli` and `plan` import nothing of the crate.\n\nnext paragraph: `a → b`\n";
    let line = DocLine::parse(doc);
    let edges: Vec<String> = line.edges.iter().map(|(a, b)| format!("{a}>{b}")).collect();
    assert_eq!(
        edges,
        ["main>cli", "main>run", "merge>plan", "run>cli", "run>plan"]
    );
    let named: Vec<&str> = line.named.iter().map(String::as_str).collect();
    assert_eq!(named, ["cli", "main", "merge", "plan", "run"]);
}

#[test]
fn a_loop_is_found() {
    let mut code = Edges::new();
    for (a, b) in [
        ("main", "run"),
        ("run", "plan"),
        ("plan", "engine"),
        ("engine", "plan"),
    ] {
        code.insert((a.into(), b.into()), String::new());
    }
    assert_eq!(a_loop(&code).as_deref(), Some("engine → plan → engine"));
    code.remove(&("engine".to_string(), "plan".to_string()));
    assert_eq!(a_loop(&code), None);
}

#[test]
fn every_disagreement_is_one_line_naming_the_edge() {
    let line = DocLine::parse(
        "Dependency direction: `run → plan, clock`; `plan`, `clock` and `gone` import nothing \
         of the crate.",
    );
    let mut code = Edges::new();
    code.insert(("run".into(), "plan".into()), "src/run/mod.rs:3".into());
    code.insert(("plan".into(), "resp".into()), "src/plan.rs:9".into());
    let modules: BTreeSet<String> = ["run", "plan", "clock", "new"].map(String::from).into();
    let problems = compare(&line, &code, &modules);
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems[0].contains("`plan → resp`") && problems[0].contains("src/plan.rs:9"));
    assert!(problems[1].starts_with("stale") && problems[1].contains("`run → clock`"));
    assert!(problems[2].contains("module `new`"));
    assert!(problems[3].contains("`gone`"));
}

#[test]
fn a_mode_imported_from_below_or_the_registry_from_a_mode_is_named() {
    let mut code = Edges::new();
    for (a, b) in [
        ("record", "storm"),
        ("html", "memory"),
        ("storm", "modes"),
        ("main", "modes"),
        ("modes", "storm"),
    ] {
        code.insert((a.into(), b.into()), format!("src/{a}.rs:1"));
    }
    let problems = seam_problems(&code);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("`html → memory`"));
    assert!(problems[1].contains("`record → storm`"));
    assert!(problems[2].contains("`storm → modes`"));
}
