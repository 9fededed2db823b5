//! The one rule for output paths, shared by the run (`--json`, `--html`) and the subcommands
//! (`compare -o`, `report -o`, `merge -o`): `-` is stdout; an output never names one of the
//! inputs (writing it would destroy what is being read, often before it is read); two outputs
//! never name the same file (one would silently replace the other), and at most one is stdout.
//!
//! Owns: deciding whether two spellings name one file. Looks at the file system (canonical
//! paths: `./a`, `dir/../a` and a symbolic link to `a` are all `a`) but opens nothing.

use std::path::{Component, Path, PathBuf};

use super::UsageError;

/// The spelling of stdout as an output path.
pub const STDOUT: &str = "-";

/// Whether `path` is `-` (stdout).
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == STDOUT
}

/// Refuses `outputs` (each with the option that names it) that name one of `inputs` (each with
/// what it is, for the message) or each other.
pub fn check_outputs(
    outputs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Result<(), UsageError> {
    for (i, (option, out)) in outputs.iter().enumerate() {
        for (other, path) in &outputs[..i] {
            if is_stdout(out) && is_stdout(path) {
                return Err(UsageError(format!(
                    "{other} and {option} both write to stdout (-); give one of them a file"
                )));
            }
            if same_file(out, path) {
                return Err(UsageError(format!(
                    "{other} and {option} both name {}; one would replace the other: give each \
                     its own file",
                    out.display()
                )));
            }
        }
        if let Some((what, input)) = inputs.iter().find(|(_, input)| same_file(out, input)) {
            return Err(UsageError(format!(
                "{option} {} is {what} {}: writing it would overwrite what is read; write \
                 elsewhere",
                out.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Whether `a` and `b` name one file (never for stdout, which is not a file).
fn same_file(a: &Path, b: &Path) -> bool {
    !is_stdout(a) && !is_stdout(b) && resolved(a) == resolved(b)
}

/// `path` as the file system sees it: canonical if it exists; else its canonical directory and
/// its name (an output not written yet); else made absolute and `.`/`..` removed by spelling.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(dir) = dir.canonicalize() {
            return dir.join(name);
        }
    }
    let absolute = std::env::current_dir().unwrap_or_default().join(path);
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `-o` by the rule every output follows (`check_outputs`): never one of the input files.
pub fn check_output(output: Option<&str>, sides: &[Vec<String>]) -> Result<(), String> {
    let Some(output) = output else { return Ok(()) };
    let inputs: Vec<(&str, &Path)> = sides
        .iter()
        .flatten()
        .map(|f| ("an input", Path::new(f)))
        .collect();
    check_outputs(&[("-o", Path::new(output))], &inputs).map_err(|e| e.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> &Path {
        Path::new(s)
    }

    #[test]
    fn an_output_naming_an_input_or_another_output_is_refused() {
        let dir = std::env::temp_dir().join(format!("respbench-paths-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let input = dir.join("a.json");
        std::fs::write(&input, "{}").unwrap();
        let spelled = dir.join("sub/../a.json");
        let e = check_outputs(&[("-o", &spelled)], &[("the input", &input)]).unwrap_err();
        assert!(e.0.starts_with("-o "), "{e:?}");
        assert!(e.0.contains("is the input"), "{e:?}");
        let link = dir.join("link.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&input, &link).unwrap();
        assert!(check_outputs(&[("-o", &link)], &[("the input", &input)]).is_err());

        let new = dir.join("new.html");
        let e = check_outputs(
            &[("--json", &new), ("--html", &dir.join("./sub/../new.html"))],
            &[],
        )
        .unwrap_err();
        assert!(e.0.starts_with("--json and --html both name"), "{e:?}");
        let e = check_outputs(&[("--json", p("-")), ("--html", p("-"))], &[]).unwrap_err();
        assert!(e.0.contains("both write to stdout"), "{e:?}");

        // Different files, stdout and an input named `-`, a lexical path that does not exist.
        check_outputs(
            &[("--json", &dir.join("b.json")), ("--html", p("-"))],
            &[("the input", &input), ("the input", p("-"))],
        )
        .unwrap();
        assert!(same_file(p("/nowhere/x/../y"), p("/nowhere/y")));
        assert!(!same_file(p("-"), p("-")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
