//! Short constructors for script ops.

#![allow(dead_code)]

use zksim::{CreateMode, Op};

pub const P: CreateMode = CreateMode::Persistent;
pub const E: CreateMode = CreateMode::Ephemeral;
pub const PS: CreateMode = CreateMode::PersistentSequential;
pub const ES: CreateMode = CreateMode::EphemeralSequential;

pub fn create(path: &str, mode: CreateMode) -> Op {
    Op::Create {
        path: path.into(),
        data: b"d".to_vec(),
        mode,
    }
}
pub fn delete(path: &str, version: i32) -> Op {
    Op::Delete {
        path: path.into(),
        version,
    }
}
pub fn exists(path: &str, watch: bool) -> Op {
    Op::Exists {
        path: path.into(),
        watch,
    }
}
pub fn get(path: &str, watch: bool) -> Op {
    Op::GetData {
        path: path.into(),
        watch,
    }
}
pub fn set(path: &str, data: &[u8], version: i32) -> Op {
    Op::SetData {
        path: path.into(),
        data: data.to_vec(),
        version,
    }
}
pub fn kids(path: &str, watch: bool) -> Op {
    Op::GetChildren {
        path: path.into(),
        watch,
    }
}
pub fn sync(path: &str) -> Op {
    Op::Sync { path: path.into() }
}
pub fn multi(ops: Vec<Op>) -> Op {
    Op::Multi(ops)
}
