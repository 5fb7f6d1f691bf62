//! The end-of-run comparisons of what the host read and what came out of
//! the MAC TX port against the engine: verdicts, handed-up datagrams,
//! placed bytes, data frames and firmware frames.

use std::net::IpAddr;

use metaroce_proto::{Packet, Repr};

use super::consume::{FwRx, VerdictEv};
use super::post::FwDatagram;
use super::tb::DeviceTb;
use super::{DeviceRun, FWTX_PORT, V_FIRMWARE, regs};
use crate::core_check::HostRxCase;
use crate::frame::{self, mapped_bits};
use crate::nic_core::ack_of;
use crate::rx_parser::Frame;
use crate::tx_build::TxItem;
use crate::tx_check::compare;

/// Verdicts: in order, one per datagram, as the engine decided; returns the
/// datagrams handed to the firmware (verdict 10), in order.
pub(super) fn verdicts<'c>(
    case: &'c HostRxCase,
    verdicts: &[VerdictEv],
    run: &mut DeviceRun,
) -> Vec<&'c Frame> {
    let m = &mut run.mismatches;
    if verdicts.len() != case.frames.len() {
        m.push(format!(
            "{} verdict events for {} datagrams",
            verdicts.len(),
            case.frames.len()
        ));
    }
    let mut fw_frames = Vec::new();
    for (i, (v, f)) in verdicts.iter().zip(&case.frames).enumerate() {
        let want = if i < case.verdicts.len() {
            case.verdicts[i]
        } else {
            Some(V_FIRMWARE)
        };
        if let Some(w) = want {
            run.verdicts_checked += 1;
            if v.code != w {
                m.push(format!("datagram {i}: verdict {}, engine {w}", v.code));
            }
        }
        if v.code == V_FIRMWARE {
            fw_frames.push(f);
        }
        run.placements += u64::from(v.code == 0 && v.len > 0);
        if let Some(d) = fields_diff(v, f) {
            m.push(format!("datagram {i} (verdict {}): {d}", v.code));
        }
    }
    run.verdict_events = verdicts.len() as u64;
    fw_frames
}

/// The verdict event's header fields against the datagram's, for the
/// verdicts past the parser (the parser's drops report what they got).
fn fields_diff(v: &VerdictEv, f: &Frame) -> Option<String> {
    if v.src_port != f.pseudo.src_port {
        return Some(format!(
            "src_port {}, datagram {}",
            v.src_port, f.pseudo.src_port
        ));
    }
    if (1..=5).contains(&v.code) {
        return None;
    }
    let r = Repr::parse(&Packet::new_checked(&f.bytes[..]).ok()?).ok()?;
    let payload = f.bytes.len() - r.header_len() - metaroce_proto::ICRC_LEN;
    let got = (v.opcode, v.dst_qpn, v.path, v.path_psn, usize::from(v.len));
    let want = (r.opcode as u8, r.dst_qpn, r.path, r.path_psn, payload);
    (got != want)
        .then(|| format!("(opcode, dst_qpn, path, path_psn, len) {got:?}, datagram {want:?}"))
}

/// The firmware receive ring: the datagrams of verdict 10 (`fw_frames`), in
/// order, cut to the slot.
pub(super) fn fw_receive(fw_rx: &[FwRx], fw_frames: &[&Frame], run: &mut DeviceRun) {
    let m = &mut run.mismatches;
    if fw_rx.len() != fw_frames.len() {
        m.push(format!(
            "{} firmware receive entries for {} verdict-10 datagrams",
            fw_rx.len(),
            fw_frames.len()
        ));
    }
    for (k, ((port, len, cut, data), f)) in fw_rx.iter().zip(fw_frames).enumerate() {
        let n = f.bytes.len().min(regs::FW_SLOT_BYTES);
        if usize::from(*len) != f.bytes.len()
            || *cut != (f.bytes.len() > regs::FW_SLOT_BYTES)
            || *port != f.pseudo.src_port
            || data[..] != f.bytes[..n]
        {
            m.push(format!(
                "firmware receive entry {k}: len {len} cut {cut} port {port}, datagram {} B port {}, \
                 first differing byte {:?}",
                f.bytes.len(),
                f.pseudo.src_port,
                data.iter().zip(&f.bytes[..n]).position(|(a, b)| a != b)
            ));
        }
        run.fw_rx_cut += u64::from(*cut);
    }
    run.fw_rx = fw_rx.len() as u64;
}

/// Placed bytes against the engine's memory, and as many placement writes.
pub(super) fn placed_memory(tb: &DeviceTb, case: &HostRxCase, m: &mut Vec<String>) {
    let got = tb.mem.read(case.mem_base, case.mem.len()).expect("mapped");
    if got != case.mem {
        let at = got.iter().zip(&case.mem).position(|(a, b)| a != b);
        m.push(format!(
            "MR memory differs from the engine's at offset {at:?}"
        ));
    }
    if tb.mr_writes != case.engine_writes as u64 {
        m.push(format!(
            "{} placement writes, the engine made {}",
            tb.mr_writes, case.engine_writes
        ));
    }
}

/// MAC TX: data frames against their references (`want`, one per item),
/// firmware datagrams against those posted (`fw_want`), ACK frames counted.
pub(super) fn mac_tx(
    frames: Vec<Vec<u8>>,
    items: &[TxItem],
    want: &[Vec<u8>],
    fw_want: &[FwDatagram],
    run: &mut DeviceRun,
) {
    let (data, fw_out) = sort_tx_frames(frames, run);
    let m = &mut run.mismatches;
    for (i, (item, want)) in items.iter().zip(want).enumerate() {
        match data.get(i) {
            Some(got) => {
                if let Some(d) = compare(got, want, &item.desc, false) {
                    m.push(format!("data frame {i}: {d}"));
                }
            }
            None => {
                m.push(format!("data frame {i}: missing ({} came out)", data.len()));
                break;
            }
        }
    }
    run.data_frames = data.len().min(items.len()) as u64;
    if data.len() > items.len() {
        m.push(format!("{} data frames too many", data.len() - items.len()));
    }
    if fw_out != fw_want {
        m.push(format!(
            "firmware datagrams out {:?}, posted {:?}",
            fw_out
                .iter()
                .map(|f| (f.0, f.1, f.2.len()))
                .collect::<Vec<_>>(),
            fw_want
                .iter()
                .map(|f| (f.0, f.1, f.2.len()))
                .collect::<Vec<_>>()
        ));
    }
    run.fw_tx_frames = fw_out.len() as u64;
}

/// Sorts the MAC TX frames: ACK frames counted (`run.ack_frames`), the
/// firmware datagrams (UDP to [`FWTX_PORT`]) returned as posted, the data
/// frames returned as they are.
fn sort_tx_frames(frames: Vec<Vec<u8>>, run: &mut DeviceRun) -> (Vec<Vec<u8>>, Vec<FwDatagram>) {
    let mut data = Vec::new();
    let mut fw_out = Vec::new();
    for f in frames {
        if ack_of(&f).is_some() {
            run.ack_frames += 1;
            continue;
        }
        let fw = frame::parse(&f).and_then(|d| match d.dst_ip {
            IpAddr::V4(_) if d.dst_port == FWTX_PORT => {
                Some((mapped_bits(d.dst_ip), d.src_port, d.payload.to_vec()))
            }
            _ => None,
        });
        match fw {
            Some(x) => fw_out.push(x),
            None => data.push(f),
        }
    }
    (data, fw_out)
}
