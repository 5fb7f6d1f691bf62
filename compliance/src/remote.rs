//! Driving an implementation under test on another host (or in another process)
//! through a small control agent.
//!
//! The wire traffic still goes straight from the suite's sockets to the device's
//! MetaRoCE UDP address; only set-up (QPs, regions, work requests, completions,
//! memory reads) goes over the agent's TCP connection. One TCP connection is one
//! [`Device`] session: the agent destroys what the session created when it ends.
//!
//! Protocol: JSON lines. Each request is an object with an `op` field and the
//! arguments of the [`Device`] method of the same name; each reply is
//! `{"ok": value}` or `{"err": "reason"}`. `docs/compliance.md` lists every
//! request, so a vendor can write an agent in any language.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::target::{
    Completion, Device, MrAccess, MrInfo, PeerParams, QpOptions, QpStateName, SendWork, Target,
    TargetResult,
};

/// One request of the control protocol.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Starts a session; the reply describes the device ([`Hello`]).
    Open,
    /// [`Device::create_qp`]; reply: the QPN.
    CreateQp {
        /// Options.
        opts: QpOptions,
    },
    /// [`Device::connect`]; reply: null.
    Connect {
        /// The QP.
        qpn: u32,
        /// The peer (the suite).
        peer: PeerParams,
        /// The QP's own first conn PSN.
        own_initial_psn: u32,
    },
    /// [`Device::connect_rtr`]; reply: null.
    ConnectRtr {
        /// The QP.
        qpn: u32,
        /// The peer (the suite).
        peer: PeerParams,
    },
    /// [`Device::reg_mr`]; reply: [`MrInfo`].
    RegMr {
        /// Length.
        len: u64,
        /// Rights.
        access: MrAccess,
    },
    /// [`Device::write_mr`]; reply: null.
    WriteMr {
        /// Region handle.
        mr: u32,
        /// Offset.
        offset: u64,
        /// The bytes, hex.
        data: String,
    },
    /// [`Device::read_mr`]; reply: the bytes, hex.
    ReadMr {
        /// Region handle.
        mr: u32,
        /// Offset.
        offset: u64,
        /// Length.
        len: usize,
    },
    /// [`Device::dereg_mr`]; reply: null.
    DeregMr {
        /// Region handle.
        mr: u32,
    },
    /// [`Device::post_send`]; reply: null.
    PostSend {
        /// The QP.
        qpn: u32,
        /// The work request.
        work: SendWork,
    },
    /// [`Device::post_recv`]; reply: null.
    PostRecv {
        /// The QP.
        qpn: u32,
        /// Id.
        wr_id: u64,
        /// Region handle.
        mr: u32,
        /// Offset.
        offset: u64,
        /// Length.
        len: u32,
        /// Stream.
        stream: u16,
    },
    /// [`Device::poll_completions`]; reply: a list of [`Completion`].
    PollCompletions {
        /// The QP.
        qpn: u32,
    },
    /// [`Device::qp_state`]; reply: a state name or null.
    QpState {
        /// The QP.
        qpn: u32,
    },
    /// [`Device::disconnect`]; reply: null.
    Disconnect {
        /// The QP.
        qpn: u32,
    },
    /// [`Device::drop_counters`]; reply: a list of `[name, value]` or null.
    DropCounters,
}

/// The reply to [`Request::Open`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    /// The device's MetaRoCE UDP address.
    pub address: SocketAddr,
    /// Its mtu.
    pub mtu: u32,
    /// Its rate-hint line rate, if it follows the reference policy.
    pub line_rate_mbps: Option<u32>,
    /// Whether it chooses each packet's source port.
    pub chooses_source_ports: bool,
    /// Whether it implements the atomics (absent: no).
    #[serde(default)]
    pub atomics: bool,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> TargetResult<Vec<u8>> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(format!("not a hex digit: {:?}", c as char)),
    };
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return Err("odd hex length".into());
    }
    b.chunks(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

/// Serves the control protocol for `target` on `listener`, one thread per session,
/// until the listener fails.
pub fn serve(listener: TcpListener, target: &(dyn Target + 'static)) -> std::io::Result<()> {
    std::thread::scope(|s| {
        for stream in listener.incoming() {
            let stream = stream?;
            s.spawn(move || {
                if let Err(e) = session(stream, target) {
                    eprintln!("compliance agent: session ended: {e}");
                }
            });
        }
        Ok(())
    })
}

fn session(stream: TcpStream, target: &dyn Target) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut out = stream.try_clone()?;
    let mut dev: Option<Box<dyn Device>> = None;
    for line in BufReader::new(stream).lines() {
        let line = line?;
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(req) => match handle(&mut dev, target, req) {
                Ok(v) => json!({ "ok": v }),
                Err(e) => json!({ "err": e }),
            },
            Err(e) => json!({ "err": format!("bad request: {e}") }),
        };
        out.write_all(format!("{reply}\n").as_bytes())?;
    }
    Ok(())
}

fn handle(
    dev: &mut Option<Box<dyn Device>>,
    target: &dyn Target,
    req: Request,
) -> TargetResult<Value> {
    let to = |v: &dyn erased::Ser| v.value();
    if let Request::Open = req {
        let d = target.open()?;
        let hello = Hello {
            address: d.address(),
            mtu: d.mtu(),
            line_rate_mbps: d.line_rate_mbps(),
            chooses_source_ports: d.chooses_source_ports(),
            atomics: d.atomics(),
        };
        *dev = Some(d);
        return Ok(to(&hello));
    }
    let d = dev.as_mut().ok_or("send open first")?;
    Ok(match req {
        Request::Open => Value::Null,
        Request::CreateQp { opts } => json!(d.create_qp(&opts)?),
        Request::Connect {
            qpn,
            peer,
            own_initial_psn,
        } => json!(d.connect(qpn, &peer, own_initial_psn)?),
        Request::ConnectRtr { qpn, peer } => json!(d.connect_rtr(qpn, &peer)?),
        Request::RegMr { len, access } => to(&d.reg_mr(len, access)?),
        Request::WriteMr { mr, offset, data } => json!(d.write_mr(mr, offset, &unhex(&data)?)?),
        Request::ReadMr { mr, offset, len } => json!(hex(&d.read_mr(mr, offset, len)?)),
        Request::DeregMr { mr } => json!(d.dereg_mr(mr)?),
        Request::PostSend { qpn, work } => json!(d.post_send(qpn, &work)?),
        Request::PostRecv {
            qpn,
            wr_id,
            mr,
            offset,
            len,
            stream,
        } => json!(d.post_recv(qpn, wr_id, mr, offset, len, stream)?),
        Request::PollCompletions { qpn } => to(&d.poll_completions(qpn)),
        Request::QpState { qpn } => to(&d.qp_state(qpn)),
        Request::Disconnect { qpn } => json!(d.disconnect(qpn)?),
        Request::DropCounters => to(&d.drop_counters()),
    })
}

mod erased {
    /// Serialises any value to JSON (a helper to keep `handle` short).
    pub trait Ser {
        fn value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
        }
    }
}

/// An implementation under test behind a control agent at `agent`, whose MetaRoCE
/// traffic goes to `udp`.
#[derive(Debug, Clone, Copy)]
pub struct RemoteTarget {
    /// The device's MetaRoCE UDP address (checked against the agent's).
    pub udp: SocketAddr,
    /// The agent's TCP address.
    pub agent: SocketAddr,
}

impl Target for RemoteTarget {
    fn name(&self) -> String {
        format!("udp://{}", self.udp)
    }

    fn open(&self) -> TargetResult<Box<dyn Device>> {
        let stream = TcpStream::connect_timeout(&self.agent, Duration::from_secs(5))
            .map_err(|e| format!("agent {}: {e}", self.agent))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let mut dev = RemoteDevice {
            reader: BufReader::new(stream.try_clone().map_err(|e| e.to_string())?),
            writer: stream,
            hello: Hello {
                address: self.udp,
                mtu: 4096,
                line_rate_mbps: None,
                chooses_source_ports: true,
                atomics: false,
            },
        };
        let hello: Hello = dev.call(&Request::Open)?;
        if hello.address != self.udp {
            return Err(format!(
                "the agent's device listens on {}, not on {}",
                hello.address, self.udp
            ));
        }
        dev.hello = hello;
        Ok(Box::new(dev))
    }
}

struct RemoteDevice {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    hello: Hello,
}

impl RemoteDevice {
    fn call<T: for<'de> Deserialize<'de>>(&mut self, req: &Request) -> TargetResult<T> {
        let line = serde_json::to_string(req).map_err(|e| e.to_string())?;
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .map_err(|e| format!("agent: {e}"))?;
        let mut reply = String::new();
        self.reader
            .read_line(&mut reply)
            .map_err(|e| format!("agent: {e}"))?;
        let v: Value = serde_json::from_str(&reply).map_err(|e| format!("agent reply: {e}"))?;
        if let Some(err) = v.get("err") {
            return Err(err.as_str().unwrap_or("agent error").to_string());
        }
        let ok = v.get("ok").cloned().unwrap_or(Value::Null);
        serde_json::from_value(ok).map_err(|e| format!("agent reply: {e}"))
    }
}

impl Device for RemoteDevice {
    fn address(&self) -> SocketAddr {
        self.hello.address
    }
    fn create_qp(&mut self, opts: &QpOptions) -> TargetResult<u32> {
        self.call(&Request::CreateQp { opts: *opts })
    }
    fn connect(&mut self, qpn: u32, peer: &PeerParams, own_initial_psn: u32) -> TargetResult<()> {
        self.call(&Request::Connect {
            qpn,
            peer: *peer,
            own_initial_psn,
        })
    }
    fn connect_rtr(&mut self, qpn: u32, peer: &PeerParams) -> TargetResult<()> {
        self.call(&Request::ConnectRtr { qpn, peer: *peer })
    }
    fn reg_mr(&mut self, len: u64, access: MrAccess) -> TargetResult<MrInfo> {
        self.call(&Request::RegMr { len, access })
    }
    fn write_mr(&mut self, mr: u32, offset: u64, data: &[u8]) -> TargetResult<()> {
        self.call(&Request::WriteMr {
            mr,
            offset,
            data: hex(data),
        })
    }
    fn read_mr(&mut self, mr: u32, offset: u64, len: usize) -> TargetResult<Vec<u8>> {
        let h: String = self.call(&Request::ReadMr { mr, offset, len })?;
        unhex(&h)
    }
    fn dereg_mr(&mut self, mr: u32) -> TargetResult<()> {
        self.call(&Request::DeregMr { mr })
    }
    fn post_send(&mut self, qpn: u32, work: &SendWork) -> TargetResult<()> {
        self.call(&Request::PostSend { qpn, work: *work })
    }
    fn post_recv(
        &mut self,
        qpn: u32,
        wr_id: u64,
        mr: u32,
        offset: u64,
        len: u32,
        stream: u16,
    ) -> TargetResult<()> {
        self.call(&Request::PostRecv {
            qpn,
            wr_id,
            mr,
            offset,
            len,
            stream,
        })
    }
    fn poll_completions(&mut self, qpn: u32) -> Vec<Completion> {
        self.call(&Request::PollCompletions { qpn })
            .unwrap_or_default()
    }
    fn qp_state(&mut self, qpn: u32) -> Option<QpStateName> {
        self.call(&Request::QpState { qpn }).ok().flatten()
    }
    fn disconnect(&mut self, qpn: u32) -> TargetResult<()> {
        self.call(&Request::Disconnect { qpn })
    }
    fn drop_counters(&mut self) -> Option<Vec<(String, u64)>> {
        self.call(&Request::DropCounters).ok().flatten()
    }
    fn mtu(&self) -> u32 {
        self.hello.mtu
    }
    fn line_rate_mbps(&self) -> Option<u32> {
        self.hello.line_rate_mbps
    }
    fn chooses_source_ports(&self) -> bool {
        self.hello.chooses_source_ports
    }
    fn atomics(&self) -> bool {
        self.hello.atomics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::WorkOp;

    #[test]
    fn requests_round_trip_through_json() {
        let work = SendWork {
            wr_id: 1,
            op: WorkOp::SendImm { imm: 7 },
            mr: 0,
            offset: 0,
            len: 8,
            stream: 0,
            solicited: false,
        };
        let line = serde_json::to_string(&Request::PostSend { qpn: 3, work }).unwrap();
        eprintln!("{line}");
        match serde_json::from_str::<Request>(&line).unwrap() {
            Request::PostSend { qpn, work: w } => assert_eq!((qpn, w), (3, work)),
            other => panic!("{other:?}"),
        }
        assert_eq!(unhex(&hex(&[0, 0xab, 0xff])).unwrap(), [0, 0xab, 0xff]);
        assert!(unhex("abc").is_err());
        assert!(
            unhex("é1").is_err(),
            "a multi-byte character must not panic"
        );
    }
}
