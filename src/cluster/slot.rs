//! Hash slots: CRC16 (XMODEM) of the key, or of its `{hash tag}`, modulo 16384; and, for each
//! slot, the shortest tag that hashes to it (what `{tag}` placeholders are overwritten with).

/// Slots in a cluster.
pub const SLOTS: usize = 16384;

const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC16: [u16; 256] = crc16_table();

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), as the cluster specification uses.
#[inline]
pub fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ CRC16[usize::from(((crc >> 8) as u8) ^ b)]
    })
}

/// The part of a key that is hashed: the text between the first `{` and the first `}` after it,
/// if that is non-empty; otherwise the whole key.
#[inline]
pub fn hashed_part(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{')
        && let Some(len) = key[open + 1..].iter().position(|&b| b == b'}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

/// The slot of a key.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hashed_part(key)) & (SLOTS as u16 - 1)
}

/// Characters tags are made of: never `{` or `}`, printable, no spaces.
const TAG_CHARS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The width of the `{tag}` placeholder, and so of what replaces it.
pub const TAG_PLACEHOLDER: &[u8; 5] = b"{tag}";

/// For every slot, a 5-byte replacement for `{tag}`: `{` + the shortest tag (1 to 3 characters)
/// hashing to the slot + `}`, padded with `}` (`{a}}}`, `{ab}}`, `{abc}`): the hash tag ends at
/// the first `}`, so the padding changes nothing and the key keeps its length.
pub struct TagTable {
    tags: Vec<[u8; 5]>,
}

impl TagTable {
    pub fn new() -> Self {
        let mut tags = vec![[0u8; 5]; SLOTS];
        let mut found = 0;
        let mut set = |tag: &[u8], found: &mut usize| {
            let slot = usize::from(key_slot(tag));
            if tags[slot][0] == 0 {
                let mut t = [b'}'; 5];
                t[0] = b'{';
                t[1..1 + tag.len()].copy_from_slice(tag);
                tags[slot] = t;
                *found += 1;
            }
        };
        for &a in TAG_CHARS {
            set(&[a], &mut found);
        }
        for &a in TAG_CHARS {
            for &b in TAG_CHARS {
                set(&[a, b], &mut found);
            }
        }
        'outer: for &a in TAG_CHARS {
            for &b in TAG_CHARS {
                for &c in TAG_CHARS {
                    if found == SLOTS {
                        break 'outer;
                    }
                    set(&[a, b, c], &mut found);
                }
            }
        }
        assert_eq!(found, SLOTS, "3-character tags cover every slot");
        Self { tags }
    }

    /// The 5 bytes that replace `{tag}` to land on `slot`.
    #[inline]
    pub fn get(&self, slot: u16) -> &[u8; 5] {
        &self.tags[usize::from(slot)]
    }
}

impl Default for TagTable {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_matches_the_cluster_specification() {
        // The specification's check value: CRC16 of "123456789" is 0x31C3.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        // Slots as `CLUSTER KEYSLOT` reports them on a real server.
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn hash_tags() {
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"{user1000}.followers"), key_slot(b"user1000"));
        // An empty tag hashes the whole key; only the first `{` and the first `}` after it count.
        assert_eq!(hashed_part(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hashed_part(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hashed_part(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hashed_part(b"no-close{tag"), b"no-close{tag");
    }

    #[test]
    fn tag_table_reaches_every_slot_with_the_placeholder_width() {
        let t = TagTable::new();
        for slot in 0..SLOTS as u16 {
            let tag = t.get(slot);
            assert_eq!(tag[0], b'{');
            let key = [b"key:".as_slice(), tag, b":000000000042"].concat();
            assert_eq!(key_slot(&key), slot, "{}", String::from_utf8_lossy(&key));
        }
    }
}
