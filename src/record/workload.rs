//! The record's workload options: what keys, values, commands and arrivals a run measured, so
//! a record says it without anyone parsing `command_line` (whose spellings are memtier's,
//! valkey-benchmark's or respbench's own, in any order and with `=` or without).
//!
//! Owns: turning the resolved plan (not the flags) into the `options` fields, with the values
//! the run used — a Gaussian pattern's median and deviation are filled in from the key range
//! when not given, as the workers' sampler does. Must not: check anything (the plan did).

use serde::{Deserialize, Serialize};

use crate::engine::Arrival;
use crate::plan::{MixSource, RunPlan, Workload};
use crate::workload::distribution::KeyPattern;
use crate::workload::drift::KeyDrift;
use crate::workload::sizes::SizeDist;

/// A key pattern and the parameters it ran with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KeyPatternRecord {
    /// `uniform`, `sequential`, `gaussian`, `zipf` or `parallel`.
    pub name: String,
    /// Gaussian: the median and standard deviation in key units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    /// Zipf: the exponent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exponent: Option<f64>,
}

/// `--data-size-range MIN-MAX`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SizeRangeRecord {
    pub min: usize,
    pub max: usize,
}

/// One size of `--data-size-list` with its relative weight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SizeWeightRecord {
    pub size: usize,
    pub weight: u64,
}

/// One command of a mix (`--ratio`, `--command`) as planned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixOptionRecord {
    /// As the report and `tests[].mix` name it (`SET`, `GET#2`).
    pub name: String,
    /// A `--command` line as sent (memtier's `__key__` already the key prefix and
    /// `__rand_int__`), passwords redacted; `null` for `--ratio`'s SET and GET (the default
    /// tests' commands).
    pub command: Option<String>,
    /// Its relative weight.
    pub weight: u32,
    /// Its own key pattern (`--command-key-pattern`, GET's half of `--key-pattern S:G`);
    /// `null`: the run's.
    pub key_pattern: Option<KeyPatternRecord>,
}

/// The workload fields of `options`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadOptions {
    pub key_pattern: KeyPatternRecord,
    /// The lowest placeholder value (`--key-minimum`; 0 by default).
    pub key_minimum: u64,
    /// The highest (`-r` − 1 or `--key-maximum`); `null` without a key range (placeholders
    /// stay literal).
    pub key_maximum: Option<u64>,
    /// The default tests' and `__key__`'s key prefix (`key:`, or `--key-prefix`).
    pub key_prefix: String,
    /// `--data-size-range`; `null` otherwise.
    pub data_size_range: Option<SizeRangeRecord>,
    /// `--data-size-list`; `null` otherwise.
    pub data_size_list: Option<Vec<SizeWeightRecord>>,
    /// `--ratio` or `--command` mixes: each command that runs (weight above 0) and its weight;
    /// empty without a mix.
    pub mix: Vec<MixOptionRecord>,
    /// `uniform` or `poisson`: how `--rps` spaces its sends.
    pub arrival: String,
    /// `--key-drift`: how the hot spot moved (absent without it, and in older records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_drift: Option<KeyDriftRecord>,
    /// `respbench memtier`'s data options (absent outside memtier mode, and in older records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memtier: Option<super::shape::MemtierDataRecord>,
}

/// `--key-drift` as run (`workload::drift`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KeyDriftRecord {
    /// `shift` (the Gaussian or Zipf centre moves) or `hot_set` (a hot set replaced).
    pub kind: String,
    /// `shift`: keys moved per interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// `hot_set`: the set's size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<u64>,
    /// The interval, seconds.
    pub every_s: f64,
}

impl KeyDriftRecord {
    fn of(d: KeyDrift) -> Self {
        let (kind, step, keys) = match d {
            KeyDrift::Shift { step, .. } => ("shift", Some(step), None),
            KeyDrift::HotSet { keys, .. } => ("hot_set", None, Some(keys)),
        };
        Self {
            kind: kind.into(),
            step,
            keys,
            every_s: d.every().as_secs_f64(),
        }
    }
}

impl Default for WorkloadOptions {
    /// valkey-benchmark's workload: uniform keys from 0, `key:`, fixed sizes, no mix, even
    /// arrivals (for records built outside a run).
    fn default() -> Self {
        Self {
            key_pattern: pattern(KeyPattern::Uniform, None),
            key_minimum: 0,
            key_maximum: None,
            key_prefix: "key:".into(),
            data_size_range: None,
            data_size_list: None,
            mix: Vec::new(),
            arrival: "uniform".into(),
            key_drift: None,
            memtier: None,
        }
    }
}

/// The workload options of `plan`.
pub fn of(plan: &RunPlan) -> WorkloadOptions {
    let load = &plan.load;
    let key_maximum = load.keyspace.map(|n| n.saturating_sub(1));
    let range = key_maximum.map(|max| (load.key_min, max));
    let (data_size_range, data_size_list) = match &load.value_sizes {
        None => (None, None),
        Some(SizeDist::Range { min, max }) => (
            Some(SizeRangeRecord {
                min: *min,
                max: *max,
            }),
            None,
        ),
        Some(SizeDist::List {
            sizes, cumulative, ..
        }) => {
            let weights = cumulative
                .iter()
                .scan(0u64, |prev, &c| Some(c - std::mem::replace(prev, c)));
            let list = sizes
                .iter()
                .zip(weights)
                .map(|(&size, weight)| SizeWeightRecord { size, weight })
                .collect();
            (None, Some(list))
        }
    };
    let mix = match &plan.workload {
        // Weight-0 commands never run (`--ratio 0:1` is all GETs): as `tests[].mix`, left out.
        Workload::Mix { commands, .. } => commands
            .iter()
            .filter(|c| c.weight > 0)
            .map(|c| MixOptionRecord {
                name: c.name.clone(),
                command: match &c.source {
                    MixSource::Suite(_) => None,
                    MixSource::Line(args) => Some(crate::redact::command(args)),
                },
                weight: c.weight,
                key_pattern: c.keys.map(|p| pattern(p, range)),
            })
            .collect(),
        _ => Vec::new(),
    };
    WorkloadOptions {
        key_pattern: pattern(load.key_pattern, range),
        key_minimum: load.key_min,
        key_maximum,
        key_prefix: String::from_utf8_lossy(&plan.key_prefix).into_owned(),
        data_size_range,
        data_size_list,
        mix,
        arrival: match load.arrival {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
        .into(),
        key_drift: load.key_drift.map(KeyDriftRecord::of),
        memtier: (plan.memtier.as_deref())
            .map(|m| super::shape::MemtierDataRecord::of(m, load.scan_walk)),
    }
}

/// `p` with the parameters it ran with over `range` (`(min, max)`, inclusive): a Gaussian's
/// defaults are the sampler's (the middle of the range, a sixth of its width, at least 1).
fn pattern(p: KeyPattern, range: Option<(u64, u64)>) -> KeyPatternRecord {
    let named = |name: &str| KeyPatternRecord {
        name: name.into(),
        median: None,
        stddev: None,
        exponent: None,
    };
    match p {
        KeyPattern::Uniform => named("uniform"),
        KeyPattern::Sequential => named("sequential"),
        KeyPattern::Parallel => named("parallel"),
        KeyPattern::Zipf { exponent } => KeyPatternRecord {
            exponent: Some(exponent),
            ..named("zipf")
        },
        KeyPattern::Gaussian { median, stddev } => {
            let width = range.map(|(min, max)| (min as f64, (max - min) as f64));
            KeyPatternRecord {
                median: median.or(width.map(|(min, w)| min + w / 2.0)),
                stddev: stddev.or(width.map(|(_, w)| (w / 6.0).max(1.0))),
                ..named("gaussian")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(argv: &[&str]) -> WorkloadOptions {
        let args = match crate::cli::parse(argv.iter().map(Into::into)).unwrap() {
            crate::cli::Invocation::Run(a) => a,
            other => panic!("{other:?}"),
        };
        of(&RunPlan::new(&args, None).unwrap())
    }

    #[test]
    fn valkey_benchmarks_workload_is_the_default() {
        assert_eq!(options(&["-n", "10"]), WorkloadOptions::default());
        let o = options(&["-r", "1000", "--sequential"]);
        assert_eq!(o.key_pattern.name, "sequential");
        assert_eq!((o.key_minimum, o.key_maximum), (0, Some(999)));
    }

    #[test]
    fn patterns_carry_the_parameters_they_ran_with() {
        // The Gaussian's defaults: the range's middle and a sixth of its width.
        let o = options(&[
            "--key-pattern=G:G",
            "--key-minimum=100",
            "--key-maximum=1300",
        ]);
        assert_eq!((o.key_minimum, o.key_maximum), (100, Some(1300)));
        assert_eq!(
            o.key_pattern,
            KeyPatternRecord {
                name: "gaussian".into(),
                median: Some(700.0),
                stddev: Some(200.0),
                exponent: None
            }
        );
        let o = options(&[
            "--keys",
            "gaussian",
            "-r",
            "10",
            "--key-median",
            "3",
            "--key-stddev",
            "2",
        ]);
        assert_eq!(
            (o.key_pattern.median, o.key_pattern.stddev),
            (Some(3.0), Some(2.0))
        );
        let o = options(&["--keys", "zipf:1.2", "-r", "10"]);
        assert_eq!(
            (o.key_pattern.name.as_str(), o.key_pattern.exponent),
            ("zipf", Some(1.2))
        );
        let json = serde_json::to_value(&o.key_pattern).unwrap();
        assert_eq!(json, serde_json::json!({"name": "zipf", "exponent": 1.2}));
    }

    #[test]
    fn a_ratio_mix_with_its_own_get_pattern() {
        let o = options(&[
            "--ratio=1:10",
            "--key-pattern=R:Z",
            "-r",
            "100",
            "--data-size-range=10-20",
        ]);
        let names: Vec<(&str, u32)> = o.mix.iter().map(|m| (m.name.as_str(), m.weight)).collect();
        assert_eq!(names, [("SET", 1), ("GET", 10)]);
        assert_eq!(o.mix[0].command, None);
        assert_eq!(
            o.mix[0].key_pattern, None,
            "SET draws with the run's pattern"
        );
        assert_eq!(o.mix[1].key_pattern.as_ref().unwrap().name, "zipf");
        assert_eq!(o.key_pattern.name, "uniform");
        assert_eq!(
            o.data_size_range,
            Some(SizeRangeRecord { min: 10, max: 20 })
        );
        // The Azure guide's all-GET line: SET's weight 0 never runs.
        let o = options(&["--ratio=0:1", "-r", "100"]);
        assert_eq!(o.mix.len(), 1);
        assert_eq!(o.mix[0].name, "GET");
    }

    #[test]
    fn command_mixes_sizes_prefix_and_arrival() {
        let o = options(&[
            "--command",
            "hset __key__ f __data__",
            "--command-ratio",
            "3",
            "--command",
            "get __key__",
            "--command-key-pattern",
            "S",
            "-r",
            "50",
            "--key-prefix",
            "app:",
            "--data-size-list",
            "10:1,100:3",
            "--rps",
            "100",
            "--arrival",
            "poisson",
        ]);
        assert_eq!(o.mix[0].name, "HSET");
        assert_eq!(
            o.mix[0].command.as_deref(),
            Some("hset app:__rand_int__ f __data__")
        );
        assert_eq!(o.mix[0].weight, 3);
        assert_eq!(o.mix[1].key_pattern.as_ref().unwrap().name, "sequential");
        assert_eq!(o.key_prefix, "app:");
        assert_eq!(
            o.data_size_list,
            Some(vec![
                SizeWeightRecord {
                    size: 10,
                    weight: 1
                },
                SizeWeightRecord {
                    size: 100,
                    weight: 3
                }
            ])
        );
        assert_eq!(o.data_size_range, None);
        assert_eq!(o.arrival, "poisson");
    }
}
