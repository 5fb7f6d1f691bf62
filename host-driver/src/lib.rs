//! metaroce-driver: the Verbs-style host API and its backends.
//!
//! * [`verbs`]: the API applications use — [`verbs::Context`], protection domains,
//!   memory regions that own their buffers, completion queues and eventfd-backed
//!   completion channels, RC queue pairs, and the MetaRoCE extensions (paths, streams,
//!   per-path statistics).
//! * [`backend`]: the trait every NIC implementation plugs in behind the API. Each runs
//!   the transport engine (`metaroce-firmware`) and owns its datapath.
//! * [`soft`]: the software backend over UDP sockets (batched, GSO/GRO, ECN).
//! * [`device`]: raw access to a hardware NIC (BAR0, DMA memory, interrupts, reset) that
//!   the hardware backends sit on.
//! * [`hw`]: the `device` backend, the host driver of a hardware NIC over a [`device::Device`]:
//!   the engine runs on the host CPU and drives the board's rings and tables.
//! * [`hostmem`]: registered host memory and the engine's view of it.
#![warn(missing_docs)]

pub mod backend;
pub mod device;
pub mod eventfd;
pub mod hostmem;
pub mod hw;
pub mod soft;
pub mod verbs;
