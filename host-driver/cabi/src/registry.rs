//! Handles a program passes in are looked up before anything is dereferenced.
//!
//! Each object keeps the C structure a program sees at a fixed address inside an `Arc`.
//! A handle is looked up in its type's [`Registry`], so a NULL, stale or foreign pointer
//! is refused with `EINVAL` instead of being followed. The lookup returns a clone of the
//! `Arc`, so an object stays alive for the duration of a call even if another thread
//! destroys it meanwhile.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use crate::ffi::Errno;

/// An object with a C view at a stable address.
pub trait Object: Send + Sync + 'static {
    /// The C structure behind the handle.
    type C;
    /// Where the C structure lives.
    fn c_ptr(&self) -> *mut Self::C;
}

/// Live objects of one type, keyed by the address of their C structure.
pub struct Registry<T> {
    live: RwLock<HashMap<usize, Arc<T>>>,
}

impl<T: Object> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Object> Registry<T> {
    /// An empty registry.
    pub fn new() -> Self {
        Registry {
            live: RwLock::new(HashMap::new()),
        }
    }

    /// Makes `obj` reachable from C; returns its handle.
    pub fn insert(&self, obj: Arc<T>) -> *mut T::C {
        let p = obj.c_ptr();
        self.live
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(p as usize, obj);
        p
    }

    /// The object behind a handle, or `EINVAL` for anything that is not a live handle.
    pub fn get(&self, p: *const T::C) -> Result<Arc<T>, Errno> {
        self.live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(p as usize))
            .cloned()
            .ok_or(libc::EINVAL)
    }

    /// The first live object matching `pred`.
    pub fn find(&self, pred: impl Fn(&T) -> bool) -> Option<Arc<T>> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        live.values().find(|o| pred(o)).cloned()
    }

    /// Removes a handle even while others hold the object (they keep it alive).
    pub fn remove_any(&self, p: *const T::C) -> Result<Arc<T>, Errno> {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        live.remove(&(p as usize)).ok_or(libc::EINVAL)
    }

    /// Removes a handle, unless something other than the registry and the caller still
    /// holds the object (children alive: `EBUSY`).
    pub fn remove(&self, p: *const T::C) -> Result<Arc<T>, Errno> {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        let obj = live.get(&(p as usize)).ok_or(libc::EINVAL)?;
        if Arc::strong_count(obj) > 1 {
            return Err(libc::EBUSY);
        }
        live.remove(&(p as usize)).ok_or(libc::EINVAL)
    }
}

/// Locks a mutex, ignoring poisoning (every critical section leaves consistent state).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::UnsafeCell;

    struct Thing(UnsafeCell<u32>);
    // SAFETY: test object; the cell is never written.
    unsafe impl Sync for Thing {}
    impl Object for Thing {
        type C = u32;
        fn c_ptr(&self) -> *mut u32 {
            self.0.get()
        }
    }

    #[test]
    fn only_live_handles_resolve() {
        let r: Registry<Thing> = Registry::new();
        let p = r.insert(Arc::new(Thing(UnsafeCell::new(7))));
        assert!(r.get(p).is_ok());
        assert_eq!(r.get(std::ptr::null()).err(), Some(libc::EINVAL));
        let other = 5u32;
        assert_eq!(r.get(&other).err(), Some(libc::EINVAL));
        // SAFETY: reads our own test cell.
        assert!(r.find(|t| unsafe { *t.0.get() } == 7).is_some());
        // Held elsewhere: `remove` refuses, `remove_any` does not.
        let held = r.get(p).unwrap();
        assert_eq!(r.remove(p).err(), Some(libc::EBUSY));
        assert!(r.remove_any(p).is_ok());
        drop(held);
        assert_eq!(r.get(p).err(), Some(libc::EINVAL));
        assert_eq!(r.remove_any(p).err(), Some(libc::EINVAL));
        let q = r.insert(Arc::new(Thing(UnsafeCell::new(8))));
        assert!(r.remove(q).is_ok());
    }
}
