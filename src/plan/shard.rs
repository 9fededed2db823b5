//! Shards: one benchmark split over N processes (usually on N machines), each running shard I.
//!
//! respbench does no placement or start-up of its own: a scheduler the user already runs (Slurm,
//! MPI, a Kubernetes Indexed Job) starts the processes, and each learns its place from `--shard
//! I/N` or from the scheduler's environment. This module owns that decision and the arithmetic
//! that keeps the totals exact: `-n` and `--rps` divided with the remainder spread over the first
//! shards, so the shards' parts add up to what the command line says.

use std::fmt;

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

impl Shard {
    /// The whole run in one process.
    pub const ALONE: Shard = Shard {
        index: 0,
        count: 1,
        source: ShardSource::Flag,
    };

    /// `I/N` as typed after `--shard` (I counts from 0).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "--shard {text:?}: expected I/N with 0 <= I < N, e.g. 0/4 for the first of four"
            )
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        Shard::checked(index, count, ShardSource::Flag).map_err(|_| bad())
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
        total / self.count + u64::from(self.index < total % self.count)
    }

    /// `path` with every `{shard}` replaced by this shard's index (`out-{shard}.json`).
    pub fn name_path(&self, path: &str) -> String {
        path.replace("{shard}", &self.index.to_string())
    }
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
    fn paths_name_the_shard() {
        let s = Shard::parse("3/8").unwrap();
        assert_eq!(s.name_path("out-{shard}.json"), "out-3.json");
        assert_eq!(s.name_path("plain.json"), "plain.json");
    }
}
