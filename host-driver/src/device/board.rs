//! What a MetaRoCE device function exposes besides BAR0, in one place for the device
//! process (`metaroce device serve`, `metaroce_sim_tb::device_server`) and the driver.
//!
//! Over vfio-user the function is a PCI device with these regions (VFIO's PCI region
//! indices): [`REGION_BAR0`] (the register blocks of `docs/regmap.md`),
//! [`REGION_BOARD_INFO`] (read-only, laid out below) and [`REGION_CONFIG`] (PCI
//! configuration space); its interrupts are the [`IRQ_INDEX_MSIX`] index with one vector
//! per device vector (`ID.IRQ_VECTORS`).
//!
//! **Board information** (`REGION_BOARD_INFO`, [`BOARD_INFO_BYTES`] bytes,
//! little-endian): what a simulated board knows that a real one would have in its
//! firmware or EEPROM — where its MAC port is bridged to, so the driver can use it as
//! the NIC's own address — and the device process's own counters:
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0x00 | 4 | [`BOARD_MAGIC`] |
//! | 0x04 | 4 | [`BOARD_VERSION`] |
//! | 0x08 | 4 | counters that follow ([`BoardCounter::ALL`]`.len()`) |
//! | 0x0C | 4 | reserved, 0 |
//! | 0x10 | 16 | the MAC port's IP address (IPv6, or IPv4-mapped `::ffff:a.b.c.d`) |
//! | 0x20 | 2 | the MAC port's UDP port |
//! | 0x22 | 6 | the NIC's Ethernet address (frames to the NIC carry it) |
//! | 0x28 | 6 | the next hop's Ethernet address (frames to the NIC come from it) |
//! | 0x2E | 18 | reserved, 0 |
//! | 0x40 | 8 each | counter `i` at `0x40 + 8·i`, in the order of [`BoardCounter::ALL`] |

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// VFIO PCI region index of BAR0 (the register blocks).
pub const REGION_BAR0: u32 = 0;
/// VFIO PCI region index of the board-information region (BAR2).
pub const REGION_BOARD_INFO: u32 = 2;
/// VFIO PCI region index of the MSI-X table and pending-bit array (BAR4).
pub const REGION_MSIX: u32 = 4;
/// VFIO PCI region index of PCI configuration space.
pub const REGION_CONFIG: u32 = 7;
/// Number of VFIO PCI region indices (BAR0–5, ROM, config, VGA).
pub const REGION_COUNT: u32 = 9;
/// VFIO PCI interrupt index of MSI-X.
pub const IRQ_INDEX_MSIX: u32 = 2;
/// Number of VFIO PCI interrupt indices (INTx, MSI, MSI-X, error, request).
pub const IRQ_INDEX_COUNT: u32 = 5;
/// `VFIO_IRQ_SET_DATA_EVENTFD`: the message carries one eventfd per vector.
pub const IRQ_SET_DATA_EVENTFD: u32 = 1 << 2;
/// `VFIO_IRQ_SET_ACTION_TRIGGER`: the device signals the eventfds.
pub const IRQ_SET_ACTION_TRIGGER: u32 = 1 << 5;
/// `VFIO_IRQ_SET_DATA_NONE`: with `ACTION_TRIGGER` and count 0, disables the index.
pub const IRQ_SET_DATA_NONE: u32 = 1;

/// Size of the board-information region.
pub const BOARD_INFO_BYTES: u32 = 4096;
/// First word of the board-information region: `"MRBI"`.
pub const BOARD_MAGIC: u32 = 0x4D52_4249;
/// Layout version of the board-information region.
pub const BOARD_VERSION: u32 = 1;
/// Offset of the IP address.
pub const OFF_IP: usize = 0x10;
/// Offset of the UDP port.
pub const OFF_UDP_PORT: usize = 0x20;
/// Offset of the NIC's Ethernet address.
pub const OFF_MAC: usize = 0x22;
/// Offset of the next hop's Ethernet address.
pub const OFF_PEER_MAC: usize = 0x28;
/// Offset of the first counter.
pub const OFF_COUNTERS: usize = 0x40;

/// The device process's counters, in board-information order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoardCounter {
    /// Clock cycles the model has run.
    Cycles,
    /// Frames into the MAC RX port (datagrams received on the UDP socket).
    FramesIn,
    /// Frames out of the MAC TX port (given to the UDP bridge).
    FramesOut,
    /// Frames the UDP bridge could not send (not UDP, bad checksum, wrong source,
    /// source port not bindable, send error).
    FramesDropped,
    /// Interrupt requests signalled on an eventfd.
    Interrupts,
    /// Interrupt requests of a vector with no eventfd (taken and lost, as an MSI-X
    /// message to a disabled vector).
    InterruptsUnrouted,
    /// Client connections accepted.
    Connections,
    /// vfio-user messages refused: malformed, unknown or unsupported commands, wrong
    /// sizes, messages that made the protocol code fail (the connection is closed).
    BadMessages,
    /// Region reads and writes refused: no such region, out of range, a BAR0 access that
    /// is not one aligned 32-bit word, a write to a read-only region.
    BadRegionAccesses,
    /// DMA maps refused: no file descriptor, overlapping or wrapping ranges, a file too
    /// short or not sealed against shrinking, an mmap failure.
    DmaMapsRefused,
    /// DMA read requests that touched an unmapped IOVA (answered with zeros).
    DmaUnmappedReads,
    /// DMA write beats aimed at an unmapped IOVA (nothing written).
    DmaUnmappedWrites,
    /// Device resets.
    Resets,
    /// Clock cycles in which a port of the model moved something: a BAR access, a MAC
    /// beat, a DMA read request or completion beat, a DMA write beat, an interrupt.
    BusyCycles,
    /// Nanoseconds in the model's evaluation (`eval` and `tick`), measured on one
    /// cycle in [`MODEL_NS_SAMPLE`] and scaled by it.
    ModelNs,
    /// Nanoseconds the socket thread spent handling client messages.
    SocketNs,
}

/// One cycle in this many is timed for [`BoardCounter::ModelNs`] (two clock reads per
/// timed cycle; a cycle takes about a microsecond).
pub const MODEL_NS_SAMPLE: u64 = 8;

impl BoardCounter {
    /// Every counter, in board-information order.
    pub const ALL: [BoardCounter; 16] = [
        BoardCounter::Cycles,
        BoardCounter::FramesIn,
        BoardCounter::FramesOut,
        BoardCounter::FramesDropped,
        BoardCounter::Interrupts,
        BoardCounter::InterruptsUnrouted,
        BoardCounter::Connections,
        BoardCounter::BadMessages,
        BoardCounter::BadRegionAccesses,
        BoardCounter::DmaMapsRefused,
        BoardCounter::DmaUnmappedReads,
        BoardCounter::DmaUnmappedWrites,
        BoardCounter::Resets,
        BoardCounter::BusyCycles,
        BoardCounter::ModelNs,
        BoardCounter::SocketNs,
    ];

    /// Position in [`BoardCounter::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Byte offset in the board-information region.
    pub fn offset(self) -> usize {
        OFF_COUNTERS + 8 * self.index()
    }

    /// Snake-case name (reports, JSON).
    pub fn name(self) -> &'static str {
        match self {
            BoardCounter::Cycles => "cycles",
            BoardCounter::FramesIn => "frames_in",
            BoardCounter::FramesOut => "frames_out",
            BoardCounter::FramesDropped => "frames_dropped",
            BoardCounter::Interrupts => "interrupts",
            BoardCounter::InterruptsUnrouted => "interrupts_unrouted",
            BoardCounter::Connections => "connections",
            BoardCounter::BadMessages => "bad_messages",
            BoardCounter::BadRegionAccesses => "bad_region_accesses",
            BoardCounter::DmaMapsRefused => "dma_maps_refused",
            BoardCounter::DmaUnmappedReads => "dma_unmapped_reads",
            BoardCounter::DmaUnmappedWrites => "dma_unmapped_writes",
            BoardCounter::Resets => "resets",
            BoardCounter::BusyCycles => "busy_cycles",
            BoardCounter::ModelNs => "model_ns",
            BoardCounter::SocketNs => "socket_ns",
        }
    }
}

/// The board-information region, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardInfo {
    /// Where the MAC port is bridged to: the NIC's own IP address and UDP port.
    pub addr: SocketAddr,
    /// The NIC's Ethernet address.
    pub mac: [u8; 6],
    /// The next hop's Ethernet address.
    pub peer_mac: [u8; 6],
    /// The counters, in [`BoardCounter::ALL`] order (those the device reports; a newer
    /// device may report more, an older fewer).
    pub counters: Vec<u64>,
}

impl BoardInfo {
    /// Lays the region out (`BOARD_INFO_BYTES` bytes).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; BOARD_INFO_BYTES as usize];
        b[0..4].copy_from_slice(&BOARD_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&BOARD_VERSION.to_le_bytes());
        let n = self.counters.len().min(max_counters());
        b[8..12].copy_from_slice(&(n as u32).to_le_bytes());
        let ip = match self.addr.ip() {
            IpAddr::V4(v4) => v4.to_ipv6_mapped(),
            IpAddr::V6(v6) => v6,
        };
        b[OFF_IP..OFF_IP + 16].copy_from_slice(&ip.octets());
        b[OFF_UDP_PORT..OFF_UDP_PORT + 2].copy_from_slice(&self.addr.port().to_le_bytes());
        b[OFF_MAC..OFF_MAC + 6].copy_from_slice(&self.mac);
        b[OFF_PEER_MAC..OFF_PEER_MAC + 6].copy_from_slice(&self.peer_mac);
        for (i, v) in self.counters.iter().take(n).enumerate() {
            let at = OFF_COUNTERS + 8 * i;
            b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// Parses a region read from its start; `None` when the magic, version or sizes
    /// are wrong.
    pub fn parse(b: &[u8]) -> Option<BoardInfo> {
        let u32_at = |at: usize| Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?));
        if u32_at(0)? != BOARD_MAGIC || u32_at(4)? != BOARD_VERSION {
            return None;
        }
        let n = (u32_at(8)? as usize).min(max_counters());
        let ip: [u8; 16] = b.get(OFF_IP..OFF_IP + 16)?.try_into().ok()?;
        let ip = Ipv6Addr::from(ip);
        let ip = ip.to_ipv4_mapped().map_or(IpAddr::V6(ip), IpAddr::V4);
        let port = u16::from_le_bytes(b.get(OFF_UDP_PORT..OFF_UDP_PORT + 2)?.try_into().ok()?);
        let counters = (0..n)
            .map(|i| {
                let at = OFF_COUNTERS + 8 * i;
                Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
            })
            .collect::<Option<Vec<u64>>>()?;
        Some(BoardInfo {
            addr: SocketAddr::new(ip, port),
            mac: b.get(OFF_MAC..OFF_MAC + 6)?.try_into().ok()?,
            peer_mac: b.get(OFF_PEER_MAC..OFF_PEER_MAC + 6)?.try_into().ok()?,
            counters,
        })
    }

    /// One counter (0 if the device does not report it).
    pub fn counter(&self, c: BoardCounter) -> u64 {
        self.counters.get(c.index()).copied().unwrap_or(0)
    }
}

/// Counters that fit in the region.
fn max_counters() -> usize {
    (BOARD_INFO_BYTES as usize - OFF_COUNTERS) / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_info_round_trips_and_refuses_garbage() {
        for (i, c) in BoardCounter::ALL.iter().enumerate() {
            assert_eq!(c.index(), i, "{} out of order", c.name());
        }
        let info = BoardInfo {
            addr: "10.1.2.3:4791".parse().unwrap(),
            mac: [2, 0, 0, 0, 0, 1],
            peer_mac: [2, 0, 0, 0, 0, 2],
            counters: (0..BoardCounter::ALL.len() as u64)
                .map(|i| i * 1000 + 7)
                .collect(),
        };
        let bytes = info.encode();
        assert_eq!(bytes.len(), BOARD_INFO_BYTES as usize);
        assert_eq!(BoardInfo::parse(&bytes), Some(info.clone()));
        assert_eq!(
            info.counter(BoardCounter::DmaUnmappedWrites),
            1000 * BoardCounter::DmaUnmappedWrites.index() as u64 + 7
        );
        let v6 = BoardInfo {
            addr: "[fd00::5]:9".parse().unwrap(),
            ..info.clone()
        };
        assert_eq!(BoardInfo::parse(&v6.encode()), Some(v6));
        let mut bad = bytes.clone();
        bad[0] ^= 1;
        assert_eq!(BoardInfo::parse(&bad), None);
        assert_eq!(BoardInfo::parse(&bytes[..20]), None);
        // A counter count past the region is clamped, not trusted.
        let mut huge = bytes;
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            BoardInfo::parse(&huge).unwrap().counters.len(),
            max_counters()
        );
    }
}
