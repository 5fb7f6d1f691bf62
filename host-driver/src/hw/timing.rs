//! Where the device backend's wall time goes: the driver's counters around its engine
//! calls and its device accesses ([`TimedDevice`]), and the device process's own (its
//! board information: model cycles, time in the model's evaluation, time serving the
//! socket), put together in one [`DeviceTiming`].
//!
//! Every figure is a running total; [`DeviceTiming::since`] gives the part of a run
//! between two snapshots. Clock reads cost tens of nanoseconds each; the driver takes
//! two per engine call and per device access, which are microseconds apiece.

use std::time::Instant;

use crate::device::board::{BoardCounter, BoardInfo};
use crate::device::{Device, DeviceError, DmaRegion};
use crate::eventfd::EventFd;

/// Nanoseconds since `t`.
pub(crate) fn ns_since(t: Instant) -> u64 {
    t.elapsed().as_nanos() as u64
}

/// The driver's device accesses: counts and the time spent in them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceCalls {
    /// BAR0 reads.
    pub bar_reads: u64,
    /// Time in BAR0 reads, ns.
    pub bar_read_ns: u64,
    /// BAR0 writes.
    pub bar_writes: u64,
    /// Time in BAR0 writes, ns.
    pub bar_write_ns: u64,
    /// `sync_for_device` and `sync_for_cpu` calls.
    pub syncs: u64,
    /// Bytes they covered.
    pub sync_bytes: u64,
    /// Time in them, ns (bounce copies on a vfio-user device).
    pub sync_ns: u64,
    /// Time in the other calls (DMA maps, interrupts, reset), ns.
    pub other_ns: u64,
}

impl DeviceCalls {
    /// Time in every device call, ns.
    pub fn total_ns(&self) -> u64 {
        self.bar_read_ns + self.bar_write_ns + self.sync_ns + self.other_ns
    }
}

/// A [`Device`] that counts its calls and the time they take.
pub struct TimedDevice {
    inner: Box<dyn Device>,
    /// What it counted.
    pub calls: DeviceCalls,
}

impl TimedDevice {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn Device>) -> Self {
        TimedDevice {
            inner,
            calls: DeviceCalls::default(),
        }
    }

    /// Runs `f` on the device, adding its time to the counter `pick` chooses.
    fn timed<R>(
        &mut self,
        pick: fn(&mut DeviceCalls) -> &mut u64,
        f: impl FnOnce(&mut dyn Device) -> R,
    ) -> R {
        let t = Instant::now();
        let r = f(self.inner.as_mut());
        *pick(&mut self.calls) += ns_since(t);
        r
    }

    /// A bounce copy of `len` bytes.
    fn sync(
        &mut self,
        len: usize,
        f: impl FnOnce(&mut dyn Device) -> Result<(), DeviceError>,
    ) -> Result<(), DeviceError> {
        self.calls.syncs += 1;
        self.calls.sync_bytes += len as u64;
        self.timed(|c| &mut c.sync_ns, f)
    }
}

impl Device for TimedDevice {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn bar_size(&self) -> u32 {
        self.inner.bar_size()
    }

    fn read32(&mut self, offset: u32) -> Result<u32, DeviceError> {
        self.calls.bar_reads += 1;
        self.timed(|c| &mut c.bar_read_ns, |d| d.read32(offset))
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), DeviceError> {
        self.calls.bar_writes += 1;
        self.timed(|c| &mut c.bar_write_ns, |d| d.write32(offset, value))
    }

    fn alloc_dma(&mut self, len: usize) -> Result<DmaRegion, DeviceError> {
        self.timed(|c| &mut c.other_ns, |d| d.alloc_dma(len))
    }

    fn map_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        self.timed(|c| &mut c.other_ns, |d| d.map_dma(addr, len))
    }

    fn unmap_dma(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        self.timed(|c| &mut c.other_ns, |d| d.unmap_dma(addr, len))
    }

    fn sync_for_device(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        self.sync(len, |d| d.sync_for_device(addr, len))
    }

    fn sync_for_cpu(&mut self, addr: u64, len: usize) -> Result<(), DeviceError> {
        self.sync(len, |d| d.sync_for_cpu(addr, len))
    }

    fn irq_count(&self) -> u32 {
        self.inner.irq_count()
    }

    fn enable_irqs(&mut self, fds: &[&EventFd]) -> Result<(), DeviceError> {
        self.timed(|c| &mut c.other_ns, |d| d.enable_irqs(fds))
    }

    fn reset(&mut self) -> Result<(), DeviceError> {
        self.timed(|c| &mut c.other_ns, |d| d.reset())
    }

    fn read_board_info(&mut self) -> Result<Option<BoardInfo>, DeviceError> {
        self.inner.read_board_info()
    }
}

/// The driver's own time: its progress thread and the control operations it runs for
/// the Verbs layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriverTime {
    /// Time in the engine's calls (`Nic::*`: packets, results, timers, verbs), ns.
    pub engine_ns: u64,
    /// Time the driver worked (firmware rounds and the mirroring after control
    /// operations: engine calls, device calls, tables and rings), ns.
    pub busy_ns: u64,
    /// Time the progress thread waited for the device with TX table operations in
    /// flight (their results not yet in the event ring), ns.
    pub wait_ns: u64,
    /// Time the progress thread slept with nothing to do, ns.
    pub idle_ns: u64,
    /// Firmware rounds.
    pub rounds: u64,
    /// TX table operations posted in the TX queue.
    pub table_ops: u64,
    /// Data packets and PROBEs posted (TX queue descriptors).
    pub descriptors: u64,
    /// Verdict events and firmware datagrams taken from the device.
    pub rx_events: u64,
}

/// Where a device backend's wall time went (running totals; see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceTiming {
    /// Wall time since the driver started, ns.
    pub wall_ns: u64,
    /// The driver's time.
    pub driver: DriverTime,
    /// The driver's device accesses.
    pub device: DeviceCalls,
    /// The device process's model: clock cycles run.
    pub model_cycles: u64,
    /// Of which cycles in which a port of the device moved something (BAR access,
    /// MAC beat, DMA request or beat, interrupt).
    pub model_busy_cycles: u64,
    /// Time in the model's evaluation (`eval` and `tick`), ns (sampled, see
    /// `docs/device.md`).
    pub model_eval_ns: u64,
    /// Time the device process's socket thread spent on messages (BAR accesses, maps,
    /// syncs' protocol part), ns.
    pub socket_ns: u64,
    /// Whether the device gave board information (the `model_*` and `socket_ns`
    /// figures; a board has none).
    pub has_board: bool,
}

impl DeviceTiming {
    /// Fills the device process's part from its board information.
    pub(crate) fn set_board(&mut self, b: &BoardInfo) {
        self.model_cycles = b.counter(BoardCounter::Cycles);
        self.model_busy_cycles = b.counter(BoardCounter::BusyCycles);
        self.model_eval_ns = b.counter(BoardCounter::ModelNs);
        self.socket_ns = b.counter(BoardCounter::SocketNs);
        self.has_board = true;
    }

    /// What happened between `earlier` and this snapshot.
    pub fn since(&self, earlier: &DeviceTiming) -> DeviceTiming {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let (x, y) = (&self.driver, &earlier.driver);
        let (p, q) = (&self.device, &earlier.device);
        DeviceTiming {
            wall_ns: d(self.wall_ns, earlier.wall_ns),
            driver: DriverTime {
                engine_ns: d(x.engine_ns, y.engine_ns),
                busy_ns: d(x.busy_ns, y.busy_ns),
                wait_ns: d(x.wait_ns, y.wait_ns),
                idle_ns: d(x.idle_ns, y.idle_ns),
                rounds: d(x.rounds, y.rounds),
                table_ops: d(x.table_ops, y.table_ops),
                descriptors: d(x.descriptors, y.descriptors),
                rx_events: d(x.rx_events, y.rx_events),
            },
            device: DeviceCalls {
                bar_reads: d(p.bar_reads, q.bar_reads),
                bar_read_ns: d(p.bar_read_ns, q.bar_read_ns),
                bar_writes: d(p.bar_writes, q.bar_writes),
                bar_write_ns: d(p.bar_write_ns, q.bar_write_ns),
                syncs: d(p.syncs, q.syncs),
                sync_bytes: d(p.sync_bytes, q.sync_bytes),
                sync_ns: d(p.sync_ns, q.sync_ns),
                other_ns: d(p.other_ns, q.other_ns),
            },
            model_cycles: d(self.model_cycles, earlier.model_cycles),
            model_busy_cycles: d(self.model_busy_cycles, earlier.model_busy_cycles),
            model_eval_ns: d(self.model_eval_ns, earlier.model_eval_ns),
            socket_ns: d(self.socket_ns, earlier.socket_ns),
            has_board: self.has_board,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::regs::tests::FakeBar;

    #[test]
    fn device_calls_are_counted_and_timed() {
        let mut d = TimedDevice::new(Box::new(FakeBar::new()));
        d.write32(0x100, 7).expect("write");
        assert_eq!(d.read32(0x100).expect("read"), 7);
        d.read32(0x104).expect("read");
        assert_eq!((d.calls.bar_reads, d.calls.bar_writes), (2, 1));
        d.sync_for_cpu(0x1000, 64).expect("fake sync");
        assert_eq!((d.calls.syncs, d.calls.sync_bytes), (1, 64));
        let later = DeviceTiming {
            device: d.calls,
            wall_ns: 10,
            ..DeviceTiming::default()
        };
        let earlier = DeviceTiming {
            wall_ns: 4,
            ..DeviceTiming::default()
        };
        let diff = later.since(&earlier);
        assert_eq!((diff.wall_ns, diff.device.bar_reads), (6, 2));
    }
}
