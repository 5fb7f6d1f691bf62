//! The wire's configuration: each path's behaviour, how a frame's UDP
//! source port picks its path, and the link rate.

/// How a frame's UDP source port (the path entropy) picks its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathMap {
    /// A seeded SplitMix64 mix of the port, modulo the number of paths, like
    /// a switch's ECMP hash: distinct ports may share a path.
    Hash {
        /// Hash seed.
        seed: u64,
    },
    /// `port % paths`: consecutive ports land on distinct paths.
    Modulo,
}

impl PathMap {
    /// Path index (`0..paths`) of UDP source port `port`; 0 when `paths` is 0.
    pub fn path_of(self, port: u16, paths: usize) -> usize {
        if paths == 0 {
            return 0;
        }
        let key = match self {
            PathMap::Hash { seed } => splitmix64(u64::from(port) ^ seed),
            PathMap::Modulo => u64::from(port),
        };
        (key % paths as u64) as usize
    }
}

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash.
pub(super) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The behaviour of one path, the same in both directions. Probabilities
/// are in `0..=1`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct PathConfig {
    /// Base one-way delay in ns.
    pub delay_ns: u64,
    /// Largest extra delay in ns; each copy of a frame gets a uniform draw
    /// in `[0, jitter_ns]`.
    pub jitter_ns: u64,
    /// Probability that a frame is dropped (1: a failed link).
    pub loss: f64,
    /// Probability that a frame is also delivered a second time.
    pub dup: f64,
    /// Probability that an ECN-capable frame is marked CE.
    pub ecn_mark: f64,
}

/// The fabric: its paths, how frames are spread over them, and the link rate.
#[derive(Clone, Debug, PartialEq)]
pub struct WireConfig {
    /// One entry per ECMP path (at least one); override a path's settings
    /// by editing its entry, e.g. `paths[2].loss = 1.0`.
    pub paths: Vec<PathConfig>,
    /// How a UDP source port picks a path.
    pub path_map: PathMap,
    /// Serialisation rate of each direction of each path in bits per ns
    /// (100 = 100 Gbit/s); `None` or a non-positive value: unlimited.
    pub rate_bits_per_ns: Option<f64>,
}

impl WireConfig {
    /// `paths` paths that all behave like `path`, hashed with
    /// `PathMap::Hash { seed: 0 }`, unlimited rate.
    pub fn uniform(paths: usize, path: PathConfig) -> Self {
        Self {
            paths: vec![path; paths],
            path_map: PathMap::Hash { seed: 0 },
            rate_bits_per_ns: None,
        }
    }
}
