//! MiniDebugInfo (Fedora, RHEL, CentOS): an xz-compressed ELF in `.gnu_debugdata` whose
//! `.symtab` holds the local functions that `.dynsym` lacks. Decompressed by the system's
//! `xz` (present wherever such binaries are: rpm and systemd need it), which costs this
//! binary nothing; a pure-Rust decoder would add to every build for one distribution family.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use object::{Object, ObjectSection};

/// The embedded file may not decompress to more than this (a bound against xz bombs; real
/// ones are a few hundred KB).
const MAX_OUTPUT: u64 = 256 << 20;

/// Why the MiniDebugInfo cannot be read (the module keeps its other tables).
#[derive(Debug)]
pub enum MiniDebugInfoError {
    /// The section's bytes cannot be read.
    Section(object::Error),
    NotXz,
    /// `xz` cannot be started or read from.
    Xz(std::io::Error),
    TooBig,
    /// `xz` failed on the data.
    Corrupt,
    NotElf(object::Error),
}

impl std::fmt::Display for MiniDebugInfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MiniDebugInfoError::Section(e) => write!(f, ".gnu_debugdata: {e}"),
            MiniDebugInfoError::NotXz => f.write_str(".gnu_debugdata is not xz data"),
            MiniDebugInfoError::Xz(e) => {
                write!(f, "cannot run xz to read .gnu_debugdata: {e}")
            }
            MiniDebugInfoError::TooBig => {
                write!(f, ".gnu_debugdata decompresses to over {MAX_OUTPUT} bytes")
            }
            MiniDebugInfoError::Corrupt => {
                f.write_str(".gnu_debugdata: xz could not decompress it")
            }
            MiniDebugInfoError::NotElf(e) => {
                write!(f, ".gnu_debugdata does not hold an ELF file: {e}")
            }
        }
    }
}

/// The function symbols (address, size, name) of the MiniDebugInfo in `file`; `Ok(empty)`
/// when there is none.
pub fn symbols(
    file: &object::File<'_>,
    names: &mut crate::resolve::symnames::Names,
) -> Result<Vec<crate::resolve::symnames::Sym>, MiniDebugInfoError> {
    let Some(section) = file.section_by_name(".gnu_debugdata") else {
        return Ok(Vec::new());
    };
    let packed = section.data().map_err(MiniDebugInfoError::Section)?;
    if !packed.starts_with(b"\xfd7zXZ\0") {
        return Err(MiniDebugInfoError::NotXz);
    }
    let elf = xz_decompress(packed)?;
    let inner = object::File::parse(&*elf).map_err(MiniDebugInfoError::NotElf)?;
    Ok(crate::resolve::elf::text_symbols(&inner, names))
}

/// Runs `xz -dc` (argument vector, no shell) with `packed` on its standard input.
fn xz_decompress(packed: &[u8]) -> Result<Vec<u8>, MiniDebugInfoError> {
    let mut child = Command::new("xz")
        .args(["-dc", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(MiniDebugInfoError::Xz)?;
    let no_pipe = || MiniDebugInfoError::Xz(std::io::Error::other("no pipe to xz"));
    let mut stdin = child.stdin.take().ok_or_else(no_pipe)?;
    let input = packed.to_vec();
    // Written from a thread: xz's output must be read meanwhile or both would block.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut out = Vec::new();
    let read = child
        .stdout
        .take()
        .ok_or_else(no_pipe)?
        .take(MAX_OUTPUT + 1)
        .read_to_end(&mut out);
    // Past the bound xz is stopped rather than waited for (before it, xz has closed its
    // output and is exiting: killing it then would race with its exit status).
    if out.len() as u64 > MAX_OUTPUT {
        let _ = child.kill();
    }
    let status = child.wait();
    let _ = writer.join();
    read.map_err(MiniDebugInfoError::Xz)?;
    if out.len() as u64 > MAX_OUTPUT {
        return Err(MiniDebugInfoError::TooBig);
    }
    match status {
        Ok(s) if s.success() => Ok(out),
        _ => Err(MiniDebugInfoError::Corrupt),
    }
}
