//! rust-hdl simulation of [`MgmtPort`] from the serial line: a host-side
//! UART sends requests and reads responses, the real BAR0 register file
//! answers, and a DMA read sees what a MEM_WRITE put in the memory.

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::*;
use crate::board::mgmt::proto::*;
use crate::board::mgmt::tests::{request, response};
use crate::host_if::RegFile;
use crate::host_if::reg_file::rw_regs;

/// Clocks per bit on the simulated line.
const CPB: usize = 4;

/// The port with a host's UART on the line and the register file on BAR0.
#[derive(LogicBlock)]
struct Bench {
    clock: Signal<In, Clock>,
    host_data: Signal<In, Bits<8>>,
    host_valid: Signal<In, Bit>,
    host_ready: Signal<Out, Bit>,
    back_data: Signal<Out, Bits<8>>,
    back_valid: Signal<Out, Bit>,
    dmar_valid: Signal<In, Bit>,
    dmar_ready: Signal<Out, Bit>,
    dmar_addr: Signal<In, Bits<64>>,
    dmar_len: Signal<In, Bits<16>>,
    dmac_tdata: Signal<Out, Bits<64>>,
    dmac_tkeep: Signal<Out, Bits<8>>,
    dmac_tvalid: Signal<Out, Bit>,
    dmac_tag: Signal<Out, Bits<4>>,
    host_tx: UartTx,
    host_rx: UartRx,
    port: MgmtPort<5, 8>,
    regs: RegFile<64>,
}

impl Logic for Bench {
    #[hdl_gen]
    fn update(&mut self) {
        self.host_tx.clock.next = self.clock.val();
        self.host_rx.clock.next = self.clock.val();
        self.port.clock.next = self.clock.val();
        self.regs.clock.next = self.clock.val();
        self.host_tx.rst.next = false;
        self.host_rx.rst.next = false;
        self.port.rst.next = false;
        self.regs.rst.next = false;
        self.host_tx.data.next = self.host_data.val();
        self.host_tx.valid.next = self.host_valid.val();
        self.host_ready.next = self.host_tx.ready.val();
        self.port.rxd.next = self.host_tx.txd.val();
        self.host_rx.rxd.next = self.port.txd.val();
        self.back_data.next = self.host_rx.data.val();
        self.back_valid.next = self.host_rx.valid.val();
        self.regs.bar_wr_valid.next = self.port.bar_wr_valid.val();
        self.regs.bar_wr_addr.next = self.port.bar_wr_addr.val();
        self.regs.bar_wr_data.next = self.port.bar_wr_data.val();
        self.regs.bar_rd_valid.next = self.port.bar_rd_valid.val();
        self.regs.bar_rd_addr.next = self.port.bar_rd_addr.val();
        self.port.bar_rd_resp_valid.next = self.regs.bar_rd_resp_valid.val();
        self.port.bar_rd_resp_data.next = self.regs.bar_rd_resp_data.val();
        self.regs.ro.next = 0.into();
        // The DMA read port is the test's; the write port idles.
        self.port.m_dmar_valid.next = self.dmar_valid.val();
        self.dmar_ready.next = self.port.m_dmar_ready.val();
        self.port.m_dmar_addr.next = self.dmar_addr.val();
        self.port.m_dmar_len.next = self.dmar_len.val();
        self.port.m_dmar_tag.next = 5.into();
        self.dmac_tdata.next = self.port.s_dmac_tdata.val();
        self.dmac_tkeep.next = self.port.s_dmac_tkeep.val();
        self.dmac_tvalid.next = self.port.s_dmac_tvalid.val();
        self.dmac_tag.next = self.port.s_dmac_tag.val();
        self.port.s_dmac_tready.next = true;
        self.port.m_dmaw_addr.next = 0.into();
        self.port.m_dmaw_first.next = false;
        self.port.m_dmaw_tdata.next = 0.into();
        self.port.m_dmaw_tkeep.next = 0.into();
        self.port.m_dmaw_tvalid.next = false;
    }
}

/// Sends `bytes` over the line and gathers `want` response bytes (or stops
/// after a limit).
fn exchange(
    sim: &mut Sim<Bench>,
    mut x: Box<Bench>,
    bytes: &[u8],
    want: usize,
) -> Result<(Box<Bench>, Vec<u8>), SimError> {
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
    sim.add_clock(5, |x: &mut Box<Bench>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Bench>| {
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
    sim.run(Box::new(bench()), 10_000_000).unwrap();
}

fn bench() -> Bench {
    Bench {
        clock: Default::default(),
        host_data: Default::default(),
        host_valid: Default::default(),
        host_ready: Default::default(),
        back_data: Default::default(),
        back_valid: Default::default(),
        dmar_valid: Default::default(),
        dmar_ready: Default::default(),
        dmar_addr: Default::default(),
        dmar_len: Default::default(),
        dmac_tdata: Default::default(),
        dmac_tkeep: Default::default(),
        dmac_tvalid: Default::default(),
        dmac_tag: Default::default(),
        host_tx: UartTx::new(CPB),
        host_rx: UartRx::new(CPB),
        port: MgmtPort::new(CPB),
        regs: Default::default(),
    }
}
