//! What the tests serve and ask: Breakpad modules, a small ELF build, profiles, and the
//! binary as a server with its own environment.

use super::*;

/// A Breakpad module written here: its records are the expected answers.
/// (module offset, function, file, line)
pub(crate) type SymFrame = (u64, &'static str, &'static str, u32);

pub(crate) struct SymModule {
    pub(crate) name: &'static str,
    pub(crate) id: &'static str,
    pub(crate) frames: Vec<SymFrame>,
}

pub(crate) fn sym_modules() -> Vec<SymModule> {
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

pub(crate) fn sym_text(m: &SymModule) -> String {
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
pub(crate) fn write_store(root: &Path, modules: &[SymModule]) {
    for m in modules {
        let stem = m.name.strip_suffix(".pdb").unwrap_or(m.name);
        let dir = root.join(m.name).join(m.id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{stem}.sym")), sym_text(m)).unwrap();
    }
}

/// A C program compiled here, with its build ID and what binutils say about it.
pub(crate) struct Elf {
    pub(crate) binary: PathBuf,
    pub(crate) build_id: String,
    pub(crate) breakpad_id: String,
    /// (module offset, function per nm, file:line per addr2line)
    pub(crate) frames: Vec<(u64, String, String, u32)>,
}

pub(crate) fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn build_elf(dir: &Path) -> Elf {
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
    let breakpad_id = breakpad_id_of(&build_id);
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

pub(crate) fn write_profile(path: &Path, libs: &[Value]) {
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

pub(crate) fn lib(name: &str, id: &str, path: &str, code_id: Option<&str>) -> Value {
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

pub(crate) type Running = Server;

pub(crate) fn start(args: &[String], env: &[(&str, String)]) -> Running {
    Server::start_env(args, env)
}

pub(crate) fn frames(answer: &Value) -> Vec<Value> {
    answer["results"][0]["stacks"][0]
        .as_array()
        .unwrap()
        .clone()
}

/// Files under `dir` whose name marks a partial download.
pub(crate) fn partial_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains("part-") {
                out.push(p);
            }
        }
    }
    out
}

/// The Breakpad ID the profile gives a module with this GNU build ID (SPEC section 5:
/// first 16 bytes, fields 0-3, 4-5, 6-7 byte-swapped, age 0).
pub(crate) fn breakpad_id_of(build_id: &str) -> String {
    let mut b: Vec<u8> = (0..32)
        .step_by(2)
        .map(|i| u8::from_str_radix(&build_id[i..i + 2], 16).unwrap())
        .collect();
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    b.iter().map(|x| format!("{x:02X}")).collect::<String>() + "0"
}

/// A stripped copy of `elf`'s binary (`DIR/stripped/remote_prog`) and a fake debuginfod
/// serving the unstripped one by its build ID.
pub(crate) fn stripped_with_debuginfod(dir: &Path, elf: &Elf) -> (PathBuf, Fake) {
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
    (stripped, Fake::start(files_handler(di_root)))
}
