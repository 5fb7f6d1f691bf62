//! [`UartDevice`] end to end against the board's management path in rust-hdl's
//! simulator: the device's bytes go through a socket pair into the board's
//! management path (`MgmtPort`: UART, `MgmtEngine`, `LocalMem`) and the real BAR0
//! register file (`RegFile`), and back.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use metaroce_hdl::board::mgmt_port::{HostLink, MgmtPort};
use metaroce_hdl::host_if::reg_file::rw_regs;
use rust_hdl::prelude::*;

use super::*;
use crate::hw::regs::Blocks;

/// Clocks per bit of the simulated line.
const CPB: usize = 4;
/// Word address bits of the board's memory: 8 KiB.
const N: usize = 10;
/// Its bytes.
const WINDOW: usize = MgmtPort::<N, 13>::BYTES;

/// The board's management path, with the host's UART on the other end of the line.
type Board = HostLink<N, 13>;

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
    sim.run(Box::new(Board::new(CPB)), 1 << 40).unwrap();
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
