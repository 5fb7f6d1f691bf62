//! metaroce-cabi: the pieces MetaRoCE's rdma-core compatible libraries share.
//!
//! `libibverbs.so.1` (crate `metaroce-ibverbs`) and `librdmacm.so.1` (crate
//! `metaroce-rdmacm`) are Rust static libraries linked into C shared objects. Both need:
//!
//! * [`ffi`]: the rules at the C boundary (no panic unwinds into C; errors as `errno`);
//! * [`registry`]: handles a program passes in are looked up before they are followed;
//! * [`netif`]: the host addresses in device order — device `metaroceN` is the N-th, and
//!   both libraries must agree on N;
//! * [`link`]: the linker step that gives the exported symbols rdma-core's versions (a
//!   `cdylib` cannot: rustc's own version script wins);
//! * [`verbs_h`]: the plain-value `verbs.h` structures both pass to programs;
//! * [`check`]: for tests, reading the exported symbols back and comparing struct
//!   layouts with the C headers;
//! * `lossy` (feature `relay`, for the program tests only): the lossy relay between a
//!   server and a client process.
//!
//! Nothing here is exported to C: this crate has no `#[no_mangle]` items.

pub mod check;
pub mod ffi;
pub mod link;
#[cfg(feature = "relay")]
pub mod lossy;
pub mod netif;
pub mod registry;
pub mod verbs_h;
