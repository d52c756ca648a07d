//! `tracesight serve DIR`: the page and the traces of a directory on a loopback port, for
//! traces that stay on a cluster (`ssh -L 8000:127.0.0.1:8000 login-node`). `/` lists every
//! trace of DIR (new ones appear as the job writes them); a click opens it in the page, which
//! fetches it from `/files/...` as a `?trace=` link. Native only: threads, sockets and files.
//!
//! Only GET and HEAD, only files under DIR that are traces, only the site's own files. The Host
//! header must name the address served, so a web page that rebinds a DNS name to 127.0.0.1
//! cannot read the traces through the visitor's browser.

#![forbid(unsafe_code)]

mod http;
mod listing;
mod site;

pub use http::{Request, Response};
pub use site::Site;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;

/// What the server serves.
pub struct Server {
    /// The traces' directory (canonical).
    pub dir: PathBuf,
    pub site: Site,
    /// The address bound, for the Host check.
    pub addr: SocketAddr,
}

/// Binds `host:port` (port 0: any free one) and serves until the process ends. `ready` gets
/// the bound address once the socket listens.
pub fn run(dir: &Path, site: Site, host: &str, port: u16, ready: impl FnOnce(SocketAddr)) -> io::Result<()> {
    let dir = dir.canonicalize()?;
    if !dir.is_dir() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a directory", dir.display())));
    }
    let listener = TcpListener::bind((host, port))?;
    let addr = listener.local_addr()?;
    let server = Arc::new(Server { dir, site, addr });
    ready(addr);
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let server = Arc::clone(&server);
        // One thread per connection: a handful of browser tabs, not a public server.
        thread::spawn(move || {
            let _ = server.handle(stream);
        });
    }
    Ok(())
}

impl Server {
    fn handle(&self, mut stream: TcpStream) -> io::Result<()> {
        stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
        let response = match http::read_request(&mut stream) {
            Ok(req) => self.respond(&req),
            Err(e) => Response::text(400, &format!("bad request: {e}")),
        };
        response.write(&mut stream)
    }

    /// The answer to one request.
    pub fn respond(&self, req: &Request) -> Response {
        if req.method != "GET" && req.method != "HEAD" {
            return Response::text(405, "only GET and HEAD");
        }
        if !self.host_ok(req.host.as_deref()) {
            return Response::text(403, "the Host header does not name this server's address");
        }
        let head = req.method == "HEAD";
        let path = req.path.as_str();
        let response = match path {
            "/" | "/index.html" => Response::html(listing::page(&self.dir)),
            "/list.json" => Response::json(listing::json(&self.dir)),
            "/list.js" => Response::bytes(200, "text/javascript", listing::SCRIPT.as_bytes().to_vec()),
            "/app" => Response::redirect("/app/"),
            _ => match (path.strip_prefix("/app/"), path.strip_prefix("/files/")) {
                (Some(rel), _) => self.site.get(if rel.is_empty() { "index.html" } else { rel }),
                (_, Some(rel)) => self.trace_file(rel),
                _ => Response::text(404, "not found"),
            },
        };
        if head {
            response.without_body()
        } else {
            response
        }
    }

    fn host_ok(&self, host: Option<&str>) -> bool {
        let Some(host) = host else { return false };
        let port = self.addr.port();
        let ip = self.addr.ip();
        let names = [format!("{ip}:{port}"), format!("localhost:{port}"), format!("[{ip}]:{port}")];
        // A wildcard bind (asked for with --host) is reached under any name.
        ip.is_unspecified() || names.iter().any(|n| n.eq_ignore_ascii_case(host))
    }

    /// A trace under the directory: anything else, or a path that leaves it, is refused.
    fn trace_file(&self, rel: &str) -> Response {
        let Some(path) = listing::resolve(&self.dir, rel) else {
            return Response::text(403, "not a trace file under the served directory");
        };
        match Response::file(&path, "application/octet-stream") {
            Ok(r) => r,
            Err(e) => Response::text(404, &format!("cannot read {rel}: {e}")),
        }
    }
}
