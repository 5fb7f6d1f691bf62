//! The Verbs API test suite (`metaroce-verbs-suite`, the one `metaroce-driver` runs
//! between two soft NICs) on the simulated board: the host driver's `device` backend
//! (the firmware on the host CPU) over vfio-user to a device process
//! (`metaroce_sim_tb::device_server`, the Verilated `NicDevice64`, its MAC port bridged
//! to UDP) started per side, against a soft NIC on loopback (both ways round) and
//! against another board. Data is checked byte for byte.
//!
//! Each board takes its own address in `127.0.0.0/8` other than `127.0.0.1`: the RTL's
//! ACKs leave from the UDP source port of the packet they acknowledge, and the UDP
//! bridge sends each frame from a socket bound to the board's IP and that port, which
//! on a soft NIC's (or a relay's) IP is taken. Tests run one at a time (each device
//! process clocks its model on a core of its own). Skips without Verilator.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use metaroce_driver::backend::{Backend, Control, DatapathStats, EventSink};
use metaroce_driver::hw::DeviceBackend;
use metaroce_driver::verbs::Context;
use metaroce_sim_tb::SimError;
use metaroce_sim_tb::device_server::{DeviceServer, ServeError, ServerConfig};
use metaroce_verbs_suite::{Family, Limits, NicKind, SideOpts};

/// The simulated board: a device process per side, on its own loopback address.
struct Board;

/// One board test at a time: held for each test's duration.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

impl NicKind for Board {
    fn name(&self) -> &'static str {
        "board"
    }

    fn limits(&self) -> Limits {
        Limits {
            // Every packet costs a TX table operation through BAR0, each access a
            // vfio-user round trip to the model (docs/driver.md): ~90 messages/s at
            // 4 KiB, so a bulk transfer of 64 KiB.
            bulk: 64 << 10,
            no_auth: Some("the RTL has no authentication engine (spec §11.4)"),
            // Paths' round trips are 10–20 ms through the device path.
            short_timeout_ns: 200_000_000,
        }
    }

    fn start(&self, o: &SideOpts) -> Result<Context, String> {
        if o.family == Family::V6 {
            return Err(
                "IPv6 loopback has one address (::1), and a board cannot share its IP \
                 with a soft NIC or a relay (docs/driver.md)"
                    .into(),
            );
        }
        static NEXT: AtomicU8 = AtomicU8::new(0);
        let ip = IpAddr::V4(Ipv4Addr::new(
            127,
            0,
            0,
            2 + NEXT.fetch_add(1, Ordering::Relaxed) % 200,
        ));
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("nic.sock");
        let server = match DeviceServer::start(ServerConfig::new(&socket, SocketAddr::new(ip, 0))) {
            Ok(s) => s,
            Err(e @ ServeError::Model(SimError::VerilatorMissing)) => return Err(e.to_string()),
            Err(e) => panic!("the device process: {e}"),
        };
        let paths = o.paths;
        let device = DeviceBackend::open(&socket.display().to_string(), None, |c| {
            c.paths = paths;
        })
        .expect("the driver starts on the device");
        Ok(Context::open(Arc::new(Served {
            driver: device,
            _process: (server, dir),
        })))
    }
}

/// The driver with the device process it runs on: the process stops after the
/// driver's shutdown, when the last Verbs object of the context is gone (also when a
/// failing case unwinds).
struct Served {
    driver: Arc<DeviceBackend>,
    _process: (DeviceServer, tempfile::TempDir),
}

impl Backend for Served {
    fn name(&self) -> &'static str {
        self.driver.name()
    }

    fn address(&self) -> SocketAddr {
        self.driver.address()
    }

    fn control(&self, op: &mut dyn FnMut(Control<'_>)) {
        self.driver.control(op);
    }

    fn set_event_sink(&self, sink: Arc<dyn EventSink>) {
        self.driver.set_event_sink(sink);
    }

    fn datapath_stats(&self) -> DatapathStats {
        self.driver.datapath_stats()
    }

    fn shutdown(&self) {
        self.driver.shutdown();
    }
}

impl Drop for Served {
    /// Stops the driver before the device process, and says why its datapath
    /// stopped if it did (a case's failure message then shows it).
    fn drop(&mut self) {
        self.driver.shutdown();
        if let Some(why) = self.driver.failure() {
            eprintln!("the board's driver stopped: {why}");
        }
    }
}

/// The board on side A, a soft NIC on side B.
mod board_soft {
    use super::*;
    metaroce_verbs_suite::verbs_suite!(Board, metaroce_verbs_suite::Soft, one_at_a_time());
}

/// A soft NIC on side A, the board on side B.
mod soft_board {
    use super::*;
    metaroce_verbs_suite::verbs_suite!(metaroce_verbs_suite::Soft, Board, one_at_a_time());
}

/// Two boards.
mod board_board {
    use super::*;
    metaroce_verbs_suite::verbs_suite!(Board, Board, one_at_a_time());
}
