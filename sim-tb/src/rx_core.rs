//! Driver for the Verilated receive core (`metaroce_hdl::RxCore`): writes
//! its tables, feeds datagrams as AXI-Stream beats (with their IP CE mark),
//! drives `now` with the cycle number, and collects verdicts (with their
//! cycle), DMA writes and ACK datagrams. The same driver runs `NicRx` and
//! the NIC top `NicCore` ([`Input`]); for the top, a [`Side`] drives the
//! transmit ports in the same cycles and the MAC TX port's frames are
//! collected whole.

use crate::axis::{Axis, Fed, FrameFeed};
use crate::frame::peer_frame;
use crate::rx_parser::Frame;
use crate::{Model, Port, Sim, SimError};

/// How datagrams enter the model.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// `RxCore`: the datagram on `s_axis_*`, its pseudo-header on
    /// `s_pseudo_*`, its CE mark on `s_ecn_ce`.
    Datagrams,
    /// `NicRx`: each datagram in an Ethernet/IPv4/UDP frame, or
    /// Ethernet/IPv6/UDP for IPv6 addresses ([`peer_frame`], CE in the IP
    /// ECN field) on `s_axis_*`; the front end
    /// finds the pseudo-header and the mark.
    Ethernet,
    /// `NicCore`: Ethernet frames in as for [`Input::Ethernet`]; the ACKs
    /// leave as Ethernet frames on the MAC TX port (`m_axis_*`), mixed with
    /// the data frames, and are collected as [`CoreOutput::mac_frames`].
    NicCore,
}

/// A second stimulus driven in the same cycles as the receive traffic
/// (the top's transmit ports).
pub trait Side {
    /// Sets this cycle's inputs (before the model settles).
    fn drive(&mut self, sim: &mut Sim);
    /// Reads this cycle's outputs (after it settled, before the clock edge).
    fn observe(&mut self, sim: &mut Sim);
    /// Nothing left to drive.
    fn done(&self) -> bool;
    /// Frame `index`'s last beat was taken this cycle (before the clock edge).
    fn frame_taken(&mut self, _index: usize) {}
    /// Offer no input beat this cycle (the side has work to finish first).
    fn hold_input(&self) -> bool {
        false
    }
}

/// The [`Side`] that drives nothing.
pub struct NoSide;

impl Side for NoSide {
    fn drive(&mut self, _: &mut Sim) {}
    fn observe(&mut self, _: &mut Sim) {}
    fn done(&self) -> bool {
        true
    }
}

/// One DMA write the core issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaWrite {
    /// Destination address.
    pub addr: u64,
    /// Bytes written.
    pub data: Vec<u8>,
}

/// One ACK datagram the core sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckOut {
    /// The UDP payload.
    pub bytes: Vec<u8>,
    /// Destination IP, network order (IPv6, or IPv4 mapped into IPv6).
    pub dst_ip: [u8; 16],
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// `m_ack_ece` (for `NicCore`: the ACK's ECE flag).
    pub ece: bool,
    /// `NicCore`: the Ethernet, IP (v4 or v6) and UDP headers of the ACK's
    /// frame (empty for the ACK port).
    pub headers: Vec<u8>,
}

/// What one [`RxCoreTb::run`] produced.
#[derive(Clone, Debug, Default)]
pub struct CoreOutput {
    /// Verdict code per datagram, in order (`metaroce_hdl::Verdict`).
    pub verdicts: Vec<u8>,
    /// Cycle of each verdict event (the `now` the core saw in that cycle;
    /// the path tracker applies the event at the end of it).
    pub event_cycles: Vec<u64>,
    /// Each verdict event's fields for a receive completion, in order.
    pub events: Vec<RecvFields>,
    /// ACK datagrams, in order.
    pub acks: Vec<AckOut>,
    /// DMA writes, in order.
    pub writes: Vec<DmaWrite>,
    /// DMA port rule violations (length disagreeing with the data, holes
    /// in `tkeep`, a write that never ends).
    pub protocol_errors: Vec<String>,
    /// Clock cycles.
    pub cycles: u64,
    /// Input beats accepted.
    pub beats: u64,
    /// Cycles with an input beat offered and refused.
    pub bubbles: u64,
    /// [`Input::NicCore`]: the MAC TX port's frames, in order (ACK and
    /// data frames; `acks` stays empty).
    pub mac_frames: Vec<Vec<u8>>,
    /// Beats taken from the ACK port (the MAC TX port for `NicCore`).
    pub ack_beats: u64,
}

/// What a verdict event carries for the firmware's receive completion
/// (`m_ev_{opcode,stream,recv_idx,imm,msg_len}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvFields {
    /// Opcode.
    pub opcode: u8,
    /// Stream.
    pub stream: u16,
    /// Posted-receive index.
    pub recv_idx: u32,
    /// Immediate.
    pub imm: u32,
    /// Message length.
    pub msg_len: u32,
}

/// Per-cycle stimulus choice: `(offer a beat, DMA ready, ACK port ready)`
/// (for `NicCore` the third is the MAC TX port's ready).
pub type Knobs<'a> = &'a mut dyn FnMut() -> (bool, bool, bool);

struct Ports {
    s: Axis,
    /// `s_pseudo_*` and `s_ecn_ce`; `None` for [`Input::Ethernet`].
    pseudo: Option<([Port; 5], Port)>,
    now: Port,
    cfg_we: Port,
    cfg_addr: Port,
    cfg_data: Port,
    dma_first: Port,
    dma_addr: Port,
    dma_len: Port,
    dma: Axis,
    ev_valid: Port,
    ev_code: Port,
    /// `m_ev_{opcode,stream,recv_idx,imm,msg_len}`.
    ev_recv: [Port; 5],
    cnt_sel: Port,
    cnt_val: Port,
    ack: Axis,
    /// `m_ack_dst_ip`, `m_ack_src_port`, `m_ack_dst_port`, `m_ack_ece`;
    /// `None` for [`Input::NicCore`] (ACKs leave as frames).
    ack_meta: Option<[Port; 4]>,
}

/// The receive core at one width, behind a [`Sim`].
pub struct RxCoreTb {
    sim: Sim,
    lanes: usize,
    p: Ports,
}

impl RxCoreTb {
    /// A reset core with `width`-bit beats (64 or 512); its tables are empty.
    ///
    /// # Panics
    /// For other widths.
    pub fn new(width: usize) -> Result<Self, SimError> {
        Self::with_input(width, Input::Datagrams)
    }

    /// A reset core fed as `input` says: `RxCore` at 64 or 512 bits, or
    /// `NicRx` or `NicCore` at 64 bits.
    ///
    /// # Panics
    /// For other combinations.
    pub fn with_input(width: usize, input: Input) -> Result<Self, SimError> {
        let model = match (input, width) {
            (Input::Datagrams, 64) => Model::RxCore64,
            (Input::Datagrams, 512) => Model::RxCore512,
            (Input::Ethernet, 64) => Model::NicRx64,
            (Input::NicCore, 64) => Model::NicCore64,
            (i, w) => panic!("no Verilated model for {i:?} at width {w}"),
        };
        let mut sim = Sim::new(model)?;
        let pseudo = match input {
            Input::Datagrams => Some((
                [
                    sim.port("s_pseudo_src_ip")?,
                    sim.port("s_pseudo_dst_ip")?,
                    sim.port("s_pseudo_src_port")?,
                    sim.port("s_pseudo_dst_port")?,
                    sim.port("s_pseudo_udp_len")?,
                ],
                sim.port("s_ecn_ce")?,
            )),
            Input::Ethernet | Input::NicCore => None,
        };
        let ack = if input == Input::NicCore {
            "m_axis"
        } else {
            "m_ack"
        };
        let ack_meta = match input {
            Input::NicCore => None,
            _ => Some([
                sim.port("m_ack_dst_ip")?,
                sim.port("m_ack_src_port")?,
                sim.port("m_ack_dst_port")?,
                sim.port("m_ack_ece")?,
            ]),
        };
        let p = Ports {
            s: Axis::new(&sim, "s_axis")?,
            pseudo,
            now: sim.port("now")?,
            cfg_we: sim.port("cfg_we")?,
            cfg_addr: sim.port("cfg_addr")?,
            cfg_data: sim.port("cfg_data")?,
            dma_first: sim.port("m_dma_first")?,
            dma_addr: sim.port("m_dma_addr")?,
            dma_len: sim.port("m_dma_len")?,
            dma: Axis::new(&sim, "m_dma")?,
            ev_valid: sim.port("m_ev_valid")?,
            ev_code: sim.port("m_ev_code")?,
            ev_recv: [
                sim.port("m_ev_opcode")?,
                sim.port("m_ev_stream")?,
                sim.port("m_ev_recv_idx")?,
                sim.port("m_ev_imm")?,
                sim.port("m_ev_msg_len")?,
            ],
            cnt_sel: sim.port("cnt_sel")?,
            cnt_val: sim.port("cnt_val")?,
            ack: Axis::new(&sim, ack)?,
            ack_meta,
        };
        assert_eq!(8 * p.s.lanes(), width);
        if input == Input::NicCore {
            // The firmware receive queue is drained (it holds the input when full).
            let fw_ready = sim.port("m_fw_tready")?;
            sim.set(fw_ready, 1);
        }
        sim.reset()?;
        Ok(Self {
            sim,
            lanes: width / 8,
            p,
        })
    }

    /// The underlying simulation (VCD tracing, cycle counts).
    pub fn sim(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// Writes one table word (`metaroce_hdl::rx_place::cfg`; for
    /// `NicCore`, addresses with `CFG_TX_BIT` (9) set reach the TX builder), one cycle.
    pub fn write_cfg(&mut self, addr: impl Into<u16>, data: u64) {
        self.sim.set(self.p.cfg_we, 1);
        self.sim.set(self.p.cfg_addr, addr.into().into());
        self.sim.set(self.p.cfg_data, data);
        self.sim.tick();
        self.sim.set(self.p.cfg_we, 0);
        self.sim.eval();
    }

    /// The RTL's counter for verdict `code`.
    pub fn counter(&mut self, code: u8) -> u64 {
        self.sim.set(self.p.cnt_sel, code.into());
        self.sim.tick();
        self.sim.eval();
        self.sim.get(self.p.cnt_val)
    }

    fn drive_pseudo(&mut self, (ports, ce_port): ([Port; 5], Port), frame: &Frame, ce: bool) {
        self.sim.set(ce_port, u64::from(ce));
        let ph = &frame.pseudo;
        let mut ip = ph.src_ip;
        ip.reverse();
        self.sim.set_bytes(ports[0], &ip);
        let mut ip = ph.dst_ip;
        ip.reverse();
        self.sim.set_bytes(ports[1], &ip);
        self.sim.set(ports[2], ph.src_port.into());
        self.sim.set(ports[3], ph.dst_port.into());
        let udp_len = (frame.bytes.len() + 8).min(usize::from(u16::MAX));
        self.sim.set(ports[4], udp_len as u64);
    }

    /// Sends `frames` one after another (`ce[i]`: frame `i` arrived
    /// CE-marked) and runs until every verdict came out and the DMA and ACK
    /// ports have been idle, since the last one, for as long as discarding
    /// two maximal frames takes. `knobs` is asked each cycle whether to offer
    /// a beat and whether the DMA and ACK ports are ready.
    ///
    /// # Panics
    /// On an empty frame, `ce` shorter than `frames`, or if the core stops
    /// producing verdicts.
    pub fn run(&mut self, frames: &[Frame], ce: &[bool], knobs: Knobs<'_>) -> CoreOutput {
        let wire = self.wire(frames, ce);
        self.run_with(frames, &wire, ce, knobs, &mut NoSide)
    }

    /// What goes on the wire for `frames` (`ce[i]`: frame `i` arrived
    /// CE-marked): their Ethernet frames ([`peer_frame`], CE in the IP ECN
    /// field) for [`Input::Ethernet`] and [`Input::NicCore`], nothing for
    /// [`Input::Datagrams`] (the datagrams go in as they are). Built before
    /// [`RxCoreTb::run_with`] so a timed run measures only the simulation.
    pub fn wire(&self, frames: &[Frame], ce: &[bool]) -> Vec<Vec<u8>> {
        match self.p.pseudo {
            Some(_) => Vec::new(),
            None => frames
                .iter()
                .zip(ce)
                .map(|(f, &ce)| peer_frame(f, if ce { 0b11 } else { 0b10 }))
                .collect(),
        }
    }

    /// [`RxCoreTb::run`] with `side` driven in the same cycles; the run
    /// also lasts until `side` is done. `wire` is [`RxCoreTb::wire`] of
    /// `frames` and `ce`.
    ///
    /// # Panics
    /// As [`RxCoreTb::run`], if `wire` has too few frames, or if neither
    /// verdicts nor output frames come for 100,000 cycles.
    pub fn run_with(
        &mut self,
        frames: &[Frame],
        wire: &[Vec<u8>],
        ce: &[bool],
        knobs: Knobs<'_>,
        side: &mut dyn Side,
    ) -> CoreOutput {
        assert!(frames.iter().all(|f| !f.bytes.is_empty()), "empty frame");
        assert!(ce.len() >= frames.len(), "a CE mark per frame");
        let lanes = self.lanes;
        let start = self.sim.cycles();
        let mut out = CoreOutput::default();
        let mut feed = FrameFeed::new(lanes, 0x5A);
        let mut open: Option<(u64, usize, Vec<u8>)> = None;
        let mut ack = Vec::new();
        let (mut idle, mut stuck) = (0u32, 0u32);
        // Long enough for the core to discard two maximal frames' beats
        // after the last verdict without showing anything on the DMA port.
        let drain = (2 * 65536 / lanes + 64) as u32;
        assert!(
            self.p.pseudo.is_some() || wire.len() >= frames.len(),
            "an Ethernet frame per datagram"
        );
        while out.verdicts.len() < frames.len() || idle < drain || !side.done() {
            let (offer, ready, ack_ready) = knobs();
            let frame = feed.frame();
            let next = frames.get(frame).filter(|_| offer && !side.hold_input());
            if let (Some(f), true, Some(ports)) = (next, feed.at_frame_start(), self.p.pseudo) {
                self.drive_pseudo(ports, f, ce[frame]);
            }
            let bytes = next.map(|f| wire.get(frame).unwrap_or(&f.bytes).as_slice());
            feed.drive(&mut self.sim, &self.p.s, bytes);
            self.p.dma.set_ready(&mut self.sim, ready);
            self.p.ack.set_ready(&mut self.sim, ack_ready);
            let now = self.sim.cycles();
            self.sim.set(self.p.now, now);
            side.drive(&mut self.sim);
            self.sim.eval();
            side.observe(&mut self.sim);

            let dma = self.p.dma.valid(&mut self.sim);
            let acking = self.p.ack.valid(&mut self.sim);
            idle = if dma || open.is_some() || acking {
                0
            } else {
                idle + 1
            };
            if dma && ready {
                self.take_dma_beat(&mut open, &mut out);
            }
            if acking && ack_ready {
                out.ack_beats += 1;
                if self.take_ack_beat(&mut ack, &mut out) {
                    stuck = 0;
                }
            }
            if self.sim.get(self.p.ev_valid) == 1 {
                out.verdicts.push(self.sim.get(self.p.ev_code) as u8);
                out.event_cycles.push(now);
                let [opcode, stream, recv_idx, imm, msg_len] =
                    self.p.ev_recv.map(|p| self.sim.get(p));
                out.events.push(RecvFields {
                    opcode: opcode as u8,
                    stream: stream as u16,
                    recv_idx: recv_idx as u32,
                    imm: imm as u32,
                    msg_len: msg_len as u32,
                });
                stuck = 0;
                // Its write, if any, is still to come.
                idle = 0;
            }
            match feed.settle(&mut self.sim, &self.p.s) {
                Fed::Refused => out.bubbles += 1,
                Fed::Taken { frame, last } => {
                    out.beats += 1;
                    if last {
                        side.frame_taken(frame);
                    }
                }
                Fed::Nothing => {}
            }
            self.sim.tick();
            stuck += 1;
            assert!(
                stuck < 100_000,
                "RX core stopped producing verdicts and frames"
            );
        }
        if let Some((addr, len, data)) = open {
            out.protocol_errors.push(format!(
                "DMA write to {addr:#x} of {len} B never ended ({} B seen)",
                data.len()
            ));
        }
        self.p.s.idle(&mut self.sim);
        self.sim.eval();
        out.cycles = self.sim.cycles() - start;
        out
    }

    /// Takes one beat of the ACK (or MAC TX) port; true at a frame's end.
    fn take_ack_beat(&mut self, ack: &mut Vec<u8>, out: &mut CoreOutput) -> bool {
        let Some(b) = self.p.ack.watch(&mut self.sim, ack) else {
            return false;
        };
        out.protocol_errors
            .extend(b.violation(false).map(|e| format!("ACK {e}")));
        if !b.last {
            return false;
        }
        let Some([dst_ip, src_port, dst_port, ece]) = self.p.ack_meta else {
            out.mac_frames.push(std::mem::take(ack));
            return true;
        };
        let mut ip = [0u8; 16];
        self.sim.get_bytes(dst_ip, &mut ip);
        ip.reverse();
        out.acks.push(AckOut {
            bytes: std::mem::take(ack),
            dst_ip: ip,
            src_port: self.sim.get(src_port) as u16,
            dst_port: self.sim.get(dst_port) as u16,
            ece: self.sim.get(ece) == 1,
            headers: Vec::new(),
        });
        true
    }

    fn take_dma_beat(&mut self, open: &mut Option<(u64, usize, Vec<u8>)>, out: &mut CoreOutput) {
        if self.sim.get(self.p.dma_first) == 1 {
            if let Some((addr, ..)) = open.take() {
                out.protocol_errors
                    .push(format!("DMA write to {addr:#x} cut short by a new one"));
            }
            let addr = self.sim.get(self.p.dma_addr);
            let len = self.sim.get(self.p.dma_len) as usize;
            *open = Some((addr, len, Vec::with_capacity(len)));
        }
        let Some((addr, len, data)) = open.as_mut() else {
            out.protocol_errors
                .push("DMA beat outside a write".to_string());
            return;
        };
        let Some(b) = self.p.dma.watch(&mut self.sim, data) else {
            return;
        };
        out.protocol_errors
            .extend(b.violation(false).map(|e| format!("DMA {e}")));
        if b.last {
            if data.len() != *len {
                out.protocol_errors.push(format!(
                    "DMA write to {addr:#x}: length {len}, {} B of data",
                    data.len()
                ));
            }
            let (addr, _, data) = open.take().expect("open write");
            out.writes.push(DmaWrite { addr, data });
        }
    }
}
