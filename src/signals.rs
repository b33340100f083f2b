//! Ctrl-C and SIGTERM: a flag the loops check between steps, and a watchdog that ends the
//! process if they have not within a bound. Temporary files (outputs being written,
//! downloads in progress) and the `curl` children writing them are registered here, so
//! that nothing partial stays behind however the process is stopped.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static STOP: AtomicBool = AtomicBool::new(false);
/// Files to remove, and the child processes writing them, if the process is stopped.
static PENDING: Mutex<Vec<(PathBuf, Option<u32>)>> = Mutex::new(Vec::new());
/// How long the loops get to stop on their own after the signal.
const GRACE: Duration = Duration::from_millis(1500);

/// Whether a stop was asked for.
pub fn stopping() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Remembers a temporary file (and the child writing it) until [`untrack`].
pub fn track(path: &Path, child: Option<u32>) {
    if let Ok(mut p) = PENDING.lock() {
        p.push((path.to_path_buf(), child));
    }
}

pub fn untrack(path: &Path) {
    if let Ok(mut p) = PENDING.lock() {
        p.retain(|(q, _)| q != path);
    }
}

/// Ends the registered children and removes the registered files.
fn clean_up() {
    let pending = match PENDING.lock() {
        Ok(mut p) => std::mem::take(&mut *p),
        Err(_) => return,
    };
    for (path, child) in pending {
        #[cfg(unix)]
        if let Some(pid) = child.and_then(|c| i32::try_from(c).ok()) {
            // SAFETY: kill(2) on a process this one started; at worst it is gone.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        #[cfg(not(unix))]
        let _ = child;
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    // A second Ctrl-C ends the process at once.
    if STOP.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) }
    }
}

/// Installs the handlers (once, at start of a mode) and the watchdog thread.
pub fn install() {
    #[cfg(unix)]
    {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only touches an atomic (and calls _exit), both
        // async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, handler);
            libc::signal(libc::SIGTERM, handler);
        }
    }
    // The watchdog: loops that finish their step in time exit cleanly; one that is deep in
    // a long parse is not waited for.
    let _ = std::thread::Builder::new()
        .name("stop-watchdog".into())
        .spawn(|| {
            while !stopping() {
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(GRACE);
            clean_up();
            std::process::exit(130);
        });
}

/// What the process does once a loop has seen the stop: clean up and say so.
pub fn finish() {
    clean_up();
}
