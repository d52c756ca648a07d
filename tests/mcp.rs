//! `tracesight mcp`: the real binary driven over pipes as an MCP client would, one JSON-RPC
//! message per line. Results are checked against `tracesight --json` and `tracesight diff`.

mod common;
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_tracesight");

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Client {
    /// The server started in `dir`, so relative paths are read from there.
    fn start(dir: &Path) -> Client {
        let mut child = Command::new(BIN)
            .arg("mcp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client { child, stdin, stdout }
    }

    fn send_raw(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
        assert!(line.ends_with('\n') && !line.trim_end().contains('\n'), "one message per line: {line}");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send_raw(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string());
        let reply = self.recv();
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["jsonrpc"], "2.0");
        reply
    }

    fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        let reply = self.request(id, "tools/call", json!({ "name": tool, "arguments": arguments }));
        assert!(reply.get("error").is_none(), "{reply}");
        reply["result"].clone()
    }

    fn initialize(&mut self, version: &str) -> Value {
        let params =
            json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } });
        let reply = self.request(1, "initialize", params);
        self.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        reply["result"].clone()
    }

    /// Closes stdin; the server ends with status 0 and what it wrote on stderr is returned.
    fn finish(mut self) -> String {
        drop(self.stdin);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        assert_eq!(rest, "", "no reply was owed");
        let out = self.child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

fn fixtures() -> std::path::PathBuf {
    fixture("current_schema.json").parent().unwrap().to_path_buf()
}

fn cli_json(args: &[&str]) -> Value {
    let o = Command::new(BIN).args(args).current_dir(fixtures()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn initialize_negotiates_the_version_and_lists_tools_with_schemas() {
    let mut c = Client::start(&fixtures());
    let init = c.initialize("2025-06-18");
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "tracesight");
    assert!(init["capabilities"]["tools"].is_object());
    let tools = c.request(2, "tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in ["analyze", "diff", "buckets", "top_kernels", "top_ops", "hints", "attention", "idle"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for t in tools.as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().unwrap().len() > 20);
    }
    let analyze = tools.as_array().unwrap().iter().find(|t| t["name"] == "analyze").unwrap();
    assert_eq!(analyze["inputSchema"]["required"], json!(["paths"]));
    assert_eq!(c.request(3, "ping", json!({}))["result"], json!({}));
    c.finish();

    // A version it does not know: the newest it does, for the client to accept or not.
    let mut c = Client::start(&fixtures());
    assert_eq!(c.initialize("1999-01-01")["protocolVersion"], tracesight::mcp::PROTOCOL_VERSIONS[0]);
    assert!(c.finish().contains("1999-01-01"), "the mismatch is logged on stderr");
}

#[test]
fn analyze_returns_the_text_summary_and_the_cli_json_report() {
    let mut c = Client::start(&fixtures());
    c.initialize("2025-11-25");
    let r = c.call(2, "analyze", json!({ "paths": ["current_schema.json", "math_sdpa.json"], "top": 3 }));
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"], cli_json(&["--json", "--top", "3", "current_schema.json", "math_sdpa.json"]));
    let text = r["content"][0]["text"].as_str().unwrap();
    let cli_text = Command::new(BIN)
        .args(["--top", "3", "current_schema.json", "math_sdpa.json"])
        .current_dir(fixtures())
        .output()
        .unwrap();
    assert_eq!(text, String::from_utf8_lossy(&cli_text.stdout));

    let r = c.call(3, "analyze", json!({ "paths": ["current_schema.json"], "range_ms": "0.1..0.6" }));
    assert_eq!(r["structuredContent"], cli_json(&["--json", "--range", "0.1..0.6", "current_schema.json"]));
    c.finish();
}

#[test]
fn focused_tools_return_their_part_of_the_report() {
    let mut c = Client::start(&fixtures());
    c.initialize("2025-06-18");
    let cli = cli_json(&["--json", "--top", "2", "current_schema.json"]);
    let r = c.call(2, "top_kernels", json!({ "paths": ["current_schema.json"], "top": 2 }));
    let s = &r["structuredContent"];
    assert_eq!(s["traces"][0]["top_kernels"], cli["traces"][0]["top_kernels"]);
    assert_eq!(s["traces"][0]["file"], "current_schema.json");
    assert_eq!(s["traces"][0]["top_kernels"].as_array().unwrap().len(), 2);
    // The same JSON as text, for clients that read only content.
    assert_eq!(serde_json::from_str::<Value>(r["content"][0]["text"].as_str().unwrap()).unwrap(), *s);
    for (tool, key) in [("buckets", "buckets"), ("hints", "hints"), ("attention", "attention"), ("idle", "idle")] {
        let r = c.call(3, tool, json!({ "paths": ["current_schema.json"] }));
        assert_eq!(r["structuredContent"]["traces"][0][key], cli["traces"][0][key], "{tool}");
    }
    c.finish();
}

#[test]
fn diff_gives_the_cli_verdict_and_checks_limits() {
    let mut c = Client::start(&fixtures());
    c.initialize("2025-06-18");
    let r = c.call(2, "diff", json!({ "before": "current_schema.json", "after": "math_sdpa.json" }));
    let cli = cli_json(&["diff", "--json", "current_schema.json", "math_sdpa.json"]);
    assert_eq!(r["structuredContent"]["diff"], cli);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(cli["verdict"].as_str().unwrap()), "{text}");

    let r = c.call(
        3,
        "diff",
        json!({ "before": "current_schema.json", "after": "math_sdpa.json", "fail_if": ["step_time>+5%"] }),
    );
    let o = Command::new(BIN)
        .args(["diff", "--json", "--fail-if", "step_time>+5%", "current_schema.json", "math_sdpa.json"])
        .current_dir(fixtures())
        .output()
        .unwrap();
    let cli: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["structuredContent"]["checks"], cli["checks"]);
    c.finish();
}

#[test]
fn unreadable_files_and_bad_arguments_are_tool_errors_naming_them() {
    let dir = std::env::temp_dir().join(format!("tracesight-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("broken.json"), "this is not a trace").unwrap();
    std::fs::copy(fixture("current_schema.json"), dir.join("good.json")).unwrap();
    let mut c = Client::start(&dir);
    c.initialize("2025-06-18");
    let r = c.call(2, "analyze", json!({ "paths": ["missing.json.gz"] }));
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("missing.json.gz"), "{r}");
    let r = c.call(3, "analyze", json!({ "paths": ["broken.json"] }));
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("broken.json"), "{r}");
    // One readable file beside a broken one: the report, with the failure in it.
    let r = c.call(4, "analyze", json!({ "paths": ["good.json", "broken.json"] }));
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"]["traces"].as_array().unwrap().len(), 1);
    assert!(r["structuredContent"]["errors"][0]["file"].as_str().unwrap().contains("broken.json"));
    assert!(r["content"][0]["text"].as_str().unwrap().contains("broken.json"));
    let r = c.call(5, "diff", json!({ "before": "good.json", "after": "missing.json" }));
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("missing.json"), "{r}");
    for (args, said) in [
        (json!({}), "paths"),
        (json!({ "paths": ["good.json"], "top": 0 }), "top"),
        (json!({ "paths": ["good.json"], "range_ms": "soon" }), "range_ms"),
        (json!({ "paths": ["good.json"], "colour": "red" }), "colour"),
    ] {
        let r = c.call(6, "analyze", args);
        assert_eq!(r["isError"], true);
        assert!(r["content"][0]["text"].as_str().unwrap().contains(said), "{r}");
    }
    c.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn user_rules_move_kernels_as_the_cli_flag_does() {
    let dir = std::env::temp_dir().join(format!("tracesight-mcp-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = "# the custom kernel is a norm\nmy custom kernel => elementwise\n";
    std::fs::write(dir.join("rules.txt"), rules).unwrap();
    let trace = fixture("current_schema.json");
    let trace = trace.to_str().unwrap();
    let mut c = Client::start(&dir);
    c.initialize("2025-06-18");
    let r = c.call(2, "analyze", json!({ "paths": [trace], "rules": rules }));
    let o = Command::new(BIN).args(["--json", "--rules", "rules.txt", trace]).current_dir(&dir).output().unwrap();
    let cli: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["structuredContent"], cli);
    let other = |v: &Value| v["traces"][0]["buckets"].as_array().unwrap().iter().any(|b| b["id"] == "other");
    assert!(!other(&cli), "the rule took the only `other` kernel: {}", cli["traces"][0]["buckets"]);
    assert!(other(&cli_json(&["--json", "current_schema.json"])), "without the rule it is `other`");
    let r = c.call(3, "buckets", json!({ "paths": [trace], "rules": rules }));
    assert_eq!(r["structuredContent"]["traces"][0]["buckets"], cli["traces"][0]["buckets"]);
    // A line that is not a rule is an error naming the argument and the line.
    let r = c.call(4, "analyze", json!({ "paths": [trace], "rules": "my_custom_kernel => no_such_bucket" }));
    assert_eq!(r["isError"], true);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("rules") && text.contains("no_such_bucket"), "{text}");
    c.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every tool declares `outputSchema`, and what it returns has the keys that schema requires
/// (the Python SDK's client validates the whole schema: tests/python/test_mcp.py).
#[test]
fn structured_results_have_what_the_output_schemas_require() {
    let mut c = Client::start(&fixtures());
    c.initialize("2025-06-18");
    let tools = c.request(2, "tools/list", json!({}))["result"]["tools"].clone();
    for (i, t) in tools.as_array().unwrap().iter().enumerate() {
        let schema = &t["outputSchema"];
        assert_eq!(schema["type"], "object", "{t}");
        let name = t["name"].as_str().unwrap();
        let args = match name {
            "diff" => json!({ "before": "current_schema.json", "after": "math_sdpa.json" }),
            _ => json!({ "paths": ["current_schema.json"] }),
        };
        let r = c.call(10 + i as i64, name, args);
        assert_eq!(r["isError"], false, "{name}: {r}");
        for key in schema["required"].as_array().unwrap() {
            let key = key.as_str().unwrap();
            assert!(r["structuredContent"].get(key).is_some(), "{name}: `{key}` missing");
        }
        if let Some(item) = schema["properties"]["traces"]["items"]["required"].as_array() {
            for key in item {
                assert!(r["structuredContent"]["traces"][0].get(key.as_str().unwrap()).is_some(), "{name}: {key}");
            }
        }
    }
    c.finish();
}

#[test]
fn protocol_errors_get_json_rpc_error_codes() {
    let mut c = Client::start(&fixtures());
    c.initialize("2025-06-18");
    c.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ");
    let r = c.recv();
    assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (Value::Null, json!(-32700)), "{r}");
    c.send_raw(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#);
    assert_eq!(c.recv()["error"]["code"], -32600);
    c.send_raw(r#"{"jsonrpc":"2.0","id":4}"#);
    assert_eq!(c.recv()["error"]["code"], -32600);
    c.send_raw("[]");
    assert_eq!(c.recv()["error"]["code"], -32600);
    let r = c.request(5, "resources/list", json!({}));
    assert_eq!(r["error"]["code"], -32601);
    assert!(r["error"]["message"].as_str().unwrap().contains("resources/list"));
    assert_eq!(c.request(6, "tools/call", json!({ "name": "no_such_tool" }))["error"]["code"], -32602);
    assert_eq!(c.request(7, "tools/call", json!({ "arguments": {} }))["error"]["code"], -32602);
    assert_eq!(c.request(8, "initialize", json!({}))["error"]["code"], -32602);
    c.send_raw(r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}"#);
    assert_eq!(c.recv()["error"]["code"], -32602);
    // Still serving after all of that.
    assert_eq!(c.request(10, "ping", json!({}))["result"], json!({}));
    c.finish();
}

#[test]
fn notifications_get_no_reply_and_a_batch_gets_one_array() {
    let mut c = Client::start(&fixtures());
    c.initialize("2025-03-26");
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#);
    c.send_raw("");
    // The next line out answers this request: nothing was written for the three above.
    assert_eq!(c.request(2, "ping", json!({}))["result"], json!({}));
    c.send_raw(
        r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"nope"}]"#,
    );
    let batch = c.recv();
    let batch = batch.as_array().expect("a batch is answered with an array");
    assert_eq!(batch.len(), 2, "{batch:?}");
    assert_eq!((batch[0]["id"].clone(), batch[0]["result"].clone()), (json!("a"), json!({})));
    assert_eq!((batch[1]["id"].clone(), batch[1]["error"]["code"].clone()), (json!("b"), json!(-32601)));
    // A batch of notifications only: no reply at all.
    c.send_raw(r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#);
    assert_eq!(c.request(3, "ping", json!({}))["id"], 3);
    let log = c.finish();
    assert!(log.contains("notifications/unknown"), "ignored notifications are logged: {log}");
}
