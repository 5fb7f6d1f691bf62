//! Named topologies built on [`NetworkBuilder`]: parallel paths between two
//! hosts, leaf-spine, and multi-plane leaf-spine.

use crate::error::FabricError;
use crate::network::{LinkId, LinkSpec, NetworkBuilder, SwitchId};
use crate::packet::HostId;

/// Two hosts joined through N equal-cost parallel links:
/// sender → ingress switch → N links → egress switch → receiver.
#[derive(Clone, Debug)]
pub struct ParallelPaths {
    /// The network, to add faults and build.
    pub network: NetworkBuilder,
    /// Host 0.
    pub sender: HostId,
    /// Host 1.
    pub receiver: HostId,
    /// The N parallel links in the sender→receiver direction.
    pub forward_paths: Vec<LinkId>,
    /// The N parallel links in the receiver→sender direction.
    pub reverse_paths: Vec<LinkId>,
    /// Egress switch → receiver.
    pub receiver_downlink: LinkId,
    /// Ingress switch → sender.
    pub sender_downlink: LinkId,
}

/// Builds [`ParallelPaths`] with `paths` parallel links.
pub fn parallel_paths(
    seed: u64,
    paths: usize,
    host_link: LinkSpec,
    path_link: LinkSpec,
) -> Result<ParallelPaths, FabricError> {
    if paths == 0 {
        return Err(FabricError::InvalidTopology(
            "parallel paths need at least one path".into(),
        ));
    }
    let mut network = NetworkBuilder::new(seed);
    let sender = network.add_host();
    let receiver = network.add_host();
    let ingress = network.add_switch();
    let egress = network.add_switch();
    let (_, sender_downlink) = network.connect_host(sender, ingress, host_link)?;
    let (_, receiver_downlink) = network.connect_host(receiver, egress, host_link)?;
    let mut forward_paths = Vec::with_capacity(paths);
    let mut reverse_paths = Vec::with_capacity(paths);
    for _ in 0..paths {
        let (forward, reverse) = network.connect_switches(ingress, egress, path_link)?;
        forward_paths.push(forward);
        reverse_paths.push(reverse);
    }
    Ok(ParallelPaths {
        network,
        sender,
        receiver,
        forward_paths,
        reverse_paths,
        receiver_downlink,
        sender_downlink,
    })
}

/// Shape of a two-tier Clos.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeafSpineSpec {
    /// Leaf (top-of-rack) switches.
    pub leaves: usize,
    /// Spine switches; every leaf has one uplink to every spine.
    pub spines: usize,
    /// Hosts under each leaf.
    pub hosts_per_leaf: usize,
    /// Host ↔ leaf cables.
    pub host_link: LinkSpec,
    /// Leaf ↔ spine cables.
    pub fabric_link: LinkSpec,
}

impl LeafSpineSpec {
    fn validate(&self) -> Result<(), FabricError> {
        if self.leaves == 0 || self.spines == 0 || self.hosts_per_leaf == 0 {
            return Err(FabricError::InvalidTopology(format!(
                "leaf-spine needs at least one leaf, spine and host per leaf (got {} leaves, {} spines, {} hosts per leaf)",
                self.leaves, self.spines, self.hosts_per_leaf
            )));
        }
        Ok(())
    }
}

/// A built leaf-spine.
#[derive(Clone, Debug)]
pub struct LeafSpine {
    /// The network, to add faults and build.
    pub network: NetworkBuilder,
    /// Hosts, leaf by leaf (host `i` is under leaf `i / hosts_per_leaf`).
    pub hosts: Vec<HostId>,
    /// Leaf switches.
    pub leaves: Vec<SwitchId>,
    /// Spine switches.
    pub spines: Vec<SwitchId>,
    /// Leaf → host link of every host.
    pub host_downlinks: Vec<LinkId>,
    /// `leaf_uplinks[leaf][spine]`: leaf → spine link.
    pub leaf_uplinks: Vec<Vec<LinkId>>,
}

/// Builds a leaf-spine fabric.
pub fn leaf_spine(seed: u64, spec: &LeafSpineSpec) -> Result<LeafSpine, FabricError> {
    spec.validate()?;
    let mut network = NetworkBuilder::new(seed);
    let (hosts, leaves, spines, host_downlinks, leaf_uplinks) =
        add_plane(&mut network, spec, None)?;
    Ok(LeafSpine {
        network,
        hosts,
        leaves,
        spines,
        host_downlinks,
        leaf_uplinks,
    })
}

type PlaneParts = (
    Vec<HostId>,
    Vec<SwitchId>,
    Vec<SwitchId>,
    Vec<LinkId>,
    Vec<Vec<LinkId>>,
);

/// Adds one leaf-spine plane; creates hosts unless `existing_hosts` is given.
fn add_plane(
    network: &mut NetworkBuilder,
    spec: &LeafSpineSpec,
    existing_hosts: Option<&[HostId]>,
) -> Result<PlaneParts, FabricError> {
    let leaves: Vec<SwitchId> = (0..spec.leaves).map(|_| network.add_switch()).collect();
    let spines: Vec<SwitchId> = (0..spec.spines).map(|_| network.add_switch()).collect();
    let hosts: Vec<HostId> = match existing_hosts {
        Some(hosts) => hosts.to_vec(),
        None => (0..spec.leaves * spec.hosts_per_leaf)
            .map(|_| network.add_host())
            .collect(),
    };
    let mut host_downlinks = Vec::with_capacity(hosts.len());
    for (index, &host) in hosts.iter().enumerate() {
        let leaf = leaves[index / spec.hosts_per_leaf];
        let (_, down) = network.connect_host(host, leaf, spec.host_link)?;
        host_downlinks.push(down);
    }
    let mut leaf_uplinks = Vec::with_capacity(leaves.len());
    for &leaf in &leaves {
        let mut uplinks = Vec::with_capacity(spines.len());
        for &spine in &spines {
            let (up, _) = network.connect_switches(leaf, spine, spec.fabric_link)?;
            uplinks.push(up);
        }
        leaf_uplinks.push(uplinks);
    }
    Ok((hosts, leaves, spines, host_downlinks, leaf_uplinks))
}

/// One plane of a [`MultiPlane`] fabric.
#[derive(Clone, Debug)]
pub struct Plane {
    /// Leaf switches of this plane.
    pub leaves: Vec<SwitchId>,
    /// Spine switches of this plane.
    pub spines: Vec<SwitchId>,
    /// Leaf → host link of every host in this plane.
    pub host_downlinks: Vec<LinkId>,
}

/// P independent leaf-spine planes sharing the hosts.
///
/// Model: each host NIC has one port per plane (port `k` cabled to plane
/// `k`); planes share no switch or link. A packet leaves on port
/// `src_port % planes`, so a transport sprays across planes by choosing its
/// UDP source ports (entropy), and ECMP inside the plane hashes the same
/// port. A failed plane is a set of blackholed links inside it.
#[derive(Clone, Debug)]
pub struct MultiPlane {
    /// The network, to add faults and build.
    pub network: NetworkBuilder,
    /// Hosts (each with `planes` NIC ports).
    pub hosts: Vec<HostId>,
    /// The planes.
    pub planes: Vec<Plane>,
}

/// Builds a multi-plane fabric of `planes` copies of `spec`.
pub fn multi_plane(
    seed: u64,
    planes: usize,
    spec: &LeafSpineSpec,
) -> Result<MultiPlane, FabricError> {
    spec.validate()?;
    if planes == 0 || planes > usize::from(u16::MAX) {
        return Err(FabricError::InvalidTopology(format!(
            "multi-plane fabric needs 1..=65535 planes, got {planes}"
        )));
    }
    let mut network = NetworkBuilder::new(seed);
    let hosts: Vec<HostId> = (0..spec.leaves * spec.hosts_per_leaf)
        .map(|_| network.add_host())
        .collect();
    let mut built = Vec::with_capacity(planes);
    for _ in 0..planes {
        let (_, leaves, spines, host_downlinks, _) = add_plane(&mut network, spec, Some(&hosts))?;
        built.push(Plane {
            leaves,
            spines,
            host_downlinks,
        });
    }
    Ok(MultiPlane {
        network,
        hosts,
        planes: built,
    })
}
