//! Loopback rate of `metaroce-udp`: one sender thread, one receiver thread.
//!
//! `cargo run --release -p metaroce-udp --example udp_rate -- [datagram_bytes] [count]`
//! prints datagrams/s and Gbit/s received, with GSO+GRO on and off.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metaroce_udp::{Endpoint, EndpointConfig, MAX_BATCH, TxPacket};

fn run(size: usize, count: usize, offload: bool) -> Result<(), Box<dyn std::error::Error>> {
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let mut rcfg = EndpointConfig::new(ip, 0, vec![0]);
    rcfg.gro = offload;
    rcfg.max_datagram = size;
    rcfg.recv_buffer = 32 << 20;
    let rx_ep = Endpoint::bind(&rcfg)?;
    let mut scfg = EndpointConfig::new(ip, 0, vec![0; 8]);
    scfg.gso = offload;
    let tx_ep = Endpoint::bind(&scfg)?;
    let dst = rx_ep.listen_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_rx = Arc::clone(&stop);
    let receiver = std::thread::spawn(move || -> Result<(u64, u64), metaroce_udp::Error> {
        let mut batch = rx_ep.new_rx_batch();
        let (mut n, mut bytes) = (0u64, 0u64);
        while !stop_rx.load(Ordering::Relaxed) {
            rx_ep.wait(Some(Duration::from_millis(10)), None)?;
            while rx_ep.recv(&mut batch)? > 0 {
                for d in batch.datagrams() {
                    n += 1;
                    bytes += d.data.len() as u64;
                }
            }
        }
        Ok((n, bytes))
    });
    let buf = vec![0x5au8; size];
    let start = Instant::now();
    let mut sent = 0;
    while sent < count {
        // One path per batch of MAX_BATCH: equal sizes to one destination form GSO runs.
        let path = (sent / MAX_BATCH) % 8;
        let pkts = [TxPacket {
            path,
            dst,
            ecn: None,
            data: &buf,
        }; MAX_BATCH];
        let k = MAX_BATCH.min(count - sent);
        let n = tx_ep.send(&pkts[..k])?;
        if n == 0 {
            tx_ep.wait(Some(Duration::from_millis(10)), Some(path))?;
        }
        sent += n;
    }
    let send_time = start.elapsed();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let (n, bytes) = receiver.join().map_err(|_| "receiver panicked")??;
    let secs = send_time.as_secs_f64();
    println!(
        "size {size} offload {offload:5} (gso {}): sent {sent} in {secs:.3}s = {:.0} dgram/s; received {n} ({:.1}%) = {:.2} Gbit/s",
        tx_ep.gso_enabled(),
        sent as f64 / secs,
        100.0 * n as f64 / sent as f64,
        bytes as f64 * 8.0 / secs / 1e9,
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let size = args.next().map_or(Ok(4096), |s| s.parse())?;
    let count = args.next().map_or(Ok(500_000), |s| s.parse())?;
    run(size, count, true)?;
    run(size, count, false)
}
