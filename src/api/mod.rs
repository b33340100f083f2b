//! API handlers: one JSON request in, one JSON answer out. Shared by the server and by
//! `query`, so both answer the same.

mod answer;
mod asm;
pub mod source;
mod symbolicate;

pub use answer::{Answer, AnswerReader};
use source::SourceRequest;
pub use symbolicate::{Job, parse_symbolicate_request};

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Value, json};

use crate::profile::ProfileFile;
use crate::profile::libs::{Lib, LibList};
use crate::store::SymbolStore;

/// A request that cannot be answered; `status` is the HTTP status to send.
#[derive(Debug)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            message: message.into(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({ "error": self.message })
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status)
    }
}

pub struct Api {
    pub store: SymbolStore,
    profile: Option<ProfileFile>,
    root_libs: Option<LibList>,
    libs: Option<LibList>,
    quiet: bool,
    /// Modules whose symbol source was reported on stderr already.
    told: BTreeSet<(String, String)>,
}

impl Api {
    pub fn new(store: SymbolStore, profile: Option<ProfileFile>, quiet: bool) -> Api {
        Api {
            store,
            profile,
            root_libs: None,
            libs: None,
            quiet,
            told: BTreeSet::new(),
        }
    }

    /// The profile's libraries, parsed on first use and kept.
    /// The profile's lib entry for a module. The root's `libs` come first in a profile
    /// and are read on their own (a few KB); the full scan over every process, which on a
    /// big profile costs a pass over all of it, only when the module is not among them.
    pub fn lib(&mut self, debug_name: &str, breakpad_id: &str) -> Option<Lib> {
        if self.root_libs.is_none() {
            let root = match &self.profile {
                Some(p) if self.libs.is_none() => p.read_root_libs().unwrap_or_default(),
                _ => Vec::new(),
            };
            self.root_libs = Some(LibList::new(root));
        }
        if let Some(l) = self
            .root_libs
            .as_ref()
            .and_then(|r| r.find(debug_name, breakpad_id))
        {
            return Some(l.clone());
        }
        self.libs().find(debug_name, breakpad_id).cloned()
    }

    fn libs(&mut self) -> &LibList {
        if self.libs.is_none() {
            let libs = match &self.profile {
                None => Vec::new(),
                Some(p) => match p.read_libs() {
                    Ok(libs) => libs,
                    Err(e) => {
                        crate::elog!(
                            "warning: {e}; symbolicating without the profile's library hints"
                        );
                        Vec::new()
                    }
                },
            };
            let list = LibList::new(libs);
            if !self.quiet && self.profile.is_some() {
                crate::elog!(
                    "Found {} libraries with debug IDs in the profile.",
                    list.len()
                );
            }
            self.libs = Some(list);
        }
        self.libs.get_or_insert_with(LibList::default)
    }

    /// `handle` for the server loop: `None` when the answer waits for a download and
    /// `may_wait`; the loop parks the request and asks again when downloads progress.
    pub fn handle_or_wait(
        &mut self,
        path: &str,
        body: &[u8],
        may_wait: bool,
    ) -> Option<Result<Answer, ApiError>> {
        self.store.take_pending();
        let answer = self.handle(path, body);
        if self.store.take_pending() && may_wait {
            None
        } else {
            Some(answer)
        }
    }

    /// Reaps and starts downloads; the count of finished ones (it moves on progress).
    pub fn poll_downloads(&mut self) -> u64 {
        self.store.remote_mut().map_or(0, |r| {
            r.poll();
            r.finished
        })
    }

    /// Blocks until a download ends (`query`).
    pub fn wait_download(&mut self) {
        if let Some(r) = self.store.remote_mut() {
            r.wait_any();
        }
    }

    /// Stops downloads and removes their partial files.
    pub fn shutdown(&mut self) {
        if let Some(r) = self.store.remote_mut() {
            r.shutdown();
        }
    }

    /// Answers `POST <path>` with `body`: the JSON text of the answer.
    pub fn handle(&mut self, path: &str, body: &[u8]) -> Result<Answer, ApiError> {
        if path == "/symbolicate/v5" {
            let request: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
            let jobs = parse_symbolicate_request(&request)?;
            return Ok(self.symbolicate(&jobs));
        }
        self.handle_json(path, body)
            .map(|v| v.to_string().into_bytes().into())
    }

    fn handle_json(&mut self, path: &str, body: &[u8]) -> Result<Value, ApiError> {
        match path {
            "/source/v1" => {
                let request: Value = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
                let req = SourceRequest::parse(&request)?;
                Ok(match self.source(&req) {
                    Ok(v) => v,
                    // The front-end shows the message only on a 200.
                    Err(message) => json!({ "error": message }),
                })
            }
            "/asm/v1" => {
                let request: Value = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
                let req = asm::AsmRequest::parse(&request)?;
                // Failures to find the code are a 200 too (see /source/v1).
                Ok(self
                    .asm(&req)
                    .unwrap_or_else(|message| json!({ "error": message })))
            }
            _ => Err(ApiError {
                status: 404,
                message: format!("unknown API path {path}"),
            }),
        }
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
