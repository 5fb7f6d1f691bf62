//! Unmodified Verbs programs (Debian's `ibv_rc_pingpong` and perftest's `ib_write_bw`)
//! between the simulated board and a soft NIC, through MetaRoCE's `libibverbs.so.1`:
//! one program runs on the `device` backend (`METAROCE_IBV_BACKEND=device`,
//! `METAROCE_IBV_DEVICE` = the socket of a device process this test starts — the
//! Verilated `NicDevice64` served over vfio-user, its MAC port bridged to UDP on
//! 127.0.0.2), the other on a soft NIC on 127.0.0.1. Sizes are small: every packet of
//! the device path costs BAR round trips to the model (docs/verbs.md gives the full
//! commands and what they take). Skips without Verilator.

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Instant;

use common::*;
use metaroce_sim_tb::SimError;
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

/// Starts a [`Board`]; `None` (skip) without Verilator.
fn board() -> Option<Board> {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nic.sock");
    match DeviceServer::start(ServerConfig::new(&socket, SocketAddr::new(BOARD_IP, 0))) {
        Ok(server) => Some(Board {
            server,
            env: vec![
                ("METAROCE_IBV_BACKEND", "device".to_string()),
                ("METAROCE_IBV_DEVICE", socket.display().to_string()),
            ],
            _dir: dir,
        }),
        Err(e @ ServeError::Model(SimError::VerilatorMissing)) => {
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
