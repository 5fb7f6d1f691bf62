//! metaroce-ibverbs: a `libibverbs.so.1` for MetaRoCE.
//!
//! This crate exports the rdma-core v44 libibverbs ABI (every default-version symbol of
//! Debian's `libibverbs.so.1`, with the same symbol versions) on top of the
//! backend-neutral Verbs API of `metaroce-driver`, so unmodified Verbs programs
//! (`ibv_rc_pingpong`, perftest, NCCL/RCCL's `dlopen` + `dlvsym` loader) run on MetaRoCE.
//!
//! It is built as a static library and linked into a shared object by the
//! `link-ibverbs` tool (see `scripts/build-ibverbs` and `docs/verbs.md`): a `cdylib`
//! cannot carry symbol versions, because rustc's own version script wins.
//!
//! * `abi`: `#[repr(C)]` mirrors of the `verbs.h` structures, checked against the
//!   header by a test.
//! * `device`: one device per host address; the port's GID is that address.
//! * `backend`: the one module that picks and opens a NIC implementation.
//! * `objects`: the objects behind C handles, and the registries that validate them.
//! * `verbs`: the exported functions. Each runs under `catch_unwind`, so no panic
//!   crosses into C, and reports failures the ibverbs way (NULL + errno, or an errno
//!   value).

mod abi;
mod backend;
mod device;
mod ffi;
mod objects;
mod verbs;
