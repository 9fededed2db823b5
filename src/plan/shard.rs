//! Shards: one benchmark split over N processes (usually on N machines), each running shard I.
//!
//! respbench does no placement or start-up of its own: a scheduler the user already runs (Slurm,
//! MPI, a Kubernetes Indexed Job) starts the processes, and each learns its place from `--shard
//! I/N` or from the scheduler's environment. This module owns that decision and the arithmetic
//! that keeps the totals exact: `-n` and `--rps` divided with the remainder spread over the first
//! shards, so the shards' parts add up to what the command line says.

use std::fmt;
use std::path::PathBuf;

use crate::engine::{LoadSpec, Stop};
use crate::workload::split::Share;

/// This process's place in a sharded run: `index` in `0..count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
    /// Where the place came from, for the report ("--shard", "Slurm", …).
    pub source: ShardSource,
}

/// Where a [`Shard`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardSource {
    Flag,
    Slurm,
    OpenMpi,
    Kubernetes,
}

impl fmt::Display for ShardSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShardSource::Flag => "--shard",
            ShardSource::Slurm => "Slurm (SLURM_PROCID/SLURM_NTASKS)",
            ShardSource::OpenMpi => "Open MPI (OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE)",
            ShardSource::Kubernetes => "Kubernetes Indexed Job (JOB_COMPLETION_INDEX, --shards)",
        })
    }
}

impl ShardSource {
    /// The record's short name for the source (`shard.source` in the JSON).
    pub fn id(self) -> &'static str {
        match self {
            ShardSource::Flag => "flag",
            ShardSource::Slurm => "slurm",
            ShardSource::OpenMpi => "openmpi",
            ShardSource::Kubernetes => "kubernetes",
        }
    }
}

impl Shard {
    /// The whole run in one process.
    pub const ALONE: Shard = Shard {
        index: 0,
        count: 1,
        source: ShardSource::Flag,
    };

    /// `I/N` as typed after `--shard` (I counts from 0).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (index, count) = crate::cli::parse_shard(text).map_err(|e| e.0)?;
        Ok(Shard::flag(index, count))
    }

    /// The shard `--shard I/N` names (already checked: I < N).
    pub fn flag(index: u64, count: u64) -> Shard {
        Shard {
            index,
            count,
            source: ShardSource::Flag,
        }
    }

    fn checked(index: u64, count: u64, source: ShardSource) -> Result<Shard, String> {
        if count == 0 || index >= count {
            return Err(format!(
                "shard {index} of {count} from {source}: the index must be below the count"
            ));
        }
        Ok(Shard {
            index,
            count,
            source,
        })
    }

    /// The shard from the scheduler's environment, when no `--shard` was given: Slurm, then Open
    /// MPI, then a Kubernetes Indexed Job (which has an index but no count, so it needs
    /// `--shards N`). `env` looks a variable up (the process environment, or a test's table).
    /// `None` when the environment names no shard; an error when it names a broken one.
    pub fn from_env(
        env: impl Fn(&str) -> Option<String>,
        shards: Option<u64>,
    ) -> Result<Option<Shard>, String> {
        let num =
            |name: &str| -> Result<Option<u64>, String> {
                match env(name) {
                    None => Ok(None),
                    Some(v) => v.trim().parse().map(Some).map_err(|_| {
                        format!("{name}={v:?} in the environment is not a whole number")
                    }),
                }
            };
        let pairs = [
            ("SLURM_PROCID", "SLURM_NTASKS", ShardSource::Slurm),
            (
                "OMPI_COMM_WORLD_RANK",
                "OMPI_COMM_WORLD_SIZE",
                ShardSource::OpenMpi,
            ),
        ];
        for (index, count, source) in pairs {
            if let (Some(i), Some(n)) = (num(index)?, num(count)?) {
                return Shard::checked(i, n, source).map(Some);
            }
        }
        if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let n = shards.ok_or_else(|| {
                "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but Kubernetes gives no \
                 count: pass --shards N (the Job's completions)"
                    .to_string()
            })?;
            return Shard::checked(i, n, ShardSource::Kubernetes).map(Some);
        }
        Ok(None)
    }

    /// This shard's part of `total` (requests, or requests per second): `total / count`, plus
    /// one for the first `total % count` shards, so the parts add up to `total` exactly.
    pub fn part(&self, total: u64) -> u64 {
        self.share().of(total).len
    }

    /// The shard of this process: `--shard I/N` (the flag wins over the environment), else the
    /// scheduler's environment (`env`), else `None` (not sharded). `--shards N` only completes a
    /// Kubernetes index; given with `--shard I/N` it must agree with N.
    pub fn resolve(
        flag: Option<Shard>,
        shards: Option<u64>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Shard>, String> {
        if let Some(s) = flag {
            return match shards {
                Some(n) if n != s.count => Err(format!(
                    "--shard {}/{} and --shards {n} disagree on the shard count",
                    s.index, s.count
                )),
                _ => Ok(Some(s)),
            };
        }
        match Shard::from_env(env, shards)? {
            Some(s) => match shards {
                Some(n) if n != s.count => Err(format!(
                    "--shards {n} disagrees with the {} shards of {}",
                    s.count, s.source
                )),
                _ => Ok(Some(s)),
            },
            None if shards.is_some() => Err(
                "--shards N needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) in the \
                 environment; elsewhere use --shard I/N"
                    .to_string(),
            ),
            None => Ok(None),
        }
    }

    /// What the engine needs of this shard: which share of the keyspace its counters walk (the
    /// parts of all shards are disjoint and cover the keyspace exactly, sizes as [`Shard::part`]).
    pub fn share(&self) -> Share {
        Share {
            index: self.index,
            count: self.count,
        }
    }

    /// `path` with every `{shard}` replaced by this shard's index (`out-{shard}.json`).
    pub fn name_path(&self, path: &str) -> String {
        path.replace("{shard}", &self.index.to_string())
    }
}

/// A sharded run as planned: the shard, and the whole benchmark's figures that its own are
/// parts of (for the report and the record, so `merge` can check the parts add up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardPlan {
    pub shard: Shard,
    /// `-n` of the whole benchmark (`None` with `--duration`).
    pub requests_total: Option<u64>,
    /// `--rps` of the whole benchmark (`None`: closed loop).
    pub rps_total: Option<u64>,
}

impl ShardPlan {
    /// The one-line note the run prints on stderr, naming the shard's source.
    pub fn note(&self) -> String {
        let s = &self.shard;
        let mut line = format!("shard {}/{} (from {})", s.index, s.count, s.source);
        if let Some(n) = self.requests_total {
            line.push_str(&format!(": {} of {n} requests", s.part(n)));
        }
        if let Some(r) = self.rps_total {
            line.push_str(&format!(", {} of {r} requests per second", s.part(r)));
        }
        line
    }
}

/// Narrows `load` to `shard`'s part of the benchmark: `-n` and `--rps` divided exactly, the seed
/// offset by the index (so shards given the same `--seed` draw different keys), and `{shard}` in
/// the `--json` path. Parts that would be empty are refused: a shard with `-n 0` would run
/// forever-ish by another rule and one with `--rps 0` would be unthrottled.
pub fn apply(
    shard: Shard,
    load: &mut LoadSpec,
    json: &mut Option<PathBuf>,
) -> Result<ShardPlan, String> {
    let n = shard.count;
    let requests_total = match load.stop {
        Stop::Requests(total) => Some(total),
        Stop::After(_) => None,
    };
    if let Some(total) = requests_total {
        if total < n {
            return Err(format!(
                "-n {total} over {n} shards leaves some shards no requests (use -n {n} or more)"
            ));
        }
        load.stop = Stop::Requests(shard.part(total));
    }
    let rps_total = load.rps;
    if let Some(rps) = load.rps {
        if rps < n {
            return Err(format!(
                "--rps {rps} over {n} shards leaves some shards no rate (use --rps {n} or more)"
            ));
        }
        load.rps = Some(shard.part(rps));
    }
    if let (true, Some(keyspace)) = (load.sequential, load.keyspace)
        && keyspace < n
    {
        return Err(format!(
            "--sequential with -r {keyspace} over {n} shards leaves some shards no keys \
             (use -r {n} or more)"
        ));
    }
    load.seed = load.seed.wrapping_add(shard.index);
    // --sequential and the parallel pattern walk only this shard's part of the keyspace.
    load.shard = shard.share();
    if let Some(path) = json.as_mut()
        && let Some(text) = path.to_str()
    {
        *path = PathBuf::from(shard.name_path(text));
    }
    Ok(ShardPlan {
        shard,
        requests_total,
        rps_total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn parse_accepts_i_of_n_and_refuses_the_rest() {
        let s = Shard::parse("2/4").unwrap();
        assert_eq!((s.index, s.count, s.source), (2, 4, ShardSource::Flag));
        for bad in ["3/2", "0/0", "4/4", "1", "a/2", "-1/2", "1/-2", ""] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.starts_with("--shard ") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn parts_add_up_exactly() {
        for (total, count) in [(100_000u64, 3u64), (7, 4), (0, 5), (10, 10), (3, 8)] {
            let sum: u64 = (0..count)
                .map(|index| {
                    Shard {
                        index,
                        count,
                        source: ShardSource::Flag,
                    }
                    .part(total)
                })
                .sum();
            assert_eq!(sum, total, "{total} over {count}");
        }
        assert_eq!(Shard::ALONE.part(12345), 12345);
    }

    #[test]
    fn environment_of_each_scheduler() {
        let s = Shard::from_env(env(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "4")]), None)
            .unwrap()
            .unwrap();
        assert_eq!((s.index, s.count, s.source), (1, 4, ShardSource::Slurm));
        let s = Shard::from_env(
            env(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "2")]),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!((s.index, s.count, s.source), (0, 2, ShardSource::OpenMpi));
        let s = Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "3")]), Some(5))
            .unwrap()
            .unwrap();
        assert_eq!(
            (s.index, s.count, s.source),
            (3, 5, ShardSource::Kubernetes)
        );
        let e = Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "3")]), None).unwrap_err();
        assert!(e.contains("--shards"), "{e}");
        assert_eq!(Shard::from_env(env(&[]), None), Ok(None));
        // Slurm's rank without its size is not a shard (e.g. a single srun step's variables).
        assert_eq!(
            Shard::from_env(env(&[("SLURM_PROCID", "0")]), None),
            Ok(None)
        );
        let e = Shard::from_env(env(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "2")]), None)
            .unwrap_err();
        assert!(e.contains("SLURM_PROCID"), "{e}");
        let e = Shard::from_env(env(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "2")]), None)
            .unwrap_err();
        assert!(e.contains("Slurm"), "{e}");
    }

    #[test]
    fn resolve_prefers_the_flag_and_checks_shards() {
        let slurm = env(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "4")]);
        let flag = Shard::parse("0/2").ok();
        assert_eq!(Shard::resolve(flag, None, &slurm), Ok(flag));
        let e = Shard::resolve(flag, Some(3), &slurm).unwrap_err();
        assert!(e.contains("disagree"), "{e}");
        let s = Shard::resolve(None, None, &slurm).unwrap().unwrap();
        assert_eq!(s.source, ShardSource::Slurm);
        assert!(Shard::resolve(None, Some(5), &slurm).is_err());
        let e = Shard::resolve(None, Some(5), env(&[])).unwrap_err();
        assert!(e.contains("JOB_COMPLETION_INDEX"), "{e}");
        assert_eq!(Shard::resolve(None, None, env(&[])), Ok(None));
    }

    #[test]
    fn slices_are_disjoint_and_cover_the_keyspace() {
        for (keyspace, count) in [(1000u64, 4u64), (10, 3), (7, 7), (999_999_999_999, 13)] {
            let mut next = 0;
            for index in 0..count {
                let s = Shard {
                    index,
                    count,
                    source: ShardSource::Flag,
                };
                let part = s.share().of(keyspace);
                assert_eq!(part.start, next, "{keyspace}/{count}: contiguous");
                assert!(part.len >= keyspace / count);
                next = part.start + part.len;
            }
            assert_eq!(next, keyspace, "{keyspace}/{count}: covered");
        }
    }

    fn load() -> LoadSpec {
        let args = match crate::cli::parse(
            [
                "-n",
                "10",
                "--rps",
                "7",
                "-r",
                "5",
                "--sequential",
                "--seed",
                "9",
            ]
            .map(Into::into),
        ) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        crate::plan::RunPlan::new(&args, None).unwrap().load
    }

    #[test]
    fn apply_divides_the_run_and_names_the_file() {
        let mut requests = 0;
        let mut rps = 0;
        for index in 0..3 {
            let mut l = load();
            let mut json = Some(PathBuf::from("out-{shard}.json"));
            let shard = Shard {
                index,
                count: 3,
                source: ShardSource::Flag,
            };
            let p = apply(shard, &mut l, &mut json).unwrap();
            assert_eq!((p.requests_total, p.rps_total), (Some(10), Some(7)));
            let Stop::Requests(n) = l.stop else { panic!() };
            requests += n;
            rps += l.rps.unwrap();
            assert_eq!(l.seed, 9 + index);
            assert_eq!(l.shard, Share { index, count: 3 }, "the keyspace's share");
            assert_eq!(json, Some(PathBuf::from(format!("out-{index}.json"))));
            assert!(
                p.note()
                    .contains(&format!("shard {index}/3 (from --shard)")),
                "{}",
                p.note()
            );
        }
        assert_eq!((requests, rps), (10, 7));
    }

    #[test]
    fn apply_refuses_empty_parts() {
        let shard = Shard {
            index: 0,
            count: 8,
            source: ShardSource::Flag,
        };
        for (what, e) in [
            (
                "-n",
                apply(Shard { count: 11, ..shard }, &mut load(), &mut None),
            ),
            (
                "--rps",
                apply(
                    shard,
                    &mut LoadSpec {
                        stop: Stop::Requests(100),
                        ..load()
                    },
                    &mut None,
                ),
            ),
            (
                "--sequential",
                apply(
                    Shard { count: 6, ..shard },
                    &mut LoadSpec {
                        stop: Stop::Requests(100),
                        rps: None,
                        ..load()
                    },
                    &mut None,
                ),
            ),
        ] {
            let e = e.unwrap_err();
            assert!(e.starts_with(what) && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn paths_name_the_shard() {
        let s = Shard::parse("3/8").unwrap();
        assert_eq!(s.name_path("out-{shard}.json"), "out-3.json");
        assert_eq!(s.name_path("plain.json"), "plain.json");
    }
}
