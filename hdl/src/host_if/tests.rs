//! rust-hdl simulation of [`HostIf`]: the TX queue and a register operation.

use super::reg_file::{RW_BITS, WO_REGS, ro_sources, rw_bit, wo_bit};
use super::*;
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// `v` at bit `at` of a `N`-bit bus.
fn word<const N: usize>(bus: Bits<N>, at: usize, v: u64) -> Bits<N> {
    (0..64).fold(bus, |b, i| b.replace_bit(at + i, v >> i & 1 == 1))
}

/// The place among the read-only registers of the one whose source is
/// `src`.
fn ro_place(src: &str) -> u64 {
    ro_sources()
        .into_iter()
        .position(|(_, s)| s == src)
        .unwrap_or_else(|| panic!("no read-only register has source {src}")) as u64
}

/// The read-only registers the test reads at the end, by source.
const RO_READ: [&str; 5] = [
    "txq_cons",
    "cnt_cfg_writes",
    "cnt_txq_bad",
    "op_status",
    "op_res_psn",
];

/// What the host interface showed: per cycle the DMA read request
/// (address, bytes, tag) if valid, the table write (address, data) if
/// issued and the TX vector's count; at the end the values of the
/// read-only registers of [`RO_READ`].
type Seen = (
    Vec<Option<(u64, u64, u64)>>,
    Vec<Option<(u64, u64)>>,
    u64,
    Vec<u64>,
);

/// Runs the 64-bit host interface through rust-hdl's simulator: the TX
/// queue (base 0x8000, 16 entries) holds one table write (kind 1:
/// address 0x155, data 0x1234_5678_9ABC_DEF0), the DMA takes every
/// request and answers the entry's read in the cycle after; then a
/// register TX table operation runs (`OP_GO`, the table ready, its
/// result two cycles later with PSN 77); then the registers of
/// [`RO_READ`] are read, one a cycle.
fn simulate() -> Seen {
    let seen = Arc::new(Mutex::new((Vec::new(), Vec::new(), 0, Vec::new())));
    let out = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<HostIf<64, 8>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<HostIf<64, 8>>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        let mut rw = Bits::<RW_BITS>::default();
        rw = word(rw, rw_bit("TXQ", "BASE_LO"), 0x8000);
        rw = word(rw, rw_bit("TXQ", "SIZE_LOG2"), 4);
        rw = word(rw, rw_bit("TXQ", "CTRL"), 1);
        rw = word(rw, rw_bit("TXQ", "PROD"), 1);
        rw = word(rw, rw_bit("TXT", "OP_CTRL"), 3 << 3 | 1);
        x.rw.next = rw;
        x.m_dmar_ready.next = true;
        x.c_op.ready.next = true;
        x.ev_qop_room.next = true;
        let entry: [u64; 10] = [
            0x1234_5678_9ABC_DEF0,
            0x155,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            u64::from(txq_kind::CFG) << 56,
        ];
        let mut beat = None;
        for c in 0..40 {
            x.s_dmac_tvalid.next = beat.is_some();
            let k: usize = beat.unwrap_or_default();
            x.s_dmac_tdata.next = entry[k].to_bits();
            x.s_dmac_tlast.next = k == 9;
            x.s_dmac_tag.next = u64::from(tag::TXQ).to_bits();
            let mut wo = Bits::<WO_REGS>::default();
            wo = wo.replace_bit(wo_bit("TXT", "OP_GO"), c == 20);
            x.wo.next = wo;
            x.c_res.valid.next = c == 23;
            x.c_res.psn.next = 77u64.to_bits();
            let req = x.m_dmar_valid.val().then(|| {
                (
                    x.m_dmar_addr.val().to_u64(),
                    x.m_dmar_len.val().to_u64(),
                    x.m_dmar_tag.val().to_u64(),
                )
            });
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            beat = match (beat, req) {
                (None, Some(_)) => Some(0),
                (Some(9), _) | (None, None) => None,
                (Some(k), _) => Some(k + 1),
            };
            let cfg = x
                .c_cfg
                .we
                .val()
                .then(|| (x.c_cfg.addr.val().to_u64(), x.c_cfg.data.val().to_u64()));
            let mut s = seen.lock().unwrap();
            s.0.push(req);
            s.1.push(cfg);
            s.2 += x.irq_inc2.val().to_u64();
        }
        x.ro_rd_valid.next = true;
        for src in RO_READ {
            x.ro_rd_sel.next = ro_place(src).to_bits();
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            seen.lock().unwrap().3.push(x.ro_rd_data.val().to_u64());
        }
        sim.done(x)
    });
    let mut uut = HostIf::<64, 8>::default();
    uut.connect_all();
    sim.run(Box::new(uut), 100_000).unwrap();
    Arc::try_unwrap(out).unwrap().into_inner().unwrap()
}

#[test]
fn rust_hdl_model_runs_the_tx_queue_and_a_register_operation() {
    let (reqs, cfgs, inc_tx, ro) = simulate();
    // One read: the entry, 80 bytes at the queue's base, tag 0.
    let reqs: Vec<_> = reqs.into_iter().flatten().collect();
    assert_eq!(reqs, vec![(0x8000, 80, u64::from(tag::TXQ))]);
    // Its table write, issued once.
    let cfgs: Vec<_> = cfgs.into_iter().flatten().collect();
    assert_eq!(cfgs, vec![(0x155, 0x1234_5678_9ABC_DEF0)]);
    assert_eq!(inc_tx, 1);
    // The registers of RO_READ: the entry consumed and counted, the
    // register operation done with its result.
    assert_eq!(ro, vec![1, 1, 0, 0b010, 77]);
}
