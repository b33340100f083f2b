//! Fake HTTP servers on loopback: symbol servers that answer, redirect, stall or refuse.

use super::*;

pub(crate) enum Reply {
    Body(Vec<u8>),
    Redirect(String),
    /// A redirect with a body of its own (which must never become the file).
    RedirectWithBody(String, Vec<u8>),
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

pub(crate) type Handler = Arc<dyn Fn(&str) -> Reply + Send + Sync>;

pub(crate) struct Fake {
    pub(crate) addr: SocketAddr,
    pub(crate) log: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    pub(crate) fn start(handler: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Fake {
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

    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(crate) fn requests(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    pub(crate) fn count(&self, needle: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.contains(needle))
            .count()
    }
}

pub(crate) fn serve(
    mut conn: TcpStream,
    handler: &dyn Fn(&str) -> Reply,
    log: &Mutex<Vec<String>>,
) {
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
        Reply::RedirectWithBody(to, b) => ("302 Found", format!("Location: {to}\r\n"), b),
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
pub(crate) fn refused_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    url
}

/// Serves files of a folder by their relative path.
pub(crate) fn files_handler(root: PathBuf) -> impl Fn(&str) -> Reply + Send + Sync + 'static {
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
pub(crate) fn tecken(store: PathBuf) -> (Fake, Fake) {
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
