//! Opening the profiler without putting the token on a command line: the opener's argv
//! is readable by every user (/proc/<pid>/cmdline, `ps`), so it gets the path of a
//! private file (mode 0600, random name) that redirects to the profiler URL. The file is
//! removed when the server stops.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Opens `url` in the default browser through a redirect file; gives the file's path (no
/// secret in it). `$BROWSER`, when set, is the opener (as for xdg-open: the first of a
/// `:`-separated list, `%s` standing for what to open, else it comes last). An opener
/// that starts and then fails (xdg-open exits 3 without a browser, over SSH) is only
/// known later: `failed` is then called, from another thread, with the reason.
pub fn open_browser(
    url: &str,
    failed: impl FnOnce(String) + Send + 'static,
) -> Result<PathBuf, BrowserError> {
    let file = redirect_file(url)?;
    let mut cmd = opener(&file);
    let spawned = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(mut child) => {
            // The opener exits once it has handed the file over; reap it so no zombie
            // stays for the life of the server (the loop itself never waits on it).
            let program = cmd.get_program().to_string_lossy().into_owned();
            std::thread::spawn(move || match child.wait() {
                Ok(status) if status.success() => {}
                Ok(status) => failed(match status.code() {
                    Some(code) => format!("{program} exited with status {code}"),
                    None => format!("{program} was stopped ({status})"),
                }),
                Err(e) => failed(format!("{program}: {e}")),
            });
            Ok(file)
        }
        Err(error) => Err(BrowserError::Opener {
            program: cmd.get_program().to_string_lossy().into_owned(),
            error,
            file,
        }),
    }
}

/// Why the browser could not be opened; its text follows "could not open a browser: ".
#[derive(Debug)]
pub enum BrowserError {
    /// The redirect file's random name could not be drawn.
    Random(super::ServerError),
    Create(PathBuf, std::io::Error),
    Write(PathBuf, std::io::Error),
    /// The opener did not start; the file it was to open is there for the user.
    Opener {
        program: String,
        error: std::io::Error,
        file: PathBuf,
    },
}

impl std::fmt::Display for BrowserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BrowserError::Random(e) => f.write_str(&e.0),
            BrowserError::Create(p, e) => write!(f, "cannot create {}: {e}", p.display()),
            BrowserError::Write(p, e) => write!(f, "cannot write {}: {e}", p.display()),
            BrowserError::Opener {
                program,
                error,
                file,
            } => write!(
                f,
                "{program} ({error}); open {} in a browser",
                file.display()
            ),
        }
    }
}

/// Where the file goes: the user's runtime folder (Linux, private to the user) or the
/// user's temporary folder.
fn folder() -> PathBuf {
    if cfg!(target_os = "linux")
        && let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && run.is_absolute()
        && run.is_dir()
    {
        return run;
    }
    std::env::temp_dir()
}

/// Writes the redirect page, readable by the user alone, under a name no one can guess
/// or create first (create_new fails rather than follow a planted file or link), and
/// registers it for removal when the process stops.
fn redirect_file(url: &str) -> Result<PathBuf, BrowserError> {
    let mut random = [0u8; 16];
    super::random_bytes(&mut random).map_err(BrowserError::Random)?;
    let path = folder().join(format!(
        "profiler-symbol-server-{}.html",
        crate::shared::debugid::hex_lower(&random)
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options
        .open(&path)
        .map_err(|e| BrowserError::Create(path.clone(), e))?;
    crate::signals::track(&path, None);
    if let Err(e) = f.write_all(redirect_page(url).as_bytes()) {
        crate::signals::untrack(&path);
        let _ = std::fs::remove_file(&path);
        return Err(BrowserError::Write(path, e));
    }
    Ok(path)
}

/// A page that goes on to `url` at once: by script, by meta refresh where scripts are
/// off, by a link where both are.
fn redirect_page(url: &str) -> String {
    let attr = url
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    // A JSON string is a JS string; `<` escaped so no `</script>` can close the script.
    let js = serde_json::to_string(url)
        .unwrap_or_default()
        .replace('<', "\\u003c");
    format!(
        "<!DOCTYPE html><meta charset=utf-8><meta name=referrer content=no-referrer>\
         <meta http-equiv=refresh content=\"0;url={attr}\">\
         <title>profiler-symbol-server</title>\
         <script>location.replace({js})</script>\
         <p><a href=\"{attr}\">Open the profiler</a></p>\n"
    )
}

fn opener(file: &Path) -> Command {
    let browser = std::env::var("BROWSER").unwrap_or_default();
    let separator = if cfg!(windows) { ';' } else { ':' };
    if let Some(first) = browser.split(separator).find(|b| !b.trim().is_empty()) {
        let mut words = first.split_whitespace();
        let mut c = Command::new(words.next().unwrap_or_default());
        let mut placed = false;
        for w in words {
            if w.contains("%s") {
                c.arg(w.replace("%s", &file.to_string_lossy()));
                placed = true;
            } else {
                c.arg(w);
            }
        }
        if !placed {
            c.arg(file);
        }
        return c;
    }
    if cfg!(target_os = "macos") {
        let mut c = Command::new("open");
        c.arg(file);
        c
    } else if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", "start", ""]).arg(file);
        c
    } else {
        let mut c = Command::new("xdg-open");
        c.arg(file);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_escapes_the_url() {
        let page = redirect_page("https://x/?a=1&b=\"</script><x>");
        assert!(page.contains("url=https://x/?a=1&amp;b=&quot;&lt;/script&gt;&lt;x&gt;\""));
        assert!(page.contains(r#"location.replace("https://x/?a=1&b=\"\u003c/script>\u003cx>")"#));
    }
}
