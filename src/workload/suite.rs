//! The default test suite (spec §2.1): the reference's tests, titles, `-t` names and commands, in
//! its order.
//!
//! One deliberate difference: FUNCTION LOAD and FCALL register their Lua functions with
//! `redis.register_function`, which both Redis 7 and Valkey accept, where the reference uses
//! `server.register_function` (Valkey only), so the whole suite runs on either server.

use super::template::{SequenceItem, Template};

/// One test of the default suite.
#[derive(Debug, PartialEq, Eq)]
pub struct SuiteTest {
    /// The `-t` name.
    pub name: &'static str,
    /// The title printed in reports.
    pub title: &'static str,
    /// Group names that also select it (`ping`, `lrange`).
    pub groups: &'static [&'static str],
}

const fn t(name: &'static str, title: &'static str, groups: &'static [&'static str]) -> SuiteTest {
    SuiteTest {
        name,
        title,
        groups,
    }
}

const LRANGE_PREP: &[&str] = &[
    "lrange",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
];

/// The suite in the order it runs.
pub static SUITE: [SuiteTest; 24] = [
    t("ping_inline", "PING_INLINE", &["ping"]),
    t("ping_mbulk", "PING_MBULK", &["ping"]),
    t("set", "SET", &[]),
    t("get", "GET", &[]),
    t("incr", "INCR", &[]),
    t("lpush", "LPUSH", &[]),
    t("rpush", "RPUSH", &[]),
    t("lpop", "LPOP", &[]),
    t("rpop", "RPOP", &[]),
    t("sadd", "SADD", &[]),
    t("hset", "HSET", &[]),
    t("spop", "SPOP", &[]),
    t("zadd", "ZADD", &[]),
    t("zpopmin", "ZPOPMIN", &[]),
    t(
        "lpush_lrange",
        "LPUSH (needed to benchmark LRANGE)",
        LRANGE_PREP,
    ),
    t("lrange_100", "LRANGE_100 (first 100 elements)", &["lrange"]),
    t("lrange_300", "LRANGE_300 (first 300 elements)", &["lrange"]),
    t("lrange_500", "LRANGE_500 (first 500 elements)", &["lrange"]),
    t("lrange_600", "LRANGE_600 (first 600 elements)", &["lrange"]),
    t("mset", "MSET (10 keys)", &[]),
    t("mget", "MGET (10 keys)", &[]),
    t("xadd", "XADD", &[]),
    t("function_load", "FUNCTION LOAD", &[]),
    t("fcall", "FCALL", &[]),
];

/// The tests `-t` selects, in suite order: exact, case-insensitive names separated by commas (no
/// trimming, as the reference), plus the `ping` and `lrange` groups; any `lrange_N` also selects
/// the LPUSH that fills the list. Unknown names select nothing. `None` selects everything.
pub fn select_tests(list: Option<&str>) -> Vec<&'static SuiteTest> {
    let Some(list) = list else {
        return SUITE.iter().collect();
    };
    let wanted: Vec<String> = list.split(',').map(|s| s.to_ascii_lowercase()).collect();
    let picked = |name: &str| wanted.iter().any(|w| w == name);
    SUITE
        .iter()
        .filter(|test| {
            // The LPUSH prep has no name of its own in the reference; only its groups select it.
            (test.name != "lpush_lrange" && picked(test.name))
                || test.groups.iter().any(|g| picked(g))
        })
        .collect()
}

/// The suite test named `name` (a name of [`SUITE`]; panics otherwise, a programming error).
pub fn by_name(name: &str) -> &'static SuiteTest {
    SUITE
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no suite test {name}"))
}

/// Names `-t` understands, for warnings about unknown ones.
pub fn known_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SUITE
        .iter()
        .any(|t| (t.name == name && t.name != "lpush_lrange") || t.groups.contains(&name.as_str()))
}

/// What a test needs: its unit template and commands to run once on a control connection
/// before it starts (FCALL loads its function).
#[derive(Debug)]
pub struct TestWork {
    pub template: Template,
    pub setup: Vec<Vec<Vec<u8>>>,
}

/// Parameters of the suite's commands.
#[derive(Clone, Copy, Debug)]
pub struct SuiteParams<'a> {
    /// The pass's `-d`-byte value.
    pub data: &'a [u8],
    /// `-r` given: placeholders are live (and ZADD's score becomes random).
    pub keyspace_given: bool,
    pub num_functions: u32,
    pub num_keys_in_fcall: u32,
    /// `--cluster`: keys get the reference's `:{tag}` (`key:{tag}:__rand_int__`, `mylist:{tag}`).
    pub cluster_tag: bool,
    /// The keys' prefix: `key:` as the reference, or `--key-prefix` (memtier's option).
    pub key_prefix: &'a [u8],
}

fn cmd(parts: &[&[u8]]) -> SequenceItem {
    SequenceItem {
        repeat: 1,
        args: parts.iter().map(|p| p.to_vec()).collect(),
        verbatim_arg: None,
        data: Vec::new(),
    }
}

/// Builds the work of one suite test.
pub fn build(test: &SuiteTest, p: &SuiteParams) -> TestWork {
    let d = p.data;
    let tag = if p.cluster_tag { ":{tag}" } else { "" };
    // `key:{tag}:__rand_int__` with the default prefix, as the reference.
    let key_tag = if p.cluster_tag { "{tag}:" } else { "" };
    let mut key_owned = p.key_prefix.to_vec();
    key_owned.extend_from_slice(format!("{key_tag}__rand_int__").as_bytes());
    let counter_owned = format!("counter{tag}:__rand_int__");
    let mylist_owned = format!("mylist{tag}");
    let myset_owned = format!("myset{tag}");
    let myhash_owned = format!("myhash{tag}");
    let myzset_owned = format!("myzset{tag}");
    let mystream_owned = format!("mystream{tag}");
    let key = key_owned.as_slice();
    let counter = counter_owned.as_bytes();
    let mylist = mylist_owned.as_bytes();
    let myset = myset_owned.as_bytes();
    let myhash = myhash_owned.as_bytes();
    let myzset = myzset_owned.as_bytes();
    let mystream = mystream_owned.as_bytes();
    let mut setup = Vec::new();
    let item = match test.name {
        "ping_inline" => {
            return TestWork {
                template: Template::raw(b"PING\r\n"),
                setup,
            };
        }
        "ping_mbulk" => cmd(&[b"PING"]),
        "set" => cmd(&[b"SET", key, d]),
        "get" => cmd(&[b"GET", key]),
        "incr" => cmd(&[b"INCR", counter]),
        "lpush" | "lpush_lrange" => cmd(&[b"LPUSH", mylist, d]),
        "rpush" => cmd(&[b"RPUSH", mylist, d]),
        "lpop" => cmd(&[b"LPOP", mylist]),
        "rpop" => cmd(&[b"RPOP", mylist]),
        "sadd" => cmd(&[b"SADD", myset, b"element:__rand_int__"]),
        "hset" => cmd(&[b"HSET", myhash, b"element:__rand_int__", d]),
        "spop" => cmd(&[b"SPOP", myset]),
        "zadd" => {
            let score: &[u8] = if p.keyspace_given {
                b"__rand_int__"
            } else {
                b"0"
            };
            cmd(&[b"ZADD", myzset, score, b"element:__rand_1st__"])
        }
        "zpopmin" => cmd(&[b"ZPOPMIN", myzset]),
        "lrange_100" => cmd(&[b"LRANGE", mylist, b"0", b"99"]),
        "lrange_300" => cmd(&[b"LRANGE", mylist, b"0", b"299"]),
        "lrange_500" => cmd(&[b"LRANGE", mylist, b"0", b"499"]),
        "lrange_600" => cmd(&[b"LRANGE", mylist, b"0", b"599"]),
        "mset" => {
            let mut args: Vec<Vec<u8>> = vec![b"MSET".to_vec()];
            for _ in 0..10 {
                args.push(key.to_vec());
                args.push(d.to_vec());
            }
            args_item(args)
        }
        "mget" => {
            let mut args: Vec<Vec<u8>> = vec![b"MGET".to_vec()];
            args.extend((0..10).map(|_| key.to_vec()));
            args_item(args)
        }
        "xadd" => cmd(&[b"XADD", mystream, b"*", b"myfield", d]),
        "function_load" => {
            let script = function_library(p.num_functions);
            cmd(&[b"function", b"load", b"replace", script.as_bytes()])
        }
        "fcall" => fcall(p.num_keys_in_fcall, tag, &mut setup),
        other => unreachable!("suite test {other} has no command"),
    };
    // The value arguments (the `-d` data), which variable value sizes resize.
    let mut item = item;
    item.data = value_args(test.name, item.args.len())
        .map(|arg| (arg, 0))
        .collect();
    TestWork {
        template: Template::encode(&[item], p.keyspace_given),
        setup,
    }
}

/// A command of the given arguments, sent once, none of them a value to resize.
fn args_item(args: Vec<Vec<u8>>) -> SequenceItem {
    SequenceItem {
        repeat: 1,
        args,
        verbatim_arg: None,
        data: Vec::new(),
    }
}

/// `FCALL foo1 N key1 … keyN` of `keys` keys (each with the cluster `tag`), with the library it
/// calls loaded first (`setup`).
fn fcall(keys: u32, tag: &str, setup: &mut Vec<Vec<Vec<u8>>>) -> SequenceItem {
    setup.push(vec![
        b"FUNCTION".to_vec(),
        b"LOAD".to_vec(),
        b"REPLACE".to_vec(),
        fcall_library(keys).into_bytes(),
    ]);
    let mut args: Vec<Vec<u8>> = vec![
        b"fcall".to_vec(),
        b"foo1".to_vec(),
        keys.to_string().into_bytes(),
    ];
    args.extend((1..=keys).map(|i| format!("key{i}{tag}").into_bytes()));
    args_item(args)
}

/// Which arguments of a suite test's command are its value (`-d` bytes).
fn value_args(name: &str, argc: usize) -> impl Iterator<Item = usize> {
    let (first, step) = match name {
        "set" | "lpush" | "lpush_lrange" | "rpush" => (2, argc),
        "hset" => (3, argc),
        "xadd" => (4, argc),
        "mset" => (2, 2),
        _ => (argc, 1),
    };
    (first..argc).step_by(step)
}

/// The FUNCTION LOAD test's library: functions foo<n> .. foo1 that return 0.
fn function_library(n: u32) -> String {
    let mut s = String::from("#!lua name=benchlib\n");
    for i in (1..=n).rev() {
        s.push_str(&format!(
            "local function foo{i}()\nreturn 0\nend\nredis.register_function('foo{i}', foo{i})\n"
        ));
    }
    s
}

/// The library FCALL calls: foo1, which reads its keys argument when it has keys.
fn fcall_library(num_keys: u32) -> String {
    let body = if num_keys > 0 {
        "local function foo1(keys, args)\nreturn keys[0]\nend\n"
    } else {
        "local function foo1()\nreturn 0\nend\n"
    };
    format!("#!lua name=benchlib\n{body}redis.register_function('foo1', foo1)\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &str) -> Vec<&'static str> {
        select_tests(Some(list)).iter().map(|t| t.title).collect()
    }

    #[test]
    fn suite_order_and_titles_match_the_reference() {
        let titles: Vec<&str> = SUITE.iter().map(|t| t.title).collect();
        assert_eq!(titles[0], "PING_INLINE");
        assert_eq!(titles[14], "LPUSH (needed to benchmark LRANGE)");
        assert_eq!(titles[19], "MSET (10 keys)");
        assert_eq!(titles[23], "FCALL");
        assert_eq!(select_tests(None).len(), 24);
    }

    #[test]
    fn t_is_exact_case_insensitive_and_in_suite_order() {
        assert_eq!(names("GET,set"), ["SET", "GET"]);
        assert_eq!(names("ping"), ["PING_INLINE", "PING_MBULK"]);
        assert_eq!(names("se"), Vec::<&str>::new());
        assert_eq!(names("set, get"), ["SET"], "no trimming, as the reference");
        assert_eq!(names("mset"), ["MSET (10 keys)"]);
        assert_eq!(names("function_load,fcall"), ["FUNCTION LOAD", "FCALL"]);
    }

    #[test]
    fn lrange_groups_include_the_lpush_prep() {
        assert_eq!(
            names("lrange_300"),
            [
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_300 (first 300 elements)"
            ]
        );
        assert_eq!(names("lrange").len(), 5);
        assert_eq!(names("lpush"), ["LPUSH"], "plain lpush is not the prep");
        assert!(known_name("LRANGE_600") && known_name("ping") && !known_name("lpush_lrange"));
    }

    #[test]
    fn commands_are_the_reference_ones() {
        let p = SuiteParams {
            data: b"xyz",
            keyspace_given: false,
            num_functions: 2,
            num_keys_in_fcall: 1,
            cluster_tag: false,
            key_prefix: b"key:",
        };
        let get = |name: &str| build(SUITE.iter().find(|t| t.name == name).unwrap(), &p);
        assert_eq!(get("ping_inline").template.unit, b"PING\r\n");
        assert_eq!(
            get("set").template.unit,
            b"*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nxyz\r\n"
        );
        assert!(
            get("zadd")
                .template
                .unit
                .ends_with(b"$1\r\n0\r\n$20\r\nelement:__rand_1st__\r\n")
        );
        assert_eq!(
            get("mset")
                .template
                .unit
                .windows(3)
                .filter(|w| w == b"xyz")
                .count(),
            10
        );
        let f = get("fcall");
        assert_eq!(f.setup.len(), 1);
        assert!(f.template.unit.ends_with(b"$4\r\nkey1\r\n"));
        let lib = String::from_utf8(get("function_load").template.unit).unwrap();
        assert!(lib.contains("redis.register_function('foo2', foo2)"));
        assert!(lib.find("foo2").unwrap() < lib.find("foo1").unwrap());
    }

    #[test]
    fn with_r_zadd_score_is_random_and_slots_exist() {
        let p = SuiteParams {
            data: b"x",
            keyspace_given: true,
            num_functions: 1,
            num_keys_in_fcall: 0,
            cluster_tag: false,
            key_prefix: b"key:",
        };
        let z = build(SUITE.iter().find(|t| t.name == "zadd").unwrap(), &p);
        assert_eq!(z.template.placeholders.len(), 2);
        assert_eq!(build(&SUITE[19], &p).template.placeholders.len(), 10);
    }
}
