use std::io::Write;
use std::process::{Command as Process, Stdio};

use super::*;

fn script(shell: Shell) -> String {
    completions(shell, &commands())
}

fn page() -> String {
    man_page(&commands(), "9.9.9")
}

/// Runs `program args` with `input` on stdin; `None` (and a note) when it is not installed.
fn run(program: &str, args: &[&str], input: &str) -> Option<std::process::Output> {
    let child = Process::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: {program} is not installed (scripts/test.sh installs it)");
            return None;
        }
        Err(e) => panic!("{program}: {e}"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    Some(child.wait_with_output().unwrap())
}

fn checks(program: &str, args: &[&str], input: &str) {
    if let Some(out) = run(program, args, input) {
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_commands_are_the_dispatched_ones_with_their_tables() {
    let names: Vec<&str> = commands().iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "",
            "ab",
            "compare",
            "report",
            "merge",
            "recover",
            "replay",
            "capture",
            "memtier",
            "completions",
            "man"
        ]
    );
    for c in commands() {
        assert!(!c.options.is_empty(), "{}", c.name);
        assert!(c.help.starts_with("Usage: respbench"), "{}", c.name);
        // Every option a command's help shows is in its table, and the other way round.
        for doc in &c.options {
            for name in doc.names {
                // memtier's usages read `--server=ADDR`, as its own help.
                let shown = c.help.split([' ', ',', '\n', '=']).any(|w| w == *name);
                assert!(shown || *name == "-h", "{} --help lacks {name}", c.name);
            }
        }
    }
}

/// The scripts embed spellings and words unquoted: only these characters may occur there.
#[test]
fn spellings_and_words_are_safe_to_embed() {
    let safe = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    for c in commands() {
        assert!(safe(c.name));
        for doc in &c.options {
            assert!(doc.names.iter().all(|n| safe(n) && n.starts_with('-')));
            if let Value::Choice(words) = doc.value {
                assert!(words.iter().all(|w| safe(w)), "{:?}", doc.names);
            }
        }
        if let Operands::Words(words) = c.operands {
            assert!(words.iter().all(|w| safe(w)));
        }
    }
}

#[test]
fn bash_completes_every_option_of_every_command() {
    let bash = script(Shell::Bash);
    for c in commands() {
        let pattern = if c.name.is_empty() { "\"\"" } else { c.name };
        let line = bash
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{pattern}) opts=")))
            .unwrap_or_else(|| panic!("no opts line for {pattern}"));
        let opts = line.split('"').nth(1 + usize::from(c.name.is_empty()) * 2);
        let opts: Vec<&str> = opts.unwrap().split(' ').collect();
        for name in c.options.iter().flat_map(|d| d.names) {
            assert!(opts.contains(name), "bash: {} lacks {name}", c.name);
        }
        // The first word list offered is the subcommands'.
        let subs = bash.split("compgen -W \"").nth(1).unwrap();
        let subs = subs.split('"').next().unwrap();
        if !c.name.is_empty() {
            assert!(subs.split(' ').any(|w| w == c.name), "bash: {}", c.name);
        }
    }
    checks("bash", &["-n"], &bash);
}

#[test]
fn zsh_completes_every_option_of_every_command() {
    let zsh = script(Shell::Zsh);
    for c in commands() {
        let function = if c.name.is_empty() { "main" } else { c.name };
        let body = zsh
            .split(&format!("_respbench_{function}() {{\n"))
            .nth(1)
            .and_then(|rest| rest.split("\n}\n").next())
            .unwrap_or_else(|| panic!("zsh: no function for {function}"));
        for name in c.options.iter().flat_map(|d| d.names) {
            assert!(
                body.contains(&format!("'{name}[")),
                "zsh: {function} lacks {name}"
            );
        }
        if !c.name.is_empty() {
            assert!(zsh.contains(&format!("'{}:", c.name)), "zsh: {}", c.name);
        }
    }
    assert!(zsh.starts_with("#compdef respbench\n"));
    checks("zsh", &["-n"], &zsh);
}

#[test]
fn fish_completes_every_option_of_every_command() {
    let fish = script(Shell::Fish);
    for c in commands() {
        let command = if c.name.is_empty() { "main" } else { c.name };
        let guard = format!("-n 'test (__respbench_command) = {command}' ");
        for name in c.options.iter().flat_map(|d| d.names) {
            let spelling = match name.strip_prefix("--") {
                Some(long) => format!("-l {long} "),
                None => format!("-s {} ", &name[1..]),
            };
            assert!(
                fish.lines()
                    .any(|l| l.contains(&guard) && l.contains(&spelling)),
                "fish: {command} lacks {name}"
            );
        }
        if !c.name.is_empty() {
            assert!(
                fish.contains(&format!(" -a {} -d ", c.name)),
                "fish: {}",
                c.name
            );
        }
    }
    checks("fish", &["--no-execute"], &fish);
}

#[test]
fn the_man_page_has_every_option_of_every_command_in_its_section() {
    let page = page();
    assert!(page.starts_with(".TH RESPBENCH 1 \"\" \"respbench 9.9.9\""));
    // Sections in order: the main command's OPTIONS, then one per subcommand.
    let mut sections = page.split("\n.SH ");
    let main = sections.find(|s| s.starts_with("OPTIONS\n")).unwrap();
    let mut sections: Vec<&str> = sections.collect();
    for c in commands() {
        let text = if c.name.is_empty() {
            main
        } else {
            let title = format!("\"{}\"\n", c.name.to_uppercase());
            let i = sections
                .iter()
                .position(|s| s.starts_with(&title))
                .unwrap_or_else(|| panic!("man: no section for {}", c.name));
            sections.remove(i)
        };
        let words: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with(".B "))
            .flat_map(|l| {
                l[3..]
                    .replace("\\-", "-")
                    .split([' ', ','])
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        for name in c.options.iter().flat_map(|d| d.names) {
            assert!(
                words.iter().any(|w| w == name),
                "man: {} lacks {name}",
                c.name
            );
        }
    }
}

#[test]
fn the_man_page_renders() {
    let page = page();
    // A line starting with a dot or a quote that is not a request would be eaten by roff.
    for line in page.lines() {
        if let Some(req) = line.strip_prefix('.') {
            let name = req.split(' ').next().unwrap();
            assert!(
                [
                    "TH", "SH", "SS", "TP", "PP", "B", "br", "nf", "fi", "nh", "ad"
                ]
                .contains(&name),
                "not a man(7) request: {line:?}"
            );
        }
        assert!(!line.starts_with('\''), "{line:?}");
    }
    if let Some(out) = run("man", &["-l", "-"], &page) {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for heading in [
            "OPTIONS",
            "COMPARE",
            "REPORT",
            "MERGE",
            "COMPLETIONS",
            "MAN",
        ] {
            assert!(
                text.lines().any(|l| l == heading),
                "rendered page lacks {heading}"
            );
        }
        assert!(text.contains("--tls-verify-name"));
    }
}
