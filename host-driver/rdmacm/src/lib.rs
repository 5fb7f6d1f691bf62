//! metaroce-rdmacm: a `librdmacm.so.1` for MetaRoCE.
//!
//! This crate exports rdma-core v44's librdmacm ABI (every default-version symbol of
//! Debian's `librdmacm.so.1`, with the same symbol versions `RDMACM_1.0` … `RDMACM_1.3`)
//! and runs the RDMA connection manager without a kernel: address and route resolution,
//! connect/listen/accept/reject/disconnect with private data, event channels with a
//! pollable descriptor, and the QP state changes the kernel's CM makes, over an
//! out-of-band TCP connection on the rdma_cm port the program chose. QPs are made on
//! MetaRoCE's libibverbs devices through libibverbs's exported functions only.
//!
//! It is built as a static library and linked into a shared object by `link-rdmacm`
//! (see `scripts/build-ibverbs` and `docs/verbs.md`), against `libibverbs.so.1`.
//!
//! * `abi`: `#[repr(C)]` mirrors of `rdma_cma.h` and the few `verbs.h` structures used,
//!   checked against the headers by a test.
//! * `wire`: the CM messages on the TCP connection.
//! * `channel`: event channels; `id`: ids and their state machine; `conn`: the TCP
//!   threads; `device`: the libibverbs contexts behind addresses; `verbs`: the calls
//!   into libibverbs.
//! * `api`: the exported functions, each under `catch_unwind`, failing the librdmacm way
//!   (-1 or NULL with `errno`).

mod abi;
mod addr;
mod api;
mod channel;
mod conn;
mod device;
mod id;
mod verbs;
mod wire;
