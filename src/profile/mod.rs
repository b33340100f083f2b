//! The profile file: opened once at start (cheap: only its first bytes are read), its
//! library list parsed later, on the first request that needs it.

pub mod libs;
pub mod read;
pub mod rewrite;
pub mod scan;

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use libs::Lib;
use read::Want;
pub use read::{ProcessInfo, hex_address};
use scan::Input;

#[derive(Debug)]
pub struct ProfileError {
    pub path: PathBuf,
    pub problem: String,
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

impl ProfileFile {
    /// Checks the file can be read and whether it is gzipped (by its magic bytes).
    pub fn open(path: &Path) -> Result<ProfileFile, ProfileError> {
        let err = |problem: String| ProfileError {
            path: path.to_path_buf(),
            problem,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if !meta.is_file() {
            return Err(err("not a regular file".to_string()));
        }
        let mut f = File::open(path).map_err(|e| err(e.to_string()))?;
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
        Ok(ProfileFile {
            path: path.to_path_buf(),
            gzipped: n == 2 && magic == GZIP_MAGIC,
        })
    }

    fn error(&self, problem: impl Into<String>) -> ProfileError {
        ProfileError {
            path: self.path.clone(),
            problem: problem.into(),
        }
    }

    /// A reader of the decompressed JSON text.
    pub fn reader(&self) -> Result<Box<dyn Read>, ProfileError> {
        let f = File::open(&self.path).map_err(|e| self.error(e.to_string()))?;
        let f = io::BufReader::with_capacity(1 << 16, f);
        Ok(if self.gzipped {
            Box::new(io::BufReader::with_capacity(
                1 << 16,
                flate2::read::MultiGzDecoder::new(f),
            ))
        } else {
            Box::new(f)
        })
    }

    fn read(&self, want: Want) -> Result<Vec<ProcessInfo>, ProfileError> {
        read::read(&mut Input::new(self.reader()?), want)
            .map_err(|e| self.error(format!("not a valid profile: {e}")))
    }

    /// The root's `libs` only: the walk stops there (near the start of the file).
    pub fn read_root_libs(&self) -> Result<Vec<Lib>, ProfileError> {
        Ok(self
            .read(Want::RootLibs)?
            .into_iter()
            .flat_map(|p| p.libs)
            .collect())
    }

    /// Every `libs` entry of the profile: the root's, each `processes[]` entry's
    /// (recursively) and, for older processed profiles, each thread's.
    pub fn read_libs(&self) -> Result<Vec<Lib>, ProfileError> {
        Ok(self
            .read(Want::Libs)?
            .into_iter()
            .flat_map(|p| p.libs)
            .collect())
    }

    /// Every process with its libs and addresses (first pass of `symbolicate`).
    pub fn read_processes(&self) -> Result<Vec<ProcessInfo>, ProfileError> {
        self.read(Want::LibsAndAddresses)
    }
}
