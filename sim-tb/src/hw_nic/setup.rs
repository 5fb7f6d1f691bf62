//! Setting the NIC up: the model, the engine on the hardware data path,
//! the front end's UDP port, and the address registers and globals.

use std::collections::VecDeque;
use std::net::IpAddr;

use metaroce_driver::hw::tables::Tables;
use metaroce_firmware::datapath::Datapath;
use metaroce_firmware::{Nic, NicConfig, QpConfig, VecMemory};

use super::ports::Ports;
use super::{HwCounters, HwNic, HwNicConfig, MTU};
use crate::core_check::metaroce_hdl_codes::CONN_WINDOW;
use crate::tx_build::{Addresses, FeedPorts};
use crate::tx_path::{SLOTS, TablePorts};
use crate::{Model, Sim, SimError};

impl HwNic {
    /// A reset NIC with its address registers written and an empty engine.
    pub fn new(cfg: HwNicConfig) -> Result<Self, SimError> {
        let mut sim = Sim::new(Model::NicCore64)?;
        let p = Ports::new(&sim)?;
        let feed = FeedPorts::new(&sim)?;
        let table = TablePorts::new(&sim)?;
        sim.reset()?;
        let fw = Nic::new(NicConfig {
            local_ip: cfg.ip,
            udp_port: cfg.udp_port,
            mtu: MTU,
            line_rate_mbps: cfg.line_rate_mbps,
            seed: cfg.seed,
            qp: QpConfig {
                recv_window: CONN_WINDOW,
                ..QpConfig::default()
            },
            datapath: Datapath::Hardware,
            ..NicConfig::default()
        });
        let mut nic = Self {
            mem: VecMemory::new(cfg.mem_base, cfg.mem_len),
            cfg,
            sim,
            p,
            feed,
            table,
            fw,
            cfg_queue: VecDeque::new(),
            tables: Tables::new(SLOTS),
            desc: None,
            desc_driven: false,
            offered: false,
            next_poll_ns: 0,
            rx_in: VecDeque::new(),
            rx_off: 0,
            rx_entered: VecDeque::new(),
            held: VecDeque::new(),
            fw_expect: VecDeque::new(),
            fw_bytes: Vec::new(),
            fw_tx: VecDeque::new(),
            fw_tx_off: 0,
            fw_tx_beat: None,
            tx_frame: Vec::new(),
            dma: None,
            fetch: VecDeque::new(),
            fetch_off: 0,
            now: 0,
            events: VecDeque::new(),
            placed_data: 0,
            dma_done: 0,
            counters: HwCounters::default(),
            buf: vec![0; MTU as usize + 256],
            table_ops: VecDeque::new(),
            op_run: None,
            ack_fates: Vec::new(),
            inbox: VecDeque::new(),
        };
        nic.configure();
        Ok(nic)
    }

    /// Points the TX builder at another peer (its one peer: IP address and
    /// UDP port), for a NIC whose peer is known only when it connects.
    pub fn set_peer(&mut self, ip: IpAddr, udp_port: u16) {
        self.cfg.peer_ip = ip;
        self.cfg.peer_udp_port = udp_port;
        self.write_addresses();
    }

    /// The TX builder's address registers.
    pub(super) fn write_addresses(&mut self) {
        let a = Addresses {
            local_mac: self.cfg.mac,
            peer_mac: self.cfg.peer_mac,
            local_ip: self.cfg.ip,
            peer_ip: self.cfg.peer_ip,
            dst_port: self.cfg.peer_udp_port,
            ttl: 64,
            dscp: 0,
        };
        let q = &mut self.cfg_queue;
        assert!(
            Tables::write_addresses(&a, &mut |addr, data| q.push_back((addr, data))),
            "local and peer address of different families"
        );
    }

    /// Address registers, MTU and the front end's UDP port.
    pub(super) fn configure(&mut self) {
        let port_we = self.sim.port("eth_cfg_port_we").expect("NicCore port");
        let port = self.sim.port("eth_cfg_port").expect("NicCore port");
        self.sim.set(port_we, 1);
        self.sim.set(port, self.cfg.udp_port.into());
        self.sim.tick();
        self.sim.set(port_we, 0);
        self.set_outputs_ready(true);
        self.write_addresses();
        let q = &mut self.cfg_queue;
        Tables::write_globals(self.cfg.ip, MTU, &mut |a, d| q.push_back((a, d)));
    }

    /// Whether the harness takes what the model's output ports offer: the
    /// TX table's fates, the firmware receive queue's beats (as they come),
    /// DMA writes and MAC TX beats.
    pub(super) fn set_outputs_ready(&mut self, ready: bool) {
        self.sim.set(self.table.res.fate_ready, ready.into());
        self.p.fw.set_ready(&mut self.sim, ready);
        self.p.dma.set_ready(&mut self.sim, ready);
        self.p.tx.set_ready(&mut self.sim, ready);
    }
}
