//! The `/symbolicate/v5` request: its body read straight into jobs, with every rule of the
//! request and the errors naming the first wrong field, in this one reader (the server,
//! parked requests and `query` all come here through `Request::parse`; the `symbolicate`
//! mode reads profiles, not requests). Its tests (`jobs/tests.rs`) hold one case per rule,
//! with its exact message.

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::ApiError;
use crate::shared::debugid::DebugId;

/// One job of a `/symbolicate/v5` request, checked.
#[derive(Debug)]
pub struct Job {
    /// (debug name, debug ID)
    pub memory_map: Vec<(String, DebugId)>,
    /// Each module's key in `found_modules` and `module_errors`: `debugName/breakpadId`
    /// with the ID as the request wrote it (clients look their modules up by it).
    pub keys: Vec<String>,
    /// (index into `memory_map`, or `None` for index -1; module offset)
    pub stacks: Vec<Vec<(Option<usize>, u64)>>,
}

/// Reads a `/symbolicate/v5` body, `{"jobs": [...]}` or a bare job, straight into jobs:
/// no tree of values (which cost a warm request of 100 000 frames a fifth of its time).
/// Every field is checked, and the error names the first wrong one in the request's own
/// order (jobs in turn; in a job its memoryMap, then its stacks frame by frame), whatever
/// the order of the keys in the body: the whole body is read before any rule is applied.
/// A repeated key: the last one counts, as in a parsed object.
pub fn parse_symbolicate_request(body: &[u8]) -> Result<Vec<Job>, ApiError> {
    let top = serde_json::from_slice::<Top>(body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
    let Top::Object { jobs, job } = top else {
        return Err(ApiError::bad_request("the request must be a JSON object"));
    };
    match jobs {
        Some(Some(jobs)) => jobs
            .into_iter()
            .enumerate()
            .map(|(i, job)| {
                let at = || format!("jobs[{i}]");
                job.ok_or_else(|| bad(format!("{}: a job must be an object", at())))?
                    .check(at)
            })
            .collect(),
        Some(None) => Err(bad("'jobs' must be an array".into())),
        None => Ok(vec![job.check(|| "request".to_string())?]),
    }
}

fn bad(message: String) -> ApiError {
    ApiError::bad_request(message)
}

/// A job's fields as read; `None`: missing (or a field of the wrong kind, within).
#[derive(Default)]
struct JobFields {
    memory_map: Option<Option<MemoryMap>>,
    stacks: Option<Option<Stacks>>,
}

/// A memoryMap as read: its entries up to the first wrong one.
#[derive(Default)]
struct MemoryMap {
    entries: Vec<(String, DebugId)>,
    keys: Vec<String>,
    /// The first entry that is not two strings.
    wrong: Option<usize>,
}

/// A job's stacks as read: every frame, and the first wrong one (whose place holds
/// `(None, 0)`). A moduleIndex is checked against the memoryMap once both are read.
#[derive(Default)]
struct Stacks {
    frames: Vec<Vec<(Option<usize>, u64)>>,
    wrong: Option<(usize, usize, WrongFrame)>,
}

/// What is wrong with a stack (`NotFrames`, at its frame 0) or a frame.
enum WrongFrame {
    NotFrames,
    Shape,
    IndexNotInteger,
    /// Past any memoryMap (below -1, or beyond `usize`).
    Index(i64),
    /// The offset, with the index (which is checked first).
    Offset {
        index: i64,
        got: Box<Value>,
    },
}

impl JobFields {
    /// The job, or the error of its first wrong field; `at()` names the job.
    fn check(self, at: impl Fn() -> String) -> Result<Job, ApiError> {
        let map = self
            .memory_map
            .ok_or_else(|| bad(format!("{}: missing 'memoryMap'", at())))?
            .ok_or_else(|| bad(format!("{}.memoryMap: must be an array", at())))?;
        if let Some(i) = map.wrong {
            return Err(bad(format!(
                "{}.memoryMap[{i}]: must be [debugName, breakpadId] (two strings)",
                at()
            )));
        }
        let stacks = self
            .stacks
            .ok_or_else(|| bad(format!("{}: missing 'stacks'", at())))?
            .ok_or_else(|| bad(format!("{}.stacks: must be an array", at())))?;
        let entries = map.entries.len();
        let Stacks { frames, wrong } = stacks;
        // The first index past the memoryMap, and the first frame wrong otherwise: the
        // error is the one that comes first.
        let past = frames.iter().enumerate().find_map(|(s, stack)| {
            let f = stack
                .iter()
                .position(|&(i, _)| i.is_some_and(|i| i >= entries))?;
            Some((s, f, WrongFrame::Index(stack[f].0? as i64)))
        });
        let (s, f, wrong) = match (past, wrong) {
            (Some(p), Some(w)) => std::cmp::min_by_key(p, w, |&(s, f, _)| (s, f)),
            (p, w) => match p.or(w) {
                Some(first) => first,
                None => {
                    return Ok(Job {
                        memory_map: map.entries,
                        keys: map.keys,
                        stacks: frames,
                    });
                }
            },
        };
        // Frames are named only when wrong: a string per frame was a tenth of a warm request.
        let here = format!("{}.stacks[{s}][{f}]", at());
        let past = |index: i64| {
            format!("{here}: moduleIndex {index} is past the memoryMap ({entries} entries)")
        };
        Err(bad(match wrong {
            WrongFrame::NotFrames => format!("{}.stacks[{s}]: must be an array of frames", at()),
            WrongFrame::Shape => format!("{here}: must be [moduleIndex, moduleOffset]"),
            WrongFrame::IndexNotInteger => format!("{here}: moduleIndex must be an integer"),
            WrongFrame::Index(index) => past(index),
            WrongFrame::Offset { index, .. } if module_index(index, entries).is_none() => {
                past(index)
            }
            WrongFrame::Offset { got, .. } => {
                format!("{here}: moduleOffset must be a non-negative integer, got {got}")
            }
        }))
    }
}

/// A frame's moduleIndex: -1 for none, else an entry of a memoryMap of `entries`;
/// `None` when it is neither.
fn module_index(index: i64, entries: usize) -> Option<Option<usize>> {
    match index {
        -1 => Some(None),
        i if i >= 0 && (i as u64) < entries as u64 => Some(Some(i as usize)),
        _ => None,
    }
}

/// The body's top: `Object` holds `jobs` (`Some(None)`: not an array; a job `None`: not
/// an object) and the fields of a bare job.
enum Top {
    NotObject,
    Object {
        jobs: Option<Option<Vec<Option<JobFields>>>>,
        job: JobFields,
    },
}

// The readers: one per place in the request, each taking the kind of JSON value that
// belongs there. A value of another kind is read whole as a tree (on this path only, which
// ends in an error), so that a body the JSON parser rejects is rejected wherever it is
// wrong, with the parser's own message; what it is does not matter past that, except for
// a moduleOffset, whose message shows it.

/// What a reader does with each kind of JSON value.
trait Reader<'de>: Sized {
    type Out;
    /// A value of a kind it does not take.
    fn wrong(self, got: Value) -> Self::Out;
    fn uint(self, v: u64) -> Self::Out {
        self.wrong(v.into())
    }
    /// A negative integer (the parser hands the others to `uint`).
    fn int(self, v: i64) -> Self::Out {
        self.wrong(v.into())
    }
    fn str(self, v: &str) -> Self::Out {
        self.wrong(v.into())
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error> {
        Ok(self.wrong(Value::deserialize(SeqAccessDeserializer::new(seq))?))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        Ok(self.wrong(Value::deserialize(MapAccessDeserializer::new(map))?))
    }
}

/// A reader, as what serde drives.
struct Read<R>(R);

impl<'de, R: Reader<'de>> DeserializeSeed<'de> for Read<R> {
    type Value = R::Out;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<R::Out, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, R: Reader<'de>> Visitor<'de> for Read<R> {
    type Value = R::Out;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a symbolication request")
    }
    fn visit_bool<E>(self, v: bool) -> Result<R::Out, E> {
        Ok(self.0.wrong(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<R::Out, E> {
        Ok(self.0.int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<R::Out, E> {
        Ok(self.0.uint(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<R::Out, E> {
        Ok(self.0.wrong(v.into()))
    }
    fn visit_str<E>(self, v: &str) -> Result<R::Out, E> {
        Ok(self.0.str(v))
    }
    fn visit_unit<E>(self) -> Result<R::Out, E> {
        Ok(self.0.wrong(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<R::Out, A::Error> {
        self.0.seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<R::Out, A::Error> {
        self.0.map(map)
    }
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Top, D::Error> {
        Read(TopReader).deserialize(d)
    }
}

struct TopReader;

impl<'de> Reader<'de> for TopReader {
    type Out = Top;
    fn wrong(self, _: Value) -> Top {
        Top::NotObject
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut jobs = None;
        let mut job = JobFields::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "jobs" {
                jobs = Some(map.next_value_seed(Read(JobsReader))?);
            } else {
                job.read(&key, &mut map)?;
            }
        }
        Ok(Top::Object { jobs, job })
    }
}

impl JobFields {
    /// Reads the value of `key` if it is a field of a job.
    fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "memoryMap" => self.memory_map = Some(map.next_value_seed(Read(MapReader))?),
            "stacks" => self.stacks = Some(map.next_value_seed(Read(StacksReader))?),
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct JobsReader;

impl<'de> Reader<'de> for JobsReader {
    type Out = Option<Vec<Option<JobFields>>>;
    fn wrong(self, _: Value) -> Self::Out {
        None
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut jobs = Vec::new();
        while let Some(job) = seq.next_element_seed(Read(JobReader))? {
            jobs.push(job);
        }
        Ok(Some(jobs))
    }
}

/// A job of `jobs` (whose own `jobs` is no field).
struct JobReader;

impl<'de> Reader<'de> for JobReader {
    type Out = Option<JobFields>;
    fn wrong(self, _: Value) -> Self::Out {
        None
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Out, A::Error> {
        let mut job = JobFields::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            job.read(&key, &mut map)?;
        }
        Ok(Some(job))
    }
}

struct MapReader;

impl<'de> Reader<'de> for MapReader {
    type Out = Option<MemoryMap>;
    fn wrong(self, _: Value) -> Self::Out {
        None
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut map = MemoryMap::default();
        let mut i = 0;
        while let Some(entry) = seq.next_element_seed(Read(EntryReader))? {
            match entry {
                Some((name, id)) if map.wrong.is_none() => {
                    map.keys.push(format!("{name}/{id}"));
                    map.entries.push((name, DebugId::new(&id)));
                }
                Some(_) => {}
                None => {
                    map.wrong.get_or_insert(i);
                }
            }
            i += 1;
        }
        Ok(Some(map))
    }
}

/// `[debugName, breakpadId]`.
struct EntryReader;

impl<'de> Reader<'de> for EntryReader {
    type Out = Option<(String, String)>;
    fn wrong(self, _: Value) -> Self::Out {
        None
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut read = [None, None];
        let mut n = 0;
        while let Some(s) = seq.next_element_seed(Read(StringReader))? {
            if let Some(slot) = read.get_mut(n) {
                *slot = s;
            }
            n += 1;
        }
        Ok(match read {
            [Some(name), Some(id)] if n == 2 => Some((name, id)),
            _ => None,
        })
    }
}

struct StringReader;

impl<'de> Reader<'de> for StringReader {
    type Out = Option<String>;
    fn wrong(self, _: Value) -> Self::Out {
        None
    }
    fn str(self, v: &str) -> Self::Out {
        Some(v.to_string())
    }
}

struct StacksReader;

impl<'de> Reader<'de> for StacksReader {
    type Out = Option<Stacks>;
    fn wrong(self, _: Value) -> Self::Out {
        None
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut stacks = Stacks::default();
        while let Some(frames) = seq.next_element_seed(Read(StackReader {
            s: stacks.frames.len(),
            wrong: &mut stacks.wrong,
        }))? {
            stacks.frames.push(frames);
        }
        Ok(Some(stacks))
    }
}

/// Stack `s`, its first wrong frame told to `wrong` (if none was before).
struct StackReader<'w> {
    s: usize,
    wrong: &'w mut Option<(usize, usize, WrongFrame)>,
}

impl<'de> Reader<'de> for StackReader<'_> {
    type Out = Vec<(Option<usize>, u64)>;
    fn wrong(self, _: Value) -> Self::Out {
        self.wrong.get_or_insert((self.s, 0, WrongFrame::NotFrames));
        Vec::new()
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut frames = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(frame) = seq.next_element_seed(Read(FrameReader))? {
            match frame {
                Ok(frame) => frames.push(frame),
                Err(w) => {
                    self.wrong.get_or_insert((self.s, frames.len(), w));
                    frames.push((None, 0));
                }
            }
        }
        Ok(frames)
    }
}

/// `[moduleIndex, moduleOffset]`: the index -1 (none) or an index to check against the
/// memoryMap, and the offset.
struct FrameReader;

impl<'de> Reader<'de> for FrameReader {
    type Out = Result<(Option<usize>, u64), WrongFrame>;
    fn wrong(self, _: Value) -> Self::Out {
        Err(WrongFrame::Shape)
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let index = seq.next_element_seed(Read(IndexReader))?;
        let offset = match index {
            Some(_) => seq.next_element_seed(Read(OffsetReader))?,
            None => None,
        };
        let (Some(index), Some(offset)) = (index, offset) else {
            return Ok(Err(WrongFrame::Shape));
        };
        if seq.next_element::<Value>()?.is_some() {
            while seq.next_element::<Value>()?.is_some() {}
            return Ok(Err(WrongFrame::Shape));
        }
        let index = index.ok_or(WrongFrame::IndexNotInteger);
        Ok(index.and_then(|index| {
            let checked = match index {
                -1 => None,
                i => Some(usize::try_from(i).map_err(|_| WrongFrame::Index(i))?),
            };
            let offset = offset.map_err(|got| WrongFrame::Offset { index, got })?;
            Ok((checked, offset))
        }))
    }
}

/// An integer in i64 (`None`: anything else).
struct IndexReader;

impl<'de> Reader<'de> for IndexReader {
    type Out = Option<i64>;
    fn wrong(self, _: Value) -> Self::Out {
        None
    }
    fn uint(self, v: u64) -> Self::Out {
        i64::try_from(v).ok()
    }
    fn int(self, v: i64) -> Self::Out {
        Some(v)
    }
}

/// An integer in u64, or what was there.
struct OffsetReader;

impl<'de> Reader<'de> for OffsetReader {
    type Out = Result<u64, Box<Value>>;
    fn wrong(self, got: Value) -> Self::Out {
        Err(Box::new(got))
    }
    fn uint(self, v: u64) -> Self::Out {
        Ok(v)
    }
}

#[cfg(test)]
mod tests;
