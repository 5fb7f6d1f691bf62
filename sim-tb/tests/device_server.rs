//! The simulated board as a vfio-user device process (`metaroce_sim_tb::device_server`)
//! driven by the host driver's vfio-user backend (`metaroce_driver::device::
//! VfioUserDevice`) over a Unix socket in a temporary directory, and by raw hostile
//! bytes. Skips without Verilator.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use metaroce_driver::device::board::{BoardCounter, REGION_BAR0, REGION_BOARD_INFO, REGION_CONFIG};
use metaroce_driver::device::{Device, DeviceError, DmaRegion, VfioUserDevice};
use metaroce_driver::eventfd::EventFd;
use metaroce_sim_tb::device_server::{DeviceServer, ServeError, ServerConfig};
use metaroce_sim_tb::nic_device::regs;
use metaroce_sim_tb::tx_build::{Addresses, NIC_CORE_TX_CFG, configure};
use vmm_sys_util::sock_ctrl_msg::ScmSocket;

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
/// How long a test waits for the free-running model to do something.
const PATIENCE: Duration = Duration::from_secs(10);

/// A device process on a socket in a fresh temporary directory; `None` (skip)
/// without Verilator.
fn start() -> Option<(DeviceServer, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ServerConfig::new(dir.path().join("nic.sock"), SocketAddr::new(LOCALHOST, 0));
    match DeviceServer::start(cfg) {
        Ok(s) => Some((s, dir)),
        Err(ServeError::Model(e)) if e.is_absent() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Walks the register-block list from 0: (type, base) in list order.
fn walk(dev: &mut dyn Device) -> Vec<(u32, u16)> {
    let mut at = 0u32;
    let mut found = Vec::new();
    for _ in 0..64 {
        let ty = dev.read32(at + u32::from(regs::HDR_TYPE)).unwrap();
        let next = dev.read32(at + u32::from(regs::HDR_NEXT)).unwrap();
        found.push((ty, at as u16));
        if next == 0 || next <= at {
            break;
        }
        at = next;
    }
    found
}

/// The driver's view: block bases by type.
struct Blocks(HashMap<u32, u32>);

impl Blocks {
    fn find(dev: &mut dyn Device) -> Self {
        Blocks(
            walk(dev)
                .into_iter()
                .map(|(t, b)| (t, u32::from(b)))
                .collect(),
        )
    }

    fn reg(&self, ty: u32, off: u16) -> u32 {
        self.0[&ty] + u32::from(off)
    }
}

fn cfg_write(dev: &mut dyn Device, b: &Blocks, addr: u16, data: u64) {
    let c = regs::cfg::TYPE;
    dev.write32(b.reg(c, regs::cfg::CFG_ADDR), addr.into())
        .unwrap();
    dev.write32(b.reg(c, regs::cfg::CFG_DATA_LO), data as u32)
        .unwrap();
    dev.write32(b.reg(c, regs::cfg::CFG_DATA_HI), (data >> 32) as u32)
        .unwrap();
}

/// Programs a ring (block `ty`) at `base` with 2^`log2` entries and enables it.
fn set_ring(dev: &mut dyn Device, b: &Blocks, ty: u32, base: u64, log2: u32) {
    use regs::txq as q;
    dev.write32(b.reg(ty, q::BASE_LO), base as u32).unwrap();
    dev.write32(b.reg(ty, q::BASE_HI), (base >> 32) as u32)
        .unwrap();
    dev.write32(b.reg(ty, q::SIZE_LOG2), log2).unwrap();
    dev.write32(b.reg(ty, q::CTRL), 1).unwrap();
}

/// Polls register `reg` until it reads `want`.
fn wait_reg(dev: &mut dyn Device, reg: u32, want: u32, what: &str) {
    let t0 = Instant::now();
    loop {
        let v = dev.read32(reg).unwrap();
        if v == want {
            return;
        }
        assert!(t0.elapsed() < PATIENCE, "{what}: {v}, waiting for {want}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_missing_socket_says_how_to_start_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let err = VfioUserDevice::connect(dir.path().join("none.sock")).unwrap_err();
    assert!(matches!(err, DeviceError::NotFound(_)), "{err}");
    assert!(err.to_string().contains("metaroce device serve"), "{err}");
}

#[test]
fn bar0_block_list_id_block_and_bad_accesses() {
    let Some((server, _dir)) = start() else {
        return;
    };
    let mut dev = VfioUserDevice::connect(server.socket()).unwrap();
    assert_eq!(dev.irq_count(), 3);
    let blocks = walk(&mut dev);
    assert_eq!(
        blocks,
        regs::BLOCKS,
        "the block list as the register table has it"
    );
    let b = Blocks::find(&mut dev);
    let id = |r| b.reg(regs::id::TYPE, r);
    assert_eq!(
        dev.read32(id(regs::id::MAP_VERSION)).unwrap(),
        regs::MAP_VERSION
    );
    assert_eq!(dev.read32(id(regs::id::MAP_HASH)).unwrap(), regs::MAP_HASH);
    assert_eq!(dev.read32(id(regs::id::DATA_WIDTH)).unwrap(), 64);
    assert_eq!(
        dev.read32(id(regs::id::IRQ_VECTORS)).unwrap(),
        dev.irq_count()
    );
    assert_eq!(
        dev.read32(id(regs::id::FW_SLOT_BYTES)).unwrap(),
        regs::FW_SLOT_BYTES as u32
    );
    dev.write32(id(regs::id::SCRATCH), 0xC0FF_EE42).unwrap();
    assert_eq!(dev.read32(id(regs::id::SCRATCH)).unwrap(), 0xC0FF_EE42);

    // Outside BAR0 or unaligned: refused by the backend before it is sent.
    let size = dev.bar_size();
    assert!(matches!(
        dev.read32(size),
        Err(DeviceError::BadOffset { .. })
    ));
    assert!(matches!(
        dev.write32(2, 0),
        Err(DeviceError::BadOffset { .. })
    ));
    // Inside BAR0 at no register: the model's own rule (reads 0, counts in BAR_BAD).
    assert_eq!(dev.read32(size / 2).unwrap(), 0);
    assert_eq!(dev.read32(id(regs::id::BAR_BAD)).unwrap(), 1);

    // A function reset: registers back to their reset values.
    dev.reset().unwrap();
    assert_eq!(dev.read32(id(regs::id::SCRATCH)).unwrap(), 0);
    assert_eq!(dev.read32(id(regs::id::BAR_BAD)).unwrap(), 0);

    // The board information says where the MAC port is.
    let info = dev.board_info().unwrap();
    assert_eq!(info.addr, server.udp_addr());
    // The model publishes its cycle count every 1024 cycles: on a loaded machine the
    // accesses above may all fit in fewer.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while dev.board_info().unwrap().counter(BoardCounter::Cycles) == 0 {
        assert!(std::time::Instant::now() < deadline, "no cycles published");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(info.counter(BoardCounter::Resets), 1);
    drop(dev);

    // The same bad access sent raw reaches the device process, which refuses it with
    // an error reply and counts it.
    let mut raw = RawClient::connect(&server);
    let reply = raw.region_read(REGION_BAR0, u64::from(size), 4);
    assert!(reply.is_error(), "BAR0 read past its end: {reply:?}");
    let reply = raw.region_read(REGION_BAR0, 2, 4);
    assert!(reply.is_error(), "unaligned BAR0 read: {reply:?}");
    let reply = raw.region_read(REGION_BAR0, 0, 8);
    assert!(reply.is_error(), "8-byte BAR0 read: {reply:?}");
    // Board information is read-only.
    assert!(raw.region_write(REGION_BOARD_INFO, 0, &[0; 4]).is_error());
    let ok = raw.region_read(REGION_BAR0, 0, 4);
    assert!(!ok.is_error());
    assert_eq!(ok.data, regs::BLOCKS[0].0.to_le_bytes());
    drop(raw);
    let info = server.stop();
    assert_eq!(info.counter(BoardCounter::BadRegionAccesses), 4);
    assert_eq!(info.counter(BoardCounter::BadMessages), 0);
}

/// The TX builder's addresses and the front end's port, so that frames of the board
/// leave from (and datagrams to it reach) its bridged address.
fn bring_up(dev: &mut VfioUserDevice) -> (Blocks, SocketAddr) {
    let info = dev.board_info().unwrap();
    let b = Blocks::find(dev);
    let addresses = Addresses {
        local_mac: info.mac,
        peer_mac: info.peer_mac,
        local_ip: info.addr.ip(),
        peer_ip: info.addr.ip(),
        dst_port: metaroce_proto::DEFAULT_UDP_PORT,
        ttl: 64,
        dscp: 0,
    };
    let mut writes = Vec::new();
    configure(&addresses, &mut |a: u8, d| {
        writes.push((NIC_CORE_TX_CFG | u16::from(a), d))
    });
    for (a, d) in writes {
        cfg_write(dev, &b, a, d);
    }
    dev.write32(
        b.reg(regs::cfg::TYPE, regs::cfg::ETH_PORT),
        info.addr.port().into(),
    )
    .unwrap();
    (b, info.addr)
}

/// A firmware TX queue entry (`docs/hardware.md` §18).
fn ftq_entry(dst: SocketAddr, src_port: u16, data: &[u8]) -> Vec<u8> {
    let IpAddr::V4(v4) = dst.ip() else {
        panic!("IPv4 only")
    };
    let mut e = vec![0u8; regs::FTQ_ENTRY];
    let ip = u128::from(v4.to_bits()) | 0xFFFF << 32;
    e[..16].copy_from_slice(&ip.to_le_bytes());
    e[16..18].copy_from_slice(&src_port.to_le_bytes());
    e[18..20].copy_from_slice(&dst.port().to_le_bytes());
    e[20..22].copy_from_slice(&(data.len() as u16).to_le_bytes());
    e[32..32 + data.len()].copy_from_slice(data);
    e
}

#[test]
fn firmware_datagrams_go_out_and_received_datagrams_come_up_with_an_interrupt() {
    let Some((server, _dir)) = start() else {
        return;
    };
    let mut dev = VfioUserDevice::connect(server.socket()).unwrap();
    let (b, board_addr) = bring_up(&mut dev);

    let ftq = dev.alloc_dma(regs::FTQ_ENTRY << 3).unwrap();
    let evq = dev.alloc_dma(regs::EVQ_ENTRY << 6).unwrap();
    let frq = dev.alloc_dma(regs::FRQ_ENTRY << 3).unwrap();
    set_ring(&mut dev, &b, regs::ftq::TYPE, ftq.addr(), 3);
    set_ring(&mut dev, &b, regs::evq::TYPE, evq.addr(), 6);
    set_ring(&mut dev, &b, regs::frq::TYPE, frq.addr(), 3);
    let fds: Vec<EventFd> = (0..3).map(|_| EventFd::new().unwrap()).collect();
    dev.enable_irqs(&fds.iter().collect::<Vec<_>>()).unwrap();
    for v in 0..3u16 {
        dev.write32(b.reg(regs::irq::TYPE, regs::irq::CTRL0 + 0x10 * v), 1)
            .unwrap();
    }

    // Out: a firmware datagram posted in the firmware TX queue leaves the UDP socket.
    let peer = UdpSocket::bind((LOCALHOST, 0)).unwrap();
    peer.set_read_timeout(Some(PATIENCE)).unwrap();
    let payload = b"a firmware datagram from the simulated board";
    ftq.write(
        0,
        &ftq_entry(peer.local_addr().unwrap(), board_addr.port(), payload),
    );
    dev.write32(b.reg(regs::ftq::TYPE, regs::ftq::PROD), 1)
        .unwrap();
    let mut buf = [0u8; 2048];
    let (n, from) = peer.recv_from(&mut buf).expect("the firmware datagram");
    assert_eq!(&buf[..n], payload);
    assert_eq!(from, board_addr);
    wait_reg(
        &mut dev,
        b.reg(regs::ftq::TYPE, regs::ftq::CONS),
        1,
        "FTQ.CONS",
    );

    // In: a datagram to the board's address becomes an event-ring entry (a verdict
    // event with the datagram's source port), with an interrupt on vector 0.
    fds[0].drain();
    peer.send_to(b"not a MetaRoCE packet", board_addr).unwrap();
    wait_reg(
        &mut dev,
        b.reg(regs::evq::TYPE, regs::evq::PROD),
        1,
        "EVQ.PROD",
    );
    let w7 = evq.load_u64(56);
    assert_eq!(w7 >> 63, 1, "phase of lap 0");
    assert_eq!(
        (w7 >> 56) & 0xF,
        u64::from(regs::EV_VERDICT),
        "a verdict event"
    );
    assert_eq!(w7 as u32, 0, "entry index");
    let w6 = evq.load_u64(48);
    assert_eq!((w6 >> 16) as u16, peer.local_addr().unwrap().port());
    assert!(fds[0].wait(Some(PATIENCE)).unwrap(), "vector 0 interrupt");
    assert!(fds[0].drain() >= 1);

    let info = dev.board_info().unwrap();
    assert_eq!(info.counter(BoardCounter::FramesOut), 1);
    assert_eq!(info.counter(BoardCounter::FramesIn), 1);
    assert!(
        info.counter(BoardCounter::Interrupts) >= 2,
        "vectors 2 (FTQ) and 0"
    );
    assert_eq!(info.counter(BoardCounter::DmaUnmappedReads), 0);
    assert_eq!(info.counter(BoardCounter::DmaUnmappedWrites), 0);
    drop(dev);
    server.stop();
}

#[test]
fn application_memory_is_reached_through_bounce_buffers() {
    let Some((server, _dir)) = start() else {
        return;
    };
    let mut dev = VfioUserDevice::connect(server.socket()).unwrap();
    let (b, board_addr) = bring_up(&mut dev);
    // Rings in this process's own heap, registered with map_dma: the device process
    // reaches them only through the shadow memfds. Ring bases are aligned to their
    // size, so both sit on 4 KiB boundaries inside the buffer.
    let mut heap = vec![0u8; 4 * 4096];
    let base = heap.as_mut_ptr() as u64;
    let ftq_off = heap.as_ptr().align_offset(4096);
    let evq_off = ftq_off + 4096;
    let (ftq_len, evq_len) = (regs::FTQ_ENTRY << 3, regs::EVQ_ENTRY << 6);
    let (ftq_addr, evq_addr) = (base + ftq_off as u64, base + evq_off as u64);
    dev.map_dma(ftq_addr, ftq_len).unwrap();
    dev.map_dma(evq_addr, evq_len).unwrap();
    assert!(dev.map_dma(ftq_addr, 8).is_err(), "mapped twice");
    set_ring(&mut dev, &b, regs::ftq::TYPE, ftq_addr, 3);
    set_ring(&mut dev, &b, regs::evq::TYPE, evq_addr, 6);

    let peer = UdpSocket::bind((LOCALHOST, 0)).unwrap();
    peer.set_read_timeout(Some(PATIENCE)).unwrap();
    let payload = b"bounced through a shadow memfd";
    let entry = ftq_entry(peer.local_addr().unwrap(), board_addr.port(), payload);
    heap[ftq_off..ftq_off + entry.len()].copy_from_slice(&entry);
    dev.sync_for_device(ftq_addr, entry.len()).unwrap();
    dev.write32(b.reg(regs::ftq::TYPE, regs::ftq::PROD), 1)
        .unwrap();
    let mut buf = [0u8; 2048];
    let (n, _) = peer.recv_from(&mut buf).expect("the firmware datagram");
    assert_eq!(&buf[..n], payload);

    peer.send_to(b"an event for the heap", board_addr).unwrap();
    wait_reg(
        &mut dev,
        b.reg(regs::evq::TYPE, regs::evq::PROD),
        1,
        "EVQ.PROD",
    );
    assert_eq!(heap[evq_off + 63], 0, "not visible before sync_for_cpu");
    dev.sync_for_cpu(evq_addr, evq_len).unwrap();
    let w7 = u64::from_le_bytes(heap[evq_off + 56..evq_off + 64].try_into().unwrap());
    assert_eq!(w7 >> 63, 1, "the event's phase bit, copied back");
    assert!(
        dev.sync_for_cpu(evq_addr + evq_len as u64, 8).is_err(),
        "outside the map"
    );
    dev.unmap_dma(evq_addr, evq_len).unwrap();
    dev.unmap_dma(ftq_addr, ftq_len).unwrap();
    let info = dev.board_info().unwrap();
    assert_eq!(info.counter(BoardCounter::DmaUnmappedReads), 0);
    assert_eq!(info.counter(BoardCounter::DmaUnmappedWrites), 0);
    drop(dev);
    server.stop();
}

#[test]
fn device_dma_to_unmapped_iova_is_counted_and_writes_nothing() {
    let Some((server, _dir)) = start() else {
        return;
    };
    let mut dev = VfioUserDevice::connect(server.socket()).unwrap();
    let (b, board_addr) = bring_up(&mut dev);
    // Mapped memory the device is never pointed at: it must stay zero.
    let canary = dev.alloc_dma(1 << 16).unwrap();
    // IOVAs nothing is mapped at (far below any address this process maps).
    let nowhere: u64 = 0x10_0000_0000;

    // A firmware TX queue in unmapped memory: the entry reads as zeros (length 0), so
    // it is skipped and counted by the device too.
    set_ring(&mut dev, &b, regs::ftq::TYPE, nowhere, 3);
    dev.write32(b.reg(regs::ftq::TYPE, regs::ftq::PROD), 1)
        .unwrap();
    wait_reg(
        &mut dev,
        b.reg(regs::ftq::TYPE, regs::ftq::CONS),
        1,
        "FTQ.CONS",
    );
    wait_reg(
        &mut dev,
        b.reg(regs::cnt::TYPE, regs::cnt::FTQ_BAD),
        1,
        "CNT.FTQ_BAD",
    );

    // An event ring in unmapped memory: the event write goes nowhere.
    set_ring(&mut dev, &b, regs::evq::TYPE, nowhere + 0x10_0000, 6);
    let peer = UdpSocket::bind((LOCALHOST, 0)).unwrap();
    peer.send_to(b"an event with nowhere to go", board_addr)
        .unwrap();
    wait_reg(
        &mut dev,
        b.reg(regs::evq::TYPE, regs::evq::PROD),
        1,
        "EVQ.PROD",
    );

    let info = dev.board_info().unwrap();
    assert_eq!(
        info.counter(BoardCounter::DmaUnmappedReads),
        1,
        "the entry's header read (a bad entry is skipped before its datagram is fetched)"
    );
    assert_eq!(
        info.counter(BoardCounter::DmaUnmappedWrites),
        1,
        "the event write"
    );
    let mut all = vec![0xAAu8; canary.len()];
    canary.read(0, &mut all);
    assert!(
        all.iter().all(|&b| b == 0),
        "the device wrote into mapped memory it was not given"
    );
    drop(dev);
    server.stop();
}

#[test]
fn hostile_messages_are_refused_counted_and_the_next_client_is_served() {
    let Some((server, _dir)) = start() else {
        return;
    };

    // Garbage bytes, then the connection closes.
    {
        let mut s = UnixStream::connect(server.socket()).unwrap();
        let garbage: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let _ = s.write_all(&garbage);
    }
    // A VERSION message shorter than its own header: the crate panics on it; the
    // connection is closed and the server goes on.
    {
        let mut raw = RawClient::connect(&server);
        let mut v = header(1, 1, 8, 0);
        v.extend_from_slice(&[0, 0, 1, 0]); // major 0, minor 1
        raw.send(&v);
        let mut b = [0u8; 16];
        assert!(
            matches!(raw.s.read(&mut b), Ok(0) | Err(_)),
            "connection closed"
        );
    }
    let mut raw = RawClient::connect(&server);
    // An unknown command and an unsupported one (DMA_READ), each a bare header.
    assert!(raw.call(&header(2, 99, 16, 0)).is_error());
    assert!(raw.call(&header(3, 11, 16, 0)).is_error());
    // A DMA map without a file descriptor.
    let mut map = header(4, 2, 48, 0);
    map.extend_from_slice(&40u32.to_le_bytes()); // argsz
    map.extend_from_slice(&3u32.to_le_bytes()); // flags: read | write
    map.extend_from_slice(&0u64.to_le_bytes()); // offset
    map.extend_from_slice(&0x1000_0000u64.to_le_bytes()); // address
    map.extend_from_slice(&0x1000u64.to_le_bytes()); // size
    assert!(raw.call(&map).is_error());
    // A region index out of range (the crate's EINVAL) and an empty region.
    let r = raw.region_read(42, 0, 4);
    assert!(r.is_error());
    assert_eq!(r.error, libc::EINVAL as u32);
    assert!(raw.region_read(5, 0, 4).is_error());
    // Seven MSI-X vectors of three, and no eventfds for them.
    let mut irqs = header(5, 8, 36, 0);
    for w in [20u32, (1 << 2) | (1 << 5), 2, 0, 7] {
        irqs.extend_from_slice(&w.to_le_bytes());
    }
    assert!(raw.call(&irqs).is_error());
    drop(raw);

    // The device still serves a well-behaved client.
    let mut dev = VfioUserDevice::connect(server.socket()).unwrap();
    assert_eq!(dev.read32(0).unwrap(), regs::BLOCKS[0].0);
    let info = dev.board_info().unwrap();
    drop(dev);
    server.stop();
    // The panic (1), unknown and unsupported commands (2), region index 42 (1), the
    // SET_IRQS (1), plus whatever the garbage bytes parsed as (at least one).
    assert!(info.counter(BoardCounter::BadMessages) >= 6, "{info:?}");
    assert_eq!(info.counter(BoardCounter::DmaMapsRefused), 1);
    assert_eq!(
        info.counter(BoardCounter::BadRegionAccesses),
        1,
        "the empty region 5"
    );
    // The garbage, the short VERSION and the raw client had ended when the driver
    // was accepted.
    assert_eq!(info.counter(BoardCounter::Connections), 3);
}

/// A `DMA_MAP` of `size` bytes at `iova` from `offset` of the fd sent with it.
fn dma_map_msg(id: u16, offset: u64, iova: u64, size: u64) -> Vec<u8> {
    let mut m = header(id, 2, 48, 0);
    m.extend_from_slice(&40u32.to_le_bytes()); // argsz
    m.extend_from_slice(&3u32.to_le_bytes()); // flags: read | write
    for w in [offset, iova, size] {
        m.extend_from_slice(&w.to_le_bytes());
    }
    m
}

#[test]
fn hostile_offsets_fds_and_truncated_messages_are_refused_and_counted() {
    let Some((server, _dir)) = start() else {
        return;
    };
    let mut raw = RawClient::connect(&server);
    // BAR0 accesses at the top of the 64-bit offset space: `offset + 4` wraps to 0,
    // which must not let them through to the model.
    let top = u64::MAX - 3;
    let r = raw.region_write(REGION_BAR0, top, &7u32.to_le_bytes());
    assert!(r.is_error(), "BAR0 write at {top:#x}: {r:?}");
    assert!(raw.region_read(REGION_BAR0, top, 4).is_error());
    // The board information and configuration space past their ends.
    assert!(raw.region_read(REGION_BOARD_INFO, u64::MAX, 8).is_error());
    assert!(raw.region_write(REGION_CONFIG, 254, &[0; 4]).is_error());

    // An interrupt vector routed to something that is not an eventfd (the board
    // would block writing into a socket or pipe nobody reads, and stop the model).
    let (_keep, not_eventfd) = UnixStream::pair().unwrap();
    let mut irqs = header(7, 8, 36, 0);
    for w in [20u32, (1 << 2) | (1 << 5), 2, 0, 1] {
        irqs.extend_from_slice(&w.to_le_bytes());
    }
    assert!(
        raw.call_with_fds(&irqs, &[not_eventfd.as_raw_fd()])
            .is_error()
    );

    // DMA maps of memory the device process must not keep: a file not sealed
    // against shrinking, a sealed memfd shorter than the map, an IOVA range that
    // wraps.
    let unsealed = tempfile::tempfile().unwrap();
    unsealed.set_len(8192).unwrap();
    let sealed = DmaRegion::new(8192).unwrap();
    let sealed_fd = sealed.fd().as_raw_fd();
    for (msg, fd) in [
        (dma_map_msg(8, 0, 0x1000_0000, 8192), unsealed.as_raw_fd()),
        (dma_map_msg(9, 0, 0x1000_0000, 16384), sealed_fd),
        (dma_map_msg(10, 0, u64::MAX - 4095, 8192), sealed_fd),
    ] {
        assert!(raw.call_with_fds(&msg, &[fd]).is_error());
    }
    // An unmap of nothing.
    let mut unmap = header(11, 3, 40, 0);
    unmap.extend_from_slice(&24u32.to_le_bytes()); // argsz
    unmap.extend_from_slice(&0u32.to_le_bytes()); // flags
    unmap.extend_from_slice(&0x2000_0000u64.to_le_bytes());
    unmap.extend_from_slice(&4096u64.to_le_bytes());
    assert!(raw.call(&unmap).is_error());

    // A descriptor sent with a message that takes none is closed, not kept: once
    // the server's copy is gone, the other end of the pair reads end-of-file.
    let (mine, theirs) = UnixStream::pair().unwrap();
    let mut m = header(12, 9, 32, 0);
    m.extend_from_slice(&0u64.to_le_bytes());
    m.extend_from_slice(&REGION_BAR0.to_le_bytes());
    m.extend_from_slice(&4u32.to_le_bytes());
    let ok = raw.call_with_fds(&m, &[theirs.as_raw_fd()]);
    assert_eq!(ok.data, regs::BLOCKS[0].0.to_le_bytes(), "a good read");
    drop(theirs);
    mine.set_nonblocking(true).unwrap();
    let t0 = Instant::now();
    let closed = loop {
        match (&mine).read(&mut [0u8; 1]) {
            Ok(0) => break true,
            _ if t0.elapsed() > PATIENCE => break false,
            _ => std::thread::sleep(Duration::from_millis(2)),
        }
    };
    assert!(closed, "the device process kept a descriptor it was sent");
    // No refused access reached the model (it counts accesses at no register).
    let id = regs::BLOCKS
        .iter()
        .find(|(ty, _)| *ty == regs::id::TYPE)
        .map(|&(_, base)| u64::from(base + regs::id::BAR_BAD))
        .unwrap();
    assert_eq!(raw.region_read(REGION_BAR0, id, 4).data, [0; 4]);

    // A write whose header promises more bytes than come before the client leaves.
    let mut w = header(13, 10, 36, 0);
    w.extend_from_slice(&0u64.to_le_bytes());
    w.extend_from_slice(&REGION_BAR0.to_le_bytes());
    w.extend_from_slice(&4u32.to_le_bytes());
    raw.send(&w[..24]);
    drop(raw);

    // The device still serves a well-behaved client.
    let mut dev = VfioUserDevice::connect(server.socket()).unwrap();
    assert_eq!(dev.read32(0).unwrap(), regs::BLOCKS[0].0);
    drop(dev);
    let info = server.stop();
    assert_eq!(info.counter(BoardCounter::BadRegionAccesses), 4, "{info:?}");
    assert_eq!(info.counter(BoardCounter::DmaMapsRefused), 3, "{info:?}");
    // The SET_IRQS, the unmap, the truncated write.
    assert_eq!(info.counter(BoardCounter::BadMessages), 3, "{info:?}");
}

/// A vfio-user message header.
fn header(id: u16, command: u16, size: u32, flags: u32) -> Vec<u8> {
    let mut h = Vec::with_capacity(16);
    h.extend_from_slice(&id.to_le_bytes());
    h.extend_from_slice(&command.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&flags.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes());
    h
}

/// A reply as read back.
#[derive(Debug)]
struct Reply {
    flags: u32,
    error: u32,
    data: Vec<u8>,
}

impl Reply {
    fn is_error(&self) -> bool {
        self.flags & (1 << 5) != 0
    }
}

/// Hand-made vfio-user messages on a raw socket.
struct RawClient {
    s: UnixStream,
    id: u16,
}

impl RawClient {
    fn connect(server: &DeviceServer) -> Self {
        let s = UnixStream::connect(server.socket()).unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        RawClient { s, id: 100 }
    }

    fn send(&mut self, msg: &[u8]) {
        self.s.write_all(msg).unwrap();
    }

    /// Sends `msg` and reads one reply (header, then the rest its size says).
    fn call(&mut self, msg: &[u8]) -> Reply {
        self.send(msg);
        self.reply()
    }

    /// Sends `msg` with `fds` attached (`SCM_RIGHTS`) and reads one reply.
    fn call_with_fds(&mut self, msg: &[u8], fds: &[RawFd]) -> Reply {
        let sent = self.s.send_with_fds(&[msg], fds).unwrap();
        assert_eq!(sent, msg.len());
        self.reply()
    }

    fn reply(&mut self) -> Reply {
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h).expect("a reply header");
        let size = u32::from_le_bytes(h[4..8].try_into().unwrap()) as usize;
        let mut rest = vec![0u8; size.saturating_sub(16)];
        self.s.read_exact(&mut rest).expect("the reply's body");
        Reply {
            flags: u32::from_le_bytes(h[8..12].try_into().unwrap()),
            error: u32::from_le_bytes(h[12..16].try_into().unwrap()),
            data: rest.get(16..).map(<[u8]>::to_vec).unwrap_or_default(),
        }
    }

    fn access(&mut self, command: u16, region: u32, offset: u64, count: u32, data: &[u8]) -> Reply {
        self.id += 1;
        let mut m = header(self.id, command, 32 + data.len() as u32, 0);
        m.extend_from_slice(&offset.to_le_bytes());
        m.extend_from_slice(&region.to_le_bytes());
        m.extend_from_slice(&count.to_le_bytes());
        m.extend_from_slice(data);
        self.call(&m)
    }

    fn region_read(&mut self, region: u32, offset: u64, count: u32) -> Reply {
        self.access(9, region, offset, count, &[])
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> Reply {
        self.access(10, region, offset, data.len() as u32, data)
    }
}
