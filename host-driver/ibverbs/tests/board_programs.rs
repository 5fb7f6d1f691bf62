//! Unmodified Verbs programs (Debian's `ibv_devinfo`, `ibv_rc_pingpong` and
//! `ibv_srq_pingpong`, perftest's `ib_write_bw`, `ib_send_bw` and `ib_atomic_bw`) on
//! the simulated board, against a soft NIC and against
//! a second board, through MetaRoCE's `libibverbs.so.1`:
//! one program runs on the `device` backend (`METAROCE_IBV_BACKEND=device`,
//! `METAROCE_IBV_DEVICE` = the socket of a device process this test starts — the
//! Verilated `NicDevice64` served over vfio-user, its MAC port bridged to UDP on
//! 127.0.0.2), the other on a soft NIC on 127.0.0.1. Sizes are small: every packet of
//! the device path costs BAR round trips to the model (docs/verbs.md gives the full
//! commands and what they take). Without Verilator the crate does not build; only a
//! build with the `METAROCE_SKIP_VERILATOR=1` opt-out skips (printing `SKIP`).

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Instant;

use common::*;
use metaroce_sim_tb::device_server::{DeviceServer, ServeError, ServerConfig};

/// The board's address: not the soft NIC's (docs/driver.md: the board's ACKs leave
/// from the source port of what they acknowledge, bound on the board's own address).
const BOARD_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// A device process on a socket in a temporary directory, and the environment that
/// puts a program on it.
struct Board {
    server: DeviceServer,
    _dir: tempfile::TempDir,
    env: Vec<(&'static str, String)>,
}

/// Starts a [`Board`] on [`BOARD_IP`]; `None` (skip) in a build without the models
/// (`METAROCE_SKIP_VERILATOR=1`).
fn board() -> Option<Board> {
    board_on(BOARD_IP)
}

/// Starts a [`Board`] whose MAC port is bridged to UDP on `ip`; `None` (skip) in a
/// build without the models (`METAROCE_SKIP_VERILATOR=1`).
fn board_on(ip: IpAddr) -> Option<Board> {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nic.sock");
    match DeviceServer::start(ServerConfig::new(&socket, SocketAddr::new(ip, 0))) {
        Ok(server) => Some(Board {
            server,
            env: vec![
                ("METAROCE_IBV_BACKEND", "device".to_string()),
                ("METAROCE_IBV_DEVICE", socket.display().to_string()),
            ],
            _dir: dir,
        }),
        Err(ServeError::Model(e)) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("the device process: {e}"),
    }
}

#[test]
fn rc_pingpong_between_the_board_and_a_soft_nic_validated() {
    let _g = serial();
    let Some(Board { server, _dir, env }) = board() else {
        return;
    };
    // `ibv_rc_pingpong -g 0 -n 100` at its default size (4096), every received
    // buffer validated (-c): the board serves, a soft NIC's client connects.
    let out = pingpong(&["-s", "4096", "-n", "100", "-c"], &env, &[]);
    eprintln!("board serves: {out}");
    // The other way round, with completion events (the board's interrupts).
    let out = pingpong(&["-e", "-s", "1024", "-n", "50", "-c"], &[], &env);
    eprintln!("board connects, -e: {out}");
    eprintln!("board counters: {:?}", server.stop());
}

/// `ib_write_bw` (which does not check the data) with a message size that keeps the
/// run to seconds; the default size is [`write_bw_at_the_default_size`].
#[test]
fn write_bw_from_the_board_to_a_soft_nic_and_back() {
    let _g = serial();
    let Some(Board { server, _dir, env }) = board() else {
        return;
    };
    // The client WRITEs: first the board (the RTL fetches the payload from the
    // program's registered memory), then the soft NIC into the board.
    let out = perftest("ib_write_bw", &["-s", "4096", "-n", "200"], &[], &env);
    eprintln!("board → soft NIC:\n{out}");
    let out = perftest("ib_write_bw", &["-s", "4096", "-n", "200"], &env, &[]);
    eprintln!("soft NIC → board:\n{out}");
    eprintln!("board counters: {:?}", server.stop());
}

/// `ib_write_bw -n 200` at its default size (65,536 bytes) both ways, timed; by hand
/// (`cargo test -p metaroce-ibverbs --test board_programs -- --ignored --nocapture`),
/// as the device path makes it take minutes rather than seconds.
#[test]
#[ignore]
fn write_bw_at_the_default_size() {
    let _g = serial();
    let Some(Board { server, _dir, env }) = board() else {
        return;
    };
    for (what, server_env, client_env) in [
        ("board → soft NIC", &[][..], &env[..]),
        ("soft NIC → board", &env[..], &[][..]),
    ] {
        let t = Instant::now();
        let out = perftest("ib_write_bw", &["-n", "200"], server_env, client_env);
        eprintln!("{what}: {:.1} s\n{out}", t.elapsed().as_secs_f64());
    }
    eprintln!("board counters: {:?}", server.stop());
}

/// `ibv_devinfo -v` on the device backend describes the board: active Ethernet port,
/// its MTU, and as GID the board's own address.
#[test]
fn ibv_devinfo_describes_the_board() {
    let _g = serial();
    let Some(Board { server, _dir, env }) = board() else {
        return;
    };
    devinfo_shows(&env, "127.0.0.2", &[]);
    server.stop();
}

/// `ib_send_bw` both ways between the board and a soft NIC: SENDs land in the posted
/// receives (through the firmware's receive rings on the board).
#[test]
fn send_bw_between_the_board_and_a_soft_nic() {
    let _g = serial();
    let Some(Board { server, _dir, env }) = board() else {
        return;
    };
    let out = perftest("ib_send_bw", &["-s", "4096", "-n", "200"], &[], &env);
    eprintln!("board → soft NIC:\n{out}");
    let out = perftest("ib_send_bw", &["-s", "4096", "-n", "200"], &env, &[]);
    eprintln!("soft NIC → board:\n{out}");
    eprintln!("board counters: {:?}", server.stop());
}

/// `ib_atomic_bw` both ways between the board and a soft NIC (fetch-and-add with the
/// board as requester, compare-and-swap with the board as responder: its firmware
/// executes what the RTL hands up), then `ibv_srq_pingpong` (validated) with the board
/// serving 2 QPs from its SRQ (the RTL's 4 QP entries bound the QPs).
#[test]
fn atomic_bw_and_srq_pingpong_between_the_board_and_a_soft_nic() {
    let _g = serial();
    let Some(Board { server, _dir, env }) = board() else {
        return;
    };
    let out = perftest("ib_atomic_bw", &["-n", "200"], &[], &env);
    eprintln!("board → soft NIC, fetch-and-add:\n{out}");
    let out = perftest(
        "ib_atomic_bw",
        &["-A", "CMP_AND_SWAP", "-n", "200"],
        &env,
        &[],
    );
    eprintln!("soft NIC → board, compare-and-swap:\n{out}");
    let out = pingpong_program(
        "ibv_srq_pingpong",
        &["-q", "2", "-s", "1024", "-n", "20", "-c"],
        &env,
        &[],
    );
    eprintln!("board serves ibv_srq_pingpong: {out}");
    eprintln!("board counters: {:?}", server.stop());
}

/// Two simulated boards, each its own device process on its own address, run
/// `ibv_rc_pingpong` (validated) and `ib_write_bw` against each other.
#[test]
fn pingpong_and_write_bw_between_two_boards() {
    let _g = serial();
    let Some(a) = board() else {
        return;
    };
    let Some(b) = board_on(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3))) else {
        return;
    };
    let out = pingpong(&["-s", "4096", "-n", "50", "-c"], &a.env, &b.env);
    eprintln!("board ↔ board: {out}");
    let out = perftest("ib_write_bw", &["-s", "4096", "-n", "100"], &a.env, &b.env);
    eprintln!("board → board:\n{out}");
    eprintln!(
        "board counters: {:?} / {:?}",
        a.server.stop(),
        b.server.stop()
    );
}
