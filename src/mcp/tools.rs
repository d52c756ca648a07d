//! The tools an assistant may call, their input schemas, and their results: a text block for
//! reading and `structuredContent` holding the Report's JSON (or the part asked for). A file
//! that cannot be read is a tool error (`isError`) naming it, so the model can correct itself.

use crate::analysis::job::{diff, gate};
use crate::analysis::rules::taxonomy::parse_rules;
use crate::files;
use crate::parallel::{self, Split};
use crate::{combine_all, Options, Range, Report, TraceReport};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// A part of each trace's report, for the focused tools.
#[derive(Clone, Copy)]
enum Section {
    Buckets,
    TopKernels,
    TopOps,
    Hints,
    Attention,
    Idle,
}

const SECTIONS: [(&str, Section, &str); 6] = [
    ("buckets", Section::Buckets, "Where GPU kernel time goes by kind (gemm, attention, communication, ...): time, share, count, the rule that matched and the largest names, per trace."),
    ("top_kernels", Section::TopKernels, "The GPU kernels that take the most time, with their bucket and share, per trace."),
    ("top_ops", Section::TopOps, "The CPU operators (aten::..., modules) whose kernels take the most GPU time, per trace."),
    ("hints", Section::Hints, "What to try: each hint's severity, message, the numbers that triggered it and the suggestion, per trace."),
    ("attention", Section::Attention, "Which attention backend ran (flash, memory-efficient, math, ...), its time and the evidence, per trace."),
    ("idle", Section::Idle, "Why the GPU waits: its idle gaps classified by cause (CPU launch, data loading, synchronisation, ...), per trace."),
];

impl Section {
    fn of(self, t: &TraceReport) -> Result<Value, serde_json::Error> {
        match self {
            Section::Buckets => serde_json::to_value(&t.buckets),
            Section::TopKernels => serde_json::to_value(&t.top_kernels),
            Section::TopOps => serde_json::to_value(&t.top_ops),
            Section::Hints => serde_json::to_value(&t.hints),
            Section::Attention => serde_json::to_value(&t.attention),
            Section::Idle => serde_json::to_value(&t.idle),
        }
    }
}

fn paths_schema() -> Value {
    json!({
        "type": "array", "items": { "type": "string" }, "minItems": 1,
        "description": "Trace files (.json, .json.gz), tracesight JSON reports, or directories of them (every *.json / *.json.gz inside, one file per rank); relative to the server's working directory."
    })
}

fn top_schema(default: usize) -> Value {
    json!({ "type": "integer", "minimum": 1, "default": default, "description": "Rows in the top-kernel and top-op tables." })
}

fn rules_schema() -> Value {
    json!({
        "type": "string",
        "description": "Your own bucket rules, tried before the built-in ones: one `pattern => bucket_id` per line (`#` starts a comment), as `tracesight --rules FILE` reads them, e.g. `my fused moe* => moe_routing` (space-separated name tokens, `*` at a token end)."
    })
}

/// What `structuredContent` holds, so a client can check it (MCP 2025-06-18 `outputSchema`).
/// The outer shape only: the Report's own fields are described in docs/json.md.
fn report_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool_version": { "type": "string" },
            "traces": { "type": "array", "items": { "type": "object" }, "description": "One report per trace read (rank order), as `tracesight --json` prints it." },
            "errors": { "type": "array", "items": { "type": "object", "properties": { "file": { "type": "string" }, "message": { "type": "string" } } }, "description": "Files that could not be read, each with its reason." },
        },
        "required": ["tool_version", "traces", "errors"],
    })
}

fn section_schema(key: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "traces": { "type": "array", "items": { "type": "object", "required": ["file", key] } },
            "errors": { "type": "array", "items": { "type": "object" } },
        },
        "required": ["traces", "errors"],
    })
}

fn diff_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "diff": { "type": "object", "description": "As `tracesight diff --json` prints it." },
            "checks": { "type": "array", "items": { "type": "object" }, "description": "Each `fail_if` limit with the measured change and whether it was crossed." },
        },
        "required": ["diff", "checks"],
    })
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str], output: Value) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": { "type": "object", "properties": properties, "required": required, "additionalProperties": false },
        "outputSchema": output,
    })
}

/// Every tool with its input schema, for tools/list.
pub fn list() -> Vec<Value> {
    let range = json!({ "type": "string", "pattern": "^[0-9.]*\\.\\.[0-9.]*$", "description": "Only GPU time in this range, in ms after the first GPU row: `120..135.5`, `..50`, `100..`." });
    let mut tools = vec![
        tool(
            "analyze",
            "Analyse PyTorch profiler (Kineto) traces: the text summary (GPU busy/idle, buckets, attention backend, top kernels and ops, hints) and, as structuredContent, the whole report as `tracesight --json` prints it.",
            json!({ "paths": paths_schema(), "top": top_schema(25), "range_ms": range, "rules": rules_schema() }),
            &["paths"],
            report_schema(),
        ),
        tool(
            "diff",
            "What changed from one run to another (each a trace, a report, or a directory of ranks): the verdict and the changes in step time, buckets, kernels and ops; with fail_if, the CI limits checked.",
            json!({
                "before": { "type": "string", "description": "The baseline: a trace, a tracesight report or a directory of ranks." },
                "after": { "type": "string", "description": "The run compared with it." },
                "fail_if": { "type": "array", "items": { "type": "string" }, "description": "Limits as `tracesight diff --fail-if` takes them: `step_time>+5%`, `gemm>+10%`, `idle>+2ms`." },
                "top": top_schema(25),
            }),
            &["before", "after"],
            diff_schema(),
        ),
    ];
    for (name, _, description) in SECTIONS {
        let properties = json!({ "paths": paths_schema(), "top": top_schema(10), "rules": rules_schema() });
        tools.push(tool(name, description, properties, &["paths"], section_schema(name)));
    }
    tools
}

pub fn names() -> String {
    let mut names = vec!["analyze", "diff"];
    names.extend(SECTIONS.iter().map(|s| s.0));
    names.join(", ")
}

/// The result of calling `name`, or None when there is no such tool.
pub fn call(name: &str, args: &Map<String, Value>) -> Option<Value> {
    let result = match name {
        "analyze" => analyze(args),
        "diff" => diff_tool(args),
        _ => {
            let (key, section, _) = SECTIONS.iter().find(|s| s.0 == name)?;
            section_tool(key, *section, args)
        }
    };
    Some(result.unwrap_or_else(tool_error))
}

fn tool_error(message: String) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}

fn success(text: String, structured: Value) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": structured, "isError": false })
}

fn check_keys(args: &Map<String, Value>, known: &[&str]) -> Result<(), String> {
    match args.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!("unknown argument `{k}` (this tool takes: {})", known.join(", "))),
        None => Ok(()),
    }
}

fn string_arg(args: &Map<String, Value>, key: &str) -> Result<String, String> {
    match args.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(other) => Err(format!("`{key}` must be a non-empty string, not {other}")),
        None => Err(format!("`{key}` is required")),
    }
}

fn strings_arg(args: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match args.get(key) {
        None => Ok(Vec::new()),
        // One path given bare is taken as a list of one.
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(|| format!("`{key}` must hold strings, not {v}")))
            .collect(),
        Some(other) => Err(format!("`{key}` must be a list of strings, not {other}")),
    }
}

fn top_arg(args: &Map<String, Value>, default: usize) -> Result<usize, String> {
    match args.get("top") {
        None => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Ok(n as usize),
            _ => Err(format!("`top` must be a positive integer, not {v}")),
        },
    }
}

fn options(args: &Map<String, Value>, default_top: usize) -> Result<Options, String> {
    let window = match args.get("range_ms") {
        None => None,
        Some(Value::String(s)) => Some(Range::parse_ms(s).map_err(|e| format!("`range_ms`: {e}"))?),
        Some(other) => Err(format!("`range_ms` must be a string such as \"120..135.5\", not {other}"))?,
    };
    let rules = match args.get("rules") {
        None => Vec::new(),
        Some(Value::String(text)) => parse_rules(text).map_err(|e| format!("`rules`: {e}"))?,
        Some(other) => Err(format!("`rules` must be a string of `pattern => bucket_id` lines, not {other}"))?,
    };
    let mut opts = Options { top_n: top_arg(args, default_top)?, window, rules, ..Options::default() };
    opts.fork = parallel::threads(parallel::cores());
    Ok(opts)
}

/// Reads every path into one Report, as the CLI does (the same order, the same threads);
/// an error when no trace could be read, naming each file and what went wrong.
fn load(paths: &[String], opts: &Options) -> Result<Report, String> {
    if paths.is_empty() {
        return Err("`paths` is required: a list of trace files or directories".into());
    }
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let (found, unreadable) = files::expand(&paths);
    let mut results: Vec<_> = unreadable.into_iter().map(Err).collect();
    let split = Split::new(parallel::cores());
    for path in found {
        let name = files::display_name(&path);
        results.push(files::read(&name, &path, split, opts, &|_| {}).0);
    }
    let report = combine_all(results);
    if report.traces.is_empty() {
        let lines: Vec<String> =
            report.errors.iter().map(|e| format!("tracesight: error: {}: {}", e.file, e.message)).collect();
        return Err(if lines.is_empty() { "tracesight: no trace was read".into() } else { lines.join("\n") });
    }
    Ok(report)
}

fn to_value(v: &impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| format!("tracesight: cannot serialise the result: {e}"))
}

fn analyze(args: &Map<String, Value>) -> Result<Value, String> {
    check_keys(args, &["paths", "top", "range_ms", "rules"])?;
    let opts = options(args, 25)?;
    let report = load(&strings_arg(args, "paths")?, &opts)?;
    Ok(success(crate::text::render(&report), to_value(&report)?))
}

fn diff_tool(args: &Map<String, Value>) -> Result<Value, String> {
    check_keys(args, &["before", "after", "fail_if", "top"])?;
    let limits: Vec<gate::Limit> = strings_arg(args, "fail_if")?
        .iter()
        .map(|l| gate::Limit::parse(l).map_err(|e| format!("`fail_if`: {e}")))
        .collect::<Result<_, _>>()?;
    let top = top_arg(args, 25)?;
    let opts = Options::default();
    // Both sides whole: a diff against a set of ranks with one missing would mislead.
    let side = |key: &str| -> Result<Vec<TraceReport>, String> {
        let report = load(&[string_arg(args, key)?], &opts)?;
        match report.errors.first() {
            Some(e) => Err(format!("tracesight: error: {}: {} ({key})", e.file, e.message)),
            None => Ok(report.traces),
        }
    };
    let (a, b) = (side("before")?, side("after")?);
    let d = diff::diff(&a, &b);
    let checks = gate::check(&d, &limits);
    let text = if limits.is_empty() {
        crate::text::render_diff(&d, top)
    } else {
        crate::export::diff_md::render(&d, &checks, top.min(10))
    };
    Ok(success(text, json!({ "diff": to_value(&d)?, "checks": to_value(&checks)? })))
}

/// `{ traces: [{ file, rank, <key>: the section }], errors }`.
fn section_tool(key: &str, section: Section, args: &Map<String, Value>) -> Result<Value, String> {
    check_keys(args, &["paths", "top", "rules"])?;
    let report = load(&strings_arg(args, "paths")?, &options(args, 10)?)?;
    let mut traces = Vec::new();
    for t in &report.traces {
        let part = section.of(t).map_err(|e| format!("tracesight: cannot serialise the result: {e}"))?;
        traces.push(json!({ "file": t.file, "rank": t.rank, key: part }));
    }
    let structured = json!({ "traces": traces, "errors": to_value(&report.errors)? });
    // The spec asks tools with structured output to give the same JSON as text too.
    let text = serde_json::to_string_pretty(&structured).map_err(|e| e.to_string())?;
    Ok(success(text, structured))
}
