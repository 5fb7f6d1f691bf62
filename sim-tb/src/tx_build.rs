//! Driver for the Verilated TX frame builder (`metaroce_hdl::TxBuild`):
//! writes its configuration and entropy table, feeds descriptors, serves
//! its fetch requests from a host-memory model, and collects the frames.

use std::collections::VecDeque;
use std::net::Ipv6Addr;

use metaroce_firmware::Memory;
use metaroce_proto::{Ext, Repr};
use tx_codes::*;

use crate::axis::Axis;
use crate::rx_core::Side;
use crate::{Model, Port, Sim, SimError};

// Configuration map of the RTL (generated from `metaroce_hdl::tx_build::cfg`
// so the bench never restates it; the driver's copy).
use metaroce_driver::hw::codes::tx as tx_codes;

pub use metaroce_driver::hw::tables::{Addresses, NIC_CORE_TX_CFG, TABLE_PATHS, entropy_cfg_addr};

/// One firmware descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// The headers to send (base fields; the MSG extension when
    /// `repr.ext` is `Ext::Msg`).
    pub repr: Repr,
    /// Payload bytes.
    pub len: u16,
    /// Host address of the payload.
    pub addr: u64,
    /// ECN-capable (ECT(0)).
    pub ecn: bool,
}

/// A descriptor and the UDP source port its path must have when it goes
/// in: the driver rewrites the entropy table entry first when it differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxItem {
    /// The descriptor.
    pub desc: Descriptor,
    /// Entropy of `desc.repr.path` for this packet.
    pub entropy: u16,
}

/// What one [`TxBuildTb::run`] produced.
#[derive(Clone, Debug, Default)]
pub struct TxOutput {
    /// Frames, in order.
    pub frames: Vec<Vec<u8>>,
    /// Interface rule violations (`tkeep` not packed, a fetch request the
    /// bench did not expect, `m_err`).
    pub protocol_errors: Vec<String>,
    /// Clock cycles of the run.
    pub cycles: u64,
    /// Output beats.
    pub beats: u64,
    /// Cycles inside a frame (after its first beat, before its last) with
    /// no beat offered while the output was ready.
    pub bubbles_in_frame: u64,
    /// Cycles between the first frame's start and the last frame's end
    /// with no frame in progress and no beat offered, output ready.
    pub bubbles_between: u64,
    /// Cycles from the first frame's first beat to the last frame's last.
    pub span: u64,
    /// Entropy table writes made.
    pub entropy_writes: u64,
}

/// Per-cycle stimulus choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knob {
    /// Offer the next descriptor.
    pub offer: bool,
    /// Take a fetch request.
    pub fetch_ready: bool,
    /// Present a fetched payload beat.
    pub pay_valid: bool,
    /// Take an output beat.
    pub out_ready: bool,
}

impl Knob {
    /// Every stream ready, every cycle.
    pub const ALWAYS: Knob = Knob {
        offer: true,
        fetch_ready: true,
        pay_valid: true,
        out_ready: true,
    };
}

/// Asked once per cycle for that cycle's [`Knob`].
pub type Knobs<'a> = &'a mut dyn FnMut() -> Knob;

/// The descriptor, configuration and fetch ports (the same names on
/// `TxBuild` and `NicCore`).
#[derive(Clone)]
pub(crate) struct FeedPorts {
    pub(crate) cfg_we: Port,
    pub(crate) cfg_addr: Port,
    pub(crate) cfg_data: Port,
    pub(crate) desc_valid: Port,
    pub(crate) desc_ready: Port,
    /// opcode, flags, dst_qpn, src_qpn, stream, path, conn_psn, path_psn,
    /// timestamp, msn, recv_idx, msg_len, offset, remote_va, rkey, imm,
    /// len, addr, ecn.
    desc: [Port; 19],
    pub(crate) rd_valid: Port,
    pub(crate) rd_ready: Port,
    pub(crate) rd_addr: Port,
    pub(crate) rd_len: Port,
    /// The fetched payload stream (`s_pay`).
    pub(crate) pay: Axis,
}

impl FeedPorts {
    /// Drives the descriptor ports with `d` (valid is separate).
    pub(crate) fn drive_desc(&self, sim: &mut Sim, d: &Descriptor) {
        let r = &d.repr;
        let m = match r.ext {
            Ext::Msg(m) => m,
            _ => Default::default(),
        };
        let values: [u64; 19] = [
            r.opcode as u64,
            r.flags.bits().into(),
            r.dst_qpn.into(),
            r.src_qpn.into(),
            r.stream.into(),
            r.path.into(),
            r.conn_psn.into(),
            r.path_psn.into(),
            r.timestamp,
            m.msn.into(),
            m.recv_idx.into(),
            m.msg_len.into(),
            m.offset.into(),
            m.remote_va,
            m.rkey.into(),
            m.imm.into(),
            d.len.into(),
            d.addr,
            d.ecn.into(),
        ];
        for (port, v) in self.desc.into_iter().zip(values) {
            sim.set(port, v);
        }
    }

    pub(crate) fn new(sim: &Sim) -> Result<Self, SimError> {
        let mut desc = Vec::new();
        for name in DESC_PORTS {
            desc.push(sim.port(&format!("s_desc_{name}"))?);
        }
        Ok(Self {
            cfg_we: sim.port("cfg_we")?,
            cfg_addr: sim.port("cfg_addr")?,
            cfg_data: sim.port("cfg_data")?,
            desc_valid: sim.port("s_desc_valid")?,
            desc_ready: sim.port("s_desc_ready")?,
            desc: desc.try_into().expect("19 descriptor ports"),
            rd_valid: sim.port("m_rd_valid")?,
            rd_ready: sim.port("m_rd_ready")?,
            rd_addr: sim.port("m_rd_addr")?,
            rd_len: sim.port("m_rd_len")?,
            pay: Axis::new(sim, "s_pay")?,
        })
    }
}

struct Ports {
    m: Axis,
    err: Port,
}

const DESC_PORTS: [&str; 19] = [
    "opcode",
    "flags",
    "dst_qpn",
    "src_qpn",
    "stream",
    "path",
    "conn_psn",
    "path_psn",
    "timestamp",
    "msn",
    "recv_idx",
    "msg_len",
    "offset",
    "remote_va",
    "rkey",
    "imm",
    "len",
    "addr",
    "ecn",
];

/// The TX builder at one width, behind a [`Sim`].
pub struct TxBuildTb {
    sim: Sim,
    p: Ports,
    feed: FeedPorts,
}

impl TxBuildTb {
    /// A reset builder with `width`-bit beats (64 or 512); configure it
    /// with [`TxBuildTb::configure`] before use.
    ///
    /// # Panics
    /// For other widths.
    pub fn new(width: usize) -> Result<Self, SimError> {
        let model = match width {
            64 => Model::TxBuild64,
            512 => Model::TxBuild512,
            w => panic!("no Verilated TX builder of width {w}"),
        };
        let mut sim = Sim::new(model)?;
        let p = Ports {
            m: Axis::new(&sim, "m_axis")?,
            err: sim.port("m_err")?,
        };
        let feed = FeedPorts::new(&sim)?;
        assert_eq!(8 * p.m.lanes(), width);
        sim.reset()?;
        Ok(Self { sim, p, feed })
    }

    /// The underlying simulation (VCD tracing, cycle counts).
    pub fn sim(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// Writes one configuration word, one cycle.
    fn write_cfg(&mut self, addr: u8, data: u64) {
        self.sim.set(self.feed.cfg_we, 1);
        self.sim.set(self.feed.cfg_addr, addr.into());
        self.sim.set(self.feed.cfg_data, data);
        self.sim.tick();
        self.sim.set(self.feed.cfg_we, 0);
        self.sim.eval();
    }

    /// Writes the address registers.
    ///
    /// # Panics
    /// If one address is IPv4 and the other IPv6.
    pub fn configure(&mut self, a: &Addresses) {
        configure(a, &mut |addr, data| self.write_cfg(addr, data));
    }

    /// Feeds `items` in order and runs until every frame came out. Fetch
    /// requests are served from `mem` (each must be the next item's payload
    /// with a payload, else the bench reports it and serves zeros); `knobs`
    /// is asked every cycle.
    ///
    /// # Panics
    /// If the builder stops producing frames.
    pub fn run(&mut self, items: &[TxItem], mem: &mut dyn Memory, knobs: Knobs<'_>) -> TxOutput {
        let start = self.sim.cycles();
        let mut out = TxOutput::default();
        let mut feeder = TxFeeder::with_ports(self.feed.clone(), 0, items, mem, knobs);
        let mut frame: Option<Vec<u8>> = None;
        let (mut first_beat, mut last_beat) = (None, 0u64);
        let mut stuck = 0u32;
        while out.frames.len() < items.len() {
            feeder.drive(&mut self.sim);
            let ready = feeder.knob.out_ready;
            self.p.m.set_ready(&mut self.sim, ready);
            self.sim.eval();
            feeder.observe(&mut self.sim);

            let cycle = self.sim.cycles();
            let tvalid = self.p.m.valid(&mut self.sim);
            if tvalid && ready {
                let f = frame.get_or_insert_with(Vec::new);
                let b = self.p.m.watch(&mut self.sim, f).expect("a valid beat");
                out.protocol_errors
                    .extend(b.violation(false).map(|e| format!("output {e}")));
                first_beat.get_or_insert(cycle);
                out.beats += 1;
                if b.last {
                    out.frames.push(frame.take().expect("open frame"));
                    last_beat = cycle;
                    stuck = 0;
                }
            } else if ready && first_beat.is_some() && out.frames.len() < items.len() {
                if frame.is_some() {
                    out.bubbles_in_frame += 1;
                } else {
                    out.bubbles_between += 1;
                }
            }
            self.sim.tick();
            stuck += 1;
            assert!(stuck < 200_000, "TX builder stopped producing frames");
        }
        if self.sim.get(self.p.err) == 1 {
            out.protocol_errors
                .push("m_err: the builder saw a fetch beat it did not expect".into());
        }
        let (errors, writes) = feeder.finish(&mut self.sim);
        out.protocol_errors.extend(errors);
        out.entropy_writes = writes;
        out.cycles = self.sim.cycles() - start;
        out.span = first_beat.map_or(0, |f| last_beat - f + 1);
        out
    }
}

/// Writes the address registers of [`Addresses`] through `write(addr,
/// data)` (`metaroce_hdl::tx_build::cfg` addresses), the firmware's own
/// writer (`metaroce_driver::hw::tables::configure_tx`).
///
/// # Panics
/// If one address is IPv4 and the other IPv6.
pub fn configure(a: &Addresses, write: &mut dyn FnMut(u8, u64)) {
    assert!(
        metaroce_driver::hw::tables::configure_tx(a, write),
        "local and peer address of different families"
    );
}

/// Writes the local IPv6 address registers (`cfg::LOCAL_IPV6`, two
/// words) alone through `write(addr, data)`: on `NicCore` they are also the
/// ACK framer's IPv6 source address, which a NIC needs even while its data
/// frames are IPv4 ([`configure`] writes them only for IPv6 addresses).
pub fn configure_local_ip6(ip: Ipv6Addr, write: &mut dyn FnMut(u8, u64)) {
    let bits = ip.to_bits();
    write(cfg_addr(CFG_REGS, REG_LOCAL_IPV6), (bits >> 64) as u64);
    write(cfg_addr(CFG_REGS, REG_LOCAL_IPV6 + 1), bits as u64);
}

/// Drives a TX builder's descriptor, entropy-table and fetch ports, cycle
/// by cycle, as a [`Side`]: offers `items` in order (rewriting the path's
/// entropy first when it differs), serves each fetch request from a
/// host-memory model (each must be the next item's payload, else it is
/// reported and zeros are served). Used by [`TxBuildTb::run`] and by the
/// NIC top's bench, where the same ports sit on `NicCore`.
pub struct TxFeeder<'a> {
    p: FeedPorts,
    /// Added to every configuration address (`NicCore`: the TX map's bit).
    cfg_base: u16,
    items: &'a [TxItem],
    mem: &'a mut dyn Memory,
    knobs: Knobs<'a>,
    /// This cycle's stimulus.
    knob: Knob,
    /// The entropy table as written so far (`None`: never written).
    table: [Option<u16>; PATHS],
    /// Expected fetches, in order: the items with a payload.
    expect: VecDeque<(u64, u16)>,
    /// Host memory model: the bytes of accepted requests, in order.
    pending: VecDeque<Vec<u8>>,
    pay_off: usize,
    pay_n: usize,
    next: usize,
    driven: usize,
    desc_valid: bool,
    pay_valid: bool,
    beat: Vec<u8>,
    errors: Vec<String>,
    entropy_writes: u64,
}

impl<'a> TxFeeder<'a> {
    /// A feeder for the ports of `sim` (a `TxBuild` or `NicCore` model);
    /// `cfg_base` is added to the configuration addresses it writes.
    pub fn new(
        sim: &Sim,
        cfg_base: u16,
        items: &'a [TxItem],
        mem: &'a mut dyn Memory,
        knobs: Knobs<'a>,
    ) -> Result<Self, SimError> {
        Ok(Self::with_ports(
            FeedPorts::new(sim)?,
            cfg_base,
            items,
            mem,
            knobs,
        ))
    }

    fn with_ports(
        p: FeedPorts,
        cfg_base: u16,
        items: &'a [TxItem],
        mem: &'a mut dyn Memory,
        knobs: Knobs<'a>,
    ) -> Self {
        let lanes = p.pay.lanes();
        Self {
            p,
            cfg_base,
            items,
            mem,
            knobs,
            knob: Knob::ALWAYS,
            table: [None; PATHS],
            expect: items
                .iter()
                .filter(|i| i.desc.len > 0)
                .map(|i| (i.desc.addr, i.desc.len))
                .collect(),
            pending: VecDeque::new(),
            pay_off: 0,
            pay_n: 0,
            next: 0,
            driven: usize::MAX,
            desc_valid: false,
            pay_valid: false,
            beat: vec![0; lanes],
            errors: Vec::new(),
            entropy_writes: 0,
        }
    }

    /// Interface errors seen and entropy writes made; leaves the ports idle.
    pub fn finish(self, sim: &mut Sim) -> (Vec<String>, u64) {
        let mut errors = self.errors;
        if !self.expect.is_empty() {
            errors.push(format!("{} fetches never requested", self.expect.len()));
        }
        sim.set(self.p.desc_valid, 0);
        self.p.pay.idle(sim);
        sim.set(self.p.cfg_we, 0);
        sim.eval();
        (errors, self.entropy_writes)
    }
}

impl Side for TxFeeder<'_> {
    fn drive(&mut self, sim: &mut Sim) {
        self.knob = (self.knobs)();
        let lanes = self.beat.len();
        // Descriptor side: rewrite the path's entropy first if needed
        // (a cycle without a descriptor), then offer it.
        self.desc_valid = false;
        sim.set(self.p.cfg_we, 0);
        if let Some(item) = self.items.get(self.next).filter(|_| self.knob.offer) {
            let path = usize::from(item.desc.repr.path) % PATHS;
            if self.table[path] != Some(item.entropy) {
                sim.set(self.p.cfg_we, 1);
                let addr = self.cfg_base | u16::from(cfg_addr(CFG_ENTROPY, path as u8));
                sim.set(self.p.cfg_addr, addr.into());
                sim.set(self.p.cfg_data, item.entropy.into());
                self.table[path] = Some(item.entropy);
                self.entropy_writes += 1;
            } else {
                if self.driven != self.next {
                    self.p.drive_desc(sim, &item.desc);
                    self.driven = self.next;
                }
                self.desc_valid = true;
            }
        }
        sim.set(self.p.desc_valid, self.desc_valid.into());
        // Fetch stream.
        self.pay_valid = false;
        self.p.pay.idle(sim);
        if let Some(bytes) = self.pending.front().filter(|_| self.knob.pay_valid) {
            let n = (bytes.len() - self.pay_off).min(lanes);
            self.beat[..n].copy_from_slice(&bytes[self.pay_off..self.pay_off + n]);
            // Lanes past the payload hold junk the RTL must ignore.
            self.beat[n..].fill(0xA5);
            let last = self.pay_off + n == bytes.len();
            self.p.pay.offer(sim, &self.beat, n, last);
            self.pay_n = n;
            self.pay_valid = true;
        }
        sim.set(self.p.rd_ready, self.knob.fetch_ready.into());
    }

    fn observe(&mut self, sim: &mut Sim) {
        if self.desc_valid && sim.get(self.p.desc_ready) == 1 {
            self.next += 1;
        }
        if self.knob.fetch_ready && sim.get(self.p.rd_valid) == 1 {
            let addr = sim.get(self.p.rd_addr);
            let len = sim.get(self.p.rd_len) as u16;
            let mut bytes = vec![0u8; usize::from(len)];
            if self.expect.pop_front() == Some((addr, len)) {
                self.mem.read(addr, &mut bytes);
            } else {
                self.errors
                    .push(format!("unexpected fetch of {len} B at {addr:#x}"));
            }
            if len > 0 {
                self.pending.push_back(bytes);
            }
        }
        if self.pay_valid && self.p.pay.ready(sim) {
            self.pay_off += self.pay_n;
            if self
                .pending
                .front()
                .is_some_and(|b| self.pay_off == b.len())
            {
                self.pending.pop_front();
                self.pay_off = 0;
            }
        }
    }

    fn done(&self) -> bool {
        self.next == self.items.len() && self.expect.is_empty() && self.pending.is_empty()
    }
}
