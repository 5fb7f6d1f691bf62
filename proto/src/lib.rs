//! The MetaRoCE wire format, version 1 (spec v0.1, see `docs/spec.md`).
//!
//! Every MetaRoCE packet is a UDP payload made of a 32-byte base header
//! ([`BaseHeader`]), an opcode-specific extension ([`MsgHeader`], [`AckHeader`],
//! [`MultiAckHeader`], [`NackHeader`], [`CmHeader`]), an optional payload (or a
//! MULTI_ACK's path entries, [`AckEntry`]) and a 4-byte ICRC trailer.
//!
//! The crate follows the smoltcp split: [`Packet`] is a zero-copy view over a
//! byte buffer that checks lengths and gives typed access to the headers;
//! [`Repr`] is the parsed meaning, produced by [`Repr::parse`] and written back
//! by [`Repr::emit`]. Parsing never panics on short or hostile input.
//! The crate's code is `no_std` and never allocates; the tag of authenticated
//! mode ([`auth`]) comes from `aws-lc-rs`, which links `std`.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod auth;
mod error;
mod header;
mod icrc;
mod multi_ack;
mod opcode;
mod packet;
mod repr;
mod sack;

pub use error::Error;
pub use header::{
    AckEntryHeader, AckHeader, BaseHeader, CmHeader, MsgHeader, MultiAckHeader, NackHeader,
};
pub use icrc::{PseudoHeader, compute_icrc};
pub use multi_ack::{AckEntry, ENTRY_FIXED_LEN, MAX_ENTRIES, ack_entries};
pub use opcode::{Flags, NackReason, Opcode};
pub use packet::Packet;
pub use repr::{AckRepr, CmRepr, Ext, MsgRepr, MultiAckRepr, NackRepr, Repr, parse_datagram};
pub use sack::Sack;

/// Wire version carried in every base header by this implementation.
pub const VERSION: u8 = 1;
/// Default UDP destination port (distinct from RoCEv2's 4791 and UET's 4793).
pub const DEFAULT_UDP_PORT: u16 = 4798;
/// UDP source ports used as path entropy values.
pub const ENTROPY_PORTS: core::ops::RangeInclusive<u16> = 49152..=65535;
/// Number of path PSNs covered by the selective-ack bitmap of an ACK.
pub const SACK_BITS: u32 = 256;
/// Length of the base header in bytes.
pub const BASE_LEN: usize = 32;
/// Length of the ICRC trailer in bytes.
pub const ICRC_LEN: usize = 4;

/// Result type of this crate.
pub type Result<T> = core::result::Result<T, Error>;
