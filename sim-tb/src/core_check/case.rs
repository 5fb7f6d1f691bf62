//! The stimulus of the receive benches: the engine, its traffic and,
//! for the device bench, what the engine made of it.

use metaroce_firmware::MAX_PATHS;
use metaroce_proto::{MsgRepr, Opcode};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::engine::{Action, Engine};
use super::metaroce_hdl_codes::*;
use super::traffic::{ConnTraffic, DatagramSource, seal, traffic};
use super::{Family, INITIAL_PSN, MEM_BASE, MEM_LEN, MTU, STREAMS};
use crate::rx_core::RxCoreTb;
use crate::rx_parser::Frame;

/// The receive traffic of [`run_against_engine`](super::run_against_engine) and its engine, whose
/// tables are programmed into the RTL.
pub(crate) struct RxCase {
    pub(super) engine: Engine,
    /// The datagrams, in order.
    pub(crate) frames: Vec<Frame>,
    /// Their CE marks.
    pub(crate) ce: Vec<bool>,
    /// The firmware's actions during the run and the datagram each precedes.
    pub(super) schedule: Vec<(usize, Action)>,
}

/// Receive stimulus for a bench that drives the tables through some
/// other port (the device's BAR0): the engine's table writes, the core
/// bench's traffic, and what the engine made of it.
pub(crate) struct HostRxCase {
    /// Table writes `(cfg_addr, data)` (receive core map) that set the RTL
    /// up as the engine is.
    pub(crate) writes: Vec<(u16, u64)>,
    /// The datagrams, in order: `packets` of the core bench's traffic
    /// (WRITEs, PROBEs, re-sent and hostile), then `firmware` SENDs on
    /// stream 4 (no receive ring in the RTL: verdict 10, handed up).
    pub(crate) frames: Vec<Frame>,
    /// Their CE marks.
    pub(crate) ce: Vec<bool>,
    /// The engine's verdict for each of the first `packets` datagrams
    /// (`None` where it counts nothing the RTL reports as a verdict).
    pub(crate) verdicts: Vec<Option<u8>>,
    /// The engine's memory after them: the placed bytes (at `mem_base`).
    pub(crate) mem: Vec<u8>,
    /// Where `mem` starts.
    pub(crate) mem_base: u64,
    /// Writes the engine made.
    pub(crate) engine_writes: usize,
}

impl HostRxCase {
    /// `packets` datagrams of the core bench's traffic from `seed`, then
    /// `firmware` stream-4 SENDs of 1..=`MTU` bytes to connection 0.
    pub(crate) fn new(packets: usize, firmware: usize, seed: u64) -> Self {
        let mut engine = Engine::new(Family::Ipv4);
        let mut writes = Vec::new();
        engine.program_with(&mut |a, d| writes.push((a, d)));
        let (mut frames, mut ce) = traffic(&engine, packets, seed, 0.3, false);
        let verdicts: Vec<Option<u8>> = frames
            .iter()
            .zip(&ce)
            .map(|(f, &c)| engine.handle(f, c, 0).0)
            .collect();
        let mut rng = SmallRng::seed_from_u64(seed ^ 0xF1F0);
        let conn = engine.conns[0];
        let mut t = DatagramSource {
            rng: SmallRng::seed_from_u64(seed ^ 0xF1F1),
            conns: vec![ConnTraffic {
                next_psn: INITIAL_PSN,
                msn: [0; STREAMS],
                path_psn: [0; MAX_PATHS as usize],
                next_recv: [0; RQ_STREAMS],
            }],
        };
        for i in 0..firmware {
            let len = match i % 4 {
                // Whole datagrams in the firmware receive queue's slot,
                // around its end, and cut ones.
                0 => rng.gen_range(1..=32),
                1 => rng.gen_range(33..=200),
                _ => rng.gen_range(1..=MTU as usize),
            };
            let m = MsgRepr {
                msn: i as u32,
                recv_idx: i as u32,
                msg_len: len as u32,
                offset: 0,
                remote_va: 0,
                rkey: 0,
                imm: 0,
            };
            let w = t.msg(0, &conn, Opcode::Send, RQ_STREAMS as u16, m, len);
            frames.push(seal(&w, w.src, engine.local));
            ce.push(false);
        }
        Self {
            writes,
            frames,
            ce,
            verdicts,
            mem: engine.mem.mem.slice(MEM_BASE, MEM_LEN).to_vec(),
            mem_base: MEM_BASE,
            engine_writes: engine.mem.writes.len(),
        }
    }
}

impl RxCase {
    /// `packets` datagrams from `seed`, addressed as `family` says; the
    /// engine's tables written into `tb`.
    pub(crate) fn new(tb: &mut RxCoreTb, packets: usize, seed: u64, family: Family) -> Self {
        let engine = Engine::new(family);
        engine.program(tb);
        let (frames, ce) = traffic(&engine, packets, seed, 0.3, false);
        Self {
            engine,
            frames,
            ce,
            schedule: Vec::new(),
        }
    }

    /// [`RxCase::new`] with SEND messages and READ responses in the mix.
    pub(super) fn mixed(tb: &mut RxCoreTb, packets: usize, seed: u64) -> Self {
        let engine = Engine::new(Family::Ipv4);
        engine.program(tb);
        let (frames, ce) = traffic(&engine, packets, seed, 0.3, true);
        Self {
            engine,
            frames,
            ce,
            schedule: Vec::new(),
        }
    }
}
