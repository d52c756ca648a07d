//! `tracesight mcp`: a Model Context Protocol server on stdio, so an AI assistant can ask a
//! trace questions and get the Report's JSON back. Native only (it reads files).
//!
//! The transport is newline-delimited JSON-RPC 2.0: one message per line on stdin, one reply
//! per line on stdout, logs on stderr only. A hand-written loop over serde_json rather than
//! the `rmcp` SDK, which would bring tokio and about 95 crates into every build for a server
//! that answers one request at a time.

#![forbid(unsafe_code)]

mod rpc;
mod tools;

use rpc::RpcError;
use serde_json::{json, Map, Value};
use std::io::{self, BufRead, Write};

/// The protocol revisions understood, newest first. A client asking for one of them gets it;
/// any other gets the newest, and the client decides whether to go on.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// One session's state: the revision agreed on, and whether the client said it is ready.
#[derive(Default)]
pub struct Session {
    pub protocol: Option<String>,
    pub initialized: bool,
}

/// Serves `input` until it ends (the client closed the pipe): each line one message or a
/// batch, each reply one line on `output`. Notes for a human go to `log`.
pub fn run(mut input: impl BufRead, mut output: impl Write, log: &mut dyn Write) -> io::Result<()> {
    let mut session = Session::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let reply = match std::str::from_utf8(&line) {
            Ok(text) => session.handle_line(text, log),
            Err(e) => Some(rpc::error(Value::Null, RpcError::parse(format!("the line is not UTF-8: {e}"))).to_string()),
        };
        if let Some(reply) = reply {
            output.write_all(reply.as_bytes())?;
            output.write_all(b"\n")?;
            output.flush()?;
        }
    }
}

impl Session {
    /// The reply to one line (a message or a batch of them), or none (a notification, a
    /// blank line, a batch of notifications).
    pub fn handle_line(&mut self, line: &str, log: &mut dyn Write) -> Option<String> {
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return Some(rpc::error(Value::Null, RpcError::parse(format!("not JSON: {e}"))).to_string()),
        };
        match value {
            Value::Array(batch) if batch.is_empty() => {
                Some(rpc::error(Value::Null, RpcError::invalid_request("an empty batch")).to_string())
            }
            Value::Array(batch) => {
                let replies: Vec<Value> = batch.into_iter().filter_map(|m| self.handle_message(m, log)).collect();
                (!replies.is_empty()).then(|| Value::Array(replies).to_string())
            }
            message => self.handle_message(message, log).map(|v| v.to_string()),
        }
    }

    /// The reply to one message: requests get one, notifications and responses none.
    fn handle_message(&mut self, message: Value, log: &mut dyn Write) -> Option<Value> {
        let incoming = match rpc::Incoming::classify(message) {
            Ok(m) => m,
            Err((id, e)) => return Some(rpc::error(id, e)),
        };
        match incoming {
            rpc::Incoming::Request { id, method, params } => Some(match self.dispatch(&method, params, log) {
                Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                Err(e) => rpc::error(id, e),
            }),
            rpc::Incoming::Notification { method } => {
                match method.as_str() {
                    "notifications/initialized" => self.initialized = true,
                    // One request at a time, answered before the next is read: nothing to cancel.
                    "notifications/cancelled" => {}
                    other => {
                        let _ = writeln!(log, "tracesight mcp: ignored the notification `{other}`");
                    }
                }
                None
            }
            rpc::Incoming::Response => {
                let _ = writeln!(log, "tracesight mcp: ignored a response (this server sends no requests)");
                None
            }
        }
    }

    fn dispatch(&mut self, method: &str, params: Map<String, Value>, log: &mut dyn Write) -> Result<Value, RpcError> {
        match method {
            "initialize" => self.initialize(&params, log),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tools::list() })),
            "tools/call" => {
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| RpcError::invalid_params("tools/call needs `name`, a tool's name (a string)"))?;
                let args = match params.get("arguments") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(a)) => a.clone(),
                    Some(_) => return Err(RpcError::invalid_params("`arguments` must be an object")),
                };
                tools::call(name, &args).ok_or_else(|| {
                    RpcError::invalid_params(format!(
                        "no tool named `{name}` (tools/list names them: {})",
                        tools::names()
                    ))
                })
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    fn initialize(&mut self, params: &Map<String, Value>, log: &mut dyn Write) -> Result<Value, RpcError> {
        let asked = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("initialize needs `protocolVersion` (a string)"))?;
        let agreed = PROTOCOL_VERSIONS.iter().find(|v| **v == asked).copied().unwrap_or_else(|| {
            let _ = writeln!(
                log,
                "tracesight mcp: the client asked for protocol {asked}; offering {} (known: {})",
                PROTOCOL_VERSIONS[0],
                PROTOCOL_VERSIONS.join(", ")
            );
            PROTOCOL_VERSIONS[0]
        });
        self.protocol = Some(agreed.to_string());
        Ok(json!({
            "protocolVersion": agreed,
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": { "name": "tracesight", "version": crate::TOOL_VERSION },
            "instructions": "Analyses PyTorch profiler (Kineto) traces: where GPU time goes (buckets, kernels, ops, \
                idle, attention backend, hints) and what changed between two runs. Paths are relative to the \
                server's working directory; a directory means every *.json / *.json.gz in it (one file per rank).",
        }))
    }
}
