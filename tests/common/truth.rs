//! The ground truth of the corpus and the SPEC's rules for comparing an answer with it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::corpus;

// ---------------------------------------------------------------------------------------
// Ground truth

pub struct Truth {
    pub file: PathBuf,
    pub header: Value,
    pub addresses: Vec<Value>,
}

impl Truth {
    pub fn load(path: &Path) -> Truth {
        let text = std::fs::read_to_string(path).unwrap();
        let split = text.find("\"addresses\": [").unwrap();
        let head = text[..split].trim_end().trim_end_matches(',').to_string() + "}";
        let header: Value = serde_json::from_str(&head).unwrap();
        let addresses = text[split + 14..]
            .lines()
            .map(|l| l.trim().trim_end_matches(','))
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        Truth {
            file: path.to_path_buf(),
            header,
            addresses,
        }
    }

    /// The case name, e.g. `elf/shapes-gcc-O2-dwarf4`.
    pub fn case(&self) -> String {
        let s = self.file.to_string_lossy();
        let s = s.split("/truth/").nth(1).unwrap();
        s.trim_end_matches(".truth.json").to_string()
    }

    /// The binary the truth describes.
    pub fn image(&self) -> PathBuf {
        let rel = self.header["image_file"].as_str().unwrap();
        let p = self.file.parent().unwrap().join(rel);
        p.canonicalize().unwrap_or(p)
    }

    pub fn breakpad_id(&self) -> String {
        self.header["module"]["breakpad_id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    pub fn offsets(&self) -> Vec<u64> {
        self.addresses
            .iter()
            .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
            .collect()
    }
}

pub fn parse_hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

/// Every truth file under `truth/<sub>`, sorted.
pub fn truth_files(sub: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.to_string_lossy().ends_with(".truth.json") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    let dir = corpus().join("truth").join(sub);
    if dir.is_dir() {
        walk(&dir, &mut out);
    }
    out.sort();
    out
}

fn fold(s: &str) -> String {
    let mut s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    while s.contains("> >") {
        s = s.replace("> >", ">>");
    }
    s
}

fn strip_rust_hash(s: &str) -> &str {
    match s.rfind("::h") {
        Some(i) if s.len() - i == 19 && s[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => {
            &s[..i]
        }
        _ => s,
    }
}

/// The qualified name once template arguments, the argument list and any return type
/// are dropped (demanglers differ in those).
fn reduce(s: &str) -> String {
    let s = fold(s)
        .replace("(anonymous namespace)", "{anon}")
        // MSVC's spelling, in truths of older tools (crash.sym's dump_syms).
        .replace("`anonymous namespace'", "{anon}")
        .replace("operator()", "operator{call}");
    let mut out = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let mut t = out.trim();
    // Clone suffixes: llvm's " (.isra.0)", c++filt's " [clone .isra.0]".
    while let Some(i) = t.rfind(" (.").or_else(|| t.rfind(" [clone ")) {
        if !t.ends_with(')') && !t.ends_with(']') {
            break;
        }
        t = t[..i].trim_end();
    }
    for q in [" const", " volatile", " &&", " &", "&&", "&"] {
        t = t.strip_suffix(q).unwrap_or(t).trim_end();
    }
    // Drop the trailing argument list: from its matching '(' on.
    if t.ends_with(')') {
        let mut d = 0i32;
        for (i, c) in t.char_indices().rev() {
            match c {
                ')' => d += 1,
                '(' => {
                    d -= 1;
                    if d == 0 {
                        t = t[..i].trim_end();
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    // Drop a return type: keep what follows the last space outside parentheses.
    let mut d = 0i32;
    let mut start = 0;
    for (i, c) in t.char_indices() {
        match c {
            '(' | '{' => d += 1,
            ')' | '}' => d -= 1,
            ' ' if d == 0 => start = i + 1,
            _ => {}
        }
    }
    t[start..].to_string()
}

/// The SPEC's rule: equal to an accepted spelling after folding, or the same reduced name.
pub fn name_matches(got: &str, spellings: &[&str]) -> bool {
    let got = strip_rust_hash(got);
    spellings
        .iter()
        .any(|s| fold(got) == fold(strip_rust_hash(s)))
        || spellings
            .iter()
            .any(|s| reduce(got) == reduce(strip_rust_hash(s)))
}

fn spellings(v: &Value) -> Vec<&str> {
    let mut out: Vec<&str> = ["function", "function_llvm", "function_short"]
        .iter()
        .filter_map(|k| v[*k].as_str())
        .collect();
    // A linkage name that is not mangled (C, or MSVC C names) is a spelling too.
    if let Some(m) = v["function_mangled"].as_str()
        && !m.starts_with("_Z")
        && !m.starts_with("__Z")
        && !m.starts_with('?')
        && !m.starts_with("_R")
    {
        out.push(m);
    }
    if let Some(alts) = v["alternative_names_same_code"].as_array() {
        out.extend(alts.iter().filter_map(Value::as_str));
    }
    out
}

/// Normalises the profiler's special path for Rust std files back to `/rustc/<hash>/`.
fn canonical_file(f: &str) -> String {
    if let Some(rest) = f.strip_prefix("git:github.com/rust-lang/rust:")
        && let Some((path, hash)) = rest.rsplit_once(':')
    {
        return format!("/rustc/{hash}/{path}");
    }
    f.to_string()
}

/// Compares one answered frame with a truth entry; `Err` says what differs.
/// Whether `got` names the symbol `want` (its linkage name, as the truth gives it): the
/// same text, or a demangled spelling whose last path segment the mangled name carries as
/// a whole identifier: Itanium and Rust manglings spell each identifier out after its
/// length (`3foo`; Rust v0 may put `_` between), so `foo` is not found inside `3foobar`.
fn same_symbol(got: &str, want: &Value) -> bool {
    let Some(want) = want.as_str() else {
        return false;
    };
    if got == want {
        return true;
    }
    let mangled = ["_Z", "__Z", "_R"].iter().any(|p| want.starts_with(p));
    let last = got.rsplit("::").next().unwrap_or(got);
    let last = last.split(['<', '(']).next().unwrap_or(last);
    if !mangled || last.is_empty() {
        return false;
    }
    let n = last.len();
    [format!("{n}{last}"), format!("{n}_{last}")]
        .iter()
        .any(|ident| {
            want.match_indices(ident.as_str()).any(|(i, _)| {
                // The length starts where no other digit precedes it.
                !want[..i].ends_with(|c: char| c.is_ascii_digit())
            })
        })
}

pub fn check_frame(frame: &Value, entry: &Value) -> Result<(), String> {
    let e = &entry["expect"];
    let offset = parse_hex(entry["module_offset"].as_str().unwrap());
    if frame["module_offset"] != json!(format!("{offset:#x}")) {
        return Err(format!(
            "module_offset {} for {offset:#x}",
            frame["module_offset"]
        ));
    }
    if e["found"] == json!(false) {
        // The truth allows the nearest preceding symbol (a zero-size one, such as
        // crtstuff's `register_tm_clones`, reaches to the next function start).
        let nearest = &e["nearest_preceding_symbol"];
        let start = |f: &Value| {
            let off = frame["function_offset"].as_str().map(parse_hex)?;
            offset
                .checked_sub(off)
                .filter(|_| same_symbol(f.as_str().unwrap_or(""), &nearest["name"]))
        };
        if let Some(f) = frame.get("function")
            && (nearest.is_null() || start(f) != nearest["start"].as_str().map(parse_hex))
        {
            return Err(format!("expected no function, got {f}"));
        }
        if frame.get("file").is_some() || frame.get("line").is_some() {
            return Err("expected no file/line".into());
        }
        return Ok(());
    }
    let got = frame["function"]
        .as_str()
        .ok_or_else(|| format!("no function (expected {})", e["function"]))?;
    if !name_matches(got, &spellings(e)) {
        return Err(format!("function {got:?}, expected {}", e["function"]));
    }
    let start = parse_hex(e["function_start"].as_str().unwrap());
    // An address in a part placed before the entry (gcc .cold) is measured from its part.
    let want_offset = if offset >= start {
        offset - start
    } else {
        offset - parse_hex(e["range_start"].as_str().unwrap())
    };
    if frame["function_offset"] != json!(format!("{want_offset:#x}")) {
        return Err(format!(
            "function_offset {}, expected {want_offset:#x}",
            frame["function_offset"]
        ));
    }
    if let Some(size) = e["function_size"].as_str()
        && frame["function_size"] != json!(size)
    {
        return Err(format!(
            "function_size {}, expected {size}",
            frame["function_size"]
        ));
    }
    // Our frames innermost first: the inlines, then the outer function.
    let mut got_frames: Vec<&Value> = frame["inlines"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    got_frames.push(frame);
    let want = e["frames_innermost_first"].as_array().unwrap();
    if got_frames.len() != want.len() {
        return Err(format!(
            "inline depth {}, expected {}",
            got_frames.len() - 1,
            want.len() - 1
        ));
    }
    for (k, (g, w)) in got_frames.iter().zip(want).enumerate() {
        let outer = k == want.len() - 1;
        let names = if outer { spellings(e) } else { spellings(w) };
        let gname = g["function"].as_str().unwrap_or("");
        if !name_matches(gname, &names) {
            return Err(format!(
                "frame {k}: function {gname:?}, expected {}",
                w["function"]
            ));
        }
        for key in ["file", "line"] {
            if g.get(key) == Some(&Value::Null) {
                return Err(format!("frame {k}: {key} is null (must be omitted)"));
            }
        }
        let gfile = g["file"]
            .as_str()
            .map(canonical_file)
            .map(|f| normalize_path(&f));
        let wfile = w["file"].as_str().map(normalize_path);
        match w["line"].as_u64() {
            // DWARF line 0: tools differ on the file (llvm names the unit); no line.
            None => {
                if g.get("line").is_some() {
                    return Err(format!("frame {k}: line {}, expected none", g["line"]));
                }
                if gfile.is_some() && gfile != wfile {
                    return Err(format!("frame {k}: file {gfile:?}, expected {}", w["file"]));
                }
            }
            Some(line) => {
                if gfile != wfile || g["line"].as_u64() != Some(line) {
                    return Err(format!(
                        "frame {k}: {gfile:?}:{}, expected {}:{line}",
                        g["line"], w["file"]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Agreement counts per case, printed as a table. Each answer is `Ok(label)` (how it
/// agreed: "matched", or a documented kind of oracle disagreement) or `Err(what differs)`.
#[derive(Default)]
pub struct Agreement {
    rows: Vec<(String, Vec<Result<&'static str, String>>)>,
    /// Mismatches tolerated: (case, module offset as the truth writes it, reason).
    allowed: Vec<(String, &'static str, &'static str)>,
}

impl Agreement {
    pub fn add(&mut self, case: &str, results: Vec<Result<(), String>>) {
        self.add_labeled(
            case,
            results.into_iter().map(|r| r.map(|()| "matched")).collect(),
        );
    }

    pub fn add_labeled(&mut self, case: &str, results: Vec<Result<&'static str, String>>) {
        self.rows.push((case.to_string(), results));
    }

    /// Lets `case` mismatch at each listed module offset (`"0x10bd"`), for its reason;
    /// they are still listed. A mismatch elsewhere fails.
    pub fn allow(&mut self, case: &str, at: &[(&'static str, &'static str)]) {
        for (offset, reason) in at {
            self.allowed.push((case.to_string(), offset, reason));
        }
    }

    /// Prints the table and panics on mismatches beyond what is allowed.
    pub fn finish(self, title: &str) {
        let mut labels: Vec<&'static str> = vec!["matched"];
        for (_, rs) in &self.rows {
            for l in rs.iter().flatten() {
                if !labels.contains(l) {
                    labels.push(l);
                }
            }
        }
        print!("\n{title}\n{:<48} {:>6}", "case", "cases");
        for l in &labels {
            print!(" {l:>12}");
        }
        println!(" {:>10}", "mismatched");
        let mut totals = vec![0usize; labels.len() + 2];
        let mut failures = Vec::new();
        for (case, rs) in &self.rows {
            print!("{case:<48} {:>6}", rs.len());
            totals[0] += rs.len();
            for (i, l) in labels.iter().enumerate() {
                let n = rs.iter().filter(|r| r.as_ref().ok() == Some(l)).count();
                totals[i + 1] += n;
                print!(" {n:>12}");
            }
            let errs: Vec<&String> = rs.iter().filter_map(|r| r.as_ref().err()).collect();
            totals[labels.len() + 1] += errs.len();
            println!(" {:>10}", errs.len());
            // An error starts with the offset, as the truth writes it (quoted).
            let reason = |e: &str| {
                let at = e.split(' ').next().unwrap_or("").trim_matches('"');
                self.allowed
                    .iter()
                    .find(|(c, o, _)| c == case && *o == at)
                    .map(|(_, _, r)| *r)
            };
            let (known, unknown): (Vec<&String>, Vec<&String>) =
                errs.iter().partition(|e| reason(e).is_some());
            for e in &known {
                println!("    allowed: {e} ({})", reason(e).unwrap_or_default());
            }
            failures.extend(unknown.iter().take(5).map(|e| format!("{case}: {e}")));
        }
        print!("{:<48} {:>6}", "total", totals[0]);
        for t in &totals[1..] {
            print!(" {t:>12}");
        }
        println!();
        assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
        assert!(totals[0] > 0, "no cases checked");
    }
}

/// Lexically drops `.` and `dir/..` from a `/` path (dump_syms prints paths normalised,
/// the DWARF may keep `../`).
pub fn normalize_path(p: &str) -> String {
    if !p.starts_with('/') {
        return p.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// For a truth entry where the Breakpad `.sym` itself disagrees with `expect`: the answer
/// must be what the `.sym` says (function start, innermost line, inline depth).
pub fn check_frame_against_sym(frame: &Value, entry: &Value) -> Result<(), String> {
    let offset = parse_hex(entry["module_offset"].as_str().unwrap());
    let s = &entry["breakpad_sym"];
    if s.is_null() {
        // No FUNC covers it: at most a PUBLIC's name, never a size or a line.
        if frame.get("function_size").is_some() || frame.get("line").is_some() {
            return Err(format!("no FUNC in the .sym, but got {frame}"));
        }
        return Ok(());
    }
    let start = parse_hex(s["function_start"].as_str().unwrap());
    if frame["function_offset"] != json!(format!("{:#x}", offset - start)) {
        return Err(format!(
            "function_offset {} vs .sym FUNC at {start:#x}",
            frame["function_offset"]
        ));
    }
    let depth = frame["inlines"].as_array().map_or(0, Vec::len);
    let want_depth = s["inlines_outer_to_inner"].as_array().map_or(0, Vec::len);
    if depth != want_depth {
        return Err(format!("inline depth {depth} vs .sym {want_depth}"));
    }
    let innermost = frame["inlines"].get(0).unwrap_or(frame);
    let want_line = s["line"]["line"].as_u64().filter(|&l| l != 0);
    if innermost["line"].as_u64() != want_line {
        return Err(format!("line {} vs .sym {want_line:?}", innermost["line"]));
    }
    Ok(())
}

/// For `expect.found: false` where the answer names the nearest preceding symbol from a
/// symbol-only record (Breakpad PUBLIC): name only, no size, no file/line.
pub fn is_public_fallback(frame: &Value, entry: &Value) -> bool {
    let name = &entry["expect"]["nearest_preceding_symbol"]["name"];
    frame.get("function").is_some()
        && frame.get("function_size").is_none()
        && frame.get("file").is_none()
        && frame.get("line").is_none()
        && (frame["function"] == *name
            || name
                .as_str()
                .is_some_and(|n| frame["function"] == json!(n.trim_start_matches('_'))))
}

/// A front-end-shaped job: the module's addresses cut into stacks of a few frames.
pub fn job(debug_name: &str, breakpad_id: &str, offsets: &[u64]) -> Value {
    let stacks: Vec<Value> = offsets
        .chunks(16)
        .map(|c| Value::Array(c.iter().map(|o| json!([0, o])).collect()))
        .collect();
    json!({ "memoryMap": [[debug_name, breakpad_id]], "stacks": stacks })
}

/// The frames of a job's answer, flattened in request order.
pub fn frames_of(result: &Value) -> Vec<Value> {
    result["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s.as_array().unwrap().iter().cloned())
        .collect()
}
