//! `--dataset` and `--maxdocs`: checks how they combine with the command, reads the file and
//! attaches the pre-encoded records to the plan.
//!
//! Owns: those checks and opening the file. The file format and the encoding are
//! `workload::table` and `workload::dataset`'s.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use super::{RunPlan, Workload};
use crate::cli::Args;
use crate::workload::dataset::{Dataset, FieldTemplate, LoadError};

/// Why the dataset could not be attached; `main` maps these to exit codes.
#[derive(Debug, PartialEq, Eq)]
pub enum DatasetError {
    /// The command line or the file's content is wrong (exit 2).
    Usage(String),
    /// The file could not be read (exit 1, like a failed `-x` stdin read).
    Io(String),
}

/// Loads `--dataset` into `plan.load.dataset` if given (a no-op otherwise, apart from a warning
/// for a lone `--maxdocs`).
pub fn attach(plan: &mut RunPlan, args: &Args) -> Result<(), DatasetError> {
    let Some(path) = &args.dataset else {
        if args.maxdocs.is_some() {
            plan.warnings
                .push("WARNING: --maxdocs has no effect without --dataset".to_string());
        }
        return Ok(());
    };
    let Workload::Custom { items, .. } = &plan.workload else {
        return Err(DatasetError::Usage(
            "--dataset needs a custom command with __field:<name>__ placeholders, e.g. \
             respbench --dataset docs.csv -- HSET doc:__field:id__ body __field:body__"
                .to_string(),
        ));
    };
    if args
        .command
        .iter()
        .any(|a| a.windows(8).any(|w| w == b"__data__"))
    {
        return Err(DatasetError::Usage(
            "__data__ cannot be used with --dataset: take values from the dataset with \
             __field:<name>__"
                .to_string(),
        ));
    }
    let template =
        FieldTemplate::compile(items, plan.load.keyspace.is_some()).map_err(DatasetError::Usage)?;

    let shown = path.display().to_string();
    let io_error = |e: std::io::Error| {
        DatasetError::Io(format!("cannot read dataset file {shown}: {}", reason(&e)))
    };
    let file = File::open(path).map_err(io_error)?;
    let dataset = Dataset::load(
        &template,
        BufReader::with_capacity(64 * 1024, file),
        delimiter(path),
        &shown,
        args.maxdocs,
    )
    .map_err(|e| match e {
        LoadError::Io(e) => io_error(e),
        LoadError::Invalid(message) => DatasetError::Usage(message),
    })?;
    plan.load.dataset = Some(Arc::new(dataset));
    Ok(())
}

/// Tab for a `.tsv` file name (any case), comma otherwise, as the reference.
fn delimiter(path: &Path) -> u8 {
    match path.extension() {
        Some(ext) if ext.eq_ignore_ascii_case("tsv") => b'\t',
        _ => b',',
    }
}

/// An I/O error without the "(os error N)" suffix.
fn reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{self, Invocation};

    fn plan_with(argv: &[&str]) -> (RunPlan, Args) {
        let args = match cli::parse(argv.iter().map(|s| s.into())).unwrap() {
            Invocation::Run(a) => *a,
            other => panic!("{other:?}"),
        };
        (RunPlan::new(&args, None).unwrap(), args)
    }

    fn attach_argv(argv: &[&str]) -> Result<RunPlan, DatasetError> {
        let (mut plan, args) = plan_with(argv);
        attach(&mut plan, &args).map(|()| plan)
    }

    fn usage(argv: &[&str]) -> String {
        match attach_argv(argv) {
            Err(DatasetError::Usage(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn needs_a_custom_command_with_fields_and_no_data_placeholder() {
        // Checked before the file is opened (it does not exist).
        let missing = "/nonexistent/respbench/docs.csv";
        assert!(usage(&["--dataset", missing]).starts_with("--dataset needs a custom command"));
        assert!(
            usage(&["--dataset", missing, "set", "a", "b"])
                .starts_with("--dataset needs a __field:<name>__ placeholder")
        );
        assert!(
            usage(&["--dataset", missing, "set", "__field:a__", "x__data__"])
                .starts_with("__data__ cannot be used with --dataset")
        );
    }

    #[test]
    fn unreadable_file_is_an_io_error() {
        match attach_argv(&[
            "--dataset",
            "/nonexistent/respbench/d.csv",
            "get",
            "__field:a__",
        ]) {
            Err(DatasetError::Io(m)) => assert_eq!(
                m,
                "cannot read dataset file /nonexistent/respbench/d.csv: No such file or directory"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn maxdocs_alone_warns_and_the_delimiter_follows_the_name() {
        let plan = attach_argv(&["--maxdocs", "3", "get", "a"]).unwrap();
        assert!(
            plan.warnings
                .iter()
                .any(|w| w.contains("--maxdocs has no effect"))
        );
        assert!(plan.load.dataset.is_none());
        assert_eq!(delimiter(Path::new("a/b.TSV")), b'\t');
        assert_eq!(delimiter(Path::new("b.tsv.csv")), b',');
        assert_eq!(delimiter(Path::new("data")), b',');
    }
}
