//! [`UartDevice`] end to end against the board's management path in rust-hdl's
//! simulator: the device's bytes go through a socket pair into a simulated UART,
//! `MgmtEngine`, `LocalMem` and the real BAR0 register file (`RegFile`), and back.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use metaroce_hdl::board::local_mem::LocalMem;
use metaroce_hdl::board::mgmt::MgmtEngine;
use metaroce_hdl::board::uart::{UartRx, UartTx};
use metaroce_hdl::host_if::RegFile;
use metaroce_hdl::host_if::reg_file::rw_regs;
use rust_hdl::prelude::*;

use super::*;
use crate::hw::regs::Blocks;

/// Clocks per bit of the simulated line.
const CPB: usize = 4;
/// Word address bits of the board's memory: 8 KiB.
const N: usize = 10;
/// Its bytes.
const WINDOW: usize = LocalMem::<N>::BYTES;

/// The board's management path, with the host's UART on the other end of the line.
#[derive(LogicBlock)]
struct Board {
    clock: Signal<In, Clock>,
    host_data: Signal<In, Bits<8>>,
    host_valid: Signal<In, Bit>,
    host_ready: Signal<Out, Bit>,
    back_data: Signal<Out, Bits<8>>,
    back_valid: Signal<Out, Bit>,
    host_tx: UartTx,
    host_rx: UartRx,
    rx: UartRx,
    tx: UartTx,
    eng: MgmtEngine<13>,
    mem: LocalMem<N>,
    regs: RegFile<64>,
}

impl Logic for Board {
    #[hdl_gen]
    fn update(&mut self) {
        self.host_tx.clock.next = self.clock.val();
        self.host_rx.clock.next = self.clock.val();
        self.rx.clock.next = self.clock.val();
        self.tx.clock.next = self.clock.val();
        self.eng.clock.next = self.clock.val();
        self.mem.clock.next = self.clock.val();
        self.regs.clock.next = self.clock.val();
        self.host_tx.rst.next = false;
        self.host_rx.rst.next = false;
        self.rx.rst.next = false;
        self.tx.rst.next = false;
        self.eng.rst.next = false;
        self.mem.rst.next = false;
        self.regs.rst.next = false;
        // The line, both ways.
        self.host_tx.data.next = self.host_data.val();
        self.host_tx.valid.next = self.host_valid.val();
        self.host_ready.next = self.host_tx.ready.val();
        self.rx.rxd.next = self.host_tx.txd.val();
        self.host_rx.rxd.next = self.tx.txd.val();
        self.back_data.next = self.host_rx.data.val();
        self.back_valid.next = self.host_rx.valid.val();
        // The engine between the UART, BAR0 and the memory.
        self.eng.rx_data.next = self.rx.data.val();
        self.eng.rx_valid.next = self.rx.valid.val();
        self.tx.data.next = self.eng.tx_data.val();
        self.tx.valid.next = self.eng.tx_valid.val();
        self.eng.tx_ready.next = self.tx.ready.val();
        self.regs.bar_wr_valid.next = self.eng.bar_wr_valid.val();
        self.regs.bar_wr_addr.next = self.eng.bar_wr_addr.val();
        self.regs.bar_wr_data.next = self.eng.bar_wr_data.val();
        self.regs.bar_rd_valid.next = self.eng.bar_rd_valid.val();
        self.regs.bar_rd_addr.next = self.eng.bar_rd_addr.val();
        self.eng.bar_rd_resp_valid.next = self.regs.bar_rd_resp_valid.val();
        self.eng.bar_rd_resp_data.next = self.regs.bar_rd_resp_data.val();
        self.regs.ro.next = 0.into();
        self.mem.mem_valid.next = self.eng.mem_valid.val();
        self.mem.mem_write.next = self.eng.mem_write.val();
        self.mem.mem_addr.next = self.eng.mem_addr.val();
        self.mem.mem_wdata.next = self.eng.mem_wdata.val();
        self.eng.mem_rdata.next = self.mem.mem_rdata.val();
        // No NIC on the DMA ports.
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

fn board() -> Board {
    Board {
        clock: Default::default(),
        host_data: Default::default(),
        host_valid: Default::default(),
        host_ready: Default::default(),
        back_data: Default::default(),
        back_valid: Default::default(),
        host_tx: UartTx::new(CPB),
        host_rx: UartRx::new(CPB),
        rx: UartRx::new(CPB),
        tx: UartTx::new(CPB),
        // Frames idle for 16 characters are dropped.
        eng: MgmtEngine::new(16 * 10 * CPB),
        mem: Default::default(),
        regs: Default::default(),
    }
}

/// Runs `host` on a [`UartDevice`] whose stream is bridged, byte by byte, into the
/// simulated board until `host` returns.
fn with_board(host: impl FnOnce(&mut UartDevice<UnixStream>) + Send + 'static) {
    let (near, far) = UnixStream::pair().unwrap();
    near.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let driver = std::thread::spawn(move || {
        let mut dev = UartDevice::new(near, "sim", WINDOW, Duration::from_millis(10));
        host(&mut dev);
    });
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Board>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Board>| {
        let mut x = sim.init()?;
        wait_clock_false!(sim, clock, x);
        let mut far = &far;
        far.set_nonblocking(true).unwrap();
        let mut pending: Option<u8> = None;
        loop {
            if pending.is_none() {
                let mut b = [0u8; 1];
                match far.read(&mut b) {
                    Ok(0) => break,
                    Ok(_) => pending = Some(b[0]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("bridge: {e}"),
                }
            }
            x.host_valid.next = pending.is_some();
            x.host_data.next = u64::from(pending.unwrap_or(0)).into();
            if pending.is_some() && x.host_ready.val() {
                pending = None;
            }
            if x.back_valid.val() {
                far.write_all(&[x.back_data.val().index() as u8]).unwrap();
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(board()), 1 << 40).unwrap();
    driver.join().unwrap();
}

#[test]
fn registers_over_the_simulated_line() {
    with_board(|dev| {
        // The register blocks, walked as the driver does.
        let blocks = Blocks::discover(dev).expect("the block list over the UART");
        assert_eq!(blocks.id, 0);
        assert!(blocks.cfg != 0 && blocks.irq != 0);
        // A read/write register keeps its bits.
        let (block, reg, bits) = rw_regs()[0];
        let at = u32::from(block.addr(reg.name));
        dev.write32(at, u32::MAX).unwrap();
        assert_eq!(u64::from(dev.read32(at).unwrap()), (1u64 << bits) - 1);
        assert!(matches!(dev.read32(2), Err(DeviceError::BadOffset { .. })));

        // Application memory is refused: the board cannot reach it.
        let app = [0u8; 64];
        assert!(dev.map_dma(app.as_ptr() as u64, 64).is_err());
    });
}
