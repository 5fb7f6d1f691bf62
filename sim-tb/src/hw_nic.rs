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

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};

use etherparse::{
    IpEcn, IpHeaders, IpNumber, Ipv4Header, Ipv6Header, NetSlice, SlicedPacket, TransportSlice,
};
use metaroce_firmware::datapath::{
    Datapath, HwTransmit, PlacedPacket, TableDone, TableRequest, TxDescriptor,
};
use metaroce_firmware::{
    Access, Event, Memory, MemoryRegion, Nic, NicConfig, QpConfig, QpTransition, RecvWr,
    RegisterError, RxMeta, SendWr, SlotFate, TableOutcome, Transmit, VecMemory, VerbsError,
};
use metaroce_proto::Opcode;

use crate::core_check::metaroce_hdl_codes::*;
use crate::tx_build::{Addresses, Descriptor, FeedPorts};
use crate::tx_path::{Op, SLOTS, TablePorts};
use crate::{Model, Port, Sim, SimError};
use metaroce_driver::hw::tables::{Tables, VerdictFields, mapped};

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

/// Counters of one simulated NIC: what the RTL did and what the firmware
/// had to do itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HwCounters {
    /// Data packets (WRITE … READ_RESP) the RTL placed (verdict 0).
    pub rtl_placed: u64,
    /// Data packets whose bytes the firmware received (verdict 10 message
    /// opcodes: READ requests, SENDs of streams without a ring).
    pub firmware_data: u64,
    /// ACKs and NACKs the firmware received (verdict 10).
    pub firmware_acks_in: u64,
    /// Datagrams the RTL's firmware receive queue handed up whose bytes,
    /// length or source port differ from the frame that came in, or that
    /// came up without a verdict-10 event for them.
    pub fw_rx_mismatches: u64,
    /// Verdict-10 datagrams longer than the queue's slot (only their first
    /// bytes came up: not processed).
    pub fw_rx_truncated: u64,
    /// Other verdict events (duplicates, refusals, PROBEs, drops).
    pub other_events: u64,
    /// Descriptors the firmware gave the RTL.
    pub descriptors: u64,
    /// Entropy-table rewrites before a descriptor.
    pub entropy_writes: u64,
    /// Configuration words written.
    pub cfg_writes: u64,
    /// Datagrams the firmware built itself (NACK, DISCONNECT).
    pub firmware_frames: u64,
    /// Atomic data packets (FETCH_ADD, COMPARE_SWAP, ATOMIC_RESP) the
    /// firmware built itself: their payload is a value, not host memory.
    pub firmware_atomics: u64,
    /// DMA writes, and bytes written.
    pub dma_writes: u64,
    /// Bytes the DMA port wrote.
    pub dma_bytes: u64,
    /// Payload fetches served.
    pub fetches: u64,
    /// Frames sent on the MAC TX port.
    pub mac_tx_frames: u64,
    /// Frames offered to the MAC RX port.
    pub mac_rx_frames: u64,
    /// Interface errors: a DMA write outside host memory or with a length
    /// that disagrees with its data, a fetch outside host memory, `m_err`,
    /// a table that cannot hold what the engine has (more QPs, regions or
    /// outstanding READs than the RTL's tables), a descriptor for another
    /// peer than the TX builder's, a path for which no TX table slot is
    /// free.
    pub interface_errors: u64,
    /// Operations the firmware issued to the TX table (`Init`, `Send`,
    /// `Window`, `Move`, `Timeout`, `Lose`).
    pub table_ops: u64,
    /// Received ACKs the RTL's ACK receiver applied to the TX table.
    pub rtl_acks_applied: u64,
}

/// What the RTL reported that the firmware handles when its TX table
/// operations are done (it reads the table only between its own operations).
#[derive(Clone, Debug)]
enum Input {
    /// A verdict event on a message packet.
    Placed(PlacedPacket),
    /// A verdict-10 event: its datagram and UDP source port once the
    /// firmware receive queue has handed it up whole, `None` until then.
    /// The firmware takes inputs in event order, so the ones after a
    /// datagram still coming up wait for it (as the host driver's
    /// firmware does): a later copy of the same packet must not overtake it.
    Datagram(Option<(Vec<u8>, u16)>),
    /// The ACK receiver applied an ACK to a slot: packets and bytes
    /// acknowledged, and the transmissions it resolved.
    AckApplied(usize, u32, u32, Vec<SlotFate>),
}

/// The firmware's operation on the TX table's port.
struct OpRun {
    slot: usize,
    req: TableRequest,
    /// The table took it (else it is still offered).
    taken: bool,
    /// Fate events while it ran.
    fates: Vec<SlotFate>,
}

/// The resolved ports the model drives besides the TX feeder's.
struct Ports {
    rx_tdata: Port,
    rx_tkeep: Port,
    rx_tvalid: Port,
    rx_tready: Port,
    rx_tlast: Port,
    tx_tdata: Port,
    tx_tkeep: Port,
    tx_tvalid: Port,
    tx_tready: Port,
    tx_tlast: Port,
    now: Port,
    dma_first: Port,
    dma_addr: Port,
    dma_len: Port,
    dma_tdata: Port,
    dma_tkeep: Port,
    dma_tvalid: Port,
    dma_tready: Port,
    dma_tlast: Port,
    eth_ev_valid: Port,
    eth_ev_reason: Port,
    ev_valid: Port,
    ev_code: Port,
    /// opcode, flags, dst_qpn, stream, path, conn_psn, path_psn,
    /// timestamp, msn, recv_idx, msg_len, offset, imm, len, src_port.
    ev: [Port; 15],
    /// `m_fate_hw`, `m_ackrx_valid`, `m_ackrx_slot`, `m_ackrx_pkts`, `m_ackrx_bytes`.
    ackrx: [Port; 5],
    /// `m_fw_tdata`, `m_fw_tkeep`, `m_fw_tvalid`, `m_fw_tready`,
    /// `m_fw_tlast`, `m_fw_len`, `m_fw_trunc`, `m_fw_src_port`.
    fw: [Port; 8],
    /// `s_fwtx_tdata`, `s_fwtx_tkeep`, `s_fwtx_tvalid`, `s_fwtx_tready`,
    /// `s_fwtx_tlast`, `s_fwtx_dst_ip`, `s_fwtx_src_port`,
    /// `s_fwtx_dst_port`.
    fw_tx: [Port; 8],
    err: Port,
    cnt_sel: Port,
    cnt_val: Port,
    ack_frames: Port,
    fw_tx_frames: Port,
}

const EV_PORTS: [&str; 15] = [
    "opcode",
    "flags",
    "dst_qpn",
    "stream",
    "path",
    "conn_psn",
    "path_psn",
    "timestamp",
    "msn",
    "recv_idx",
    "msg_len",
    "offset",
    "imm",
    "len",
    "src_port",
];

impl Ports {
    fn new(sim: &Sim) -> Result<Self, SimError> {
        let mut ev = Vec::new();
        for name in EV_PORTS {
            ev.push(sim.port(&format!("m_ev_{name}"))?);
        }
        Ok(Self {
            rx_tdata: sim.port("s_axis_tdata")?,
            rx_tkeep: sim.port("s_axis_tkeep")?,
            rx_tvalid: sim.port("s_axis_tvalid")?,
            rx_tready: sim.port("s_axis_tready")?,
            rx_tlast: sim.port("s_axis_tlast")?,
            tx_tdata: sim.port("m_axis_tdata")?,
            tx_tkeep: sim.port("m_axis_tkeep")?,
            tx_tvalid: sim.port("m_axis_tvalid")?,
            tx_tready: sim.port("m_axis_tready")?,
            tx_tlast: sim.port("m_axis_tlast")?,
            now: sim.port("now")?,
            dma_first: sim.port("m_dma_first")?,
            dma_addr: sim.port("m_dma_addr")?,
            dma_len: sim.port("m_dma_len")?,
            dma_tdata: sim.port("m_dma_tdata")?,
            dma_tkeep: sim.port("m_dma_tkeep")?,
            dma_tvalid: sim.port("m_dma_tvalid")?,
            dma_tready: sim.port("m_dma_tready")?,
            dma_tlast: sim.port("m_dma_tlast")?,
            eth_ev_valid: sim.port("m_eth_ev_valid")?,
            eth_ev_reason: sim.port("m_eth_ev_reason")?,
            ev_valid: sim.port("m_ev_valid")?,
            ev_code: sim.port("m_ev_code")?,
            ev: ev.try_into().expect("15 event ports"),
            ackrx: [
                sim.port("m_fate_hw")?,
                sim.port("m_ackrx_valid")?,
                sim.port("m_ackrx_slot")?,
                sim.port("m_ackrx_pkts")?,
                sim.port("m_ackrx_bytes")?,
            ],
            fw: [
                sim.port("m_fw_tdata")?,
                sim.port("m_fw_tkeep")?,
                sim.port("m_fw_tvalid")?,
                sim.port("m_fw_tready")?,
                sim.port("m_fw_tlast")?,
                sim.port("m_fw_len")?,
                sim.port("m_fw_trunc")?,
                sim.port("m_fw_src_port")?,
            ],
            fw_tx: [
                sim.port("s_fwtx_tdata")?,
                sim.port("s_fwtx_tkeep")?,
                sim.port("s_fwtx_tvalid")?,
                sim.port("s_fwtx_tready")?,
                sim.port("s_fwtx_tlast")?,
                sim.port("s_fwtx_dst_ip")?,
                sim.port("s_fwtx_src_port")?,
                sim.port("s_fwtx_dst_port")?,
            ],
            err: sim.port("m_err")?,
            cnt_sel: sim.port("cnt_sel")?,
            cnt_val: sim.port("cnt_val")?,
            ack_frames: sim.port("ack_cnt_frames")?,
            fw_tx_frames: sim.port("fwtx_cnt_frames")?,
        })
    }
}

/// A frame the RTL is deciding on, kept to check what the RTL hands up:
/// its UDP payload and metadata (`None`: not a UDP datagram).
pub(crate) type Held = Option<(Vec<u8>, RxMeta)>;

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
    /// A reset NIC with its address registers written and an empty engine.
    pub fn new(cfg: HwNicConfig) -> Result<Self, SimError> {
        let mut sim = Sim::new(Model::NicCore64)?;
        let p = Ports::new(&sim)?;
        let feed = FeedPorts::new(&sim)?;
        let table = TablePorts::new(&sim)?;
        sim.reset()?;
        let fw = Nic::new(NicConfig {
            local_ip: cfg.ip,
            udp_port: cfg.udp_port,
            mtu: MTU,
            line_rate_mbps: cfg.line_rate_mbps,
            seed: cfg.seed,
            qp: QpConfig {
                recv_window: CONN_WINDOW,
                ..QpConfig::default()
            },
            datapath: Datapath::Hardware,
            ..NicConfig::default()
        });
        let mut nic = Self {
            mem: VecMemory::new(cfg.mem_base, cfg.mem_len),
            cfg,
            sim,
            p,
            feed,
            table,
            fw,
            cfg_queue: VecDeque::new(),
            tables: Tables::new(SLOTS),
            desc: None,
            desc_driven: false,
            offered: false,
            next_poll_ns: 0,
            rx_in: VecDeque::new(),
            rx_off: 0,
            rx_entered: VecDeque::new(),
            held: VecDeque::new(),
            fw_expect: VecDeque::new(),
            fw_bytes: Vec::new(),
            fw_tx: VecDeque::new(),
            fw_tx_off: 0,
            fw_tx_beat: None,
            tx_frame: Vec::new(),
            dma: None,
            fetch: VecDeque::new(),
            fetch_off: 0,
            now: 0,
            events: VecDeque::new(),
            placed_data: 0,
            dma_done: 0,
            counters: HwCounters::default(),
            buf: vec![0; MTU as usize + 256],
            table_ops: VecDeque::new(),
            op_run: None,
            ack_fates: Vec::new(),
            inbox: VecDeque::new(),
        };
        nic.configure();
        Ok(nic)
    }

    /// Points the TX builder at another peer (its one peer: IP address and
    /// UDP port), for a NIC whose peer is known only when it connects.
    pub fn set_peer(&mut self, ip: IpAddr, udp_port: u16) {
        self.cfg.peer_ip = ip;
        self.cfg.peer_udp_port = udp_port;
        self.write_addresses();
    }

    /// The TX builder's address registers.
    fn write_addresses(&mut self) {
        let a = Addresses {
            local_mac: self.cfg.mac,
            peer_mac: self.cfg.peer_mac,
            local_ip: self.cfg.ip,
            peer_ip: self.cfg.peer_ip,
            dst_port: self.cfg.peer_udp_port,
            ttl: 64,
            dscp: 0,
        };
        let q = &mut self.cfg_queue;
        assert!(
            Tables::write_addresses(&a, &mut |addr, data| q.push_back((addr, data))),
            "local and peer address of different families"
        );
    }

    /// Address registers, MTU and the front end's UDP port.
    fn configure(&mut self) {
        let port_we = self.sim.port("eth_cfg_port_we").expect("NicCore port");
        let port = self.sim.port("eth_cfg_port").expect("NicCore port");
        self.sim.set(port_we, 1);
        self.sim.set(port, self.cfg.udp_port.into());
        self.sim.tick();
        self.sim.set(port_we, 0);
        self.sim.set(self.table.res.fate_ready, 1);
        // The firmware takes its receive queue's beats as they come.
        self.sim.set(self.p.fw[3], 1);
        self.sim.set(self.p.dma_tready, 1);
        self.sim.set(self.p.tx_tready, 1);
        self.write_addresses();
        let q = &mut self.cfg_queue;
        Tables::write_globals(self.cfg.ip, MTU, &mut |a, d| q.push_back((a, d)));
    }

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

    /// This NIC's counters.
    pub fn counters(&self) -> HwCounters {
        HwCounters {
            // What the tables could not follow counts too.
            interface_errors: self.counters.interface_errors + self.tables.errors(),
            ..self.counters
        }
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

    /// The RTL's receive counter of verdict `code` (takes two cycles of
    /// its own: call between runs).
    pub fn rtl_counter(&mut self, code: u8) -> u64 {
        self.sim.set(self.p.cnt_sel, code.into());
        self.sim.tick();
        self.sim.eval();
        self.sim.get(self.p.cnt_val)
    }

    /// The RTL front end's counter of frames with drop reason `reason`
    /// (`metaroce_hdl::rx_eth::EthDrop`; takes two cycles of its own: call
    /// between runs).
    pub fn rtl_eth_counter(&mut self, reason: u8) -> u64 {
        let sel = self.sim.port("eth_cnt_sel").expect("NicCore port");
        let val = self.sim.port("eth_cnt_val").expect("NicCore port");
        self.sim.set(sel, reason.into());
        self.sim.tick();
        self.sim.eval();
        self.sim.get(val)
    }

    /// ACK frames the RTL sent.
    pub fn rtl_ack_frames(&mut self) -> u64 {
        self.sim.eval();
        // The framer also sends the firmware's datagrams: not the RTL's ACKs.
        self.sim.get(self.p.ack_frames) - self.sim.get(self.p.fw_tx_frames)
    }

    /// Allocates a protection domain.
    pub fn alloc_pd(&mut self) -> u32 {
        self.fw.alloc_pd()
    }

    /// Registers memory in the engine and in a free entry of the RTL's MR
    /// table (4 entries); an error when both are taken.
    pub fn register_mr(
        &mut self,
        pd: u32,
        addr: u64,
        len: u64,
        access: Access,
    ) -> Result<MemoryRegion, RegisterError> {
        if !self.tables.has_free_mr() {
            self.counters.interface_errors += 1;
            return Err(RegisterError::InvalidRange);
        }
        let mr = self.fw.register_mr(pd, addr, len, access)?;
        let q = &mut self.cfg_queue;
        // A free entry exists (checked above).
        let _ = self.tables.add_mr(&mr, &mut |a, d| q.push_back((a, d)));
        Ok(mr)
    }

    /// Deregisters memory in the engine and frees its entry of the RTL's MR
    /// table; false when the key is unknown.
    pub fn deregister_mr(&mut self, lkey: u32) -> bool {
        let q = &mut self.cfg_queue;
        if !self.tables.remove_mr(lkey, &mut |a, d| q.push_back((a, d))) {
            return false;
        }
        self.fw.deregister_mr(lkey)
    }

    /// Disconnects a QP (spec §9.4): the engine's DISCONNECT goes down the
    /// firmware transmit port and the QP enters ERR.
    pub fn disconnect(&mut self, qpn: u32) -> Result<(), VerbsError> {
        self.fw.disconnect(qpn)?;
        self.next_poll_ns = 0;
        self.after_engine();
        self.sync_tables();
        Ok(())
    }

    /// Creates a QP in the engine (its receive window is the RTL's, 256
    /// packets) and takes an entry of the RTL's QP table (4 entries) for it.
    pub fn create_qp(&mut self, pd: u32, mut cfg: QpConfig) -> Result<u32, VerbsError> {
        // A QP entry, and a TX table slot for each path.
        if !self.tables.has_room_for_qp(cfg.paths) {
            self.counters.interface_errors += 1;
            return Err(VerbsError::QueueFull);
        }
        cfg.recv_window = CONN_WINDOW;
        // The engine keeps its READs in flight to the RTL's READ entries.
        cfg.max_rd_atomic = READS as u32;
        let qpn = self.fw.create_qp(pd, Some(cfg))?;
        // Room checked above.
        let _ = self.tables.add_qp(qpn);
        self.take_table_ops();
        Ok(qpn)
    }

    /// Moves a QP through the engine; the RTL's entry follows (written in
    /// full at RTR).
    pub fn modify_qp(&mut self, qpn: u32, t: QpTransition) -> Result<(), VerbsError> {
        self.fw.modify_qp(qpn, t)?;
        if let QpTransition::Rtr(_) = t {
            let q = &mut self.cfg_queue;
            let sink = &mut |a, d| q.push_back((a, d));
            self.tables
                .write_qp_entry(&mut self.fw, qpn, self.now, sink);
        }
        self.sync_tables();
        // A reset QP starts its paths' table slots again (`Init`).
        self.take_table_ops();
        Ok(())
    }

    /// Posts a send work request.
    pub fn post_send(&mut self, qpn: u32, wr: SendWr) -> Result<(), VerbsError> {
        self.fw.post_send(qpn, wr)?;
        self.next_poll_ns = 0;
        self.sync_tables();
        Ok(())
    }

    /// Posts a receive.
    pub fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> Result<(), VerbsError> {
        self.fw.post_recv(qpn, wr)?;
        self.sync_tables();
        Ok(())
    }

    /// The next completion or QP error. A completion is released only once
    /// the DMA writes of every packet placed before it have finished, as a
    /// NIC orders its completion-queue write behind the data.
    pub fn poll_event(&mut self) -> Option<Event> {
        let &(fence, _) = self.events.front()?;
        if self.dma_done < fence {
            return None;
        }
        self.events.pop_front().map(|(_, e)| e)
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

    /// Brings the RTL's QP states, receive rings and READ entries up to the
    /// engine's (`Tables::sync`).
    fn sync_tables(&mut self) {
        let q = &mut self.cfg_queue;
        self.tables
            .sync(&mut self.fw, self.now, &mut |a, d| q.push_back((a, d)));
    }

    /// Runs one clock cycle at the simulated time ([`HwNic::now_ns`]);
    /// frames the MAC TX port finished (and frames the firmware built
    /// itself) are pushed to `out`.
    pub fn step(&mut self, out: &mut Vec<Vec<u8>>) {
        self.step_at(self.now_ns(), out);
    }

    /// Runs one clock cycle in which the RTL and the engine see the time
    /// `now` (ns; never going back), for a NIC that runs against real time,
    /// such as one that talks to a soft NIC over sockets.
    pub fn step_at(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        self.now = now;
        self.firmware(now);
        self.drive(now);
        self.sim.eval();
        self.observe(now, out);
        self.sim.tick();
    }

    /// The firmware's TX table operations are queued or running: it reads
    /// the table only between them, so it waits.
    fn table_busy(&self) -> bool {
        self.op_run.is_some() || !self.table_ops.is_empty()
    }

    /// The firmware: handles what the RTL reported, fires timers and takes
    /// the engine's next packet, each only while its TX table operations
    /// are done.
    fn firmware(&mut self, now: u64) {
        while !self.table_busy() {
            if matches!(self.inbox.front(), Some(Input::Datagram(None))) {
                break;
            }
            let Some(input) = self.inbox.pop_front() else {
                break;
            };
            self.handle_input(now, input);
        }
        if self.table_busy() {
            return;
        }
        if self.fw.poll_timeout().is_some_and(|t| t <= now) {
            self.fw.handle_timeout(now, &mut self.mem);
            self.next_poll_ns = 0;
            self.after_engine();
            if self.table_busy() {
                return;
            }
        }
        self.firmware_transmit(now);
    }

    /// The firmware's transmit side: takes the engine's next packet when
    /// the descriptor slot is free.
    fn firmware_transmit(&mut self, now: u64) {
        if self.desc.is_some() || now < self.next_poll_ns {
            return;
        }
        match self.fw.poll_hardware(now, &mut self.buf) {
            Some(HwTransmit::Descriptor(d)) => {
                self.queue_descriptor(&d);
                // A READ request: its entry in the RTL's READ table goes in
                // (a configuration word, before the descriptor) first.
                if d.repr.opcode == Opcode::ReadReq {
                    self.sync_tables();
                }
            }
            // The RTL frames it from the firmware transmit port. An atomic
            // request's READ entry goes in first, as a READ request's.
            Some(HwTransmit::Datagram(t)) => {
                let op = Opcode::try_from(self.buf[1]).ok();
                if op.is_some_and(Opcode::is_atomic_request) {
                    self.sync_tables();
                }
                self.fw_tx.push_back((self.buf[..t.len].to_vec(), t));
                if op.is_some_and(Opcode::is_atomic) {
                    self.counters.firmware_atomics += 1;
                } else {
                    self.counters.firmware_frames += 1;
                }
            }
            // Nothing now: ask again in a while (or when something happens).
            None => self.next_poll_ns = now + 200,
        }
        self.after_engine();
    }

    /// After any engine call: its events for the application and its TX
    /// table operations.
    fn after_engine(&mut self) {
        self.collect_events();
        self.take_table_ops();
    }

    /// Queues the engine's TX table operations, each on its path's slot
    /// (a path's `Init` takes a free slot and maps it in the ACK receiver).
    fn take_table_ops(&mut self) {
        while let Some(req) = self.fw.poll_table_op() {
            let q = &mut self.cfg_queue;
            let Ok(slot) = self.tables.slot_for(&req, &mut |a, d| q.push_back((a, d))) else {
                continue;
            };
            self.table_ops.push_back((slot, req));
            self.counters.table_ops += 1;
        }
    }

    /// Hands one report of the RTL to the engine.
    fn handle_input(&mut self, now: u64, input: Input) {
        match input {
            // The memory is touched only to execute an atomic that retires.
            Input::Placed(p) => self.fw.handle_placed(now, &p, &mut self.mem),
            Input::Datagram(None) => unreachable!("the firmware waits for it"),
            Input::Datagram(Some((bytes, src_port))) => {
                // The RTL checked that it comes from its QP's peer: the
                // firmware takes the peer's address from its own QP table.
                let dst_qpn = bytes
                    .get(4..8)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                let src_ip = self
                    .fw
                    .qp_entry(dst_qpn)
                    .and_then(|(_, _, _, remote)| remote)
                    .map_or(self.cfg.peer_ip, |r| r.ip);
                let meta = RxMeta {
                    src_ip,
                    src_port,
                    dst_ip: self.cfg.ip,
                    dst_port: self.cfg.udp_port,
                    ecn_ce: false,
                };
                self.fw.handle_datagram(now, &bytes, meta, &mut self.mem);
            }
            Input::AckApplied(slot, pkts, bytes, fates) => {
                let Some((qpn, path)) = self.tables.slot(slot) else {
                    self.counters.interface_errors += 1;
                    return;
                };
                let view = self.table.read(&mut self.sim, slot, 0).to_view();
                let done = TableDone::AckApplied { pkts, bytes };
                self.fw
                    .handle_table_result(now, qpn, path, &done, &fates, view);
            }
        }
        self.next_poll_ns = 0;
        self.after_engine();
        self.sync_tables();
    }

    fn queue_descriptor(&mut self, d: &TxDescriptor) {
        if d.dst_ip != self.cfg.peer_ip {
            self.counters.interface_errors += 1;
            return;
        }
        if let Some(word) = self.tables.entropy_write(d) {
            self.cfg_queue.push_back(word);
            self.counters.entropy_writes += 1;
        }
        self.desc = Some(Descriptor {
            repr: d.repr,
            len: d.payload_len as u16,
            addr: d.payload_addr,
            ecn: d.ecn_capable,
        });
        self.desc_driven = false;
    }

    fn collect_events(&mut self) {
        while let Some(e) = self.fw.poll_event() {
            self.events.push_back((self.placed_data, e));
        }
    }

    fn drive(&mut self, now: u64) {
        self.sim.set(self.p.now, now);
        // TX table: the next operation is offered until the table takes it.
        if self.op_run.is_none() {
            if let Some((slot, req)) = self.table_ops.pop_front() {
                self.table.drive(&mut self.sim, slot, &Op::from(req.op));
                self.op_run = Some(OpRun {
                    slot,
                    req,
                    taken: false,
                    fates: Vec::new(),
                });
            }
        }
        let offer = self.op_run.as_ref().is_some_and(|r| !r.taken);
        self.sim.set(self.table.op_valid, offer.into());
        // Configuration: one word a cycle; a descriptor only once the
        // words before it (its entropy) are in.
        let cfg = self.cfg_queue.pop_front();
        self.sim.set(self.feed.cfg_we, u64::from(cfg.is_some()));
        if let Some((addr, data)) = cfg {
            self.sim.set(self.feed.cfg_addr, addr.into());
            self.sim.set(self.feed.cfg_data, data);
            self.counters.cfg_writes += 1;
        }
        let offer = cfg.is_none() && self.desc.is_some();
        self.offered = offer;
        if let Some(d) = self.desc.filter(|_| offer && !self.desc_driven) {
            self.feed.drive_desc(&mut self.sim, &d);
            self.desc_driven = true;
        }
        self.sim.set(self.feed.desc_valid, u64::from(offer));
        // MAC RX.
        let mut beat = [0u8; LANES];
        match self.rx_in.front() {
            Some(f) => {
                let n = (f.len() - self.rx_off).min(LANES);
                beat[..n].copy_from_slice(&f[self.rx_off..self.rx_off + n]);
                self.sim.set_bytes(self.p.rx_tdata, &beat);
                self.sim.set(self.p.rx_tkeep, (1u64 << n) - 1);
                self.sim
                    .set(self.p.rx_tlast, u64::from(self.rx_off + n == f.len()));
                self.sim.set(self.p.rx_tvalid, 1);
            }
            None => self.sim.set(self.p.rx_tvalid, 0),
        }
        // Firmware transmit port: the datagram's beats, its addressing held.
        self.fw_tx_beat = None;
        let [tdata, tkeep, tvalid, _, tlast, dst_ip, src_port, dst_port] = self.p.fw_tx;
        match self.fw_tx.front() {
            Some((bytes, t)) => {
                let n = (bytes.len() - self.fw_tx_off).min(LANES);
                beat[..n].copy_from_slice(&bytes[self.fw_tx_off..self.fw_tx_off + n]);
                self.sim.set_bytes(tdata, &beat);
                self.sim.set(tkeep, (1u64 << n) - 1);
                self.sim
                    .set(tlast, u64::from(self.fw_tx_off + n == bytes.len()));
                let mut ip = mapped(t.dst_ip);
                ip.reverse();
                self.sim.set_bytes(dst_ip, &ip);
                self.sim.set(src_port, t.src_port.into());
                self.sim.set(dst_port, t.dst_port.into());
                self.sim.set(tvalid, 1);
                self.fw_tx_beat = Some(n);
            }
            None => self.sim.set(tvalid, 0),
        }
        // Payload fetch: requests always taken, data a beat a cycle.
        self.sim.set(self.feed.rd_ready, 1);
        match self.fetch.front() {
            Some(&(addr, len)) => {
                let n = (len - self.fetch_off).min(LANES);
                let at = addr + self.fetch_off as u64;
                if mem_range(&self.mem, at, n) {
                    beat[..n].copy_from_slice(self.mem.slice(at, n));
                } else {
                    beat[..n].fill(0);
                }
                self.sim.set_bytes(self.feed.pay_tdata, &beat);
                self.sim.set(self.feed.pay_tkeep, (1u64 << n) - 1);
                self.sim
                    .set(self.feed.pay_tlast, u64::from(self.fetch_off + n == len));
                self.sim.set(self.feed.pay_tvalid, 1);
            }
            None => self.sim.set(self.feed.pay_tvalid, 0),
        }
    }

    fn observe(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        let mut beat = [0u8; LANES];
        if self.offered && self.sim.get(self.feed.desc_ready) == 1 {
            self.desc = None;
            self.counters.descriptors += 1;
            self.next_poll_ns = 0;
        }
        // MAC RX.
        if let Some(f) = self.rx_in.front() {
            if self.sim.get(self.p.rx_tready) == 1 {
                let n = (f.len() - self.rx_off).min(LANES);
                self.rx_off += n;
                if self.rx_off == f.len() {
                    let f = self.rx_in.pop_front().expect("frame");
                    self.rx_entered.push_back(f);
                    self.rx_off = 0;
                    self.counters.mac_rx_frames += 1;
                }
            }
        }
        if self.sim.get(self.p.eth_ev_valid) == 1 {
            let f = self.rx_entered.pop_front();
            if self.sim.get(self.p.eth_ev_reason) == 0 {
                self.held.push_back(f.as_deref().and_then(datagram_of));
            }
        }
        // MAC TX.
        if self.sim.get(self.p.tx_tvalid) == 1 {
            self.sim.get_bytes(self.p.tx_tdata, &mut beat);
            let n = self.sim.get(self.p.tx_tkeep).count_ones() as usize;
            self.tx_frame.extend_from_slice(&beat[..n.min(LANES)]);
            if self.sim.get(self.p.tx_tlast) == 1 {
                out.push(std::mem::take(&mut self.tx_frame));
                self.counters.mac_tx_frames += 1;
            }
        }
        // DMA writes into host memory.
        if self.sim.get(self.p.dma_tvalid) == 1 {
            if self.sim.get(self.p.dma_first) == 1 {
                let addr = self.sim.get(self.p.dma_addr);
                let len = self.sim.get(self.p.dma_len) as usize;
                self.dma = Some((addr, len, Vec::with_capacity(len)));
            }
            self.sim.get_bytes(self.p.dma_tdata, &mut beat);
            let n = self.sim.get(self.p.dma_tkeep).count_ones() as usize;
            let last = self.sim.get(self.p.dma_tlast) == 1;
            match self.dma.as_mut() {
                Some((_, _, data)) => data.extend_from_slice(&beat[..n.min(LANES)]),
                None => self.counters.interface_errors += 1,
            }
            if last {
                self.dma_done += 1;
                if let Some((addr, len, data)) = self.dma.take() {
                    if data.len() == len && mem_range(&self.mem, addr, len) {
                        self.mem.write(addr, &data);
                        self.counters.dma_writes += 1;
                        self.counters.dma_bytes += len as u64;
                    } else {
                        self.counters.interface_errors += 1;
                    }
                }
            }
        }
        // Fetch requests and data.
        if self.sim.get(self.feed.rd_valid) == 1 {
            let addr = self.sim.get(self.feed.rd_addr);
            let len = self.sim.get(self.feed.rd_len) as usize;
            if !mem_range(&self.mem, addr, len) {
                self.counters.interface_errors += 1;
            }
            if len > 0 {
                self.fetch.push_back((addr, len));
                self.counters.fetches += 1;
            }
        }
        if let Some(&(_, len)) = self.fetch.front() {
            if self.sim.get(self.feed.pay_tready) == 1 {
                self.fetch_off += (len - self.fetch_off).min(LANES);
                if self.fetch_off == len {
                    self.fetch.pop_front();
                    self.fetch_off = 0;
                }
            }
        }
        // The firmware transmit port took a beat.
        if let Some(n) = self.fw_tx_beat {
            if self.sim.get(self.p.fw_tx[3]) == 1 {
                self.fw_tx_off += n;
                if self
                    .fw_tx
                    .front()
                    .is_some_and(|(b, _)| self.fw_tx_off == b.len())
                {
                    self.fw_tx.pop_front();
                    self.fw_tx_off = 0;
                }
            }
        }
        // The firmware receive queue: a verdict-10 datagram's bytes.
        let [tdata, tkeep, tvalid, _, tlast, len, trunc, src_port] = self.p.fw;
        if self.sim.get(tvalid) == 1 {
            self.sim.get_bytes(tdata, &mut beat);
            let n = self.sim.get(tkeep).count_ones() as usize;
            self.fw_bytes.extend_from_slice(&beat[..n.min(LANES)]);
            if self.sim.get(tlast) == 1 {
                let len = self.sim.get(len) as usize;
                let trunc = self.sim.get(trunc) == 1;
                let src_port = self.sim.get(src_port) as u16;
                self.on_fw_datagram(len, trunc, src_port);
            }
        }
        if self.sim.get(self.p.err) == 1 {
            self.counters.interface_errors += 1;
        }
        if self.sim.get(self.p.ev_valid) == 1 {
            let code = self.sim.get(self.p.ev_code) as u8;
            let held = self.held.pop_front().flatten();
            self.on_event(code, held);
        }
        self.observe_table(now);
    }

    /// The TX table: fate events, ACKs the ACK receiver applied, and the
    /// firmware's operation (taken, then done: its result goes to the
    /// engine with the slot read back). Last in the cycle: reading the slot
    /// evaluates the model again.
    fn observe_table(&mut self, now: u64) {
        if let Some(f) = self.table.res.fate(&mut self.sim, true) {
            if self.sim.get(self.p.ackrx[0]) == 1 {
                self.ack_fates.push(f);
            } else if let Some(r) = self.op_run.as_mut().filter(|r| r.taken) {
                r.fates.push(f);
            } else {
                self.counters.interface_errors += 1;
            }
        }
        if self.sim.get(self.p.ackrx[1]) == 1 {
            let [_, _, slot, pkts, bytes] = self.p.ackrx.map(|p| self.sim.get(p));
            let fates = std::mem::take(&mut self.ack_fates);
            self.inbox.push_back(Input::AckApplied(
                slot as usize,
                pkts as u32,
                bytes as u32,
                fates,
            ));
            self.counters.rtl_acks_applied += 1;
        }
        let Some(run) = self.op_run.as_mut() else {
            return;
        };
        if !run.taken {
            run.taken = self.sim.get(self.table.op_ready) == 1;
            return;
        }
        if self.sim.get(self.table.res.valid) != 1 {
            return;
        }
        let run = self.op_run.take().expect("checked");
        let r = self.table.res.result(&mut self.sim, Vec::new());
        let out = TableOutcome {
            ok: r.ok,
            psn: r.psn,
            pkts: r.pkts,
            bytes: r.bytes,
        };
        let view = self.table.read(&mut self.sim, run.slot, 0).to_view();
        let TableRequest { qpn, path, op } = run.req;
        self.fw
            .handle_table_result(now, qpn, path, &TableDone::Op(op, out), &run.fates, view);
        self.after_engine();
    }

    /// The firmware's receive side: a datagram the RTL handed up whole
    /// (checked against the frame that came in, then queued for the engine).
    fn on_fw_datagram(&mut self, len: usize, trunc: bool, src_port: u16) {
        let bytes = std::mem::take(&mut self.fw_bytes);
        let expected = self.fw_expect.pop_front().flatten();
        let same = expected.as_ref().is_some_and(|(want, meta)| {
            want.len() == len && want.starts_with(&bytes) && meta.src_port == src_port
        });
        if !same || (!trunc && bytes.len() != len) {
            self.counters.fw_rx_mismatches += 1;
        }
        let waiting = self
            .inbox
            .iter()
            .position(|i| matches!(i, Input::Datagram(None)));
        if trunc {
            self.counters.fw_rx_truncated += 1;
            if let Some(at) = waiting {
                self.inbox.remove(at);
            }
            return;
        }
        let input = Input::Datagram(Some((bytes, src_port)));
        match waiting {
            Some(at) => self.inbox[at] = input,
            None => self.inbox.push_back(input),
        }
    }

    /// The firmware's receive side: one verdict event, queued for the engine.
    fn on_event(&mut self, code: u8, held: Held) {
        let f = self.p.ev.map(|p| self.sim.get(p));
        let [
            opcode,
            flags,
            dst_qpn,
            stream,
            path,
            conn_psn,
            path_psn,
            timestamp,
            msn,
            recv_idx,
            msg_len,
            offset,
            imm,
            len,
            src_port,
        ] = f;
        let v = VerdictFields {
            code,
            opcode: opcode as u8,
            flags: flags as u16,
            dst_qpn: dst_qpn as u32,
            stream: stream as u16,
            path: path as u16,
            conn_psn: conn_psn as u32,
            path_psn: path_psn as u32,
            timestamp,
            msn: msn as u32,
            recv_idx: recv_idx as u32,
            msg_len: msg_len as u32,
            offset: offset as u32,
            imm: imm as u32,
            len: len as u16,
            src_port: src_port as u16,
        };
        if code == V_FIRMWARE {
            match Opcode::try_from(v.opcode).ok() {
                Some(Opcode::Ack | Opcode::Nack) => self.counters.firmware_acks_in += 1,
                Some(op) if op.is_message() => self.counters.firmware_data += 1,
                _ => {}
            }
            // Its bytes come up on the firmware receive queue; it keeps
            // its place among the inputs meanwhile.
            self.fw_expect.push_back(held);
            self.inbox.push_back(Input::Datagram(None));
        } else if let Some(p) = v.placed() {
            if code == V_PLACED {
                self.counters.rtl_placed += 1;
                if len > 0 {
                    self.placed_data += 1;
                }
            } else {
                self.counters.other_events += 1;
            }
            self.inbox.push_back(Input::Placed(p));
        } else {
            self.counters.other_events += 1;
        }
    }
}

/// `addr .. addr + len` lies in host memory.
fn mem_range(mem: &VecMemory, addr: u64, len: usize) -> bool {
    addr.checked_sub(mem.base())
        .and_then(|o| o.checked_add(len as u64))
        .is_some_and(|end| end <= mem.len() as u64)
}

/// The UDP payload and metadata of an Ethernet frame, if it is one.
pub(crate) fn datagram_of(frame: &[u8]) -> Held {
    let p = SlicedPacket::from_ethernet(frame).ok()?;
    let (src_ip, dst_ip, ce) = match p.net? {
        NetSlice::Ipv4(v4) => {
            let h = v4.header();
            (
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                h.ecn().value() == 3,
            )
        }
        NetSlice::Ipv6(v6) => {
            let h = v6.header();
            (
                IpAddr::V6(h.source_addr()),
                IpAddr::V6(h.destination_addr()),
                h.ecn().value() == 3,
            )
        }
        _ => return None,
    };
    let TransportSlice::Udp(udp) = p.transport? else {
        return None;
    };
    let meta = RxMeta {
        src_ip,
        src_port: udp.source_port(),
        dst_ip,
        dst_port: udp.destination_port(),
        ecn_ce: ce,
    };
    Some((udp.payload().to_vec(), meta))
}

/// An Ethernet II + IP + UDP frame (TTL 64, the ECN codepoint `ecn`, UDP
/// checksum computed) from `src_mac`/`src` to `dst_mac`/`dst` around
/// `datagram`: IPv4 when both addresses are, else IPv6 (IPv4 mapped).
/// `None` when the datagram is too long for the IP header's length field.
pub(crate) fn udp_frame(
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src: SocketAddr,
    dst: SocketAddr,
    datagram: &[u8],
    ecn: u8,
) -> Option<Vec<u8>> {
    let b = etherparse::PacketBuilder::ethernet2(src_mac, dst_mac);
    // Length, protocol and checksum are filled in when the frame is written.
    let ip = match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let mut h = Ipv4Header::new(0, 64, IpNumber::UDP, s.octets(), d.octets()).ok()?;
            h.ecn = IpEcn::try_new(ecn).ok()?;
            IpHeaders::Ipv4(h, Default::default())
        }
        (s, d) => IpHeaders::Ipv6(
            Ipv6Header {
                traffic_class: ecn & 3,
                hop_limit: 64,
                source: mapped(s),
                destination: mapped(d),
                ..Default::default()
            },
            Default::default(),
        ),
    };
    let b = b.ip(ip).udp(src.port(), dst.port());
    let mut frame = Vec::with_capacity(b.size(datagram.len()));
    b.write(&mut frame, datagram).ok()?;
    Some(frame)
}
