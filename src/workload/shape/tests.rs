use super::*;
use crate::workload::PayloadGenerator;
use crate::workload::template::parse_custom_command;
use rand_xoshiro::Xoshiro256PlusPlus;

fn template(line: &str, data_size: usize) -> Template {
    let args: Vec<Vec<u8>> = line.split(' ').map(|a| a.as_bytes().to_vec()).collect();
    let items =
        parse_custom_command(&args, None, data_size, &mut PayloadGenerator::default()).unwrap();
    Template::encode(&items, true)
}

fn shape(data_size: usize) -> MemtierShape {
    MemtierShape {
        key_prefix: b"memtier-".to_vec(),
        data_size,
        ..MemtierShape::default()
    }
}

/// Splits written units back into commands of arguments, checking every length header.
fn commands(mut buf: &[u8]) -> Vec<Vec<Vec<u8>>> {
    fn line(buf: &mut &[u8]) -> usize {
        let end = buf.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = std::str::from_utf8(&buf[1..end]).unwrap().parse().unwrap();
        *buf = &buf[end + 2..];
        n
    }
    let mut out = Vec::new();
    while !buf.is_empty() {
        assert_eq!(buf[0], b'*');
        let n = line(&mut buf);
        let mut args = Vec::new();
        for _ in 0..n {
            assert_eq!(buf[0], b'$');
            let len = line(&mut buf);
            args.push(buf[..len].to_vec());
            assert_eq!(
                &buf[len..len + 2],
                b"\r\n",
                "the header's length is the body's"
            );
            buf = &buf[len + 2..];
        }
        out.push(args);
    }
    out
}

/// One unit of `t` in its `role`, with no `MGET` count, size list or shared value (what most
/// tests write).
fn unit(
    s: &MemtierShape,
    out: &mut Vec<u8>,
    t: &Template,
    role: Role,
    rng: &mut Xoshiro256PlusPlus,
    keys: &mut KeyGen,
) {
    s.append_unit(out, t, role, None, None, rng, keys, None);
}

fn keys(max: u64) -> KeyGen {
    KeyGen::new(max + 1, 7, 0, None)
}

fn number(arg: &[u8]) -> u64 {
    std::str::from_utf8(arg).unwrap().parse().unwrap()
}

#[test]
fn keys_are_the_prefix_and_the_number_unpadded() {
    let s = shape(8);
    let set = template("SET memtier-__rand_int__ __data__", 8);
    let mut out = Vec::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut k = keys(150);
    for _ in 0..200 {
        unit(&s, &mut out, &set, Role::Set, &mut rng, &mut k);
        unit(&s, &mut out, &set, Role::Get, &mut rng, &mut k);
    }
    let cmds = commands(&out);
    assert_eq!(cmds.len(), 400);
    let mut short = false;
    for c in &cmds {
        assert!(c[0] == b"SET" || c[0] == b"GET");
        let key = std::str::from_utf8(&c[1]).unwrap();
        let digits = key.strip_prefix("memtier-").unwrap();
        assert!(!digits.starts_with('0') || digits == "0", "{key} is padded");
        assert!(number(digits.as_bytes()) <= 150);
        short |= digits.len() < 3;
    }
    assert!(short, "keys below 100 have fewer digits");
    assert!(
        cmds.iter()
            .filter(|c| c[0] == b"SET")
            .all(|c| c[2].len() == 8)
    );
}

#[test]
fn expiry_range_makes_setex_with_seconds_in_the_range() {
    let s = MemtierShape {
        expiry: Some((100, 105)),
        ..shape(4)
    };
    let set = template("SET memtier-__rand_int__ __data__", 4);
    let (mut out, mut rng, mut k) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(2), keys(9));
    for _ in 0..300 {
        unit(&s, &mut out, &set, Role::Set, &mut rng, &mut k);
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in commands(&out) {
        assert_eq!(c[0], b"SETEX");
        seen.insert(number(&c[2]));
        assert_eq!(c[3].len(), 4);
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [100, 101, 102, 103, 104, 105]
    );
}

#[test]
fn data_offset_uses_setrange_and_getrange() {
    let s = MemtierShape {
        data_offset: 10,
        expiry: Some((5, 6)),
        ..shape(4)
    };
    let set = template("SET memtier-__rand_int__ __data__", 4);
    let (mut out, mut rng, mut k) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(2), keys(9));
    unit(&s, &mut out, &set, Role::Set, &mut rng, &mut k);
    unit(&s, &mut out, &set, Role::Get, &mut rng, &mut k);
    let c = commands(&out);
    assert_eq!(c[0][0], b"SETRANGE");
    assert_eq!(c[0][2], b"10");
    assert_eq!(c[1][0], b"GETRANGE");
    assert_eq!(c[1][2..], [b"10".to_vec(), b"-1".to_vec()]);
}

#[test]
fn multi_key_get_makes_up_the_cycles_gets_as_memtier() {
    let s = MemtierShape {
        multi_key_get: 4,
        gets_per_cycle: 10,
        ..shape(4)
    };
    assert_eq!(MemtierShape::get_weight(10, 4), 3);
    assert_eq!(MemtierShape::get_weight(10, 0), 10);
    let get = template("GET memtier-__rand_int__", 4);
    let (mut out, mut rng, mut k) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(3), keys(99));
    for nth in [Some(0), Some(1), Some(2), None] {
        s.append_unit(&mut out, &get, Role::Get, nth, None, &mut rng, &mut k, None);
    }
    let counts: Vec<usize> = commands(&out)
        .iter()
        .inspect(|c| assert_eq!(c[0], b"MGET"))
        .map(|c| c.len() - 1)
        .collect();
    assert_eq!(counts, [4, 4, 2, 4]);
}

#[test]
fn size_pattern_s_follows_the_key() {
    let by = SizeByKey {
        min: 10,
        max: 110,
        key_min: 0,
        key_max: 100,
    };
    assert_eq!([0, 1, 50, 100].map(|k| by.size(k)), [10, 11, 60, 110]);
    let s = MemtierShape {
        size_by_key: Some(by),
        ..shape(110)
    };
    let set = template("SET memtier-__rand_int__ __data__", 110);
    let (mut out, mut rng, mut k) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(4), keys(100));
    for _ in 0..100 {
        unit(&s, &mut out, &set, Role::Set, &mut rng, &mut k);
    }
    for c in commands(&out) {
        let key = number(&c[1][b"memtier-".len()..]);
        // memtier's formula in floating point, rounded down (key 58: 0.58 × 100 is 57.99…).
        let expect = 10 + (100.0 * (key as f64 / 100.0)) as usize;
        assert_eq!(c[2].len(), expect, "key {key}");
        assert!(c[2].len() as u64 == 10 + key || c[2].len() as u64 == 9 + key);
    }
}

#[test]
fn random_data_differs_between_values() {
    let s = MemtierShape {
        random_pool: random_pool(64 + POOL_SLACK, 5),
        ..shape(64)
    };
    let set = template("SET memtier-__rand_int__ __data__", 64);
    let (mut out, mut rng, mut k) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(5), keys(9));
    for _ in 0..50 {
        unit(&s, &mut out, &set, Role::Set, &mut rng, &mut k);
    }
    let values: std::collections::BTreeSet<Vec<u8>> =
        commands(&out).into_iter().map(|c| c[2].clone()).collect();
    assert_eq!(values.len(), 50, "every value differs");
    // The fixed payload is 64 printable characters; random bytes go beyond them.
    assert!(values.iter().flatten().any(|b| !(b'0'..=b'o').contains(b)));
}

#[test]
fn command_lines_get_unpadded_keys_and_sized_random_data() {
    let s = MemtierShape {
        random_pool: random_pool(32 + POOL_SLACK, 6),
        ..shape(32)
    };
    let t = template("HSET h:memtier-__rand_int__ f __data__", 32);
    let sizes = SizeDist::Range { min: 1, max: 32 };
    let (mut out, mut rng, mut k) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(6), keys(20));
    for _ in 0..100 {
        s.append_unit(
            &mut out,
            &t,
            Role::Line,
            None,
            Some(&sizes),
            &mut rng,
            &mut k,
            None,
        );
    }
    let mut lens = std::collections::BTreeSet::new();
    for c in commands(&out) {
        assert_eq!(c[0], b"HSET");
        let key = std::str::from_utf8(&c[1]).unwrap();
        let n = key.strip_prefix("h:memtier-").unwrap();
        assert!(n == "0" || !n.starts_with('0'), "{key}");
        assert_eq!(c[2], b"f");
        lens.insert(c[3].len());
    }
    assert!(lens.len() > 10 && lens.iter().all(|l| (1..=32).contains(l)));
}

/// An import file of `n` items `key-i` → `value-i`, item `i` expiring after `i` seconds.
fn imported(n: u64, generated_from: Option<u64>, no_expiry: bool) -> Imported {
    let mut text =
        b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n".to_vec();
    for i in 0..n {
        let (k, v) = (format!("key-{i}"), format!("value \"{i}\""));
        let quoted = v.replace('"', "\"\"");
        text.extend(
            format!(
                "0, 0, {i}, {}, 0, 0, 1, {}, \"{k}\", \"{quoted}\"\n",
                v.len() + 2,
                k.len()
            )
            .bytes(),
        );
    }
    Imported {
        file: Arc::new(
            crate::workload::import::ImportFile::index("d.csv", Box::new(text)).unwrap(),
        ),
        generated_from,
        no_expiry,
    }
}

fn walk(range: u64) -> KeyGen {
    let counters = Arc::new(crate::workload::keys::SequentialCounters::default());
    KeyGen::new(range, 7, 0, Some(counters))
}

#[test]
fn imported_sets_write_the_files_items_in_order_with_their_expiry() {
    let s = MemtierShape {
        import: Some(imported(5, None, false)),
        ..shape(32)
    };
    let set = template("SET memtier-__rand_int__ __data__", 32);
    let (mut out, mut rng, mut k) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(2), walk(5));
    for _ in 0..6 {
        unit(&s, &mut out, &set, Role::Set, &mut rng, &mut k);
    }
    unit(&s, &mut out, &set, Role::Get, &mut rng, &mut walk(5));
    let c = commands(&out);
    // Item 0 has no expiry (a plain SET); the others are SETEX with theirs; the sixth SET
    // starts the file again.
    assert_eq!(
        c[0],
        [b"SET".to_vec(), b"key-0".to_vec(), b"value \"0\"".to_vec()]
    );
    for (i, cmd) in c[1..5].iter().enumerate() {
        let i = i + 1;
        let want = [
            b"SETEX".to_vec(),
            format!("key-{i}").into_bytes(),
            i.to_string().into_bytes(),
            format!("value \"{i}\"").into_bytes(),
        ];
        assert_eq!(*cmd, want);
    }
    assert_eq!(c[5][1], b"key-0");
    assert_eq!(
        c[6],
        [b"GET".to_vec(), b"key-0".to_vec()],
        "GETs read the file's keys"
    );
    assert!(out.len() <= 7 * s.bound(&set), "the buffer bound holds");
}

#[test]
fn no_expiry_and_generated_keys() {
    let s = MemtierShape {
        import: Some(imported(3, Some(10), true)),
        ..shape(32)
    };
    let set = template("SET memtier-__rand_int__ __data__", 32);
    let (mut out, mut rng) = (Vec::new(), Xoshiro256PlusPlus::seed_from_u64(2));
    let mut k = walk(14).with_pattern(crate::workload::distribution::KeyPattern::Sequential, 10, 1);
    for _ in 0..4 {
        unit(&s, &mut out, &set, Role::Set, &mut rng, &mut k);
    }
    let c = commands(&out);
    let got: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = c
        .into_iter()
        .map(|c| (c[0].clone(), c[1].clone(), c[2].clone()))
        .collect();
    let want = |key: &str, v: &str| {
        (
            b"SET".to_vec(),
            key.as_bytes().to_vec(),
            v.as_bytes().to_vec(),
        )
    };
    // Key k takes item k - 10's value; --no-expiry sends no SETEX.
    assert_eq!(
        got,
        [
            want("memtier-10", "value \"0\""),
            want("memtier-11", "value \"1\""),
            want("memtier-12", "value \"2\""),
            want("memtier-13", "value \"0\""),
        ]
    );
    let mut key = Vec::new();
    s.key_bytes(&mut key, 12);
    assert_eq!(key, b"memtier-12");
}
