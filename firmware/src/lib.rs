//! The MetaRoCE transport engine, sans-IO.
//!
//! This is the NIC's control plane and the golden model the RTL is checked
//! against. It knows nothing of sockets, clocks, threads or PCI: a backend
//! feeds it datagrams and time and sends what it returns (see [`Nic`]).
//!
//! What it does:
//! - connections (QPs) carrying many independent ordered streams over many
//!   paths, each path an entropy value (UDP source port) with its own PSN
//!   space, SACK tracking, RTT, ECN fraction, window and in-flight count;
//! - spraying weighted by path state, repathing on ECN or loss, quarantine and
//!   probing after a path timeout;
//! - loss recovery from the 256-bit SACK bitmap with immediate retransmission
//!   on another path, RTO only as the last resort, retry limits;
//! - congestion control behind [`cc::PathController`], a connection window
//!   and the receiver's fair-share rate hint;
//! - Verbs semantics: QP states, WRITE, WRITE_IMM, SEND/RECV with matching,
//!   shared receive queues, READ, 8-byte atomics executed exactly once,
//!   scatter/gather lists, per-stream in-order
//!   completions, memory regions with rkey, bounds
//!   and access checks, direct placement through [`Memory`];
//! - a counter for every dropped packet and its reason.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod cc;
mod config;
mod counters;
mod ctx;
pub mod datapath;
pub mod ids;
pub mod loopback;
mod memory;
mod mr;
mod nic;
mod path;
mod ports;
mod qp;
mod rtt;
mod rx;
mod srq;
mod tx;
mod verbs;

pub use config::{MAX_PATHS, NicConfig, QpConfig};
pub use counters::{Drops, Stats};
pub use memory::{Memory, VecMemory};
pub use mr::{Access, AccessError, MemoryRegion, MrTable, RegisterError};
pub use nic::{Event, LINGER_PERIODS, Nic, RxMeta, Transmit};
/// The sender's per-path state, its table part and the fate of one
/// transmission: public so that the RTL's per-path TX table
/// (`metaroce-sim-tb`) is checked against the engine's own code, and the
/// hardware data path reads the NIC's table into a [`PathView`].
pub use path::{PathEntry, PathView, SlotFate, TableOp, TableOutcome, TxPath};
pub use path::{PathHealth, PathStats};
pub use ports::PortsReady;
pub use qp::fixed_state_bytes;
pub use rtt::RttEstimator;
pub use srq::SrqAttr;
pub use verbs::{
    ATOMIC_LEN, Completion, MAX_SGE, QpState, QpTransition, RecvWr, RemoteEnd, SendOp, SendWr,
    SgList, Sge, VerbsError, WcOpcode, WcStatus,
};
