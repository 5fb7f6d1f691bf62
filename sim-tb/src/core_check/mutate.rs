//! The hostile variants of the receive bench's messages: forged keys,
//! bad addresses, QPs, peers, paths, streams and PSNs, wrong lengths,
//! truncation, flipped bits and rewritten ports.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use metaroce_proto::{Ext, MsgRepr, Opcode, Repr};
use rand::Rng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;

use super::engine::Engine;
use super::metaroce_hdl_codes::*;
use super::traffic::{Write, seal};
use super::{MTU, STREAMS};
use crate::rx_parser::Frame;

fn msg_mut(r: &mut Repr) -> &mut MsgRepr {
    match &mut r.ext {
        Ext::Msg(m) => m,
        _ => unreachable!("a message"),
    }
}

/// Hostile variants every message opcode gets (see [`hostile`]).
const HOSTILE_ANY: [u8; 13] = [6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, MSN_FAR, MSN_OLD];

/// The variant whose MSN is far beyond its stream's MSN window (spec §6.5).
const MSN_FAR: u8 = 24;

/// The variant whose MSN is before its stream's MSN head: a new packet of a
/// completed message (the engine's `bad_format`).
const MSN_OLD: u8 = 25;

/// A hostile variant of the message `w` (same connection PSN), sealed: for
/// a WRITE any of the variants below (0–17, an MSN far beyond the
/// stream's window and one before its head), for a WRITE_IMM those plus a
/// `recv_idx` with no receive, for a SEND the ones of every message opcode
/// and a stream beyond the QP's, plus a `recv_idx` with no receive and a
/// message longer than its receive (under an MSN never used, so the
/// engine's message-consistency check does not see it), for a READ
/// response those plus a stream beyond the QP's, and an MSN or a stream
/// with no READ.
pub(super) fn hostile(rng: &mut SmallRng, w: &Write, e: &Engine) -> Frame {
    let pick = pick_variant(rng, w.repr.opcode);
    let mut h = *w;
    let mut src = w.src;
    let after = mutate(rng, pick, &mut h, &mut src, e);
    let mut f = seal(&h, src, e.local);
    match after {
        AfterSeal::Nothing => {}
        AfterSeal::Flip => {
            let at = rng.gen_range(0..f.bytes.len());
            f.bytes[at] ^= 1 << rng.gen_range(0..8);
        }
        AfterSeal::Cut => {
            let len = rng.gen_range(1..f.bytes.len());
            f.bytes.truncate(len);
        }
        AfterSeal::PortRewrite => f.pseudo.src_port ^= 1 << rng.gen_range(0..16),
    }
    f
}

/// What a variant does to the sealed frame.
enum AfterSeal {
    /// Nothing more.
    Nothing,
    /// One bit flipped anywhere.
    Flip,
    /// Truncated anywhere.
    Cut,
    /// One bit of the UDP source port flipped after the ICRC was computed.
    PortRewrite,
}

/// One of the variants that apply to a message of `opcode`.
fn pick_variant(rng: &mut SmallRng, opcode: Opcode) -> u8 {
    match opcode {
        Opcode::Write => *(0..18)
            .chain([MSN_FAR, MSN_OLD])
            .collect::<Vec<_>>()
            .choose(rng)
            .expect("variants"),
        Opcode::WriteImm => *(0..19)
            .chain([MSN_FAR, MSN_OLD])
            .collect::<Vec<_>>()
            .choose(rng)
            .expect("variants"),
        Opcode::ReadResp | Opcode::AtomicResp => *[&HOSTILE_ANY[..], &[11, 20, 21, 23]]
            .concat()
            .choose(rng)
            .expect("variants"),
        Opcode::FetchAdd | Opcode::CompareSwap => *[&HOSTILE_ANY[..], &[0, 1, 2, 3, 4, 5, 11, 22]]
            .concat()
            .choose(rng)
            .expect("variants"),
        _ => *[&HOSTILE_ANY[..], &[11, 18, 19]]
            .concat()
            .choose(rng)
            .expect("variants"),
    }
}

/// Applies variant `pick` to the message `h` (from `src`) before it is
/// sealed; says what to do to the frame after.
fn mutate(rng: &mut SmallRng, pick: u8, h: &mut Write, src: &mut IpAddr, e: &Engine) -> AfterSeal {
    let w = *h;
    match pick {
        0 => msg_mut(&mut h.repr).rkey = rng.r#gen(),
        1 => msg_mut(&mut h.repr).rkey = e.mrs[1].rkey,
        2 => msg_mut(&mut h.repr).rkey = e.mrs[2].rkey,
        // Out of bounds, keeping the lengths (a changed message length
        // would be the engine's message-consistency check, not the RTL's):
        // starts inside and ends past the region, or wraps around.
        3 => msg_mut(&mut h.repr).remote_va = e.mrs[0].addr + e.mrs[0].len - (w.len as u64 / 2),
        4 => msg_mut(&mut h.repr).remote_va = u64::MAX - (w.len as u64 / 2),
        5 => msg_mut(&mut h.repr).remote_va = e.mrs[0].addr - 1 - rng.gen_range(0..4096),
        6 => h.repr.dst_qpn = rng.r#gen::<u32>() | 0x1000_0000,
        7 => h.repr.dst_qpn = e.idle_qpn,
        8 => h.repr.src_qpn ^= rng.gen_range(1..u32::MAX),
        9 => {
            let x = rng.gen_range(3..255);
            *src = match e.local {
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::new(10, 0, 0, x)),
                IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, x.into())),
            }
        }
        10 => h.repr.path = rng.gen_range(64..=u16::MAX),
        11 => h.repr.stream = rng.gen_range(STREAMS as u16..=u16::MAX),
        12 => h.repr.conn_psn = h.repr.conn_psn.wrapping_add(rng.gen_range(300..1 << 30)),
        13 => {
            // Oversized: a message of more than an MTU in one packet.
            h.len = rng.gen_range(MTU as usize + 1..=MTU as usize + 200);
            msg_mut(&mut h.repr).msg_len = h.len as u32;
        }
        14 => {
            // Payload beyond the message.
            h.len = h.len.max(2);
            let m = msg_mut(&mut h.repr);
            m.msg_len = h.len as u32 - 1;
        }
        15 => return AfterSeal::Flip,
        // Path PSN at least 2^30 ahead of the path's (path window).
        16 => {
            h.repr.path_psn = h
                .repr
                .path_psn
                .wrapping_add(rng.gen_range(1 << 30..1 << 31))
        }
        18 => {
            let m = msg_mut(&mut h.repr);
            m.recv_idx = m.recv_idx.wrapping_add(RQ_SLOTS + rng.gen_range(0..1000));
        }
        19 => {
            let m = msg_mut(&mut h.repr);
            // An MSN not used yet but inside the engine's MSN window (the
            // receive window, spec §6.5), which the RTL does not check.
            m.msn = m.msn.wrapping_add(rng.gen_range(64..128));
            m.msg_len =
                e.recv_sge(usize::from(w.repr.stream), m.recv_idx).len + rng.gen_range(1..1000);
        }
        20 => msg_mut(&mut h.repr).msn += 1000,
        21 => h.repr.stream = 7,
        // An atomic's address not 8-byte aligned.
        22 => msg_mut(&mut h.repr).remote_va += rng.gen_range(1..8),
        // An MSN a window or more beyond its stream's head (the message's
        // own MSN is at most a few messages behind the head, however late
        // the variant comes), but less than 2^31: the MSN window, for a
        // response no READ.
        MSN_FAR => {
            let m = msg_mut(&mut h.repr);
            m.msn = m
                .msn
                .wrapping_add(CONN_WINDOW + rng.gen_range(1000..1 << 30));
        }
        // An MSN 1,000 to 2^30 before the message's own (so before its
        // stream's head, which is at most a few messages past it): a
        // completed message, for a response no READ.
        MSN_OLD => {
            let m = msg_mut(&mut h.repr);
            m.msn = m.msn.wrapping_sub(rng.gen_range(1000..1 << 30));
        }
        // A response of the other kind (READ_RESP for an atomic, ATOMIC_RESP
        // for a READ), same lengths.
        23 => {
            h.repr.opcode = match w.repr.opcode {
                Opcode::ReadResp => Opcode::AtomicResp,
                _ => Opcode::ReadResp,
            }
        }
        _ => {
            return if rng.gen_bool(0.5) {
                AfterSeal::PortRewrite
            } else {
                AfterSeal::Cut
            };
        }
    }
    AfterSeal::Nothing
}
