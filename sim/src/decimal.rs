//! Numbers written into node names without the formatting machinery.
//!
//! Every create builds a name (a recipe's guid and prefix, the server's
//! ten-digit sequence suffix), and in random mode `format!` was 5–6% of
//! all instructions: its `fmt::Arguments` walk costs about a thousand
//! instructions a call, to write a few digits. These write the same text
//! with `itoa`.

/// Append `n` in decimal, as `{n}` would.
pub fn push_decimal(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// Append a sequence number as ZooKeeper names it:
/// `String.format("%010d", n)`, zero-padded to ten characters with the
/// sign first (`-000000001`; `-2147483648` already has eleven).
pub fn push_sequence(out: &mut String, n: i32) {
    const WIDTH: usize = 10;
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n.unsigned_abs());
    let mut width = WIDTH;
    if n < 0 {
        out.push('-');
        width -= 1;
    }
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(digits);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sequence(n: i32) -> String {
        let mut s = String::new();
        push_sequence(&mut s, n);
        s
    }

    #[test]
    fn sequence_numbers_look_as_zookeeper_writes_them() {
        assert_eq!(sequence(0), "0000000000");
        assert_eq!(sequence(42), "0000000042");
        assert_eq!(sequence(i32::MAX), "2147483647");
        assert_eq!(sequence(-1), "-000000001");
        assert_eq!(sequence(i32::MIN), "-2147483648");
    }

    proptest! {
        #[test]
        fn sequence_is_format_010(n in any::<i32>()) {
            prop_assert_eq!(sequence(n), format!("{n:010}"));
        }

        #[test]
        fn decimal_is_display(n in any::<i64>(), m in any::<u64>()) {
            let mut s = String::from("x");
            push_decimal(&mut s, n);
            push_decimal(&mut s, m);
            prop_assert_eq!(s, format!("x{n}{m}"));
        }
    }
}
