//! The NIC top (`metaroce_hdl::NicCore`, 64 bits) against the engines,
//! receive and transmit at the same time.
//!
//! * Receive: the core bench's traffic ([`crate::core_check`]: WRITEs and
//!   PROBEs to three QPs, reordered, duplicated, CE-marked, hostile) in
//!   Ethernet/IPv4/UDP frames on the MAC RX port, or, with
//!   [`Family::Ipv6`] (local and peer addresses IPv6), Ethernet/IPv6/UDP
//!   frames. Verdicts, DMA writes and counters are compared with
//!   `Nic::handle_datagram` as for `NicRx`; the ACKs must come out of the
//!   **MAC TX port** as frames whose UDP payload is the engine's ACK byte
//!   for byte and whose Ethernet/IP/UDP headers equal `etherparse`'s for
//!   the engine's `Transmit` (destination IP, ports, ECN) and the
//!   configured addresses: IPv4 frames (UDP checksum 0) for IPv4 peers,
//!   IPv6 frames with the UDP checksum `etherparse` computes for IPv6
//!   peers (the RTL frame's checksum is also recomputed by `etherparse`
//!   from the frame itself).
//! * Transmit, in the same cycles: the descriptors of engine traffic
//!   ([`crate::tx_check`]: a loopback pair's WRITE/SEND/READ datagrams with
//!   loss, so retransmissions appear) on the descriptor port, payloads
//!   served from the engine's memory. Every data frame on the MAC TX port
//!   must equal its reference (`etherparse` headers + the engine's
//!   datagram), in order. The data frames are IPv4 in both families (the
//!   engines' loopback pair is IPv4); an IPv6 run thus has IPv6 ACK frames
//!   and IPv4 data frames on one port, the local IPv6 address written to
//!   the TX builder's registers 3–4 besides the IPv4 ones.
//!
//! ACK and data frames contend for the MAC TX port. Each frame collected
//! there is whole by construction of the check: it is split at `tlast`,
//! classified by its MetaRoCE opcode and compared in its source's order,
//! so an interleaved, lost, duplicated or reordered frame is a mismatch;
//! the counts must match exactly.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use metaroce_proto::{Flags, Opcode, Packet, Repr};

pub use crate::core_check::Family;
use crate::core_check::{CoreRun, HeadMirror, RxCase, rx_knobs};
use crate::rx_core::{AckOut, Input, RxCoreTb};
use crate::tx_build::{
    Addresses, NIC_CORE_TX_CFG, TxFeeder, TxItem, configure, configure_local_ip6,
};
use crate::tx_check::{EngineItems, compare, tx_knobs};
use crate::{Port, SimError};

/// Bytes of Ethernet II + IPv4 + UDP headers of an IPv4 ACK frame.
const ACK_HEADERS_V4: usize = 42;
/// Bytes of Ethernet II + IPv6 + UDP headers of an IPv6 ACK frame.
const ACK_HEADERS_V6: usize = 62;

/// Result of [`run_against_engines`].
#[derive(Clone, Debug, Default)]
pub struct NicCoreRun {
    /// The receive side's comparison (verdicts, DMA writes, counters, ACKs
    /// with their frame headers); its mismatches include the transmit
    /// side's and the frame counts'.
    pub rx: CoreRun,
    /// Data frames compared with the engine's datagrams.
    pub data_frames: u64,
    /// Retransmissions among them.
    pub retransmissions: u64,
    /// ACK frames on the MAC TX port.
    pub ack_frames: u64,
    /// Of them, IPv6 frames.
    pub ack_frames_v6: u64,
    /// Changes of source (ACK ↔ data) between consecutive MAC frames.
    pub switches: u64,
    /// Beats the MAC TX port carried.
    pub mac_beats: u64,
    /// Clock cycles of the run.
    pub cycles: u64,
    /// Seconds of the simulation alone ([`crate::SimTimer`]: CPU time).
    pub sim_secs: f64,
}

impl NicCoreRun {
    /// Every mismatch of the run.
    pub fn mismatches(&self) -> &[String] {
        &self.rx.mismatches
    }
}

/// The ACK in a MAC frame (the top's ACK frames: IPv4 by EtherType
/// 0x0800, IPv6 by 0x86DD, at the fixed offsets the framer uses), or `None`
/// for a frame that is not one.
pub(crate) fn ack_of(frame: &[u8]) -> Option<AckOut> {
    let (headers, dst_ip) = match frame.get(12..14)? {
        [0x08, 0x00] => {
            let d: [u8; 4] = frame.get(30..34)?.try_into().ok()?;
            (ACK_HEADERS_V4, Ipv4Addr::from(d).to_ipv6_mapped().octets())
        }
        [0x86, 0xDD] => (ACK_HEADERS_V6, frame.get(38..54)?.try_into().ok()?),
        _ => return None,
    };
    let datagram = frame.get(headers..)?;
    let repr = Repr::parse(&Packet::new_checked(datagram).ok()?).ok()?;
    if repr.opcode != Opcode::Ack {
        return None;
    }
    let be16 = |at: usize| u16::from_be_bytes([frame[at], frame[at + 1]]);
    Some(AckOut {
        bytes: datagram.to_vec(),
        dst_ip,
        src_port: be16(headers - 8),
        dst_port: be16(headers - 6),
        ece: repr.flags.contains(Flags::ECE),
        headers: frame[..headers].to_vec(),
    })
}

/// [`run_against_engines_in`] with IPv4 receive traffic (IPv4 ACK frames).
pub fn run_against_engines(
    rx_packets: usize,
    tx_packets: usize,
    seed: u64,
    backpressure: bool,
    vcd: Option<&Path>,
) -> Result<NicCoreRun, SimError> {
    run_against_engines_in(
        Family::Ipv4,
        rx_packets,
        tx_packets,
        seed,
        backpressure,
        vcd,
    )
}

/// Splits the MAC TX port's frames by source, keeping each source's
/// order: the ACK frames decoded onto `acks`, the data frames returned,
/// with the number of switches between the two sources.
fn split_by_source(frames: Vec<Vec<u8>>, acks: &mut Vec<AckOut>) -> (Vec<Vec<u8>>, u64) {
    let mut data = Vec::new();
    let mut switches = 0;
    let mut last_was_ack = None;
    for f in frames {
        let ack = ack_of(&f);
        switches += u64::from(last_was_ack.is_some_and(|l| l != ack.is_some()));
        last_was_ack = Some(ack.is_some());
        match ack {
            Some(a) => acks.push(a),
            None => data.push(f),
        }
    }
    (data, switches)
}

/// Compares the data frames with the reference frame of each descriptor,
/// in order, onto `mismatches`; returns the retransmissions among the
/// descriptors compared.
fn check_data_frames(
    data: &[Vec<u8>],
    items: &[TxItem],
    want: &[Vec<u8>],
    mismatches: &mut Vec<String>,
) -> u64 {
    let mut retransmissions = 0;
    for (i, (item, want)) in items.iter().zip(want).enumerate() {
        let Some(got) = data.get(i) else {
            mismatches.push(format!(
                "data frame {i}: missing ({} of {} came out)",
                data.len(),
                items.len()
            ));
            break;
        };
        if let Some(d) = compare(got, want, &item.desc, false) {
            mismatches.push(format!("data frame {i}: {d}"));
        }
        retransmissions += u64::from(item.desc.repr.flags.contains(Flags::RETX));
    }
    if data.len() > items.len() {
        mismatches.push(format!(
            "{} data frames more than descriptors",
            data.len() - items.len()
        ));
    }
    retransmissions
}

/// `rx_packets` datagrams of the core bench's traffic (addressed as
/// `family` says) into the MAC RX port and the descriptors of at least
/// `tx_packets` engine datagrams into the descriptor port, through the
/// Verilated `NicCore` at 64 bits, compared as the module docs say. With
/// `backpressure`, the receive source idles 20 %, the DMA and MAC TX ports
/// stall 30 %, the descriptor source idles 10 %, fetch requests are
/// refused 20 % and the fetch stream idles 20 % of cycles. `vcd` dumps the
/// whole run.
pub fn run_against_engines_in(
    family: Family,
    rx_packets: usize,
    tx_packets: usize,
    seed: u64,
    backpressure: bool,
    vcd: Option<&Path>,
) -> Result<NicCoreRun, SimError> {
    let mut tb = RxCoreTb::with_input(64, Input::NicCore)?;
    if let Some(path) = vcd {
        tb.sim().trace(path)?;
    }
    let case = RxCase::new(&mut tb, rx_packets, seed, family);
    let EngineItems {
        mut pair,
        addresses,
        items,
        want,
        errors,
        ..
    } = EngineItems::new(seed ^ 0x7C0E, tx_packets, 0.05);
    let mut write = |addr: u8, data| tb.write_cfg(NIC_CORE_TX_CFG | u16::from(addr), data);
    configure(&addresses, &mut write);
    // The ACK framer's IPv6 source: the receive core's local address (the
    // one the ACKs' ICRC covers), written to the TX map as the firmware
    // would; a NIC without an IPv6 address leaves it unused.
    let local_ip6 = match family.local() {
        IpAddr::V6(v6) => v6,
        IpAddr::V4(_) => Ipv6Addr::UNSPECIFIED,
    };
    configure_local_ip6(local_ip6, &mut write);
    // The addresses the ACK frames carry: the TX map's, with the local
    // address of the receive traffic's family.
    let ack_addresses = Addresses {
        local_ip: family.local(),
        ..addresses
    };
    let ack_cnt: [Port; 3] = [
        tb.sim().port("ack_cnt_frames")?,
        tb.sim().port("ack_cnt_ece")?,
        tb.sim().port("ack_cnt_v6")?,
    ];

    let mut tx_knob = tx_knobs(seed, backpressure);
    let feeder = TxFeeder::new(
        tb.sim(),
        NIC_CORE_TX_CFG,
        &items,
        &mut pair.a.mem,
        &mut tx_knob,
    )?;
    // The firmware writes the receive streams' MSN heads as they move.
    let mut side = HeadMirror::new(tb.sim(), feeder, family, &case.frames, &case.ce)?;
    let mut knobs = rx_knobs(seed, backpressure);
    let wire = tb.wire(&case.frames, &case.ce);
    let started = crate::SimTimer::start();
    let mut out = tb.run_with(&case.frames, &wire, &case.ce, &mut knobs, &mut side);
    let sim_secs = started.secs();
    let (feed_errors, _) = side.into_inner().finish(tb.sim());

    // Split the MAC TX port's frames by source, keeping each source's order.
    let mut run = NicCoreRun {
        mac_beats: out.ack_beats,
        cycles: out.cycles,
        sim_secs,
        ..NicCoreRun::default()
    };
    let (data, switches) = split_by_source(std::mem::take(&mut out.mac_frames), &mut out.acks);
    run.switches = switches;
    run.ack_frames = out.acks.len() as u64;
    run.ack_frames_v6 = out
        .acks
        .iter()
        .filter(|a| a.headers.len() == ACK_HEADERS_V6)
        .count() as u64;
    let engine_ece = out.acks.iter().filter(|a| a.ece).count() as u64;
    let counters = ack_cnt.map(|p| tb.sim().get(p));

    run.rx = case.compare(&mut tb, &out, sim_secs, Some(&ack_addresses));
    let m = &mut run.rx.mismatches;
    m.extend(errors);
    m.extend(feed_errors);
    run.retransmissions = check_data_frames(&data, &items, &want, m);
    run.data_frames = data.len().min(items.len()) as u64;
    for (name, got, want) in [
        ("ack_cnt_frames", counters[0], run.ack_frames),
        ("ack_cnt_ece", counters[1], engine_ece),
        ("ack_cnt_v6", counters[2], run.ack_frames_v6),
    ] {
        if got != want {
            m.push(format!("{name}: rtl {got}, frames seen {want}"));
        }
    }
    Ok(run)
}
