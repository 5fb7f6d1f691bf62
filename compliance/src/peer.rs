//! The suite's side of the wire: a fake MetaRoCE endpoint on real UDP sockets that
//! builds every packet with `metaroce-proto`, checks the ICRC of everything the
//! target sends, and keeps the little receive state needed to acknowledge the
//! target's data.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use metaroce_proto::{
    AckRepr, Ext, Flags, MsgRepr, NackReason, NackRepr, Opcode, Packet, PseudoHeader, Repr, Sack,
    parse_datagram,
};

use crate::Fail;

/// Number of sockets the suite sends data from (its path entropy values).
pub const ENTROPY_SOCKETS: usize = 4;

/// How the ICRC of an outgoing packet is sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seal {
    /// Correctly (§4).
    Good,
    /// Correctly, then one bit flipped.
    Corrupt,
    /// With the wrong UDP source port in the pseudo-header.
    WrongSourcePort,
    /// Over the UDP payload only, without the pseudo-header.
    NoPseudoHeader,
    /// Not touched: the bytes go out as built.
    Raw,
}

/// Which socket a packet leaves from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Entropy socket `i` (mod [`ENTROPY_SOCKETS`]).
    Ent(usize),
    /// The socket that marks everything CE in the IP header.
    Ce,
    /// A socket on another IP address (a host that is not the peer).
    Alien,
    /// The suite's MetaRoCE port itself.
    Main,
}

/// A packet about to be sent.
#[derive(Debug, Clone)]
pub struct Pkt {
    /// Headers.
    pub repr: Repr,
    /// Payload.
    pub payload: Vec<u8>,
    /// Socket.
    pub via: Via,
    /// ICRC handling.
    pub seal: Seal,
}

impl Pkt {
    /// Sends from another socket.
    pub fn via(mut self, via: Via) -> Self {
        self.via = via;
        self
    }
    /// Seals differently.
    pub fn seal(mut self, seal: Seal) -> Self {
        self.seal = seal;
        self
    }
    /// Changes the headers.
    pub fn with(mut self, f: impl FnOnce(&mut Repr)) -> Self {
        f(&mut self.repr);
        self
    }
    /// Changes the message extension.
    pub fn msg(mut self, f: impl FnOnce(&mut MsgRepr)) -> Self {
        if let Ext::Msg(m) = &mut self.repr.ext {
            f(m);
        }
        self
    }
}

/// A datagram the target sent to the suite.
#[derive(Debug, Clone)]
pub struct Rx {
    /// Headers.
    pub repr: Repr,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// UDP source of the datagram.
    pub from: SocketAddr,
    /// When it arrived.
    pub at: Instant,
}

impl Rx {
    /// The ACK extension, if this is an ACK.
    pub fn ack(&self) -> Option<&AckRepr> {
        match &self.repr.ext {
            Ext::Ack(a) => Some(a),
            _ => None,
        }
    }
    /// The message extension, if this is a data packet.
    pub fn msg(&self) -> Option<&MsgRepr> {
        self.repr.msg()
    }
}

/// The suite's endpoint.
pub struct Peer {
    main: UdpSocket,
    ent: Vec<UdpSocket>,
    ce: UdpSocket,
    alien: Option<UdpSocket>,
    /// Where the target listens.
    pub target: SocketAddr,
    stash: VecDeque<Rx>,
    /// Datagrams from the target that failed parsing or the ICRC check.
    pub bad_rx: Vec<String>,
    t0: Instant,
    last_ts: u64,
}

fn bind(ip: IpAddr) -> std::io::Result<UdpSocket> {
    UdpSocket::bind(SocketAddr::new(ip, 0))
}

impl Peer {
    /// Opens the suite's sockets on `ip`, facing the target at `target`.
    pub fn open(ip: IpAddr, target: SocketAddr) -> std::io::Result<Peer> {
        let main = bind(ip)?;
        let ent = (0..ENTROPY_SOCKETS)
            .map(|_| bind(ip))
            .collect::<std::io::Result<_>>()?;
        let ce = {
            let s = socket2::Socket::new(
                socket2::Domain::for_address(SocketAddr::new(ip, 0)),
                socket2::Type::DGRAM,
                None,
            )?;
            if ip.is_ipv4() {
                s.set_tos_v4(0x03)?;
            } else {
                s.set_tclass_v6(0x03)?;
            }
            s.bind(&SocketAddr::new(ip, 0).into())?;
            UdpSocket::from(s)
        };
        // Another address of the same host: on Linux all of 127/8 is loopback.
        let alien = match ip {
            IpAddr::V4(v4) if v4.is_loopback() => {
                bind(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))).ok()
            }
            _ => None,
        };
        Ok(Peer {
            main,
            ent,
            ce,
            alien,
            target,
            stash: VecDeque::new(),
            bad_rx: Vec::new(),
            t0: Instant::now(),
            last_ts: 0,
        })
    }

    /// The suite's MetaRoCE address: the target sends replies there.
    pub fn addr(&self) -> SocketAddr {
        self.main.local_addr().expect("bound socket")
    }

    /// The UDP source address a packet sent `via` carries.
    pub fn source(&self, via: Via) -> Option<SocketAddr> {
        self.socket(via).and_then(|s| s.local_addr().ok())
    }

    fn socket(&self, via: Via) -> Option<&UdpSocket> {
        match via {
            Via::Ent(i) => Some(&self.ent[i % ENTROPY_SOCKETS]),
            Via::Ce => Some(&self.ce),
            Via::Alien => self.alien.as_ref(),
            Via::Main => Some(&self.main),
        }
    }

    /// A fresh timestamp of the suite's clock (ns, strictly increasing, never 0).
    pub fn now_ns(&mut self) -> u64 {
        let t = (self.t0.elapsed().as_nanos() as u64 + 1_000_000).max(self.last_ts + 1);
        self.last_ts = t;
        t
    }

    /// Builds the datagram bytes of `pkt` as it would leave `via`.
    pub fn bytes(&self, pkt: &Pkt) -> Result<Vec<u8>, Fail> {
        let mut buf = vec![0u8; pkt.repr.buffer_len(pkt.payload.len())];
        pkt.repr
            .emit(&mut buf, pkt.payload.len())
            .map_err(|e| Fail::Error(format!("suite cannot emit its packet: {e}")))?;
        let h = pkt.repr.header_len();
        buf[h..h + pkt.payload.len()].copy_from_slice(&pkt.payload);
        let src = self
            .source(pkt.via)
            .ok_or_else(|| Fail::Skip("no second local address for the wrong-peer case".into()))?;
        let pseudo = PseudoHeader::new(src.ip(), src.port(), self.target.ip(), self.target.port());
        let n = buf.len();
        match pkt.seal {
            Seal::Good => Packet::new_unchecked(&mut buf[..]).fill_icrc(&pseudo),
            Seal::Corrupt => {
                Packet::new_unchecked(&mut buf[..]).fill_icrc(&pseudo);
                buf[n - 1] ^= 0x01;
            }
            Seal::WrongSourcePort => {
                let wrong = PseudoHeader::new(
                    src.ip(),
                    src.port() ^ 0x0001,
                    self.target.ip(),
                    self.target.port(),
                );
                Packet::new_unchecked(&mut buf[..]).fill_icrc(&wrong);
            }
            Seal::NoPseudoHeader => {
                let crc = crc32fast::hash(&buf[..n - 4]);
                buf[n - 4..].copy_from_slice(&crc.to_be_bytes());
            }
            Seal::Raw => {}
        }
        Ok(buf)
    }

    /// Recomputes the ICRC of `buf` as it would leave `via` (after a hand edit).
    pub fn reseal(&self, buf: &mut [u8], via: Via) {
        if let Some(src) = self.source(via) {
            let pseudo =
                PseudoHeader::new(src.ip(), src.port(), self.target.ip(), self.target.port());
            if buf.len() >= 4 {
                Packet::new_unchecked(buf).fill_icrc(&pseudo);
            }
        }
    }

    /// Sends a packet.
    pub fn send(&mut self, pkt: &Pkt) -> Result<(), Fail> {
        let bytes = self.bytes(pkt)?;
        self.send_raw(&bytes, pkt.via)
    }

    /// Sends raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8], via: Via) -> Result<(), Fail> {
        let s = self
            .socket(via)
            .ok_or_else(|| Fail::Skip("no second local address".into()))?;
        s.send_to(bytes, self.target)
            .map_err(|e| Fail::Error(format!("send: {e}")))?;
        Ok(())
    }

    /// Receives the next datagram within `timeout` (stashed ones first).
    pub fn next(&mut self, timeout: Duration) -> Option<Rx> {
        if let Some(rx) = self.stash.pop_front() {
            return Some(rx);
        }
        self.recv(timeout)
    }

    fn recv(&mut self, timeout: Duration) -> Option<Rx> {
        let deadline = Instant::now() + timeout;
        let mut buf = vec![0u8; 65536];
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let _ = self
                .main
                .set_read_timeout(Some(left.max(Duration::from_micros(100))));
            let Ok((n, from)) = self.main.recv_from(&mut buf) else {
                if Instant::now() >= deadline {
                    return None;
                }
                continue;
            };
            let me = self.addr();
            let pseudo = PseudoHeader::new(from.ip(), from.port(), me.ip(), me.port());
            match parse_datagram(&buf[..n], &pseudo) {
                Ok((repr, payload)) => {
                    return Some(Rx {
                        repr,
                        payload: payload.to_vec(),
                        from,
                        at: Instant::now(),
                    });
                }
                Err(e) => self
                    .bad_rx
                    .push(format!("{n}-byte datagram from {from}: {e}")),
            }
        }
    }

    /// Waits up to `timeout` for a datagram matching `pred`; others are kept for later.
    pub fn wait(&mut self, timeout: Duration, pred: impl Fn(&Rx) -> bool) -> Option<Rx> {
        if let Some(i) = self.stash.iter().position(&pred) {
            return self.stash.remove(i);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let rx = self.recv(left)?;
            if pred(&rx) {
                return Some(rx);
            }
            self.stash.push_back(rx);
        }
    }

    /// Everything matching `pred` that arrives within `dur` (and what is stashed).
    pub fn gather(&mut self, dur: Duration, pred: impl Fn(&Rx) -> bool) -> Vec<Rx> {
        let mut out = Vec::new();
        let mut keep = VecDeque::new();
        for rx in self.stash.drain(..) {
            if pred(&rx) {
                out.push(rx);
            } else {
                keep.push_back(rx);
            }
        }
        self.stash = keep;
        let deadline = Instant::now() + dur;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.recv(left) {
                Some(rx) if pred(&rx) => out.push(rx),
                Some(rx) => self.stash.push_back(rx),
                None => break,
            }
        }
        out
    }

    /// Forgets stashed datagrams.
    pub fn clear(&mut self) {
        self.stash.clear();
    }
}

/// The payload of a PARITY over `packets` (spec §3.12): their XOR, each
/// padded with zeros to `len` bytes (the PARITY's payload length).
pub fn xor_parity<'a>(len: usize, packets: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = vec![0u8; len];
    for p in packets {
        for (o, b) in out.iter_mut().zip(p) {
            *o ^= b;
        }
    }
    out
}

/// The suite's fake QP connected to a QP of the target, with the sender state of
/// the suite's direction and the receive state of the target's direction.
#[derive(Debug, Clone)]
pub struct Conn {
    /// The target's QPN.
    pub qpn: u32,
    /// The suite's QPN (what the target knows as its peer QPN).
    pub my_qpn: u32,
    /// The next conn PSN the suite sends.
    pub next_conn_psn: u32,
    /// The suite's first conn PSN.
    pub my_initial_psn: u32,
    /// The target's first conn PSN.
    pub target_psn: u32,
    /// The next path PSN per path of the suite's direction.
    pub next_path_psn: [u32; 64],
    /// The next MSN per stream.
    pub next_msn: [u32; 16],
    /// The next `recv_idx` per stream.
    pub next_recv_idx: [u32; 16],
    /// The target's region (remote rights, 64 KiB).
    pub mr: crate::target::MrInfo,
    /// The target's receive window, as configured.
    pub recv_window: u32,
    /// Receive tracking of the target's data: marked path PSNs per path.
    pub marked: BTreeMap<u16, BTreeSet<u32>>,
    /// Receive tracking: accepted conn PSNs.
    pub accepted: BTreeSet<u32>,
    /// Receive tracking: largest timestamp per path.
    pub echo: BTreeMap<u16, u64>,
}

impl Conn {
    /// A data packet of a message of opcode `op` on `path`, with the next conn
    /// and path PSNs; the caller fills the message fields.
    pub fn data(
        &mut self,
        peer: &mut Peer,
        op: Opcode,
        path: u16,
        m: MsgRepr,
        payload: &[u8],
    ) -> Pkt {
        let conn_psn = self.next_conn_psn;
        self.next_conn_psn = self.next_conn_psn.wrapping_add(1);
        let path_psn = self.take_path_psn(path);
        Pkt {
            repr: Repr {
                opcode: op,
                flags: Flags::FIRST | Flags::LAST | Flags::ACK_REQ,
                dst_qpn: self.qpn,
                src_qpn: self.my_qpn,
                stream: 0,
                path,
                conn_psn,
                path_psn,
                timestamp: peer.now_ns(),
                ext: Ext::Msg(m),
            },
            payload: payload.to_vec(),
            via: Via::Ent(path as usize),
            seal: Seal::Good,
        }
    }

    /// Takes the next path PSN of `path`.
    pub fn take_path_psn(&mut self, path: u16) -> u32 {
        let slot = &mut self.next_path_psn[path as usize % 64];
        let psn = *slot;
        *slot = slot.wrapping_add(1);
        psn
    }

    /// A single-packet WRITE of `data` at `offset` of the target's region, as a new
    /// message on stream 0.
    pub fn write(&mut self, peer: &mut Peer, path: u16, offset: u64, data: &[u8]) -> Pkt {
        let msn = self.take_msn(0);
        let m = MsgRepr {
            msn,
            msg_len: data.len() as u32,
            remote_va: self.mr.addr.wrapping_add(offset),
            rkey: self.mr.rkey,
            ..MsgRepr::default()
        };
        self.data(peer, Opcode::Write, path, m, data)
    }

    /// A READ_REQ for `msg_len` bytes at `remote_va` under `rkey`, as a new message
    /// on stream 0, with `resp_psn` (§3.4) = the suite's receive `conn_cum`.
    pub fn read_req(
        &mut self,
        peer: &mut Peer,
        path: u16,
        msg_len: u32,
        remote_va: u64,
        rkey: u32,
    ) -> Pkt {
        let msn = self.take_msn(0);
        let m = MsgRepr {
            msn,
            msg_len,
            remote_va,
            rkey,
            imm: self.conn_cum(),
            ..MsgRepr::default()
        };
        self.data(peer, Opcode::ReadReq, path, m, b"")
    }

    /// A NACK with `reason` for conn PSN `conn_psn` (MSN 0).
    pub fn nack(&self, peer: &mut Peer, reason: NackReason, conn_psn: u32, detail: u32) -> Pkt {
        let n = NackRepr {
            reason,
            conn_psn,
            msn: 0,
            detail,
        };
        self.control(peer, Opcode::Nack, Ext::Nack(n))
    }

    /// A single-packet SEND (or SEND_IMM with `imm`) on `stream`.
    pub fn send(
        &mut self,
        peer: &mut Peer,
        path: u16,
        stream: u16,
        data: &[u8],
        imm: Option<u32>,
    ) -> Pkt {
        let msn = self.take_msn(stream);
        let recv_idx = self.take_recv_idx(stream);
        let m = MsgRepr {
            msn,
            recv_idx,
            msg_len: data.len() as u32,
            imm: imm.unwrap_or(0),
            ..MsgRepr::default()
        };
        let op = if imm.is_some() {
            Opcode::SendImm
        } else {
            Opcode::Send
        };
        self.data(peer, op, path, m, data)
            .with(|r| r.stream = stream)
    }

    /// Takes the next MSN of `stream`.
    pub fn take_msn(&mut self, stream: u16) -> u32 {
        let s = &mut self.next_msn[stream as usize % 16];
        let v = *s;
        *s = s.wrapping_add(1);
        v
    }

    /// Takes the next `recv_idx` of `stream`.
    pub fn take_recv_idx(&mut self, stream: u16) -> u32 {
        let s = &mut self.next_recv_idx[stream as usize % 16];
        let v = *s;
        *s = s.wrapping_add(1);
        v
    }

    /// A PROBE on `path` with its next path PSN and the next conn PSN.
    pub fn probe(&mut self, peer: &mut Peer, path: u16) -> Pkt {
        let path_psn = self.take_path_psn(path);
        Pkt {
            repr: Repr {
                opcode: Opcode::Probe,
                flags: Flags::ACK_REQ,
                dst_qpn: self.qpn,
                src_qpn: self.my_qpn,
                stream: 0,
                path,
                // The connection's current PSN, the receiver's evidence (§3.7).
                conn_psn: self.next_conn_psn,
                path_psn,
                timestamp: peer.now_ns(),
                ext: Ext::None,
            },
            payload: Vec::new(),
            via: Via::Ent(path as usize),
            seal: Seal::Good,
        }
    }

    /// A control packet (ACK, NACK, CM) with `ext`, from the suite's port.
    pub fn control(&self, peer: &mut Peer, op: Opcode, ext: Ext) -> Pkt {
        Pkt {
            repr: Repr {
                opcode: op,
                flags: Flags::empty(),
                dst_qpn: self.qpn,
                src_qpn: self.my_qpn,
                stream: 0,
                path: 0,
                conn_psn: 0,
                path_psn: 0,
                timestamp: peer.now_ns(),
                ext,
            },
            payload: Vec::new(),
            via: Via::Main,
            seal: Seal::Good,
        }
    }

    /// A DISCONNECT carrying the connection's current PSNs (spec §9.4): the
    /// suite's next conn PSN in the base header and, in the CM extension,
    /// the conn PSN up to which it has accepted the target's data.
    pub fn disconnect(&self, peer: &mut Peer) -> Pkt {
        let mut p = self.control(
            peer,
            Opcode::Disconnect,
            Ext::Cm(metaroce_proto::CmRepr {
                initial_psn: self.conn_cum(),
                ..Default::default()
            }),
        );
        p.repr.conn_psn = self.next_conn_psn;
        p
    }

    /// Records a data packet of the target as received (marks its path PSN, accepts
    /// its conn PSN), as a correct receiver would.
    pub fn mark(&mut self, rx: &Rx) {
        self.marked
            .entry(rx.repr.path)
            .or_default()
            .insert(rx.repr.path_psn);
        let e = self.echo.entry(rx.repr.path).or_default();
        *e = (*e).max(rx.repr.timestamp);
        if rx.repr.opcode.is_message() {
            self.accepted.insert(rx.repr.conn_psn);
        }
    }

    /// The conn PSN before which the suite has accepted everything the target sent.
    pub fn conn_cum(&self) -> u32 {
        let mut c = self.target_psn;
        while self.accepted.contains(&c) {
            c = c.wrapping_add(1);
        }
        c
    }

    /// An ACK for `path` from the receive tracking (path PSNs from 0, no slide).
    pub fn ack(&self, peer: &mut Peer, path: u16, credit: u32) -> Pkt {
        let set = self.marked.get(&path).cloned().unwrap_or_default();
        let mut cum = 0u32;
        while set.contains(&cum) {
            cum += 1;
        }
        let mut sack = Sack::new();
        for &p in set.range(cum + 1..cum + 257) {
            sack.set(p - cum - 1);
        }
        let ack = AckRepr {
            conn_cum: self.conn_cum(),
            path_cum: cum,
            sack,
            echo_ts: self.echo.get(&path).copied().unwrap_or(0),
            ce_count: 0,
            rate_hint: 0,
            credit,
            rx_count: set.len() as u32,
        };
        self.control(peer, Opcode::Ack, Ext::Ack(ack))
            .with(|r| r.path = path)
    }
}
