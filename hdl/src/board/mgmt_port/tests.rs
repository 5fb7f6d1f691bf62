//! rust-hdl simulation of [`MgmtPort`] from the serial line ([`HostLink`]):
//! a host-side UART sends requests and reads responses, the real BAR0
//! register file answers, and a DMA read sees what a MEM_WRITE put in the
//! memory.

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::*;
use crate::board::mgmt::proto::*;
use crate::board::mgmt::tests::{request, response};
use crate::host_if::reg_file::rw_regs;

/// Clocks per bit on the simulated line.
const CPB: usize = 4;

/// Sends `bytes` over the line and gathers `want` response bytes (or stops
/// after a limit).
fn exchange(
    sim: &mut Sim<HostLink<5, 8>>,
    mut x: Box<HostLink<5, 8>>,
    bytes: &[u8],
    want: usize,
) -> Result<(Box<HostLink<5, 8>>, Vec<u8>), SimError> {
    let mut got = Vec::new();
    let mut sent = 0;
    let mut clock = 0;
    let limit = 12 * CPB * (bytes.len() + want + 8);
    while (sent < bytes.len() || got.len() < want) && clock < limit {
        x.host_valid.next = sent < bytes.len();
        x.host_data.next = u64::from(*bytes.get(sent).unwrap_or(&0)).into();
        if sent < bytes.len() && x.host_ready.val() {
            sent += 1;
        }
        if x.back_valid.val() {
            got.push(x.back_data.val().index() as u8);
        }
        wait_clock_true!(sim, clock, x);
        wait_clock_false!(sim, clock, x);
        clock += 1;
    }
    x.host_valid.next = false;
    Ok((x, got))
}

#[test]
fn registers_and_memory_over_the_line() {
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<HostLink<5, 8>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<HostLink<5, 8>>| {
        let mut x = sim.init()?;
        wait_clock_false!(sim, clock, x);
        let mut rng = SmallRng::seed_from_u64(16);
        // A read/write register of the real register file keeps its bits.
        let (block, reg, bits) = rw_regs()[0];
        let at = u32::from(block.addr(reg.name));
        let stored = ((1u64 << bits) - 1) as u32;
        let mut script = vec![
            (
                request(REG_WRITE, at, 4, &u32::MAX.to_le_bytes()),
                response(REG_WRITE, OK, &[]),
            ),
            (
                request(REG_READ, at, 4, &[]),
                response(REG_READ, OK, &stored.to_le_bytes()),
            ),
        ];
        // A burst into the memory and back.
        let (addr, len) = (37usize, 40usize);
        let data: Vec<u8> = (0..len).map(|_| rng.r#gen()).collect();
        script.push((
            request(MEM_WRITE, addr as u32, len as u16, &data),
            response(MEM_WRITE, OK, &[]),
        ));
        script.push((
            request(MEM_READ, addr as u32, len as u16, &[]),
            response(MEM_READ, OK, &data),
        ));
        for (req, want) in script {
            let (y, got) = exchange(&mut sim, x, &req, want.len())?;
            x = y;
            sim_assert_eq!(sim, got, want, x);
        }
        // The NIC's DMA read port sees the same bytes.
        x.dmar_valid.next = true;
        x.dmar_addr.next = (addr as u64).into();
        x.dmar_len.next = (len as u64).into();
        let mut beats = Vec::new();
        for _ in 0..40 {
            if x.dmar_valid.val() && x.dmar_ready.val() {
                x.dmar_valid.next = false;
            }
            if x.dmac_tvalid.val() {
                sim_assert_eq!(sim, x.dmac_tag.val().index(), 5, x);
                let keep = x.dmac_tkeep.val().index();
                let word = x.dmac_tdata.val().to_u64().to_le_bytes();
                beats.extend((0..8).filter(|i| keep >> i & 1 == 1).map(|i| word[i]));
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        sim_assert_eq!(sim, beats, data, x);
        sim.done(x)
    });
    sim.run(Box::new(HostLink::new(CPB)), 10_000_000).unwrap();
}
