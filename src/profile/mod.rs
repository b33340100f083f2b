//! The profile file: opened once at start (cheap: only its first bytes are read), its
//! library list parsed later, on the first request that needs it.

pub mod libs;
pub mod read;
pub mod rewrite;
pub mod scan;
pub mod wanted;

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::shared::library::Lib;
use read::Want;
pub use read::{ProcessInfo, hex_address};
use scan::Input;

#[derive(Debug)]
pub struct ProfileError {
    pub path: PathBuf,
    pub problem: String,
    /// The file is readable but not JSON: a usage error (exit 2), not a runtime one.
    pub not_a_profile: bool,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "profile {}: {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for ProfileError {}

#[derive(Debug, Clone)]
pub struct ProfileFile {
    pub path: PathBuf,
    pub gzipped: bool,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Fills `buf` as far as the reader gives (errors end it: the caller judges the bytes).
fn read_some(r: &mut dyn Read, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

/// A gzip reader whose errors say what they mean for a profile: flate2's "incomplete
/// deflate stream" is a file cut short (an interrupted download or copy).
struct GzipErrors<R>(R);

impl<R: Read> Read for GzipErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            let text = e.to_string();
            if e.kind() == io::ErrorKind::UnexpectedEof || text.contains("incomplete") {
                io::Error::new(
                    e.kind(),
                    "the gzip stream ended early (is the file truncated?)",
                )
            } else if text.contains("deflate") || e.kind() == io::ErrorKind::InvalidInput {
                io::Error::new(e.kind(), format!("the gzip stream is corrupt ({text})"))
            } else {
                e
            }
        })
    }
}

impl ProfileFile {
    /// Checks the file can be read and whether it is gzipped (by its magic bytes).
    pub fn open(path: &Path) -> Result<ProfileFile, ProfileError> {
        let err = |problem: String| ProfileError {
            path: path.to_path_buf(),
            problem,
            not_a_profile: false,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if !meta.is_file() {
            return Err(err("not a regular file".to_string()));
        }
        let mut f = crate::fs::open_regular(path).map_err(|e| err(e.to_string()))?;
        let mut magic = [0u8; 2];
        let mut n = 0;
        while n < 2 {
            match f.read(&mut magic[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(err(e.to_string())),
            }
        }
        if n == 0 {
            return Err(err("the file is empty".to_string()));
        }
        let profile = ProfileFile {
            path: path.to_path_buf(),
            gzipped: n == 2 && magic == GZIP_MAGIC,
        };
        // Say now, not on the first request, when the file is no JSON at all.
        let mut head = [0u8; 512];
        let got = read_some(&mut profile.reader()?, &mut head);
        let text = head[..got]
            .strip_prefix(b"\xef\xbb\xbf")
            .unwrap_or(&head[..got]);
        match text.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => Ok(profile),
            // `perf record`'s output: what to turn it into, as samply says.
            _ if text.starts_with(b"PERFILE2") => {
                let quoted = crate::log::shell_quote(&path.to_string_lossy()).into_owned();
                Err(ProfileError {
                    path: path.to_path_buf(),
                    problem: format!(
                        "a Linux perf recording (perf.data), not a profile: convert it with `samply import {quoted} --save-only -o profile.json.gz` and open profile.json.gz, or open the text of `perf script -i {quoted}` in the profiler directly"
                    ),
                    not_a_profile: true,
                })
            }
            _ => Err(ProfileError {
                path: path.to_path_buf(),
                problem: "not a profile: neither JSON (starting with '{') nor gzipped JSON"
                    .to_string(),
                not_a_profile: true,
            }),
        }
    }

    /// The folder holding the profile (relative lib paths are looked up there first).
    pub fn folder(&self) -> &Path {
        self.path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    }

    fn error(&self, problem: impl Into<String>) -> ProfileError {
        ProfileError {
            path: self.path.clone(),
            problem: problem.into(),
            not_a_profile: false,
        }
    }

    /// A reader of the decompressed JSON text.
    pub fn reader(&self) -> Result<Box<dyn Read>, ProfileError> {
        let f = crate::fs::open_regular(&self.path).map_err(|e| self.error(e.to_string()))?;
        let f = io::BufReader::with_capacity(1 << 16, f);
        Ok(if self.gzipped {
            Box::new(io::BufReader::with_capacity(
                1 << 16,
                GzipErrors(flate2::read::MultiGzDecoder::new(f)),
            ))
        } else {
            Box::new(f)
        })
    }

    fn read(&self, want: Want) -> Result<Vec<ProcessInfo>, ProfileError> {
        let mut processes = read::read(&mut Input::new(self.reader()?), want)
            .map_err(|e| self.error(format!("not a valid profile: {e}")))?;
        for p in &mut processes {
            libs::anchor_relative_paths(&mut p.libs, self.folder());
        }
        Ok(processes)
    }

    /// The root's `libs` only: the walk stops there (near the start of the file).
    pub fn read_root_libs(&self) -> Result<Vec<Lib>, ProfileError> {
        self.libs(Want::RootLibs)
    }

    /// Every `libs` entry of the profile: the root's, each `processes[]` entry's
    /// (recursively) and, for older processed profiles, each thread's.
    pub fn read_libs(&self) -> Result<Vec<Lib>, ProfileError> {
        self.libs(Want::Libs)
    }

    fn libs(&self, want: Want) -> Result<Vec<Lib>, ProfileError> {
        Ok(self.read(want)?.into_iter().flat_map(|p| p.libs).collect())
    }

    /// Every process with its libs and addresses (first pass of `symbolicate`).
    pub fn read_processes(&self) -> Result<Vec<ProcessInfo>, ProfileError> {
        self.read(Want::LibsAndAddresses)
    }
}
