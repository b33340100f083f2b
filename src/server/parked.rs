//! Requests that wait for downloads. The loop never sits in a download: such a request is
//! kept (tiny_http lets a `Request` be answered later), the loop serves others, and
//! answers it when its downloads are done (saved, failed or stalled), or after a long
//! backstop (then from what is there; the downloads go on for later requests).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use tiny_http::Request;

use super::{Server, error_response, json_answer};
use crate::api::{Handled, Parsed};

/// How often the loop polls downloads.
pub const TICK: Duration = Duration::from_millis(25);
/// A backstop only: a request waits as long as its downloads move (curl ends a stalled
/// one after 10 s without a byte, 5 s to connect), because the front-end asks once and
/// never again, and libxul's symbols take minutes on a slow connection.
pub const BUDGET: Duration = Duration::from_secs(600);

pub struct Waiting {
    request: Request,
    api_path: String,
    /// The request as parsed when it came (taken while it is asked again).
    parsed: Option<Parsed>,
    body_len: usize,
    since: Instant,
}

#[derive(Default)]
pub struct Parking {
    waiting: Vec<Waiting>,
    /// Downloads finished when the parked requests were last tried.
    seen: u64,
}

impl Parking {
    /// Whether no request waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

impl Server {
    pub(super) fn park(
        &mut self,
        request: Request,
        api_path: String,
        parsed: Parsed,
        body_len: usize,
    ) {
        self.parked.waiting.push(Waiting {
            request,
            api_path,
            parsed: Some(parsed),
            body_len,
            since: Instant::now(),
        });
    }

    /// Polls downloads; answers the parked requests they were waiting for, and those
    /// whose budget is spent.
    pub(super) fn answer_parked(&mut self) {
        let finished = self.api.poll_downloads();
        if self.parked.waiting.is_empty() {
            return;
        }
        let progress = finished != self.parked.seen;
        self.parked.seen = finished;
        let mut i = 0;
        while i < self.parked.waiting.len() {
            let w = &self.parked.waiting[i];
            let late = w.since.elapsed() >= BUDGET;
            if !progress && !late {
                i += 1;
                continue;
            }
            let path = w.api_path.clone();
            let Some(parsed) = self.parked.waiting[i].parsed.take() else {
                // Lost to a panic below: answered as such already.
                self.parked.waiting.swap_remove(i);
                continue;
            };
            let answer = catch_unwind(AssertUnwindSafe(|| self.api.handle_parsed(parsed, !late)));
            let response = match answer {
                Ok(Handled::WaitForDownloads(parsed)) => {
                    self.parked.waiting[i].parsed = Some(parsed);
                    i += 1;
                    continue;
                }
                Ok(Handled::Answer(Ok(answer))) => json_answer(200, answer),
                Ok(Handled::Answer(Err(e))) => error_response(&e),
                Err(payload) => super::http::panic_response(&*payload, &self.token),
            };
            let w = self.parked.waiting.swap_remove(i);
            let shown = format!("/…{path}");
            if !self.quiet {
                super::log_request(
                    &w.request,
                    &shown,
                    &response,
                    w.body_len,
                    w.since,
                    ", after downloads",
                );
            }
            super::send(w.request, response, &shown);
        }
    }
}
