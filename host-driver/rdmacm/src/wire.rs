//! The connection manager's messages on its TCP connection: the InfiniBand CM exchange
//! (REQ, REP, RTU, REJ, DREQ, DREP) carried out of band instead of in MADs.
//!
//! Each message is a frame: a 2-byte big-endian length of what follows, a 1-byte type,
//! then the type's fields, big-endian. A REQ starts with the magic `MRCM` and a version,
//! so a stray TCP peer is refused at once. [`Msg::parse`] checks every length and never
//! panics on hostile input.

use std::io::{self, Read, Write};

/// `MRCM`: first bytes of every REQ.
const MAGIC: [u8; 4] = *b"MRCM";
/// The protocol version this library speaks.
const VERSION: u8 = 1;
/// Largest frame body accepted.
pub const MAX_FRAME: usize = 512;

/// Private data limits of the IB CM messages as rdma_cm offers them (the kernel keeps
/// 36 bytes of the REQ for its own header).
pub mod pdata_max {
    /// REQ (`rdma_connect`).
    pub const REQ: usize = 56;
    /// REP (`rdma_accept`).
    pub const REP: usize = 196;
    /// REJ (`rdma_reject`).
    pub const REJ: usize = 148;
}

/// The queue pair of one end and how it wants the connection: what REQ and REP carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// QP number.
    pub qpn: u32,
    /// The PSN this end starts sending with.
    pub psn: u32,
    /// The port's GID (its address).
    pub gid: [u8; 16],
    /// The port's LID (MetaRoCE: its NIC's UDP port).
    pub lid: u16,
    /// The port's active MTU (`enum ibv_mtu`).
    pub mtu: u8,
    /// RDMA reads/atomics this end accepts at once.
    pub responder_resources: u8,
    /// RDMA reads/atomics this end issues at once.
    pub initiator_depth: u8,
    /// Flow control.
    pub flow_control: u8,
    /// Transport retries the sender wants (REQ only; 0 in a REP).
    pub retry_count: u8,
    /// RNR retries the receiver of this message should use.
    pub rnr_retry_count: u8,
    /// The QP uses an SRQ.
    pub srq: u8,
    /// Enhanced connection establishment: vendor.
    pub ece_vendor: u32,
    /// Enhanced connection establishment: options.
    pub ece_options: u32,
    /// Private data.
    pub pdata: Vec<u8>,
}

/// One CM message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Connection request (active → passive).
    Req(Endpoint),
    /// Reply: accepted (passive → active).
    Rep(Endpoint),
    /// Ready to use: the active side's QP is in RTS (active → passive).
    Rtu,
    /// Rejected, with a reason (IB CM REJ reason codes) and private data.
    Rej {
        /// Reason (8: no listener; 28: consumer defined).
        reason: u16,
        /// Private data.
        pdata: Vec<u8>,
    },
    /// Disconnect request.
    Dreq,
    /// Disconnect reply.
    Drep,
}

/// Why a frame was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Shorter than its fields.
    Truncated,
    /// Bytes left after the fields.
    Trailing,
    /// Unknown message type.
    UnknownType(u8),
    /// A REQ without the magic or with another version.
    BadMagic,
    /// Private data longer than the message allows.
    PrivateDataTooLong,
    /// A frame length beyond [`MAX_FRAME`].
    TooLong(usize),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Truncated => write!(f, "truncated message"),
            WireError::Trailing => write!(f, "trailing bytes after the message"),
            WireError::UnknownType(t) => write!(f, "unknown message type {t}"),
            WireError::BadMagic => write!(f, "not a MetaRoCE CM request (magic/version)"),
            WireError::PrivateDataTooLong => write!(f, "private data too long"),
            WireError::TooLong(n) => write!(f, "frame of {n} bytes (at most {MAX_FRAME})"),
        }
    }
}

mod kind {
    pub const REQ: u8 = 1;
    pub const REP: u8 = 2;
    pub const RTU: u8 = 3;
    pub const REJ: u8 = 4;
    pub const DREQ: u8 = 5;
    pub const DREP: u8 = 6;
}

/// Reads fields off the front of a byte slice.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.0.len() < n {
            return Err(WireError::Truncated);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, WireError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn pdata(&mut self, max: usize) -> Result<Vec<u8>, WireError> {
        let n = usize::from(self.u8()?);
        if n > max {
            return Err(WireError::PrivateDataTooLong);
        }
        Ok(self.take(n)?.to_vec())
    }
    fn end(&self) -> Result<(), WireError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(WireError::Trailing)
        }
    }
}

impl Endpoint {
    fn parse(c: &mut Cursor<'_>, pdata_max: usize) -> Result<Endpoint, WireError> {
        let qpn = c.u32()?;
        let psn = c.u32()?;
        let mut gid = [0u8; 16];
        gid.copy_from_slice(c.take(16)?);
        Ok(Endpoint {
            qpn,
            psn,
            gid,
            lid: c.u16()?,
            mtu: c.u8()?,
            responder_resources: c.u8()?,
            initiator_depth: c.u8()?,
            flow_control: c.u8()?,
            retry_count: c.u8()?,
            rnr_retry_count: c.u8()?,
            srq: c.u8()?,
            ece_vendor: c.u32()?,
            ece_options: c.u32()?,
            pdata: c.pdata(pdata_max)?,
        })
    }

    fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.qpn.to_be_bytes());
        out.extend_from_slice(&self.psn.to_be_bytes());
        out.extend_from_slice(&self.gid);
        out.extend_from_slice(&self.lid.to_be_bytes());
        out.extend_from_slice(&[
            self.mtu,
            self.responder_resources,
            self.initiator_depth,
            self.flow_control,
            self.retry_count,
            self.rnr_retry_count,
            self.srq,
        ]);
        out.extend_from_slice(&self.ece_vendor.to_be_bytes());
        out.extend_from_slice(&self.ece_options.to_be_bytes());
        emit_pdata(&self.pdata, out);
    }
}

fn emit_pdata(p: &[u8], out: &mut Vec<u8>) {
    // Callers check the limits (all below 256) before building a message.
    let n = p.len().min(255);
    out.push(n as u8);
    out.extend_from_slice(&p[..n]);
}

impl Msg {
    /// Parses a frame body (type and fields).
    pub fn parse(body: &[u8]) -> Result<Msg, WireError> {
        let mut c = Cursor(body);
        let msg = match c.u8()? {
            kind::REQ => {
                if c.take(4)? != MAGIC || c.u8()? != VERSION {
                    return Err(WireError::BadMagic);
                }
                Msg::Req(Endpoint::parse(&mut c, pdata_max::REQ)?)
            }
            kind::REP => Msg::Rep(Endpoint::parse(&mut c, pdata_max::REP)?),
            kind::RTU => Msg::Rtu,
            kind::REJ => Msg::Rej {
                reason: c.u16()?,
                pdata: c.pdata(pdata_max::REJ)?,
            },
            kind::DREQ => Msg::Dreq,
            kind::DREP => Msg::Drep,
            t => return Err(WireError::UnknownType(t)),
        };
        c.end()?;
        Ok(msg)
    }

    /// The frame: length, type, fields.
    pub fn emit(&self) -> Vec<u8> {
        let mut out = vec![0, 0];
        match self {
            Msg::Req(e) => {
                out.push(kind::REQ);
                out.extend_from_slice(&MAGIC);
                out.push(VERSION);
                e.emit(&mut out);
            }
            Msg::Rep(e) => {
                out.push(kind::REP);
                e.emit(&mut out);
            }
            Msg::Rtu => out.push(kind::RTU),
            Msg::Rej { reason, pdata } => {
                out.push(kind::REJ);
                out.extend_from_slice(&reason.to_be_bytes());
                emit_pdata(pdata, &mut out);
            }
            Msg::Dreq => out.push(kind::DREQ),
            Msg::Drep => out.push(kind::DREP),
        }
        let len = (out.len() - 2) as u16;
        out[..2].copy_from_slice(&len.to_be_bytes());
        out
    }

    /// Writes the frame.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&self.emit())
    }
}

/// What reading a frame gave.
#[derive(Debug)]
pub enum Frame {
    /// A message.
    Msg(Msg),
    /// A frame that is not a valid message (the connection stays usable: the frame was
    /// consumed whole).
    Bad(WireError),
    /// The peer closed the connection (or it failed).
    Closed,
}

/// Reads one frame. A length beyond [`MAX_FRAME`] cannot be skipped safely and ends the
/// connection: `Bad` is returned and the caller closes.
pub fn read_frame(r: &mut impl Read) -> Frame {
    let mut len = [0u8; 2];
    if r.read_exact(&mut len).is_err() {
        return Frame::Closed;
    }
    let len = usize::from(u16::from_be_bytes(len));
    if len > MAX_FRAME {
        return Frame::Bad(WireError::TooLong(len));
    }
    let mut body = vec![0u8; len];
    if r.read_exact(&mut body).is_err() {
        return Frame::Closed;
    }
    match Msg::parse(&body) {
        Ok(m) => Frame::Msg(m),
        Err(e) => Frame::Bad(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> Endpoint {
        Endpoint {
            qpn: 0x12_3456,
            psn: 0xab_cdef,
            gid: std::net::Ipv4Addr::new(127, 0, 0, 1)
                .to_ipv6_mapped()
                .octets(),
            lid: 4791,
            mtu: 5,
            responder_resources: 1,
            initiator_depth: 2,
            flow_control: 1,
            retry_count: 7,
            rnr_retry_count: 6,
            srq: 0,
            ece_vendor: 0x02c9,
            ece_options: 3,
            pdata: b"hello".to_vec(),
        }
    }

    #[test]
    fn round_trips() {
        let msgs = [
            Msg::Req(endpoint()),
            Msg::Rep(Endpoint {
                pdata: vec![7; pdata_max::REP],
                ..endpoint()
            }),
            Msg::Rtu,
            Msg::Rej {
                reason: 28,
                pdata: vec![1, 2, 3],
            },
            Msg::Dreq,
            Msg::Drep,
        ];
        for m in msgs {
            let frame = m.emit();
            assert_eq!(
                usize::from(u16::from_be_bytes([frame[0], frame[1]])),
                frame.len() - 2
            );
            match read_frame(&mut &frame[..]) {
                Frame::Msg(back) => assert_eq!(back, m),
                other => panic!("{m:?} came back as {other:?}"),
            }
        }
    }

    #[test]
    fn req_bytes_are_as_specified() {
        let f = Msg::Req(endpoint()).emit();
        assert_eq!(&f[2..8], &[kind::REQ, b'M', b'R', b'C', b'M', VERSION]);
        assert_eq!(&f[8..12], &[0x00, 0x12, 0x34, 0x56]); // QPN
        assert_eq!(&f[32..34], &4791u16.to_be_bytes()); // LID after the GID
        assert_eq!(f.len(), 2 + 6 + 8 + 16 + 2 + 7 + 8 + 1 + 5);
    }

    #[test]
    fn hostile_frames_are_refused_not_panicked_on() {
        let good = Msg::Req(endpoint()).emit();
        // Every truncation of a valid body.
        for n in 0..good.len() - 2 {
            let body = &good[2..2 + n];
            assert!(Msg::parse(body).is_err(), "accepted {n} bytes");
        }
        let mut trailing = good[2..].to_vec();
        trailing.push(0);
        assert_eq!(Msg::parse(&trailing), Err(WireError::Trailing));
        let mut magic = good[2..].to_vec();
        magic[1] = b'X';
        assert_eq!(Msg::parse(&magic), Err(WireError::BadMagic));
        assert_eq!(Msg::parse(&[99]), Err(WireError::UnknownType(99)));
        // A REQ claiming more private data than a REQ may carry.
        let mut long = Msg::Req(Endpoint {
            pdata: vec![0; pdata_max::REQ],
            ..endpoint()
        })
        .emit()[2..]
            .to_vec();
        let at = long.len() - pdata_max::REQ - 1;
        long[at] = (pdata_max::REQ + 1) as u8;
        long.push(0);
        assert_eq!(Msg::parse(&long), Err(WireError::PrivateDataTooLong));
        // Frame lengths beyond the limit, and closed streams.
        let huge = [0xff, 0xff, 1];
        assert!(matches!(
            read_frame(&mut &huge[..]),
            Frame::Bad(WireError::TooLong(65535))
        ));
        assert!(matches!(read_frame(&mut &[0u8][..]), Frame::Closed));
        assert!(matches!(read_frame(&mut &[0u8, 5, 1][..]), Frame::Closed));
        // Pseudo-random garbage never panics.
        let mut x = 0x9e37_79b9_u32;
        for _ in 0..2000 {
            let len = (x % 64) as usize;
            let body: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    (x % 7) as u8
                })
                .collect();
            let _ = Msg::parse(&body);
        }
    }
}
