//! The emitter: events written from templates and simulated times, in Kineto's layout.

use crate::*;

pub const FLUSH_AT: usize = 1 << 20;

pub static DIGITS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

pub struct Emitter<W: Write> {
    pub buf: Vec<u8>,
    pub w: W,
    pub written: u64,
    pub events: u64,
}

impl<W: Write> Emitter<W> {
    pub fn new(w: W) -> Self {
        Emitter { buf: Vec::with_capacity(FLUSH_AT + (1 << 16)), w, written: 0, events: 0 }
    }

    pub fn bytes(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    pub fn flush_buf(&mut self) -> io::Result<()> {
        self.w.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    #[inline]
    pub fn s(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    #[inline]
    pub fn u(&mut self, mut v: u64) {
        let mut tmp = [0u8; 20];
        let mut i = 20;
        while v >= 100 {
            let d = ((v % 100) * 2) as usize;
            v /= 100;
            i -= 2;
            tmp[i] = DIGITS[d];
            tmp[i + 1] = DIGITS[d + 1];
        }
        if v >= 10 {
            let d = (v * 2) as usize;
            i -= 2;
            tmp[i] = DIGITS[d];
            tmp[i + 1] = DIGITS[d + 1];
        } else {
            i -= 1;
            tmp[i] = b'0' + v as u8;
        }
        self.buf.extend_from_slice(&tmp[i..]);
    }

    /// nanoseconds as microseconds with three decimals
    #[inline]
    pub fn t(&mut self, ns: u64) {
        self.u(ns / 1000);
        let f = (ns % 1000) as usize;
        let d = (f % 100) * 2;
        self.buf.extend_from_slice(&[b'.', b'0' + (f / 100) as u8, DIGITS[d], DIGITS[d + 1]]);
    }

    pub fn scope(&mut self, p: &Prog, r: &SRec) {
        let t = &p.tpls[r.tpl as usize];
        self.s(&t.a);
        if t.kind == Kind::Step {
            self.u(r.num);
            self.s(&t.b);
        }
        self.t(r.ts);
        self.s(b", \"dur\": ");
        self.t(r.dur);
        self.s(b",\n    \"args\": {\n      ");
        if t.kind == Kind::Py {
            self.s(b"\"Python parent id\": ");
            if r.parent == 0 {
                self.s(b"null");
            } else {
                self.u(r.parent);
            }
            self.s(b", \"Python id\": ");
            self.u(r.id);
        } else {
            self.s(b"\"External id\": ");
            self.u(r.id);
            self.s(b",\"Record function id\": ");
            self.u(r.id);
            if t.kind != Kind::Step {
                self.s(&t.b);
            }
        }
        self.s(b", \"Ev Idx\": ");
        self.u(r.idx);
        self.s(b"\n    }\n  },\n");
        self.events += 1;
    }

    pub fn gpu(&mut self, p: &Prog, g: &GRec) {
        let rt = &p.tpls[g.rt as usize];
        self.s(&rt.a);
        self.t(g.ts);
        self.s(b", \"dur\": ");
        self.t(g.dur);
        self.s(b",\n    \"args\": {\n      \"External id\": ");
        self.u(g.ext);
        self.s(&rt.b);
        self.u(g.corr);
        self.s(b"\n    }\n  },\n");
        self.events += 1;
        if g.act == u32::MAX {
            return;
        }
        // flow start on the launching thread
        self.s(b"  {\n    \"ph\": \"s\", \"id\": ");
        self.u(g.corr);
        self.s(&rt.c);
        self.t(g.ts);
        self.s(b",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n");
        // the GPU activity
        let a = &p.tpls[g.act as usize];
        self.s(&a.a);
        self.t(g.ats);
        self.s(b", \"dur\": ");
        self.t(g.adur);
        self.s(b",\n    \"args\": {\n      \"External id\": ");
        self.u(g.ext);
        self.s(&a.b);
        self.u(g.corr);
        if a.kind == Kind::Kernel {
            self.s(&a.c);
        } else {
            self.s(b",      \"bytes\": ");
            self.u(g.bytes);
            self.s(b", \"memory bandwidth (GB/s)\": ");
            let bw = g.bytes as f64 / g.adur.max(1) as f64;
            let _ = write!(self.buf, "{bw}");
            self.s(b"\n    }\n  },\n");
        }
        // flow end on the GPU stream
        self.s(b"  {\n    \"ph\": \"f\", \"id\": ");
        self.u(g.corr);
        self.s(&a.d);
        self.t(g.ats);
        self.s(b",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n");
        self.events += 3;
    }

    pub fn gpu_step(&mut self, p: &Prog, num: u64, ts: u64, dur: u64, ext: u64) {
        let t = &p.tpls[p.gpu_step as usize];
        self.s(&t.a);
        self.u(num);
        self.s(&t.b);
        self.t(ts);
        self.s(b", \"dur\": ");
        self.t(dur);
        self.s(b",\n    \"args\": {\n      \"External id\": ");
        self.u(ext);
        self.s(b"\n    }\n  },\n");
        self.events += 1;
    }

    pub fn meta(&mut self, name: &str, ts: u64, pid: &str, tid: &str, arg: &str) {
        let _ = write!(self.buf, "  {{\n    \"name\": \"{name}\", \"ph\": \"M\", \"ts\": ");
        self.t(ts);
        let _ = write!(self.buf, ", \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      {arg}\n    }}\n  }},\n");
        self.events += 1;
    }
}
