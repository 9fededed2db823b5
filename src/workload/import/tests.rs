use super::*;

const HEAD: &str = "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n";

fn index(text: &[u8]) -> Result<ImportFile, String> {
    ImportFile::index("dump.csv", Box::new(text.to_vec()))
}

fn unquoted(f: Field<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    f.write_to(&mut out);
    out
}

/// An item line as memtier's own writer (`file_writer::write_item`) writes it.
fn written(key: &[u8], value: &[u8], exptime: u32) -> Vec<u8> {
    let quote = |s: &[u8]| {
        let mut q = Vec::new();
        for &c in s {
            q.push(c);
            if c == b'"' {
                q.push(b'"');
            }
        }
        q
    };
    let mut line = format!(
        "0, 0, {exptime}, {}, 0, 0, 1, {}, \"",
        value.len() + 2,
        key.len()
    )
    .into_bytes();
    line.extend(quote(key));
    line.extend_from_slice(b"\", \"");
    line.extend(quote(value));
    line.extend_from_slice(b"\"\n");
    line
}

#[test]
fn reads_what_memtiers_writer_writes_quotes_binary_and_line_breaks_included() {
    let items: [(&[u8], &[u8], u32); 4] = [
        (b"k1", b"plain", 0),
        (b"with \"quote\"", b"ends with a quote\"", 60),
        (b"k,3", b"a,b\r\nc\nd\0\xff", 0),
        (b"\"", b"\"\"", 7),
    ];
    let mut text = HEAD.as_bytes().to_vec();
    for (k, v, e) in items {
        text.extend(written(k, v, e));
    }
    let f = index(&text).unwrap();
    assert_eq!(f.len(), 4);
    for (i, (k, v, e)) in items.iter().enumerate() {
        let item = f.item(i as u64);
        assert_eq!(unquoted(item.key), *k, "item {i}");
        assert_eq!(unquoted(item.value), *v, "item {i}");
        assert_eq!(item.key.len(), k.len());
        assert_eq!(item.value.len(), v.len());
        assert_eq!(item.exptime, u64::from(*e));
        assert!(item.value.is(v) && !item.value.is(b"other"));
        assert_eq!(item.value.bytes().collect::<Vec<u8>>(), *v);
    }
    assert_eq!(f.longest(), (12, 18));
    // A walk past the end starts again at the first item.
    assert_eq!(unquoted(f.item(5).key), b"with \"quote\"");
}

#[test]
fn readmes_example_bare_fields_crlf_blank_lines_and_no_final_newline() {
    // README.import's example: single quotes are ordinary bytes of a bare field.
    let text = b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\r\n\
        0, 0, 60, 19, 200, 0, 1, 11, 'doxrpshny', 'asdfghjklqwerty'\r\n\
        \r\n\
        1,2,3,4,5,6,7,2, ab,xy";
    let f = index(text).unwrap();
    assert_eq!(f.len(), 2);
    let a = f.item(0);
    assert_eq!(unquoted(a.key), b"'doxrpshny'");
    assert_eq!(unquoted(a.value), b"'asdfghjklqwerty'");
    assert_eq!(a.exptime, 60);
    let b = f.item(1);
    assert_eq!(
        (unquoted(b.key), unquoted(b.value)),
        (b"ab".to_vec(), b"xy".to_vec())
    );
}

#[test]
fn write_arg_is_a_bulk_string_of_the_unquoted_bytes() {
    let mut text = HEAD.as_bytes().to_vec();
    text.extend(written(b"k", b"a\"b", 0));
    let f = index(&text).unwrap();
    let mut out = Vec::new();
    f.item(0).value.write_arg(&mut out);
    assert_eq!(out, b"$3\r\na\"b\r\n");
}

#[test]
fn every_malformed_line_is_one_message_naming_the_file_and_line() {
    let cases: [(&str, &str); 10] = [
        (
            "0, 0, 0, 7, 0, 0, 1, 1, \"k\", \"abcde\"\nx",
            "dump.csv:3: expected a number for dumpflags",
        ),
        (
            "0, 0, 0, 7, 0, 0, 1 1, \"k\", \"abcde\"\n",
            "dump.csv:2: expected ',' after clsid",
        ),
        (
            "0, 0, 0, 7, 0, 0, 1, 2, \"k\", \"abcde\"\n",
            "dump.csv:2: the key is 1 bytes, the line says 2",
        ),
        (
            "0, 0, 0, 7, 0, 0, 1, 1, \"k\", \"abc\"\n",
            "dump.csv:2: the value is 3 bytes, the line says 5",
        ),
        (
            "0, 0, 0, 5, 0, 0, 1, 1, \"k\", \"abcde\"\n",
            "dump.csv:2: the value is longer than the 3 bytes",
        ),
        (
            "0, 0, 0, 1, 0, 0, 1, 1, \"k\", \"\"\n",
            "dump.csv:2: nbytes is below 2",
        ),
        (
            "0, 0, 99999999999, 7, 0, 0, 1, 1, k, abcde\n",
            "dump.csv:2: exptime is above 4294967295",
        ),
        (
            "0, 0, 0, 7, 0, 0, 1, 1, k, ab,de\n",
            "dump.csv:2: the value is 2 bytes, the line says 5",
        ),
        (
            "0, 0, 0, 7, 0, 0, 1, 1, k, abcde x\n",
            "dump.csv:2: expected the end of the line",
        ),
        (
            "0, 0, 0, 7, 0, 0, 1, 1, \"k\", \"abc",
            "dump.csv:2: the file ends inside the quoted value",
        ),
    ];
    for (body, want) in cases {
        let text = format!("{HEAD}{body}");
        let e = index(text.as_bytes()).unwrap_err();
        assert!(e.starts_with(want), "{body:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let e = index(b"key,value\nk,v\n").unwrap_err();
    assert!(e.starts_with("dump.csv: not a memtier import file"), "{e}");
    let e = index(HEAD.as_bytes()).unwrap_err();
    assert_eq!(e, "dump.csv: no items after the header line");
    // The line of an item after one with a line break inside its value is the file's line.
    let mut text = HEAD.as_bytes().to_vec();
    text.extend(written(b"k", b"a\nb", 0));
    text.extend_from_slice(b"0, 0, 0, 3, 0, 0, 1, 1, k, ab\n");
    let e = index(&text).unwrap_err();
    assert_eq!(
        e,
        "dump.csv:4: expected the end of the line after the value"
    );
}
