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
        Registry {
            live: RwLock::new(HashMap::new()),
        }
    }
}

impl<T: Object> Registry<T> {
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

    /// Every live object.
    pub fn all(&self) -> Vec<Arc<T>> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        live.values().cloned().collect()
    }

    /// Removes a handle; the object lives on while others hold it.
    pub fn remove(&self, p: *const T::C) -> Result<Arc<T>, Errno> {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
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
        let r: Registry<Thing> = Registry::default();
        let p = r.insert(Arc::new(Thing(UnsafeCell::new(7))));
        assert!(r.get(p).is_ok());
        assert_eq!(r.get(std::ptr::null()).err(), Some(libc::EINVAL));
        let other = 5u32;
        assert_eq!(r.get(&other).err(), Some(libc::EINVAL));
        assert_eq!(r.all().len(), 1);
        assert!(r.remove(p).is_ok());
        assert_eq!(r.get(p).err(), Some(libc::EINVAL));
        assert_eq!(r.remove(p).err(), Some(libc::EINVAL));
    }
}
