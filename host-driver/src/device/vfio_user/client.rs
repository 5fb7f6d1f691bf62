//! The vfio-user client this backend speaks (protocol version 0.1, the requests it
//! needs): every reply is read header first, its id, command and size checked, and
//! an error reply (the header alone, with the error flag) becomes an error of the
//! request instead of a read that waits for bytes that never come (rust-vmm's
//! `vfio_user::Client` 0.1.7 reads a region reply as a full access header and waits
//! forever on an error reply). Replies have a time limit ([`REPLY_TIMEOUT`]); a
//! connection that lost its place in the stream (a timeout, a short or foreign reply)
//! refuses every later request with the reason.

use std::io::{self, Read, Write};
use std::os::fd::RawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use vmm_sys_util::sock_ctrl_msg::ScmSocket;

use crate::device::DeviceError;

/// How long a request waits for its reply. The device process answers a BAR read its
/// model has not served within 5 s with an error reply, so only a stopped or hung
/// process reaches this.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Bytes of a message header (id, command, size, flags, error).
const HEADER: usize = 16;
/// Header flags: the message type (0 command, 1 reply) and the error bit.
const TYPE_MASK: u32 = 0xf;
const TYPE_REPLY: u32 = 1;
const FLAG_ERROR: u32 = 1 << 5;
/// The largest reply taken (region reads here are at most a few KiB).
const MAX_REPLY: usize = 1 << 20;
/// `vfio_region_info` (argsz, flags, index, cap_offset, size, offset).
const REGION_INFO: usize = 32;
/// DMA map flags: readable and writable by the device.
const DMA_READ_WRITE: u32 = 3;

/// The requests sent (vfio-user command numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
enum Command {
    Version = 1,
    DmaMap = 2,
    DmaUnmap = 3,
    RegionInfo = 5,
    IrqInfo = 7,
    SetIrqs = 8,
    RegionRead = 9,
    RegionWrite = 10,
    Reset = 13,
}

/// One connection to a vfio-user device (see the module docs).
#[derive(Debug)]
pub struct Client {
    stream: UnixStream,
    next_id: u16,
    timeout: Duration,
    /// Why the connection can no longer be used, once it cannot.
    broken: Option<String>,
}

/// Little-endian words of a request body.
#[derive(Default)]
struct Body(Vec<u8>);

impl Body {
    fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl Client {
    /// Connects to the device listening at `path` and negotiates the protocol version;
    /// every reply is waited for at most `timeout`.
    pub fn connect(path: &Path, timeout: Duration) -> Result<Self, io::Error> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(timeout))?;
        Ok(Client {
            stream,
            next_id: 0,
            timeout,
            broken: None,
        })
    }

    /// Negotiates version 0.1 with the default capabilities (one fd per message).
    pub fn negotiate(&mut self) -> Result<(), DeviceError> {
        let caps = format!(
            "{{\"capabilities\":{{\"max_msg_fds\":1,\"max_data_xfer_size\":1048576,\
             \"migration\":{{\"pgsize\":{}}}}}}}\0",
            page_size()
        );
        let mut body = 0u16.to_le_bytes().to_vec(); // major
        body.extend_from_slice(&1u16.to_le_bytes()); // minor
        body.extend_from_slice(caps.as_bytes());
        let reply = self.request("version negotiation", Command::Version, &body, &[])?;
        if reply.len() < 4 {
            return Err(self.lost("version negotiation", "a version reply without a version"));
        }
        Ok(())
    }

    /// The size in bytes of region `index`.
    pub fn region_size(&mut self, index: u32) -> Result<u64, DeviceError> {
        let body = Body::default()
            .u32(REGION_INFO as u32)
            .u32(0)
            .u32(index)
            .u32(0)
            .u64(0)
            .u64(0);
        let r = self.request("region info", Command::RegionInfo, &body.0, &[])?;
        if r.len() < REGION_INFO {
            return Err(self.lost("region info", "a region info reply too short"));
        }
        Ok(u64::from_le_bytes(r[16..24].try_into().expect("8 bytes")))
    }

    /// The number of vectors of interrupt index `index`.
    pub fn irq_count(&mut self, index: u32) -> Result<u32, DeviceError> {
        let body = Body::default().u32(16).u32(0).u32(index).u32(0);
        let r = self.request("interrupt info", Command::IrqInfo, &body.0, &[])?;
        if r.len() < 16 {
            return Err(self.lost("interrupt info", "an interrupt info reply too short"));
        }
        Ok(le32(&r, 12))
    }

    /// Routes vectors `start..start + fds.len()` of interrupt index `index` to `fds`.
    pub fn set_irqs(
        &mut self,
        index: u32,
        flags: u32,
        start: u32,
        fds: &[RawFd],
    ) -> Result<(), DeviceError> {
        let body = Body::default()
            .u32(20)
            .u32(flags)
            .u32(index)
            .u32(start)
            .u32(fds.len() as u32);
        self.request("set IRQs", Command::SetIrqs, &body.0, fds)
            .map(drop)
    }

    /// Maps `size` bytes of `fd` (from offset 0) at IOVA `iova` for the device's DMA.
    pub fn dma_map(&mut self, iova: u64, size: u64, fd: RawFd) -> Result<(), DeviceError> {
        let body = Body::default()
            .u32(32)
            .u32(DMA_READ_WRITE)
            .u64(0)
            .u64(iova)
            .u64(size);
        self.request("DMA map", Command::DmaMap, &body.0, &[fd])
            .map(drop)
    }

    /// Removes the DMA mapping of `size` bytes at IOVA `iova`.
    pub fn dma_unmap(&mut self, iova: u64, size: u64) -> Result<(), DeviceError> {
        let body = Body::default().u32(24).u32(0).u64(iova).u64(size);
        self.request("DMA unmap", Command::DmaUnmap, &body.0, &[])
            .map(drop)
    }

    /// Reads `data.len()` bytes of region `region` at `offset`.
    pub fn region_read(
        &mut self,
        region: u32,
        offset: u64,
        data: &mut [u8],
    ) -> Result<(), DeviceError> {
        let body = Body::default()
            .u64(offset)
            .u32(region)
            .u32(data.len() as u32);
        let r = self.request("region read", Command::RegionRead, &body.0, &[])?;
        if r.len() != 16 + data.len() {
            return Err(self.lost("region read", "a region read reply of another length"));
        }
        data.copy_from_slice(&r[16..]);
        Ok(())
    }

    /// Writes `data` to region `region` at `offset`.
    pub fn region_write(
        &mut self,
        region: u32,
        offset: u64,
        data: &[u8],
    ) -> Result<(), DeviceError> {
        let mut body = Body::default()
            .u64(offset)
            .u32(region)
            .u32(data.len() as u32);
        body.0.extend_from_slice(data);
        self.request("region write", Command::RegionWrite, &body.0, &[])
            .map(drop)
    }

    /// Resets the device.
    pub fn reset(&mut self) -> Result<(), DeviceError> {
        self.request("reset", Command::Reset, &[], &[]).map(drop)
    }

    /// Closes both directions of the connection (the device sees the client leave).
    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    /// Marks the connection unusable (its place in the stream is lost) and returns the
    /// error of the request that found it.
    fn lost(&mut self, what: &str, why: impl std::fmt::Display) -> DeviceError {
        let why = why.to_string();
        self.broken = Some(why.clone());
        DeviceError::Transport(format!("{what}: {why}; the connection is closed"))
    }

    /// Sends one request (with `fds` attached) and returns its reply's body.
    fn request(
        &mut self,
        what: &str,
        cmd: Command,
        body: &[u8],
        fds: &[RawFd],
    ) -> Result<Vec<u8>, DeviceError> {
        if let Some(why) = &self.broken {
            return Err(DeviceError::Transport(format!(
                "{what}: the connection to the device was lost earlier ({why})"
            )));
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let mut msg = Vec::with_capacity(HEADER + body.len());
        msg.extend_from_slice(&id.to_le_bytes());
        msg.extend_from_slice(&(cmd as u16).to_le_bytes());
        msg.extend_from_slice(&((HEADER + body.len()) as u32).to_le_bytes());
        msg.extend_from_slice(&[0; 8]); // flags (a command), error
        msg.extend_from_slice(body);
        let sent = if fds.is_empty() {
            self.stream.write_all(&msg).map(|()| msg.len())
        } else {
            self.stream
                .send_with_fds(&[&msg[..]], fds)
                .map_err(|e| io::Error::from_raw_os_error(e.errno()))
        };
        match sent {
            Ok(n) if n == msg.len() => {}
            Ok(n) => return Err(self.lost(what, format!("sent {n} of {} bytes", msg.len()))),
            Err(e) => return Err(self.lost(what, format!("sending: {e}"))),
        }
        let mut h = [0u8; HEADER];
        self.read_reply(what, &mut h)?;
        let (rid, rcmd, size, flags, error) = (
            u16::from_le_bytes([h[0], h[1]]),
            u16::from_le_bytes([h[2], h[3]]),
            le32(&h, 4) as usize,
            le32(&h, 8),
            le32(&h, 12),
        );
        if flags & TYPE_MASK != TYPE_REPLY || rid != id || rcmd != cmd as u16 {
            return Err(self.lost(
                what,
                format!(
                    "the device answered message {rid} command {rcmd} flags {flags:#x} \
                     to message {id} command {}",
                    cmd as u16
                ),
            ));
        }
        if !(HEADER..=MAX_REPLY).contains(&size) {
            return Err(self.lost(what, format!("a reply of {size} bytes")));
        }
        let mut reply = vec![0u8; size - HEADER];
        self.read_reply(what, &mut reply)?;
        if flags & FLAG_ERROR != 0 {
            let cause = if error == 0 {
                "no error number".to_string()
            } else {
                io::Error::from_raw_os_error(error as i32).to_string()
            };
            return Err(DeviceError::Transport(format!(
                "{what}: the device answered with an error ({cause}; its log says why)"
            )));
        }
        Ok(reply)
    }

    /// Reads exactly `buf.len()` bytes of a reply, within the time limit.
    fn read_reply(&mut self, what: &str, buf: &mut [u8]) -> Result<(), DeviceError> {
        match self.stream.read_exact(buf) {
            Ok(()) => Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                let t = self.timeout;
                Err(self.lost(what, format!("no reply within {t:?}")))
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(self.lost(what, "the device closed the connection"))
            }
            Err(e) => Err(self.lost(what, format!("reading the reply: {e}"))),
        }
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the system; no memory is passed.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(n).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::os::unix::net::UnixListener;
    use vfio_bindings::bindings::vfio::vfio_region_info;
    use vfio_user::{DmaMapFlags, DmaUnmapFlags, Server, ServerBackend, ServerRegion};

    /// A device whose region 0 reads as 0xab, except at offset 0x100, which it refuses.
    struct Refusing;

    impl ServerBackend for Refusing {
        fn region_read(&mut self, _: u32, offset: u64, data: &mut [u8]) -> io::Result<()> {
            if offset == 0x100 {
                return Err(io::Error::other("refused"));
            }
            data.fill(0xab);
            Ok(())
        }
        fn region_write(&mut self, _: u32, _: u64, _: &[u8]) -> io::Result<()> {
            Ok(())
        }
        fn dma_map(
            &mut self,
            _: DmaMapFlags,
            _: u64,
            _: u64,
            _: u64,
            _: Option<File>,
        ) -> io::Result<()> {
            Ok(())
        }
        fn dma_unmap(&mut self, _: DmaUnmapFlags, _: u64, _: u64) -> io::Result<()> {
            Ok(())
        }
        fn reset(&mut self) -> io::Result<()> {
            Err(io::Error::other("no reset"))
        }
        fn set_irqs(&mut self, _: u32, _: u32, _: u32, _: u32, _: Vec<File>) -> io::Result<()> {
            Ok(())
        }
    }

    fn socket(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("metaroce-vu-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p
    }

    #[test]
    fn an_error_reply_fails_the_request_and_the_connection_goes_on() {
        let path = socket("err");
        let region = ServerRegion {
            region_info: vfio_region_info {
                argsz: REGION_INFO as u32,
                index: 0,
                size: 0x1000,
                ..Default::default()
            },
            sparse_areas: Vec::new(),
            mmap_fd: None,
        };
        let server = Server::new(&path, true, Vec::new(), vec![region]).expect("server");
        let t = std::thread::spawn(move || {
            let _ = server.run(&mut Refusing);
        });
        let mut c = Client::connect(&path, REPLY_TIMEOUT).expect("connect");
        c.negotiate().expect("version");
        assert_eq!(c.region_size(0).expect("region info"), 0x1000);
        let mut b = [0u8; 4];
        let e = c.region_read(0, 0x100, &mut b).expect_err("refused read");
        assert!(e.to_string().contains("answered with an error"), "{e}");
        c.region_read(0, 0x104, &mut b).expect("next read");
        assert_eq!(b, [0xab; 4]);
        let e = c.reset().expect_err("refused reset");
        assert!(e.to_string().contains("reset"), "{e}");
        // A region the device does not have: its error reply (EINVAL).
        let e = c.region_size(3).expect_err("no region 3");
        assert!(e.to_string().contains("Invalid argument"), "{e}");
        c.region_write(0, 0, &[1, 2, 3, 4]).expect("write");
        c.shutdown();
        t.join().expect("server thread");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_device_that_never_answers_times_out_and_closes_the_connection() {
        let path = socket("mute");
        let listener = UnixListener::bind(&path).expect("bind");
        let t = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink); // reads, never answers
        });
        let mut c = Client::connect(&path, Duration::from_millis(100)).expect("connect");
        let e = c.negotiate().expect_err("no reply");
        assert!(e.to_string().contains("no reply within"), "{e}");
        let e = c.reset().expect_err("lost");
        assert!(e.to_string().contains("lost earlier"), "{e}");
        c.shutdown();
        t.join().expect("listener thread");
        let _ = std::fs::remove_file(&path);
    }
}
