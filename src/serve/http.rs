//! The little of HTTP/1.1 the server needs: one request per connection, its method, path and
//! Host; answers with a length, a type and `Connection: close`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

/// The most a request's line and headers may take.
const MAX_HEAD: usize = 16 << 10;

pub struct Request {
    pub method: String,
    /// The path, percent-decoded, without the query.
    pub path: String,
    pub host: Option<String>,
}

impl Request {
    /// A request as a browser sends it (for tests).
    pub fn get(path: &str, host: &str) -> Request {
        Request { method: "GET".into(), path: path.into(), host: Some(host.into()) }
    }
}

pub fn read_request(stream: &mut impl Read) -> io::Result<Request> {
    let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidData, m.to_string());
    let mut reader = BufReader::new(stream.take(MAX_HEAD as u64));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(bad("no request line"));
    };
    let mut host = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            if name.trim().eq_ignore_ascii_case("host") {
                host = Some(value.trim().to_string());
            }
        }
    }
    let raw = target.split(['?', '#']).next().unwrap_or("");
    let path = percent_decode(raw).ok_or_else(|| bad("the path is not UTF-8 once decoded"))?;
    Ok(Request { method: method.to_string(), path, host })
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).and_then(|&c| hex(c)), b.get(i + 2).and_then(|&c| hex(c))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

enum Body {
    Bytes(Vec<u8>),
    File(File),
}

pub struct Response {
    pub status: u16,
    content_type: &'static str,
    len: u64,
    body: Option<Body>,
    location: Option<&'static str>,
}

impl Response {
    pub fn bytes(status: u16, content_type: &'static str, body: Vec<u8>) -> Response {
        Response { status, content_type, len: body.len() as u64, body: Some(Body::Bytes(body)), location: None }
    }
    pub fn text(status: u16, message: &str) -> Response {
        Response::bytes(status, "text/plain; charset=utf-8", format!("{message}\n").into_bytes())
    }
    pub fn html(page: String) -> Response {
        Response::bytes(200, "text/html; charset=utf-8", page.into_bytes())
    }
    pub fn json(text: String) -> Response {
        Response::bytes(200, "application/json", text.into_bytes())
    }
    pub fn redirect(to: &'static str) -> Response {
        Response { location: Some(to), ..Response::text(308, to) }
    }
    pub fn file(path: &Path, content_type: &'static str) -> io::Result<Response> {
        let f = File::open(path)?;
        let len = f.metadata()?.len();
        Ok(Response { status: 200, content_type, len, body: Some(Body::File(f)), location: None })
    }
    pub fn without_body(self) -> Response {
        Response { body: None, ..self }
    }

    /// The body, read whole (for tests).
    pub fn body_bytes(self) -> io::Result<Vec<u8>> {
        match self.body {
            Some(Body::Bytes(b)) => Ok(b),
            Some(Body::File(mut f)) => {
                let mut v = Vec::new();
                f.read_to_end(&mut v)?;
                Ok(v)
            }
            None => Ok(Vec::new()),
        }
    }

    pub fn write(self, out: &mut impl Write) -> io::Result<()> {
        let reason = match self.status {
            200 => "OK",
            308 => "Permanent Redirect",
            400 => "Bad Request",
            403 => "Forbidden",
            404 => "Not Found",
            _ => "Method Not Allowed",
        };
        let mut head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n",
            self.status, self.content_type, self.len
        );
        if let Some(l) = self.location {
            head.push_str(&format!("Location: {l}\r\n"));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        match self.body {
            Some(Body::Bytes(b)) => out.write_all(&b)?,
            Some(Body::File(mut f)) => {
                io::copy(&mut f, out)?;
            }
            None => {}
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_and_host_are_read_and_the_path_decoded() {
        let raw = b"GET /files/run%201/rank0.json.gz?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept: */*\r\n\r\n";
        let r = read_request(&mut &raw[..]).unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/files/run 1/rank0.json.gz"));
        assert_eq!(r.host.as_deref(), Some("127.0.0.1:8000"));
        assert!(read_request(&mut &b"\r\n"[..]).is_err());
        assert!(read_request(&mut &b"GET /%ff%fe HTTP/1.1\r\n\r\n"[..]).is_err());
    }
}
