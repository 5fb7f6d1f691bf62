//! Zero-copy view of a MetaRoCE datagram (the UDP payload).

use zerocopy::FromBytes;

use crate::header::{AckHeader, BaseHeader, CmHeader, MsgHeader, MultiAckHeader, NackHeader};
use crate::icrc::{PseudoHeader, compute_icrc};
use crate::{BASE_LEN, Error, ICRC_LEN, Opcode, Result, VERSION};

/// A view over a buffer holding one MetaRoCE datagram.
///
/// Build it with [`Packet::new_checked`] for untrusted input: after that every
/// accessor is in bounds. [`Packet::new_unchecked`] skips the checks; its
/// accessors may panic on short buffers and are meant for buffers the caller
/// has just sized with [`crate::Repr::buffer_len`].
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wraps a buffer after [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self> {
        let packet = Packet::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks, in order: room for the base header and ICRC, the version, the
    /// opcode, room for the opcode's extension, and that opcodes without a
    /// payload (or MULTI_ACK path entries) carry none.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        let min = BASE_LEN + ICRC_LEN;
        if len < min {
            return Err(Error::Truncated { len, need: min });
        }
        let base = self.base();
        if base.version != VERSION {
            return Err(Error::BadVersion(base.version));
        }
        let opcode = Opcode::try_from(base.opcode)?;
        let need = min + opcode.ext_len();
        if len < need {
            return Err(Error::Truncated { len, need });
        }
        if !opcode.has_payload() && !opcode.has_entries() && len > need {
            return Err(Error::UnexpectedPayload(opcode as u8, len - need));
        }
        Ok(())
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The whole datagram.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The base header.
    pub fn base(&self) -> &BaseHeader {
        BaseHeader::ref_from_prefix(self.buffer.as_ref())
            .map(|(h, _)| h)
            .expect("Packet::base on a buffer shorter than the base header")
    }

    /// The opcode, if the byte names one.
    pub fn opcode(&self) -> Result<Opcode> {
        Opcode::try_from(self.base().opcode)
    }

    fn ext_len(&self) -> usize {
        self.opcode().map_or(0, Opcode::ext_len)
    }

    fn ext_bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[BASE_LEN..BASE_LEN + self.ext_len()]
    }

    /// The message extension, for data, READ and atomic opcodes and PARITY.
    pub fn msg(&self) -> Option<&MsgHeader> {
        self.opcode()
            .ok()
            .filter(|op| op.has_msg_ext())
            .and_then(|_| MsgHeader::ref_from_bytes(self.ext_bytes()).ok())
    }

    /// The ACK extension.
    pub fn ack(&self) -> Option<&AckHeader> {
        (self.opcode() == Ok(Opcode::Ack))
            .then(|| AckHeader::ref_from_bytes(self.ext_bytes()).ok())
            .flatten()
    }

    /// The MULTI_ACK extension (its connection part; the path entries are
    /// the bytes of [`Packet::payload`]).
    pub fn multi_ack(&self) -> Option<&MultiAckHeader> {
        (self.opcode() == Ok(Opcode::MultiAck))
            .then(|| MultiAckHeader::ref_from_bytes(self.ext_bytes()).ok())
            .flatten()
    }

    /// The NACK extension.
    pub fn nack(&self) -> Option<&NackHeader> {
        (self.opcode() == Ok(Opcode::Nack))
            .then(|| NackHeader::ref_from_bytes(self.ext_bytes()).ok())
            .flatten()
    }

    /// The connection-management extension.
    pub fn cm(&self) -> Option<&CmHeader> {
        matches!(
            self.opcode(),
            Ok(Opcode::Connect | Opcode::ConnectAck | Opcode::Disconnect)
        )
        .then(|| CmHeader::ref_from_bytes(self.ext_bytes()).ok())
        .flatten()
    }

    /// Range of the payload within the datagram (a MULTI_ACK's path entries).
    pub fn payload_range(&self) -> core::ops::Range<usize> {
        let len = self.buffer.as_ref().len();
        BASE_LEN + self.ext_len()..len - ICRC_LEN
    }

    /// The payload bytes.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.payload_range()]
    }

    /// The ICRC carried in the trailer.
    pub fn icrc(&self) -> u32 {
        let b = self.buffer.as_ref();
        let mut t = [0u8; 4];
        t.copy_from_slice(&b[b.len() - ICRC_LEN..]);
        u32::from_be_bytes(t)
    }

    /// Checks the trailer against the ICRC computed with `pseudo`.
    pub fn verify_icrc(&self, pseudo: &PseudoHeader) -> Result<()> {
        let computed = compute_icrc(pseudo, self.buffer.as_ref());
        let carried = self.icrc();
        if computed == carried {
            Ok(())
        } else {
            Err(Error::BadIcrc { carried, computed })
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// The base header, writable (for example to rewrite the path id).
    pub fn base_mut(&mut self) -> &mut BaseHeader {
        BaseHeader::mut_from_prefix(self.buffer.as_mut())
            .map(|(h, _)| h)
            .expect("Packet::base_mut on a buffer shorter than the base header")
    }

    /// The payload bytes, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let range = self.payload_range();
        &mut self.buffer.as_mut()[range]
    }

    /// Computes the ICRC with `pseudo` and writes it into the trailer. Call it
    /// last, after any rewrite of covered fields such as the UDP source port.
    pub fn fill_icrc(&mut self, pseudo: &PseudoHeader) {
        let icrc = compute_icrc(pseudo, self.buffer.as_ref());
        let b = self.buffer.as_mut();
        let len = b.len();
        b[len - ICRC_LEN..].copy_from_slice(&icrc.to_be_bytes());
    }
}
