//! Remote symbol sources over loopback: a fake Tecken (302 to a second "storage" server,
//! 404s), a server that accepts and never answers, a refused port, a fake symsrv and a
//! fake debuginfod, serving files built here. Expected names and lines come from the
//! files the tests write (Breakpad) or from binutils' `nm`/`addr2line` (ELF).

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use common::{BIN, Server, http, scratch};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Fake HTTP servers

enum Reply {
    Body(Vec<u8>),
    Redirect(String),
    /// Sent with chunked framing (no length the client could check first).
    Chunked(Vec<u8>),
    /// Sent slowly but steadily: `bytes_per_tick` every 100 ms.
    Throttled(Vec<u8>, usize),
    /// Gzip-encoded when the request accepts it (as Tecken's storage does), counting the
    /// bytes of each body sent.
    GzipIfAsked(Vec<u8>, Arc<Mutex<usize>>),
    NotFound,
    /// 503: the server itself failed.
    Unavailable,
    /// Accept, read the request, never answer (until the client gives up).
    Stall,
}

type Handler = Arc<dyn Fn(&str) -> Reply + Send + Sync>;

struct Fake {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    fn start(handler: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let l = log.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (h, l) = (handler.clone(), l.clone());
                std::thread::spawn(move || serve(conn, &*h, &l));
            }
        });
        Fake { addr, log }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn count(&self, needle: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.contains(needle))
            .count()
    }
}

fn serve(mut conn: TcpStream, handler: &dyn Fn(&str) -> Reply, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut gzip_ok = false;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {
                let l = line.to_ascii_lowercase();
                gzip_ok |= l.starts_with("accept-encoding:") && l.contains("gzip");
            }
        }
    }
    let target = first.split(' ').nth(1).unwrap_or("").to_string();
    log.lock().unwrap().push(target.clone());
    let (status, extra, body) = match handler(&target) {
        Reply::Throttled(b, per_tick) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                b.len()
            );
            let _ = conn.write_all(head.as_bytes());
            for piece in b.chunks(per_tick.max(1)) {
                if conn.write_all(piece).is_err() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            return;
        }
        Reply::GzipIfAsked(b, sent) => {
            let (extra, body) = if gzip_ok {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(&b).unwrap();
                (
                    "Content-Encoding: gzip\r\n".to_string(),
                    e.finish().unwrap(),
                )
            } else {
                (String::new(), b)
            };
            *sent.lock().unwrap() += body.len();
            ("200 OK", extra, body)
        }
        Reply::Chunked(b) => {
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            let _ = conn.write_all(head.as_bytes());
            for piece in b.chunks(64 << 10) {
                let _ = conn.write_all(format!("{:x}\r\n", piece.len()).as_bytes());
                let _ = conn.write_all(piece);
                let _ = conn.write_all(b"\r\n");
            }
            let _ = conn.write_all(b"0\r\n\r\n");
            return;
        }
        Reply::Body(b) => ("200 OK", String::new(), b),
        Reply::Redirect(to) => ("302 Found", format!("Location: {to}\r\n"), Vec::new()),
        Reply::NotFound => ("404 Not Found", String::new(), b"not found".to_vec()),
        Reply::Unavailable => ("503 Service Unavailable", String::new(), b"down".to_vec()),
        Reply::Stall => {
            // Hold the connection until the client hangs up.
            let mut sink = Vec::new();
            let _ = reader.read_to_end(&mut sink);
            return;
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(&body);
}

/// A loopback port nothing listens on.
fn refused_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    url
}

/// Serves files of a folder by their relative path.
fn files_handler(root: PathBuf) -> impl Fn(&str) -> Reply + Send + Sync + 'static {
    move |target: &str| {
        let rel = target
            .split('?')
            .next()
            .unwrap_or("")
            .trim_start_matches('/');
        if rel.contains("..") {
            return Reply::NotFound;
        }
        match std::fs::read(root.join(rel)) {
            Ok(b) => Reply::Body(b),
            Err(_) => Reply::NotFound,
        }
    }
}

/// Tecken: 302 to a second server holding the file under another path, with a query
/// string that server insists on (as signed storage URLs do).
fn tecken(store: PathBuf) -> (Fake, Fake) {
    let storage = Fake::start(move |target: &str| {
        let Some((path, query)) = target.split_once('?') else {
            return Reply::NotFound;
        };
        if query != "X-Signature=abc" {
            return Reply::NotFound;
        }
        let rel = path.trim_start_matches("/bucket/");
        match std::fs::read(store.join(rel)) {
            Ok(b) => Reply::Body(b),
            Err(_) => Reply::NotFound,
        }
    });
    let storage_url = storage.url();
    let front = Fake::start(move |target: &str| {
        Reply::Redirect(format!(
            "{storage_url}/bucket{}?X-Signature=abc",
            target.split('?').next().unwrap_or("")
        ))
    });
    (front, storage)
}

// ---------------------------------------------------------------------------------------
// Test inputs

/// A Breakpad module written here: its records are the expected answers.
/// (module offset, function, file, line)
type SymFrame = (u64, &'static str, &'static str, u32);

struct SymModule {
    name: &'static str,
    id: &'static str,
    frames: Vec<SymFrame>,
}

fn sym_modules() -> Vec<SymModule> {
    vec![
        SymModule {
            name: "libfake.so",
            id: "0123456789ABCDEF0123456789ABCDEF0",
            frames: vec![
                (0x1004, "fake_alpha", "/src/fake.c", 11),
                (0x1012, "fake_alpha", "/src/fake.c", 12),
                (0x1120, "fake::Beta::run()", "/src/beta.cpp", 21),
            ],
        },
        SymModule {
            name: "fakewin.pdb",
            id: "FEDCBA9876543210FEDCBA98765432101",
            frames: vec![(0x2008, "WinMain", "c:\\src\\win.c", 7)],
        },
    ]
}

fn sym_text(m: &SymModule) -> String {
    let mut files: Vec<&str> = m.frames.iter().map(|f| f.2).collect();
    files.dedup();
    let mut s = format!("MODULE Linux x86_64 {} {}\n", m.id, m.name);
    for (i, f) in files.iter().enumerate() {
        s += &format!("FILE {i} {f}\n");
    }
    // One FUNC per distinct name, covering its frames with one line record each.
    let mut by_name: Vec<(&str, Vec<&SymFrame>)> = Vec::new();
    for f in &m.frames {
        match by_name.iter_mut().find(|(n, _)| *n == f.1) {
            Some((_, v)) => v.push(f),
            None => by_name.push((f.1, vec![f])),
        }
    }
    for (name, frames) in by_name {
        let start = frames[0].0 & !0xf;
        let end = (frames.last().unwrap().0 | 0xf) + 1;
        s += &format!("FUNC {start:x} {:x} 0 {name}\n", end - start);
        for f in &frames {
            let file = files.iter().position(|x| *x == f.2).unwrap();
            s += &format!("{:x} {:x} {} {file}\n", f.0 & !0xf, 0x10, f.3);
        }
    }
    s
}

/// Writes the modules as a Breakpad store under `root`.
fn write_store(root: &Path, modules: &[SymModule]) {
    for m in modules {
        let stem = m.name.strip_suffix(".pdb").unwrap_or(m.name);
        let dir = root.join(m.name).join(m.id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{stem}.sym")), sym_text(m)).unwrap();
    }
}

/// A C program compiled here, with its build ID and what binutils say about it.
struct Elf {
    binary: PathBuf,
    build_id: String,
    breakpad_id: String,
    /// (module offset, function per nm, file:line per addr2line)
    frames: Vec<(u64, String, String, u32)>,
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn build_elf(dir: &Path) -> Elf {
    let src = dir.join("remote_prog.c");
    std::fs::write(
        &src,
        "int remote_square(int x) { return x * x; }\n\
         int remote_sum(int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++)\n    s += remote_square(i);\n  return s;\n}\n\
         int main(int argc, char **argv) { (void)argv; return remote_sum(argc); }\n",
    )
    .unwrap();
    let binary = dir.join("remote_prog");
    run(Command::new("gcc")
        .args(["-O0", "-g", "-fno-inline", "-Wl,--build-id=sha1", "-o"])
        .arg(&binary)
        .arg(&src));
    let notes = run(Command::new("readelf").arg("-n").arg(&binary));
    let build_id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap()
        .trim()
        .to_string();
    // SPEC section 5: first 16 bytes, fields 0-3, 4-5, 6-7 byte-swapped, age 0.
    let mut b: Vec<u8> = (0..32)
        .step_by(2)
        .map(|i| u8::from_str_radix(&build_id[i..i + 2], 16).unwrap())
        .collect();
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    let breakpad_id: String = b.iter().map(|x| format!("{x:02X}")).collect::<String>() + "0";
    let nm = run(Command::new("nm").arg("--defined-only").arg(&binary));
    let mut frames = Vec::new();
    for f in ["remote_square", "remote_sum", "main"] {
        let addr = nm
            .lines()
            .find_map(|l| {
                let mut it = l.split_whitespace();
                let (a, _, n) = (it.next()?, it.next()?, it.next()?);
                (n == f).then(|| u64::from_str_radix(a, 16).unwrap())
            })
            .unwrap();
        // A few bytes in: past the prologue's first instruction.
        let offset = addr + 4;
        let a2l = run(Command::new("addr2line")
            .arg("-e")
            .arg(&binary)
            .arg(format!("{offset:#x}")));
        let (file, line) = a2l.trim().rsplit_once(':').unwrap();
        let line: u32 = line.split_whitespace().next().unwrap().parse().unwrap();
        frames.push((offset, f.to_string(), file.to_string(), line));
    }
    Elf {
        binary,
        build_id,
        breakpad_id,
        frames,
    }
}

fn write_profile(path: &Path, libs: &[Value]) {
    let profile = json!({
        "meta": {"version": 27, "interval": 1, "startTime": 0, "processType": 0,
                 "product": "Firefox", "stackwalk": 1},
        "libs": libs,
        "threads": [],
        "processes": [],
        "pausedRanges": [],
    });
    std::fs::write(path, serde_json::to_vec(&profile).unwrap()).unwrap();
}

fn lib(name: &str, id: &str, path: &str, code_id: Option<&str>) -> Value {
    let mut l = json!({"name": name, "debugName": name, "breakpadId": id, "path": path,
                       "debugPath": path, "arch": "x86_64", "start": 0x1000_0000u64,
                       "end": 0x1100_0000u64, "offset": 0});
    if let Some(c) = code_id {
        l["codeId"] = json!(c);
    }
    l
}

// ---------------------------------------------------------------------------------------
// The binary as a server, with its own environment

type Running = Server;

fn start(args: &[String], env: &[(&str, String)]) -> Running {
    Server::start_env(args, env)
}

fn frames(answer: &Value) -> Vec<Value> {
    answer["results"][0]["stacks"][0]
        .as_array()
        .unwrap()
        .clone()
}

/// Files under `dir` whose name marks a partial download.
fn partial_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains(".part-") {
                out.push(p);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Tests

/// The downloads run the system curl; without it these tests have nothing to test.
fn have_curl() -> bool {
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

#[test]
fn symbols_come_from_tecken_and_debuginfod_once_and_then_from_the_cache() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-all");
    let store = dir.join("tecken-store");
    let modules = sym_modules();
    write_store(&store, &modules);
    // A .sym whose MODULE line has another ID: fetched, rejected, never used.
    let wrong = SymModule {
        name: "libwrong.so",
        id: "11111111111111111111111111111111A",
        frames: vec![(0x1000, "never_used", "/x.c", 1)],
    };
    let wrong_dir = store.join(wrong.name).join(wrong.id);
    std::fs::create_dir_all(&wrong_dir).unwrap();
    std::fs::write(
        wrong_dir.join("libwrong.so.sym"),
        sym_text(&wrong).replace(wrong.id, "22222222222222222222222222222222B"),
    )
    .unwrap();
    let (tecken, storage) = tecken(store);

    // debuginfod: the debug file of a program compiled here, by build ID.
    let elf = build_elf(&dir);
    let di_root = dir.join("debuginfod-root");
    let di_dir = di_root.join("buildid").join(&elf.build_id);
    std::fs::create_dir_all(&di_dir).unwrap();
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&elf.binary)
        .arg(di_dir.join("debuginfo")));
    let debuginfod = Fake::start(files_handler(di_root));

    // A module found locally: the example fixture, by its path in the profile.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/example");
    let example_lib = {
        let p: Value = serde_json::from_slice(
            &std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/profile.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let l = p["libs"][0].clone();
        (
            l["debugName"].as_str().unwrap().to_string(),
            l["breakpadId"].as_str().unwrap().to_string(),
        )
    };

    let profile = dir.join("profile.json");
    write_profile(
        &profile,
        &[
            lib("libfake.so", modules[0].id, "/absent/libfake.so", None),
            lib(
                "remote_prog",
                &elf.breakpad_id,
                "/absent/remote_prog",
                Some(&elf.build_id),
            ),
            lib(
                &example_lib.0,
                &example_lib.1,
                example.to_str().unwrap(),
                None,
            ),
        ],
    );
    let cache = dir.join("cache");
    let di_cache = dir.join("debuginfod-cache");
    let env = [
        ("XDG_CACHE_HOME", cache.display().to_string()),
        ("DEBUGINFOD_CACHE_PATH", di_cache.display().to_string()),
        ("DEBUGINFOD_URLS", format!("{} ", debuginfod.url())),
    ];
    let memory_map: Vec<(String, String)> = vec![
        ("libfake.so".into(), modules[0].id.into()),
        ("fakewin.pdb".into(), modules[1].id.into()),
        ("remote_prog".into(), elf.breakpad_id.clone()),
        (example_lib.0.clone(), example_lib.1.clone()),
        (
            "libmissing.so".into(),
            "33333333333333333333333333333333C".into(),
        ),
        ("libwrong.so".into(), wrong.id.into()),
    ];
    let mut offsets: Vec<(usize, u64)> = Vec::new();
    let mut want: Vec<(String, Option<String>, Option<u32>)> = Vec::new();
    for (i, m) in modules.iter().enumerate() {
        for f in &m.frames {
            offsets.push((i, f.0));
            want.push((f.1.into(), Some(f.2.into()), Some(f.3)));
        }
    }
    for f in &elf.frames {
        offsets.push((2, f.0));
        want.push((f.1.clone(), Some(f.2.clone()), Some(f.3)));
    }
    offsets.push((3, 0x1000));
    offsets.push((4, 0x1000));
    offsets.push((5, 0x1000));
    let check = |answer: &Value| {
        let got = frames(answer);
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                got[k]["function"].as_str(),
                Some(w.0.as_str()),
                "frame {k}: {}",
                got[k]
            );
            assert_eq!(
                got[k]["file"].as_str(),
                w.1.as_deref(),
                "frame {k}: {}",
                got[k]
            );
            assert_eq!(
                got[k]["line"].as_u64(),
                w.2.map(u64::from),
                "frame {k}: {}",
                got[k]
            );
        }
        let found = &answer["results"][0]["found_modules"];
        assert_eq!(
            found[format!("{}/{}", example_lib.0, example_lib.1)],
            json!(true)
        );
        assert_eq!(
            found["libmissing.so/33333333333333333333333333333333C"],
            json!(false)
        );
        assert_eq!(found[format!("libwrong.so/{}", wrong.id)], json!(false));
        assert!(got[want.len() + 2].get("function").is_none());
    };

    // The first server refuses connections: marked down, the next one is used.
    let refused = refused_url();
    let args = |servers: &[String]| -> Vec<String> {
        let mut a = vec![profile.display().to_string()];
        for s in servers {
            a.push("--breakpad-symbol-server".into());
            a.push(s.clone());
        }
        a
    };
    let server = start(
        &args(&[refused.clone(), format!("{}/", tecken.url())]),
        &env,
    );
    let answer = server.symbolicate(&memory_map, &offsets);
    check(&answer);
    let errors = answer["results"][0]["module_errors"].to_string();
    assert!(errors.contains("UnmatchedDebugId"), "{errors}");
    // Asked again: everything from memory or the cache, nothing twice.
    check(&server.symbolicate(&memory_map, &offsets));
    assert_eq!(
        tecken.count("/libmissing.so/"),
        1,
        "{:?}",
        tecken.requests()
    );
    assert_eq!(tecken.count("/libwrong.so/"), 1, "{:?}", tecken.requests());
    assert_eq!(tecken.count("/libfake.so/"), 1, "{:?}", tecken.requests());
    // fakewin.pdb is asked for as fakewin.sym.
    assert_eq!(
        tecken.count("/fakewin.pdb/FEDCBA9876543210FEDCBA98765432101/fakewin.sym"),
        1
    );
    assert_eq!(storage.count("X-Signature=abc"), storage.requests().len());
    assert_eq!(
        debuginfod.count(&format!("/buildid/{}/debuginfo", elf.build_id)),
        1
    );
    // Nothing asked for the module found locally; no path with a doubled slash.
    for r in tecken.requests().iter().chain(debuginfod.requests().iter()) {
        assert!(!r.contains(&example_lib.0), "{r}");
        assert!(!r.contains("//"), "{r}");
    }
    let stderr = server.stderr();
    // The failed server is reported once (the per-module lines may name it as tried).
    assert_eq!(
        stderr
            .matches(&format!("symbol server {refused} failed"))
            .count(),
        1,
        "{stderr}"
    );
    // Where the symbols came from is said once they are there, not "no symbols" while
    // the download was still going on.
    assert!(stderr.contains("libfake.so: Breakpad symbols"), "{stderr}");
    assert!(!stderr.contains("libfake.so: no symbols"), "{stderr}");
    assert_eq!(server.interrupt(), Some(0));
    // The caches, in their layouts: samply's Breakpad store, elfutils' debuginfod cache.
    assert!(
        cache
            .join(format!(
                "profiler-symbol-server/breakpad/libfake.so/{}/libfake.so.sym",
                modules[0].id
            ))
            .is_file()
    );
    assert!(di_cache.join(&elf.build_id).join("debuginfo").is_file());
    assert!(partial_files(&cache).is_empty() && partial_files(&di_cache).is_empty());
    assert!(
        !cache
            .join(format!(
                "profiler-symbol-server/breakpad/libwrong.so/{}/libwrong.so.sym",
                wrong.id
            ))
            .exists()
    );

    // Second run, every server down: the same answer from the cache, no request at all.
    let (t, d) = (tecken.requests().len(), debuginfod.requests().len());
    let env2 = [
        env[0].clone(),
        env[1].clone(),
        ("DEBUGINFOD_URLS", refused_url()),
    ];
    let server = start(&args(&[refused_url()]), &env2);
    let answer = server.symbolicate(&memory_map, &offsets);
    let got = frames(&answer);
    for (k, w) in want.iter().enumerate() {
        assert_eq!(got[k]["function"].as_str(), Some(w.0.as_str()), "frame {k}");
        assert_eq!(got[k]["line"].as_u64(), w.2.map(u64::from), "frame {k}");
    }
    assert_eq!(
        (tecken.requests().len(), debuginfod.requests().len()),
        (t, d)
    );
}

#[test]
fn debuginfod_adds_dwarf_to_a_local_binary_without_it() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-debuginfod-local");
    let elf = build_elf(&dir);
    let stripped = dir.join("stripped/remote_prog");
    std::fs::create_dir_all(stripped.parent().unwrap()).unwrap();
    run(Command::new("objcopy")
        .arg("--strip-debug")
        .arg(&elf.binary)
        .arg(&stripped));
    let di_root = dir.join("root");
    let di_dir = di_root.join("buildid").join(&elf.build_id);
    std::fs::create_dir_all(&di_dir).unwrap();
    std::fs::copy(&elf.binary, di_dir.join("debuginfo")).unwrap();
    let debuginfod = Fake::start(files_handler(di_root));
    let profile = dir.join("profile.json");
    write_profile(
        &profile,
        &[lib(
            "remote_prog",
            &elf.breakpad_id,
            stripped.to_str().unwrap(),
            Some(&elf.build_id),
        )],
    );
    let offsets: Vec<(usize, u64)> = elf.frames.iter().map(|f| (0, f.0)).collect();
    let map = vec![("remote_prog".to_string(), elf.breakpad_id.clone())];
    // Without debuginfod: names from the symbol table, no lines.
    let env = [
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        (
            "DEBUGINFOD_CACHE_PATH",
            dir.join("dcache").display().to_string(),
        ),
    ];
    let server = start(&[profile.display().to_string()], &env);
    let got = frames(&server.symbolicate(&map, &offsets));
    assert_eq!(got[0]["function"], json!(elf.frames[0].1));
    assert!(got[0].get("line").is_none(), "{}", got[0]);
    drop(server);
    let mut env = env.to_vec();
    env.push(("DEBUGINFOD_URLS", debuginfod.url()));
    let server = start(&[profile.display().to_string()], &env);
    let got = frames(&server.symbolicate(&map, &offsets));
    for (g, w) in got.iter().zip(&elf.frames) {
        assert_eq!(g["function"].as_str(), Some(w.1.as_str()), "{g}");
        assert_eq!(g["file"].as_str(), Some(w.2.as_str()), "{g}");
        assert_eq!(g["line"].as_u64(), Some(u64::from(w.3)), "{g}");
    }
    assert_eq!(debuginfod.requests().len(), 1);
}

#[test]
fn a_stalled_server_holds_up_neither_other_requests_nor_the_exit() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-stall");
    let stall = Fake::start(|_: &str| Reply::Stall);
    let modules = sym_modules();
    let local = dir.join("local");
    write_store(&local, &modules[1..]);
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let env = [("XDG_CACHE_HOME", dir.join("cache").display().to_string())];
    let server = Arc::new(start(
        &[
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            stall.url(),
            "--breakpad-symbol-dir".into(),
            local.display().to_string(),
        ],
        &env,
    ));
    let remote_map = vec![("libfake.so".to_string(), modules[0].id.to_string())];
    let local_map = vec![("fakewin.pdb".to_string(), modules[1].id.to_string())];
    let order = Arc::new(Mutex::new(Vec::new()));
    let waiting = {
        let (server, order) = (server.clone(), order.clone());
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let a = server.symbolicate(&remote_map, &[(0, 0x1004)]);
            order.lock().unwrap().push("remote");
            (a, started.elapsed())
        })
    };
    // Once the download has started, a request that needs none is answered meanwhile.
    while stall.requests().is_empty() {
        std::thread::yield_now();
    }
    let t = std::time::Instant::now();
    let a = server.symbolicate(&local_map, &[(0, 0x2008)]);
    order.lock().unwrap().push("local");
    eprintln!(
        "local request answered in {:?} while a download stalled",
        t.elapsed()
    );
    assert_eq!(frames(&a)[0]["function"], json!("WinMain"));
    let (a, took) = waiting.join().unwrap();
    eprintln!("request waiting on the stalled server answered after {took:?}");
    assert_eq!(*order.lock().unwrap(), ["local", "remote"]);
    assert!(frames(&a)[0].get("function").is_none());
    assert_eq!(
        a["results"][0]["found_modules"][format!("libfake.so/{}", modules[0].id)],
        json!(false)
    );
    // Marked down: asked again, no new connection.
    server.symbolicate(
        &[(
            "libother.so".to_string(),
            "44444444444444444444444444444444D".to_string(),
        )],
        &[(0, 1)],
    );
    assert_eq!(stall.requests().len(), 1);
    let server = Arc::try_unwrap(server).ok().unwrap();
    // All of stderr, read to its end after the exit: the warning is not raced for.
    let (code, stderr) = server.interrupt_with_stderr();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr.matches("not asked again for").count(), 1, "{stderr}");
    assert!(partial_files(&dir.join("cache")).is_empty());
}

#[test]
fn ctrl_c_during_a_download_leaves_nothing_partial() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-sigint");
    let stall = Fake::start(|_: &str| Reply::Stall);
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let cache = dir.join("cache");
    let server = Arc::new(start(
        &[
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            stall.url(),
        ],
        &[("XDG_CACHE_HOME", cache.display().to_string())],
    ));
    let s = server.clone();
    let pending = std::thread::spawn(move || {
        // The connection is dropped at exit: no answer, which is fine.
        let body = br#"{"memoryMap":[["libx.so","55555555555555555555555555555555E"]],"stacks":[[[0,1]]]}"#;
        let mut c = TcpStream::connect(s.addr).unwrap();
        let path = format!("/{}/symbolicate/v5", s.base.rsplit('/').next().unwrap());
        let _ = write!(
            c,
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
            s.addr,
            body.len()
        );
        let _ = c.write_all(body);
        let mut sink = Vec::new();
        let _ = c.read_to_end(&mut sink);
    });
    while stall.requests().is_empty() {
        std::thread::yield_now();
    }
    assert!(
        !partial_files(&cache).is_empty(),
        "the download writes a partial file"
    );
    common::signal(server.pid(), libc::SIGINT);
    // The server closes the parked connection as it exits.
    pending.join().unwrap();
    let server = Arc::try_unwrap(server).ok().unwrap();
    let (code, stderr) = server.wait_exit();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        partial_files(&cache).is_empty(),
        "{:?}",
        partial_files(&cache)
    );
}

#[test]
fn windows_symbol_server_serves_pdbs_from_the_corpus() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-symsrv");
    let truth = common::Truth::load(&corpus.join("truth/pe/mathlib.dll.truth.json"));
    let id = truth.breakpad_id();
    // symsrv layout: <pdb>/<ID>/<pdb>.
    let root = dir.join("symsrv");
    let d = root.join("mathlib.pdb").join(&id);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(corpus.join("pe/mathlib.pdb"), d.join("mathlib.pdb")).unwrap();
    let symsrv = Fake::start(files_handler(root));
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let win_cache = dir.join("wcache");
    let server = start(
        &[
            profile.display().to_string(),
            "--windows-symbol-server".into(),
            format!("{}/", symsrv.url()),
            "--windows-symbol-cache".into(),
            win_cache.display().to_string(),
        ],
        &[("XDG_CACHE_HOME", dir.join("cache").display().to_string())],
    );
    let offsets: Vec<(usize, u64)> = truth.offsets().into_iter().map(|o| (0, o)).collect();
    let answer = server.symbolicate(&[("mathlib.pdb".to_string(), id.clone())], &offsets);
    let got = frames(&answer);
    let ok = got
        .iter()
        .zip(&truth.addresses)
        .filter(|(g, t)| common::check_frame(g, t).is_ok())
        .count();
    eprintln!("symsrv: {ok}/{} frames match the truth", got.len());
    assert!(ok * 100 >= got.len() * 98, "{ok}/{}", got.len());
    assert!(
        win_cache
            .join("mathlib.pdb")
            .join(&id)
            .join("mathlib.pdb")
            .is_file()
    );
    assert_eq!(
        symsrv.requests(),
        [format!("/mathlib.pdb/{id}/mathlib.pdb")]
    );
}

#[test]
fn corpus_linux_profile_from_tecken_and_debuginfod() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-corpus-linux");
    let src = std::fs::read_to_string(corpus.join("profiles/gecko-profile-linux.json")).unwrap();
    let profile = dir.join("profile.json");
    // Paths stay /corpus/...: the binaries are absent on this machine.
    std::fs::write(&profile, &src).unwrap();
    let libs: Vec<Value> = serde_json::from_str::<Value>(&src).unwrap()["libs"]
        .as_array()
        .unwrap()
        .clone();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(corpus.join("profiles/gecko-profile-linux.expected.json")).unwrap(),
    )
    .unwrap();
    let map: Vec<(String, String)> = libs
        .iter()
        .map(|l| {
            (
                l["debugName"].as_str().unwrap().to_string(),
                l["breakpadId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut offsets = Vec::new();
    let mut wanted = Vec::new();
    for (addr, e) in expected["frames"].as_object().unwrap() {
        let addr = common::parse_hex(addr);
        let Some(i) = libs.iter().position(|l| {
            l["start"].as_u64().unwrap() <= addr && addr < l["end"].as_u64().unwrap()
        }) else {
            continue;
        };
        offsets.push((i, addr - libs[i]["start"].as_u64().unwrap()));
        let mut entry = e.clone();
        entry["found"] = json!(true);
        wanted.push(json!({"module_offset": e["module_offset"], "expect": entry}));
    }
    // debuginfod serves the corpus ELF files by build ID (codeId), Tecken its .sym files:
    // each module comes from whichever answers first in the order of the sources.
    let mut by_build_id: HashMap<String, PathBuf> = HashMap::new();
    for l in &libs {
        let path = l["path"].as_str().unwrap().replacen("/corpus/", "", 1);
        // Two libs share a build ID (a binary and its stripped copy): serve the first,
        // which has the DWARF, as a debuginfod server would.
        by_build_id
            .entry(l["codeId"].as_str().unwrap().to_string())
            .or_insert_with(|| corpus.join(path));
    }
    let debuginfod = Fake::start(move |target: &str| {
        let id = target
            .trim_start_matches("/buildid/")
            .trim_end_matches("/debuginfo");
        match by_build_id.get(id).map(std::fs::read) {
            Some(Ok(b)) => Reply::Body(b),
            _ => Reply::NotFound,
        }
    });
    let (tecken, _storage) = tecken(corpus.join("breakpad"));
    for (name, env_extra, args) in [
        (
            "tecken",
            None,
            vec!["--breakpad-symbol-server".to_string(), tecken.url()],
        ),
        ("debuginfod", Some(debuginfod.url()), vec![]),
    ] {
        let mut env = vec![
            (
                "XDG_CACHE_HOME",
                dir.join(format!("cache-{name}")).display().to_string(),
            ),
            (
                "DEBUGINFOD_CACHE_PATH",
                dir.join(format!("dcache-{name}")).display().to_string(),
            ),
        ];
        if let Some(u) = env_extra {
            env.push(("DEBUGINFOD_URLS", u));
        }
        let mut a = vec![profile.display().to_string()];
        a.extend(args);
        let server = start(&a, &env);
        let answer = server.symbolicate(&map, &offsets);
        let got = frames(&answer);
        let results: Vec<Result<(), String>> = got
            .iter()
            .zip(&wanted)
            .map(|(g, w)| {
                // Names and file/line; Breakpad files carry no inline detail for all.
                if g.get("function").is_none() {
                    return Err(format!("unnamed: {g}"));
                }
                common::check_frame(g, w).or_else(|e| {
                    // The outer name and the innermost line are what a .sym always has.
                    let want = &w["expect"];
                    let name = want["function"].as_str().unwrap_or("");
                    let inner = g["inlines"].get(0).unwrap_or(g);
                    let line_ok = want["line"].is_null() || inner["line"] == want["line"];
                    if common::name_matches(g["function"].as_str().unwrap(), &[name]) && line_ok {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
            })
            .collect();
        let ok = results.iter().filter(|r| r.is_ok()).count();
        let strict = got
            .iter()
            .zip(&wanted)
            .filter(|(g, w)| common::check_frame(g, w).is_ok())
            .count();
        let with_line = got
            .iter()
            .zip(&wanted)
            .filter(|(g, w)| w["expect"]["line"].is_null() || g.get("line").is_some())
            .count();
        eprintln!("{name}: {strict} frames agree with the truth in every field");
        eprintln!(
            "{name}: {ok}/{} frames named as expected, {with_line} with a line",
            got.len()
        );
        for e in results.iter().filter_map(|r| r.as_ref().err()).take(5) {
            eprintln!("  {e}");
        }
        assert!(ok * 100 >= got.len() * 98, "{name}: {ok}/{}", got.len());
        assert!(
            with_line * 100 >= got.len() * 98,
            "{name}: {with_line}/{}",
            got.len()
        );
    }
}

#[test]
fn query_waits_for_its_downloads_and_says_once_when_curl_is_missing() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-query");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let (tecken, _storage) = tecken(store);
    let request = json!({"memoryMap": [["libfake.so", modules[0].id], ["fakewin.pdb", modules[1].id]],
                         "stacks": [[[0, 0x1004], [1, 0x2008]]]});
    let args = ["/symbolicate/v5", "--breakpad-symbol-server", &tecken.url()];
    let cache = dir.join("cache").display().to_string();
    let a = common::query_stdin(&args, &[("XDG_CACHE_HOME", &cache)], &request);
    let f = &a["results"][0]["stacks"][0];
    assert_eq!(f[0]["function"], json!("fake_alpha"));
    assert_eq!(f[1]["function"], json!("WinMain"));
    // No curl: said once, answered from local data (nothing here).
    let out = common::run_with_stdin(
        Command::new(BIN)
            .arg("query")
            .args(args)
            .env("XDG_CACHE_HOME", dir.join("cache2"))
            .env("PROFILER_SYMBOL_SERVER_CURL", dir.join("no-such-curl")),
        request.to_string().as_bytes(),
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("warning: curl is not installed").count(),
        1,
        "{stderr}"
    );
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
}

#[test]
fn mach_flow_with_this_binary_in_place_of_samply() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-mach");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let (tecken, _storage) = tecken(store);
    let profile = dir.join("profile.json");
    write_profile(
        &profile,
        &modules
            .iter()
            .map(|m| lib(m.name, m.id, &format!("/absent/{}", m.name), None))
            .collect::<Vec<_>>(),
    );
    let mut frames = Vec::new();
    for (i, m) in modules.iter().enumerate() {
        for f in &m.frames {
            frames.push(json!([i, f.0, f.1]));
        }
    }
    // Enough jobs for several parallel requests of 10.
    let frames: Vec<Value> = frames.iter().cycle().take(25).cloned().collect();
    let expected = json!({
        "memoryMap": modules.iter().map(|m| json!([m.name, m.id])).collect::<Vec<_>>(),
        "frames": frames,
    });
    let expected_path = dir.join("expected.json");
    std::fs::write(&expected_path, expected.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mach_flow.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(BIN)
        .arg(&profile)
        .arg(format!("{}/", tecken.url()))
        .arg(&expected_path)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("named 25/25; exit status after SIGINT: 0"),
        "{text}"
    );
}

#[test]
fn symsrv_layout_from_the_flag_and_from_nt_symbol_path() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-symsrv-layout");
    let m = &sym_modules()[1];
    // The server's file is read by its bytes: a Breakpad text stands in for a PDB here
    // (the corpus test above serves a real one).
    let root = dir.join("srv");
    let at = root.join(m.name).join(m.id);
    std::fs::create_dir_all(&at).unwrap();
    std::fs::write(at.join(m.name), sym_text(m)).unwrap();
    // A CAB-compressed answer (symsrv's .pd_ form) is reported, not parsed.
    let cab_id = "ABABABABABABABABABABABABABABABAB1";
    let cab = root.join("cab.pdb").join(cab_id);
    std::fs::create_dir_all(&cab).unwrap();
    std::fs::write(cab.join("cab.pdb"), b"MSCF\0\0\0\0 not really a cabinet").unwrap();
    let srv = Fake::start(files_handler(root));
    let request = json!({"memoryMap": [[m.name, m.id], ["cab.pdb", cab_id]],
                         "stacks": [[[0, 0x2008], [1, 0x10]]]});
    let cache = dir.join("nt-cache");
    let path = format!("srv*{}*{}", cache.display(), srv.url());
    let home = dir.join("home").display().to_string();
    for (args, env) in [
        (
            vec!["/symbolicate/v5", "--windows-symbol-server", &srv.url()],
            vec![("XDG_CACHE_HOME", home.as_str())],
        ),
        (
            vec!["/symbolicate/v5"],
            vec![
                ("XDG_CACHE_HOME", home.as_str()),
                ("_NT_SYMBOL_PATH", path.as_str()),
            ],
        ),
    ] {
        let a = common::query_stdin(&args, &env, &request);
        let r = &a["results"][0];
        assert_eq!(r["stacks"][0][0]["function"], json!("WinMain"), "{a}");
        let errors = r["module_errors"][format!("cab.pdb/{cab_id}")].to_string();
        assert!(errors.contains("CAB-compressed"), "{errors}");
    }
    assert!(
        dir.join("home/profiler-symbol-server/windows")
            .join(m.name)
            .join(m.id)
            .join(m.name)
            .is_file()
    );
    assert!(cache.join(m.name).join(m.id).join(m.name).is_file());
    assert_eq!(srv.count(&format!("/{}/{}/{}", m.name, m.id, m.name)), 2);
}

#[test]
fn symbolicate_fetches_every_module_once_for_the_corpus_profile() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-ci");
    let (tecken, _storage) = tecken(corpus.join("breakpad"));
    let out = dir.join("out.json");
    let status = Command::new(BIN)
        .arg("symbolicate")
        .arg(corpus.join("profiles/gecko-profile-linux.json"))
        .arg("-o")
        .arg(&out)
        .args(["--breakpad-symbol-server", &tecken.url()])
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("DEBUGINFOD_URLS")
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(corpus.join("profiles/gecko-profile-linux.expected.json")).unwrap(),
    )
    .unwrap();
    // Every address of a lib became a name: its hex string is gone from the output (the
    // names themselves are checked against the truth by the server tests above).
    let mut named = 0;
    let mut total = 0;
    for (addr, e) in expected["frames"].as_object().unwrap() {
        if e["lib"].is_string() {
            total += 1;
            named += usize::from(!text.contains(&format!("\"{addr}\"")));
        }
    }
    eprintln!("symbolicate: {named}/{total} addresses replaced by names");
    assert!(named * 100 >= total * 98, "{named}/{total}");
    let mut asked = tecken.requests();
    asked.sort();
    let n = asked.len();
    asked.dedup();
    assert_eq!(asked.len(), n, "a file asked for twice: {asked:?}");
}

// ---------------------------------------------------------------------------------------
// Caches shared with other tools, and downloads as an attacker would serve them

#[cfg(unix)]
fn set_age(path: &Path, days: u64) {
    let f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86400))
        .unwrap();
}

#[cfg(unix)]
fn plant(path: &Path, days: u64) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"a file of another tool").unwrap();
    set_age(path, days);
    path.to_path_buf()
}

/// Runs `query` on one frame of a module; (answer, stderr).
fn query_one(
    args: &[String],
    env: &[(&str, String)],
    name: &str,
    id: &str,
    offset: u64,
) -> (Value, String) {
    let request = json!({"memoryMap": [[name, id]], "stacks": [[[0, offset]]]});
    let out = common::run_with_stdin(
        Command::new(BIN)
            .arg("query")
            .arg("/symbolicate/v5")
            .args(args)
            .env_remove("DEBUGINFOD_URLS")
            .env_remove("_NT_SYMBOL_PATH")
            .envs(env.iter().map(|(k, v)| (k, v))),
        request.to_string().as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

#[cfg(unix)]
#[test]
fn eviction_removes_only_files_this_program_fetched() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-evict-shared");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let (tecken, _storage) = tecken(store);
    let xdg = dir.join("xdg");
    let root = xdg.join("profiler-symbol-server");
    let env = [("XDG_CACHE_HOME", xdg.display().to_string())];
    let server = ["--breakpad-symbol-server".to_string(), tecken.url()];
    let id = "0123456789ABCDEF0123456789ABCDEF1";
    // Other tools' files, old enough for any age rule, in our default cache and in a
    // WinDbg-layout cache the user shares with us.
    let foreign = [
        plant(
            &root.join(format!("breakpad/ntdll.pdb/{id}/ntdll.pdb")),
            400,
        ),
        plant(&root.join("breakpad/notes.txt"), 400),
        plant(&root.join(format!("windows/ntdll.pdb/{id}/ntdll.pdb")), 400),
    ];
    let shared = dir.join("shared-symbols");
    let shared_files = [
        plant(&shared.join(format!("ntdll.pdb/{id}/ntdll.pdb")), 400),
        plant(&shared.join("libfake.so/OLD/libfake.sym"), 400),
    ];
    // A root that is a symlink: refused whole, its target untouched.
    let victim = dir.join("victim");
    let victim_file = plant(&victim.join(format!("kernel32.pdb/{id}/kernel32.pdb")), 400);
    let linked = dir.join("linked-cache");
    std::os::unix::fs::symlink(&victim, &linked).unwrap();

    // Run 1 fetches libfake's .sym into the default cache; it then looks 200 days old.
    let m = &modules[0];
    let (a, _) = query_one(&server, &env, m.name, m.id, m.frames[0].0);
    assert_eq!(
        a["results"][0]["stacks"][0][0]["function"],
        json!(m.frames[0].1)
    );
    let ours = root.join(format!("breakpad/{}/{}/libfake.so.sym", m.name, m.id));
    assert!(ours.is_file());
    set_age(&ours, 200);
    // Run 2 fetches another file: eviction runs, and only our own old file goes.
    let w = &modules[1];
    let (a, _) = query_one(&server, &env, w.name, w.id, w.frames[0].0);
    assert_eq!(
        a["results"][0]["stacks"][0][0]["function"],
        json!(w.frames[0].1)
    );
    assert!(!ours.exists(), "our own file unused for 200 days stays");
    for f in &foreign {
        assert!(f.is_file(), "{} was deleted", f.display());
    }
    // Into the shared cache (named by the user): added to, nothing removed.
    let mut args = server.to_vec();
    args.extend([
        "--breakpad-symbol-cache".to_string(),
        shared.display().to_string(),
    ]);
    query_one(&args, &env, m.name, m.id, m.frames[0].0);
    assert!(
        shared
            .join(format!("{}/{}/libfake.so.sym", m.name, m.id))
            .is_file()
    );
    set_age(
        &shared.join(format!("{}/{}/libfake.so.sym", m.name, m.id)),
        200,
    );
    query_one(&args, &env, w.name, w.id, w.frames[0].0);
    for f in &shared_files {
        assert!(f.is_file(), "{} was deleted", f.display());
    }
    assert!(
        shared
            .join(format!("{}/{}/libfake.so.sym", m.name, m.id))
            .is_file()
    );
    // The symlinked root: a warning, no request, nothing written or removed there.
    let before = tecken.requests().len();
    let mut args = server.to_vec();
    args.extend([
        "--breakpad-symbol-cache".to_string(),
        linked.display().to_string(),
    ]);
    let (a, stderr) = query_one(&args, &env, "other.so", id, 0x10);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
    assert_eq!(tecken.requests().len(), before);
    assert!(victim_file.is_file());
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
}

/// The Breakpad ID the profile gives a module with this GNU build ID (SPEC section 5).
fn breakpad_id_of(build_id: &str) -> String {
    let mut b: Vec<u8> = (0..32)
        .step_by(2)
        .map(|i| u8::from_str_radix(&build_id[i..i + 2], 16).unwrap())
        .collect();
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    b.iter().map(|x| format!("{x:02X}")).collect::<String>() + "0"
}

#[test]
fn files_in_the_debuginfod_cache_that_fail_verification_are_removed_only_if_ours() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-debuginfod-foreign");
    let xdg = dir.join("xdg");
    // The default debuginfod cache: shared with elfutils and gdb.
    let dcache = xdg.join("debuginfod_client");
    let theirs_id = "1111111111111111111111111111111111111111";
    let ours_id = "2222222222222222222222222222222222222222";
    let theirs = dcache.join(theirs_id).join("debuginfo");
    std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
    std::fs::write(&theirs, b"not an ELF file, written by another tool").unwrap();
    // The server answers with something that is no debug file either.
    let debuginfod = Fake::start(|_: &str| Reply::Body(b"not an ELF file either".to_vec()));
    let profile = dir.join("profile.json");
    let libs = [
        lib(
            "theirs.so",
            &breakpad_id_of(theirs_id),
            "/nonexistent/theirs.so",
            Some(theirs_id),
        ),
        lib(
            "ours.so",
            &breakpad_id_of(ours_id),
            "/nonexistent/ours.so",
            Some(ours_id),
        ),
    ];
    write_profile(&profile, &libs);
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        ("DEBUGINFOD_URLS", debuginfod.url()),
    ];
    let map = [
        ("theirs.so".to_string(), breakpad_id_of(theirs_id)),
        ("ours.so".to_string(), breakpad_id_of(ours_id)),
    ];
    for _ in 0..2 {
        let server = start(&[profile.display().to_string(), "-v".into()], &env);
        let a = server.symbolicate(&map, &[(0, 0x10), (1, 0x10)]);
        assert!(
            frames(&a).iter().all(|f| f.get("function").is_none()),
            "{a}"
        );
        drop(server);
        assert!(theirs.is_file(), "another tool's file was deleted");
        assert!(
            !dcache.join(ours_id).join("debuginfo").exists(),
            "our own rejected download stays"
        );
    }
    // Asked once per run for our file, never for theirs (it was in the cache).
    assert_eq!(debuginfod.count(theirs_id), 0);
    assert_eq!(debuginfod.count(ours_id), 2);
    let server = start(&[profile.display().to_string(), "-v".into()], &env);
    server.symbolicate(&map, &[(0, 0x10)]);
    // The line was written before the answer; its reader may not have it yet.
    let said = "not used; left in place, this program did not write it";
    let t = std::time::Instant::now();
    while !server.stderr().contains(said) && t.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(server.stderr().contains(said), "{}", server.stderr());
    assert!(theirs.is_file());
}

#[cfg(unix)]
#[test]
fn downloads_go_to_a_private_file_curl_never_opens_by_name() {
    if !have_curl() || !Path::new("/proc/self/fd").is_dir() {
        return;
    }
    let dir = scratch("remote-fd");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let server = Fake::start(files_handler(store));
    // A curl that logs its arguments and what its stdout is, then runs the real one.
    let log = dir.join("curl.log");
    let wrapper = dir.join("curl-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{log}'\necho \"stdout=$(readlink /proc/$$/fd/1)\" >> '{log}'\nexec curl \"$@\"\n",
            log = log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let xdg = dir.join("xdg");
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        ("PROFILER_SYMBOL_SERVER_CURL", wrapper.display().to_string()),
    ];
    let m = &modules[0];
    let args = ["--breakpad-symbol-server".to_string(), server.url()];
    let (a, _) = query_one(&args, &env, m.name, m.id, m.frames[0].0);
    assert_eq!(
        a["results"][0]["stacks"][0][0]["function"],
        json!(m.frames[0].1)
    );
    let log = std::fs::read_to_string(&log).unwrap();
    let argv: Vec<&str> = log.lines().collect();
    assert!(
        !argv.iter().any(|a| *a == "--output" || *a == "-o"),
        "{log}"
    );
    for flag in ["--max-time", "--compressed", "--max-filesize"] {
        assert!(argv.contains(&flag), "{flag} missing: {log}");
    }
    assert!(
        !argv.contains(&"--location"),
        "curl follows no redirect itself: {log}"
    );
    let stdout = argv.iter().find_map(|a| a.strip_prefix("stdout=")).unwrap();
    assert!(stdout.contains(".libfake.so.sym.part-"), "{log}");
    let root = xdg.join("profiler-symbol-server");
    let file = root.join(format!("breakpad/{}/{}/libfake.so.sym", m.name, m.id));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    for d in [
        root.clone(),
        root.join("breakpad"),
        file.parent().unwrap().to_path_buf(),
    ] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
}

#[test]
fn without_a_cache_folder_servers_are_not_used_and_nothing_goes_to_tmp() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-nocache");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let server = Fake::start(files_handler(store));
    let m = &modules[0];
    let request = json!({"memoryMap": [[m.name, m.id]], "stacks": [[[0, m.frames[0].0]]]});
    let out = common::run_with_stdin(
        Command::new(BIN)
            .args([
                "query",
                "/symbolicate/v5",
                "--breakpad-symbol-server",
                &server.url(),
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMPDIR", dir.join("tmp")),
        request.to_string().as_bytes(),
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no cache folder"), "{stderr}");
    assert!(server.requests().is_empty());
    assert!(!dir.join("tmp").exists());
}

#[test]
fn oversized_chunked_answers_and_endless_redirects_are_cut_off() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-bounds");
    let big = Fake::start(|_: &str| Reply::Chunked(vec![b'x'; 3 << 20]));
    let xdg = dir.join("xdg");
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        (
            "PROFILER_SYMBOL_SERVER_MAX_DOWNLOAD",
            (1u64 << 20).to_string(),
        ),
    ];
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let (a, stderr) = query_one(
        &["--breakpad-symbol-server".to_string(), big.url()],
        &env,
        "big.so",
        id,
        0x10,
    );
    assert!(stderr.contains("larger than the limit"), "{stderr}");
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
    assert!(partial_files(&xdg).is_empty());
    assert!(
        !xdg.join("profiler-symbol-server/breakpad/big.so")
            .join(id)
            .join("big.sym")
            .exists()
    );
    // A server that redirects to itself forever: given up after 5 redirects.
    let looping = Arc::new(Mutex::new(String::new()));
    let l = looping.clone();
    let redirector =
        Fake::start(move |_: &str| Reply::Redirect(format!("{}/again", l.lock().unwrap())));
    *looping.lock().unwrap() = redirector.url();
    let (_, stderr) = query_one(
        &["--breakpad-symbol-server".to_string(), redirector.url()],
        &env,
        "loop.so",
        id,
        0x10,
    );
    assert!(stderr.contains("more than 5 redirects"), "{stderr}");
    assert_eq!(redirector.requests().len(), 6);
}

/// A front server that answers every request with a redirect to `to`.
fn redirect_to(to: String) -> Fake {
    Fake::start(move |_: &str| Reply::Redirect(to.clone()))
}

#[test]
fn redirects_to_curl_globs_or_to_this_machine_make_no_request() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-globs");
    let env = [("XDG_CACHE_HOME", dir.join("xdg").display().to_string())];
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    // A service on this machine, and a "remote" server holding the file.
    let secret = Fake::start(|_: &str| Reply::Body(b"secret".to_vec()));
    let remote = Fake::start(|_: &str| Reply::Body(b"MODULE Linux x86_64 X a.so\n".to_vec()));
    let port = |f: &Fake| f.addr.port();
    let cases = [
        // curl would ask both; the host check would read `{127.0.0.1`.
        format!(
            "http://{{127.0.0.1:{}/secret,127.0.0.1:{}/final}}",
            port(&secret),
            port(&remote)
        ),
        // curl would ask 500 times and concatenate the answers.
        format!("{}/final[1-500]", remote.url()),
        // A name that is this machine (looked up here, before any request).
        format!("http://localhost:{}/secret", port(&secret)),
    ];
    for (i, to) in cases.iter().enumerate() {
        let front = redirect_to(to.clone());
        let (a, stderr) = query_one(
            &["--breakpad-symbol-server".to_string(), front.url()],
            &env,
            &format!("m{i}.so"),
            id,
            0x10,
        );
        assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
        assert!(stderr.contains("refused"), "{to}: {stderr}");
        assert_eq!(front.requests().len(), 1, "{to}");
        if i == 2 {
            // Refused by the address the name has, not by its spelling.
            assert!(
                stderr.contains("127.0.0.1") || stderr.contains("::1"),
                "{stderr}"
            );
        }
    }
    assert_eq!(secret.requests(), Vec::<String>::new());
    assert_eq!(remote.requests(), Vec::<String>::new());
    assert!(partial_files(&dir.join("xdg")).is_empty());
}

#[test]
fn one_deadline_bounds_a_download_over_all_its_hops() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-deadline");
    let xdg = dir.join("xdg");
    // Moving all the time (never a stall), but taking 100 s for its 1 MB.
    let slow = Fake::start(|_: &str| Reply::Throttled(vec![b'x'; 1 << 20], 1 << 10));
    let front = redirect_to(format!("{}/file", slow.url()));
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        ("PROFILER_SYMBOL_SERVER_DOWNLOAD_SECONDS", "2".to_string()),
    ];
    let t = std::time::Instant::now();
    let (a, stderr) = query_one(
        &["--breakpad-symbol-server".to_string(), front.url()],
        &env,
        "slow.so",
        "0123456789ABCDEF0123456789ABCDEF0",
        0x10,
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(60));
    assert!(
        stderr.contains("not complete after 2 s, the limit for one download"),
        "{stderr}"
    );
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
    assert_eq!((front.requests().len(), slow.requests().len()), (1, 1));
    assert!(partial_files(&xdg).is_empty());
}

// ---------------------------------------------------------------------------------------
// Profiles recorded on this machine: stripped binaries at the libs' paths

/// A profile lib whose file name and debug name differ (PE: `x.dll`, `x.pdb`).
fn lib_at(name: &str, debug_name: &str, id: &str, path: &Path) -> Value {
    let mut l = lib(debug_name, id, &path.display().to_string(), None);
    l["name"] = json!(name);
    l
}

/// Copies one module's `.sym` from the corpus store into `store`.
fn copy_sym(corpus: &Path, store: &Path, debug_name: &str, id: &str) {
    let stem = debug_name.strip_suffix(".pdb").unwrap_or(debug_name);
    let rel = format!("{debug_name}/{id}/{stem}.sym");
    std::fs::create_dir_all(store.join(&rel).parent().unwrap()).unwrap();
    std::fs::copy(corpus.join("breakpad").join(&rel), store.join(&rel)).unwrap();
}

/// A comparison of an answered frame with a truth entry.
type Check = fn(&Value, &Value) -> Result<(), String>;

/// (frames agreeing with `check`, frames asked).
fn agreement(
    got: &[Value],
    truth: &common::Truth,
    check: fn(&Value, &Value) -> Result<(), String>,
) -> (usize, usize) {
    let ok = got
        .iter()
        .zip(&truth.addresses)
        .filter(|(g, t)| check(g, t).is_ok())
        .count();
    (ok, got.len())
}

#[test]
fn stripped_local_files_are_named_from_the_symbol_servers() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-stripped");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // ELF: fully stripped (no .symtab, no DWARF) with `strip` from binutils.
    let elf_truth = common::Truth::load(&corpus.join("truth/elf/libmathlib.so.truth.json"));
    let elf = bin.join("libmathlib.so");
    run(Command::new("strip")
        .arg("-o")
        .arg(&elf)
        .arg(corpus.join("elf/libmathlib.so")));
    // Mach-O: the dylib without its dSYM (symbol table only).
    let macho_truth =
        common::Truth::load(&corpus.join("truth/macho/x86_64/libmathlib.dylib.truth.json"));
    let macho = bin.join("libmathlib.dylib");
    std::fs::copy(corpus.join("macho/x86_64/libmathlib.dylib"), &macho).unwrap();
    // PE without its PDB, twice: one on a Windows symbol server, one on Tecken.
    let pe_truth = common::Truth::load(&corpus.join("truth/pe/mathlib.dll.truth.json"));
    let pe = bin.join("mathlib.dll");
    std::fs::copy(corpus.join("pe/mathlib.dll"), &pe).unwrap();
    let pe2_truth = common::Truth::load(&corpus.join("truth/pe/geomcpp.dll.truth.json"));
    let pe2 = bin.join("geomcpp.dll");
    std::fs::copy(corpus.join("pe/geomcpp.dll"), &pe2).unwrap();
    // A module with its DWARF on disk: no server is asked for it.
    let dwarf_truth =
        common::Truth::load(&corpus.join("truth/elf/shapes-gcc-O2-dwarf4.truth.json"));
    let dwarf = bin.join("shapes-gcc-O2-dwarf4");
    std::fs::copy(corpus.join("elf/shapes-gcc-O2-dwarf4"), &dwarf).unwrap();

    let store = dir.join("tecken-store");
    for (name, t) in [
        ("libmathlib.so", &elf_truth),
        ("libmathlib.dylib", &macho_truth),
        ("geomcpp.pdb", &pe2_truth),
        ("shapes-gcc-O2-dwarf4", &dwarf_truth),
    ] {
        copy_sym(&corpus, &store, name, &t.breakpad_id());
    }
    let (tecken, _storage) = tecken(store);
    let symsrv_root = dir.join("symsrv");
    let d = symsrv_root.join("mathlib.pdb").join(pe_truth.breakpad_id());
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(corpus.join("pe/mathlib.pdb"), d.join("mathlib.pdb")).unwrap();
    let symsrv = Fake::start(files_handler(symsrv_root));

    let profile = dir.join("profile.json");
    let modules = [
        ("libmathlib.so", "libmathlib.so", &elf_truth, &elf),
        ("libmathlib.dylib", "libmathlib.dylib", &macho_truth, &macho),
        ("mathlib.dll", "mathlib.pdb", &pe_truth, &pe),
        ("geomcpp.dll", "geomcpp.pdb", &pe2_truth, &pe2),
        (
            "shapes-gcc-O2-dwarf4",
            "shapes-gcc-O2-dwarf4",
            &dwarf_truth,
            &dwarf,
        ),
    ];
    let libs: Vec<Value> = modules
        .iter()
        .map(|(n, d, t, p)| lib_at(n, d, &t.breakpad_id(), p))
        .collect();
    write_profile(&profile, &libs);
    let args = |tecken_url: String, symsrv_url: String| {
        vec![
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            tecken_url,
            "--windows-symbol-server".into(),
            symsrv_url,
        ]
    };
    let cache = dir.join("cache");
    let env = [("XDG_CACHE_HOME", cache.display().to_string())];
    let ask = |server: &Running| -> Vec<Vec<Value>> {
        modules
            .iter()
            .map(|(_, d, t, _)| {
                let offsets: Vec<(usize, u64)> = t.offsets().into_iter().map(|o| (0, o)).collect();
                frames(&server.symbolicate(&[(d.to_string(), t.breakpad_id())], &offsets))
            })
            .collect()
    };
    let checks: [Check; 5] = [
        common::check_frame_against_sym,
        common::check_frame_against_sym,
        common::check_frame,
        common::check_frame_against_sym,
        common::check_frame,
    ];
    let score = |answers: &[Vec<Value>]| -> Vec<(usize, usize)> {
        answers
            .iter()
            .zip(&modules)
            .zip(checks)
            .map(|((got, m), check)| agreement(got, m.2, check))
            .collect()
    };

    let server = start(&args(tecken.url(), symsrv.url()), &env);
    let first = score(&ask(&server));
    eprintln!("stripped, from the servers: {first:?}");
    for ((ok, n), m) in first.iter().zip(&modules) {
        assert!(ok * 100 >= n * 98, "{}: {ok}/{n}\n{}", m.0, server.stderr());
    }
    // Every needed file asked for once, nothing for the module with DWARF.
    let asked = tecken.requests();
    for name in ["libmathlib.so.sym", "libmathlib.dylib.sym", "geomcpp.sym"] {
        assert_eq!(
            asked.iter().filter(|r| r.ends_with(name)).count(),
            1,
            "{asked:?}"
        );
    }
    assert!(!asked.iter().any(|r| r.contains("shapes")), "{asked:?}");
    assert_eq!(symsrv.count("mathlib.pdb"), 1);
    // Each module's line says which server answered.
    let stderr = server.stderr();
    assert!(
        stderr.contains(&format!(
            "libmathlib.so: Breakpad symbols (from {})",
            tecken.url()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("(from {})", symsrv.url())),
        "{stderr}"
    );
    drop(server);

    // Again with every server refused: the same answers from the cache.
    let server = start(&args(refused_url(), refused_url()), &env);
    assert_eq!(score(&ask(&server)), first);
    drop(server);

    // Every server says 404: the local tables still answer (names, no lines).
    let nothing = Fake::start(|_: &str| Reply::NotFound);
    let server = start(
        &args(nothing.url(), nothing.url()),
        &[(
            "XDG_CACHE_HOME",
            dir.join("cache-empty").display().to_string(),
        )],
    );
    let local = ask(&server);
    let named = |fs: &[Value]| fs.iter().filter(|f| f.get("function").is_some()).count();
    // The Mach-O's symbol table and the PE exports name most frames; no line anywhere.
    assert!(
        named(&local[1]) * 2 > local[1].len(),
        "{:?}",
        &local[1][..3]
    );
    for m in &local[..4] {
        assert!(m.iter().all(|f| f.get("line").is_none()));
    }
    assert!(nothing.requests().len() >= 4);
}

/// A stripped copy of a corpus ELF, its truth and its `.sym` (dump_syms).
fn stripped_corpus_elf(dir: &Path, name: &str) -> (PathBuf, common::Truth, Vec<u8>) {
    let corpus = common::corpus();
    let truth = common::Truth::load(&corpus.join(format!("truth/elf/{name}.truth.json")));
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    run(Command::new("strip")
        .arg("-o")
        .arg(&path)
        .arg(corpus.join("elf").join(name)));
    let sym = std::fs::read(
        corpus
            .join("breakpad")
            .join(name)
            .join(truth.breakpad_id())
            .join(format!("{name}.sym")),
    )
    .unwrap();
    (path, truth, sym)
}

#[test]
fn a_slow_download_that_keeps_moving_is_awaited_and_a_stalled_one_gives_local_names() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-slow");
    let name = "shapes-gcc-O2-dwarf4";
    let (path, truth, sym) = stripped_corpus_elf(&dir, name);
    // About 21 s for the whole file, never 10 s without a byte.
    let per_tick = sym.len() / 210 + 1;
    let slow = Fake::start(move |_: &str| Reply::Throttled(sym.clone(), per_tick));
    let stall = Fake::start(|_: &str| Reply::Stall);
    let profile = dir.join("profile.json");
    let id = truth.breakpad_id();
    write_profile(&profile, &[lib_at(name, name, &id, &path)]);
    let offsets: Vec<(usize, u64)> = truth.offsets().into_iter().map(|o| (0, o)).collect();
    let map = [(name.to_string(), id.clone())];
    let ask = |server_url: String, cache: &str| {
        let server = start(
            &[
                profile.display().to_string(),
                "--breakpad-symbol-server".into(),
                server_url,
            ],
            &[("XDG_CACHE_HOME", dir.join(cache).display().to_string())],
        );
        let t = std::time::Instant::now();
        let got = frames(&server.symbolicate(&map, &offsets));
        (got, t.elapsed(), server.stderr())
    };
    let (slow_got, slow_took, stderr) = std::thread::scope(|s| {
        let stalled = s.spawn(|| ask(stall.url(), "cache-stall"));
        let slow = ask(slow.url(), "cache-slow");
        let (got, took, stderr) = stalled.join().unwrap();
        eprintln!("stalled server: answered after {took:?}");
        // The local tables answer: stripped, so `fun_…` names from unwind tables, no lines.
        let named = got.iter().filter(|f| f.get("function").is_some()).count();
        assert!(named * 2 > got.len(), "{named}/{}\n{stderr}", got.len());
        assert!(got.iter().all(|f| f.get("line").is_none()));
        assert!(took < std::time::Duration::from_secs(60));
        slow
    });
    // No bound on the time here (a loaded machine stretches any): the full names and
    // lines below can only come from the whole download.
    eprintln!("slow server: answered after {slow_took:?}");
    let (ok, n) = agreement(&slow_got, &truth, common::check_frame_against_sym);
    assert!(ok * 100 >= n * 98, "{ok}/{n}\n{stderr}");
    // Progress was reported while it ran, and once at the end.
    assert!(stderr.contains("MB so far"), "{stderr}");
    assert!(
        stderr.contains(&format!("{name}.sym: 0.0 MB in ")),
        "{stderr}"
    );
}

#[test]
fn gzip_transfers_are_asked_for_and_decoded() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-gzip");
    // A module of 3000 functions: a .sym as big as the records of a real library.
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let mut sym = format!("MODULE Linux x86_64 {id} libbig.so\nFILE 0 /src/big/module.c\n");
    for i in 0..3000u64 {
        let start = 0x1000 + i * 0x40;
        sym += &format!("FUNC {start:x} 40 0 big_function_number_{i}(int, char const*)\n");
        sym += &format!(
            "{start:x} 20 {} 0\n{:x} 20 {} 0\n",
            10 + i * 3,
            start + 0x20,
            11 + i * 3
        );
    }
    let sent = Arc::new(Mutex::new(0usize));
    let s2 = sent.clone();
    let body = sym.clone().into_bytes();
    let server = Fake::start(move |_: &str| Reply::GzipIfAsked(body.clone(), s2.clone()));
    let offsets: Vec<u64> = (0..3000u64)
        .step_by(97)
        .map(|i| 0x1000 + i * 0x40 + 0x24)
        .collect();
    let request = json!({"memoryMap": [["libbig.so", id]],
                         "stacks": [offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()]});
    let cache = dir.join("cache").display().to_string();
    let a = common::query_stdin(
        &["/symbolicate/v5", "--breakpad-symbol-server", &server.url()],
        &[("XDG_CACHE_HOME", &cache)],
        &request,
    );
    let got = &a["results"][0]["stacks"][0];
    for (k, o) in offsets.iter().enumerate() {
        let i = (o - 0x1000) / 0x40;
        assert_eq!(
            got[k]["function"],
            json!(format!("big_function_number_{i}(int, char const*)"))
        );
        assert_eq!(got[k]["line"], json!(11 + i * 3));
    }
    let sent = *sent.lock().unwrap();
    eprintln!("gzip: {sent} bytes sent for {} plain", sym.len());
    assert!(sent * 100 <= sym.len() * 40, "{sent} of {}", sym.len());
    // Stored decoded.
    let stored = std::fs::read(
        dir.join("cache/profiler-symbol-server/breakpad/libbig.so")
            .join(id)
            .join("libbig.so.sym"),
    )
    .unwrap();
    assert_eq!(stored, sym.as_bytes());
}

#[test]
fn names_that_mean_more_than_a_file_on_windows_are_refused() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-windows-names");
    let server = Fake::start(|_: &str| Reply::NotFound);
    let xdg = dir.join("xdg");
    let id = "0123456789ABCDEF0123456789ABCDEF1";
    let names = [
        "C:x",
        "x.pdb:stream",
        "CON",
        "NUL.pdb",
        "com1.dll",
        "name.",
        "name ",
        "a|b.pdb",
    ];
    let map: Vec<Value> = names.iter().map(|n| json!([n, id])).collect();
    let request = json!({"memoryMap": map,
                         "stacks": [names.iter().enumerate().map(|(i, _)| json!([i, 0x10])).collect::<Vec<_>>()]});
    let cache = xdg.display().to_string();
    let a = common::query_stdin(
        &[
            "/symbolicate/v5",
            "--breakpad-symbol-server",
            &server.url(),
            "--symbol-dir",
            &dir.display().to_string(),
        ],
        &[("XDG_CACHE_HOME", &cache)],
        &request,
    );
    let errors = &a["results"][0]["module_errors"];
    for n in names {
        let e = errors[format!("{n}/{id}")].to_string();
        assert!(e.contains("InvalidDebugName"), "{n}: {e}");
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // Nothing was created anywhere: the scratch folder holds only the (unused) cache root.
    let mut found = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                found.push(e.path());
            }
        }
    }
    assert!(found.is_empty(), "{found:?}");
}

/// Issue 27 item 3: the file names in a downloaded debug file are the server's choice, so
/// `/source/v1` must not open them (here a local file holding a secret); the same file
/// found locally is still served.
#[test]
fn sources_are_never_served_for_downloaded_debug_files() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-source-refused");
    let elf = build_elf(&dir);
    let source_file = elf.frames[0].2.clone();
    // The file the debug info names: a local file whose contents must not leak.
    let secret = "SECRET-7f3a9c";
    let mut text = std::fs::read_to_string(&source_file).unwrap();
    text.push_str(&format!("// {secret}\n"));
    std::fs::write(&source_file, &text).unwrap();
    let stripped = dir.join("stripped/remote_prog");
    std::fs::create_dir_all(stripped.parent().unwrap()).unwrap();
    run(Command::new("objcopy")
        .arg("--strip-debug")
        .arg(&elf.binary)
        .arg(&stripped));
    let di_root = dir.join("root");
    let di_dir = di_root.join("buildid").join(&elf.build_id);
    std::fs::create_dir_all(&di_dir).unwrap();
    std::fs::copy(&elf.binary, di_dir.join("debuginfo")).unwrap();
    let debuginfod = Fake::start(files_handler(di_root));
    let env = [
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        (
            "DEBUGINFOD_CACHE_PATH",
            dir.join("dcache").display().to_string(),
        ),
        ("DEBUGINFOD_URLS", debuginfod.url()),
    ];
    let (offset, function) = (elf.frames[0].0, elf.frames[0].1.clone());
    let map = vec![("remote_prog".to_string(), elf.breakpad_id.clone())];
    let source = |server: &Running| -> Value {
        let body = json!({"debugName": "remote_prog", "debugId": elf.breakpad_id,
                          "moduleOffset": format!("{offset:#x}"), "file": source_file});
        let path = format!("/{}/source/v1", server.base.rsplit('/').next().unwrap());
        let r = http(
            server.addr,
            "POST",
            &path,
            &server.addr.to_string(),
            &[],
            &serde_json::to_vec(&body).unwrap(),
        );
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()
    };
    // Control: the unstripped binary found locally serves its source.
    let profile = dir.join("local.json");
    write_profile(
        &profile,
        &[lib(
            "remote_prog",
            &elf.breakpad_id,
            elf.binary.to_str().unwrap(),
            Some(&elf.build_id),
        )],
    );
    let server = start(&[profile.display().to_string()], &env);
    assert_eq!(
        server.symbolicate(&map, &[(0, offset)])["results"][0]["stacks"][0][0]["function"],
        json!(function)
    );
    assert_eq!(source(&server)["source"], json!(text));
    drop(server);
    // The stripped binary with its DWARF from debuginfod: downloaded, then (second run)
    // from the debuginfod cache; refused both times.
    let profile = dir.join("remote.json");
    write_profile(
        &profile,
        &[lib(
            "remote_prog",
            &elf.breakpad_id,
            stripped.to_str().unwrap(),
            Some(&elf.build_id),
        )],
    );
    for run in ["download", "cache"] {
        let server = start(&[profile.display().to_string()], &env);
        let frame = &frames(&server.symbolicate(&map, &[(0, offset)]))[0];
        // The debug info from the server does name the file.
        assert_eq!(
            frame["file"].as_str(),
            Some(source_file.as_str()),
            "{run}: {frame}"
        );
        let v = source(&server);
        assert!(
            v.get("source").is_none(),
            "{run}: the secret was served: {v}"
        );
        assert!(!v.to_string().contains(secret), "{run}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains("download"),
            "{run}: {v}"
        );
    }
    assert_eq!(debuginfod.requests().len(), 1);
}

/// A server that failed (a 503 here) is paused, not dropped for the run: once its pause is
/// over (1 s through PROFILER_SYMBOL_SERVER_RETRY_AFTER; 30 s by default) it is asked
/// again, and its symbols arrive without a restart.
#[test]
fn a_failed_symbol_server_is_asked_again_after_its_pause() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-retry");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules[..1]);
    let files = files_handler(store);
    let failed_once = Arc::new(Mutex::new(false));
    let flag = failed_once.clone();
    let server_side = Fake::start(move |target: &str| {
        let mut failed = flag.lock().unwrap();
        if !*failed {
            *failed = true;
            return Reply::Unavailable;
        }
        files(target)
    });
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let env = [
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("PROFILER_SYMBOL_SERVER_RETRY_AFTER", "1".to_string()),
    ];
    let server = start(
        &[
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            server_side.url(),
        ],
        &env,
    );
    let m = &modules[0];
    let map = vec![(m.name.to_string(), m.id.to_string())];
    let offsets = [(0, m.frames[0].0)];
    let first = server.symbolicate(&map, &offsets);
    assert!(frames(&first)[0].get("function").is_none());
    // The warning was written before the answer; the stderr reader may lag behind.
    let said = |s: &str| s.contains("failed (") && s.contains("not asked again for 1 s");
    let since = std::time::Instant::now();
    while !said(&server.stderr()) && since.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(said(&server.stderr()), "{}", server.stderr());
    // Asked again until the pause is over: then the server is tried and answers.
    let start_time = std::time::Instant::now();
    let named = loop {
        let a = server.symbolicate(&map, &offsets);
        if let Some(f) = frames(&a)[0].get("function") {
            break f.clone();
        }
        let errors = a["results"][0]["module_errors"].to_string();
        assert!(
            errors.contains("ServerDown") && errors.contains("asked again in"),
            "{errors}"
        );
        assert!(start_time.elapsed().as_secs() < 60, "never asked again");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(named, json!(m.frames[0].1));
    assert_eq!(
        server_side.requests().len(),
        2,
        "{:?}",
        server_side.requests()
    );
    assert_eq!(server.interrupt(), Some(0));
}
