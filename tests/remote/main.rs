//! Remote symbol sources over loopback: a fake Tecken (302 to a second "storage" server,
//! 404s), a server that accepts and never answers, a refused port, a fake symsrv and a
//! fake debuginfod, serving files built here. Expected names and lines come from the
//! files the tests write (Breakpad) or from binutils' `nm`/`addr2line` (ELF).

#[path = "../common/mod.rs"]
mod common;

mod fake;
mod fetching;
mod hostile;
mod inputs;
mod routes;
mod stripped;

use fake::*;
use inputs::*;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use common::{BIN, Server, http, scratch};
use serde_json::{Value, json};

/// The downloads run the system curl; without it these tests have nothing to test.
pub(crate) fn have_curl() -> bool {
    let ok = Command::new("curl")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        common::skip("no curl on PATH", true);
    }
    ok
}
