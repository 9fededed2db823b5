//! Weighted command mixes (`--ratio SET:GET`): each unit of a batch is one command drawn by
//! weight from the seeded per-worker RNG, and the kind of each is noted so its reply is timed
//! into that command's own histogram.
//!
//! Every command is pre-encoded once (a [`Template`] each, placeholders and value arguments
//! located as for any template); filling a batch copies the chosen commands' bytes back to back
//! into the connection's buffer, which was sized for the longest, so nothing is allocated per
//! request. Each unit is a single command, so reply `i` of a batch answers unit `i`.

use std::sync::Arc;

use rand_core::RngCore;

use super::distribution::KeyPattern;
use super::keys::{KeyGen, SequentialCounters};
use super::shape::{MemtierShape, Role, Shared};
use super::sizes::{SizeDist, append_sized};
use super::template::{Gap, SHARED_VALUE_MIN, Template, fill_unit};

/// A batch's units as a mix wrote them: which command of the mix each is, and its length in
/// bytes (reply `i` answers unit `i`; memtier's KB/sec counts a request's bytes with its
/// reply's). Reused from batch to batch: nothing is allocated per request. One per connection,
/// so it also keeps the connection's place in an in-order mix's cycle.
#[derive(Clone, Debug, Default)]
pub struct BatchUnits {
    pub kinds: Vec<u8>,
    pub lens: Vec<u32>,
    /// The connection's next position in the weights' cycle (`Mix::in_order`).
    pub turn: u64,
    /// A memtier mix's large values left out of the batch buffer, sent from their one copy
    /// (`Mix::value_sources`), ascending by offset.
    pub gaps: Vec<Gap>,
}

impl BatchUnits {
    /// Room for `units` units (the first `units` entries are then overwritten).
    pub fn reserve(&mut self, units: usize) {
        if self.kinds.len() < units {
            self.kinds.resize(units, 0);
            self.lens.resize(units, 0);
        }
    }

    /// A batch of one unit of command `kind`, `len` bytes (a `--command` SCAN walk's request:
    /// 0 for a cycle's `SCAN 0`, 1 for a continuation).
    pub fn one(&mut self, kind: u8, len: usize) {
        self.reserve(1);
        self.kinds[0] = kind;
        self.lens[0] = len as u32;
    }
}

/// One command of a mix.
#[derive(Clone, Debug)]
pub struct MixCommand {
    /// Its name in reports (`SET`, `GET`).
    pub name: String,
    /// The command, encoded (exactly one command per unit).
    pub template: Template,
    /// Its relative weight (above 0).
    pub weight: u32,
    /// Its own key pattern (memtier's `--command-key-pattern`, GET's half of `--key-pattern
    /// R:G`); `None` draws with the run's.
    pub keys: Option<KeyPattern>,
}

/// A weighted mix of single commands.
#[derive(Clone, Debug)]
pub struct Mix {
    pub commands: Vec<MixCommand>,
    /// Command `i` is drawn when a uniform 64-bit draw falls under `thresholds[i]` (and not
    /// under an earlier one): its running weight sum over the total, scaled to 2⁶⁴.
    thresholds: Vec<u64>,
    /// The longest command's encoding (the batch buffer holds `-P` of them).
    longest: usize,
    /// Per command, the counters its own sequential or parallel pattern walks (shared by all
    /// workers, like `--sequential`'s).
    pub counters: Vec<Arc<SequentialCounters>>,
    /// memtier's order (`respbench memtier --ratio`/`--command`): instead of drawing, a
    /// connection's request `t` is command `t`'s turn in the weight cycle (`1:10`: one SET, then
    /// ten GETs), so the split is exact, as memtier's. Each connection walks its own cycle
    /// (`BatchUnits::turn`), as memtier's clients do: `--command=MULTI … --command=EXEC` stays
    /// one transaction per connection.
    in_order: bool,
    /// The running weight sums (the cycle's boundaries), for `in_order`.
    bounds: Vec<u64>,
    /// `respbench memtier`: its own request shapes (`workload::shape`) and each command's role.
    memtier: Option<(Arc<MemtierShape>, Vec<Role>)>,
}

impl Mix {
    /// A mix of `commands` (weight-0 commands are dropped); `None` if none is left or one is not
    /// a single command. At most 256 commands (a kind is one byte per unit).
    pub fn new(commands: Vec<MixCommand>) -> Option<Self> {
        let commands: Vec<MixCommand> = commands.into_iter().filter(|c| c.weight > 0).collect();
        if commands.is_empty()
            || commands.len() > 256
            || commands.iter().any(|c| c.template.commands_per_unit != 1)
        {
            return None;
        }
        let total: u64 = commands.iter().map(|c| u64::from(c.weight)).sum();
        let mut sum = 0u64;
        let thresholds = commands
            .iter()
            .map(|c| {
                sum += u64::from(c.weight);
                // sum / total of 2^64, in 128 bits; the last is 2^64 - 1 (every draw but one
                // falls under it, and the draw function takes the last for that one).
                ((u128::from(sum) << 64) / u128::from(total)).min(u128::from(u64::MAX)) as u64
            })
            .collect();
        let longest = commands
            .iter()
            .map(|c| c.template.unit.len())
            .max()
            .unwrap_or(0);
        let counters = commands.iter().map(|_| Arc::default()).collect();
        let bounds = commands
            .iter()
            .scan(0u64, |sum, c| {
                *sum += u64::from(c.weight);
                Some(*sum)
            })
            .collect();
        Some(Self {
            commands,
            thresholds,
            longest,
            counters,
            in_order: false,
            bounds,
            memtier: None,
        })
    }

    /// Sends the commands in their weights' cycle instead of drawing them (memtier's order).
    pub fn in_order(mut self) -> Self {
        self.in_order = true;
        self
    }

    /// Writes the commands as memtier does (`workload::shape`): with `ratio`, the commands
    /// named SET and GET are the ratio's (their shapes are memtier's SET/SETEX/SETRANGE and
    /// GET/MGET/GETRANGE), any other is a `--command` line.
    pub fn with_memtier(mut self, shape: Arc<MemtierShape>, ratio: bool) -> Self {
        let roles = (self.commands.iter())
            .map(|c| match (ratio, c.name.as_str()) {
                (true, "SET") => Role::Set,
                (true, "GET") => Role::Get,
                _ => Role::Line,
            })
            .collect();
        self.longest = (self.commands.iter())
            .map(|c| shape.bound(&c.template))
            .max()
            .unwrap_or(0);
        self.memtier = Some((shape, roles));
        self
    }

    /// The command of cycle position `turn`.
    #[inline]
    fn turn(&self, turn: u64) -> usize {
        let total = self.bounds[self.bounds.len() - 1];
        let at = turn % total;
        self.bounds.iter().position(|&b| at < b).unwrap_or(0)
    }

    /// memtier's `--key-prefix`, in a memtier mix.
    pub fn memtier_key_prefix(&self) -> Option<&[u8]> {
        self.memtier
            .as_ref()
            .map(|(shape, _)| shape.key_prefix.as_slice())
    }

    /// Whether command `k` writes memtier's own keys (the ratio's SET and GET: `memtier-123`,
    /// not its template's key).
    pub fn memtier_keys(&self, k: usize) -> bool {
        self.memtier
            .as_ref()
            .is_some_and(|(_, roles)| matches!(roles.get(k), Some(Role::Set | Role::Get)))
    }

    /// memtier's `MGET` (`--multi-key-get N`): command `k` writes up to N keys, from its first
    /// argument on; `None` for any other command (its template says where its keys are).
    pub fn keys_per_unit(&self, k: usize) -> Option<usize> {
        let (shape, roles) = self.memtier.as_ref()?;
        (roles.get(k) == Some(&Role::Get) && shape.multi_key_get > 1)
            .then_some(shape.multi_key_get as usize)
    }

    /// Appends one unit at the end of `out` and returns which command it is: the next of the
    /// cycle at `turn` (which advances) in memtier's order, else drawn. Cluster mode writes a
    /// batch unit by unit this way, as each unit's keys decide where it goes.
    pub fn append_one<R: RngCore>(
        &self,
        out: &mut Vec<u8>,
        turn: &mut u64,
        rng: &mut R,
        sizes: Option<&SizeDist>,
        keys: &mut [KeyGen],
        scratch: &mut Vec<usize>,
    ) -> usize {
        let (k, nth) = if self.in_order {
            *turn += 1;
            let (k, nth) = self.position(*turn - 1);
            (k, Some(nth))
        } else {
            (self.draw(rng), None)
        };
        let keys = &mut keys[if keys.len() == 1 { 0 } else { k }];
        let t = &self.commands[k].template;
        match (&self.memtier, sizes) {
            (Some((shape, roles)), _) => {
                shape.append_unit(out, t, roles[k], nth, sizes, rng, keys, None)
            }
            (None, Some(dist)) if !t.values.is_empty() => {
                append_sized(out, t, dist, rng, keys, scratch)
            }
            (None, _) => {
                let base = out.len();
                out.extend_from_slice(&t.unit);
                fill_unit(&mut out[base..], &t.placeholders, keys);
            }
        }
        k
    }

    /// The command at cycle position `turn` and its place among that command's turns in the
    /// cycle (a GET's place gives an `MGET`'s key count).
    #[inline]
    fn position(&self, turn: u64) -> (usize, u64) {
        let total = self.bounds[self.bounds.len() - 1];
        let at = turn % total;
        let k = self.turn(turn);
        let start = if k == 0 { 0 } else { self.bounds[k - 1] };
        (k, at - start)
    }

    /// Where a batch's gaps take their bytes: source `k` is command `k`'s template, the one
    /// after them a memtier mix's random pool (`-R`).
    pub fn value_sources(&self) -> Vec<&[u8]> {
        let mut all: Vec<&[u8]> = self.commands.iter().map(|c| &c.template.unit[..]).collect();
        if let Some((shape, _)) = &self.memtier {
            all.push(&shape.random_pool);
        }
        all
    }

    /// Whether some command draws keys with its own pattern (a worker then keeps a key
    /// generator per command).
    pub fn has_own_keys(&self) -> bool {
        self.commands.iter().any(|c| c.keys.is_some())
    }

    /// The names of the commands, in order (the per-command results' order).
    pub fn names(&self) -> Vec<String> {
        self.commands.iter().map(|c| c.name.clone()).collect()
    }

    /// Draws a command by weight (no draw for a single command): the first whose threshold a
    /// raw 64-bit draw falls under, so a draw is one RNG step and a comparison or two, with
    /// no division (a bias of at most 2⁻⁶⁴ per command).
    #[inline]
    fn draw<R: RngCore>(&self, rng: &mut R) -> usize {
        if self.thresholds.len() == 1 {
            return 0;
        }
        let x = rng.next_u64();
        self.thresholds
            .iter()
            .position(|&t| x < t)
            .unwrap_or(self.thresholds.len() - 1)
    }

    /// Writes `units` drawn commands into `out` (placeholders filled from `keys`, one generator
    /// per command or one for all; values sized when `sizes` is given), their indexes and lengths
    /// into `marks` (its first `units` entries), and returns the batch length (`out` may be longer: the connection
    /// writes `out[..len]`). The buffers reach their largest size on the first batch and are
    /// reused after that; without value sizes, commands are copied into place rather than
    /// appended, so no capacity is checked per unit.
    #[allow(clippy::too_many_arguments)]
    pub fn fill_batch<R: RngCore>(
        &self,
        out: &mut Vec<u8>,
        marks: &mut BatchUnits,
        units: usize,
        rng: &mut R,
        sizes: Option<&SizeDist>,
        keys: &mut [KeyGen],
        scratch: &mut Vec<usize>,
    ) -> usize {
        let shared = keys.len() == 1;
        marks.reserve(units);
        // memtier's order: the connection's positions in the cycle.
        let mut turn = self.in_order.then_some(marks.turn);
        if self.in_order {
            marks.turn += units as u64;
        }
        let (kinds, lens) = (&mut marks.kinds[..units], &mut marks.lens[..units]);
        if let Some((shape, roles)) = &self.memtier {
            let keys = if shared {
                Keys::Shared(&mut keys[0])
            } else {
                Keys::Own(keys)
            };
            let gaps = &mut marks.gaps;
            let units = Units {
                kinds,
                lens,
                turn,
                gaps,
            };
            return self.fill_memtier(shape, roles, out, units, rng, sizes, keys);
        }
        let mut pick = |rng: &mut R| match &mut turn {
            Some(t) => {
                *t += 1;
                self.turn(*t - 1)
            }
            None => self.draw(rng),
        };
        if let Some(dist) = sizes {
            out.clear();
            out.reserve(units * self.longest);
            for (kind, len) in kinds.iter_mut().zip(lens.iter_mut()) {
                let k = pick(rng);
                *kind = k as u8;
                let t = &self.commands[k].template;
                let keys = &mut keys[if shared { 0 } else { k }];
                let base = out.len();
                if t.values.is_empty() {
                    out.extend_from_slice(&t.unit);
                    fill_unit(&mut out[base..], &t.placeholders, keys);
                } else {
                    append_sized(out, t, dist, rng, keys, scratch);
                }
                *len = (out.len() - base) as u32;
            }
            return out.len();
        }
        if out.len() < units * self.longest {
            out.resize(units * self.longest, 0);
        }
        let mut pos = 0;
        for (kind, len) in kinds.iter_mut().zip(lens.iter_mut()) {
            let k = pick(rng);
            *kind = k as u8;
            let t = &self.commands[k].template;
            let unit = &mut out[pos..pos + t.unit.len()];
            unit.copy_from_slice(&t.unit);
            if !t.placeholders.is_empty() {
                fill_unit(unit, &t.placeholders, &mut keys[if shared { 0 } else { k }]);
            }
            *len = t.unit.len() as u32;
            pos += t.unit.len();
        }
        pos
    }
}

/// A batch's marks to write, and its first position in the cycle (`None`: drawn).
struct Units<'a> {
    kinds: &'a mut [u8],
    lens: &'a mut [u32],
    turn: Option<u64>,
    gaps: &'a mut Vec<Gap>,
}

/// A batch's key generators: one for every command, or one per command.
enum Keys<'a> {
    Shared(&'a mut KeyGen),
    Own(&'a mut [KeyGen]),
}

impl Mix {
    /// [`Mix::fill_batch`] for `respbench memtier`: each unit written by its role's shape, in
    /// the weights' cycle (each GET's place in its block gives an MGET's key count) or drawn.
    #[allow(clippy::too_many_arguments)]
    fn fill_memtier<R: RngCore>(
        &self,
        shape: &MemtierShape,
        roles: &[Role],
        out: &mut Vec<u8>,
        units: Units<'_>,
        rng: &mut R,
        sizes: Option<&SizeDist>,
        mut keys: Keys<'_>,
    ) -> usize {
        let Units {
            kinds,
            lens,
            mut turn,
            gaps,
        } = units;
        out.clear();
        gaps.clear();
        if self.longest < SHARED_VALUE_MIN {
            out.reserve(kinds.len() * self.longest);
        }
        let pool = self.commands.len() as u16;
        for (kind, len) in kinds.iter_mut().zip(lens.iter_mut()) {
            let (k, nth) = match &mut turn {
                Some(t) => {
                    *t += 1;
                    let (k, nth) = self.position(*t - 1);
                    (k, Some(nth))
                }
                None => (self.draw(rng), None),
            };
            *kind = k as u8;
            let keys = match &mut keys {
                Keys::Shared(g) => &mut **g,
                Keys::Own(all) => &mut all[k],
            };
            let t = &self.commands[k].template;
            let base = out.len();
            let before = gaps.len();
            let shared = Shared {
                gaps: &mut *gaps,
                template: k as u16,
                pool,
            };
            shape.append_unit(out, t, roles[k], nth, sizes, rng, keys, Some(shared));
            let left_out: usize = gaps[before..].iter().map(|g| g.value.len()).sum();
            *len = (out.len() - base + left_out) as u32;
        }
        out.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::PayloadGenerator;
    use crate::workload::template::parse_custom_command;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn command(name: &str, line: &str, weight: u32) -> MixCommand {
        let args: Vec<Vec<u8>> = line.split(' ').map(|a| a.as_bytes().to_vec()).collect();
        let items = parse_custom_command(&args, None, 8, &mut PayloadGenerator::default()).unwrap();
        MixCommand {
            name: name.to_string(),
            template: Template::encode(&items, true),
            weight,
            keys: None,
        }
    }

    #[test]
    fn in_order_the_split_is_the_weights_cycle_exactly() {
        let mix = Mix::new(vec![
            command("SET", "SET key:__rand_int__ __data__", 1),
            command("GET", "GET key:__rand_int__", 10),
        ])
        .unwrap()
        .in_order();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut keys = [KeyGen::new(100, 1, 0, None)];
        let (mut out, mut units_out, mut scratch) = (Vec::new(), BatchUnits::default(), Vec::new());
        let mut seen = Vec::new();
        // Batches of 3 and 4 units: the cycle continues across batches.
        for units in [3, 4, 3, 4, 3, 4, 1] {
            mix.fill_batch(
                &mut out,
                &mut units_out,
                units,
                &mut rng,
                None,
                &mut keys,
                &mut scratch,
            );
            seen.extend_from_slice(&units_out.kinds[..units]);
        }
        assert_eq!(seen.len(), 22);
        let sets: Vec<usize> = (0..22).filter(|&i| seen[i] == 0).collect();
        assert_eq!(sets, [0, 11], "one SET, then ten GETs, twice");
    }

    #[test]
    fn batches_follow_the_weights_and_note_each_units_command() {
        let mix = Mix::new(vec![
            command("SET", "SET key:__rand_int__ __data__", 1),
            command("DEL", "DEL x", 0),
            command("GET", "GET key:__rand_int__", 9),
        ])
        .unwrap();
        assert_eq!(mix.names(), ["SET", "GET"], "weight 0 is dropped");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut keys = [KeyGen::new(100, 1, 0, None)];
        let (mut out, mut units, mut scratch) = (Vec::new(), BatchUnits::default(), Vec::new());
        let mut sets = 0;
        let batches = 2_000;
        for _ in 0..batches {
            let len = mix.fill_batch(
                &mut out,
                &mut units,
                16,
                &mut rng,
                None,
                &mut keys,
                &mut scratch,
            );
            let kinds = &units.kinds;
            assert_eq!(kinds.len(), 16);
            // The bytes are the noted commands, in order, each of its noted length.
            let mut at = 0;
            for (&k, &n) in kinds.iter().zip(&units.lens) {
                let t = &mix.commands[k as usize].template;
                assert_eq!(out[at..at + 8], t.unit[..8]);
                assert_eq!(n as usize, t.unit.len());
                at += t.unit.len();
            }
            assert_eq!(at, len);
            assert!(!out[..len].windows(12).any(|w| w == b"__rand_int__"));
            sets += kinds.iter().filter(|&&k| k == 0).count();
        }
        let share = sets as f64 / (batches * 16) as f64;
        // 32,000 draws: the standard error of a 10% share is 0.17%.
        assert!((share - 0.1).abs() < 0.007, "SET share {share}");
        assert!(Mix::new(vec![command("SET", "SET a b", 0)]).is_none());
        assert!(Mix::new(vec![command("TWO", "SET a b ; GET a", 1)]).is_none());
    }
}
