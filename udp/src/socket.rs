//! One non-blocking UDP socket with batched, offloaded I/O.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use crate::sys::{self, CmsgBuf};
use crate::{Ecn, Error, GRO_BUFFER_SIZE, MAX_GSO_BYTES, MAX_GSO_SEGMENTS, Result};

/// Most datagrams handed to one `sendmmsg` / read by one `recvmmsg`. Larger send slices are
/// sent in several calls; an [`RxBatch`] holds at most this many reads.
pub const MAX_BATCH: usize = 64;

/// Options applied to a [`BatchSocket`] when it is bound.
#[derive(Clone, Debug)]
pub struct SocketOptions {
    /// ECN codepoint of outgoing datagrams unless a [`TxPacket`] overrides it.
    pub ecn: Ecn,
    /// Use UDP GSO for runs of equal-size datagrams, if the kernel supports it.
    pub gso: bool,
    /// Enable UDP GRO on receive, if the kernel supports it. Needs [`RxBatch`] buffers of
    /// [`GRO_BUFFER_SIZE`](crate::GRO_BUFFER_SIZE) bytes.
    pub gro: bool,
    /// `SO_RCVBUF` in bytes (`SO_RCVBUFFORCE` is tried first); `None` keeps the default.
    pub recv_buffer: Option<usize>,
    /// `SO_SNDBUF` in bytes (`SO_SNDBUFFORCE` is tried first); `None` keeps the default.
    pub send_buffer: Option<usize>,
}

impl Default for SocketOptions {
    fn default() -> Self {
        SocketOptions {
            ecn: Ecn::Ect0,
            gso: true,
            gro: false,
            recv_buffer: None,
            send_buffer: None,
        }
    }
}

/// One datagram to send.
#[derive(Clone, Copy, Debug)]
pub struct TxPacket<'a> {
    /// Path index: which of an [`Endpoint`](crate::Endpoint)'s source sockets sends it.
    /// Ignored by [`BatchSocket::send_batch`].
    pub path: usize,
    /// Destination address (same family as the sending socket).
    pub dst: SocketAddr,
    /// ECN codepoint for this datagram; `None` uses the socket's default.
    pub ecn: Option<Ecn>,
    /// UDP payload.
    pub data: &'a [u8],
}

impl TxPacket<'_> {
    /// An empty placeholder (path 0, `0.0.0.0:0`, no data), for filling fixed arrays.
    pub const EMPTY: TxPacket<'static> = TxPacket {
        path: 0,
        dst: SocketAddr::V4(std::net::SocketAddrV4::new(
            std::net::Ipv4Addr::UNSPECIFIED,
            0,
        )),
        ecn: None,
        data: &[],
    };
}

/// Facts about one received read (a datagram, or a GRO merge of several).
#[derive(Clone, Copy, Debug)]
struct ReadMeta {
    /// Bytes read, or `None` when the read was dropped (truncated, unknown address family).
    len: Option<usize>,
    /// Segment size of a GRO merge, 0 for a plain datagram.
    seg: usize,
    src: SocketAddr,
    ecn: Ecn,
}

/// A fixed set of receive buffers, reused by every [`BatchSocket::recv_batch`].
///
/// Holds up to [`MAX_BATCH`] reads of `buf_size` bytes each. After a receive, iterate
/// [`RxBatch::datagrams`]; a GRO merge is split back into its datagrams there.
pub struct RxBatch {
    buf: Vec<u8>,
    buf_size: usize,
    names: Vec<libc::sockaddr_storage>,
    cmsgs: Vec<CmsgBuf>,
    meta: Vec<ReadMeta>,
    reads: usize,
    truncated: u64,
}

impl RxBatch {
    /// Allocates `count` (clamped to 1..=[`MAX_BATCH`]) buffers of `buf_size` bytes each.
    pub fn new(count: usize, buf_size: usize) -> Self {
        let count = count.clamp(1, MAX_BATCH);
        RxBatch {
            buf: vec![0; count * buf_size],
            buf_size,
            names: vec![sys::zeroed_storage(); count],
            cmsgs: vec![CmsgBuf::ZERO; count],
            meta: Vec::with_capacity(count),
            reads: 0,
            truncated: 0,
        }
    }

    /// Number of buffers (the most reads one receive call takes).
    pub fn capacity(&self) -> usize {
        self.names.len()
    }

    /// Size of each buffer in bytes.
    pub fn buf_size(&self) -> usize {
        self.buf_size
    }

    /// Reads (system-level messages) in the last receive, including dropped ones.
    pub fn reads(&self) -> usize {
        self.reads
    }

    /// Reads in the last receive that were GRO merges of more than one datagram.
    pub fn merged_reads(&self) -> usize {
        self.meta
            .iter()
            .filter(|m| matches!(m.len, Some(l) if m.seg > 0 && l > m.seg))
            .count()
    }

    /// Reads dropped since this batch was created because they did not fit a buffer.
    pub fn truncated(&self) -> u64 {
        self.truncated
    }

    /// The datagrams of the last receive, GRO merges split back into datagrams.
    pub fn datagrams(&self) -> Datagrams<'_> {
        Datagrams {
            batch: self,
            read: 0,
            offset: 0,
        }
    }
}

/// One received datagram.
#[derive(Clone, Copy, Debug)]
pub struct Datagram<'a> {
    /// UDP payload.
    pub data: &'a [u8],
    /// Sender's address and UDP source port.
    pub src: SocketAddr,
    /// ECN codepoint the datagram arrived with.
    pub ecn: Ecn,
}

/// Iterator over the datagrams of an [`RxBatch`].
pub struct Datagrams<'a> {
    batch: &'a RxBatch,
    read: usize,
    offset: usize,
}

impl<'a> Iterator for Datagrams<'a> {
    type Item = Datagram<'a>;

    fn next(&mut self) -> Option<Datagram<'a>> {
        loop {
            let m = self.batch.meta.get(self.read)?;
            let base = self.read * self.batch.buf_size;
            let Some(len) = m.len else {
                self.read += 1;
                continue;
            };
            if len == 0 {
                self.read += 1;
                return Some(Datagram {
                    data: &[],
                    src: m.src,
                    ecn: m.ecn,
                });
            }
            if self.offset >= len {
                self.read += 1;
                self.offset = 0;
                continue;
            }
            let seg = if m.seg == 0 { len } else { m.seg };
            let start = self.offset;
            let end = (start + seg).min(len);
            self.offset = end;
            return Some(Datagram {
                data: &self.batch.buf[base + start..base + end],
                src: m.src,
                ecn: m.ecn,
            });
        }
    }
}

/// A non-blocking UDP socket with `sendmmsg`/`recvmmsg`, GSO/GRO and ECN.
#[derive(Debug)]
pub struct BatchSocket {
    sock: Socket,
    local: SocketAddr,
    gso: AtomicBool,
    gro: bool,
}

/// Errors by which the kernel refuses a segmented (GSO) send.
fn gso_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EIO | libc::EINVAL | libc::EMSGSIZE | libc::ENOPROTOOPT | libc::EOPNOTSUPP)
    )
}

/// Sets a socket buffer, trying the `*FORCE` variant first (works as root beyond the sysctl max).
fn set_buffer(sock: &Socket, force: libc::c_int, size: usize, recv: bool) -> Result<()> {
    let v = libc::c_int::try_from(size).unwrap_or(libc::c_int::MAX);
    if sys::setsockopt_int(sock.as_fd(), libc::SOL_SOCKET, force, v).is_ok() {
        return Ok(());
    }
    let r = if recv {
        sock.set_recv_buffer_size(size)
    } else {
        sock.set_send_buffer_size(size)
    };
    r.map_err(|e| Error::os(if recv { "SO_RCVBUF" } else { "SO_SNDBUF" }, e))
}

impl BatchSocket {
    /// Creates a non-blocking UDP socket bound to `addr` (port 0: the kernel picks one).
    ///
    /// IPv6 sockets are `IPV6_V6ONLY`. Sets the default ECN codepoint, asks for the TOS /
    /// traffic class of received datagrams, and probes GSO and GRO.
    pub fn bind(addr: SocketAddr, opts: &SocketOptions) -> Result<Self> {
        let v6 = addr.is_ipv6();
        let domain = if v6 { Domain::IPV6 } else { Domain::IPV4 };
        let sock = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))
            .map_err(|e| Error::os("socket", e))?;
        sock.set_nonblocking(true)
            .map_err(|e| Error::os("O_NONBLOCK", e))?;
        let tos = u32::from(opts.ecn.bits());
        if v6 {
            sock.set_only_v6(true)
                .map_err(|e| Error::os("IPV6_V6ONLY", e))?;
            sock.set_tclass_v6(tos)
                .map_err(|e| Error::os("IPV6_TCLASS", e))?;
            sock.set_recv_tclass_v6(true)
                .map_err(|e| Error::os("IPV6_RECVTCLASS", e))?;
        } else {
            sock.set_tos_v4(tos).map_err(|e| Error::os("IP_TOS", e))?;
            sock.set_recv_tos_v4(true)
                .map_err(|e| Error::os("IP_RECVTOS", e))?;
        }
        if let Some(size) = opts.recv_buffer {
            set_buffer(&sock, sys::SO_RCVBUFFORCE, size, true)?;
        }
        if let Some(size) = opts.send_buffer {
            set_buffer(&sock, sys::SO_SNDBUFFORCE, size, false)?;
        }
        sock.bind(&addr.into()).map_err(|e| Error::os("bind", e))?;
        let local = sock
            .local_addr()
            .map_err(|e| Error::os("getsockname", e))?
            .as_socket()
            .ok_or(Error::Invalid("socket has no IP address"))?;
        // A zero UDP_SEGMENT socket option is a no-op where GSO exists and ENOPROTOOPT where not.
        let gso = opts.gso
            && sys::setsockopt_int(sock.as_fd(), libc::SOL_UDP, sys::UDP_SEGMENT, 0).is_ok();
        let gro =
            opts.gro && sys::setsockopt_int(sock.as_fd(), libc::SOL_UDP, sys::UDP_GRO, 1).is_ok();
        Ok(BatchSocket {
            sock,
            local,
            gso: AtomicBool::new(gso),
            gro,
        })
    }

    /// The bound local address (with the actual port).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// True while GSO is in use (it is switched off after the kernel refuses a GSO send).
    pub fn gso_enabled(&self) -> bool {
        self.gso.load(Ordering::Relaxed)
    }

    /// True if GRO was accepted by the kernel.
    pub fn gro_enabled(&self) -> bool {
        self.gro
    }

    /// Sends `pkts` in order; returns how many were sent (a prefix of `pkts`).
    ///
    /// Fewer than `pkts.len()` means the socket buffer is full (wait for writability) or a
    /// later datagram hit an error that the next call will report. `Err` means `pkts[0]`
    /// could not be sent (e.g. too large, wrong address family); the caller may drop it.
    /// Runs of datagrams to the same destination with the same ECN and length (the last of
    /// a run may be shorter) go out as one GSO send when GSO is on.
    pub fn send_batch(&self, pkts: &[TxPacket<'_>]) -> Result<usize> {
        let mut done = 0;
        while done < pkts.len() {
            let chunk = &pkts[done..pkts.len().min(done + MAX_BATCH)];
            let gso = self.gso_enabled();
            match self.send_chunk(chunk, gso) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err((e, first_segmented)) if first_segmented && gso_refused(&e) => {
                    // The kernel refuses GSO here: turn it off and resend the same chunk.
                    self.gso.store(false, Ordering::Relaxed);
                }
                Err((e, _)) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) if done > 0 => break,
                Err((e, _)) => return Err(Error::os("sendmmsg", e)),
            }
        }
        Ok(done)
    }

    /// One `sendmmsg` for at most [`MAX_BATCH`] packets. Returns packets sent, or the error
    /// of the first message and whether that message was segmented.
    fn send_chunk(
        &self,
        pkts: &[TxPacket<'_>],
        gso: bool,
    ) -> std::result::Result<usize, (io::Error, bool)> {
        let v6 = self.local.is_ipv6();
        let mut hdrs = [sys::zeroed_mmsghdr(); MAX_BATCH];
        let mut iovs = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; MAX_BATCH];
        let mut names = [sys::zeroed_storage(); MAX_BATCH];
        let mut cmsgs = [CmsgBuf::ZERO; MAX_BATCH];
        let mut segs = [0usize; MAX_BATCH];
        let mut msgs = 0;
        let mut i = 0;
        while i < pkts.len() {
            let first = &pkts[i];
            let seg = first.data.len();
            let mut n = 1;
            if gso && seg > 0 {
                let mut total = seg;
                while i + n < pkts.len() && n < MAX_GSO_SEGMENTS {
                    let p = &pkts[i + n];
                    let len = p.data.len();
                    if p.dst != first.dst
                        || p.ecn != first.ecn
                        || len == 0
                        || len > seg
                        || total + len > MAX_GSO_BYTES
                    {
                        break;
                    }
                    total += len;
                    n += 1;
                    if len < seg {
                        break; // only the last segment may be short
                    }
                }
            }
            for (k, p) in pkts[i..i + n].iter().enumerate() {
                iovs[i + k] = libc::iovec {
                    iov_base: p.data.as_ptr() as *mut libc::c_void,
                    iov_len: p.data.len(),
                };
            }
            let namelen = sys::write_sockaddr(&first.dst, &mut names[msgs]);
            let mut control = [(0, 0, 0u32, 0usize); 2];
            let mut nc = 0;
            if let Some(ecn) = first.ecn {
                control[nc] = if v6 {
                    (
                        libc::IPPROTO_IPV6,
                        libc::IPV6_TCLASS,
                        u32::from(ecn.bits()),
                        4,
                    )
                } else {
                    (libc::IPPROTO_IP, libc::IP_TOS, u32::from(ecn.bits()), 4)
                };
                nc += 1;
            }
            if n > 1 {
                control[nc] = (libc::SOL_UDP, sys::UDP_SEGMENT, seg as u32, 2);
                nc += 1;
            }
            let clen = sys::write_cmsgs(&mut cmsgs[msgs], &control[..nc]);
            let h = &mut hdrs[msgs].msg_hdr;
            h.msg_name = (&raw mut names[msgs]).cast();
            h.msg_namelen = namelen;
            h.msg_iov = &raw mut iovs[i];
            h.msg_iovlen = n as _;
            h.msg_control = if clen > 0 {
                (&raw mut cmsgs[msgs]).cast()
            } else {
                std::ptr::null_mut()
            };
            h.msg_controllen = clen as _;
            segs[msgs] = n;
            msgs += 1;
            i += n;
        }
        match sys::sendmmsg(self.sock.as_fd(), &mut hdrs[..msgs]) {
            Ok(sent) => Ok(segs[..sent.min(msgs)].iter().sum()),
            Err(e) => Err((e, segs[0] > 1)),
        }
    }

    /// Receives up to `rx.capacity()` reads without blocking; returns the number of
    /// datagrams (after splitting GRO merges). `Ok(0)` when nothing is queued.
    ///
    /// Reads that do not fit a buffer are dropped and counted in [`RxBatch::truncated`].
    pub fn recv_batch(&self, rx: &mut RxBatch) -> Result<usize> {
        if self.gro && rx.buf_size < GRO_BUFFER_SIZE {
            return Err(Error::Invalid(
                "a GRO socket needs RxBatch buffers of GRO_BUFFER_SIZE bytes",
            ));
        }
        let count = rx.capacity();
        rx.meta.clear();
        rx.reads = 0;
        let mut hdrs = [sys::zeroed_mmsghdr(); MAX_BATCH];
        let mut iovs = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; MAX_BATCH];
        let buf_size = rx.buf_size;
        for (k, chunk) in rx
            .buf
            .chunks_exact_mut(buf_size.max(1))
            .take(count)
            .enumerate()
        {
            iovs[k] = libc::iovec {
                iov_base: chunk.as_mut_ptr().cast(),
                iov_len: buf_size,
            };
        }
        for k in 0..count {
            let h = &mut hdrs[k].msg_hdr;
            h.msg_name = (&raw mut rx.names[k]).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &raw mut iovs[k];
            h.msg_iovlen = 1;
            h.msg_control = (&raw mut rx.cmsgs[k]).cast();
            h.msg_controllen = sys::CMSG_BUF_LEN as _;
        }
        let n = match sys::recvmmsg(self.sock.as_fd(), &mut hdrs[..count]) {
            Ok(n) => n.min(count),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(0),
            Err(e) => return Err(Error::os("recvmmsg", e)),
        };
        rx.reads = n;
        let mut datagrams = 0;
        for (k, h) in hdrs[..n].iter().enumerate() {
            let c = sys::parse_cmsgs(&h.msg_hdr);
            let len = h.msg_len as usize;
            // msg_name pointed at rx.names[k]; the kernel wrote msg_namelen bytes there.
            let src = sys::read_sockaddr(&rx.names[k], h.msg_hdr.msg_namelen);
            let truncated = h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 || len > buf_size;
            let seg = c.gro_size.map_or(0, usize::from);
            let meta = match src {
                Some(src) if !truncated => {
                    datagrams += if seg == 0 || len == 0 {
                        1
                    } else {
                        len.div_ceil(seg)
                    };
                    ReadMeta {
                        len: Some(len),
                        seg,
                        src,
                        ecn: Ecn::from_tos(c.tos.unwrap_or(0)),
                    }
                }
                _ => {
                    if truncated {
                        rx.truncated += 1;
                    }
                    ReadMeta {
                        len: None,
                        seg: 0,
                        src: TxPacket::EMPTY.dst,
                        ecn: Ecn::NotEct,
                    }
                }
            };
            rx.meta.push(meta);
        }
        Ok(datagrams)
    }

    /// Waits until the socket is readable (`write` false) or writable (`write` true), or the
    /// timeout passes (`None`: forever, zero: just check). Returns whether it is ready.
    pub fn wait(&self, write: bool, timeout: Option<Duration>) -> Result<bool> {
        let events = if write { libc::POLLOUT } else { libc::POLLIN };
        let mut fds = [libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events,
            revents: 0,
        }];
        sys::ppoll(&mut fds, timeout).map_err(|e| Error::os("ppoll", e))?;
        Ok(fds[0].revents != 0)
    }
}

impl AsFd for BatchSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }
}

/// A set of descriptors to wait on for readability in one `ppoll`.
///
/// It stores raw descriptor numbers: waiting on a descriptor closed meanwhile is harmless
/// (it reports `POLLNVAL`, seen as readable), so no borrow is held.
#[derive(Debug, Default)]
pub struct PollSet {
    fds: Vec<libc::pollfd>,
}

impl PollSet {
    /// An empty set.
    pub fn new() -> Self {
        PollSet::default()
    }

    /// Adds a descriptor; returns its index for [`PollSet::readable`].
    pub fn add(&mut self, fd: &impl AsFd) -> usize {
        self.fds.push(libc::pollfd {
            fd: fd.as_fd().as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        self.fds.len() - 1
    }

    /// Waits until one descriptor is readable or the timeout passes (`None`: forever).
    /// Returns how many are ready.
    pub fn wait(&mut self, timeout: Option<Duration>) -> Result<usize> {
        for f in &mut self.fds {
            f.revents = 0;
        }
        sys::ppoll(&mut self.fds, timeout).map_err(|e| Error::os("ppoll", e))
    }

    /// Whether descriptor `i` was readable (or in error) at the last [`PollSet::wait`].
    pub fn readable(&self, i: usize) -> bool {
        self.fds.get(i).is_some_and(|f| f.revents != 0)
    }
}
