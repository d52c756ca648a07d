//! JSON-RPC 2.0 messages as MCP uses them: requests (an id), notifications (none), and the
//! errors of the specification's table.

use serde_json::{json, Map, Value};

/// A JSON-RPC error: one of the specification's codes and a message saying what was wrong.
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn parse(message: impl Into<String>) -> RpcError {
        RpcError { code: -32700, message: format!("Parse error: {}", message.into()) }
    }
    pub fn invalid_request(message: impl Into<String>) -> RpcError {
        RpcError { code: -32600, message: format!("Invalid request: {}", message.into()) }
    }
    pub fn method_not_found(method: &str) -> RpcError {
        RpcError {
            code: -32601,
            message: format!(
                "Method not found: `{method}` (this server answers initialize, ping, tools/list and tools/call)"
            ),
        }
    }
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError { code: -32602, message: format!("Invalid params: {}", message.into()) }
    }
}

/// The error response to the request `id` (null when the id could not be read).
pub fn error(id: Value, e: RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": e.code, "message": e.message } })
}

/// A message from the client, checked against JSON-RPC 2.0.
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
    },
    /// A response to a request of ours (this server sends none).
    Response,
}

impl Incoming {
    /// Sorts a message; a malformed one is an error to answer, with the id when it had one.
    pub fn classify(message: Value) -> Result<Incoming, (Value, RpcError)> {
        let Value::Object(mut m) = message else {
            return Err((Value::Null, RpcError::invalid_request("a message must be a JSON object")));
        };
        // MCP requests carry a string or integer id; JSON-RPC's null id is not one.
        let id = match m.remove("id") {
            None => None,
            Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
            Some(other) => {
                return Err((
                    Value::Null,
                    RpcError::invalid_request(format!("`id` must be a string or a number, not {other}")),
                ))
            }
        };
        let reply_id = id.clone().unwrap_or(Value::Null);
        if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err((reply_id, RpcError::invalid_request("`jsonrpc` must be \"2.0\"")));
        }
        let method = match m.remove("method") {
            Some(Value::String(s)) => s,
            None if id.is_some() && (m.contains_key("result") || m.contains_key("error")) => {
                return Ok(Incoming::Response)
            }
            _ => return Err((reply_id, RpcError::invalid_request("`method` must be a string"))),
        };
        let Some(id) = id else {
            // Never answered, whatever their params.
            return Ok(Incoming::Notification { method });
        };
        let params = match m.remove("params") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => return Err((id, RpcError::invalid_params("`params` must be an object"))),
        };
        Ok(Incoming::Request { id, method, params })
    }
}
