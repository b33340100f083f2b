//! The library list: what a profile says about each loaded module, used as hints for
//! finding its debug information. [`Lib`] itself is a shared type (the store and the
//! remote sources take it as input); reading it from the profile's JSON is here.

use serde_json::Value;

use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;

fn nonempty_str(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Lib {
    /// Reads one entry of a `libs` array; entries without a debug name and ID are of no
    /// use for symbolication and give `None`.
    pub fn from_json(v: &Value) -> Option<Lib> {
        let debug_name = nonempty_str(v, "debugName").or_else(|| nonempty_str(v, "name"))?;
        let breakpad_id = DebugId::from(nonempty_str(v, "breakpadId")?);
        Some(
            Lib {
                debug_name,
                breakpad_id,
                name: nonempty_str(v, "name"),
                path: nonempty_str(v, "path"),
                debug_path: nonempty_str(v, "debugPath"),
                code_id: nonempty_str(v, "codeId"),
                arch: nonempty_str(v, "arch"),
                start: v.get("start").and_then(Value::as_u64),
                end: v.get("end").and_then(Value::as_u64),
                offset: v.get("offset").and_then(Value::as_u64).unwrap_or(0),
                refused: Vec::new(),
                relative: false,
            }
            .screened(),
        )
    }

    /// Moves the paths that must not be looked at to `refused`.
    fn screened(mut self) -> Lib {
        for p in [&mut self.path, &mut self.debug_path] {
            // A relative path is looked up from the current folder too.
            let refused = p.as_deref().and_then(|p| {
                crate::shared::pathname::refused_from_outside(p).or_else(|| {
                    let here = std::env::current_dir().ok()?.join(p);
                    crate::shared::pathname::refused_from_outside(&here.to_string_lossy())
                })
            });
            if let Some(why) = refused {
                let path = p.take().unwrap_or_default();
                self.refused.push(format!(
                    "{path} (a path from the profile): not opened, {why}"
                ));
            }
        }
        self
    }
}

/// Relative `path`/`debugPath` entries are looked up beside the profile first (a profile
/// moved with its binaries), then in the current folder, as given. A lib with a relative
/// path, or an absolute one into the profile's own folder, came with the profile
/// ([`Lib::relative`]).
pub fn anchor_relative_paths(libs: &mut [Lib], profile_dir: &std::path::Path) {
    // Both sides canonical: `/home/u/Downloads/./libevil.so` or a symlinked folder is
    // still beside the profile.
    let folder = profile_dir.canonicalize().ok();
    // Libs share a few folders: each is canonicalized once, not once per lib (a profile
    // may list 200 000 libs).
    let mut seen: std::collections::HashMap<std::path::PathBuf, bool> = Default::default();
    let mut inside = |p: &std::path::Path| {
        let (Some(f), Some(dir)) = (folder.as_ref(), p.parent()) else {
            return false;
        };
        *seen
            .entry(dir.to_path_buf())
            .or_insert_with(|| dir.canonicalize().is_ok_and(|d| d.starts_with(f)))
    };
    for lib in libs {
        let Lib {
            path,
            debug_path,
            relative,
            ..
        } = lib;
        for p in [path, debug_path].into_iter().flatten() {
            let rel = std::path::Path::new(p.as_str());
            if rel.is_relative() {
                *relative = true;
                let beside = profile_dir.join(rel);
                // `..` may climb from the profile's folder into /net.
                if crate::shared::pathname::refused_from_outside(&beside.to_string_lossy())
                    .is_none()
                    && beside.exists()
                {
                    *p = beside.to_string_lossy().into_owned();
                }
            } else if inside(rel) {
                *relative = true;
            }
        }
    }
}

/// Every distinct library of a profile (the root's and each subprocess's), indexed by
/// (debug name, debug ID): duplicates are found and modules looked up in
/// O(1) each, so 100 000 libs cost a pass, not 10^10 comparisons.
#[derive(Debug, Default)]
pub struct LibList {
    libs: Vec<Lib>,
    index: std::collections::HashMap<(String, DebugId), usize>,
}

impl LibList {
    pub fn new(all: Vec<Lib>) -> LibList {
        let mut list = LibList::default();
        for lib in all {
            let key = (lib.debug_name.clone(), lib.breakpad_id.clone());
            if let std::collections::hash_map::Entry::Vacant(e) = list.index.entry(key) {
                e.insert(list.libs.len());
                list.libs.push(lib);
            }
        }
        list
    }

    pub fn find(&self, debug_name: &str, breakpad_id: &DebugId) -> Option<&Lib> {
        let key = (debug_name.to_string(), breakpad_id.clone());
        self.index.get(&key).map(|&i| &self.libs[i])
    }

    pub fn len(&self) -> usize {
        self.libs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_dropped_and_ids_match_in_any_case() {
        let lib = |n: &str, id: &str, p: &str| Lib {
            debug_name: n.into(),
            breakpad_id: id.into(),
            path: Some(p.into()),
            ..Default::default()
        };
        let list = LibList::new(vec![
            lib("a", "ab0", "/first"),
            lib("a", "AB0", "/second"),
            lib("b", "AB0", "/b"),
        ]);
        assert_eq!(list.len(), 2);
        assert_eq!(
            list.find("a", &"AB0".into()).unwrap().path.as_deref(),
            Some("/first")
        );
        assert_eq!(
            list.find("b", &"ab0".into()).unwrap().path.as_deref(),
            Some("/b")
        );
        assert!(list.find("c", &"AB0".into()).is_none());
    }
}
