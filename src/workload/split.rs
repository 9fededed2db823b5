//! Cutting a whole into parts as equal as possible: one rule for every place that splits
//! something, so the parts agree wherever they meet. A shard's part of `-n`, `--rps` and the
//! keyspace (`plan::shard`, `workload::keys`), a connection's slice of the key range under the
//! parallel pattern (`workload::distribution`), a worker's connections (`engine::runner`) all
//! come from [`even_part`]: contiguous parts in order, the first `total % count` one longer,
//! together covering the whole exactly once.
//!
//! It lives in `workload` because `workload` imports only `resp`: `plan` and `engine` may both
//! import it without a new edge.

/// One part of `0..total`: `start..start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub start: u64,
    pub len: u64,
}

/// Part `index` of `0..total` cut into `count` contiguous parts whose sizes differ by at most
/// one, the larger first. `index` is below `count`; a `count` of 0 counts as 1.
pub fn even_part(total: u64, index: u64, count: u64) -> Part {
    let count = count.max(1);
    let (base, longer) = (total / count, total % count);
    Part {
        start: index * base + index.min(longer),
        len: base + u64::from(index < longer),
    }
}

/// Which of `count` equal shares a process runs (`--shard I/N`): what the engine needs of a
/// sharded run to walk only its share of the keyspace with counters. Carried in the load spec
/// because the shard is fixed for the life of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub index: u64,
    pub count: u64,
}

impl Share {
    /// Not sharded: the one share is everything.
    pub const WHOLE: Share = Share { index: 0, count: 1 };

    /// This share's part of `0..total`.
    pub fn of(self, total: u64) -> Part {
        even_part(total, self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn parts_are_contiguous_nearly_equal_and_cover_the_whole(
            total in prop_oneof![0u64..1000, any::<u64>()],
            count in 1u64..200,
        ) {
            let mut next = 0u64;
            let mut sum = 0u128;
            let (lo, hi) = (total / count, total / count + u64::from(total % count != 0));
            for index in 0..count {
                let p = even_part(total, index, count);
                prop_assert_eq!(p.start, next, "contiguous");
                prop_assert!(p.len == lo || p.len == hi, "sizes {} not in {}..={}", p.len, lo, hi);
                next = p.start + p.len;
                sum += u128::from(p.len);
            }
            prop_assert_eq!(sum, u128::from(total), "parts sum to the whole");
            prop_assert_eq!(next, total, "the last part ends at the whole's end");
        }
    }

    #[test]
    fn larger_parts_come_first_and_zero_count_is_one() {
        let parts: Vec<(u64, u64)> = (0..3)
            .map(|i| even_part(10, i, 3))
            .map(|p| (p.start, p.len))
            .collect();
        assert_eq!(parts, [(0, 4), (4, 3), (7, 3)]);
        assert_eq!(even_part(7, 0, 0), Part { start: 0, len: 7 });
        assert_eq!(Share::WHOLE.of(12), Part { start: 0, len: 12 });
        assert_eq!(Share { index: 2, count: 3 }.of(10), even_part(10, 2, 3));
    }
}
