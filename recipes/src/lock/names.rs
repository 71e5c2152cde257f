//! Node names of sequential znodes: where the sequence suffix is and how to
//! order siblings by it.
//!
//! ZooKeeper appends the parent's child counter to a sequential node's name,
//! formatted like Java's `%010d` (S5): ten characters, zero-padded, for every
//! value from `-999_999_999` to `i32::MAX`; eleven (`-1000000000` …
//! `-2147483648`) below that, once the counter wrapped (S6). `getChildren`
//! answers in no particular order (S30), and names that share a sequence
//! counter may have different prefixes (`read-`, `write-`, a guid), so a
//! recipe must order by the number, never by the whole string (W1).

/// The sequence number ZooKeeper appended to `name`, read without knowing
/// the prefix.
///
/// Positive numbers are the last ten digits. A minus sign belongs to the
/// number when exactly nine digits follow it (`-000000005`), or when ten do
/// and the sign itself follows a `-` separator (`lock--2147483648`).
/// Without a separator the eleven-character negative form is ambiguous;
/// use [`sequence_after`] when the prefix is known.
pub fn sequence_of(name: &str) -> Option<i64> {
    let bytes = name.as_bytes();
    let digits = bytes
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let start = bytes.len() - digits;
    let sign_at = start.checked_sub(1).filter(|&i| bytes[i] == b'-');
    let negative = match (digits, sign_at) {
        (9, Some(_)) => true,
        (10, Some(i)) => i > 0 && bytes[i - 1] == b'-',
        _ => false,
    };
    if negative {
        let value = decimal(&bytes[start..]);
        return Some(-value).filter(|v| *v >= i64::from(i32::MIN));
    }
    if digits < 10 {
        return None;
    }
    let value = decimal(&bytes[bytes.len() - 10..]);
    Some(value).filter(|v| *v <= i64::from(i32::MAX))
}

/// The value of at most ten ASCII digits (checked by the caller): the lock
/// line reads a suffix for every child at every listing, and `str::parse`
/// would check again what is known.
fn decimal(digits: &[u8]) -> i64 {
    digits
        .iter()
        .fold(0, |value, &d| value * 10 + i64::from(d - b'0'))
}

/// The sequence number of `name` if it starts with `prefix` and the rest is
/// exactly a suffix ZooKeeper could have appended (Curator's
/// `fixForSorting`, made strict).
pub fn sequence_after(name: &str, prefix: &str) -> Option<i64> {
    let rest = name.strip_prefix(prefix)?;
    let digits = rest.trim_start_matches('-');
    let well_formed = (rest.len() == 10 || (rest.len() == 11 && rest.starts_with('-')))
        && rest.len() - digits.len() <= 1
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit());
    if !well_formed {
        return None;
    }
    rest.parse::<i32>().ok().map(i64::from)
}

/// A child that carries a sequence number, ready to be ordered.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sequenced {
    /// Compared first: the order the server created the nodes in.
    pub seq: i64,
    /// The child's name (not its path); a tie-breaker only.
    pub name: String,
}

/// The children that have a sequence suffix (see [`sequence_of`]), sorted by
/// it (ties, which ZooKeeper never produces under one parent, by name).
/// Names without a suffix are left out.
pub fn sort_by_sequence<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<Sequenced> {
    let mut sorted: Vec<Sequenced> = names
        .into_iter()
        .filter_map(|name| {
            sequence_of(name).map(|seq| Sequenced {
                seq,
                name: name.clone(),
            })
        })
        .collect();
    sorted.sort();
    sorted
}

/// The last component of a path (`/lock/lock-0000000001` → `lock-0000000001`).
pub fn child_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `parent` + `/` + `name`, without doubling the slash under the root.
pub fn child_path(parent: &str, name: &str) -> String {
    let mut path = String::with_capacity(parent.len() + 1 + name.len());
    path.push_str(parent);
    if !parent.ends_with('/') {
        path.push('/');
    }
    path.push_str(name);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_positive_suffixes_after_any_prefix() {
        assert_eq!(sequence_of("lock-0000000003"), Some(3));
        assert_eq!(sequence_of("0000000042"), Some(42));
        assert_eq!(sequence_of("lock-c1s2a3-0000000010"), Some(10));
        // A prefix ending in a digit: only the last ten digits count.
        assert_eq!(sequence_of("n10000000007"), Some(7));
        assert_eq!(sequence_of("lock-2147483647"), Some(2_147_483_647));
    }

    #[test]
    fn reads_wrapped_negative_suffixes() {
        assert_eq!(sequence_of("lock--000000005"), Some(-5));
        assert_eq!(sequence_of("lock--2147483648"), Some(-2_147_483_648));
        assert_eq!(sequence_of("-000000001"), Some(-1));
    }

    /// `sequence_of` from its doc, with `str` searches and `str::parse`:
    /// the last ten digits, or a sign and nine digits, or a sign after a
    /// `-` separator and ten digits.
    fn parsed_sequence_of(name: &str) -> Option<i64> {
        let head = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let digits = name.len() - head.len();
        let negative =
            (digits == 9 && head.ends_with('-')) || (digits == 10 && head.ends_with("--"));
        if negative {
            let value: i64 = name[head.len() - 1..].parse().ok()?;
            return (value >= i64::from(i32::MIN)).then_some(value);
        }
        let value: i64 = name.get(name.len().checked_sub(10)?..)?.parse().ok()?;
        (digits >= 10 && value <= i64::from(i32::MAX)).then_some(value)
    }

    proptest::proptest! {
        #[test]
        fn reads_what_parsing_reads(name in "[a-z_-]{0,3}-{0,2}[0-9]{0,12}") {
            proptest::prop_assert_eq!(sequence_of(&name), parsed_sequence_of(&name), "{:?}", name);
        }
    }

    #[test]
    fn rejects_names_without_a_suffix() {
        assert_eq!(sequence_of("lock"), None);
        assert_eq!(sequence_of("lock-123"), None);
        assert_eq!(sequence_of(""), None);
        assert_eq!(sequence_of("lock-9999999999"), None); // past i32::MAX
    }

    #[test]
    fn sequence_after_needs_the_exact_prefix() {
        assert_eq!(sequence_after("read-0000000004", "read-"), Some(4));
        assert_eq!(sequence_after("read-0000000004", "write-"), None);
        assert_eq!(
            sequence_after("lock-1000000000", "lock"),
            Some(-1_000_000_000)
        );
        assert_eq!(
            sequence_after("lock-1000000000", "lock-"),
            Some(1_000_000_000)
        );
        assert_eq!(sequence_after("lock-00000001", "lock-"), None);
        assert_eq!(sequence_after("lock-+000000001", "lock-"), None);
    }

    #[test]
    fn sorts_by_number_not_by_string() {
        let names: Vec<String> = [
            "write-0000000002",
            "read-0000000003",
            "read-0000000001",
            "junk",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let order: Vec<String> = sort_by_sequence(&names)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(
            order,
            ["read-0000000001", "write-0000000002", "read-0000000003"]
        );
    }

    #[test]
    fn paths_and_names() {
        assert_eq!(child_name("/lock/lock-0000000001"), "lock-0000000001");
        assert_eq!(child_name("x"), "x");
        assert_eq!(child_path("/lock", "a"), "/lock/a");
        assert_eq!(child_path("/", "a"), "/a");
    }
}
