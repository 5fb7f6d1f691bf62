//! Typed parse and emit errors.

/// Why a datagram could not be parsed or a packet could not be emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Shorter than the base header plus the opcode's extension and the ICRC.
    #[error("datagram truncated: {len} bytes, need at least {need}")]
    Truncated {
        /// Bytes available.
        len: usize,
        /// Bytes the header chain needs.
        need: usize,
    },
    /// The version byte is not [`crate::VERSION`].
    #[error("unsupported version {0}")]
    BadVersion(u8),
    /// The opcode byte names no known opcode.
    #[error("unknown opcode {0:#04x}")]
    BadOpcode(u8),
    /// A payload is present on an opcode that carries none.
    #[error("opcode {0:#04x} carries no payload but {1} payload bytes follow")]
    UnexpectedPayload(u8, usize),
    /// The ICRC trailer does not match the packet.
    #[error("ICRC mismatch: carried {carried:#010x}, computed {computed:#010x}")]
    BadIcrc {
        /// Value in the trailer.
        carried: u32,
        /// Value computed over the packet.
        computed: u32,
    },
    /// A field value is invalid for its opcode (for example a NACK reason).
    #[error("invalid field: {0}")]
    BadField(&'static str),
    /// The output buffer is too small for the packet being emitted.
    #[error("buffer of {len} bytes too small, need {need}")]
    BufferTooSmall {
        /// Bytes available.
        len: usize,
        /// Bytes needed.
        need: usize,
    },
}
