//! rust-hdl simulation of the shims against models in Rust: an AXI4
//! memory (random `READY`/`VALID` stalls, read data of different IDs
//! interleaved beat by beat, a few error responses) under [`DmaRead`] and
//! [`DmaWrite`] driven with random requests (1 to 9,000 bytes at any
//! alignment, crossing 4 KiB pages and the 4 GiB line), every byte
//! checked; and a register file behind [`AxilBar`] driven by a random
//! AXI4-Lite master.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::*;

/// The memory window's host address: it spans the 4 GiB line.
const BASE: u64 = 0x1_0000_0000 - 0x8000;
/// The window's bytes.
const WINDOW: usize = 0x1_0000;
/// Simulation time limit (the clock's period is 10).
const MAX_TIME: u64 = 200_000_000;

/// The `N`-bit word holding `bytes` (byte `i` in bits `8i..8i+8`).
fn word<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut w = Bits::<N>::default();
    for (i, &b) in bytes.iter().enumerate() {
        w.set_bits::<8>(8 * i, (b as u64).into());
    }
    w
}

/// The bytes of an `N`-bit word, byte 0 first.
fn bytes<const N: usize>(w: Bits<N>) -> Vec<u8> {
    (0..N / 8)
        .map(|i| w.get_bits::<8>(8 * i).index() as u8)
        .collect()
}

/// A random request: a host address in the window and a length.
fn request(rng: &mut SmallRng) -> (u64, usize) {
    let len = if rng.gen_bool(0.3) {
        rng.gen_range(1..=200)
    } else {
        rng.gen_range(1..=9000)
    };
    (BASE + rng.gen_range(0..WINDOW - len) as u64, len)
}

/// An AXI burst as the memory model keeps it: the next beat's address
/// and the beats left.
struct Burst {
    addr: u64,
    beats: usize,
}

/// Checks a burst's address channel (beat-aligned INCR of `B`-byte
/// beats, at most 64 beats, not crossing 4 KiB, inside the window) and
/// returns it.
fn burst<const B: usize>(addr: u64, len: usize, size: usize, kind: usize) -> Burst {
    let beats = len + 1;
    assert_eq!(addr % B as u64, 0, "burst at {addr:#x} not beat-aligned");
    assert_eq!(1 << size, B, "AxSIZE");
    assert_eq!(kind, 1, "AxBURST not INCR");
    assert!(beats <= 64, "burst of {beats} beats");
    assert!(
        addr % 4096 + (beats * B) as u64 <= 4096,
        "burst at {addr:#x} of {beats} beats crosses 4 KiB"
    );
    assert!(
        addr >= BASE && addr + (beats * B) as u64 <= BASE + WINDOW as u64,
        "burst at {addr:#x} outside the window"
    );
    Burst { addr, beats }
}

/// Advances a simulation by one clock: to the rising edge and back down.
macro_rules! cycle {
    ($sim:ident, $x:ident) => {
        wait_clock_true!($sim, clock, $x);
        wait_clock_false!($sim, clock, $x);
    };
}

/// `requests` random reads with random tags (0..4) through
/// `DmaRead<W, B, D>` from a memory that interleaves the IDs' data.
fn reads<const W: usize, const B: usize, const D: usize>(seed: u64, requests: usize) {
    type Dut<const W: usize, const B: usize, const D: usize> = DmaRead<W, B, D>;
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Dut<W, B, D>>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Dut<W, B, D>>| {
        let mut x = sim.init()?;
        let mut rng = SmallRng::seed_from_u64(seed);
        let mem: Vec<u8> = (0..WINDOW).map(|_| rng.r#gen()).collect();
        let reqs: Vec<(u64, usize, usize)> = (0..requests)
            .map(|_| {
                let (a, l) = request(&mut rng);
                (a, l, rng.gen_range(0..4))
            })
            .collect();
        // Requests asked and not delivered, per tag; the one being
        // delivered (tag, address, length, bytes so far).
        let mut due: Vec<VecDeque<(u64, usize)>> = vec![VecDeque::new(); 16];
        let mut cur: Option<(usize, u64, usize, Vec<u8>)> = None;
        // The memory: bursts per ID, the R beat offered (ID, address,
        // last, response), errors sent.
        let mut ar: Vec<VecDeque<Burst>> = (0..16).map(|_| VecDeque::new()).collect();
        let mut r: Option<(usize, u64, bool, usize)> = None;
        let (mut asked, mut done, mut errs) = (0, 0, 0);
        x.rst.next = true;
        cycle!(sim, x);
        x.rst.next = false;
        while done < requests {
            // Device side.
            x.m_dmar_valid.next = asked < requests;
            if let Some(&(a, l, t)) = reqs.get(asked) {
                x.m_dmar_addr.next = a.into();
                x.m_dmar_len.next = (l as u64).into();
                x.m_dmar_tag.next = (t as u64).into();
            }
            x.s_dmac_tready.next = rng.gen_bool(0.7);
            // Memory side: an R beat from any ID with a burst.
            x.m_axi_arready.next = rng.gen_bool(0.6);
            if r.is_none() && rng.gen_bool(0.8) {
                let ids: Vec<usize> = (0..16).filter(|&i| !ar[i].is_empty()).collect();
                if !ids.is_empty() {
                    let id = ids[rng.gen_range(0..ids.len())];
                    let b = ar[id].front_mut().unwrap();
                    let resp = if rng.gen_bool(0.002) { 2 } else { 0 };
                    r = Some((id, b.addr, b.beats == 1, resp));
                    b.addr += B as u64;
                    b.beats -= 1;
                    if b.beats == 0 {
                        ar[id].pop_front();
                    }
                }
            }
            x.m_axi_rvalid.next = r.is_some();
            if let Some((id, a, last, resp)) = r {
                let o = (a - BASE) as usize;
                x.m_axi_rid.next = (id as u64).into();
                x.m_axi_rdata.next = word::<W>(&mem[o..o + B]);
                x.m_axi_rlast.next = last;
                x.m_axi_rresp.next = (resp as u64).into();
            }
            x = sim.wait(1, x)?;
            // The handshakes of this clock.
            if x.m_dmar_valid.val() && x.m_dmar_ready.val() {
                let (a, l, t) = reqs[asked];
                due[t].push_back((a, l));
                asked += 1;
            }
            if x.m_axi_arvalid.val() && x.m_axi_arready.val() {
                let id = x.m_axi_arid.val().index();
                ar[id].push_back(burst::<B>(
                    x.m_axi_araddr.val().to_u64(),
                    x.m_axi_arlen.val().index(),
                    x.m_axi_arsize.val().index(),
                    x.m_axi_arburst.val().index(),
                ));
            }
            if x.m_axi_rvalid.val() && x.m_axi_rready.val() {
                errs += usize::from(r.take().unwrap().3 != 0);
            }
            if x.s_dmac_tvalid.val() && x.s_dmac_tready.val() {
                let tag = x.s_dmac_tag.val().index();
                let (t, a, l, got) = cur.get_or_insert_with(|| {
                    let (a, l) = due[tag]
                        .pop_front()
                        .expect("a beat of a tag with nothing due");
                    (tag, a, l, Vec::new())
                });
                sim_assert_eq!(sim, tag, *t, x);
                let keep = x.s_dmac_tkeep.val();
                let n = (0..B).take_while(|&i| keep.get_bit(i)).count();
                sim_assert!(sim, (n..B).all(|i| !keep.get_bit(i)), x);
                got.extend_from_slice(&bytes(x.s_dmac_tdata.val())[..n]);
                let last = x.s_dmac_tlast.val();
                sim_assert_eq!(sim, last, got.len() >= *l, x);
                if last {
                    let o = (*a - BASE) as usize;
                    assert!(
                        got[..] == mem[o..o + *l],
                        "read of {l} bytes at {a:#x}, tag {t}: first differing byte {:?}",
                        got.iter().zip(&mem[o..]).position(|(g, m)| g != m)
                    );
                    cur = None;
                    done += 1;
                }
            }
            cycle!(sim, x);
        }
        sim_assert_eq!(sim, x.r_err.val().index(), errs, x);
        sim.done(x)
    });
    sim.run(Box::new(Dut::<W, B, D>::default()), MAX_TIME)
        .unwrap();
}

/// `requests` random writes through `DmaWrite<W, B, D>` into a memory;
/// afterwards the memory must equal the writes applied in order.
fn writes<const W: usize, const B: usize, const D: usize>(seed: u64, requests: usize) {
    type Dut<const W: usize, const B: usize, const D: usize> = DmaWrite<W, B, D>;
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Dut<W, B, D>>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Dut<W, B, D>>| {
        let mut x = sim.init()?;
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut mem: Vec<u8> = (0..WINDOW).map(|_| rng.r#gen()).collect();
        let mut want = mem.clone();
        let reqs: Vec<(u64, Vec<u8>)> = (0..requests)
            .map(|_| {
                let (a, l) = request(&mut rng);
                (a, (0..l).map(|_| rng.r#gen()).collect())
            })
            .collect();
        for (a, d) in &reqs {
            let o = (*a - BASE) as usize;
            want[o..o + d.len()].copy_from_slice(d);
        }
        // The device's next request and bytes sent of it; the memory's
        // bursts (address taken, data due), responses due and errors.
        let (mut next, mut sent) = (0, 0);
        let mut aw: VecDeque<Burst> = VecDeque::new();
        let (mut b_due, mut errs) = (0, 0);
        x.rst.next = true;
        cycle!(sim, x);
        x.rst.next = false;
        loop {
            x.m_dmaw_tvalid.next = next < requests && rng.gen_bool(0.85);
            if let Some((a, d)) = reqs.get(next) {
                let n = (d.len() - sent).min(B);
                x.m_dmaw_first.next = sent == 0;
                x.m_dmaw_addr.next = (*a).into();
                x.m_dmaw_len.next = (d.len() as u64).into();
                x.m_dmaw_tdata.next = word::<W>(&d[sent..sent + n]);
                x.m_dmaw_tkeep.next =
                    (0..n).fold(Bits::<B>::default(), |k, i| k.replace_bit(i, true));
                x.m_dmaw_tlast.next = sent + n == d.len();
            }
            x.m_axi_awready.next = rng.gen_bool(0.6);
            x.m_axi_wready.next = !aw.is_empty() && rng.gen_bool(0.7);
            x.m_axi_bvalid.next = b_due > 0 && rng.gen_bool(0.5);
            let resp = if rng.gen_bool(0.05) { 2 } else { 0 };
            x.m_axi_bresp.next = (resp as u64).into();
            x = sim.wait(1, x)?;
            if x.m_dmaw_tvalid.val() && x.m_dmaw_tready.val() {
                sent += B;
                if sent >= reqs[next].1.len() {
                    next += 1;
                    sent = 0;
                }
            }
            if x.m_axi_awvalid.val() && x.m_axi_awready.val() {
                aw.push_back(burst::<B>(
                    x.m_axi_awaddr.val().to_u64(),
                    x.m_axi_awlen.val().index(),
                    x.m_axi_awsize.val().index(),
                    x.m_axi_awburst.val().index(),
                ));
            }
            if x.m_axi_wvalid.val() && x.m_axi_wready.val() {
                let b = aw.front_mut().unwrap();
                let o = (b.addr - BASE) as usize;
                let (data, strb) = (bytes(x.m_axi_wdata.val()), x.m_axi_wstrb.val());
                for i in (0..B).filter(|&i| strb.get_bit(i)) {
                    mem[o + i] = data[i];
                }
                sim_assert_eq!(sim, x.m_axi_wlast.val(), b.beats == 1, x);
                b.addr += B as u64;
                b.beats -= 1;
                if b.beats == 0 {
                    aw.pop_front();
                    b_due += 1;
                }
            }
            if x.m_axi_bvalid.val() && x.m_axi_bready.val() {
                b_due -= 1;
                errs += usize::from(resp != 0);
            }
            cycle!(sim, x);
            if next == requests && aw.is_empty() && b_due == 0 && !x.m_axi_awvalid.val() {
                break;
            }
        }
        assert!(
            mem == want,
            "memory differs from the writes at window byte {:?}",
            mem.iter().zip(&want).position(|(m, w)| m != w)
        );
        sim_assert_eq!(sim, x.b_err.val().index(), errs, x);
        sim.done(x)
    });
    sim.run(Box::new(Dut::<W, B, D>::default()), MAX_TIME)
        .unwrap();
}

#[test]
fn dma_read_64() {
    reads::<64, 8, 128>(1, 60);
}

#[test]
fn dma_read_512() {
    reads::<512, 64, 1024>(2, 60);
}

#[test]
fn dma_write_64() {
    writes::<64, 8, 128>(3, 60);
}

#[test]
fn dma_write_512() {
    writes::<512, 64, 1024>(4, 60);
}

/// Random AXI4-Lite writes and reads (address and data offered with
/// independent delays, responses taken after random stalls) through
/// [`AxilBar`] to a register file answering reads two cycles later, as
/// the device does: each read returns the register's last write, and
/// every write reaches the register file exactly once.
#[test]
fn axil_bar_reads_and_writes() {
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<AxilBar>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<AxilBar>| {
        let mut x = sim.init()?;
        let mut rng = SmallRng::seed_from_u64(5);
        let mut regs = [0u32; 16];
        let mut model = [0u32; 16];
        // The device's read pipeline: the value due in 2 and in 1 cycles.
        let mut pipe: VecDeque<Option<u32>> = VecDeque::from([None, None]);
        // The operation in progress: a write (address and data still to
        // be offered, response due) or a read (address offered, value
        // expected).
        let (mut ops, mut bar_writes) = (0, 0);
        let (mut aw, mut w, mut b, mut ar, mut r) = (false, false, false, false, false);
        let (mut addr, mut data, mut want) = (0usize, 0u32, 0u32);
        x.rst.next = true;
        cycle!(sim, x);
        x.rst.next = false;
        while ops < 2000 {
            if !(aw || w || b || ar || r) {
                addr = rng.gen_range(0..16);
                if rng.r#gen() {
                    data = rng.r#gen();
                    model[addr] = data;
                    (aw, w, b) = (true, true, true);
                } else {
                    want = model[addr];
                    (ar, r) = (true, true);
                }
            }
            x.s_axil_awvalid.next = aw && rng.gen_bool(0.5);
            x.s_axil_wvalid.next = w && rng.gen_bool(0.5);
            x.s_axil_awaddr.next = ((addr * 4) as u64).into();
            x.s_axil_wdata.next = (data as u64).into();
            x.s_axil_bready.next = rng.gen_bool(0.5);
            x.s_axil_arvalid.next = ar && rng.gen_bool(0.5);
            x.s_axil_araddr.next = ((addr * 4) as u64).into();
            x.s_axil_rready.next = rng.gen_bool(0.5);
            let due = pipe.pop_front().unwrap();
            x.bar_rd_resp_valid.next = due.is_some();
            x.bar_rd_resp_data.next = (due.unwrap_or(0) as u64).into();
            x = sim.wait(1, x)?;
            if x.s_axil_awvalid.val() && x.s_axil_awready.val() {
                aw = false;
            }
            if x.s_axil_wvalid.val() && x.s_axil_wready.val() {
                w = false;
            }
            if x.bar_wr_valid.val() {
                regs[x.bar_wr_addr.val().index() / 4] = x.bar_wr_data.val().index() as u32;
                bar_writes += 1;
            }
            let rd = x.bar_rd_valid.val();
            pipe.push_back(rd.then(|| regs[x.bar_rd_addr.val().index() / 4]));
            if x.s_axil_arvalid.val() && x.s_axil_arready.val() {
                sim_assert!(sim, rd, x);
                ar = false;
            }
            if x.s_axil_bvalid.val() && x.s_axil_bready.val() {
                sim_assert!(sim, b && !aw && !w, x);
                b = false;
                ops += 1;
            }
            if x.s_axil_rvalid.val() && x.s_axil_rready.val() {
                sim_assert!(sim, r && !ar, x);
                sim_assert_eq!(sim, x.s_axil_rdata.val().index() as u32, want, x);
                r = false;
                ops += 1;
            }
            cycle!(sim, x);
        }
        sim_assert_eq!(sim, regs, model, x);
        sim_assert!(sim, bar_writes > 800, x);
        sim.done(x)
    });
    sim.run(Box::new(AxilBar::default()), MAX_TIME).unwrap();
}
