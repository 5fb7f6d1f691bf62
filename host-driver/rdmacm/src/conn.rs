//! The TCP side of the connection manager: a listener thread per listening id, a
//! handshake thread per incoming connection, and a reader thread per connection that
//! turns the peer's CM messages into state changes and events of its id.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use metaroce_cabi::ffi::Errno;
use metaroce_cabi::registry::lock;

use crate::id::Id;
use crate::wire::{Frame, Msg, WireError};

/// How long a new connection may take to send its REQ.
const REQ_TIMEOUT: Duration = Duration::from_secs(10);

/// Malformed or unexpected CM messages received (each is also reported on stderr).
pub static BAD_MESSAGES: AtomicU64 = AtomicU64::new(0);

/// Counts and reports a message that was refused (with the count so far).
pub fn bad_message(peer: Option<SocketAddr>, what: std::fmt::Arguments<'_>) {
    let n = BAD_MESSAGES.fetch_add(1, Ordering::Relaxed) + 1;
    let peer = peer.map_or_else(|| "?".to_string(), |p| p.to_string());
    eprintln!(
        "librdmacm (metaroce): refused a CM message from {peer}: {what} ({n} refused so far)"
    );
}

/// One CM connection to a peer.
pub struct Conn {
    stream: TcpStream,
    /// Serialises whole frames.
    write: Mutex<()>,
    /// The peer's address.
    pub peer: Option<SocketAddr>,
}

impl Conn {
    /// Wraps a connected stream.
    pub fn new(stream: TcpStream) -> Arc<Conn> {
        let _ = stream.set_nodelay(true);
        let peer = stream.peer_addr().ok();
        Arc::new(Conn {
            stream,
            write: Mutex::new(()),
            peer,
        })
    }

    /// Sends one message (`ECONNRESET` when the connection is gone).
    pub fn send(&self, m: &Msg) -> Result<(), Errno> {
        let _g = lock(&self.write);
        m.write_to(&mut &self.stream)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::ECONNRESET))
    }

    /// Ends the connection in both directions (the reader thread then stops).
    pub fn close(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    /// The local address.
    pub fn local(&self) -> Option<SocketAddr> {
        self.stream.local_addr().ok()
    }

    /// Reads the peer's messages until the connection ends, handing each to `id`.
    pub fn serve(self: Arc<Self>, id: Arc<Id>) {
        loop {
            match crate::wire::read_frame(&mut &self.stream) {
                Frame::Msg(m) => id.on_message(m),
                Frame::Bad(e @ WireError::TooLong(_)) => {
                    bad_message(self.peer, format_args!("{e}; closing"));
                    self.close();
                    id.on_closed();
                    return;
                }
                Frame::Bad(e) => bad_message(self.peer, format_args!("{e}")),
                Frame::Closed => {
                    id.on_closed();
                    return;
                }
            }
        }
    }
}

/// A listening socket and its accept thread.
pub struct Listener {
    sock: socket2::Socket,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    /// Listens on `sock` (bound) for connections to `id`.
    pub fn start(sock: socket2::Socket, backlog: i32, id: Arc<Id>) -> Result<Listener, Errno> {
        let os = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        sock.listen(backlog.max(16)).map_err(os)?;
        let accepting = sock.try_clone().map_err(os)?;
        let thread = std::thread::Builder::new()
            .name("rdmacm-listen".into())
            .spawn(move || accept_loop(accepting, id))
            .map_err(os)?;
        Ok(Listener {
            sock,
            thread: Some(thread),
        })
    }

    /// Stops accepting and waits for the accept thread, so the port is free on return.
    pub fn stop(mut self) {
        // On Linux, shutting a listening socket down wakes a blocked accept().
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(sock: socket2::Socket, listener: Arc<Id>) {
    loop {
        match sock.accept() {
            Ok((s, _)) => {
                let stream: TcpStream = s.into();
                let listener = listener.clone();
                let _ = std::thread::Builder::new()
                    .name("rdmacm-conn".into())
                    .spawn(move || handshake(stream, listener));
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::ECONNABORTED)) => {}
            Err(_) => return,
        }
    }
}

/// Reads the REQ of a new connection, makes the new id, then serves the connection.
fn handshake(stream: TcpStream, listener: Arc<Id>) {
    let _ = stream.set_read_timeout(Some(REQ_TIMEOUT));
    let conn = Conn::new(stream);
    let req = match crate::wire::read_frame(&mut &conn.stream) {
        Frame::Msg(Msg::Req(req)) => req,
        Frame::Msg(other) => {
            bad_message(conn.peer, format_args!("expected a REQ, got {other:?}"));
            conn.close();
            return;
        }
        Frame::Bad(e) => {
            bad_message(conn.peer, format_args!("{e}"));
            conn.close();
            return;
        }
        Frame::Closed => return,
    };
    let _ = conn.stream.set_read_timeout(None);
    if let Some(child) = Id::incoming(&listener, conn.clone(), req) {
        conn.serve(child);
    }
}

/// Connects `sock` (bound) to `dst` for `id`, sends its REQ, then serves the connection.
/// A refused connection is tried again until `deadline` (see [`connect_until`]).
pub fn connect(sock: socket2::Socket, dst: SocketAddr, deadline: Instant, req: Msg, id: Arc<Id>) {
    let stream = match connect_until(&sock, dst, deadline, || id.still_connecting()) {
        Ok(()) => TcpStream::from(sock),
        Err(e) => {
            id.on_connect_failed(e.raw_os_error().unwrap_or(libc::EIO));
            return;
        }
    };
    let conn = Conn::new(stream);
    if id.on_connected(conn.clone(), &req) {
        conn.serve(id);
    } else {
        conn.close();
    }
}

/// Connects `sock` to `dst`, trying again after `ECONNREFUSED` (nobody listens there
/// yet) every 10 ms, backing off to 100 ms, until `deadline` or until `wanted` says the
/// connection is no longer wanted; then the last error. (Linux lets a socket whose
/// connection was refused connect again, keeping its bound address.)
fn connect_until(
    sock: &socket2::Socket,
    dst: SocketAddr,
    deadline: Instant,
    wanted: impl Fn() -> bool,
) -> std::io::Result<()> {
    let mut pause = Duration::from_millis(10);
    loop {
        match sock.connect(&dst.into()) {
            Err(e)
                if e.raw_os_error() == Some(libc::ECONNREFUSED)
                    && Instant::now() + pause < deadline
                    && wanted() =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A bound TCP socket on 127.0.0.1 (not listening: connections to it are refused)
    /// and its address.
    fn bound() -> (socket2::Socket, SocketAddr) {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
            .unwrap();
        let a = s.local_addr().unwrap().as_socket().unwrap();
        (s, a)
    }

    /// The passive side listens only after the first connection was refused (perftest's
    /// server between its two listeners): the connection is made on a later try.
    #[test]
    fn a_listener_that_appears_after_a_refusal_is_reached() {
        let (server, addr) = bound();
        let (client, _) = bound();
        let refusals = Cell::new(0);
        let deadline = Instant::now() + Duration::from_secs(30);
        let r = connect_until(&client, addr, deadline, || {
            if refusals.replace(refusals.get() + 1) == 0 {
                server.listen(4).unwrap();
            }
            true
        });
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(refusals.get(), 1);
        let (_, peer) = server.accept().unwrap();
        assert_eq!(peer.as_socket(), client.local_addr().unwrap().as_socket());
    }

    /// Nobody listens: refused once the deadline has passed, or at once when the id no
    /// longer wants the connection.
    #[test]
    fn refused_after_the_deadline_or_when_no_longer_wanted() {
        let (_server, addr) = bound();
        // Connects to nobody until `deadline`, the id wanting it or not: the error and
        // how often the id was asked.
        let refused = |deadline: Instant, wanted: bool| {
            let (client, _) = bound();
            let tries = Cell::new(0);
            let r = connect_until(&client, addr, deadline, || {
                tries.set(tries.get() + 1);
                wanted
            });
            (r.unwrap_err().raw_os_error(), tries.get())
        };
        let deadline = Instant::now() + Duration::from_millis(300);
        let (e, tries) = refused(deadline, true);
        assert_eq!(e, Some(libc::ECONNREFUSED));
        assert!(tries >= 1);
        assert!(Instant::now() + Duration::from_millis(100) >= deadline);
        let far = Instant::now() + Duration::from_secs(30);
        assert_eq!(refused(far, false), (Some(libc::ECONNREFUSED), 1));
    }
}
