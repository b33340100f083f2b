use ascii::AsciiString;

use std::io::Error as IoError;
use std::io::Result as IoResult;
use std::io::{BufReader, BufWriter, ErrorKind, Read};

use std::net::SocketAddr;
use std::str::FromStr;

use std::time::Instant;

use crate::common::{HTTPVersion, Method};
use crate::limits::{BodyBudget, HeldBody, Limits, Permit, Ticket};
use std::sync::Arc;
use crate::util::RefinedTcpStream;
use crate::util::{SequentialReader, SequentialReaderBuilder, SequentialWriterBuilder};
use crate::Request;

/// A ClientConnection is an object that will store a socket to a client
/// and return Request objects.
pub struct ClientConnection {
    // address of the client
    remote_addr: IoResult<Option<SocketAddr>>,
    /// PATCH: the address the client connected to.
    local_addr: Option<SocketAddr>,

    // sequence of Readers to the stream, so that the data is not read in
    //  the wrong order
    source: SequentialReaderBuilder<BufReader<RefinedTcpStream>>,

    // sequence of Writers to the stream, to avoid writing response #2 before
    //  response #1
    sink: SequentialWriterBuilder<BufWriter<RefinedTcpStream>>,

    // Reader to read the next header from
    next_header_source: SequentialReader<BufReader<RefinedTcpStream>>,

    // set to true if we know that the previous request is the last one
    no_more_requests: bool,

    // true if the connection goes through SSL
    secure: bool,

    // PATCH: the bounds, the place in the connection registry, and when the request
    // being read must be complete.
    limits: Limits,
    ticket: Option<Ticket>,
    deadline: Instant,
    /// PATCH: the bytes of bodies in flight, shared by all connections.
    budget: Arc<BodyBudget>,
    pending_continue_writer: Option<crate::util::SequentialWriter<BufWriter<RefinedTcpStream>>>,
}

/// Error that can happen when reading a request.
#[derive(Debug)]
enum ReadError {
    WrongRequestLine,
    WrongHeader(HTTPVersion),
    /// the client sent an unrecognized `Expect` header
    ExpectationFailed(HTTPVersion),
    ReadIoError(IoError),
    /// PATCH: a request refused before its body is read: status and body, then close.
    Refused(u16, Vec<u8>),
}

impl ClientConnection {
    /// Creates a new `ClientConnection` that takes ownership of the `TcpStream`.
    pub fn new(
        write_socket: RefinedTcpStream,
        mut read_socket: RefinedTcpStream,
        limits: Limits,
        ticket: Option<Ticket>,
        budget: Arc<BodyBudget>,
    ) -> ClientConnection {
        let remote_addr = read_socket.peer_addr();
        let local_addr = read_socket.local_addr();
        let secure = read_socket.secure();

        let mut source = SequentialReaderBuilder::new(BufReader::with_capacity(1024, read_socket));
        let first_header = source.next().unwrap();

        ClientConnection {
            source,
            sink: SequentialWriterBuilder::new(BufWriter::with_capacity(1024, write_socket)),
            remote_addr,
            local_addr,
            next_header_source: first_header,
            no_more_requests: false,
            secure,
            deadline: Instant::now() + limits.request_deadline,
            limits,
            ticket,
            budget,
            pending_continue_writer: None,
        }
    }

    fn past_deadline(&self) -> IoResult<()> {
        if Instant::now() > self.deadline {
            Err(IoError::new(ErrorKind::TimedOut, "request not complete in time"))
        } else {
            Ok(())
        }
    }

    /// PATCH: the whole body, read here under the request's deadline, at most `max_body`
    /// bytes (chunked bodies included), and within the budget of bodies in flight.
    fn read_body(&mut self, headers: &[crate::Header]) -> Result<Option<HeldBody>, ReadError> {
        let chunked = headers
            .iter()
            .any(|h| h.field.equiv("Transfer-Encoding"));
        let length: Option<u64> = if chunked {
            None
        } else {
            match headers.iter().find(|h| h.field.equiv("Content-Length")) {
                None => return Ok(None),
                Some(h) => Some(
                    h.value
                        .as_str()
                        .trim()
                        .parse()
                        .map_err(|_| ReadError::Refused(400, b"{\"error\": \"bad Content-Length\"}".to_vec()))?,
                ),
            }
        };
        let max = self.limits.max_body;
        let too_big = || {
            let message = format!("{{\"error\": \"the body is over the limit of {} MiB\"}}", max >> 20);
            ReadError::Refused(413, message.into_bytes())
        };
        if length.map_or(false, |l| l > max) {
            return Err(too_big());
        }
        // Reserved before `100 Continue` and before any byte is read: a body that does not
        // fit is refused unread.
        let uncounted = self.limits.uncounted_body;
        let mut permit = Permit::empty(&self.budget);
        let busy = || {
            let message = b"{\"error\": \"too many request bodies at once; try again later\"}";
            ReadError::Refused(503, message.to_vec())
        };
        if let Some(l) = length.filter(|&l| l > uncounted) {
            if !permit.grow_to(l) {
                return Err(busy());
            }
        }
        let expects_continue = headers.iter().any(|h| {
            h.field.equiv("Expect") && h.value.as_str().eq_ignore_ascii_case("100-continue")
        });
        if expects_continue {
            use std::io::Write;
            let mut w = self.sink.next().unwrap();
            w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .and_then(|_| w.flush())
                .map_err(ReadError::ReadIoError)?;
            // The writer stays in sequence: the next writer is handed to the request.
            self.pending_continue_writer = Some(w);
        }
        let deadline = self.deadline;
        let in_time = || {
            if Instant::now() > deadline {
                let late = IoError::new(ErrorKind::TimedOut, "body not complete in time");
                Err(ReadError::ReadIoError(late))
            } else {
                Ok(())
            }
        };
        // The announced length at once (at most `max_body`): no doubling as it grows.
        let mut body = Vec::with_capacity(length.unwrap_or(0) as usize);
        let mut buf = [0u8; 16 << 10];
        if let Some(len) = length {
            // PATCH: read straight into the body, as much as has arrived per read (16 KiB
            // reads through a buffer were 80 system calls and a copy for a 1.3 MB body);
            // it grows by at most 1 MiB ahead of what has arrived.
            let len = len as usize;
            let mut filled = 0;
            while filled < len {
                in_time()?;
                let end = len.min(filled + (1 << 20));
                if body.len() < end {
                    body.resize(end, 0);
                }
                let n = self.next_header_source.read(&mut body[filled..end]).map_err(ReadError::ReadIoError)?;
                if n == 0 {
                    let early = IoError::new(ErrorKind::ConnectionAborted, "the body ends early");
                    return Err(ReadError::ReadIoError(early));
                }
                filled += n;
            }
        } else {
            let mut decoder = chunked_transfer::Decoder::new(&mut self.next_header_source);
            loop {
                in_time()?;
                let n = decoder.read(&mut buf).map_err(ReadError::ReadIoError)?;
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&buf[..n]);
                if body.len() as u64 > max {
                    return Err(too_big());
                }
                let held = body.capacity() as u64;
                if held > uncounted && !permit.grow_to(held) {
                    return Err(busy());
                }
            }
        }
        Ok(Some(HeldBody {
            data: std::io::Cursor::new(body),
            _permit: permit,
        }))
    }

    /// Reads the next line from self.next_header_source.
    ///
    /// Reads until `CRLF` is reached. The next read will start
    ///  at the first byte of the new line.
    fn read_next_line(&mut self) -> IoResult<AsciiString> {
        let mut buf = Vec::new();
        let mut prev_byte_was_cr = false;

        loop {
            if buf.len() > self.limits.max_line {
                return Err(IoError::new(ErrorKind::InvalidData, "header line too long"));
            }
            self.past_deadline()?;
            let byte = self.next_header_source.by_ref().bytes().next();

            let byte = match byte {
                Some(b) => b?,
                None => return Err(IoError::new(ErrorKind::ConnectionAborted, "Unexpected EOF")),
            };

            if byte == b'\n' && prev_byte_was_cr {
                buf.pop(); // removing the '\r'
                return AsciiString::from_ascii(buf)
                    .map_err(|_| IoError::new(ErrorKind::InvalidInput, "Header is not in ASCII"));
            }

            prev_byte_was_cr = byte == b'\r';

            buf.push(byte);
        }
    }

    /// Reads a request from the stream.
    /// Blocks until the header has been read.
    fn read(&mut self) -> Result<Request, ReadError> {
        if let Some(t) = &self.ticket {
            t.waiting(true);
        }
        // PATCH: head and body must arrive within the deadline, however slowly they trickle.
        self.deadline = Instant::now() + self.limits.request_deadline;
        let (method, path, version, headers) = {
            // reading the request line
            let (method, path, version) = {
                let line = self.read_next_line().map_err(ReadError::ReadIoError)?;

                parse_request_line(
                    line.as_str().trim(), // TODO: remove this conversion
                )?
            };

            // getting all headers
            let headers = {
                let mut headers = Vec::new();
                loop {
                    let line = self.read_next_line().map_err(ReadError::ReadIoError)?;

                    if line.is_empty() {
                        break;
                    };
                    if headers.len() >= self.limits.max_headers {
                        return Err(ReadError::Refused(
                            431,
                            b"{\"error\": \"too many header lines\"}".to_vec(),
                        ));
                    }
                    headers.push(match FromStr::from_str(line.as_str().trim()) {
                        // TODO: remove this conversion
                        Ok(h) => h,
                        _ => return Err(ReadError::WrongHeader(version)),
                    });
                }

                headers
            };

            (method, path, version, headers)
        };

        // PATCH: refused requests are answered from their head alone; bodies are read
        // here, whole, so the server's thread never waits on a client.
        let head = crate::limits::Head {
            method: &method,
            url: &path,
            headers: &headers,
            local: self.local_addr,
        };
        if let Some(check) = &self.limits.head_check {
            if let Some((status, body)) = check(&head) {
                if let Some(log) = &self.limits.on_refusal {
                    log(&head, status, body.len());
                }
                return Err(ReadError::Refused(status, body));
            }
        }
        let body = match self.read_body(&headers) {
            Err(ReadError::Refused(status, body)) => {
                if let Some(log) = &self.limits.on_refusal {
                    let head = crate::limits::Head {
                        method: &method,
                        url: &path,
                        headers: &headers,
                        local: self.local_addr,
                    };
                    log(&head, status, body.len());
                }
                return Err(ReadError::Refused(status, body));
            }
            other => other?,
        };

        // building the writer for the request
        let writer = match self.pending_continue_writer.take() {
            Some(w) => w,
            None => self.sink.next().unwrap(),
        };

        // follow-up for next potential request
        let mut data_source = self.source.next().unwrap();
        std::mem::swap(&mut self.next_header_source, &mut data_source);

        // building the next reader
        let request = crate::request::new_request(
            self.secure,
            method,
            path,
            version.clone(),
            headers,
            *self.remote_addr.as_ref().unwrap(),
            data_source,
            writer,
            body,
        )
        .map_err(|e| {
            use crate::request;
            match e {
                request::RequestCreationError::CreationIoError(e) => ReadError::ReadIoError(e),
                request::RequestCreationError::ExpectationFailed => {
                    ReadError::ExpectationFailed(version)
                }
            }
        })?;

        // return the request
        Ok(request)
    }
}

impl Iterator for ClientConnection {
    type Item = Request;

    /// Blocks until the next Request is available.
    /// Returns None when no new Requests will come from the client.
    fn next(&mut self) -> Option<Request> {
        use crate::{Response, StatusCode};

        // the client sent a "connection: close" header in this previous request
        //  or is using HTTP 1.0, meaning that no new request will come
        if self.no_more_requests {
            return None;
        }

        loop {
            let read = self.read();
            if read.is_err() {
                // PATCH: the writer that sent `100 Continue` must be gone before the error
                // answer's writer may write (they are sequenced), or this thread waits forever.
                self.pending_continue_writer = None;
            }
            let rq = match read {
                Err(ReadError::WrongRequestLine) => {
                    let writer = self.sink.next().unwrap();
                    let response = Response::new_empty(StatusCode(400));
                    response
                        .raw_print(writer, HTTPVersion(1, 1), &[], false, None)
                        .ok();
                    return None; // we don't know where the next request would start,
                                 // se we have to close
                }

                Err(ReadError::WrongHeader(ver)) => {
                    let writer = self.sink.next().unwrap();
                    let response = Response::new_empty(StatusCode(400));
                    response.raw_print(writer, ver, &[], false, None).ok();
                    return None; // we don't know where the next request would start,
                                 // se we have to close
                }

                // PATCH: a socket read timeout shows as WouldBlock on Unix.
                Err(ReadError::ReadIoError(ref err))
                    if matches!(err.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) =>
                {
                    // request timeout
                    let writer = self.sink.next().unwrap();
                    let response = Response::new_empty(StatusCode(408));
                    response
                        .raw_print(writer, HTTPVersion(1, 1), &[], false, None)
                        .ok();
                    return None; // closing the connection
                }

                Err(ReadError::ExpectationFailed(ver)) => {
                    let writer = self.sink.next().unwrap();
                    let response = Response::new_empty(StatusCode(417));
                    response.raw_print(writer, ver, &[], true, None).ok();
                    return None; // TODO: should be recoverable, but needs handling in case of body
                }

                Err(ReadError::Refused(status, body)) => {
                    let writer = self.sink.next().unwrap();
                    let response = Response::from_data(body)
                        .with_status_code(StatusCode(status))
                        .with_header(crate::Header {
                            field: "Content-Type".parse().unwrap(),
                            value: "application/json".parse().unwrap(),
                        });
                    response
                        .raw_print(writer, HTTPVersion(1, 1), &[], false, None)
                        .ok();
                    return None; // the body (if any) is not read: close
                }

                Err(ReadError::ReadIoError(ref err)) if err.kind() == ErrorKind::InvalidData => {
                    let writer = self.sink.next().unwrap();
                    let response = Response::new_empty(StatusCode(431));
                    response
                        .raw_print(writer, HTTPVersion(1, 1), &[], false, None)
                        .ok();
                    return None;
                }

                Err(ReadError::ReadIoError(_)) => return None,

                Ok(rq) => rq,
            };

            // checking HTTP version
            if *rq.http_version() > (1, 1) {
                let writer = self.sink.next().unwrap();
                let response = Response::from_string(
                    "This server only supports HTTP versions 1.0 and 1.1".to_owned(),
                )
                .with_status_code(StatusCode(505));
                response
                    .raw_print(writer, HTTPVersion(1, 1), &[], false, None)
                    .ok();
                continue;
            }

            // updating the status of the connection
            let connection_header = rq
                .headers()
                .iter()
                .find(|h| h.field.equiv("Connection"))
                .map(|h| h.value.as_str());

            let lowercase = connection_header.map(|h| h.to_ascii_lowercase());

            match lowercase {
                Some(ref val) if val.contains("close") => self.no_more_requests = true,
                Some(ref val) if val.contains("upgrade") => self.no_more_requests = true,
                Some(ref val)
                    if !val.contains("keep-alive") && *rq.http_version() == HTTPVersion(1, 0) =>
                {
                    self.no_more_requests = true
                }
                None if *rq.http_version() == HTTPVersion(1, 0) => self.no_more_requests = true,
                _ => (),
            };

            if let Some(t) = &self.ticket {
                t.waiting(false);
            }
            // returning the request
            return Some(rq);
        }
    }
}

/// Parses a "HTTP/1.1" string.
fn parse_http_version(version: &str) -> Result<HTTPVersion, ReadError> {
    let (major, minor) = match version {
        "HTTP/0.9" => (0, 9),
        "HTTP/1.0" => (1, 0),
        "HTTP/1.1" => (1, 1),
        "HTTP/2.0" => (2, 0),
        "HTTP/3.0" => (3, 0),
        _ => return Err(ReadError::WrongRequestLine),
    };

    Ok(HTTPVersion(major, minor))
}

/// Parses the request line of the request.
/// eg. GET / HTTP/1.1
fn parse_request_line(line: &str) -> Result<(Method, String, HTTPVersion), ReadError> {
    let mut parts = line.split(' ');

    let method = parts.next().and_then(|w| w.parse().ok());
    let path = parts.next().map(ToOwned::to_owned);
    let version = parts.next().and_then(|w| parse_http_version(w).ok());

    method
        .and_then(|method| Some((method, path?, version?)))
        .ok_or(ReadError::WrongRequestLine)
}

#[cfg(test)]
mod test {
    #[test]
    fn test_parse_request_line() {
        let (method, path, ver) = super::parse_request_line("GET /hello HTTP/1.1").unwrap();

        assert!(method == crate::Method::Get);
        assert!(path == "/hello");
        assert!(ver == crate::common::HTTPVersion(1, 1));

        assert!(super::parse_request_line("GET /hello").is_err());
        assert!(super::parse_request_line("qsd qsd qsd").is_err());
    }
}
