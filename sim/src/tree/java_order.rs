//! The order in which a real server lists children (S30).
//!
//! `DataNode` keeps its children in a `java.util.HashSet<String>` created
//! with capacity 8, and `getChildren` copies that set into a list, so the
//! names come back in hash-table order: by bucket
//! (`(h ^ (h >>> 16)) & (tableLength - 1)` of `String.hashCode`), and within
//! a bucket in insertion order. The table doubles whenever the set grows
//! past three quarters of it and never shrinks. For sequential names this
//! order is far from sorted (`lock-0000000001` before `lock-0000000000`
//! in a table of 8), which is why recipes must sort — and why the simulator
//! reproduces it: a recipe that forgets to sort fails here as on a real
//! server.
//!
//! Exact while no bucket ever holds more than eight names (Java then turns
//! the bucket into a tree, or grows a small table early); the simulator's
//! directories are far smaller. Insertion order is taken from each child's
//! `czxid`, and for children created by one multi (which share a czxid) from
//! their place in the multi (`Node::multi_index`), as the server inserts
//! them in the multi's op order. A server that
//! loaded its tree from a snapshot rebuilt each set in the snapshot's
//! order, so its insertion order can differ; not modelled.

/// `String.hashCode`, over UTF-16 code units as Java sees the string.
pub(crate) fn string_hash(s: &str) -> i32 {
    let step = |h: i32, unit: i32| h.wrapping_mul(31).wrapping_add(unit);
    // An ASCII string's UTF-16 units are its bytes (every name a recipe
    // makes): no decoding needed.
    if s.is_ascii() {
        return s.bytes().fold(0, |h, b| step(h, i32::from(b)));
    }
    s.encode_utf16().fold(0, |h, unit| step(h, i32::from(unit)))
}

/// The bucket of `name` in a table of `table_len` (a power of two).
pub(crate) fn bucket(name: &str, table_len: u32) -> u32 {
    bucket_of_hash(string_hash(name), table_len)
}

/// [`bucket`] of a name whose `hashCode` is `hash`.
pub(crate) fn bucket_of_hash(hash: i32, table_len: u32) -> u32 {
    let h = hash as u32;
    (h ^ (h >> 16)) & table_len.saturating_sub(1)
}

/// The table length after the set has grown to `size` elements, starting
/// from `table_len` (0: no set yet; `new HashSet<>(8)` allocates 8 on the
/// first insert and doubles when `size > 0.75 · length`).
pub(crate) fn grown_table_len(table_len: u32, size: usize) -> u32 {
    let mut len = table_len.max(8);
    while size as u64 > u64::from(len) * 3 / 4 {
        len *= 2;
    }
    len
}

/// `new HashSet<>()`'s capacity: a session's ephemeral set starts with a
/// table of 16.
pub(crate) const SESSION_SET_CAPACITY: u32 = 16;

/// The table length of a session's ephemeral set (`new HashSet<>()`, 16
/// buckets) after it has grown to `size` elements from `table_len`.
pub(crate) fn grown_session_table_len(table_len: u32, size: usize) -> u32 {
    grown_table_len(table_len.max(SESSION_SET_CAPACITY), size)
}

/// Sort a session's ephemerals, given with their insertion keys (`czxid`,
/// place in a multi), into the order `PrepRequestProcessor` lists them in a
/// closeSession txn: `new ArrayList<>(es)` where `es` is
/// `DataTree.getEphemerals(id)`, a `clone()` of the session's set. The
/// original's table is `table_len` long (the largest it ever grew to: a
/// `HashSet` never shrinks, and the server keeps a session's set while the
/// session lives); it is iterated by bucket, then insertion. The clone is
/// re-hashed into a table pre-sized for its element count
/// (`tableSizeFor(size / 0.75 + 1)`), filled in the original's iteration
/// order.
pub(crate) fn close_session_order(
    paths: &mut [((crate::proto::Zxid, u32), String)],
    table_len: u32,
) {
    let size = paths.len();
    if size == 0 {
        return;
    }
    let original = grown_session_table_len(table_len, size);
    let presized = (size as f64 / 0.75 + 1.0) as u32;
    let clone = presized.max(1).next_power_of_two();
    paths.sort_by_cached_key(|(born, path)| (bucket(path, clone), bucket(path, original), *born));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Well-known Java values: "hello".hashCode() == 99162322, and the
        // classic collision "Aa".hashCode() == "BB".hashCode() == 2112.
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("hello"), 99_162_322);
        assert_eq!(string_hash("Aa"), 2112);
        assert_eq!(string_hash("BB"), 2112);
        // Overflow wraps like a Java int.
        assert_eq!(string_hash("zookeeper"), 1_600_681_804);
        assert_eq!(string_hash("lock-0000000000"), -864_326_686);
        // Beyond ASCII, UTF-16 units: U+00E9 is one, U+1F600 a surrogate pair.
        assert_eq!(string_hash("é"), 233);
        assert_eq!(string_hash("a😀"), (97 * 31 + 0xD83D) * 31 + 0xDE00);
    }

    proptest::proptest! {
        /// The ASCII shortcut hashes as Java does: over UTF-16 units.
        #[test]
        fn ascii_names_hash_as_their_utf16_units(name in "[ -~]{0,40}") {
            let java = name
                .encode_utf16()
                .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
            proptest::prop_assert_eq!(string_hash(&name), java);
        }
    }

    #[test]
    fn table_grows_past_three_quarters() {
        assert_eq!(grown_table_len(0, 1), 8);
        assert_eq!(grown_table_len(8, 6), 8);
        assert_eq!(grown_table_len(8, 7), 16);
        assert_eq!(grown_table_len(16, 12), 16);
        assert_eq!(grown_table_len(16, 13), 32);
        assert_eq!(grown_table_len(32, 3), 32, "never shrinks");
    }

    #[test]
    fn close_session_order_matches_java_clone() {
        // Java 17: `new ArrayList<>(set.clone())` of a `new HashSet<>()`
        // filled with /l/e-1, /l/e-4, /l/e-7, ... (every third suffix).
        let java: [(usize, &[u32]); 5] = [
            (2, &[4, 1]),
            (3, &[1, 7, 4]),
            (5, &[1, 7, 10, 4, 13]),
            (9, &[19, 7, 22, 1, 10, 4, 16, 13, 25]),
            (13, &[22, 1, 34, 31, 10, 4, 37, 16, 13, 25, 19, 28, 7]),
        ];
        for (n, expected) in java {
            let mut paths: Vec<((i64, u32), String)> = (0..n as u32)
                .map(|i| ((i64::from(i), 0), format!("/l/e-{:010}", i * 3 + 1)))
                .collect();
            close_session_order(&mut paths, 0);
            let got: Vec<String> = paths.into_iter().map(|(_, p)| p).collect();
            let want: Vec<String> = expected.iter().map(|i| format!("/l/e-{i:010}")).collect();
            assert_eq!(got, want, "{n} ephemerals");
        }
    }

    #[test]
    fn sequential_names_scatter() {
        assert_eq!(bucket("lock-0000000000", 8), 1);
        assert_eq!(bucket("lock-0000000001", 8), 0);
        assert_eq!(bucket("config", 8), 5);
        assert_eq!(bucket("quota", 8), 7);
    }
}
