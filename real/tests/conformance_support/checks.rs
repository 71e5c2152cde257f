//! `check` inside a multi (S31): a version check that passes, fails on
//! the version, fails on a missing node, and guards a write.

use zkreal::conformance::Script;
use zksim::Op;

use super::ops::*;

pub fn all() -> Vec<Script> {
    vec![s31_multi_check_guards_writes(), s31_multi_check_failures()]
}

fn check(path: &str, version: i32) -> Op {
    Op::Check {
        path: path.into(),
        version,
    }
}

fn s31_multi_check_guards_writes() -> Script {
    Script::new("S31_multi_check_guards_writes", 2)
        .op(0, create("/@/c", P))
        .op(1, get("/@/c", true))
        .op(0, multi(vec![check("/@/c", 0), set("/@/c", b"v1", -1)]))
        .op(0, multi(vec![check("/@/c", -1), create("/@/c/k", P)]))
        .op(1, get("/@/c", false))
        .op(1, kids("/@/c", false))
}

fn s31_multi_check_failures() -> Script {
    Script::new("S31_multi_check_failures", 2)
        .op(0, create("/@/c", P))
        .op(1, exists("/@/c/new", true))
        .op(0, multi(vec![create("/@/c/new", P), check("/@/c", 7)]))
        .op(
            0,
            multi(vec![check("/@/missing", -1), create("/@/c/new", P)]),
        )
        .op(0, multi(vec![check("/@/c", 0)]))
        .op(1, exists("/@/c/new", false))
        .op(0, create("/@/after", P))
}
