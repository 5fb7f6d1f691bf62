//! metaroce-fabric: a deterministic discrete-event packet simulator for
//! lossy, reordering multipath Ethernet, running the real MetaRoCE engine
//! next to RoCEv2 and IRN baselines.
//!
//! Modelled on htsim: one event list keyed by integer picoseconds, pooled
//! packets, small components with one job each (output queue + link, loss
//! element, ECMP switch, host), deterministic by seed.

pub mod background;
pub mod baseline;
pub mod error;
pub mod event;
pub mod host;
pub mod link;
pub mod loss;
pub mod metaroce;
pub mod network;
pub mod packet;
pub mod queue;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod time;
pub mod topology;
pub mod transport;

pub use error::FabricError;
pub use packet::{Ecn, HostId, Packet, PacketId, RdmaHeader, RdmaOpcode};
pub use sim::Simulator;
pub use time::SimTime;
pub use transport::{Transport, TransportStats};
