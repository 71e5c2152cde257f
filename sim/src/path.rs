//! Path validation (`common/PathUtils.validatePath`), rules S1 and S2.
//!
//! The Java client runs these checks before a request leaves the process
//! (an `IllegalArgumentException`), and the server repeats the ones it
//! relies on in `PrepRequestProcessor`. The simulator folds both into one
//! error, [`ZkError::BadArguments`], the code the server itself uses for an
//! invalid path.
//!
//! Java strings are UTF-16, and `validatePath` rejects every code unit in
//! `U+D800..=U+F8FF`: all surrogates and the private-use area. A character
//! outside the Basic Multilingual Plane is a surrogate pair in Java, so it is
//! rejected here too.

use crate::proto::{CreateMode, Op, ZkError};

/// Validate a znode path exactly as `PathUtils.validatePath(String)` does.
///
/// Valid: `/`, `/a`, `/a/b`, `/a.b`, `/...`. Invalid: empty, relative
/// (`a`), trailing slash (`/a/`), empty component (`/a//b`), a `.` or `..`
/// component, NUL, control characters `U+0001..=U+001F` and
/// `U+007F..=U+009F`, surrogates and private use `U+D800..=U+F8FF`,
/// `U+FFF0..=U+FFFF`, and anything beyond the BMP.
pub fn validate_path(path: &str) -> Result<(), ZkError> {
    check_components(path, false)
}

/// `PathUtils.validatePath(path, isSequential)`: a sequential create's path
/// is checked with a digit appended, so `/q/` is a legal sequential prefix (S2).
pub fn validate_create_path(path: &str, mode: CreateMode) -> Result<(), ZkError> {
    check_components(path, mode.is_sequential())
}

/// `validatePath(path)`, or with `digit` `validatePath(path + "1")`, checked
/// component by component on the string itself: this runs for every request
/// a client sends and every read a server answers, so it must not allocate.
fn check_components(path: &str, digit: bool) -> Result<(), ZkError> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(ZkError::BadArguments); // empty or relative
    };
    if rest.is_empty() && !digit {
        return Ok(()); // the root
    }
    // Printable ASCII (every path our recipes build) holds no disallowed
    // character: only the components' shapes are left to check.
    if let Some(shapes) = printable_shapes(rest.as_bytes(), digit) {
        return shapes;
    }
    let mut components = rest.split('/').peekable();
    while let Some(component) = components.next() {
        // The appended digit extends the last component: `""` becomes `1`,
        // `.` and `..` become the names `.1` and `..1`.
        let extended = digit && components.peek().is_none();
        let bad = match component {
            // A trailing slash or `//` leaves an empty component.
            "" | "." | ".." => !extended,
            name => name.chars().any(|c| c == '\0' || is_disallowed_char(c)),
        };
        if bad {
            return Err(ZkError::BadArguments);
        }
    }
    Ok(())
}

/// [`check_components`] of a path (after its leading `/`) made of
/// printable ASCII only, or `None` when it holds any other byte.
///
/// Both passes are folds without an early exit over adjacent bytes, which
/// the compiler turns into checks of many bytes at a time: this is most of
/// the cost of a request.
fn printable_shapes(rest: &[u8], digit: bool) -> Option<Result<(), ZkError>> {
    let printable = rest
        .iter()
        .fold(true, |ok, &b| ok & (b.wrapping_sub(0x20) < 0x7f - 0x20));
    if !printable {
        return None;
    }
    // A bad component is empty or starts with a dot: it starts the path
    // or follows a `/`, and is followed by `/`, `.` or the end. Paths
    // without a component that starts so are fine as they are.
    let (Some(&first), Some(&last)) = (rest.first(), rest.last()) else {
        return Some(Ok(())); // the root, or the root and the digit: `/1`
    };
    let starts_odd = |b: u8| (b == b'/') | (b == b'.');
    let odd_inside = rest
        .iter()
        .zip(&rest[1..])
        .fold(false, |odd, (&a, &b)| odd | ((a == b'/') & starts_odd(b)));
    if !(starts_odd(first) || odd_inside || last == b'/') {
        return Some(Ok(()));
    }
    let bad = |component: &[u8]| matches!(component, b"" | b"." | b"..");
    let mut components = rest.split(|&b| b == b'/');
    // The appended digit makes the last component a name whatever it was.
    let last_bad = components
        .next_back()
        .is_some_and(|last| bad(last) && !digit);
    if last_bad || components.any(bad) {
        return Some(Err(ZkError::BadArguments));
    }
    Some(Ok(()))
}

/// The checks the Java client makes before sending `op` (paths, and what a
/// multi may contain). A request failing them never reaches a server, so it
/// takes no zxid: a world should answer it locally with this error.
///
/// A multi may hold only Create, Delete, SetData and Check, a `multiRead`
/// only `GetData` and `GetChildren` without a watch (the Java client
/// refuses to mix reads with writes, and neither its `Op.getData` /
/// `Op.getChildren` nor `zookeeper-client`'s `MultiReader` can ask for a
/// watch inside a `multiRead`). A TTL create must ask for a TTL in
/// `1..=TTL_MAX_MS` (`EphemeralType.validateTTL`, checked by both client
/// libraries before sending).
pub fn validate_request(op: &Op) -> Result<(), ZkError> {
    match op {
        Op::Create { path, mode, .. } => {
            if let Some(ttl) = mode.ttl_ms() {
                if !(1..=crate::proto::TTL_MAX_MS).contains(&ttl) {
                    return Err(ZkError::BadArguments);
                }
            }
            validate_create_path(path, *mode)
        }
        Op::Delete { path, .. }
        | Op::Exists { path, .. }
        | Op::GetData { path, .. }
        | Op::SetData { path, .. }
        | Op::GetChildren { path, .. }
        | Op::Sync { path }
        | Op::Check { path, .. }
        | Op::GetAllChildrenNumber { path }
        | Op::AddWatch { path, .. }
        | Op::RemoveWatches { path, .. }
        | Op::CheckWatches { path, .. } => validate_path(path),
        Op::GetEphemerals { prefix } => validate_path(prefix),
        Op::Multi(ops) => ops.iter().try_for_each(|sub| match sub {
            Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Check { .. } => {
                validate_request(sub)
            }
            _ => Err(ZkError::BadArguments),
        }),
        Op::MultiRead(ops) => ops.iter().try_for_each(|sub| match sub {
            Op::GetData { watch: false, .. } | Op::GetChildren { watch: false, .. } => {
                validate_request(sub)
            }
            _ => Err(ZkError::BadArguments),
        }),
    }
}

fn is_disallowed_char(c: char) -> bool {
    let u = c as u32;
    (0x01..=0x1f).contains(&u)
        || (0x7f..=0x9f).contains(&u)
        || (0xd800..=0xf8ff).contains(&u)
        || (0xfff0..=0xffff).contains(&u)
        || u > 0xffff // a surrogate pair in Java
}

/// Split a valid, non-root path into its parent path and last component:
/// `/a/b` → (`/a`, `b`), `/a` → (`/`, `a`). The root splits into (`/`, ``).
pub fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(0) | None => ("/", path.get(1..).unwrap_or("")),
        Some(i) => (&path[..i], &path[i + 1..]),
    }
}

/// The path of child `name` under `parent`.
pub fn join(parent: &str, name: &str) -> String {
    let mut p = String::with_capacity(parent.len() + 1 + name.len());
    p.push_str(parent);
    if parent != "/" {
        p.push('/');
    }
    p.push_str(name);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(p: &str) -> bool {
        validate_path(p).is_ok()
    }

    #[test]
    fn accepts_ordinary_paths() {
        for p in [
            "/",
            "/a",
            "/a/b",
            "/a.b",
            "/.a",
            "/a.",
            "/...",
            "/a/...b",
            "/zoo keeper",
            "/é",
        ] {
            assert!(ok(p), "{p:?} should be valid");
        }
    }

    #[test]
    fn rejects_shape_errors() {
        for p in [
            "", "a", "a/b", "/a/", "//", "/a//b", "/.", "/..", "/a/.", "/a/..", "/./a", "/../a",
        ] {
            assert!(!ok(p), "{p:?} should be invalid");
        }
    }

    #[test]
    fn rejects_disallowed_characters() {
        for p in [
            "/a\0b",
            "/a\u{1}",
            "/\u{1f}",
            "/\u{7f}",
            "/\u{9f}",
            "/\u{e000}",
            "/\u{f8ff}",
            "/\u{fff0}",
            "/\u{ffff}",
            "/\u{1f600}",
        ] {
            assert!(!ok(p), "{p:?} should be invalid");
        }
        for p in ["/\u{a0}", "/\u{d7ff}", "/\u{f900}", "/\u{ffef}"] {
            assert!(ok(p), "{p:?} should be valid");
        }
    }

    #[test]
    fn sequential_prefix_may_end_with_slash() {
        assert!(validate_create_path("/q/", CreateMode::PersistentSequential).is_ok());
        assert!(validate_create_path("/q/", CreateMode::Persistent).is_err());
        assert!(validate_create_path("/q//", CreateMode::EphemeralSequential).is_err());
    }

    /// The former implementation, which indexed a collected `Vec<char>`:
    /// the allocation-free one must agree with it on every path.
    fn reference(path: &str) -> bool {
        let chars: Vec<char> = path.chars().collect();
        let Some(&first) = chars.first() else {
            return false;
        };
        if first != '/' {
            return false;
        }
        if chars.len() == 1 {
            return true;
        }
        if chars[chars.len() - 1] == '/' {
            return false;
        }
        let mut last = '/';
        for i in 1..chars.len() {
            let c = chars[i];
            let next_ends_component = i + 1 == chars.len() || chars[i + 1] == '/';
            let bad = match c {
                '\0' => true,
                '/' => last == '/',
                '.' if last == '.' => chars[i - 2] == '/' && next_ends_component,
                '.' => last == '/' && next_ends_component,
                _ => is_disallowed_char(c),
            };
            if bad {
                return false;
            }
            last = c;
        }
        true
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_reference(path in "[/.a1 ~\\x00\\x1f\\x7f\u{e000}]{0,8}") {
            proptest::prop_assert_eq!(ok(&path), reference(&path), "{:?}", path);
            let seq = validate_create_path(&path, CreateMode::PersistentSequential).is_ok();
            proptest::prop_assert_eq!(seq, reference(&format!("{path}1")), "{:?} + 1", path);
        }
    }

    #[test]
    fn split_and_join_round_trip() {
        assert_eq!(split("/a/b"), ("/a", "b"));
        assert_eq!(split("/a"), ("/", "a"));
        assert_eq!(split("/"), ("/", ""));
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
    }

    #[test]
    fn multi_may_hold_only_writes() {
        let read = Op::Exists {
            path: "/a".into(),
            watch: false,
        };
        assert_eq!(
            validate_request(&Op::Multi(vec![read])),
            Err(ZkError::BadArguments)
        );
        let bad = Op::Delete {
            path: "/a/".into(),
            version: -1,
        };
        assert_eq!(
            validate_request(&Op::Multi(vec![bad])),
            Err(ZkError::BadArguments)
        );
        let good = Op::Delete {
            path: "/a".into(),
            version: -1,
        };
        assert_eq!(validate_request(&Op::Multi(vec![good])), Ok(()));
    }
}
