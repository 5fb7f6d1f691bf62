//! The NIC's multi-port endpoint: one send socket per path entropy, one receive socket.

use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

use crate::socket::{BatchSocket, RxBatch, SocketOptions, TxPacket};
use crate::{Ecn, Error, GRO_BUFFER_SIZE, Result, sys};

/// How to bind an [`Endpoint`].
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// Local IPv4 or IPv6 address of every socket.
    pub local_ip: IpAddr,
    /// The NIC's destination port, where it receives (0: the kernel picks one).
    pub listen_port: u16,
    /// One UDP source port per path (the path entropy values); 0 entries: the kernel
    /// picks a port. Path `i` sends from `src_ports[i]`.
    pub src_ports: Vec<u16>,
    /// ECN codepoint of outgoing datagrams (default ECT(0)).
    pub ecn: Ecn,
    /// Use UDP GSO when the kernel allows it.
    pub gso: bool,
    /// Use UDP GRO on the receive socket when the kernel allows it.
    pub gro: bool,
    /// Receive socket buffer in bytes.
    pub recv_buffer: usize,
    /// Send socket buffer in bytes (each path socket).
    pub send_buffer: usize,
    /// Largest UDP payload expected; sizes receive buffers when GRO is off.
    pub max_datagram: usize,
    /// Reads per receive batch (at most [`MAX_BATCH`](crate::MAX_BATCH)).
    pub rx_batch: usize,
}

impl EndpointConfig {
    /// Defaults: ECT(0), GSO and GRO on, 4 MiB receive / 1 MiB send buffers, 9000-byte
    /// datagrams, 64 reads per batch.
    pub fn new(local_ip: IpAddr, listen_port: u16, src_ports: Vec<u16>) -> Self {
        EndpointConfig {
            local_ip,
            listen_port,
            src_ports,
            ecn: Ecn::Ect0,
            gso: true,
            gro: true,
            recv_buffer: 4 << 20,
            send_buffer: 1 << 20,
            max_datagram: 9000,
            rx_batch: crate::MAX_BATCH,
        }
    }
}

/// What [`Endpoint::wait`] found ready.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readiness {
    /// The receive socket has data (or an error) pending.
    pub readable: bool,
    /// The asked-for path socket can take more datagrams.
    pub writable: bool,
}

/// A soft NIC's UDP endpoint: K path sockets that send from the entropy ports, and one
/// receive socket on the NIC's destination port (see the [module docs](super)).
#[derive(Debug)]
pub struct Endpoint {
    rx: BatchSocket,
    tx: Vec<BatchSocket>,
    rx_batch: usize,
    rx_buf: usize,
}

impl Endpoint {
    /// Binds the receive socket and one send socket per entry of `cfg.src_ports`.
    pub fn bind(cfg: &EndpointConfig) -> Result<Self> {
        if cfg.src_ports.is_empty() {
            return Err(Error::Invalid("an endpoint needs at least one source port"));
        }
        let rx_opts = SocketOptions {
            ecn: cfg.ecn,
            gso: false,
            gro: cfg.gro,
            recv_buffer: Some(cfg.recv_buffer),
            send_buffer: None,
        };
        let rx = BatchSocket::bind(SocketAddr::new(cfg.local_ip, cfg.listen_port), &rx_opts)?;
        let tx_opts = SocketOptions {
            ecn: cfg.ecn,
            gso: cfg.gso,
            gro: false,
            // Nothing is addressed to the entropy ports: keep their receive buffer minimal.
            recv_buffer: Some(0),
            send_buffer: Some(cfg.send_buffer),
        };
        let tx = cfg
            .src_ports
            .iter()
            .map(|&port| BatchSocket::bind(SocketAddr::new(cfg.local_ip, port), &tx_opts))
            .collect::<Result<Vec<_>>>()?;
        let rx_buf = if rx.gro_enabled() {
            GRO_BUFFER_SIZE
        } else {
            cfg.max_datagram
        };
        Ok(Endpoint {
            rx,
            tx,
            rx_batch: cfg.rx_batch,
            rx_buf,
        })
    }

    /// Address the NIC receives on (its destination port).
    pub fn listen_addr(&self) -> SocketAddr {
        self.rx.local_addr()
    }

    /// Number of paths (send sockets).
    pub fn paths(&self) -> usize {
        self.tx.len()
    }

    /// UDP source port (entropy) of `path`.
    pub fn src_port(&self, path: usize) -> Option<u16> {
        self.tx.get(path).map(|s| s.local_addr().port())
    }

    /// The receive socket.
    pub fn rx_socket(&self) -> &BatchSocket {
        &self.rx
    }

    /// The send socket of `path`.
    pub fn tx_socket(&self, path: usize) -> Option<&BatchSocket> {
        self.tx.get(path)
    }

    /// True while every path socket still uses GSO.
    pub fn gso_enabled(&self) -> bool {
        self.tx.iter().all(BatchSocket::gso_enabled)
    }

    /// True if the receive socket uses GRO.
    pub fn gro_enabled(&self) -> bool {
        self.rx.gro_enabled()
    }

    /// A receive batch sized for this endpoint (64 KiB buffers when GRO is on).
    pub fn new_rx_batch(&self) -> RxBatch {
        RxBatch::new(self.rx_batch, self.rx_buf)
    }

    /// Sends `pkts` in order, each from its path's socket; returns how many were sent (a
    /// prefix). Consecutive packets of one path go out in one `sendmmsg` (with GSO runs).
    /// Semantics of a short count and of `Err` as in [`BatchSocket::send_batch`]; a packet
    /// with an unknown path is an `Err` when it is first.
    pub fn send(&self, pkts: &[TxPacket<'_>]) -> Result<usize> {
        let mut done = 0;
        while done < pkts.len() {
            let path = pkts[done].path;
            let Some(sock) = self.tx.get(path) else {
                return if done > 0 {
                    Ok(done)
                } else {
                    Err(Error::Invalid("packet path index out of range"))
                };
            };
            let run = pkts[done..].iter().take_while(|p| p.path == path).count();
            let sent = match sock.send_batch(&pkts[done..done + run]) {
                Ok(n) => n,
                Err(_) if done > 0 => return Ok(done),
                Err(e) => return Err(e),
            };
            done += sent;
            if sent < run {
                break;
            }
        }
        Ok(done)
    }

    /// Receives without blocking into `rx`; returns the number of datagrams
    /// (see [`BatchSocket::recv_batch`]).
    pub fn recv(&self, rx: &mut RxBatch) -> Result<usize> {
        self.rx.recv_batch(rx)
    }

    /// Waits until the receive socket is readable, or (if `write_path` is given) that path's
    /// socket is writable, or `timeout` passes (`None`: forever; zero: just check, for
    /// busy-polling).
    pub fn wait(&self, timeout: Option<Duration>, write_path: Option<usize>) -> Result<Readiness> {
        let mut fds = [
            libc::pollfd {
                fd: self.rx.as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: -1,
                events: libc::POLLOUT,
                revents: 0,
            },
        ];
        if let Some(p) = write_path {
            let sock = self
                .tx
                .get(p)
                .ok_or(Error::Invalid("path index out of range"))?;
            fds[1].fd = sock.as_fd().as_raw_fd();
        }
        sys::ppoll(&mut fds, timeout).map_err(|e| Error::os("ppoll", e))?;
        Ok(Readiness {
            readable: fds[0].revents != 0,
            writable: fds[1].revents != 0,
        })
    }
}
