//! PATCH (profiler-symbol-server): bounds on what one client can make the server spend.
//! Set at accept: socket timeouts, a cap on open connections (evicting the one that has
//! waited longest without sending a complete request), limits on the request line and
//! headers, a check of the head before any body is read (so a refused request never has
//! its body read or a `100 Continue` sent), and the body read whole, under a deadline, by
//! the connection's own thread: the thread that answers requests never waits on a client.
//! The bytes of all bodies held at once are bounded too (`BodyBudget`).

use std::io::{Cursor, Read};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{Header, Method};

/// What the check of a request's head answers for a request it refuses: the status and
/// the body (JSON text) of the answer; the connection is closed after it.
pub type Refusal = (u16, Vec<u8>);

/// A request's head as the checks see it, with the address the client connected to
/// (for a server bound to all addresses: the one this client reached it by).
pub struct Head<'a> {
    pub method: &'a Method,
    pub url: &'a str,
    pub headers: &'a [Header],
    pub local: Option<std::net::SocketAddr>,
}

/// Decides, from the head alone, whether a request is refused.
pub type HeadCheck = dyn Fn(&Head<'_>) -> Option<Refusal> + Send + Sync;

/// Told of every request refused by the connection's thread (head check, body limits,
/// bad `Content-Length`): its head, the status, and the bytes of the answer's body. These
/// never reach the caller's loop, which would otherwise not know of them.
pub type RefusalLog = dyn Fn(&Head<'_>, u16, usize) + Send + Sync;

#[derive(Clone)]
pub struct Limits {
    /// Longest a single read on a socket may block (an idle keep-alive connection is
    /// closed after this long).
    pub read_timeout: Duration,
    /// Longest a single write may block: a client that stops reading loses its answer.
    pub write_timeout: Duration,
    /// Longest a client may take to send a request's head, and then its body.
    pub request_deadline: Duration,
    /// Longest request line or header line, in bytes (431 beyond).
    pub max_line: usize,
    /// Most header lines (431 beyond).
    pub max_headers: usize,
    /// Largest body (413 beyond, unread).
    pub max_body: u64,
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most bytes of bodies being read or held, all connections together: a body that
    /// would go over is refused (503, unread). Bodies of at most `uncounted_body` bytes do
    /// not count (they are bounded by `max_connections` already, and a normal request must
    /// not be refused while big ones are in flight).
    pub bodies_in_flight: u64,
    pub uncounted_body: u64,
    pub head_check: Option<Arc<HeadCheck>>,
    pub on_refusal: Option<Arc<RefusalLog>>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            read_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(2),
            request_deadline: Duration::from_secs(10),
            max_line: 16 << 10,
            max_headers: 100,
            max_body: 64 << 20,
            max_connections: 128,
            bodies_in_flight: u64::MAX,
            uncounted_body: 0,
            head_check: None,
            on_refusal: None,
        }
    }
}

struct Entry {
    id: u64,
    sock: TcpStream,
    /// Since when the connection waits for its next complete request; `None` while one
    /// of its requests is with the server.
    waiting_since: Option<Instant>,
}

/// The open connections, for the cap.
#[derive(Default)]
pub(crate) struct Registry {
    entries: Mutex<(u64, Vec<Entry>)>,
}

impl Registry {
    /// Registers a new connection; at the cap, first hangs up on the one that has waited
    /// longest without a complete request. `None`: nothing could make room (refuse it).
    pub(crate) fn admit(self: &Arc<Self>, sock: &TcpStream, cap: usize) -> Option<Ticket> {
        let mut guard = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let (next_id, entries) = &mut *guard;
        if entries.len() >= cap {
            let victim = entries
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.waiting_since.map(|t| (t, i)))
                .min()
                .map(|(_, i)| i)?;
            let e = entries.swap_remove(victim);
            let _ = e.sock.shutdown(Shutdown::Both);
        }
        let clone = sock.try_clone().ok()?;
        *next_id += 1;
        let id = *next_id;
        entries.push(Entry {
            id,
            sock: clone,
            waiting_since: Some(Instant::now()),
        });
        Some(Ticket {
            id,
            registry: self.clone(),
        })
    }

    /// Hangs up on the connection that has waited longest (out of descriptors).
    pub(crate) fn evict_oldest(&self) {
        let mut guard = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let entries = &mut guard.1;
        if let Some((_, i)) = entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.waiting_since.map(|t| (t, i)))
            .min()
        {
            let e = entries.swap_remove(i);
            let _ = e.sock.shutdown(Shutdown::Both);
        }
    }

    fn set_waiting(&self, id: u64, waiting: bool) {
        let mut guard = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = guard.1.iter_mut().find(|e| e.id == id) {
            e.waiting_since = waiting.then(Instant::now);
        }
    }
}

/// A connection's place in the registry; leaves it when dropped.
pub(crate) struct Ticket {
    id: u64,
    registry: Arc<Registry>,
}

impl Ticket {
    pub(crate) fn waiting(&self, waiting: bool) {
        self.registry.set_waiting(self.id, waiting);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut guard = self
            .registry
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        guard.1.retain(|e| e.id != self.id);
    }
}

/// The bytes of bodies in flight, against `Limits::bodies_in_flight`.
pub(crate) struct BodyBudget {
    used: AtomicU64,
    cap: u64,
}

impl BodyBudget {
    pub(crate) fn new(cap: u64) -> Arc<BodyBudget> {
        Arc::new(BodyBudget {
            used: AtomicU64::new(0),
            cap,
        })
    }

    /// `n` more bytes, if they fit under the cap.
    fn reserve(&self, n: u64) -> bool {
        let mut cur = self.used.load(Ordering::SeqCst);
        loop {
            let next = match cur.checked_add(n) {
                Some(next) if next <= self.cap => next,
                _ => return false,
            };
            match self
                .used
                .compare_exchange(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }
}

/// Bytes a body holds of the budget; given back when dropped.
pub(crate) struct Permit {
    budget: Arc<BodyBudget>,
    bytes: u64,
}

impl Permit {
    pub(crate) fn empty(budget: &Arc<BodyBudget>) -> Permit {
        Permit {
            budget: budget.clone(),
            bytes: 0,
        }
    }

    /// Holds `total` bytes in all; false (holding what it held) if they do not fit.
    pub(crate) fn grow_to(&mut self, total: u64) -> bool {
        if total <= self.bytes {
            return true;
        }
        if !self.budget.reserve(total - self.bytes) {
            return false;
        }
        self.bytes = total;
        true
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

/// A body read whole, with its share of the budget: the share goes back when the request
/// (which owns this reader) is dropped, that is once it is answered.
pub(crate) struct HeldBody {
    pub(crate) data: Cursor<Vec<u8>>,
    pub(crate) _permit: Permit,
}

impl Read for HeldBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.data.read(buf)
    }
}
