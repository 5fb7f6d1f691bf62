//! A hardware NIC in simulation: one Verilated `NicCore` (64-bit beats),
//! the host memory its DMA reaches, and its firmware — the engine
//! (`metaroce_firmware::Nic`) on the hardware data path
//! (`metaroce_firmware::datapath`).
//!
//! The firmware does what `docs/hardware.md` §5 gives it, through the
//! RTL's own ports, one clock cycle at a time:
//!
//! - **tables**: it copies the engine's QPs, memory regions, posted
//!   receives (streams 0–3, the oldest 8 of each) and outstanding READs
//!   into the RTL's tables through the configuration port, one 64-bit word
//!   per cycle, in an order that never shows the RTL a half-written entry
//!   (slot words before the control word that counts them; a retired
//!   receive leaves the ring before its slot is reused), plus the address
//!   registers, the entropy table and each QP's ACK rate hint and credit;
//! - **transmit**: every data packet and PROBE the engine wants sent
//!   becomes a descriptor on `s_desc_*` (after the path's entropy-table
//!   entry is rewritten, when it differs); the RTL fetches the payload from
//!   host memory, builds the frame and computes the ICRC;
//! - **receive**: every verdict event on `m_ev_*` goes to the engine
//!   (`Nic::handle_placed`); the RTL has placed the payload already and
//!   sends the ACKs itself. Packets the RTL hands up (verdict 10: ACKs,
//!   NACKs, READ requests, CM) reach the engine whole
//!   (`Nic::handle_datagram`);
//! - **TX table**: each path of each QP holds a slot of the RTL's per-path
//!   TX table (mapped in the ACK receiver when the path's `Init` goes in).
//!   The firmware issues the engine's table operations
//!   (`Nic::poll_table_op`: `Init`, `Send`, `Window`, `Move`, `Timeout`,
//!   RACK's `Lose`) on the `op_*` port, collects their fate events, reads
//!   the slot back and gives the result to the engine
//!   (`Nic::handle_table_result`); the RTL's ACK receiver applies every
//!   received ACK to the table itself, and its result (`m_ackrx_*`, with
//!   the `m_fate_hw` fate events) goes to the engine the same way. The
//!   engine's loss decisions and retransmissions come from those fate
//!   events; of an ACK's bytes it uses only the connection fields.
//!
//! The firmware reads the table only between its own operations: while
//! one is queued or running, what the RTL reports waits in an inbox (as a
//! firmware would read its event queue later), and it handles that, fires
//! timers and takes new packets only once they are done.
//!
//! The bytes of a verdict-10 packet come up through the RTL's firmware
//! receive queue (`m_fw_*`, `metaroce_hdl::FwRx`); this model also keeps a
//! copy of every frame it puts on the MAC RX port and compares the bytes
//! the RTL hands up with it (`HwCounters::fw_rx_mismatches`). The few
//! datagrams the firmware builds itself (NACK, DISCONNECT, and the atomics'
//! data packets) go down the RTL's firmware transmit port (`s_fwtx_*`),
//! whose framer is the ACKs' (`HwCounters::firmware_frames`,
//! `HwCounters::firmware_atomics`).
//!
//! The host side is a [`VecMemory`]: the DMA port's writes land in it, the
//! payload fetch port reads from it, and the application reads and writes
//! it to fill buffers and verify data.
//!
//! Where each part lives: this file the set-up's knobs ([`HwNicConfig`]),
//! the model's state ([`HwNic`]) and its accessors; `setup.rs` the reset
//! and the address registers; `verbs.rs` the verbs the application calls
//! (the RTL's tables following the engine); `firmware.rs` the firmware's
//! decisions; `cycle.rs` one clock cycle; per port group, what is driven
//! and watched: `feed.rs` (configuration words and descriptors),
//! `mac.rs` (MAC RX and TX), `host.rs` (host memory: DMA writes and
//! payload fetches), `fw_queues.rs` (the firmware's receive queue and
//! transmit port), `verdicts.rs` (verdict events) and `table.rs` (the TX
//! table); `ports.rs` the ports by name; `counters.rs` the counters. The
//! frames are built and parsed by [`crate::frame`].

mod counters;
mod cycle;
mod feed;
mod firmware;
mod fw_queues;
mod host;
mod mac;
mod ports;
mod setup;
mod table;
mod verbs;
mod verdicts;

use std::collections::VecDeque;
use std::net::IpAddr;

use metaroce_driver::hw::tables::Tables;
use metaroce_firmware::datapath::TableRequest;
use metaroce_firmware::{Event, Nic, SlotFate, Transmit, VecMemory};

pub use counters::HwCounters;
use firmware::Input;
use mac::Held;
use ports::Ports;
use table::OpRun;

use crate::Sim;
use crate::tx_build::{Descriptor, FeedPorts};
use crate::tx_path::TablePorts;

/// Bytes per beat of the simulated core.
const LANES: usize = 8;
/// Largest payload per packet (the RTL's `GLOBAL_MTU`).
pub const MTU: u32 = 4096;

/// How one simulated NIC is set up.
#[derive(Clone, Debug)]
pub struct HwNicConfig {
    /// Ethernet address.
    pub mac: [u8; 6],
    /// The next hop's (the peer's) Ethernet address.
    pub peer_mac: [u8; 6],
    /// IP address (IPv4; the RTL's TX builder has one family per NIC).
    pub ip: IpAddr,
    /// The peer NIC's IP address (the TX builder has one peer).
    pub peer_ip: IpAddr,
    /// UDP port the NIC receives on.
    pub udp_port: u16,
    /// UDP port the peer receives on (the data frames' destination port).
    pub peer_udp_port: u16,
    /// First address of host memory.
    pub mem_base: u64,
    /// Bytes of host memory.
    pub mem_len: usize,
    /// Clock period in picoseconds (the `now` the RTL and the engine see
    /// advances by this each cycle).
    pub clock_ps: u64,
    /// Line rate the engine shares among its senders (ACK rate hint), Mbit/s.
    pub line_rate_mbps: u32,
    /// Seed of the engine.
    pub seed: u64,
}

/// One simulated hardware NIC (see the module docs).
pub struct HwNic {
    cfg: HwNicConfig,
    sim: Sim,
    p: Ports,
    feed: FeedPorts,
    table: TablePorts,
    fw: Nic,
    mem: VecMemory,
    /// Configuration words to write, one per cycle, in order.
    cfg_queue: VecDeque<(u16, u64)>,
    /// The firmware's copy of the RTL's tables (QP and MR entries, the
    /// entropy table, the TX table's slot map), shared with the host driver.
    tables: Tables,
    /// The descriptor waiting for the port (after its entropy write).
    desc: Option<Descriptor>,
    desc_driven: bool,
    /// The descriptor is offered this cycle.
    offered: bool,
    /// When to ask the engine for work again after it had none, ns.
    next_poll_ns: u64,
    /// Frames waiting for the MAC RX port, and the offset into the first.
    rx_in: VecDeque<Vec<u8>>,
    rx_off: usize,
    /// Frames fully entered, waiting for their front-end event.
    rx_entered: VecDeque<Vec<u8>>,
    /// Datagrams the front end accepted, waiting for their verdict event.
    held: VecDeque<Held>,
    /// The datagrams of verdict-10 events, in order: what the firmware
    /// receive queue must hand up.
    fw_expect: VecDeque<Held>,
    /// The datagram the firmware receive queue is handing up.
    fw_bytes: Vec<u8>,
    /// Datagrams for the firmware transmit port, and the offset into the
    /// first.
    fw_tx: VecDeque<(Vec<u8>, Transmit)>,
    fw_tx_off: usize,
    /// A firmware transmit beat is offered this cycle: its byte count.
    fw_tx_beat: Option<usize>,
    /// The MAC TX frame being received.
    tx_frame: Vec<u8>,
    /// The DMA write in progress: address, length, bytes so far.
    dma: Option<(u64, usize, Vec<u8>)>,
    /// Fetches accepted and not yet served: address, length; offset into the first.
    fetch: VecDeque<(u64, usize)>,
    fetch_off: usize,
    /// The time of the latest cycle, ns.
    now: u64,
    /// Engine events for the application, each with the number of DMA
    /// writes that must have finished before it is released.
    events: VecDeque<(u64, Event)>,
    /// Placed packets with a payload so far (each is one DMA write).
    placed_data: u64,
    /// DMA writes finished (including refused ones).
    dma_done: u64,
    counters: HwCounters,
    buf: Vec<u8>,
    /// TX table operations to issue, in order, with their slot.
    table_ops: VecDeque<(usize, TableRequest)>,
    /// The operation on the table's port.
    op_run: Option<OpRun>,
    /// Fates of the ACK the ACK receiver is applying.
    ack_fates: Vec<SlotFate>,
    /// What the RTL reported, for the firmware to handle in order.
    inbox: VecDeque<Input>,
}

impl HwNic {
    /// The engine (read-only: counters, state).
    pub fn engine(&self) -> &Nic {
        &self.fw
    }

    /// Host memory.
    pub fn mem(&self) -> &VecMemory {
        &self.mem
    }

    /// Host memory, writable (the application fills its buffers).
    pub fn mem_mut(&mut self) -> &mut VecMemory {
        &mut self.mem
    }

    /// Clock cycles run.
    pub fn cycles(&self) -> u64 {
        self.sim.cycles()
    }

    /// The simulated time of the current cycle, ns (clock cycles × the
    /// clock period).
    pub fn now_ns(&self) -> u64 {
        self.sim.cycles() * self.cfg.clock_ps / 1000
    }

    /// Queues an Ethernet frame for the MAC RX port.
    pub fn receive_frame(&mut self, frame: Vec<u8>) {
        self.rx_in.push_back(frame);
    }

    /// Nothing left in the model's own queues (frames, configuration words,
    /// descriptors, fetches, DMA).
    pub fn idle(&self) -> bool {
        self.rx_in.is_empty()
            && self.cfg_queue.is_empty()
            && self.desc.is_none()
            && self.fetch.is_empty()
            && self.dma.is_none()
            && self.tx_frame.is_empty()
            && self.fw_tx.is_empty()
            && self.inbox.is_empty()
            && !self.table_busy()
    }

    /// A frame or a job is on its way through the model: [`HwNic::idle`]
    /// is false, or a received frame is inside the RTL, before its front-end
    /// or verdict event or on the firmware receive queue.
    pub fn busy(&self) -> bool {
        !self.idle()
            || !self.rx_entered.is_empty()
            || !self.held.is_empty()
            || !self.fw_expect.is_empty()
    }
}
