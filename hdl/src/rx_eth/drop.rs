//! Why the front end drops a frame: the `m_ev_reason` codes.

/// Why the front end dropped a frame (`m_ev_reason`, counter index).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EthDrop {
    /// Accepted: the UDP payload goes to the output.
    Accepted = 0,
    /// The frame ends before a header, or before the IP length.
    Truncated = 1,
    /// Not IPv4 or IPv6 (after at most one 802.1Q tag).
    EtherType = 2,
    /// IP version wrong, IPv4 IHL < 5 or total length < header length.
    BadIpHeader = 3,
    /// IPv4 header checksum wrong.
    BadChecksum = 4,
    /// IPv4 fragment (MF set or offset ≠ 0).
    Fragment = 5,
    /// IPv6 extension header.
    ExtHeader = 6,
    /// Not UDP.
    Protocol = 7,
    /// Bytes after the IP packet in a frame longer than [`PAD_MAX`](super::PAD_MAX).
    TrailingBytes = 8,
    /// UDP length disagrees with the IP length, or no room for a UDP header.
    UdpLength = 9,
    /// UDP destination port is not the configured one.
    Port = 10,
    /// Empty UDP payload.
    NoPayload = 11,
    /// Longer than [`MAX_FRAME`](super::MAX_FRAME).
    TooLong = 12,
}

impl EthDrop {
    /// Every code, by value.
    pub const ALL: [EthDrop; 13] = [
        Self::Accepted,
        Self::Truncated,
        Self::EtherType,
        Self::BadIpHeader,
        Self::BadChecksum,
        Self::Fragment,
        Self::ExtHeader,
        Self::Protocol,
        Self::TrailingBytes,
        Self::UdpLength,
        Self::Port,
        Self::NoPayload,
        Self::TooLong,
    ];

    /// The reason with code `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// `SCREAMING_SNAKE` name (Verilog localparams, bench constants).
    pub fn const_name(self) -> String {
        format!("{self:?}")
            .chars()
            .enumerate()
            .flat_map(|(i, c)| {
                let sep = (i > 0 && c.is_uppercase()).then_some('_');
                sep.into_iter().chain(c.to_uppercase())
            })
            .collect()
    }
}
