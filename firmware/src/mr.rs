//! Memory regions: registration, keys, and the checks every access passes.

use alloc::collections::BTreeMap;

use crate::ids::IdGen;
use crate::verbs::Sge;

bitflags::bitflags! {
    /// Access rights of a memory region (the Verbs `IBV_ACCESS_*` bits).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct Access: u32 {
        /// The local NIC may write it (receive buffers, READ destinations).
        const LOCAL_WRITE = 1 << 0;
        /// Remote WRITEs may land in it.
        const REMOTE_WRITE = 1 << 1;
        /// Remote READs may read it.
        const REMOTE_READ = 1 << 2;
        /// Remote atomics may operate on it.
        const REMOTE_ATOMIC = 1 << 3;
    }
}

/// A registered region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryRegion {
    /// First address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// Rights.
    pub access: Access,
    /// Protection domain it belongs to.
    pub pd: u32,
    /// Key for local access.
    pub lkey: u32,
    /// Key for remote access.
    pub rkey: u32,
}

impl MemoryRegion {
    /// True when `addr..addr + len` lies inside the region (without overflow).
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        addr >= self.addr && end <= self.addr + self.len
    }
}

/// Why an access was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// No region has this key.
    #[error("no memory region with this key")]
    BadKey,
    /// The region belongs to another protection domain.
    #[error("memory region belongs to another protection domain")]
    WrongPd,
    /// The range is not inside the region.
    #[error("range outside the memory region")]
    OutOfBounds,
    /// The region does not grant the access.
    #[error("access not permitted by the memory region")]
    NotPermitted,
}

/// Why a registration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// Zero length or an address range that overflows.
    #[error("invalid memory range")]
    InvalidRange,
    /// Remote write or atomic access without local write (Verbs rule).
    #[error("REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE")]
    InvalidAccess,
}

/// The region table of one NIC. Keys are unpredictable (24 random bits over an
/// 8-bit generation, [`IdGen::key`]) and never equal a live region's key.
#[derive(Debug)]
pub struct MrTable {
    by_key: BTreeMap<u32, MemoryRegion>,
    keys: IdGen,
}

impl Default for MrTable {
    fn default() -> Self {
        MrTable::new(IdGen::from_u64(0))
    }
}

impl MrTable {
    /// An empty table drawing its keys from `keys`.
    pub fn new(keys: IdGen) -> Self {
        MrTable {
            by_key: BTreeMap::new(),
            keys,
        }
    }

    /// Registers `addr..addr + len` and returns the region with its keys.
    pub fn register(
        &mut self,
        pd: u32,
        addr: u64,
        len: u64,
        access: Access,
    ) -> Result<MemoryRegion, RegisterError> {
        if len == 0 || addr.checked_add(len).is_none() {
            return Err(RegisterError::InvalidRange);
        }
        if access.intersects(Access::REMOTE_WRITE | Access::REMOTE_ATOMIC)
            && !access.contains(Access::LOCAL_WRITE)
        {
            return Err(RegisterError::InvalidAccess);
        }
        // Key 0 is never handed out so a zeroed field never matches.
        let by_key = &self.by_key;
        let key = self.keys.key(|k| by_key.contains_key(&k));
        let mr = MemoryRegion {
            addr,
            len,
            access,
            pd,
            lkey: key,
            rkey: key,
        };
        self.by_key.insert(key, mr);
        Ok(mr)
    }

    /// Every registered region, by key.
    pub fn iter(&self) -> impl Iterator<Item = &MemoryRegion> + '_ {
        self.by_key.values()
    }

    /// Removes a region; returns it if it existed.
    pub fn deregister(&mut self, lkey: u32) -> Option<MemoryRegion> {
        self.by_key.remove(&lkey)
    }

    /// Checks a local access through `lkey`.
    pub fn check_local(
        &self,
        pd: u32,
        lkey: u32,
        addr: u64,
        len: u64,
        write: bool,
    ) -> Result<&MemoryRegion, AccessError> {
        let need = if write {
            Access::LOCAL_WRITE
        } else {
            Access::empty()
        };
        self.check(pd, lkey, addr, len, need)
    }

    /// Checks local access to every element of `sges` through its own lkey
    /// (elements without bytes pass).
    pub fn check_local_all(
        &self,
        pd: u32,
        sges: impl IntoIterator<Item = Sge>,
        write: bool,
    ) -> Result<(), AccessError> {
        sges.into_iter().filter(|s| s.len > 0).try_for_each(|s| {
            self.check_local(pd, s.lkey, s.addr, u64::from(s.len), write)
                .map(drop)
        })
    }

    /// Checks a remote access through `rkey` needing `need`.
    pub fn check_remote(
        &self,
        pd: u32,
        rkey: u32,
        addr: u64,
        len: u64,
        need: Access,
    ) -> Result<&MemoryRegion, AccessError> {
        self.check(pd, rkey, addr, len, need)
    }

    fn check(
        &self,
        pd: u32,
        key: u32,
        addr: u64,
        len: u64,
        need: Access,
    ) -> Result<&MemoryRegion, AccessError> {
        let mr = self.by_key.get(&key).ok_or(AccessError::BadKey)?;
        if mr.pd != pd {
            return Err(AccessError::WrongPd);
        }
        if !mr.contains(addr, len) {
            return Err(AccessError::OutOfBounds);
        }
        if !mr.access.contains(need) {
            return Err(AccessError::NotPermitted);
        }
        Ok(mr)
    }

    /// Number of registered regions.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when no region is registered.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_refuses_what_it_should() {
        let mut t = MrTable::default();
        let mr = t
            .register(1, 0x1000, 0x100, Access::LOCAL_WRITE | Access::REMOTE_WRITE)
            .unwrap();
        assert!(
            t.check_remote(1, mr.rkey, 0x1000, 0x100, Access::REMOTE_WRITE)
                .is_ok()
        );
        assert_eq!(
            t.check_remote(1, mr.rkey ^ 1, 0x1000, 1, Access::REMOTE_WRITE)
                .unwrap_err(),
            AccessError::BadKey
        );
        assert_eq!(
            t.check_remote(2, mr.rkey, 0x1000, 1, Access::REMOTE_WRITE)
                .unwrap_err(),
            AccessError::WrongPd
        );
        assert_eq!(
            t.check_remote(1, mr.rkey, 0x10ff, 2, Access::REMOTE_WRITE)
                .unwrap_err(),
            AccessError::OutOfBounds
        );
        assert_eq!(
            t.check_remote(1, mr.rkey, 0xfff, 1, Access::REMOTE_WRITE)
                .unwrap_err(),
            AccessError::OutOfBounds
        );
        assert_eq!(
            t.check_remote(1, mr.rkey, u64::MAX, 2, Access::REMOTE_WRITE)
                .unwrap_err(),
            AccessError::OutOfBounds
        );
        assert_eq!(
            t.check_remote(1, mr.rkey, 0x1000, 1, Access::REMOTE_READ)
                .unwrap_err(),
            AccessError::NotPermitted
        );
        assert_eq!(
            t.register(1, 0, 0, Access::empty()).unwrap_err(),
            RegisterError::InvalidRange
        );
        assert_eq!(
            t.register(1, 0, 1, Access::REMOTE_WRITE).unwrap_err(),
            RegisterError::InvalidAccess
        );
        t.deregister(mr.lkey);
        assert_eq!(
            t.check_local(1, mr.lkey, 0x1000, 1, false).unwrap_err(),
            AccessError::BadKey
        );
    }
}
