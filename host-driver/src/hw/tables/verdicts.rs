//! The receive core's verdict events as the engine sees them.

use metaroce_firmware::Drops;
use metaroce_firmware::datapath::{HwVerdict, PlacedPacket};
use metaroce_proto::{Flags, Opcode};

use crate::hw::codes::core::*;

/// The engine's view of a verdict code, for the codes it acts on.
pub fn hw_verdict(code: u8) -> Option<HwVerdict> {
    Some(match code {
        V_PLACED => HwVerdict::Placed,
        V_DUPLICATE => HwVerdict::Duplicate,
        V_REMOTE_ACCESS => HwVerdict::RemoteAccess,
        V_RNR => HwVerdict::ReceiverNotReady,
        V_INVALID_REQUEST => HwVerdict::InvalidRequest,
        V_REMOTE_OPERATIONAL => HwVerdict::RemoteOperational,
        V_UNEXPECTED_RESPONSE => HwVerdict::UnexpectedResponse,
        V_BAD_RESPONSE => HwVerdict::BadResponse,
        _ => return None,
    })
}

/// Counts a verdict that refused a packet before the engine saw it (the RTL's parser,
/// QP, peer, path, stream and window checks) in the engine's drop counter for the same
/// reason, as the engine counts it on the software data path; other codes count
/// nothing.
pub fn count_refusal(code: u8, drops: &mut Drops) {
    let counter = match code {
        V_TRUNCATED => &mut drops.truncated,
        V_BAD_VERSION => &mut drops.bad_version,
        V_BAD_OPCODE => &mut drops.bad_opcode,
        V_UNEXPECTED_PAYLOAD => &mut drops.bad_format,
        V_BAD_ICRC => &mut drops.bad_icrc,
        V_UNKNOWN_QP => &mut drops.unknown_qp,
        V_QP_STATE => &mut drops.qp_state,
        V_WRONG_PEER => &mut drops.wrong_peer,
        V_BAD_PATH => &mut drops.bad_path,
        V_BAD_STREAM => &mut drops.bad_stream,
        V_CONN_WINDOW => &mut drops.conn_window,
        V_BAD_LENGTH => &mut drops.bad_length,
        V_PATH_WINDOW => &mut drops.path_window,
        V_MSN_WINDOW => &mut drops.msn_window,
        _ => return,
    };
    *counter += 1;
}

/// The fields of one verdict event (`m_ev_*` of `NicCore`, or an event ring entry
/// of type 1), as the RTL gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerdictFields {
    /// Verdict code.
    pub code: u8,
    /// BTH opcode.
    pub opcode: u8,
    /// Flags.
    pub flags: u16,
    /// Destination QPN.
    pub dst_qpn: u32,
    /// Stream.
    pub stream: u16,
    /// Path.
    pub path: u16,
    /// Connection PSN.
    pub conn_psn: u32,
    /// Path PSN.
    pub path_psn: u32,
    /// Timestamp.
    pub timestamp: u64,
    /// MSN.
    pub msn: u32,
    /// Receive index.
    pub recv_idx: u32,
    /// Message length.
    pub msg_len: u32,
    /// Offset in the message.
    pub offset: u32,
    /// Immediate.
    pub imm: u32,
    /// Payload bytes.
    pub len: u16,
    /// UDP source port.
    pub src_port: u16,
}

impl VerdictFields {
    /// The event as the engine takes it (`Nic::handle_placed`); `None` for codes the
    /// engine does not act on (verdict 10: the datagram itself comes up) and for
    /// opcodes it does not know.
    pub fn placed(&self) -> Option<PlacedPacket> {
        let opcode = Opcode::try_from(self.opcode).ok()?;
        let verdict = hw_verdict(self.code)?;
        Some(PlacedPacket {
            verdict,
            opcode,
            flags: Flags::from_bits_truncate(self.flags),
            dst_qpn: self.dst_qpn,
            stream: self.stream,
            path: self.path,
            conn_psn: self.conn_psn,
            path_psn: self.path_psn,
            timestamp: self.timestamp,
            msn: self.msn,
            recv_idx: self.recv_idx,
            msg_len: self.msg_len,
            offset: self.offset,
            imm: self.imm,
            payload_len: self.len.into(),
            src_port: self.src_port,
            ecn_ce: false,
        })
    }
}
