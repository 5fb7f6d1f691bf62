//! rust-hdl simulation of [`MgmtEngine`] with a [`LocalMem`] behind its
//! byte port and a Rust model of the BAR0 port (a read answered two clocks
//! later): every response byte against the protocol, built here from
//! `docs/hardware.md` §19.

use std::collections::HashMap;

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::proto::*;
use super::*;
use crate::board::local_mem::LocalMem;
use crate::icrc::crc_byte;

/// Memory under test: 256 bytes.
const M: usize = 8;
/// Clocks without a byte that end a frame.
const IDLE: usize = 200;
/// Clocks between two request bytes.
const GAP: usize = 3;

/// The engine with its memory; the BAR0 port is the test's.
#[derive(LogicBlock)]
struct Bench {
    clock: Signal<In, Clock>,
    rx_data: Signal<In, Bits<8>>,
    rx_valid: Signal<In, Bit>,
    tx_data: Signal<Out, Bits<8>>,
    tx_valid: Signal<Out, Bit>,
    tx_ready: Signal<In, Bit>,
    bar_wr_valid: Signal<Out, Bit>,
    bar_wr_addr: Signal<Out, Bits<16>>,
    bar_wr_data: Signal<Out, Bits<32>>,
    bar_rd_valid: Signal<Out, Bit>,
    bar_rd_addr: Signal<Out, Bits<16>>,
    bar_rd_resp_valid: Signal<In, Bit>,
    bar_rd_resp_data: Signal<In, Bits<32>>,
    eng: MgmtEngine<M>,
    mem: LocalMem<5>,
}

impl Logic for Bench {
    #[hdl_gen]
    fn update(&mut self) {
        self.eng.clock.next = self.clock.val();
        self.mem.clock.next = self.clock.val();
        self.eng.rst.next = false;
        self.mem.rst.next = false;
        self.eng.rx_data.next = self.rx_data.val();
        self.eng.rx_valid.next = self.rx_valid.val();
        self.tx_data.next = self.eng.tx_data.val();
        self.tx_valid.next = self.eng.tx_valid.val();
        self.eng.tx_ready.next = self.tx_ready.val();
        self.bar_wr_valid.next = self.eng.bar_wr_valid.val();
        self.bar_wr_addr.next = self.eng.bar_wr_addr.val();
        self.bar_wr_data.next = self.eng.bar_wr_data.val();
        self.bar_rd_valid.next = self.eng.bar_rd_valid.val();
        self.bar_rd_addr.next = self.eng.bar_rd_addr.val();
        self.eng.bar_rd_resp_valid.next = self.bar_rd_resp_valid.val();
        self.eng.bar_rd_resp_data.next = self.bar_rd_resp_data.val();
        self.mem.mem_valid.next = self.eng.mem_valid.val();
        self.mem.mem_write.next = self.eng.mem_write.val();
        self.mem.mem_addr.next = self.eng.mem_addr.val();
        self.mem.mem_wdata.next = self.eng.mem_wdata.val();
        self.eng.mem_rdata.next = self.mem.mem_rdata.val();
        // The DMA ports idle.
        self.mem.m_dmar_valid.next = false;
        self.mem.m_dmar_addr.next = 0.into();
        self.mem.m_dmar_len.next = 0.into();
        self.mem.m_dmar_tag.next = 0.into();
        self.mem.s_dmac_tready.next = false;
        self.mem.m_dmaw_addr.next = 0.into();
        self.mem.m_dmaw_first.next = false;
        self.mem.m_dmaw_tdata.next = 0.into();
        self.mem.m_dmaw_tkeep.next = 0.into();
        self.mem.m_dmaw_tvalid.next = false;
    }
}

fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(u32::MAX, |c, &b| crc_byte(c, b))
}

/// `body` with its CRC appended (low byte first).
fn sealed(mut body: Vec<u8>) -> Vec<u8> {
    let c = crc32(&body);
    body.extend_from_slice(&c.to_le_bytes());
    body
}

/// A request frame.
pub(crate) fn request(op: u8, addr: u32, len: u16, data: &[u8]) -> Vec<u8> {
    let mut f = vec![SYNC_REQ, op];
    f.extend_from_slice(&addr.to_le_bytes());
    f.extend_from_slice(&len.to_le_bytes());
    f.extend_from_slice(data);
    sealed(f)
}

/// The response frame the protocol asks for.
pub(crate) fn response(op: u8, status: u8, data: &[u8]) -> Vec<u8> {
    let mut f = vec![SYNC_RESP, op, status];
    f.extend_from_slice(data);
    sealed(f)
}

/// The test's side of the BAR0 port: registers, and reads in flight.
#[derive(Default)]
struct Bar {
    regs: HashMap<u16, u32>,
    pending: Vec<(usize, u32)>,
}

/// Sends `bytes` (one every `GAP` clocks), then runs until `want` response
/// bytes came (or a limit), with random back-pressure on the response.
fn exchange(
    sim: &mut Sim<Bench>,
    mut x: Box<Bench>,
    bar: &mut Bar,
    rng: &mut SmallRng,
    bytes: &[u8],
    want: usize,
) -> Result<(Box<Bench>, Vec<u8>), SimError> {
    let mut got = Vec::new();
    let mut clock = 0;
    let limit = (bytes.len() * GAP) + 8 * (want + 4) + 4 * IDLE;
    while (clock < bytes.len() * GAP || got.len() < want) && clock < limit {
        x.rx_valid.next = clock % GAP == 0 && clock / GAP < bytes.len();
        x.rx_data.next = (*bytes.get(clock / GAP).unwrap_or(&0) as u64).into();
        let ready = rng.gen_bool(0.6);
        x.tx_ready.next = ready;
        if ready && x.tx_valid.val() {
            got.push(x.tx_data.val().index() as u8);
        }
        if x.bar_wr_valid.val() {
            bar.regs.insert(
                x.bar_wr_addr.val().index() as u16,
                x.bar_wr_data.val().to_u32(),
            );
        }
        if x.bar_rd_valid.val() {
            let a = x.bar_rd_addr.val().index() as u16;
            bar.pending
                .push((clock + 2, *bar.regs.get(&a).unwrap_or(&0)));
        }
        x.bar_rd_resp_valid.next = false;
        if let Some(&(at, v)) = bar.pending.first() {
            if at == clock {
                x.bar_rd_resp_valid.next = true;
                x.bar_rd_resp_data.next = u64::from(v).into();
                bar.pending.remove(0);
            }
        }
        wait_clock_true!(sim, clock, x);
        wait_clock_false!(sim, clock, x);
        clock += 1;
    }
    Ok((x, got))
}

#[test]
fn requests_get_their_responses() {
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Bench>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Bench>| {
        let mut x = sim.init()?;
        wait_clock_false!(sim, clock, x);
        let mut rng = SmallRng::seed_from_u64(3);
        let mut bar = Bar::default();
        let mut mem = vec![0u8; 1 << M];
        // (request bytes, expected response), in order.
        let mut script: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        script.push((
            request(REG_WRITE, 0x40, 4, &0xdead_beefu32.to_le_bytes()),
            response(REG_WRITE, OK, &[]),
        ));
        script.push((
            request(REG_READ, 0x40, 4, &[]),
            response(REG_READ, OK, &0xdead_beefu32.to_le_bytes()),
        ));
        for _ in 0..6 {
            let len = rng.gen_range(1..=40usize);
            let addr = rng.gen_range(0..=(1 << M) - len);
            let data: Vec<u8> = (0..len).map(|_| rng.r#gen()).collect();
            mem[addr..addr + len].copy_from_slice(&data);
            script.push((
                request(MEM_WRITE, addr as u32, len as u16, &data),
                response(MEM_WRITE, OK, &[]),
            ));
            let (ra, rl) = (
                addr.saturating_sub(3),
                (len + 6).min((1 << M) - addr.saturating_sub(3)),
            );
            script.push((
                request(MEM_READ, ra as u32, rl as u16, &[]),
                response(MEM_READ, OK, &mem[ra..ra + rl]),
            ));
        }
        // A damaged MEM_WRITE changes nothing.
        let mut bad = request(MEM_WRITE, 0, 4, &[1, 2, 3, 4]);
        bad[9] ^= 0x10;
        script.push((bad, response(MEM_WRITE, BAD_CRC, &[])));
        script.push((
            request(MEM_READ, 0, 4, &[]),
            response(MEM_READ, OK, &mem[0..4]),
        ));
        // Bad ops and arguments, answered after the header.
        script.push((request(9, 0, 4, &[]), response(9, BAD_OP, &[])));
        script.push((
            request(REG_READ, 0x41, 4, &[]),
            response(REG_READ, BAD_ARG, &[]),
        ));
        script.push((
            request(REG_WRITE, 0x1_0000, 4, &[0; 4])[..8].to_vec(),
            response(REG_WRITE, BAD_ARG, &[]),
        ));
        script.push((
            request(MEM_READ, 250, 7, &[]),
            response(MEM_READ, BAD_ARG, &[]),
        ));
        // Junk before a request.
        let mut junk = vec![0x00, 0x11, 0x5A];
        junk.extend(request(REG_READ, CNT_JUNK, 4, &[]));
        // 3, and the CRC bytes of the three requests refused after their
        // header (the truncated REG_WRITE has none).
        script.push((junk, response(REG_READ, OK, &15u32.to_le_bytes())));
        script.push((
            request(REG_READ, CNT_BAD, 4, &[]),
            response(REG_READ, OK, &5u32.to_le_bytes()),
        ));
        for (req, want) in script {
            let (y, got) = exchange(&mut sim, x, &mut bar, &mut rng, &req, want.len())?;
            x = y;
            sim_assert_eq!(sim, got, want, x);
        }
        // A cut frame is dropped after the idle time; the next one works.
        let (y, got) = exchange(
            &mut sim,
            x,
            &mut bar,
            &mut rng,
            &request(MEM_READ, 0, 4, &[])[..5],
            0,
        )?;
        x = y;
        sim_assert_eq!(sim, got, Vec::<u8>::new(), x);
        for _ in 0..IDLE + 10 {
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        let want = response(REG_READ, OK, &1u32.to_le_bytes());
        let (y, got) = exchange(
            &mut sim,
            x,
            &mut bar,
            &mut rng,
            &request(REG_READ, CNT_TIMEOUT, 4, &[]),
            want.len(),
        )?;
        x = y;
        sim_assert_eq!(sim, got, want, x);
        sim.done(x)
    });
    sim.run(Box::new(bench()), 50_000_000).unwrap();
}

fn bench() -> Bench {
    Bench {
        clock: Default::default(),
        rx_data: Default::default(),
        rx_valid: Default::default(),
        tx_data: Default::default(),
        tx_valid: Default::default(),
        tx_ready: Default::default(),
        bar_wr_valid: Default::default(),
        bar_wr_addr: Default::default(),
        bar_wr_data: Default::default(),
        bar_rd_valid: Default::default(),
        bar_rd_addr: Default::default(),
        bar_rd_resp_valid: Default::default(),
        bar_rd_resp_data: Default::default(),
        eng: MgmtEngine::new(IDLE),
        mem: Default::default(),
    }
}
