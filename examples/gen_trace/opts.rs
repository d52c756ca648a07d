//! Command-line options.

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Backend {
    Flash,
    Efficient,
    Cudnn,
    Math,
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Mlp {
    Gelu,
    SwiGlu,
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Order {
    Kineto,
    Step,
}

#[derive(Clone, Debug)]
pub struct Opts {
    pub size: Option<u64>,
    pub steps: Option<u64>,
    pub layers: Option<u32>,
    pub seed: u64,
    pub backend: Backend,
    pub mlp: Mlp,
    pub gzip: bool,
    pub gzip_level: u32,
    pub shapes: bool,
    pub order: Order,
    pub ranks: u32,
    pub rank: u32,
    pub world: Option<u32>,
    pub quiet: bool,
    pub out: Option<String>,
}

pub const USAGE: &str = "usage: gen_trace --size SIZE | --steps N [--gzip] [--seed N] [--layers N]
       [--backend flash|efficient|cudnn|math] [--mlp gelu|swiglu] [--ranks N | --rank R]
       [--world-size W] [--order kineto|step] [--no-shapes] [--gzip-level 0-9] [--quiet] [OUT]
  SIZE: bytes of uncompressed JSON, decimal suffixes K M G T (300K, 500M, 2G) or KiB MiB GiB.
  OUT:  output file (stdout if absent or '-'); with --ranks N > 1 a directory.";

pub fn parse_size(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let l = lower.strip_suffix('b').unwrap_or(&lower);
    let table: [(&str, f64); 8] = [
        ("ki", 1024.0),
        ("mi", 1024.0 * 1024.0),
        ("gi", 1024.0 * 1024.0 * 1024.0),
        ("ti", 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("k", 1e3),
        ("m", 1e6),
        ("g", 1e9),
        ("t", 1e12),
    ];
    let mut num = l;
    let mut mult = 1.0;
    for (suf, m) in table {
        if let Some(n) = l.strip_suffix(suf) {
            num = n;
            mult = m;
            break;
        }
    }
    let v: f64 = num.trim().parse().map_err(|_| format!("bad size '{s}' (try 300K, 500M, 2G)"))?;
    if v.is_nan() || v <= 0.0 {
        return Err(format!("size must be positive: '{s}'"));
    }
    Ok((v * mult) as u64)
}

pub fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        size: None,
        steps: None,
        layers: None,
        seed: 1,
        backend: Backend::Flash,
        mlp: Mlp::Gelu,
        gzip: false,
        gzip_level: 6,
        shapes: true,
        order: Order::Kineto,
        ranks: 1,
        rank: 0,
        world: None,
        quiet: false,
        out: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    pub fn val<'a>(args: &'a [String], i: &mut usize, name: &str) -> Result<&'a str, String> {
        *i += 1;
        args.get(*i).map(|s| s.as_str()).ok_or_else(|| format!("{name} needs a value"))
    }
    pub fn num<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, String> {
        s.parse().map_err(|_| format!("{name}: not a number: '{s}'"))
    }
    while i < args.len() {
        let a = args[i].as_str();
        // accept --flag=value too
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a, None),
        };
        let mut get = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => val(&args, &mut i, name).map(|s| s.to_string()),
            }
        };
        match flag {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "--size" | "-s" => o.size = Some(parse_size(&get("--size")?)?),
            "--steps" => o.steps = Some(num(&get("--steps")?, "--steps")?),
            "--layers" => o.layers = Some(num(&get("--layers")?, "--layers")?),
            "--seed" => o.seed = num(&get("--seed")?, "--seed")?,
            "--gzip" | "-z" => o.gzip = true,
            "--gzip-level" => o.gzip_level = num(&get("--gzip-level")?, "--gzip-level")?,
            "--no-shapes" => o.shapes = false,
            "--quiet" | "-q" => o.quiet = true,
            "--ranks" => o.ranks = num(&get("--ranks")?, "--ranks")?,
            "--rank" => o.rank = num(&get("--rank")?, "--rank")?,
            "--world-size" => o.world = Some(num(&get("--world-size")?, "--world-size")?),
            "--backend" => {
                o.backend = match get("--backend")?.as_str() {
                    "flash" => Backend::Flash,
                    "efficient" | "mem_efficient" | "mem-efficient" => Backend::Efficient,
                    "cudnn" => Backend::Cudnn,
                    "math" => Backend::Math,
                    v => return Err(format!("--backend: unknown '{v}' (flash|efficient|cudnn|math)")),
                }
            }
            "--mlp" => {
                o.mlp = match get("--mlp")?.as_str() {
                    "gelu" => Mlp::Gelu,
                    "swiglu" | "silu" => Mlp::SwiGlu,
                    v => return Err(format!("--mlp: unknown '{v}' (gelu|swiglu)")),
                }
            }
            "--order" => {
                o.order = match get("--order")?.as_str() {
                    "kineto" => Order::Kineto,
                    "step" => Order::Step,
                    v => return Err(format!("--order: unknown '{v}' (kineto|step)")),
                }
            }
            "-" => o.out = Some("-".into()),
            f if f.starts_with('-') => return Err(format!("unknown option '{f}'\n{USAGE}")),
            _ => {
                if o.out.is_some() {
                    return Err(format!("more than one OUT given ('{a}')"));
                }
                o.out = Some(a.to_string());
            }
        }
        i += 1;
    }
    if o.size.is_none() && o.steps.is_none() {
        return Err(format!("give --size or --steps\n{USAGE}"));
    }
    if o.steps == Some(0) {
        return Err("--steps must be at least 1".into());
    }
    if o.layers == Some(0) {
        return Err("--layers must be at least 1".into());
    }
    if o.ranks == 0 {
        return Err("--ranks must be at least 1".into());
    }
    if o.gzip_level > 9 {
        return Err("--gzip-level is 0..9".into());
    }
    if o.ranks > 1 && matches!(o.out.as_deref(), None | Some("-")) {
        return Err("--ranks N > 1 writes one file per rank: give an output directory".into());
    }
    Ok(o)
}
