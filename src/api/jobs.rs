//! The `/symbolicate/v5` request: its body read straight into jobs, with every rule of the
//! request and the errors naming the first wrong field, in this one reader (the server,
//! parked requests and `query` all come here through `Request::parse`; the `symbolicate`
//! mode reads profiles, not requests). Over half of its lines are the tests: one case per
//! rule, with its exact message.

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
mod tests {
    use super::*;

    /// Every rule and the order in which they are applied: each body's message, exactly
    /// (these are the messages of the tree-of-values reader this one replaced).
    #[test]
    fn request_errors_name_the_first_wrong_field() {
        let cases = [
            (
                r#"{not json"#,
                r#"invalid JSON: key must be a string at line 1 column 2"#,
            ),
            (r#"[1]"#, r#"the request must be a JSON object"#),
            (r#""x""#, r#"the request must be a JSON object"#),
            (r#"3"#, r#"the request must be a JSON object"#),
            (r#"null"#, r#"the request must be a JSON object"#),
            (r#"{"jobs": null}"#, r#"'jobs' must be an array"#),
            (r#"{"jobs": 3}"#, r#"'jobs' must be an array"#),
            (r#"{"jobs": {}}"#, r#"'jobs' must be an array"#),
            (r#"{"jobs": [3]}"#, r#"jobs[0]: a job must be an object"#),
            (
                r#"{"jobs": [{"stacks": []}, 4]}"#,
                r#"jobs[0]: missing 'memoryMap'"#,
            ),
            (
                r#"{"jobs": [{"memoryMap": [], "stacks": []}, 4]}"#,
                r#"jobs[1]: a job must be an object"#,
            ),
            (
                r#"{"jobs": [{"memoryMap": [], "stacks": []}, {"memoryMap": 1, "stacks": []}]}"#,
                r#"jobs[1].memoryMap: must be an array"#,
            ),
            (r#"{"stacks": []}"#, r#"request: missing 'memoryMap'"#),
            (
                r#"{"memoryMap": 5, "stacks": []}"#,
                r#"request.memoryMap: must be an array"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]]}"#,
                r#"request: missing 'stacks'"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": {}}"#,
                r#"request.stacks: must be an array"#,
            ),
            (
                r#"{"memoryMap": [["a","B0","x"]], "stacks": []}"#,
                r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": [["a"]], "stacks": []}"#,
                r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": [["a", 1]], "stacks": []}"#,
                r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": [[1, "B0"]], "stacks": []}"#,
                r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": ["a"], "stacks": []}"#,
                r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": [{"a": "b"}], "stacks": []}"#,
                r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"], null], "stacks": []}"#,
                r#"request.memoryMap[1]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [3]}"#,
                r#"request.stacks[0]: must be an array of frames"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[3]]}"#,
                r#"request.stacks[0][0]: must be [moduleIndex, moduleOffset]"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0]]]}"#,
                r#"request.stacks[0][0]: must be [moduleIndex, moduleOffset]"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 2, 3]]]}"#,
                r#"request.stacks[0][0]: must be [moduleIndex, moduleOffset]"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[1, 2]]]}"#,
                r#"request.stacks[0][0]: moduleIndex 1 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[-2, 2]]]}"#,
                r#"request.stacks[0][0]: moduleIndex -2 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, -2]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got -2"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 2.5]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got 2.5"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, -0]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got -0.0"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1e3]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got 1000.0"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "0x2"]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "0x2""#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, null]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got null"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, true]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got true"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, [1, {"k": "v"}]]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got [1,{"k":"v"}]"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, {"k": [1,2.0,"\u00e9"]}]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got {"k":[1,2.0,"é"]}"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 18446744073709551616]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got 1.8446744073709552e+19"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[9223372036854775808, 1]]]}"#,
                r#"request.stacks[0][0]: moduleIndex must be an integer"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[9223372036854775807, 1]]]}"#,
                r#"request.stacks[0][0]: moduleIndex 9223372036854775807 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[-9223372036854775808, 1]]]}"#,
                r#"request.stacks[0][0]: moduleIndex -9223372036854775808 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[["0", 1]]]}"#,
                r#"request.stacks[0][0]: moduleIndex must be an integer"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0.0, 1]]]}"#,
                r#"request.stacks[0][0]: moduleIndex must be an integer"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[null, 1]]]}"#,
                r#"request.stacks[0][0]: moduleIndex must be an integer"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[1, "x"]]]}"#,
                r#"request.stacks[0][0]: moduleIndex 1 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1], [0, 2]], [[0, 3], [5, "x"]]]}"#,
                r#"request.stacks[1][1]: moduleIndex 5 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1], [7, 2]], [[0, "y"]]]}"#,
                r#"request.stacks[0][1]: moduleIndex 7 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "y"]], [[7, 2]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "y""#,
            ),
            (
                r#"{"stacks": [[[0, "x"]]], "memoryMap": [["a","B0"]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "x""#,
            ),
            (
                r#"{"stacks": [[[3, 1]]], "memoryMap": [["a","B0"]]}"#,
                r#"request.stacks[0][0]: moduleIndex 3 is past the memoryMap (1 entries)"#,
            ),
            (
                r#"{"stacks": [[[0, "x"]]]}"#,
                r#"request: missing 'memoryMap'"#,
            ),
            (
                r#"{"stacks": [[[0, 1]]], "memoryMap": 3}"#,
                r#"request.memoryMap: must be an array"#,
            ),
            (
                r#"{"stacks": 3, "memoryMap": [["a",1]]}"#,
                r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "stacks": [[[0, "z"]]]}"#,
                r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "z""#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "memoryMap": []}"#,
                r#"request.stacks[0][0]: moduleIndex 0 is past the memoryMap (0 entries)"#,
            ),
            (
                r#"{"memoryMap": [], "stacks": []} x"#,
                r#"invalid JSON: trailing characters at line 1 column 33"#,
            ),
            (
                r#"{"memoryMap": [], "stacks": [[[0, 1]]]}"#,
                r#"request.stacks[0][0]: moduleIndex 0 is past the memoryMap (0 entries)"#,
            ),
            (
                r#"{"memoryMap": [["a","\ud800"]], "stacks": []}"#,
                r#"invalid JSON: unexpected end of hex escape at line 1 column 28"#,
            ),
            (
                r#"{"memoryMap": [{"x": "\ud800"}], "stacks": []}"#,
                r#"invalid JSON: unexpected end of hex escape at line 1 column 29"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "\ud800"]]]}"#,
                r#"invalid JSON: unexpected end of hex escape at line 1 column 52"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "jobs": 3}"#,
                r#"'jobs' must be an array"#,
            ),
            (
                r#"{"jobs": [{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "jobs": 3}], "jobs": [{"memoryMap": [], "stacks": [[[0, 1]]]}]}"#,
                r#"jobs[0].stacks[0][0]: moduleIndex 0 is past the memoryMap (0 entries)"#,
            ),
            (
                r#"{"jobs": [{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]]}], "jobs": null}"#,
                r#"'jobs' must be an array"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]]"#,
                r#"invalid JSON: EOF while parsing an object at line 1 column 48"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1"#,
                r#"invalid JSON: EOF while parsing a list at line 1 column 45"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]],}"#,
                r#"invalid JSON: trailing comma at line 1 column 50"#,
            ),
            (
                // A field that is not read is skipped, not parsed: the parser says this
                // where the tree's reader said "trailing comma".
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "x"]]], "more": [1,]}"#,
                r#"invalid JSON: expected value at line 1 column 64"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 01]]]}"#,
                r#"invalid JSON: invalid number at line 1 column 46"#,
            ),
        ];
        for (body, want) in cases {
            let got = parse_symbolicate_request(body.as_bytes())
                .map(|_| ())
                .unwrap_err();
            assert_eq!(got.message, want, "{body}");
            assert_eq!(got.status(), 400);
        }
        // Nested past the parser's limit in a wrong offset: the parser's own error.
        let deep = format!(
            r#"{{"memoryMap": [["a","B0"]], "stacks": [[[0, {}{}]]]}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        let got = parse_symbolicate_request(deep.as_bytes())
            .map(|_| ())
            .unwrap_err();
        assert!(
            got.message
                .starts_with("invalid JSON: recursion limit exceeded"),
            "{}",
            got.message
        );
    }

    #[test]
    fn requests_read_into_jobs() {
        let cases = [
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 18446744073709551615]]]}"#,
                r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 18446744073709551615)]] }]"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "z"]]], "stacks": [[[0, 1]]]}"#,
                r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 1)]] }]"#,
            ),
            (
                r#"{"memoryMap": [], "stacks": [[[-1, 1]]]}"#,
                r#"[Job { memory_map: [], keys: [], stacks: [[(None, 1)]] }]"#,
            ),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "x": "\ud800"}"#,
                r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 1)]] }]"#,
            ),
            (r#"{"memoryMap": 3, "stacks": 4, "jobs": []}"#, r#"[]"#),
            (
                r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 5], [-1, 7]], []]}"#,
                r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 5), (None, 7)], []] }]"#,
            ),
            (
                r#"{"jobs": [{"memoryMap": [["a","B0"],["b","C1"]], "stacks": [[[1, 2]]], "x": {}}]}"#,
                r#"[Job { memory_map: [("a", DebugId("B0")), ("b", DebugId("C1"))], keys: ["a/B0", "b/C1"], stacks: [[(Some(1), 2)]] }]"#,
            ),
            (
                r#"{"stacks": [[[0, 1]]], "memoryMap": [["a","B0"]], "memoryMap": [["b","C0"]]}"#,
                r#"[Job { memory_map: [("b", DebugId("C0"))], keys: ["b/C0"], stacks: [[(Some(0), 1)]] }]"#,
            ),
            (r#"{"jobs": []}"#, "[]"),
        ];
        for (body, want) in cases {
            let jobs = parse_symbolicate_request(body.as_bytes()).expect(body);
            assert_eq!(format!("{jobs:?}"), want, "{body}");
        }
    }
}
