//! The cases, each a function of the [`CaseKinds`](crate::CaseKinds) it runs on.
//!
//! * [`verbs`]: WRITE, SEND with immediate, READ and inline WRITE both ways;
//!   completion channels;
//! * [`misuse`]: API misuse returns what ibverbs would: an errno at post time, or an
//!   error completion; regions dropped mid-transfer;
//! * [`linger`]: a QP destroyed (or a device closed) right after its last receive still
//!   answers the sender's retransmission;
//! * [`auth`]: authenticated mode (spec §11.2);
//! * [`relay`]: through the lossy relay: integrity under loss, reordering and
//!   duplication; malformed datagrams; a vanished peer.

pub mod auth;
pub mod linger;
pub mod misuse;
pub mod relay;
pub mod verbs;
