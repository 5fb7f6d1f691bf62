//! CPU time of this process, for the commands that report what a run cost
//! (`bench`, `sim`).

/// User + system CPU seconds this process has used (all threads).
pub fn cpu_seconds() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return 0.0;
    }
    // SAFETY: getrusage succeeded, so it initialised `ru` (it was zeroed before anyway).
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
