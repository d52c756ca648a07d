//! The tracesight command line: analyse PyTorch profiler traces and print a text report or
//! the Report as JSON.

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use clap::Parser;
    use std::io;
    use std::path::{Path, PathBuf};
    use std::process::ExitCode;
    use std::time::Instant;
    use tracesight::analysis::job::gate::Limit;
    use tracesight::files;
    use tracesight::parallel::{cores, InParts, Split};
    use tracesight::{combine_all, Options, TraceError};

    /// Where does my GPU time go? Analyses PyTorch profiler (Kineto) Chrome traces:
    /// `.json` or `.json.gz` files, or directories of them (one file per rank).
    #[derive(Parser)]
    #[command(name = "tracesight", version)]
    struct Args {
        /// Trace files or directories (every *.json / *.json.gz inside).
        paths: Vec<PathBuf>,
        /// Print the Report as JSON instead of text.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print a Markdown summary (headline numbers, buckets, attention backend, top
        /// kernels and ops, hints) for a GitHub issue or a chat message.
        #[arg(long)]
        markdown: bool,
        /// Also write the tables as CSV files into this directory (created if missing):
        /// <trace>.{buckets,kernels,ops,steps,hints}.csv per trace, ranks.csv for several.
        #[arg(long, value_name = "DIR")]
        csv: Option<PathBuf>,
        /// Rows in the top-kernels and top-ops tables.
        #[arg(long, alias = "top_n", default_value_t = 25)]
        top: usize,
        /// A trace file (the original script's flag).
        #[arg(long = "trace_file", alias = "trace-file")]
        trace_file: Vec<PathBuf>,
        /// A directory of traces (the original script's flag).
        #[arg(long = "trace_dir", alias = "trace-dir")]
        trace_dir: Vec<PathBuf>,
        /// Your own bucket rules, tried first: lines of `pattern => bucket_id` (token patterns,
        /// `*` at token ends; `#` comments), e.g. `my fused mlp* => gemm`.
        #[arg(long)]
        rules: Option<PathBuf>,
        /// Analyse only GPU time in this range, in milliseconds after the first GPU row
        /// (`120..135.5`; an open end: `..50`, `100..`): rows are clipped to it.
        #[arg(long, value_name = "FROM..TO", value_parser = tracesight::Range::parse_ms)]
        range: Option<tracesight::Range>,
        /// The step time along the critical path with a bucket (`gemm`) or the kernels and ops
        /// whose names contain a text made that much faster: `gemm=30%`.
        #[arg(long, value_name = "TARGET=PCT%", value_parser = tracesight::analysis::WhatIfSpec::parse)]
        what_if: Option<tracesight::analysis::WhatIfSpec>,
        /// Dense peak TFLOP/s to measure efficiency against, instead of the device table's:
        /// one figure for every precision (`989`) or per precision (`bf16=989,fp8=1979`).
        #[arg(long, value_name = "TFLOPS", value_parser = peak_list)]
        peak_tflops: Option<PeakList>,
        /// Memory bandwidth in TB/s to measure efficiency against, instead of the table's.
        #[arg(long, value_name = "TBPS", value_parser = positive)]
        peak_tbps: Option<f64>,
        /// The model's parameter count (`7e9`), for the analytic 6·N·T MFU beside the measured
        /// one; needs --tokens-per-step.
        #[arg(long, value_name = "N", value_parser = positive, requires = "tokens_per_step")]
        params: Option<f64>,
        /// Tokens per step (global batch x sequence length on this rank), with --params.
        #[arg(long, value_name = "T", value_parser = positive, requires = "params")]
        tokens_per_step: Option<f64>,
        /// The trace of the CUDA/HIP graph capture (or an eager trace of the same step) beside a
        /// trace of graph replays (one trace): replayed kernels take the ops that captured them.
        #[arg(long, value_name = "FILE")]
        capture: Option<PathBuf>,
        /// Print read speed per file on stderr.
        #[arg(long, short)]
        verbose: bool,
        /// Threads that parse one large file in parts and build its report (default: all cores);
        /// a `.json.gz` is inflated on one more as they go. The report is the same whatever the
        /// number.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: Option<u32>,
        /// Bytes per part when a file is parsed on several threads (tests split small files).
        #[arg(long, hide = true)]
        part_bytes: Option<u64>,
        /// Files from this size on get a progress bar when stderr is a terminal (tests lower it).
        #[arg(long, hide = true, default_value_t = 100_000_000)]
        progress_from: u64,
    }

    /// `--peak-tflops`' figures (one value to clap, which would take a `Vec` for many).
    #[derive(Clone)]
    struct PeakList(Vec<(Option<tracesight::vocab::Precision>, f64)>);

    fn peak_list(s: &str) -> Result<PeakList, String> {
        tracesight::analysis::UserPeaks::parse_tflops(s).map(PeakList)
    }

    /// A positive, finite number (`7e9` and `0.5` alike).
    fn positive(s: &str) -> Result<f64, String> {
        match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            _ => Err(format!("`{s}` is not a positive number")),
        }
    }

    /// A progress bar on stderr for a file of `size` bytes from `from` bytes on, only when
    /// stderr is a terminal (never in pipes, logs or tests).
    fn progress_bar(name: &str, size: u64, from: u64) -> Option<indicatif::ProgressBar> {
        use std::io::IsTerminal;
        if size < from || !io::stderr().is_terminal() {
            return None;
        }
        let bar = indicatif::ProgressBar::new(size);
        let style =
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}")
                .map(|s| s.progress_chars("=> "));
        if let Ok(style) = style {
            bar.set_style(style);
        }
        bar.set_message(name.to_string());
        Some(bar)
    }

    fn write_csv(dir: &Path, report: &tracesight::Report) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (name, text) in tracesight::export::csv::files(report) {
            std::fs::write(dir.join(name), text)?;
        }
        Ok(())
    }

    /// Reads every file (traces or reports), with warnings on stderr; returns the results.
    fn load_all(
        inputs: &[PathBuf],
        opts: &Options,
        verbose: bool,
        split: Split,
        progress_from: u64,
    ) -> Vec<Result<Vec<tracesight::TraceReport>, TraceError>> {
        let (files, unreadable) = files::expand(inputs);
        let mut results: Vec<_> = unreadable.into_iter().map(Err).collect();
        for path in files {
            let name = files::display_name(&path);
            let started = Instant::now();
            let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let bar = progress_bar(&name, size, progress_from);
            let show = |bytes: u64| {
                if let Some(b) = &bar {
                    b.set_position(bytes);
                }
            };
            let (result, in_parts) = files::read(&name, &path, split, opts, &show);
            match in_parts {
                Some(_) if !verbose => {}
                Some(InParts::Joined) => eprintln!("[read] {name}: parsed in parts on {} threads", split.threads),
                Some(InParts::ReadOnFrom { part }) => eprintln!(
                    "[read] {name}: parsed in parts on {} threads; part {} could not be joined (a limit reached \
                     in it, or a cut inside a string): read on from it on one thread",
                    split.threads,
                    part + 1
                ),
                None => {}
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            for r in result.iter().flatten() {
                if verbose {
                    let secs = started.elapsed().as_secs_f64();
                    let mb = r.json_bytes as f64 / 1e6;
                    eprintln!(
                        "[read] {name}: {} events, {mb:.1} MB of JSON in {secs:.2} s ({:.0} MB/s)",
                        r.events,
                        mb / secs.max(1e-9)
                    );
                }
                for d in r.diagnostics.iter().filter(|d| d.severity == tracesight::report::Severity::Error) {
                    eprintln!("tracesight: warning: {name}: {}", d.message);
                }
            }
            if let Err(e) = &result {
                eprintln!("tracesight: error: {e}");
            }
            results.push(result);
        }
        results
    }

    /// One replay trace read with the capture trace beside it; usage errors and an unreadable
    /// capture end the run with their exit status.
    fn with_capture(
        inputs: &[PathBuf],
        capture: &Path,
        opts: &Options,
    ) -> Result<Result<Vec<tracesight::TraceReport>, TraceError>, ExitCode> {
        let [replay] = inputs else {
            eprintln!("tracesight: error: --capture goes with exactly one replay trace ({} given)", inputs.len());
            return Err(ExitCode::from(2));
        };
        let open = |p: &Path| std::fs::File::open(p).map_err(|e| files::error(p, &format!("cannot open: {e}")));
        let name = files::display_name(capture);
        let read = open(capture).and_then(|f| tracesight::analysis::read_capture(&name, f, opts));
        let capture = read.map_err(|e| {
            eprintln!("tracesight: error: capture trace: {e}");
            ExitCode::FAILURE
        })?;
        let name = files::display_name(replay);
        let result = open(replay)
            .and_then(|f| tracesight::analysis::analyze_with_capture(&name, f, capture, opts, &mut |_| true));
        if let Err(e) = &result {
            eprintln!("tracesight: error: {e}");
        }
        Ok(result.map(|t| vec![t]))
    }

    /// `tracesight diff A B [--json]`: what changed from A to B (each a trace, a report, or a
    /// directory of ranks).
    #[derive(Parser)]
    #[command(name = "tracesight diff")]
    struct DiffArgs {
        /// Before: a trace, a tracesight JSON report, or a directory of ranks.
        a: PathBuf,
        /// After.
        b: PathBuf,
        /// Print the diff as JSON.
        #[arg(long)]
        json: bool,
        /// Print the diff as Markdown (a pull request comment); the output with --fail-if.
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
        /// A limit for CI: `step_time>+5%`, `gemm>+10%`, `idle>+2ms`, `attention<-20%`. Exits
        /// with status 3 when one is crossed or cannot be checked. Repeatable.
        #[arg(long = "fail-if", value_name = "LIMIT", value_parser = Limit::parse)]
        fail_if: Vec<Limit>,
        /// Rows of changed kernels and ops in the text.
        #[arg(long, default_value_t = 25)]
        top: usize,
    }

    /// The exit status of a diff whose gate failed (1 is an unreadable input, 2 a usage error).
    const GATE_FAILED: u8 = 3;

    /// Writes to stdout; a reader that went away (`| head`) is not an error.
    fn out(text: &str) {
        use std::io::Write;
        let mut stdout = io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
    }

    /// Prints `value` as pretty JSON, streamed: a 2 GB trace's report is ~150 MB of JSON,
    /// which as a String (and a copy with its newline) doubled the peak RSS. False (with a
    /// message) when it cannot be serialised; a reader that went away is not an error.
    fn print_json(value: &impl serde::Serialize) -> bool {
        use std::io::Write;
        let mut w = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
        let written = tracesight::export::json::write_pretty(&mut w, value)
            .map_err(io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush());
        match written {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                eprintln!("tracesight: cannot write the result: {e}");
                false
            }
            _ => true,
        }
    }

    /// `tracesight serve DIR`: the page and DIR's traces on a loopback port.
    #[derive(Parser)]
    #[command(name = "tracesight serve")]
    struct ServeArgs {
        /// The directory whose traces (*.json, *.json.gz, also in subdirectories) are listed.
        dir: PathBuf,
        /// The port (0: any free one; the address is printed).
        #[arg(long, default_value_t = 8000)]
        port: u16,
        /// The address to listen on. Only loopback unless you ask: anyone who can reach the
        /// port can read the traces.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The built site (scripts/build-web.sh writes dist/). Default: the site carried in the
        /// binary (`--features embed-site`), else dist/ here or beside the binary's checkout.
        #[arg(long)]
        site: Option<PathBuf>,
    }

    fn find_site(given: Option<&Path>) -> Result<tracesight::serve::Site, String> {
        use tracesight::serve::Site;
        if let Some(p) = given {
            return Site::dir(p);
        }
        if let Some(s) = Site::embedded() {
            return Ok(s);
        }
        // A checkout: target/release/tracesight beside dist/.
        let exe = std::env::current_exe().ok();
        let beside = exe.as_deref().and_then(|e| e.ancestors().nth(3)).map(|root| root.join("dist"));
        let found = [Some(PathBuf::from("dist")), beside].into_iter().flatten().find_map(|d| Site::dir(&d).ok());
        found.ok_or_else(|| {
            "no built site: run scripts/build-web.sh (it writes dist/) and pass --site dist, or build with \
             `cargo build --release --features embed-site` after it to carry the site in the binary"
                .to_string()
        })
    }

    fn serve_main() -> ExitCode {
        let args = ServeArgs::parse_from(std::env::args().skip(1));
        let site = match find_site(args.site.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("tracesight: {e}");
                return ExitCode::from(2);
            }
        };
        let ready = |addr: std::net::SocketAddr| {
            println!("tracesight: serving the traces of {} on http://{addr}/  (Ctrl-C stops)", args.dir.display());
            if !addr.ip().is_loopback() {
                eprintln!("tracesight: warning: listening on {addr}, not only on loopback: anyone who reaches it reads the traces");
            }
        };
        match tracesight::serve::run(&args.dir, site, &args.host, args.port, ready) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tracesight: cannot serve {} on {}:{}: {e}", args.dir.display(), args.host, args.port);
                ExitCode::FAILURE
            }
        }
    }

    /// `tracesight mcp`: a Model Context Protocol server on stdin/stdout for AI assistants.
    #[derive(Parser)]
    #[command(name = "tracesight mcp")]
    struct McpArgs {}

    fn mcp_main() -> ExitCode {
        McpArgs::parse_from(std::env::args().skip(1));
        let (stdin, stdout) = (io::stdin(), io::stdout());
        match tracesight::mcp::run(stdin.lock(), stdout.lock(), &mut io::stderr()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tracesight mcp: {e}");
                ExitCode::FAILURE
            }
        }
    }

    fn diff_main() -> ExitCode {
        let args = DiffArgs::parse_from(std::env::args().skip(1));
        let opts = Options::default();
        let side = |p: &PathBuf| -> Option<Vec<tracesight::TraceReport>> {
            let report = combine_all(load_all(std::slice::from_ref(p), &opts, false, Split::new(cores()), u64::MAX));
            (report.errors.is_empty() && !report.traces.is_empty()).then_some(report.traces)
        };
        let (Some(a), Some(b)) = (side(&args.a), side(&args.b)) else {
            eprintln!("tracesight: diff needs two readable inputs");
            return ExitCode::FAILURE;
        };
        let d = tracesight::analysis::job::diff::diff(&a, &b);
        let checks = tracesight::analysis::job::gate::check(&d, &args.fail_if);
        if args.json {
            let printed = if args.fail_if.is_empty() {
                print_json(&d)
            } else {
                print_json(&serde_json::json!({ "diff": d, "checks": checks }))
            };
            if !printed {
                return ExitCode::FAILURE;
            }
        } else if args.markdown || !args.fail_if.is_empty() {
            out(&tracesight::export::diff_md::render(&d, &checks, args.top.min(10)));
        } else {
            out(&tracesight::text::render_diff(&d, args.top));
        }
        for c in checks.iter().filter(|c| !c.passed) {
            eprintln!("tracesight: limit failed: {}", c.message);
        }
        if checks.iter().all(|c| c.passed) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(GATE_FAILED)
        }
    }

    /// glibc raises its mmap threshold each time a large block is freed, up to 32 MB, after
    /// which the report build's short-lived per-row lists (a few MB to tens of MB each) come
    /// from the heap and stay resident once freed, as do the parsing threads' parts in their
    /// arenas. A fixed threshold keeps every block of 1 MB or more mapped on its own, so
    /// freeing it gives the memory back (2 GB trace, peak RSS: two threads 296-301 -> 245-246
    /// MB, one thread 256 -> 244 MB).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn return_freed_memory() {
        extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        // SAFETY: sets an allocator parameter before any thread is started.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 1 << 20);
        }
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    fn return_freed_memory() {}

    pub fn main() -> ExitCode {
        return_freed_memory();
        match std::env::args().nth(1).as_deref() {
            Some("diff") => return diff_main(),
            Some("serve") => return serve_main(),
            Some("mcp") => return mcp_main(),
            _ => {}
        }
        let args = Args::parse();
        let mut inputs: Vec<PathBuf> = args.paths.clone();
        inputs.extend(args.trace_file.iter().cloned());
        inputs.extend(args.trace_dir.iter().cloned());
        if inputs.is_empty() {
            eprintln!(
                "tracesight: no trace given. Usage: tracesight [--json | --markdown] [--csv DIR] [--top N] FILE|DIR...  or  tracesight diff A B [--json]"
            );
            return ExitCode::from(2);
        }
        let rules = match &args.rules {
            None => Vec::new(),
            Some(p) => match std::fs::read_to_string(p)
                .map_err(|e| e.to_string())
                .and_then(|t| tracesight::analysis::rules::taxonomy::parse_rules(&t))
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("tracesight: error: {}: {e}", p.display());
                    return ExitCode::from(2);
                }
            },
        };
        let mut split = Split::new(args.threads.map(|n| n as usize).unwrap_or_else(cores));
        let mut opts = Options { top_n: args.top, rules, window: args.range, ..Options::default() };
        opts.what_if = args.what_if.clone();
        opts.peaks = tracesight::analysis::UserPeaks {
            tflops: args.peak_tflops.clone().map(|p| p.0).unwrap_or_default(),
            tbps: args.peak_tbps,
        };
        opts.model = args
            .params
            .zip(args.tokens_per_step)
            .map(|(params, tokens_per_step)| tracesight::report::ModelSize { params, tokens_per_step });
        if split.threads > 1 {
            opts.fork = tracesight::parallel::threads(split.threads);
        }
        if let Some(b) = args.part_bytes {
            (split.part_bytes, split.min_bytes) = (b.max(1), 0);
        }
        let results = match &args.capture {
            None => load_all(&inputs, &opts, args.verbose, split, args.progress_from),
            Some(capture) => match with_capture(&inputs, capture, &opts) {
                Ok(r) => vec![r],
                Err(code) => return code,
            },
        };
        let report = combine_all(results);
        let failed = !report.errors.is_empty();
        if let Some(dir) = &args.csv {
            if let Err(e) = write_csv(dir, &report) {
                eprintln!("tracesight: cannot write CSV files to {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
        if args.markdown {
            out(&format!("{}\n", tracesight::export::markdown::render(&report)));
        } else if args.json {
            if !print_json(&report) {
                return ExitCode::FAILURE;
            }
        } else {
            out(&tracesight::text::render(&report));
        }
        if failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
