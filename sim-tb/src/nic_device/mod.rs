//! The device top (`metaroce_hdl::NicDevice`, 64 bits: the host interface
//! around `NicCore`) driven as a host drives a PCIe NIC.
//!
//! The bench is the host: a host-memory model serves the device's DMA
//! request interface (reads answered in order after a latency, writes
//! applied beat by beat, every access checked against the mapped pages),
//! and a driver model does everything through BAR0 and the queues:
//!
//! * walks the register-block list from offset 0 and finds every block by
//!   type (their offsets are not assumed), checks the identification block
//!   (map version and hash, data width), and makes out-of-range and
//!   read-only BAR accesses, which must read 0, change nothing and count in
//!   `ID.BAR_BAD`;
//! * writes the receive tables (the core bench's engine setup,
//!   [`crate::core_check`]) and the TX builder's registers through
//!   `CFG_ADDR`/`CFG_DATA_LO`/`CFG_DATA_HI`;
//! * runs per-path TX table operations through the `TXT` block (`Init`,
//!   `Window`, `Send`, `Lose`) and reads the slot back; the `Lose` must
//!   come back as a fate event in the event ring;
//! * posts the same kind of operations as TX queue entries (kind 2) among
//!   the descriptors: each one's result must come back in order as a
//!   result entry (type 4: code, slot, path PSN) followed by a view entry
//!   (type 5) whose slot state is the engine's rule applied, the `Lose`'s
//!   fate event before its result, and the views must equal the slot read
//!   back through the `TXT` read port at the end;
//! * posts the TX bench's engine descriptors ([`crate::tx_check`]) in the
//!   TX queue, with the entropy-table writes they need as table-write
//!   entries in the same queue (so they take effect in order), rings the
//!   doorbell, and checks every data frame on the MAC TX port against its
//!   reference;
//! * posts firmware datagrams in the firmware TX queue (two malformed
//!   entries among them, which must be skipped and counted) and checks
//!   their frames;
//! * feeds the core bench's receive traffic (WRITEs, PROBEs, re-sent and
//!   hostile datagrams), then SENDs of a stream without a receive ring
//!   (handed to the firmware), into the MAC RX port, and consumes the
//!   event ring and the firmware receive ring by their phase bits: every
//!   verdict against the engine's, in order, none lost, none twice; every
//!   handed-up datagram's bytes, length and port; the placed bytes in host
//!   memory against the engine's memory; a placed packet's event only
//!   after its data, carrying the address its data was written at; the
//!   device never writing a ring entry the host has not freed. For a stretch of the run the host stops reading the event
//!   ring: the ring fills and the device must hold its MAC RX port
//!   (`CNT.RX_HOLD`) without losing an event;
//! * checks every interrupt against the moderation rule of its vector
//!   (entry count or hold-off time reached; never late).
//!
//! Where each part lives: `host.rs` the host memory, the rings and the
//! entries the host posts; `tb.rs` the bench's state (`DeviceTb`) and its
//! BAR0 accesses; `cycle.rs` one clock cycle of every port and the DMA
//! writes' checks; `setup.rs` the set-up before the run; `txt.rs` the TX
//! table operations and their checks; `post.rs` and `consume.rs` the host's
//! producer and consumer sides during the run; `drive.rs` the per-cycle
//! loop; `check.rs`, `counters.rs` and `irq.rs` the end-of-run checks; this
//! file the knobs, the report and [`run`].

mod check;
mod consume;
mod counters;
mod cycle;
mod drive;
mod host;
mod irq;
mod post;
mod setup;
mod tb;
mod txt;

use consume::Consumer;
use post::Poster;
use tb::DeviceTb;

use crate::SimError;
use crate::core_check::HostRxCase;
use crate::tx_check::EngineItems;

/// The device's register map and queue constants (generated from
/// `metaroce_hdl::host_if`).
pub use metaroce_driver::hw::codes::regs;

/// The UDP destination port of the firmware datagrams the bench posts.
const FWTX_PORT: u16 = 7777;
/// Verdict code "handed to the firmware".
const V_FIRMWARE: u8 = 10;

/// Per-cycle stall probabilities of the host's side of the ports.
#[derive(Clone, Copy, Debug)]
pub struct Knobs {
    /// The MAC RX source idles between beats.
    pub rx_idle: f64,
    /// The MAC TX sink is not ready.
    pub mac_stall: f64,
    /// A DMA read request is not taken.
    pub dmar_stall: f64,
    /// A read completion beat is not offered.
    pub dmac_stall: f64,
    /// A DMA write beat is not taken.
    pub dmaw_stall: f64,
    /// Cycles from a read request to its first completion beat.
    pub read_latency: u64,
}

impl Knobs {
    /// Every port always ready, reads answered after 20 cycles.
    pub const FAST: Knobs = Knobs {
        rx_idle: 0.0,
        mac_stall: 0.0,
        dmar_stall: 0.0,
        dmac_stall: 0.0,
        dmaw_stall: 0.0,
        read_latency: 20,
    };
    /// Stalls everywhere, reads answered after 100 cycles (a PCIe round
    /// trip at 100 MHz is about that).
    pub const STALLS: Knobs = Knobs {
        rx_idle: 0.2,
        mac_stall: 0.3,
        dmar_stall: 0.2,
        dmac_stall: 0.2,
        dmaw_stall: 0.3,
        read_latency: 100,
    };
}

/// What one [`run`] did and found.
#[derive(Clone, Debug, Default)]
pub struct DeviceRun {
    /// Register blocks found by walking the list.
    pub blocks: usize,
    /// Datagrams into the MAC RX port.
    pub rx_frames: u64,
    /// Verdict events read from the event ring.
    pub verdict_events: u64,
    /// Of which compared with the engine's verdict.
    pub verdicts_checked: u64,
    /// Placed packets with a payload (DMA writes into the MR region).
    pub placements: u64,
    /// Datagrams read from the firmware receive ring.
    pub fw_rx: u64,
    /// Of which cut to 128 bytes.
    pub fw_rx_cut: u64,
    /// Fate events read from the event ring.
    pub fate_events: u64,
    /// TX table operations posted in the TX queue, and their results read.
    pub queued_ops: (u64, u64),
    /// TX queue entries posted (descriptors + table writes).
    pub txq_entries: u64,
    /// Data frames compared with their references.
    pub data_frames: u64,
    /// Firmware datagrams framed and compared.
    pub fw_tx_frames: u64,
    /// ACK frames seen on the MAC TX port.
    pub ack_frames: u64,
    /// Event ring laps (wraps) the host saw.
    pub evq_laps: u64,
    /// Cycles the device held its MAC RX port (`CNT.RX_HOLD`).
    pub rx_hold_cycles: u64,
    /// Most event-ring entries written and not yet freed by the host.
    pub evq_max_fill: u64,
    /// Interrupts per vector.
    pub irqs: [u64; 3],
    /// Entries per vector (event entries, firmware receive entries, TX
    /// queue entries consumed).
    pub irq_entries: [u64; 3],
    /// `ID.BAR_BAD` at the end (the bench made 5 bad accesses).
    pub bar_bad: u64,
    /// Clock cycles.
    pub cycles: u64,
    /// Simulation time (CPU seconds).
    pub sim_secs: f64,
    /// Everything that disagreed.
    pub mismatches: Vec<String>,
}

/// Runs the bench (module docs): `rx_packets` datagrams of the core
/// bench's traffic plus `fw_packets` handed-up SENDs on the MAC RX port,
/// at least `tx_packets` engine descriptors through the TX queue, the
/// host ignoring the event ring for `stall` cycles early in the run.
pub fn run(
    rx_packets: usize,
    fw_packets: usize,
    tx_packets: usize,
    seed: u64,
    knobs: Knobs,
    stall: u64,
) -> Result<DeviceRun, SimError> {
    let case = HostRxCase::new(rx_packets, fw_packets, seed);
    let wire = wire_frames(&case);
    let EngineItems {
        pair,
        addresses,
        items,
        want,
        errors,
        ..
    } = EngineItems::new(seed ^ 0x7C0E, tx_packets, 0.05);
    let mut tb = DeviceTb::new(knobs, seed ^ 0xDE71, &wire)?;
    let started = crate::SimTimer::start();
    let mut run = DeviceRun {
        mismatches: errors,
        ..DeviceRun::default()
    };

    // Set-up: memory, discovery and identification, tables, rings and
    // interrupts, TX table operations through the TXT block.
    let (pbase, plen) = (pair.a.mem.base(), pair.a.mem.len());
    setup::map_memory(&mut tb, pbase, pair.a.mem.slice(pbase, plen), &case);
    run.blocks = tb.discover();
    setup::identify(&mut tb);
    setup::program_tables(&mut tb, &case, &addresses);
    setup::program_rings(&mut tb);
    irq::program(&mut tb);
    let fate_psn = txt::register_ops(&mut tb);

    // The run: MAC RX frames flow from now on; the host posts, consumes
    // and checks.
    let qops = txt::queued_ops();
    let mut post = Poster::new(&items, &qops, seed);
    let mut cons = Consumer::default();
    drive::drive(&mut tb, &mut post, &mut cons, &mut run, stall);
    run.sim_secs = started.secs();
    run.cycles = tb.cycle;
    run.rx_frames = tb.rx_next as u64;
    run.evq_laps = u64::from(tb.evq.idx >> host::EVQ_LOG2);

    // What the host read and what came out, against the engine; then the
    // device's own counters.
    let fw_frames = check::verdicts(&case, &cons.verdicts, &mut run);
    check::fw_receive(&cons.fw_rx, &fw_frames, &mut run);
    check::placed_memory(&tb, &case, &mut run.mismatches);
    txt::check_fates(&cons.fates, fate_psn, &mut run);
    txt::check_results(&cons.results, &qops, &mut run);
    let frames = std::mem::take(&mut tb.tx_frames);
    check::mac_tx(frames, &items, &want, &post.fw_want, &mut run);
    counters::check(&mut tb, &mut run, &cons, &qops, stall);
    run.mismatches.append(&mut tb.errors);
    Ok(run)
}

/// The case's datagrams as IP frames on the MAC RX port, with their ECN
/// bits (CE where marked, ECT(0) otherwise).
fn wire_frames(case: &HostRxCase) -> Vec<Vec<u8>> {
    case.frames
        .iter()
        .zip(&case.ce)
        .map(|(f, &ce)| crate::frame::peer_frame(f, if ce { 0b11 } else { 0b10 }))
        .collect()
}
