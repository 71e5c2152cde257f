//! Path validation (`common/PathUtils.validatePath`), rule S1/S2.
//!
//! CONTRACT STUB — being written.
