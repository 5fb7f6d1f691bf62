//! Opcodes, header flags and NACK reasons.

use crate::Error;
use crate::header::{AckHeader, CmHeader, MsgHeader, MultiAckHeader, NackHeader};

/// What a packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// RDMA WRITE data.
    Write = 0x01,
    /// RDMA WRITE with immediate data (consumes a posted receive).
    WriteImm = 0x02,
    /// SEND data (consumes a posted receive).
    Send = 0x03,
    /// SEND with immediate data (consumes a posted receive).
    SendImm = 0x04,
    /// RDMA READ request.
    ReadReq = 0x05,
    /// RDMA READ response data.
    ReadResp = 0x06,
    /// 8-byte atomic fetch-and-add request (payload: the addend).
    FetchAdd = 0x08,
    /// 8-byte atomic compare-and-swap request (payload: compare, swap).
    CompareSwap = 0x09,
    /// Atomic response (payload: the 8 bytes found at the target).
    AtomicResp = 0x0A,
    /// Per-path acknowledgement.
    Ack = 0x10,
    /// Negative acknowledgement.
    Nack = 0x11,
    /// Path probe (consumes a path PSN, carries nothing).
    Probe = 0x12,
    /// Acknowledgement of several paths of one connection (revision v0.1.4,
    /// sent only to a peer that set [`Flags::MULTI_ACK_OK`]).
    MultiAck = 0x13,
    /// XOR parity over a group of a WRITE or WRITE_IMM message's packets, from
    /// which the receiver rebuilds one lost packet (revision v0.1.5, sent
    /// only to a peer whose ACKs carry [`Flags::PARITY_OK`]).
    Parity = 0x14,
    /// Connection request.
    Connect = 0x20,
    /// Connection accept.
    ConnectAck = 0x21,
    /// Connection teardown.
    Disconnect = 0x22,
}

impl Opcode {
    /// All opcodes, in wire-value order.
    pub const ALL: [Opcode; 17] = [
        Opcode::Write,
        Opcode::WriteImm,
        Opcode::Send,
        Opcode::SendImm,
        Opcode::ReadReq,
        Opcode::ReadResp,
        Opcode::FetchAdd,
        Opcode::CompareSwap,
        Opcode::AtomicResp,
        Opcode::Ack,
        Opcode::Nack,
        Opcode::Probe,
        Opcode::MultiAck,
        Opcode::Parity,
        Opcode::Connect,
        Opcode::ConnectAck,
        Opcode::Disconnect,
    ];

    /// Length of this opcode's extension header.
    pub const fn ext_len(self) -> usize {
        match self {
            Opcode::Write
            | Opcode::WriteImm
            | Opcode::Send
            | Opcode::SendImm
            | Opcode::ReadReq
            | Opcode::ReadResp
            | Opcode::FetchAdd
            | Opcode::CompareSwap
            | Opcode::AtomicResp
            | Opcode::Parity => size_of::<MsgHeader>(),
            Opcode::Ack => size_of::<AckHeader>(),
            Opcode::Nack => size_of::<NackHeader>(),
            Opcode::MultiAck => size_of::<MultiAckHeader>(),
            Opcode::Probe => 0,
            Opcode::Connect | Opcode::ConnectAck | Opcode::Disconnect => size_of::<CmHeader>(),
        }
    }

    /// True when packets of this opcode may carry payload bytes.
    pub const fn has_payload(self) -> bool {
        matches!(
            self,
            Opcode::Write
                | Opcode::WriteImm
                | Opcode::Send
                | Opcode::SendImm
                | Opcode::ReadResp
                | Opcode::FetchAdd
                | Opcode::CompareSwap
                | Opcode::AtomicResp
                | Opcode::Parity
        )
    }

    /// True for the opcodes only the software data path knows (MULTI_ACK,
    /// PARITY): negotiated in band, never sent to the RTL, which drops them
    /// as unknown (spec §1.4).
    pub const fn software_only(self) -> bool {
        matches!(self, Opcode::MultiAck | Opcode::Parity)
    }

    /// True when packets of this opcode carry the MSG extension: the
    /// messages' opcodes ([`Opcode::is_message`]) and PARITY.
    pub const fn has_msg_ext(self) -> bool {
        self.ext_len() == size_of::<MsgHeader>()
    }

    /// True when packets of this opcode carry path entries after their
    /// extension (MULTI_ACK): variable length, but not a payload.
    pub const fn has_entries(self) -> bool {
        matches!(self, Opcode::MultiAck)
    }

    /// True for the atomics' opcodes (FETCH_ADD, COMPARE_SWAP, ATOMIC_RESP), which
    /// came with spec revision v0.1.2.
    pub const fn is_atomic(self) -> bool {
        self.is_atomic_request() || matches!(self, Opcode::AtomicResp)
    }

    /// True for the atomic requests (FETCH_ADD, COMPARE_SWAP).
    pub const fn is_atomic_request(self) -> bool {
        matches!(self, Opcode::FetchAdd | Opcode::CompareSwap)
    }

    /// Payload bytes of an atomic request (its operands): 8 for FETCH_ADD, 16 for
    /// COMPARE_SWAP; 0 for every other opcode.
    pub const fn operand_len(self) -> usize {
        match self {
            Opcode::FetchAdd => 8,
            Opcode::CompareSwap => 16,
            _ => 0,
        }
    }

    /// True for requests answered by the responder's send side (READ_REQ and the
    /// atomic requests).
    pub const fn is_request(self) -> bool {
        matches!(self, Opcode::ReadReq) || self.is_atomic_request()
    }

    /// True for the responses to requests (READ_RESP, ATOMIC_RESP).
    pub const fn is_response(self) -> bool {
        matches!(self, Opcode::ReadResp | Opcode::AtomicResp)
    }

    /// True for opcodes with the message extension (data, READ and atomic requests and
    /// their responses).
    pub const fn is_message(self) -> bool {
        self.ext_len() == size_of::<MsgHeader>() && (self as u8) < 0x10
    }

    /// True for opcodes that consume a posted receive at the receiver.
    pub const fn consumes_receive(self) -> bool {
        matches!(self, Opcode::WriteImm | Opcode::Send | Opcode::SendImm)
    }

    /// True for opcodes that carry immediate data.
    pub const fn has_imm(self) -> bool {
        matches!(self, Opcode::WriteImm | Opcode::SendImm)
    }

    /// True for opcodes that carry a remote address and rkey.
    pub const fn has_remote_address(self) -> bool {
        matches!(
            self,
            Opcode::Write
                | Opcode::WriteImm
                | Opcode::ReadReq
                | Opcode::FetchAdd
                | Opcode::CompareSwap
        )
    }
}

impl TryFrom<u8> for Opcode {
    type Error = Error;
    fn try_from(value: u8) -> Result<Self, Error> {
        Opcode::ALL
            .iter()
            .copied()
            .find(|op| *op as u8 == value)
            .ok_or(Error::BadOpcode(value))
    }
}

bitflags::bitflags! {
    /// Base-header flag bits. Unknown bits are ignored on receive.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct Flags: u16 {
        /// First packet of a message.
        const FIRST = 1 << 0;
        /// Last packet of a message.
        const LAST = 1 << 1;
        /// Acknowledge at once.
        const ACK_REQ = 1 << 2;
        /// Retransmission (informational).
        const RETX = 1 << 3;
        /// Solicited event requested.
        const SOLICITED = 1 << 4;
        /// ACK only: an acknowledged packet carried ECN CE.
        const ECE = 1 << 5;
        /// Data and PROBE: the sender accepts MULTI_ACKs in reply
        /// (revision v0.1.4; a receiver that does not know it ignores it).
        const MULTI_ACK_OK = 1 << 6;
        /// ACK and MULTI_ACK: the receiver rebuilds lost packets from PARITY
        /// packets (revision v0.1.5; a sender that does not know it ignores it).
        const PARITY_OK = 1 << 7;
    }
}

/// Why a receiver rejected a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NackReason {
    /// No posted receive yet; retry after the delay in `detail`.
    ReceiverNotReady = 1,
    /// Bad rkey, address outside the region, or access not permitted.
    RemoteAccess = 2,
    /// Opcode not allowed, message longer than the receive buffer, bad lengths.
    InvalidRequest = 3,
    /// The receiver failed to place the data.
    RemoteOperational = 4,
}

impl TryFrom<u8> for NackReason {
    type Error = Error;
    fn try_from(value: u8) -> Result<Self, Error> {
        match value {
            1 => Ok(NackReason::ReceiverNotReady),
            2 => Ok(NackReason::RemoteAccess),
            3 => Ok(NackReason::InvalidRequest),
            4 => Ok(NackReason::RemoteOperational),
            _ => Err(Error::BadField("NACK reason")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_values_round_trip_and_unknown_values_are_refused() {
        for op in Opcode::ALL {
            assert_eq!(Opcode::try_from(op as u8), Ok(op));
        }
        assert_eq!(Opcode::try_from(0x00), Err(Error::BadOpcode(0)));
        assert_eq!(Opcode::try_from(0x07), Err(Error::BadOpcode(7)));
        assert_eq!(Opcode::try_from(0x15), Err(Error::BadOpcode(0x15)));
        assert_eq!(Opcode::try_from(0xff), Err(Error::BadOpcode(0xff)));
    }

    #[test]
    fn message_opcodes_are_exactly_the_data_read_and_atomic_opcodes() {
        let messages: usize = Opcode::ALL.iter().filter(|op| op.is_message()).count();
        assert_eq!(messages, 9);
        assert_eq!(Opcode::CompareSwap.operand_len(), 16);
        assert!(Opcode::FetchAdd.is_request() && Opcode::AtomicResp.is_response());
        assert!(!Opcode::Connect.is_message());
        assert!(Opcode::Parity.has_msg_ext() && !Opcode::Parity.is_message());
        assert!(Opcode::Parity.software_only() && !Opcode::Write.software_only());
        assert!(Opcode::ReadReq.is_message() && !Opcode::ReadReq.has_payload());
    }
}
