use std::io::Cursor;

use super::*;

fn cmd(words: &[&str]) -> Payload {
    Payload::Command(words.iter().map(|w| w.as_bytes().to_vec()).collect())
}

fn entry(seq: u64, client: &str, db: u32, payload: Payload) -> Entry {
    Entry {
        seq,
        time_us: 1_700_000_000_000_000 + seq as i64 * 250,
        client: client.into(),
        db,
        payload,
    }
}

fn write_all(entries: &[Entry]) -> Vec<u8> {
    let mut w = Writer::new(Vec::new()).unwrap();
    w.comment("written by a test\nwith a line break").unwrap();
    for e in entries {
        w.write(e).unwrap();
    }
    w.into_inner()
}

fn read_all(bytes: &[u8]) -> Result<Vec<Entry>, TraceError> {
    let mut r = Reader::new(Cursor::new(bytes))?;
    let mut out = Vec::new();
    let mut e = Entry::empty();
    while r.next_into(&mut e)? {
        out.push(e.clone());
    }
    Ok(out)
}

#[test]
fn a_written_trace_reads_back_entry_for_entry() {
    let entries = vec![
        entry(1, "c0", 0, cmd(&["SET", "k", "v\r\nwith\nnewlines"])),
        entry(
            2,
            "c1",
            3,
            Payload::Raw(b"*2\r\n$3\r\nGET\r\n$9\r\nshort".to_vec()),
        ),
        entry(3, "c0", 0, cmd(&["GET", "k"])),
        entry(4, "c1", 3, Payload::Raw(Vec::new())),
        entry(
            5,
            "c0",
            0,
            Payload::Command(vec![vec![0, 255, b'\n'], vec![]]),
        ),
    ];
    let bytes = write_all(&entries);
    assert!(bytes.starts_with(b"#respbench-trace 1\n# written by a test with a line break\n"));
    let mut r = Reader::new(Cursor::new(&bytes)).unwrap();
    assert_eq!(r.format(), Format::Respbench);
    let mut e = Entry::empty();
    assert!(r.next_into(&mut e).unwrap());
    assert_eq!(read_all(&bytes).unwrap(), entries);
}

#[test]
fn the_header_line_is_readable_and_the_body_is_the_command_as_sent() {
    let bytes = write_all(&[entry(7, "127.0.0.1:5 x", 2, cmd(&["GET", "k"]))]);
    let text = String::from_utf8(bytes).unwrap();
    let body = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    assert!(
        text.ends_with(&format!(
            "7 1700000000001750 127.0.0.1:5_x 2 cmd {}\n{body}\n",
            body.len()
        )),
        "{text:?}"
    );
}

#[test]
fn a_trace_never_holds_a_password() {
    let entries = [
        entry(1, "c", 0, cmd(&["AUTH", "alice", "hunter2"])),
        entry(2, "c", 0, cmd(&["CONFIG", "SET", "requirepass", "hunter2"])),
        entry(3, "c", 0, cmd(&["HELLO", "3", "AUTH", "bob", "hunter2"])),
    ];
    let bytes = write_all(&entries);
    assert!(!bytes.windows(7).any(|w| w == b"hunter2"));
    let back = read_all(&bytes).unwrap();
    assert_eq!(back[0].args().unwrap()[1], b"alice");
    assert_eq!(back[0].args().unwrap()[2], b"<redacted>");
    assert_eq!(back[1].args().unwrap()[3], b"<redacted>");
}

#[test]
fn monitor_lines_are_read_with_their_quoting_and_escapes() {
    let text = concat!(
        "OK\n",
        "1700000000.123456 [0 127.0.0.1:54321] \"SET\" \"k\" \"a \\\"b\\\"\\\\\\r\\n\\t\\x00\\xff\"\n",
        "1700000000.200000 [3 [::1]:6000] \"SELECT\" \"3\"\r\n",
        "+1700000001.000001 [0 lua] \"incr\" \"counter\"\n",
        "\n",
        "1700000002.000000 [0 unix:/tmp/a b.sock] \"PING\"",
    );
    let mut r = Reader::new(Cursor::new(text.as_bytes())).unwrap();
    assert_eq!(r.format(), Format::Monitor);
    let all = read_all(text.as_bytes()).unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[0].seq, 1);
    assert_eq!(all[0].time_us, 1_700_000_000_123_456);
    assert_eq!(all[0].client, "127.0.0.1:54321");
    assert_eq!(
        all[0].args().unwrap()[2],
        b"a \"b\"\\\r\n\t\x00\xff".to_vec()
    );
    assert_eq!((all[1].db, all[1].client.as_str()), (3, "[::1]:6000"));
    assert!(all[2].from_script());
    assert_eq!(all[2].seq, 3);
    assert_eq!(all[3].client, "unix:/tmp/a_b.sock");
    let mut e = Entry::empty();
    assert!(r.next_into(&mut e).unwrap());
}

#[test]
fn bad_input_names_its_line_and_the_reason() {
    let not_a_trace = read_all(b"hello world\n").unwrap_err();
    assert!(
        not_a_trace.to_string().contains("not a trace"),
        "{not_a_trace}"
    );
    let newer = read_all(b"#respbench-trace 2\n").unwrap_err();
    assert!(newer.to_string().contains("version"), "{newer}");
    let empty = read_all(b"").unwrap_err();
    assert!(empty.to_string().contains("empty"));
    let bad_kind = read_all(b"#respbench-trace 1\n1 0 c 0 zip 0\n\n").unwrap_err();
    assert_eq!(
        bad_kind,
        TraceError::Malformed {
            line: 2,
            reason: "KIND \"zip\": expected cmd or raw".into()
        }
    );
    let open_quote =
        read_all(b"1700000000.000000 [0 c] \"GET\"\n1700000000.000001 [0 c] \"GET\" \"k\n")
            .unwrap_err();
    assert!(
        matches!(&open_quote, TraceError::Malformed { line: 2, reason } if reason.contains("not closed")),
        "{open_quote:?}"
    );
}

#[test]
fn a_trace_cut_short_mid_entry_reads_up_to_the_cut() {
    let bytes = write_all(&[
        entry(1, "c", 0, cmd(&["SET", "k", "v"])),
        entry(2, "c", 0, cmd(&["GET", "k"])),
    ]);
    let cut = &bytes[..bytes.len() - 5];
    let mut r = Reader::new(Cursor::new(cut)).unwrap();
    let mut e = Entry::empty();
    assert!(r.next_into(&mut e).unwrap());
    assert_eq!(e.args().unwrap()[0], b"SET");
    assert!(matches!(
        r.next_into(&mut e),
        Err(TraceError::Truncated { .. })
    ));
}

#[test]
fn a_trace_cut_inside_a_header_line_is_cut_short_not_malformed() {
    let bytes = write_all(&[
        entry(1, "c", 0, cmd(&["SET", "k", "v"])),
        entry(2, "c", 0, cmd(&["GET", "k"])),
    ]);
    // Cut after the second header's first field: what a capture killed mid-write leaves.
    let second = bytes.windows(3).rposition(|w| w == b"\n2 ").unwrap() + 3;
    let mut r = Reader::new(Cursor::new(&bytes[..second])).unwrap();
    let mut e = Entry::empty();
    assert!(r.next_into(&mut e).unwrap());
    let err = r.next_into(&mut e).unwrap_err();
    assert!(matches!(err, TraceError::Truncated { .. }), "{err:?}");
    // The same bad header followed by its newline is a malformed line.
    let mut whole = bytes[..second].to_vec();
    whole.push(b'\n');
    let mut r = Reader::new(Cursor::new(&whole[..])).unwrap();
    assert!(r.next_into(&mut e).unwrap());
    let err = r.next_into(&mut e).unwrap_err();
    assert!(matches!(err, TraceError::Malformed { .. }), "{err:?}");
}

#[test]
fn an_entry_above_the_bound_is_refused_before_it_is_read() {
    let header = format!("#respbench-trace 1\n1 0 c 0 raw {}\n", MAX_ENTRY + 1);
    let err = read_all(header.as_bytes()).unwrap_err();
    assert_eq!(
        err,
        TraceError::TooLarge {
            line: 2,
            size: MAX_ENTRY + 1
        }
    );
}

#[test]
fn a_command_body_that_is_not_a_command_is_malformed() {
    let text = b"#respbench-trace 1\n1 0 c 0 cmd 5\n+OK\r\n\n";
    let err = read_all(text).unwrap_err();
    assert!(
        matches!(err, TraceError::Malformed { line: 2, .. }),
        "{err:?}"
    );
}

#[test]
fn a_monitor_trace_cut_inside_its_last_line_is_cut_short() {
    let text = b"1700000000.000000 [0 c] \"GET\" \"a\"\n1700000000.000001 [0 c] \"SET\" \"k";
    let mut r = Reader::new(Cursor::new(&text[..])).unwrap();
    let mut e = Entry::empty();
    assert!(r.next_into(&mut e).unwrap());
    assert_eq!(r.next_into(&mut e), Err(TraceError::Truncated { line: 2 }));
    // The same line with its newline is malformed, not cut.
    let mut whole = text.to_vec();
    whole.push(b'\n');
    let mut r = Reader::new(Cursor::new(whole)).unwrap();
    assert!(r.next_into(&mut e).unwrap());
    assert!(matches!(
        r.next_into(&mut e),
        Err(TraceError::Malformed { line: 2, .. })
    ));
}

/// `(seq, time_us, client, first argument)` of every entry of `m`, and the error that ended it.
type Merged = Vec<(u64, i64, String, String)>;

fn merge_all(traces: &[&[u8]]) -> (Merged, Option<MergeError>) {
    let readers = traces
        .iter()
        .map(|t| Reader::new(Cursor::new(*t)).unwrap())
        .collect();
    let mut m = Merge::new(readers);
    let mut e = Entry::empty();
    let mut out = Vec::new();
    let mut first_error = None;
    loop {
        match m.next_into(&mut e) {
            Ok(true) => out.push((
                e.seq,
                e.time_us,
                e.client.clone(),
                String::from_utf8_lossy(&e.args().unwrap()[1]).into_owned(),
            )),
            Ok(false) => break,
            // A trace cut short ends that trace only: the others go on.
            Err(
                err @ MergeError {
                    error: TraceError::Truncated { .. },
                    ..
                },
            ) => {
                first_error.get_or_insert(err);
            }
            Err(err) => return (out, Some(err)),
        }
    }
    (out, first_error)
}

#[test]
fn several_traces_merge_in_time_order_with_their_clients_kept_apart() {
    // Two nodes' MONITOR output: the same client address on both, a script line on one, and a
    // tie at .000300 (the trace given first goes first).
    let a = b"1700000000.000100 [0 127.0.0.1:5000] \"GET\" \"a1\"\n\
              1700000000.000300 [0 127.0.0.1:5000] \"GET\" \"a2\"\n\
              1700000000.000301 [0 lua] \"GET\" \"a3\"\n\
              1700000000.000900 [0 127.0.0.1:5000] \"GET\" \"a4\"\n";
    let b = b"1700000000.000050 [0 127.0.0.1:5000] \"GET\" \"b1\"\n\
              1700000000.000300 [0 127.0.0.1:5000] \"GET\" \"b2\"\n\
              1700000000.000500 [0 127.0.0.1:6000] \"GET\" \"b3\"\n";
    let (all, err) = merge_all(&[a, b]);
    assert_eq!(err, None);
    let keys: Vec<&str> = all.iter().map(|x| x.3.as_str()).collect();
    assert_eq!(keys, ["b1", "a1", "a2", "b2", "a3", "b3", "a4"]);
    let seqs: Vec<u64> = all.iter().map(|x| x.0).collect();
    assert_eq!(
        seqs,
        [1, 2, 3, 4, 5, 6, 7],
        "numbered again in the merged order"
    );
    let clients: Vec<&str> = all.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(
        clients,
        [
            "1/127.0.0.1:5000",
            "0/127.0.0.1:5000",
            "0/127.0.0.1:5000",
            "1/127.0.0.1:5000",
            "lua",
            "1/127.0.0.1:6000",
            "0/127.0.0.1:5000"
        ]
    );
    assert!(all.windows(2).all(|w| w[0].1 <= w[1].1));

    // One trace reads exactly as the reader gives it: its own numbers and client names.
    let (one, _) = merge_all(&[b]);
    assert_eq!(
        one[2],
        (
            3,
            1_700_000_000_000_500,
            "127.0.0.1:6000".into(),
            "b3".into()
        )
    );
}

#[test]
fn a_trace_cut_short_ends_only_itself_and_a_malformed_one_names_its_place() {
    let whole = b"1700000000.000100 [0 c] \"GET\" \"w1\"\n1700000000.000400 [0 c] \"GET\" \"w2\"\n";
    let cut = b"1700000000.000200 [0 c] \"GET\" \"c1\"\n1700000000.000300 [0 c] \"GET\" \"c";
    let (all, err) = merge_all(&[whole, cut]);
    let keys: Vec<&str> = all.iter().map(|x| x.3.as_str()).collect();
    assert_eq!(keys, ["w1", "c1", "w2"]);
    assert_eq!(
        err,
        Some(MergeError {
            trace: 1,
            error: TraceError::Truncated { line: 2 }
        })
    );
    let bad = b"1700000000.000200 [0 c] \"GET\" \"c1\"\nnot a line\n";
    let (_, err) = merge_all(&[whole, bad]);
    assert!(
        matches!(
            err,
            Some(MergeError {
                trace: 1,
                error: TraceError::Malformed { line: 2, .. }
            })
        ),
        "{err:?}"
    );
}
