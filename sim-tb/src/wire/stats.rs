//! The wire's counters: per direction and path, and the injected frames.

/// Counters of one direction of one path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Frames sent onto the path.
    pub sent: u64,
    /// Frames dropped.
    pub lost: u64,
    /// Frames delivered twice.
    pub duplicated: u64,
    /// Frames marked CE.
    pub ce_marked: u64,
}

impl PathStats {
    /// Adds `other`'s counters to these.
    fn absorb(&mut self, other: &PathStats) {
        self.sent += other.sent;
        self.lost += other.lost;
        self.duplicated += other.duplicated;
        self.ce_marked += other.ce_marked;
    }
}

/// What the wire has done so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WireStats {
    /// `per_path[from][path]`: counters of the frames sent from port `from`
    /// on `path`.
    pub per_path: [Vec<PathStats>; 2],
    /// `injected[to]`: frames injected toward port `to` (not in `per_path`).
    pub injected: [u64; 2],
}

impl WireStats {
    /// All paths' counters of the frames sent from port `from`.
    pub fn direction(&self, from: usize) -> PathStats {
        let mut total = PathStats::default();
        for s in &self.per_path[from] {
            total.absorb(s);
        }
        total
    }

    /// All paths' counters, both directions.
    pub fn total(&self) -> PathStats {
        let mut total = self.direction(0);
        total.absorb(&self.direction(1));
        total
    }
}
