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
//! process clocks its model on a core of its own). Skips only when built with the
//! opt-out `METAROCE_SKIP_VERILATOR=1` (no models).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use metaroce_driver::backend::{Backend, Control, DatapathStats, EventSink};
use metaroce_driver::hw::DeviceBackend;
use metaroce_driver::verbs::Context;
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
            // Paths' round trips are 10–20 ms through the device path, ten times
            // that on a loaded machine.
            short_timeout_ns: 200_000_000,
            ack_timeout_ns: 200_000_000,
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
            Err(ServeError::Model(e)) if e.is_absent() => return Err(e.to_string()),
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

/// A device that goes away under a running context: the driver's next access to it
/// fails, every QP is flushed (the outstanding receive and the send posted after the
/// failure complete with `WR_FLUSH_ERR`), the context gets the QP's `QpFatal` and then
/// `AsyncEvent::DeviceFatal`, and the driver says why.
#[test]
fn a_vanished_device_flushes_every_qp_and_raises_device_fatal() {
    use metaroce_driver::verbs::*;
    let _g = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nic.sock");
    let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 250));
    let server = match DeviceServer::start(ServerConfig::new(&socket, SocketAddr::new(ip, 0))) {
        Ok(s) => s,
        Err(ServeError::Model(e)) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            return;
        }
        Err(e) => panic!("the device process: {e}"),
    };
    let driver = DeviceBackend::open(&socket.display().to_string(), None, |_| {})
        .expect("the driver starts on the device");
    let ctx = Context::open(driver.clone());
    let pd = ctx.alloc_pd();
    let cq = ctx.create_cq(16, None);
    let qp = pd.create_qp(&QpInit::new(&cq, &cq)).unwrap();
    let mr = pd.alloc_mr(1 << 16, Access::LOCAL_WRITE).unwrap();
    // A peer that never answers: a bound UDP socket.
    let peer = std::net::UdpSocket::bind((ip, 0)).unwrap();
    qp.connect(
        &QpEndpoint {
            qpn: 0x77,
            addr: peer.local_addr().unwrap(),
            psn: 1,
        },
        &ConnectOptions::default(),
    )
    .unwrap();
    qp.post_recv(RecvWr {
        wr_id: 1,
        sgl: mr.sge(0, 4096).into(),
        stream: 0,
    })
    .unwrap();
    assert_eq!(ctx.poll_async_event(), None);

    server.stop();
    // The send's doorbell is the driver's next access to the device, unless its
    // progress thread touched the device first: then the QP is already in ERR and
    // the send is refused at post.
    let posted = qp
        .post_send(&SendRequest::write(2, mr.sge(4096, 64), 0x1000, 0x1234))
        .is_ok();
    let mut want = vec![(1, WcStatus::WrFlushErr)];
    if posted {
        want.push((2, WcStatus::WrFlushErr));
    }
    let mut wcs = Vec::new();
    let mut buf = [Wc::default(); 4];
    let deadline = Instant::now() + Duration::from_secs(60);
    while wcs.len() < want.len() && Instant::now() < deadline {
        let n = cq.poll(&mut buf);
        wcs.extend_from_slice(&buf[..n]);
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut got: Vec<_> = wcs.iter().map(|w| (w.wr_id, w.status)).collect();
    got.sort_by_key(|g| g.0);
    assert_eq!(got, want, "{wcs:?}");
    assert_eq!(qp.state(), QpState::Error);
    // The flush reports the QP as failed too; the device's event comes last.
    let events: Vec<_> = std::iter::from_fn(|| ctx.poll_async_event()).collect();
    let qp_fatal = AsyncEvent::QpFatal {
        qp_num: qp.qpn(),
        status: WcStatus::WrFlushErr,
    };
    assert_eq!(events, [qp_fatal, AsyncEvent::DeviceFatal]);
    let why = driver.failure().expect("the driver says why it stopped");
    eprintln!("the driver stopped: {why}");
}
