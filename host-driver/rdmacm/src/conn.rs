//! The TCP side of the connection manager: a listener thread per listening id, a
//! handshake thread per incoming connection, and a reader thread per connection that
//! turns the peer's CM messages into state changes and events of its id.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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
pub fn connect(sock: socket2::Socket, dst: SocketAddr, req: Msg, id: Arc<Id>) {
    let stream: TcpStream = match sock.connect(&dst.into()) {
        Ok(()) => sock.into(),
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
