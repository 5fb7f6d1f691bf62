//! Driver for the Verilated RX parser (`metaroce_hdl::RxParser`): feeds
//! frames as AXI-Stream beats with their ICRC pseudo-header, collects
//! metadata and payload, and counts input bubbles.

use metaroce_proto::PseudoHeader;

use crate::axis::{Axis, Fed, FrameFeed};
use crate::{Model, Port, Sim, SimError};

/// One frame for the parser: the UDP payload and the IP/UDP fields its ICRC
/// covers (what the Ethernet/IP/UDP front end would extract).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The UDP payload (MetaRoCE datagram), non-empty.
    pub bytes: Vec<u8>,
    /// Addresses and ports as received.
    pub pseudo: PseudoHeader,
}

/// `m_meta_reason` codes (generated from `metaroce_hdl::DropReason`).
pub mod reason {
    include!(concat!(env!("OUT_DIR"), "/drop_reasons.rs"));
}

/// Metadata the parser reported for one frame (`m_meta_*` ports).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RxMeta {
    /// Drop the frame.
    pub drop: bool,
    /// `metaroce_hdl::DropReason` code (see [`reason`]).
    pub reason: u8,
    /// Frame length in bytes.
    pub len: u16,
    /// MSG opcode: the MSG fields are valid.
    pub is_msg: bool,
    /// Base header: version.
    pub version: u8,
    /// Base header: opcode.
    pub opcode: u8,
    /// Base header: flags.
    pub flags: u16,
    /// Base header: destination QPN.
    pub dst_qpn: u32,
    /// Base header: source QPN.
    pub src_qpn: u32,
    /// Base header: stream id.
    pub stream: u16,
    /// Base header: path index.
    pub path: u16,
    /// Base header: connection PSN.
    pub conn_psn: u32,
    /// Base header: path PSN.
    pub path_psn: u32,
    /// Base header: sender timestamp (ns).
    pub timestamp: u64,
    /// MSG: message sequence number.
    pub msn: u32,
    /// MSG: posted-receive index.
    pub recv_idx: u32,
    /// MSG: message length.
    pub msg_len: u32,
    /// MSG: payload offset in the message.
    pub offset: u32,
    /// MSG: remote virtual address.
    pub remote_va: u64,
    /// MSG: remote key.
    pub rkey: u32,
    /// MSG: immediate data.
    pub imm: u32,
}

/// What one [`RxParserTb::run`] produced.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// Metadata, one per input frame, in order.
    pub metas: Vec<RxMeta>,
    /// Payload frames (bytes with `tkeep` set), in order; frames with
    /// nothing after the stripped headers have none.
    pub payloads: Vec<Vec<u8>>,
    /// AXI-Stream rule violations seen on `m_axis` (holes in `tkeep`, a
    /// partial beat that is not last, an empty beat).
    pub protocol_errors: Vec<String>,
    /// Clock cycles the run took.
    pub cycles: u64,
    /// Input beats accepted.
    pub beats: u64,
    /// Cycles with `s_axis_tvalid` high and `s_axis_tready` low.
    pub bubbles: u64,
}

/// Per-cycle stimulus choice: `(offer a beat, m_axis_tready)`.
pub type Knobs<'a> = &'a mut dyn FnMut() -> (bool, bool);

struct Ports {
    s: Axis,
    m: Axis,
    meta_valid: Port,
    meta: [Port; 21],
    pseudo: [Port; 5],
}

const META_PORTS: [&str; 21] = [
    "m_meta_drop",
    "m_meta_reason",
    "m_meta_len",
    "m_meta_is_msg",
    "m_meta_version",
    "m_meta_opcode",
    "m_meta_flags",
    "m_meta_dst_qpn",
    "m_meta_src_qpn",
    "m_meta_stream",
    "m_meta_path",
    "m_meta_conn_psn",
    "m_meta_path_psn",
    "m_meta_timestamp",
    "m_meta_msn",
    "m_meta_recv_idx",
    "m_meta_msg_len",
    "m_meta_offset",
    "m_meta_remote_va",
    "m_meta_rkey",
    "m_meta_imm",
];

/// The RX parser at one data width, behind a [`Sim`].
pub struct RxParserTb {
    sim: Sim,
    lanes: usize,
    p: Ports,
}

impl RxParserTb {
    /// A reset parser with `width`-bit beats (64 or 512).
    ///
    /// # Panics
    /// For other widths.
    pub fn new(width: usize) -> Result<Self, SimError> {
        let model = match width {
            64 => Model::RxParser64,
            512 => Model::RxParser512,
            w => panic!("no Verilated RX parser of width {w}"),
        };
        let mut sim = Sim::new(model)?;
        let mut meta = [sim.port("m_meta_drop")?; 21];
        for (slot, name) in meta.iter_mut().zip(META_PORTS) {
            *slot = sim.port(name)?;
        }
        let p = Ports {
            s: Axis::new(&sim, "s_axis")?,
            m: Axis::new(&sim, "m_axis")?,
            meta_valid: sim.port("m_meta_valid")?,
            meta,
            pseudo: [
                sim.port("s_pseudo_src_ip")?,
                sim.port("s_pseudo_dst_ip")?,
                sim.port("s_pseudo_src_port")?,
                sim.port("s_pseudo_dst_port")?,
                sim.port("s_pseudo_udp_len")?,
            ],
        };
        assert_eq!(8 * p.s.lanes(), width);
        sim.reset()?;
        Ok(Self {
            sim,
            lanes: width / 8,
            p,
        })
    }

    /// The underlying simulation (for VCD tracing, cycle counts).
    pub fn sim(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// Drives the `s_pseudo_*` ports for `frame` (network-order fields;
    /// `set_bytes` is little-endian, hence the reversal).
    fn drive_pseudo(&mut self, frame: &Frame) {
        let ph = &frame.pseudo;
        let mut ip = ph.src_ip;
        ip.reverse();
        self.sim.set_bytes(self.p.pseudo[0], &ip);
        let mut ip = ph.dst_ip;
        ip.reverse();
        self.sim.set_bytes(self.p.pseudo[1], &ip);
        self.sim.set(self.p.pseudo[2], ph.src_port.into());
        self.sim.set(self.p.pseudo[3], ph.dst_port.into());
        let udp_len = (frame.bytes.len() + 8).min(usize::from(u16::MAX));
        self.sim.set(self.p.pseudo[4], udp_len as u64);
    }

    /// Sends `frames` (each non-empty), one after another, then runs until
    /// every frame's metadata and payload came out. `knobs` is asked once per
    /// cycle whether to offer a beat (`tvalid`) and whether the payload
    /// consumer is ready; always `(true, true)` is back-to-back at line rate.
    /// Bytes outside `tkeep` are driven with junk, so the RTL must ignore them.
    ///
    /// # Panics
    /// On an empty frame, or if the parser stops producing output (the run
    /// gives up 10 000 cycles after the last input beat).
    pub fn run(&mut self, frames: &[Frame], knobs: Knobs<'_>) -> RunOutput {
        assert!(frames.iter().all(|f| !f.bytes.is_empty()), "empty frame");
        let lanes = self.lanes;
        let start = self.sim.cycles();
        let mut out = RunOutput::default();
        let mut feed = FrameFeed::new(lanes, 0xA5);
        let mut cur_payload = Vec::new();
        let mut idle = 0u32;
        while out.metas.len() < frames.len() || self.p.m.valid(&mut self.sim) {
            let (offer, ready) = knobs();
            let next = frames.get(feed.frame()).filter(|_| offer);
            if let Some(f) = next
                && feed.at_frame_start()
            {
                self.drive_pseudo(f);
            }
            feed.drive(&mut self.sim, &self.p.s, next.map(|f| f.bytes.as_slice()));
            self.p.m.set_ready(&mut self.sim, ready);
            self.sim.eval();

            if ready && let Some(b) = self.p.m.watch(&mut self.sim, &mut cur_payload) {
                out.protocol_errors.extend(b.violation(true));
                if b.last {
                    out.payloads.push(std::mem::take(&mut cur_payload));
                }
            }
            if self.sim.get(self.p.meta_valid) == 1 {
                out.metas.push(self.read_meta());
            }
            match feed.settle(&mut self.sim, &self.p.s) {
                Fed::Refused => out.bubbles += 1,
                Fed::Taken { .. } => out.beats += 1,
                Fed::Nothing => {}
            }
            self.sim.tick();
            if feed.frame() == frames.len() {
                idle += 1;
                assert!(idle < 10_000, "RX parser stopped producing output");
            }
        }
        self.p.s.idle(&mut self.sim);
        self.sim.eval();
        out.cycles = self.sim.cycles() - start;
        out
    }

    fn read_meta(&mut self) -> RxMeta {
        let mut v = [0u64; 21];
        for (slot, port) in v.iter_mut().zip(self.p.meta) {
            *slot = self.sim.get(port);
        }
        RxMeta {
            drop: v[0] == 1,
            reason: v[1] as u8,
            len: v[2] as u16,
            is_msg: v[3] == 1,
            version: v[4] as u8,
            opcode: v[5] as u8,
            flags: v[6] as u16,
            dst_qpn: v[7] as u32,
            src_qpn: v[8] as u32,
            stream: v[9] as u16,
            path: v[10] as u16,
            conn_psn: v[11] as u32,
            path_psn: v[12] as u32,
            timestamp: v[13],
            msn: v[14] as u32,
            recv_idx: v[15] as u32,
            msg_len: v[16] as u32,
            offset: v[17] as u32,
            remote_va: v[18],
            rkey: v[19] as u32,
            imm: v[20] as u32,
        }
    }
}
