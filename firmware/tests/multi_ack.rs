//! MULTI_ACK (spec §3.11, §6.4): negotiated in band by the MULTI_ACK_OK flag.
//! Two engines that both accept it acknowledge several paths per datagram;
//! when either side does not (as the hardware data path never does), only
//! single-path ACKs are sent, and transfers complete either way.

use metaroce_firmware::loopback::{Channel, MEM_BASE, Pair, pattern, write_wr};
use metaroce_firmware::{QpConfig, SendOp, SendWr, Sge};
use metaroce_proto::{Flags, Opcode, Packet};

const MSG: u32 = 64 * 1024;
const MESSAGES: u64 = 8;

/// What B sent towards A, and what A's data packets carried.
#[derive(Debug, Default)]
struct Seen {
    acks: usize,
    multi_acks: usize,
    entries: usize,
    most_entries: usize,
    data: usize,
    data_flagged: usize,
}

/// B's WRITE of message `id` to A (after A's messages in the regions).
fn write_to_a(p: &Pair, id: u64) -> SendWr {
    let addr = MEM_BASE + (MESSAGES + id) * u64::from(MSG);
    SendWr {
        wr_id: id,
        op: SendOp::Write {
            remote_va: addr,
            rkey: p.a.mr.rkey,
        },
        sgl: Sge {
            addr,
            len: MSG,
            lkey: p.b.mr.lkey,
        }
        .into(),
        signaled: true,
        solicited: false,
        stream: 0,
    }
}

/// A writes [`MESSAGES`] messages to B over 16 paths (and B as many to A
/// when `both_ways`, so that B's link is busy when A's packets arrive);
/// returns what was on the wire once all completed with the copies intact.
fn transfer(a_accepts: bool, b_accepts: bool, loss: f64, both_ways: bool) -> Seen {
    let qp = |multi_ack| QpConfig {
        paths: 16,
        multi_ack,
        ..QpConfig::default()
    };
    let channel = Channel {
        loss,
        ..Channel::default()
    };
    let mut p = Pair::with_configs(5, qp(a_accepts), qp(b_accepts), channel);
    p.capture = Some(Vec::new());
    for id in 0..MESSAGES {
        let addr = MEM_BASE + id * u64::from(MSG);
        pattern(id, p.a.mem.slice_mut(addr, MSG as usize));
        let wr = write_wr(&p, id, addr, MSG);
        p.a.nic.post_send(p.a.qpn, wr).unwrap();
        if both_ways {
            let wr = write_to_a(&p, id);
            let addr = MEM_BASE + (MESSAGES + id) * u64::from(MSG);
            pattern(MESSAGES + id, p.b.mem.slice_mut(addr, MSG as usize));
            p.b.nic.post_send(p.b.qpn, wr).unwrap();
        }
    }
    let want = if both_ways { 2 * MESSAGES } else { MESSAGES };
    let mut done = 0;
    let until = p.now + 500_000_000;
    assert!(
        p.run_until(until, |p| {
            let (a, b) = p.events();
            done += (a.len() + b.len()) as u64;
            done >= want
        }),
        "transfer did not complete"
    );
    for id in 0..want {
        let addr = MEM_BASE + id * u64::from(MSG);
        assert_eq!(
            p.b.mem.slice(addr, MSG as usize),
            p.a.mem.slice(addr, MSG as usize)
        );
    }
    let mut seen = Seen::default();
    for (to_b, bytes, _) in p.capture.take().unwrap() {
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        let flags = Flags::from_bits_truncate(packet.base().flags.get());
        match (to_b, packet.opcode().unwrap()) {
            (false, Opcode::Ack) => seen.acks += 1,
            (false, Opcode::MultiAck) => {
                let n = usize::from(packet.multi_ack().unwrap().count);
                seen.multi_acks += 1;
                seen.entries += n;
                seen.most_entries = seen.most_entries.max(n);
            }
            (true, Opcode::Write) => {
                seen.data += 1;
                seen.data_flagged += usize::from(flags.contains(Flags::MULTI_ACK_OK));
            }
            _ => {}
        }
    }
    seen
}

#[test]
fn engines_that_both_accept_it_acknowledge_several_paths_per_datagram() {
    let s = transfer(true, true, 0.0, true);
    assert_eq!(s.data_flagged, s.data, "{s:?}");
    assert_eq!(s.acks, 0, "{s:?}");
    assert!(s.most_entries >= 2, "{s:?}");
    assert!(s.multi_acks < s.entries, "{s:?}");
}

#[test]
fn a_sender_that_does_not_offer_it_gets_single_path_acks() {
    let s = transfer(false, true, 0.0, true);
    assert_eq!((s.data_flagged, s.multi_acks), (0, 0), "{s:?}");
    assert!(s.acks > 0, "{s:?}");
}

#[test]
fn a_receiver_configured_without_it_sends_single_path_acks() {
    let s = transfer(true, false, 0.0, true);
    assert_eq!(s.data_flagged, s.data, "{s:?}");
    assert_eq!(s.multi_acks, 0, "{s:?}");
}

#[test]
fn lossy_transfers_complete_with_multi_acks() {
    let s = transfer(true, true, 0.05, false);
    assert!(s.multi_acks > 0 && s.acks == 0, "{s:?}");
}
