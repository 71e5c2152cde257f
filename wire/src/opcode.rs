//! `ZooDefs.OpCode` of ZooKeeper 3.8 (plus 3.9's `whoAmI`): the `type` of a
//! `RequestHeader` and of a `MultiHeader`.

pub const NOTIFICATION: i32 = 0;
pub const CREATE: i32 = 1;
pub const DELETE: i32 = 2;
pub const EXISTS: i32 = 3;
pub const GET_DATA: i32 = 4;
pub const SET_DATA: i32 = 5;
pub const GET_ACL: i32 = 6;
pub const SET_ACL: i32 = 7;
pub const GET_CHILDREN: i32 = 8;
pub const SYNC: i32 = 9;
pub const PING: i32 = 11;
pub const GET_CHILDREN2: i32 = 12;
pub const CHECK: i32 = 13;
pub const MULTI: i32 = 14;
pub const CREATE2: i32 = 15;
pub const RECONFIG: i32 = 16;
pub const CHECK_WATCHES: i32 = 17;
pub const REMOVE_WATCHES: i32 = 18;
pub const CREATE_CONTAINER: i32 = 19;
pub const DELETE_CONTAINER: i32 = 20;
pub const CREATE_TTL: i32 = 21;
pub const MULTI_READ: i32 = 22;
pub const AUTH: i32 = 100;
pub const SET_WATCHES: i32 = 101;
pub const SASL: i32 = 102;
pub const GET_EPHEMERALS: i32 = 103;
pub const GET_ALL_CHILDREN_NUMBER: i32 = 104;
pub const SET_WATCHES2: i32 = 105;
pub const ADD_WATCH: i32 = 106;
/// Added in ZooKeeper 3.9; a 3.8 server answers it as an unknown op.
pub const WHO_AM_I: i32 = 107;
pub const CREATE_SESSION: i32 = -10;
pub const CLOSE_SESSION: i32 = -11;
/// The type of an `ErrorResult` in a multi's results.
pub const ERROR: i32 = -1;

/// The opcode's name in `ZooDefs.OpCode`, for logs and fixtures.
pub fn name(op: i32) -> Option<&'static str> {
    Some(match op {
        NOTIFICATION => "notification",
        CREATE => "create",
        DELETE => "delete",
        EXISTS => "exists",
        GET_DATA => "getData",
        SET_DATA => "setData",
        GET_ACL => "getACL",
        SET_ACL => "setACL",
        GET_CHILDREN => "getChildren",
        SYNC => "sync",
        PING => "ping",
        GET_CHILDREN2 => "getChildren2",
        CHECK => "check",
        MULTI => "multi",
        CREATE2 => "create2",
        RECONFIG => "reconfig",
        CHECK_WATCHES => "checkWatches",
        REMOVE_WATCHES => "removeWatches",
        CREATE_CONTAINER => "createContainer",
        DELETE_CONTAINER => "deleteContainer",
        CREATE_TTL => "createTTL",
        MULTI_READ => "multiRead",
        AUTH => "auth",
        SET_WATCHES => "setWatches",
        SASL => "sasl",
        GET_EPHEMERALS => "getEphemerals",
        GET_ALL_CHILDREN_NUMBER => "getAllChildrenNumber",
        SET_WATCHES2 => "setWatches2",
        ADD_WATCH => "addWatch",
        WHO_AM_I => "whoAmI",
        CREATE_SESSION => "createSession",
        CLOSE_SESSION => "closeSession",
        ERROR => "error",
        _ => return None,
    })
}
