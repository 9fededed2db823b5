//! `--dataset` and `--maxdocs`: checks how they combine with the command, reads the file and
//! gives `RunPlan::new` the pre-encoded records for its load spec.
//!
//! Owns: those checks, choosing the format by the file's name (`.tsv`, `.xml`, else CSV) and
//! opening the file. The formats and the encoding are `workload::table`, `workload::xml` and
//! `workload::dataset`'s.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use super::{PlanError, Workload};
use crate::cli::Args;
use crate::workload::dataset::{Dataset, FieldTemplate, Layout, LoadError};

/// The `--dataset` records for `workload` if `--dataset` is given (`None` otherwise, with a
/// warning for a lone `--maxdocs`). `keyspace_given`: whether `-r` (or a key range) fills the
/// records' `__rand_*__` placeholders.
pub(super) fn load(
    args: &Args,
    workload: &Workload,
    keyspace_given: bool,
    warnings: &mut Vec<String>,
) -> Result<Option<Arc<Dataset>>, PlanError> {
    let Some(path) = &args.dataset else {
        if args.maxdocs.is_some() {
            warnings.push("WARNING: --maxdocs has no effect without --dataset".to_string());
        }
        if args.xml_root_element.is_some() {
            warnings
                .push("WARNING: --xml-root-element has no effect without --dataset".to_string());
        }
        return Ok(None);
    };
    let xml = is_xml(path);
    if xml && args.xml_root_element.is_none() {
        // The reference's words ("XML dataset requires --xml-root-element parameter").
        return Err(PlanError::Usage(format!(
            "XML dataset {} requires --xml-root-element: the name of the element that is one \
             record (e.g. --xml-root-element doc)",
            path.display()
        )));
    }
    if !xml && args.xml_root_element.is_some() {
        warnings.push(format!(
            "WARNING: --xml-root-element has no effect: dataset {} is read as {} (only a .xml \
             name is read as XML)",
            path.display(),
            if delimiter(path) == b'\t' {
                "TSV"
            } else {
                "CSV"
            }
        ));
    }
    let Workload::Custom { items, .. } = workload else {
        return Err(PlanError::Usage(
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
        return Err(PlanError::Usage(
            "__data__ cannot be used with --dataset: take values from the dataset with \
             __field:<name>__"
                .to_string(),
        ));
    }
    let template = FieldTemplate::compile(items, keyspace_given).map_err(PlanError::Usage)?;

    let shown = path.display().to_string();
    let io_error = |e: std::io::Error| {
        PlanError::Io(format!("cannot read dataset file {shown}: {}", reason(&e)))
    };
    let file = File::open(path).map_err(io_error)?;
    let input = BufReader::with_capacity(64 * 1024, file);
    let layout = match &args.xml_root_element {
        Some(root) if xml => Layout::Xml { root },
        _ => Layout::Table {
            delimiter: delimiter(path),
        },
    };
    let dataset =
        Dataset::load(&template, input, layout, &shown, args.maxdocs).map_err(|e| match e {
            LoadError::Io(e) => io_error(e),
            LoadError::Invalid(message) => PlanError::Usage(message),
        })?;
    Ok(Some(Arc::new(dataset)))
}

/// Whether the file is read as XML: a name ending `.xml` (any case). valkey-benchmark looks for
/// `.xml` anywhere in the name (`docs.xml.csv` would be XML there, CSV here).
fn is_xml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
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
    use crate::plan::RunPlan;

    fn attach_argv(argv: &[&str]) -> Result<RunPlan, PlanError> {
        let args = match cli::parse(argv.iter().map(|s| s.into())).unwrap() {
            Invocation::Run(a) => *a,
            other => panic!("{other:?}"),
        };
        RunPlan::new(&args, None)
    }

    fn usage(argv: &[&str]) -> String {
        match attach_argv(argv) {
            Err(PlanError::Usage(m)) => m,
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
            Err(PlanError::Io(m)) => assert_eq!(
                m,
                "cannot read dataset file /nonexistent/respbench/d.csv: No such file or directory"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_xml_dataset_needs_its_root_element_and_a_root_without_xml_warns() {
        let missing = "/nonexistent/respbench/docs.xml";
        let e = usage(&["--dataset", missing, "set", "k", "__field:title__"]);
        assert!(
            e.starts_with(
                "XML dataset /nonexistent/respbench/docs.xml requires --xml-root-element"
            ),
            "{e}"
        );
        let plan = attach_argv(&["--xml-root-element", "doc", "get", "a"]).unwrap();
        assert!(
            plan.warnings
                .iter()
                .any(|w| w.contains("--xml-root-element has no effect"))
        );
        assert!(is_xml(Path::new("a/b.XML")));
        assert!(!is_xml(Path::new("b.xml.csv")));
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
