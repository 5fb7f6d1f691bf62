//! The two NICs of a traffic run (A sends, B receives), soft or on a hardware NIC, and
//! the relay between them when there is one.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use anyhow::Context as _;
use metaroce_driver::hw::DeviceBackend;
use metaroce_driver::hw::timing::DeviceTiming;
use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::*;
use metaroce_relay::{PathConfig, Relay, RelayConfig, RelayHandle};

/// One NIC with everything a traffic run needs.
pub struct Side {
    /// Context.
    pub ctx: Context,
    /// Send and receive CQ.
    pub cq: CompletionQueue,
    /// The connected QP.
    pub qp: QueuePair,
    /// Source (or READ destination) buffers.
    pub mr: MemoryRegion,
    _pd: ProtectionDomain,
}

/// How to build a [`NicPair`].
#[derive(Debug, Clone)]
pub struct NicPairSetup {
    /// Address of both NICs.
    pub ip: IpAddr,
    /// UDP port of a soft NIC (0: the kernel picks one); one NIC per process only.
    pub nic_port: u16,
    /// Paths per connection.
    pub paths: u16,
    /// MTU.
    pub mtu: u32,
    /// Busy-poll progress threads.
    pub busy_poll: bool,
    /// Bytes of registered memory per side.
    pub mem: usize,
    /// Relay paths between the NICs; `None`: direct.
    pub relay: Option<Vec<PathConfig>>,
    /// Path-map seed of the relay (`None`: port modulo paths).
    pub relay_hash_seed: Option<u64>,
    /// Run side A on this hardware NIC (device spec, its address when it has no board
    /// information) instead of a soft NIC.
    pub device: Option<(String, Option<SocketAddr>)>,
    /// Authenticated mode with this connection key on both QPs.
    pub auth: Option<AuthKey>,
}

/// Two connected NICs (A sends, B receives) and the relay between them, if any.
pub struct NicPair {
    /// Sender.
    pub a: Side,
    /// Receiver.
    pub b: Side,
    /// The relay.
    pub relay: Option<RelayHandle>,
    /// Side A's driver when it runs on a hardware NIC (its timing counters).
    pub device: Option<Arc<DeviceBackend>>,
}

/// A context on a soft NIC.
pub(crate) fn soft_context(s: &NicPairSetup, seed: u64) -> anyhow::Result<Context> {
    let mut cfg = SoftConfig::new(SocketAddr::new(s.ip, s.nic_port));
    cfg.busy_poll = s.busy_poll;
    cfg.nic.mtu = s.mtu;
    cfg.nic.seed = seed;
    cfg.nic.qp.paths = s.paths;
    let backend = SoftBackend::start(cfg).context("starting a soft NIC")?;
    Ok(Context::open(backend))
}

/// A context on the hardware NIC `spec` (its own address from its board information,
/// else `local`), and its driver.
fn device_context(
    s: &NicPairSetup,
    spec: &str,
    local: Option<SocketAddr>,
    seed: u64,
) -> anyhow::Result<(Context, Arc<DeviceBackend>)> {
    let backend = DeviceBackend::open(spec, local, |cfg| {
        cfg.mtu = s.mtu;
        cfg.seed = seed;
    })
    .with_context(|| format!("starting the driver on {spec}"))?;
    Ok((Context::open(backend.clone()), backend))
}

/// One side on `ctx`: its PD, CQ, connected-to-be QP (authenticated when `s` says so)
/// and registered memory.
pub(crate) fn make_side(s: &NicPairSetup, ctx: Context) -> anyhow::Result<Side> {
    let pd = ctx.alloc_pd();
    let cq = ctx.create_cq(4096, None);
    let init = QpInit::new(&cq, &cq);
    let init = match &s.auth {
        Some(key) => {
            let mut qp = ctx.default_qp_config();
            qp.auth = Some(key.clone());
            QpInit {
                config: Some(qp),
                ..init
            }
        }
        None => init,
    };
    let qp = pd.create_qp(&init)?;
    let mr = pd.alloc_mr(
        s.mem,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
    )?;
    Ok(Side {
        ctx,
        cq,
        qp,
        mr,
        _pd: pd,
    })
}

impl NicPair {
    /// Starts both NICs (and the relay) and connects the QPs.
    pub fn new(s: &NicPairSetup) -> anyhow::Result<NicPair> {
        let (a, device) = match &s.device {
            Some((spec, local)) => {
                let (ctx, dev) = device_context(s, spec, *local, 0xa11ce)?;
                (ctx, Some(dev))
            }
            None => (soft_context(s, 0xa11ce)?, None),
        };
        let a = make_side(s, a)?;
        let b = make_side(s, soft_context(s, 0xb0b)?)?;
        let (mut ea, mut eb) = (a.qp.endpoint(), b.qp.endpoint());
        let relay = match &s.relay {
            Some(paths) => {
                let mut cfg =
                    RelayConfig::between(b.ctx.address(), a.ctx.address(), paths.len(), 0.0);
                cfg.paths = paths.clone();
                cfg.max_datagram = s.mtu as usize + 256;
                if let Some(seed) = s.relay_hash_seed {
                    cfg.path_map = metaroce_relay::PathMap::Hash { seed };
                }
                let relay = Relay::start(cfg).context("starting the relay")?;
                eb.addr = relay.listen_addrs()[0];
                ea.addr = relay.listen_addrs()[1];
                Some(relay)
            }
            None => None,
        };
        let opts = ConnectOptions::default();
        a.qp.connect(&eb, &opts)?;
        b.qp.connect(&ea, &opts)?;
        Ok(NicPair {
            a,
            b,
            relay,
            device,
        })
    }

    /// Side A's driver's timing counters now, when it runs on a hardware NIC.
    pub fn device_timing(&self) -> anyhow::Result<Option<DeviceTiming>> {
        self.device
            .as_ref()
            .map(|d| d.timing().context("reading the device's timing counters"))
            .transpose()
    }
}
