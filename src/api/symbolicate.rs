//! `/symbolicate/v5`: the request's jobs, one ascending pass per module across them, and
//! the answer written straight to text.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use serde_json::{Value, json};

use super::{Api, ApiError};
use crate::jsonwrite::string;
use crate::resolve::{LoadError, Symbolized};
use crate::store::{LoadedModule, OffsetMap};

impl Api {
    pub(super) fn symbolicate(&mut self, jobs: &[Job]) -> Vec<u8> {
        // One sorted pass per module over every address of every job.
        let mut wanted: BTreeMap<(&str, &str), BTreeSet<u64>> = BTreeMap::new();
        for job in jobs {
            for stack in &job.stacks {
                for &(index, offset) in stack {
                    if let Some((name, id)) = index.map(|i| &job.memory_map[i]) {
                        wanted.entry((name, id)).or_default().insert(offset);
                    }
                }
            }
        }
        let mut answers: HashMap<(&str, &str), ModuleAnswer> = HashMap::new();
        for ((name, id), offsets) in wanted {
            let lib = self.lib(name, id);
            let answer = self.store.module(name, id, lib.as_ref());
            // Said once the answer is final: not while a download for it is still going on.
            let waiting = answer
                .as_ref()
                .is_err_and(|errors| errors.iter().any(|e| e.kind == "DownloadPending"));
            if !self.quiet && !waiting && self.told.insert((name.to_string(), id.to_string())) {
                match &answer {
                    Ok(module) => {
                        crate::elog!("{}", crate::hint::found(name, module, lib.as_ref()))
                    }
                    Err(errors) => {
                        crate::elog!("{}", crate::hint::missing(name, errors, lib.as_ref()))
                    }
                }
            }
            let answer = match answer {
                Ok(module) => {
                    let offsets: Vec<u64> = offsets.into_iter().collect();
                    match module.lookup_sorted(&offsets) {
                        Ok(results) => ModuleAnswer::Found {
                            module,
                            by_offset: offsets.into_iter().zip(results).collect(),
                        },
                        Err(e) => ModuleAnswer::Missing(vec![e]),
                    }
                }
                Err(errors) => ModuleAnswer::Missing(errors),
            };
            answers.insert((name, id), answer);
        }
        // Written straight to text: a tree of values for 100 000 frames with their inline
        // chains cost more time and memory than the lookups of a warm request.
        // Sized by frames, not stacks: the profiler may send one stack of 100 000 frames.
        let frames: usize = jobs.iter().flat_map(|j| &j.stacks).map(Vec::len).sum();
        let mut out = Vec::with_capacity(frames.saturating_add(jobs.len()).saturating_mul(256));
        out.extend_from_slice(b"{\"results\":[");
        for (i, job) in jobs.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_job(&mut out, job, &answers);
        }
        out.extend_from_slice(b"]}");
        out
    }
}

enum ModuleAnswer {
    Found {
        // Kept so the module outlives its answers even if the cache evicts it meanwhile.
        module: Rc<LoadedModule>,
        by_offset: OffsetMap<Option<Rc<Symbolized>>>,
    },
    Missing(Vec<LoadError>),
}

fn hex(out: &mut Vec<u8>, v: u64) {
    crate::jsonwrite::hex_string(out, v);
}

fn write_frame(
    out: &mut Vec<u8>,
    index: usize,
    offset: u64,
    module: Option<&str>,
    sym: Option<&Symbolized>,
) {
    out.extend_from_slice(b"{\"frame\":");
    crate::jsonwrite::uint(out, index as u64);
    out.extend_from_slice(b",\"module_offset\":");
    hex(out, offset);
    if let Some(module) = module {
        out.extend_from_slice(b",\"module\":");
        string(out, module);
    }
    if let Some(s) = sym {
        out.extend_from_slice(b",\"function\":");
        string(out, &s.function);
        out.extend_from_slice(b",\"function_offset\":");
        hex(out, s.function_offset);
        if let Some(size) = s.function_size {
            out.extend_from_slice(b",\"function_size\":");
            hex(out, size);
        }
        file_line(out, s.file.as_deref(), s.line);
        if !s.inlines.is_empty() {
            out.extend_from_slice(b",\"inlines\":[");
            for (k, i) in s.inlines.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                // The front-end needs a name for every frame.
                out.extend_from_slice(b"{\"function\":");
                string(out, i.function.as_deref().unwrap_or("??"));
                file_line(out, i.file.as_deref(), i.line);
                out.push(b'}');
            }
            out.push(b']');
        }
    }
    out.push(b'}');
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
        .map(|e| json!({ "name": e.kind, "message": e.message }))
        .collect::<Vec<_>>()
        .into()
}

fn write_job(out: &mut Vec<u8>, job: &Job, answers: &HashMap<(&str, &str), ModuleAnswer>) {
    let mut found: BTreeMap<String, bool> = BTreeMap::new();
    let mut errors: BTreeMap<String, Value> = BTreeMap::new();
    // found_modules/module_errors are filled on a module's first frame only: a key built
    // and inserted per frame was a tenth of a warm 100 000-frame answer.
    let mut noted = vec![false; job.memory_map.len()];
    out.extend_from_slice(b"{\"stacks\":[");
    for (s, stack) in job.stacks.iter().enumerate() {
        if s > 0 {
            out.push(b',');
        }
        out.push(b'[');
        for (i, &(index, offset)) in stack.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let Some(m) = index else {
                write_frame(out, i, offset, None, None);
                continue;
            };
            let (name, id) = &job.memory_map[m];
            let answer = answers.get(&(name.as_str(), id.as_str()));
            if !std::mem::replace(&mut noted[m], true) {
                // Once per module: whether it was found, and what went wrong with it.
                let key = format!("{name}/{id}");
                let (is_found, problems) = match answer {
                    Some(ModuleAnswer::Found { module, .. }) => (true, module.warnings()),
                    Some(ModuleAnswer::Missing(errs)) => (false, &errs[..]),
                    None => (false, &[][..]),
                };
                if !problems.is_empty() {
                    errors
                        .entry(key.clone())
                        .or_insert_with(|| errors_json(problems));
                }
                if answer.is_some() {
                    found.insert(key, is_found);
                }
            }
            let sym = match answer {
                Some(ModuleAnswer::Found { by_offset, .. }) => {
                    by_offset.get(&offset).and_then(Option::as_deref)
                }
                _ => None,
            };
            write_frame(out, i, offset, Some(name), sym);
        }
        out.push(b']');
    }
    out.extend_from_slice(b"],\"found_modules\":");
    let _ = serde_json::to_writer(&mut *out, &found);
    if !errors.is_empty() {
        out.extend_from_slice(b",\"module_errors\":");
        let _ = serde_json::to_writer(&mut *out, &errors);
    }
    out.push(b'}');
}

/// One job of a `/symbolicate/v5` request, checked.
#[derive(Debug)]
pub struct Job {
    pub memory_map: Vec<(String, String)>,
    /// (index into `memory_map`, or `None` for index -1; module offset)
    pub stacks: Vec<Vec<(Option<usize>, u64)>>,
}

/// `{"jobs": [...]}` or a bare job; every field checked, errors name the field.
pub fn parse_symbolicate_request(v: &Value) -> Result<Vec<Job>, ApiError> {
    let obj = v
        .as_object()
        .ok_or_else(|| ApiError::bad_request("the request must be a JSON object"))?;
    match obj.get("jobs") {
        Some(Value::Array(jobs)) => jobs
            .iter()
            .enumerate()
            .map(|(i, j)| parse_job(j, &format!("jobs[{i}]")))
            .collect(),
        Some(_) => Err(ApiError::bad_request("'jobs' must be an array")),
        None => Ok(vec![parse_job(v, "request")?]),
    }
}

fn parse_job(v: &Value, at: &str) -> Result<Job, ApiError> {
    let bad = |m: String| ApiError::bad_request(m);
    let obj = v
        .as_object()
        .ok_or_else(|| bad(format!("{at}: a job must be an object")))?;
    let map = obj
        .get("memoryMap")
        .ok_or_else(|| bad(format!("{at}: missing 'memoryMap'")))?
        .as_array()
        .ok_or_else(|| bad(format!("{at}.memoryMap: must be an array")))?;
    let mut memory_map = Vec::with_capacity(map.len());
    for (i, m) in map.iter().enumerate() {
        let pair = m.as_array().filter(|a| a.len() == 2);
        let (name, id) = match pair.map(|a| (a[0].as_str(), a[1].as_str())) {
            Some((Some(n), Some(id))) => (n, id),
            _ => {
                return Err(bad(format!(
                    "{at}.memoryMap[{i}]: must be [debugName, breakpadId] (two strings)"
                )));
            }
        };
        memory_map.push((name.to_string(), id.to_string()));
    }
    let stacks_v = obj
        .get("stacks")
        .ok_or_else(|| bad(format!("{at}: missing 'stacks'")))?
        .as_array()
        .ok_or_else(|| bad(format!("{at}.stacks: must be an array")))?;
    let mut stacks = Vec::with_capacity(stacks_v.len());
    for (s, stack) in stacks_v.iter().enumerate() {
        let frames = stack
            .as_array()
            .ok_or_else(|| bad(format!("{at}.stacks[{s}]: must be an array of frames")))?;
        let mut out = Vec::with_capacity(frames.len());
        for (f, frame) in frames.iter().enumerate() {
            let here = format!("{at}.stacks[{s}][{f}]");
            let pair = frame
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| bad(format!("{here}: must be [moduleIndex, moduleOffset]")))?;
            let index = pair[0]
                .as_i64()
                .ok_or_else(|| bad(format!("{here}: moduleIndex must be an integer")))?;
            let index = match index {
                -1 => None,
                i if i >= 0 && (i as u64) < memory_map.len() as u64 => Some(i as usize),
                i => {
                    return Err(bad(format!(
                        "{here}: moduleIndex {i} is past the memoryMap ({} entries)",
                        memory_map.len()
                    )));
                }
            };
            let offset = pair[1].as_u64().ok_or_else(|| {
                bad(format!(
                    "{here}: moduleOffset must be a non-negative integer, got {}",
                    pair[1]
                ))
            })?;
            out.push((index, offset));
        }
        stacks.push(out);
    }
    Ok(Job { memory_map, stacks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_errors_name_the_field() {
        let err = |v: Value| parse_symbolicate_request(&v).unwrap_err().message;
        assert!(err(json!({"stacks": []})).contains("memoryMap"));
        assert!(
            err(json!({"memoryMap": [["a","B0"]], "stacks": [[[1, 2]]]}))
                .contains("past the memoryMap")
        );
        assert!(
            err(json!({"memoryMap": [["a","B0"]], "stacks": [[[0, "0x2"]]]}))
                .contains("moduleOffset")
        );
        assert!(
            err(json!({"memoryMap": [["a","B0"]], "stacks": [[[0, -2]]]})).contains("moduleOffset")
        );
        assert!(err(json!([1])).contains("object"));
        let jobs = parse_symbolicate_request(
            &json!({"jobs": [{"memoryMap": [["a","B0"]], "stacks": [[[0, 5], [-1, 7]]]}]}),
        )
        .unwrap();
        assert_eq!(jobs[0].stacks[0], vec![(Some(0), 5), (None, 7)]);
    }
}
