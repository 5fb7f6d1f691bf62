//! Errors returned by topology builders and scenario runners.

use thiserror::Error;

/// Everything that can go wrong while building or running a simulation.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FabricError {
    /// A topology parameter makes no sense (zero paths, zero rate, ...).
    #[error("invalid topology: {0}")]
    InvalidTopology(String),
    /// A probability or fraction is outside its allowed range.
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Value that was given.
        value: f64,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// A referenced host, switch or link does not exist.
    #[error("unknown {kind} {index}")]
    UnknownElement {
        /// What kind of element was referenced.
        kind: &'static str,
        /// Its index.
        index: usize,
    },
    /// The number of transports does not match the number of hosts.
    #[error("{hosts} hosts but {transports} transports were supplied")]
    TransportCount {
        /// Hosts in the topology.
        hosts: usize,
        /// Transports supplied.
        transports: usize,
    },
    /// A fault was requested on a link that cannot carry it.
    #[error("unsupported fault: {0}")]
    UnsupportedFault(String),
}

/// Checks that `value` is a probability in `[0, 1]`.
pub fn check_probability(name: &'static str, value: f64) -> Result<(), FabricError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(FabricError::InvalidParameter {
            name,
            value,
            reason: "must be a probability in [0, 1]",
        })
    }
}
