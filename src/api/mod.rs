//! API handlers: one JSON request in, one JSON answer out. Shared by the server and by
//! `query`, so both answer the same.

mod again;
mod answer;
mod asm;
mod idle;
mod jobs;
mod libs;
pub mod source;
mod symbolicate;

pub use answer::Answer;
pub use jobs::parse_symbolicate_request;
use source::SourceRequest;

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Value, json};

use crate::profile::ProfileFile;
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;
use crate::store::SymbolStore;

/// Why a request cannot be answered; each kind has its HTTP status ([`Self::status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiErrorKind {
    /// The request is malformed (400).
    BadRequest,
    /// No such path, or nothing there (404).
    NotFound,
    /// The server failed (500).
    Internal,
}

impl ApiErrorKind {
    pub fn status(self) -> u16 {
        match self {
            ApiErrorKind::BadRequest => 400,
            ApiErrorKind::NotFound => 404,
            ApiErrorKind::Internal => 500,
        }
    }
}

/// A request that cannot be answered.
#[derive(Debug)]
pub struct ApiError {
    pub kind: ApiErrorKind,
    pub message: String,
}

impl ApiError {
    pub fn new(kind: ApiErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(ApiErrorKind::BadRequest, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(ApiErrorKind::NotFound, message)
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(ApiErrorKind::Internal, message)
    }

    /// The HTTP status to send.
    pub fn status(&self) -> u16 {
        self.kind.status()
    }

    pub fn to_json(&self) -> Value {
        json!({ "error": self.message })
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status())
    }
}

/// What [`Api::handle_or_wait`] gives its caller.
pub enum Handled {
    /// The answer (or why there is none), final.
    Answer(Result<Answer, ApiError>),
    /// The answer waits for downloads (or for the profile's libs, still being read): ask
    /// again with the parsed request ([`Api::handle_parsed`]) when
    /// [`Api::poll_downloads`] moves on.
    WaitForDownloads(Parsed),
}

/// A request, parsed once: a parked request is asked again with it, not re-read.
pub struct Parsed {
    request: Request,
    /// The body of a `/symbolicate/v5` request, for answering it again (`again.rs`).
    body: Vec<u8>,
}

/// The profile's entry for a module, as far as the profile has been read.
// Short-lived (one per module of a request): boxing the entry would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum LibState {
    /// The entry, or `None`: the profile has none for the module.
    Known(Option<Lib>),
    /// Not among the root's libs, and the other processes' are still being read.
    Reading,
}

impl LibState {
    /// The entry, answering now: libs still being read are none.
    fn known(self) -> Option<Lib> {
        match self {
            LibState::Known(lib) => lib,
            LibState::Reading => None,
        }
    }
}

/// A request, parsed: what it asks and which modules its answer needs.
enum Request {
    Symbolicate(Vec<jobs::Job>),
    Source(SourceRequest),
    Asm(asm::AsmRequest),
}

impl Request {
    fn parse(path: &str, body: &[u8]) -> Result<Request, ApiError> {
        let known = ["/symbolicate/v5", "/source/v1", "/asm/v1"];
        if !known.contains(&path) {
            return Err(ApiError::not_found(format!("unknown API path {path}")));
        }
        if path == "/symbolicate/v5" {
            return Ok(Request::Symbolicate(parse_symbolicate_request(body)?));
        }
        let request: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
        Ok(match path {
            "/source/v1" => Request::Source(SourceRequest::parse(&request)?),
            _ => Request::Asm(asm::AsmRequest::parse(&request)?),
        })
    }
}

/// The requests' side of the server: the store they are answered from, the profile's
/// libraries ([`libs::ProfileLibs`]), the answers kept for a repeat ([`again::Again`]),
/// the idle-time work ([`idle::IdleWork`]) and what has been said on stderr.
pub struct Api {
    pub store: SymbolStore,
    libs: libs::ProfileLibs,
    quiet: bool,
    /// Modules whose symbol source was reported on stderr already.
    told: BTreeSet<(String, DebugId)>,
    /// Advice for modules without debug info, said once per kind.
    advisor: crate::hint::Advisor,
    /// Big symbolication answers, kept for the same request asked again.
    again: again::Again,
    /// The profile's own addresses, resolved in the loop's idle time (`idle.rs`); `None`
    /// until the reader has read them.
    idle: Option<idle::IdleWork>,
}

impl Api {
    pub fn new(store: SymbolStore, profile: Option<ProfileFile>, quiet: bool) -> Api {
        Api {
            store,
            libs: libs::ProfileLibs::start(profile),
            quiet,
            told: BTreeSet::new(),
            advisor: Default::default(),
            again: Default::default(),
            idle: None,
        }
    }

    /// Says what to do about the modules without debug info reported since the last
    /// call, once per kind (again only when more modules joined a kind), after their
    /// lines: the server calls it once a burst of requests is over, `query` at the end.
    pub fn say_advice(&mut self) {
        for line in self.advisor.take_lines() {
            crate::log::elog!("{line}");
        }
    }

    /// Takes what the profile's reader has sent, without waiting (or waiting for one
    /// message when `block`); the profile's own addresses, once all have come, become the
    /// idle-time work.
    fn receive_libs(&mut self, block: bool) {
        if let Some(wanted) = self.libs.receive(block, self.quiet) {
            self.idle = Some(idle::IdleWork::new(wanted));
        }
    }

    /// The profile's lib entry for a module ([`libs::ProfileLibs::find`]).
    pub(crate) fn lib(&mut self, debug_name: &str, breakpad_id: &DebugId) -> LibState {
        self.receive_libs(false);
        self.libs.find(debug_name, breakpad_id)
    }

    /// Whether the answer to `request` waits: for the profile's libs (their paths lead to
    /// the files: looking without them could start downloads a local file makes
    /// needless), or for a download of a module it needs. Asking the store starts the
    /// downloads, all of a request's at once.
    fn waits(&mut self, request: &Request) -> bool {
        let needs: Vec<(String, DebugId, LibState)> = match request {
            Request::Symbolicate(jobs) => symbolicate::modules(jobs)
                .into_iter()
                .map(|(name, id)| {
                    let lib = self.lib(name, id);
                    (name.to_string(), id.clone(), lib)
                })
                .collect(),
            Request::Source(req) => {
                let lib = self.lib(&req.debug_name, &req.debug_id);
                vec![(req.debug_name.clone(), req.debug_id.clone(), lib)]
            }
            Request::Asm(req) => req
                .module()
                .map(|(name, id)| {
                    let lib = self.asm_lib(req);
                    (name.to_string(), id, lib)
                })
                .into_iter()
                .collect(),
        };
        let mut waits = false;
        for (name, id, lib) in needs {
            let LibState::Known(lib) = lib else {
                waits = true;
                continue;
            };
            waits |= matches!(
                self.store.module(&name, &id, lib.as_ref()),
                crate::store::ModuleState::Pending(_)
            );
        }
        waits
    }

    /// For the server loop and `query`: [`Handled::WaitForDownloads`] when `may_wait` and
    /// the answer waits for downloads or the profile's libs (nothing is answered then;
    /// the caller asks again with the parsed request when [`Self::poll_downloads`] moves
    /// on); else the answer, from what is here.
    pub fn handle_or_wait(&mut self, path: &str, body: Vec<u8>, may_wait: bool) -> Handled {
        if path == "/symbolicate/v5"
            && let Some(answer) = self.answer_again(&body)
        {
            return Handled::Answer(Ok(answer));
        }
        let request = match Request::parse(path, &body) {
            Ok(r) => r,
            Err(e) => return Handled::Answer(Err(e)),
        };
        let body = match request {
            Request::Symbolicate(_) => body,
            _ => Vec::new(),
        };
        self.handle_parsed(Parsed { request, body }, may_wait)
    }

    /// [`Self::handle_or_wait`] for a request parsed before (a parked one).
    pub fn handle_parsed(&mut self, parsed: Parsed, may_wait: bool) -> Handled {
        // Only the profile's reader and downloads make an answer wait: without either,
        // the modules are not looked up twice (once here, once for the answer).
        let can_wait = self.libs.reading() || self.store.has_remote();
        if may_wait && can_wait && self.waits(&parsed.request) {
            return Handled::WaitForDownloads(parsed);
        }
        if let Request::Symbolicate(jobs) = &parsed.request {
            let (mut answer, modules) = self.symbolicate(jobs);
            self.again.remember(&parsed.body, modules, &mut answer);
            return Handled::Answer(Ok(answer));
        }
        Handled::Answer(Ok(self.answer(&parsed.request)))
    }

    /// The answer given to this same body before, if every module it needs still
    /// resolves as it did then.
    fn answer_again(&mut self, body: &[u8]) -> Option<Answer> {
        let entry = self.again.take(body)?;
        for ((name, id), then) in &entry.modules {
            let LibState::Known(lib) = self.lib(name, id) else {
                return None;
            };
            if !then.holds(&self.store.module(name, id, lib.as_ref())) {
                return None;
            }
        }
        self.again.answer(entry)
    }

    /// Reaps and starts downloads and takes the profile's libs as they come; a count
    /// that moves on progress of either.
    pub fn poll_downloads(&mut self) -> u64 {
        self.receive_libs(false);
        let downloads = self.store.poll_downloads();
        downloads + self.libs.progress()
    }

    /// Blocks until a download ends, or the profile's reader sends its next part.
    pub fn wait_download(&mut self) {
        if self.libs.reading() {
            self.receive_libs(true);
        } else {
            self.store.wait_download();
        }
    }

    /// Stops downloads and removes their partial files.
    pub fn shutdown(&mut self) {
        self.store.shutdown_downloads();
    }

    /// Answers `POST <path>` with `body` from what is here (no waiting): the JSON text of
    /// the answer.
    pub fn handle(&mut self, path: &str, body: &[u8]) -> Result<Answer, ApiError> {
        Request::parse(path, body).map(|r| self.answer(&r))
    }

    fn answer(&mut self, request: &Request) -> Answer {
        let value = match request {
            Request::Symbolicate(jobs) => return self.symbolicate(jobs).0,
            // The front-end shows the message of a failure only on a 200.
            Request::Source(req) => self
                .source(req)
                .unwrap_or_else(|e| json!({ "error": e.to_string() })),
            Request::Asm(req) => self
                .asm(req)
                .unwrap_or_else(|e| json!({ "error": e.to_string() })),
        };
        value.to_string().into_bytes().into()
    }
}

pub(super) fn str_field(v: &Value, key: &str) -> Result<String, ApiError> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ApiError::bad_request(format!("'{key}' must be a string")))
}

/// A `"0x…"` hex string (or a plain number) field.
pub(super) fn offset_field(v: &Value, key: &str) -> Result<u64, ApiError> {
    let bad = || ApiError::bad_request(format!("'{key}' must be a hex string like \"0x1a2b\""));
    match v.get(key) {
        Some(Value::String(s)) => {
            let hex = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .ok_or_else(bad)?;
            u64::from_str_radix(hex, 16).map_err(|_| bad())
        }
        Some(n) => n.as_u64().ok_or_else(bad),
        None => Err(bad()),
    }
}
