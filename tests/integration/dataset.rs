//! `--dataset` / `--maxdocs`: records from CSV/TSV files land on the server field by field, and
//! every mistake is one line with the right exit code.

use std::fs;
use std::path::PathBuf;

use crate::harness::{Server, TempDir, respbench};

/// Writes `content` to `<dir>/<name>` and returns the path as a string.
fn file(dir: &TempDir, name: &str, content: &str) -> String {
    let path: PathBuf = dir.path().join(name);
    fs::write(&path, content).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path.to_str().expect("utf-8 temp path").to_string()
}

/// Names that need CSV quoting: commas, doubled quotes, a line break, and plain ones.
fn name_of(i: usize) -> String {
    match i % 4 {
        0 => format!("plain {i}"),
        1 => format!("last, first {i}"),
        2 => format!("say \"hi\" {i}"),
        _ => format!("two\nlines {i}"),
    }
}

fn csv_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn hget(c: &mut crate::harness::Client, key: &str, field: &str) -> Option<String> {
    c.bulk(&["HGET", key, field])
        .map(|v| String::from_utf8(v).expect("utf-8 value"))
}

#[test]
fn every_record_lands_with_its_fields() {
    let server = Server::start();
    let dir = TempDir::new();
    let n = 200;
    let mut csv = String::from("id,name,score\r\n");
    for i in 0..n {
        csv.push_str(&format!("{i},{},{}\r\n", csv_quote(&name_of(i)), i * 7));
    }
    let path = file(&dir, "docs.csv", &csv);
    let out = server.bench(&[
        "--dataset",
        &path,
        "-n",
        &n.to_string(),
        "-c",
        "5",
        "-P",
        "3",
        "--threads",
        "2",
        "--",
        "HSET",
        "doc:__field:id__",
        "name",
        "__field:name__",
        "score",
        "__field:score__",
    ]);
    out.assert_success();
    // The reference's line, before the report: 200 documents, size of the used fields' values.
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Dataset: 200 documents (") && first.ends_with(" KB)"),
        "{}",
        out.stdout
    );
    assert_eq!(out.completed(), n as u64);

    let mut c = server.client();
    assert_eq!(c.calls("hset"), n as u64);
    assert_eq!(c.dbsize(), n as i64, "one hash per record");
    for i in 0..n {
        let key = format!("doc:{i}");
        assert_eq!(hget(&mut c, &key, "name"), Some(name_of(i)), "{key}");
        assert_eq!(
            hget(&mut c, &key, "score"),
            Some((i * 7).to_string()),
            "{key}"
        );
    }
}

#[test]
fn maxdocs_limits_the_records_and_they_are_reused_in_turn() {
    let server = Server::start();
    let dir = TempDir::new();
    let path = file(&dir, "ids.csv", "id\na\nb\nc\nd\ne\n");
    server
        .bench(&[
            "--dataset",
            &path,
            "--maxdocs",
            "3",
            "-n",
            "50",
            "-c",
            "4",
            "-q",
            "INCR",
            "hits:__field:id__",
        ])
        .assert_success();
    let mut c = server.client();
    let mut keys = c.strings(&["KEYS", "*"]);
    keys.sort();
    assert_eq!(
        keys,
        [b"hits:a".to_vec(), b"hits:b".to_vec(), b"hits:c".to_vec()]
    );
    // One shared counter: 50 commands over 3 records is 17, 17, 16.
    let counts: Vec<i64> = ["hits:a", "hits:b", "hits:c"]
        .iter()
        .map(|k| {
            let v = c.bulk(&["GET", k]).expect("counter");
            String::from_utf8(v).unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(counts, [17, 17, 16]);
}

#[test]
fn tsv_file_sequences_and_rand_placeholders() {
    let server = Server::start();
    let dir = TempDir::new();
    let path = file(
        &dir,
        "rows.TSV",
        "id\ttext\n1\ta, b, c\n2\t\"tab\there\"\n3\tplain\n",
    );
    // A sequence takes one record per unit; __rand_1st__ is drawn once per unit too.
    let out = server.bench(&[
        "--dataset",
        &path,
        "-n",
        "6",
        "-c",
        "1",
        "-r",
        "1000",
        "--sequential",
        "-q",
        "--",
        "SET",
        "t:__field:id__",
        "__field:text__",
        ";",
        "SET",
        "r:__field:id__",
        "__rand_1st__",
    ]);
    out.assert_success();
    let mut c = server.client();
    for (id, text) in [("1", "a, b, c"), ("2", "tab\there"), ("3", "plain")] {
        assert_eq!(
            c.bulk(&["GET", &format!("t:{id}")]),
            Some(text.as_bytes().to_vec()),
            "t:{id}"
        );
    }
    let r: Vec<Vec<u8>> = ["r:1", "r:2", "r:3"]
        .iter()
        .map(|k| c.bulk(&["GET", k]).expect("value"))
        .collect();
    assert_eq!(
        r,
        [
            b"000000000000".to_vec(),
            b"000000000001".to_vec(),
            b"000000000002".to_vec()
        ]
    );
}

#[test]
fn quiet_and_csv_stdout_stay_clean() {
    let server = Server::start();
    let dir = TempDir::new();
    let path = file(&dir, "d.csv", "k\nx\ny\n");
    let out = server.bench(&[
        "--dataset",
        &path,
        "-n",
        "10",
        "-q",
        "SET",
        "__field:k__",
        "v",
    ]);
    out.assert_success();
    // The -q line and the end-of-pass blank line, as without --dataset.
    assert!(
        out.stdout.starts_with("SET __field:k__ v: "),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
    let out = server.bench(&[
        "--dataset",
        &path,
        "-n",
        "10",
        "--csv",
        "SET",
        "__field:k__",
        "v",
    ]);
    out.assert_success();
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
    assert!(!out.stdout.contains("Dataset"));
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

/// Exit `code`, one stderr line containing `needle`, nothing on stdout.
#[track_caller]
fn refused(args: &[&str], code: i32, needle: &str) {
    let out = respbench(args);
    out.assert_code(code);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with("respbench: ") && line.contains(needle),
        "{line}"
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

#[test]
fn mistakes_are_one_line_with_the_right_exit_code() {
    let dir = TempDir::new();
    let good = file(&dir, "good.csv", "id,name,score\n1,a,2\n");
    // Usage mistakes (exit 2), found before any connection is attempted (no server here).
    refused(
        &["--dataset", &good, "GET", "__field:nme__"],
        2,
        "field placeholder '__field:nme__' not found in dataset fields (fields: id, name, score)",
    );
    refused(&["--dataset", &good], 2, "needs a custom command");
    refused(
        &["--dataset", &good, "SET", "a", "b"],
        2,
        "__field:<name>__ placeholder",
    );
    refused(
        &["--dataset", &good, "SET", "__field:id__", "__data__"],
        2,
        "__data__ cannot be used with --dataset",
    );
    let ragged = file(&dir, "ragged.csv", "id,name\n1,a\n2,b,extra\n");
    refused(
        &["--dataset", &ragged, "GET", "__field:id__"],
        2,
        "line 3: 3 fields where the header has 2",
    );
    let empty = file(&dir, "empty.csv", "");
    refused(&["--dataset", &empty, "GET", "__field:id__"], 2, "is empty");
    let header = file(&dir, "header.csv", "id\n");
    refused(
        &["--dataset", &header, "GET", "__field:id__"],
        2,
        "no records",
    );
    let open_quote = file(&dir, "quote.csv", "id\n\"never closed\n");
    refused(
        &["--dataset", &open_quote, "GET", "__field:id__"],
        2,
        "not closed",
    );
    // A file that cannot be read is a runtime failure (exit 1), like a failed -x stdin read.
    let missing = dir.path().join("missing.csv");
    refused(
        &[
            "--dataset",
            missing.to_str().unwrap(),
            "GET",
            "__field:id__",
        ],
        1,
        "cannot read dataset file",
    );
    refused(
        &[
            "--dataset",
            dir.path().to_str().unwrap(),
            "GET",
            "__field:id__",
        ],
        1,
        "cannot read dataset file",
    );
}

/// `--dataset docs.xml --xml-root-element doc`: the same records as a CSV, written as valkey's
/// own test writes its XML (documents side by side, nested elements, entities), land field by
/// field exactly as the CSV's do — on Redis and on Valkey.
#[test]
fn an_xml_dataset_lands_as_the_same_records_in_csv_do() {
    for server in [Server::start(), Server::start_valkey()] {
        let dir = TempDir::new();
        let n = 120;
        let mut csv = String::from("id,title,abstract\n");
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<feed>\n");
        for i in 0..n {
            let title = format!("Title {i} & \"more\" <{i}>");
            let abstract_ = format!("abstract, number {i}");
            csv.push_str(&format!(
                "{i},{},{}\n",
                csv_quote(&title),
                csv_quote(&abstract_)
            ));
            let escaped = title
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            xml.push_str(&format!(
                "  <doc>\n    <id>{i}</id>\n    <title>{escaped}</title>\n    \
                 <abstract>{abstract_}</abstract>\n    <links><sublink><anchor>a{i}</anchor>\
                 </sublink></links>\n  </doc>\n"
            ));
        }
        xml.push_str("</feed>\n");
        let csv_path = file(&dir, "docs.csv", &csv);
        let xml_path = file(&dir, "docs.xml", &xml);
        let run = |path: &str, prefix: &str, root: &[&str]| {
            let key = format!("{prefix}:__field:id__");
            let mut args = vec!["--dataset", path, "-n", "120", "-c", "4", "-P", "2"];
            args.extend_from_slice(root);
            args.extend_from_slice(&[
                "--",
                "HSET",
                &key,
                "title",
                "__field:title__",
                "abstract",
                "__field:abstract__",
            ]);
            let out = server.bench(&args);
            out.assert_success();
            assert!(
                out.stdout.starts_with("Dataset: 120 documents ("),
                "{}",
                out.stdout
            );
        };
        run(&csv_path, "csv", &[]);
        run(&xml_path, "xml", &["--xml-root-element", "doc"]);
        let mut c = server.client();
        assert_eq!(c.dbsize(), 2 * n as i64);
        for i in 0..n {
            for field in ["title", "abstract"] {
                let from_csv = hget(&mut c, &format!("csv:{i}"), field);
                assert!(from_csv.is_some());
                assert_eq!(
                    hget(&mut c, &format!("xml:{i}"), field),
                    from_csv,
                    "{i} {field}"
                );
            }
        }
    }
}

#[test]
fn xml_dataset_mistakes_are_one_line_naming_the_place() {
    let dir = TempDir::new();
    let good = file(&dir, "d.xml", "<r><doc><id>1</id></doc></r>");
    refused(
        &["--dataset", &good, "GET", "__field:id__"],
        2,
        "requires --xml-root-element",
    );
    refused(
        &[
            "--dataset",
            &good,
            "--xml-root-element",
            "page",
            "GET",
            "__field:id__",
        ],
        2,
        "has no <page> element",
    );
    refused(
        &[
            "--dataset",
            &good,
            "--xml-root-element",
            "doc",
            "GET",
            "__field:name__",
        ],
        2,
        "field placeholder '__field:name__' not found in dataset fields (fields: id)",
    );
    let broken = file(
        &dir,
        "b.xml",
        "<r><doc><id>1</id></doc>\n<doc><id>2</i></doc></r>",
    );
    refused(
        &[
            "--dataset",
            &broken,
            "--xml-root-element",
            "doc",
            "GET",
            "__field:id__",
        ],
        2,
        "malformed XML at byte",
    );
}
