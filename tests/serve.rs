//! `tracesight serve DIR`: the real binary on a free loopback port, asked over real sockets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

struct Served {
    child: Child,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracesight-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A stand-in for the built site: what `Site::dir` asks of one.
fn site(root: &Path) -> PathBuf {
    let s = root.join("site");
    std::fs::create_dir_all(s.join("pkg")).unwrap();
    std::fs::write(s.join("index.html"), "<!doctype html><title>the page</title>").unwrap();
    std::fs::write(s.join("pkg/app_bg.wasm"), b"\0asm").unwrap();
    s
}

fn serve(dir: &Path, site: &Path) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracesight"))
        .args(["serve", "--port", "0", "--site"])
        .arg(site)
        .arg(dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.split("http://").nth(1).and_then(|r| r.split('/').next()).unwrap().to_string();
    Served { child, addr }
}

/// (status, body) of one request with the given Host.
fn ask(addr: &str, method: &str, path: &str, host: &str) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "{method} {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, raw[split + 4..].to_vec())
}

fn get(sv: &Served, path: &str) -> (u16, Vec<u8>) {
    ask(&sv.addr, "GET", path, &sv.addr)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[test]
fn lists_the_traces_serves_them_and_the_page_and_sees_new_ones() {
    let root = tmp("list");
    let dir = root.join("traces");
    std::fs::create_dir_all(dir.join("run 2")).unwrap();
    std::fs::copy(fixtures().join("current_schema.json"), dir.join("rank0.json")).unwrap();
    std::fs::copy(fixtures().join("math_sdpa.json"), dir.join("run 2/rank1.json")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    let sv = serve(&dir, &site(&root));
    assert!(sv.addr.starts_with("127.0.0.1:"), "listens on loopback only by default: {}", sv.addr);

    let (status, page) = get(&sv, "/");
    let page = String::from_utf8(page).unwrap();
    assert_eq!(status, 200);
    assert!(page.contains(">rank0.json</a>") && page.contains(">run 2/rank1.json</a>"), "{page}");
    assert!(!page.contains("notes.txt"));
    assert!(page.contains("href=\"/app/?trace=%2Ffiles%2Frun%25202%2Frank1.json\""), "{page}");

    let (status, body) = get(&sv, "/files/run%202/rank1.json");
    assert_eq!((status, body), (200, std::fs::read(fixtures().join("math_sdpa.json")).unwrap()));
    assert_eq!(get(&sv, "/app/").1, b"<!doctype html><title>the page</title>");
    assert_eq!(get(&sv, "/app/pkg/app_bg.wasm").1, b"\0asm");
    assert_eq!(ask(&sv.addr, "HEAD", "/files/rank0.json", &sv.addr), (200, Vec::new()));

    let list = |sv: &Served| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_slice(&get(sv, "/list.json").1).unwrap();
        v.as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(list(&sv), ["rank0.json", "run 2/rank1.json"]);
    std::fs::copy(fixtures().join("old_schema.json"), dir.join("rank2.json.gz")).unwrap();
    assert_eq!(list(&sv), ["rank0.json", "rank2.json.gz", "run 2/rank1.json"]);
    assert_eq!(get(&sv, "/list.js").0, 200);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn refuses_paths_outside_the_directory_other_files_other_hosts_and_methods() {
    let root = tmp("refuse");
    let dir = root.join("traces");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixtures().join("current_schema.json"), dir.join("rank0.json")).unwrap();
    std::fs::copy(fixtures().join("current_schema.json"), root.join("secret.json")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("secret.json"), dir.join("link.json")).unwrap();
    let sv = serve(&dir, &site(&root));
    for path in [
        "/files/../secret.json",
        "/files/%2e%2e/secret.json",
        "/files/..%2fsecret.json",
        "/files/link.json",
        "/files/notes.txt",
        "/files//etc/passwd",
        "/app/../traces/rank0.json",
    ] {
        assert_eq!(get(&sv, path).0, 403, "{path}");
    }
    assert_eq!(get(&sv, "/files/missing.json").0, 403);
    assert_eq!(get(&sv, "/elsewhere").0, 404);
    let port = sv.addr.split(':').nth(1).unwrap();
    assert_eq!(ask(&sv.addr, "GET", "/files/rank0.json", &format!("evil.example:{port}")).0, 403);
    assert_eq!(ask(&sv.addr, "GET", "/files/rank0.json", &format!("localhost:{port}")).0, 200);
    assert_eq!(ask(&sv.addr, "POST", "/", &sv.addr).0, 405);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn without_a_built_site_it_says_how_to_build_one() {
    let root = tmp("nosite");
    let out = Command::new(env!("CARGO_BIN_EXE_tracesight"))
        .args(["serve", "--port", "0", "--site"])
        .arg(root.join("dist"))
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scripts/build-web.sh") && err.contains("embed-site"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}
