//! `/symbolicate/v5`: the request's jobs, one ascending pass per module across them, and
//! the answer written straight to text.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use super::again::{Outcome, Resolved};
use super::jobs::Job;
use super::{Answer, Api};
use crate::jsonwrite::{hex_string, string};
use crate::resolve::{LoadError, Symbolized};
use crate::shared::debugid::DebugId;
use crate::store::{Answered, ModuleState};

impl Api {
    /// The answer, and how its modules resolved (`None` if one of them is not final).
    pub(super) fn symbolicate(&mut self, jobs: &[Job]) -> (Answer, Option<Resolved>) {
        // One sorted pass per module over every address of every job; each frame
        // numbered in request order, to find its answer's place when written.
        let mut wanted: BTreeMap<(&str, &DebugId), Vec<(u64, usize)>> = BTreeMap::new();
        let mut frames = 0usize;
        for job in jobs {
            for stack in &job.stacks {
                for &(index, offset) in stack {
                    if let Some((name, id)) = index.map(|i| &job.memory_map[i]) {
                        wanted.entry((name, id)).or_default().push((offset, frames));
                    }
                    frames += 1;
                }
            }
        }
        let mut places = vec![Answered::NOTHING; frames];
        let mut answers: HashMap<(&str, &DebugId), ModuleAnswer> = HashMap::new();
        let mut resolved = Some(Vec::with_capacity(wanted.len()));
        for ((name, id), mut asked) in wanted {
            asked.sort_unstable();
            let mut offsets: Vec<u64> = asked.iter().map(|&(o, _)| o).collect();
            offsets.dedup();
            let lib = self.lib(name, id).known();
            if let Some(idle) = &mut self.idle {
                idle.take_over(name, id);
            }
            let state = self.store.module(name, id, lib.as_ref());
            // Said once the answer is final: not while a download for it is still going on.
            let waiting = matches!(state, ModuleState::Pending(_));
            resolved = resolved.and_then(|mut r: Resolved| {
                r.push(((name.to_string(), id.clone()), Outcome::of(&state)?));
                Some(r)
            });
            let answer = state.now(name, id);
            if !self.quiet && !waiting && self.told.insert((name.to_string(), id.clone())) {
                let verbose = self.store.verbose();
                let line = self.advisor.report(name, &answer, lib.as_ref(), verbose);
                crate::log::elog!("{line}");
            }
            let answer = match answer {
                Ok(module) => match module.places_sorted(&offsets, encode) {
                    Ok(found) => {
                        // `asked` and `offsets` ascend together: one walk.
                        let mut k = 0;
                        for &(offset, frame) in &asked {
                            while offsets[k] != offset {
                                k += 1;
                            }
                            places[frame] = found[k];
                        }
                        // Only the answer texts are kept past here, not the module: a
                        // request naming many modules holds one parsed module at a time
                        // beyond what the cache keeps (20 modules of 200 MB of names
                        // each were all held until the answer was written).
                        ModuleAnswer::Found {
                            texts: module.texts(),
                            warnings: module.warnings().to_vec(),
                        }
                    }
                    Err(e) => ModuleAnswer::Missing(vec![e]),
                },
                Err(errors) => ModuleAnswer::Missing(errors),
            };
            answers.insert((name, id), answer);
        }
        // Written straight to text, each frame's remembered text spliced in, not copied: a
        // tree of values for 100 000 frames with their inline chains cost more than the
        // lookups of a warm request. About 64 bytes per frame besides the pieces.
        let pieces = places
            .iter()
            .filter(|p| p.own.found())
            .map(|p| p.parts().iter().filter(|p| p.found()).count())
            .sum();
        let mut answer =
            Answer::with_capacity(frames.saturating_add(jobs.len()).saturating_mul(72), pieces);
        answer.text().extend_from_slice(b"{\"results\":[");
        let mut places = &places[..];
        for (i, job) in jobs.iter().enumerate() {
            if i > 0 {
                answer.text().push(b',');
            }
            let (these, rest) = places.split_at(job.stacks.iter().map(Vec::len).sum());
            write_job(&mut answer, job, these, &answers);
            places = rest;
        }
        answer.text().extend_from_slice(b"]}");
        (answer, resolved)
    }
}

enum ModuleAnswer {
    // The module's answer texts (shared, not copied) and its warnings: its answers stay
    // even if the cache evicts the module meanwhile.
    Found {
        texts: Vec<Arc<Vec<u8>>>,
        warnings: Vec<LoadError>,
    },
    Missing(Vec<LoadError>),
}

/// A frame's answer after its `module`, in three parts: what every address of its
/// function shares (`"function"`, `"function_size"`, `"file"`), what is its own
/// (`"function_offset"`, `"line"`), and `"inlines"`, which frames of one function mostly
/// share. Returns where the second and the third part begin. (Keys are in no particular
/// order in JSON; this one keeps the shared parts whole.)
pub(super) fn encode(s: &Symbolized, out: &mut Vec<u8>) -> (usize, usize) {
    out.extend_from_slice(b",\"function\":");
    string(out, &s.function);
    if let Some(size) = s.function_size {
        out.extend_from_slice(b",\"function_size\":");
        hex_string(out, size);
    }
    file_line(out, s.file.as_deref(), None);
    let head = out.len();
    out.extend_from_slice(b",\"function_offset\":");
    hex_string(out, s.function_offset);
    file_line(out, None, s.line);
    let own = out.len();
    if !s.inlines.is_empty() {
        out.extend_from_slice(b",\"inlines\":[");
        for (k, i) in s.inlines.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            // An unknown name is left out: the front-end then shows its own placeholder
            // with the offset and inline depth, more useful than `??`.
            // Each field is written with a leading comma; the first one's is taken back.
            let open = out.len();
            out.push(b'{');
            if let Some(f) = i.function.as_deref() {
                out.extend_from_slice(b",\"function\":");
                string(out, f);
            }
            file_line(out, i.file.as_deref(), i.line);
            if out.get(open + 1) == Some(&b',') {
                out.remove(open + 1);
            }
            out.push(b'}');
        }
        out.push(b']');
    }
    (head, own)
}

/// `file` and `line` when known: never `null`, which the front-end rejects.
fn file_line(out: &mut Vec<u8>, file: Option<&str>, line: Option<u32>) {
    if let Some(file) = file {
        out.extend_from_slice(b",\"file\":");
        string(out, file);
    }
    if let Some(line) = line {
        out.extend_from_slice(b",\"line\":");
        crate::jsonwrite::uint(out, u64::from(line));
    }
}

fn errors_json(errors: &[LoadError]) -> Value {
    errors
        .iter()
        .map(|e| json!({ "name": e.kind.name(), "message": e.message }))
        .collect::<Vec<_>>()
        .into()
}

/// A memoryMap entry as a job's frames write it.
struct Entry<'a> {
    texts: Option<&'a [Arc<Vec<u8>>]>,
    /// `,"module":"…"`, escaped once, not per frame.
    prefix: Vec<u8>,
    /// Its key in `found_modules` and `module_errors`.
    key: String,
    /// `None`: not asked for (no frame of this module in any job).
    is_found: Option<bool>,
    problems: &'a [LoadError],
    /// Whether a frame of the job used it (only those are reported).
    noted: bool,
    /// The answer's slot of the module's texts, once shared.
    slot: Option<u32>,
}

/// `places`: where the answer of each of the job's frames is, in order.
fn write_job(
    answer: &mut Answer,
    job: &Job,
    places: &[Answered],
    answers: &HashMap<(&str, &DebugId), ModuleAnswer>,
) {
    let mut places = places.iter();
    let mut found: BTreeMap<String, bool> = BTreeMap::new();
    let mut errors: BTreeMap<String, Value> = BTreeMap::new();
    let mut modules: Vec<Entry> = Vec::with_capacity(job.memory_map.len());
    for ((name, id), key) in job.memory_map.iter().zip(&job.keys) {
        let answer = answers.get(&(name.as_str(), id));
        let (module, is_found, problems) = match answer {
            Some(ModuleAnswer::Found { texts, warnings }) => {
                (Some(&texts[..]), Some(true), &warnings[..])
            }
            Some(ModuleAnswer::Missing(errs)) => (None, Some(false), &errs[..]),
            None => (None, None, &[][..]),
        };
        let mut prefix = b",\"module\":".to_vec();
        string(&mut prefix, name);
        modules.push(Entry {
            texts: module,
            prefix,
            // The key repeats the request's ID as it was written.
            key: key.clone(),
            is_found,
            problems,
            noted: false,
            slot: None,
        });
    }
    answer.text().extend_from_slice(b"{\"stacks\":[");
    for (s, stack) in job.stacks.iter().enumerate() {
        let out = answer.text();
        if s > 0 {
            out.push(b',');
        }
        out.push(b'[');
        for (i, &(index, offset)) in stack.iter().enumerate() {
            let place = places.next().copied().unwrap_or(Answered::NOTHING);
            let out = answer.text();
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"frame\":");
            crate::jsonwrite::uint(out, i as u64);
            out.extend_from_slice(b",\"module_offset\":");
            hex_string(out, offset);
            if let Some(m) = index {
                let e = &mut modules[m];
                out.extend_from_slice(&e.prefix);
                if let Some(texts) = e.texts
                    && place.own.found()
                {
                    // The module's texts are shared once per job, when first needed.
                    let base = *e.slot.get_or_insert_with(|| answer.share(texts.to_vec()));
                    for p in place.parts() {
                        if p.found() {
                            answer.splice(base + p.chunk, p.start, p.len);
                        }
                    }
                }
                // Only modules the job's frames use are reported, each once.
                if !std::mem::replace(&mut e.noted, true) {
                    if !e.problems.is_empty() {
                        errors
                            .entry(e.key.clone())
                            .or_insert_with(|| errors_json(e.problems));
                    }
                    if let Some(is_found) = e.is_found {
                        found.insert(e.key.clone(), is_found);
                    }
                }
            }
            answer.text().push(b'}');
        }
        answer.text().push(b']');
    }
    let out = answer.text();
    out.extend_from_slice(b"],\"found_modules\":");
    let _ = serde_json::to_writer(&mut *out, &found);
    if !errors.is_empty() {
        out.extend_from_slice(b",\"module_errors\":");
        let _ = serde_json::to_writer(&mut *out, &errors);
    }
    out.push(b'}');
}

/// The modules whose addresses `jobs` ask for (each once).
pub(super) fn modules(jobs: &[Job]) -> Vec<(&str, &DebugId)> {
    let mut out: Vec<(&str, &DebugId)> = jobs
        .iter()
        .flat_map(|job| {
            job.stacks
                .iter()
                .flatten()
                .filter_map(|&(index, _)| index.map(|i| &job.memory_map[i]))
                .map(|(name, id)| (name.as_str(), id))
        })
        .collect();
    crate::coldsort::sort_by(&mut out, Ord::cmp);
    out.dedup();
    out
}
