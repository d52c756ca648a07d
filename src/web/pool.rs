//! The page's worker pool: which worker reads which file (or part), the lead's split and its
//! inflating helper, and what each worker's events mean for the files.

use super::client::{Client, WorkerEvent};
use super::protocol::{Done, Job, Request, ToPage};
use crate::analysis::job::split::PartJob;
use js_sys::Array;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use web_sys::{File, MessageChannel};

/// What the pool tells the page, per file (`file` indexes the files given to `analyse`).
pub enum PoolEvent {
    /// A worker is ready: files can be opened. The first one says how many kernels it read
    /// warming up.
    Ready { warm_up_kernels: u32 },
    /// Bytes of `file` consumed so far.
    Progress { file: usize, bytes: f64 },
    /// `file` is finished: the Report of that file alone (as `tracesight --json` prints it),
    /// or why its worker stopped; and how the workers read it.
    Finished { file: usize, outcome: Result<Vec<u8>, String>, stats: WorkerStats },
    /// The first worker could not start (nothing is being read).
    Unavailable(String),
    /// The first worker's warm-up report (compact JSON), for the page to draw once out of
    /// sight.
    WarmUpReport(Vec<u8>),
}

/// How a file was read: what the lead worker said of its reading ([`Done`]), and when its
/// report reached the page (`Date.now()`, before it is shown: the benchmark tells reading from
/// drawing by it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WorkerStats {
    pub read: Done,
    pub done_ms: f64,
}

impl WorkerStats {
    /// The larger figures of two files' readings (the counts: both together).
    pub fn max(self, other: WorkerStats) -> WorkerStats {
        let (a, b) = (self.read, other.read);
        let read = Done {
            wasm_memory_bytes: a.wasm_memory_bytes.max(b.wasm_memory_bytes),
            parts: a.parts.max(b.parts),
            slices_read_here: a.slices_read_here + b.slices_read_here,
            inflated_by_reader: a.inflated_by_reader + b.inflated_by_reader,
        };
        WorkerStats { read, done_ms: self.done_ms.max(other.done_ms) }
    }
}

/// At most this many workers, whatever the machine: each holds its own wasm memory.
pub const MAX_WORKERS: usize = 8;

/// Reads several files at once: one [`Client`] (worker) per file, up to
/// `navigator.hardwareConcurrency` (at most [`MAX_WORKERS`]); each worker takes the next
/// waiting file when it finishes one. One file alone is led by the first worker, which may
/// split it into parts for the others (see [`Job::Lead`]). Workers beyond the first are
/// terminated once nothing waits, so an idle page holds one worker's memory.
#[derive(Clone)]
pub struct WorkerPool(Rc<RefCell<Pool>>);

struct Pool {
    slots: Vec<Slot>,
    /// How every file of the running batch is analysed.
    request: Request,
    /// The files of the running batch, and those not yet given to a worker.
    files: Vec<File>,
    waiting: VecDeque<usize>,
    /// The file being read in parts, once its lead worker has split it.
    split: Option<Split>,
    /// The slot of the lead whose file a worker inflates.
    inflating: Option<usize>,
    on_event: Rc<dyn Fn(PoolEvent)>,
}

struct Slot {
    client: Client,
    /// The file this worker is reading.
    file: Option<usize>,
    role: Role,
}

impl Slot {
    /// The worker is free for the next file.
    fn free(&mut self) {
        self.file = None;
        self.role = Role::Lead;
    }
}

/// What a worker does with its file.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// Reads it (leading the others, if it splits it).
    Lead,
    /// Reads part `k` of it for the lead (1 and up: the lead reads part 0).
    Part(usize),
    /// Inflates it for the lead.
    Inflate,
}

/// A file read in parts.
struct Split {
    file: usize,
    lead: usize,
    /// What the workers of parts 1.. sent (null for a part that cannot be joined), by part.
    data: Vec<Option<JsValue>>,
    /// Bytes read so far, by part (part 0 is the lead's).
    bytes: Vec<f64>,
}

fn cores() -> usize {
    let cores = leptos::prelude::window().navigator().hardware_concurrency() as usize;
    cores.clamp(1, MAX_WORKERS)
}

impl WorkerPool {
    pub fn new(on_event: impl Fn(PoolEvent) + 'static) -> Self {
        let pool = WorkerPool(Rc::new(RefCell::new(Pool {
            slots: Vec::new(),
            request: Request::default(),
            files: Vec::new(),
            waiting: VecDeque::new(),
            split: None,
            inflating: None,
            on_event: Rc::new(on_event),
        })));
        pool.add_slot();
        pool
    }

    /// How many workers read `files` files at once (one file may later be read by more).
    pub fn width(files: usize) -> usize {
        cores().min(files.max(1))
    }

    /// Reads `files` as `request` says, each in a worker of its own, `width` at a time.
    pub fn analyse(&self, files: Vec<File>, request: Request) {
        let width = Self::width(files.len());
        {
            let mut pool = self.0.borrow_mut();
            pool.waiting = (0..files.len()).collect();
            pool.files = files;
            pool.request = request;
            pool.split = None;
            pool.inflating = None;
        }
        while self.0.borrow().slots.len() < width {
            self.add_slot();
        }
        for slot in 0..width {
            self.feed(slot);
        }
    }

    /// Stops every worker at once; one fresh worker gets ready for the next files.
    pub fn cancel(&self) {
        let clients: Vec<Client> = {
            let mut pool = self.0.borrow_mut();
            pool.waiting.clear();
            pool.split = None;
            pool.inflating = None;
            pool.slots
                .iter_mut()
                .map(|s| {
                    s.free();
                    s.client.clone()
                })
                .collect()
        };
        for (i, c) in clients.iter().enumerate() {
            if i == 0 {
                c.cancel();
            } else {
                c.release();
            }
        }
    }

    fn add_slot(&self) -> usize {
        let slot = self.0.borrow().slots.len();
        let pool = Rc::downgrade(&self.0);
        // The first worker stays for the page's life: it warms up while the user picks a file.
        let client = Client::new(move |ev| on_client_event(&pool, slot, ev), slot == 0);
        self.0.borrow_mut().slots.push(Slot { client, file: None, role: Role::Lead });
        slot
    }

    /// Gives worker `slot` the next waiting file, or lets it go when none waits (the first
    /// worker stays, ready for the next files).
    fn feed(&self, slot: usize) {
        let next = {
            let mut pool = self.0.borrow_mut();
            if pool.slots[slot].file.is_some() {
                return;
            }
            let next = pool.waiting.pop_front();
            pool.slots[slot].file = next;
            let job = match pool.files.len() {
                1 if cores() > 1 => Job::Lead { workers: cores() as u32 },
                _ => Job::Whole,
            };
            (pool.slots[slot].client.clone(), next.map(|i| pool.files[i].clone()), pool.request.clone(), job)
        };
        // Outside the borrow: a worker that cannot start reports back at once.
        match next {
            (client, Some(file), request, job) => client.analyse(Array::of1(&file), &request, &job, None),
            (client, None, _, _) if slot > 0 => client.release(),
            _ => {}
        }
    }

    /// The lead worker of `file` split it: the other parts go to workers of their own.
    fn split(&self, lead: usize, file: usize, parts: Vec<PartJob>) {
        let (handle, request) = {
            let mut pool = self.0.borrow_mut();
            pool.split = Some(Split { file, lead, data: vec![None; parts.len()], bytes: vec![0.0; parts.len() + 1] });
            (pool.files[file].clone(), pool.request.clone())
        };
        for (k, job) in parts.into_iter().enumerate() {
            let client = self.helper(file, Role::Part(k + 1));
            client.analyse(Array::of1(&handle), &request, &Job::Part { job }, None);
        }
    }

    /// An idle worker (started if none is), given `role` on `file`.
    fn helper(&self, file: usize, role: Role) -> Client {
        let idle = self.0.borrow().slots.iter().position(|s| s.file.is_none());
        let slot = idle.unwrap_or_else(|| self.add_slot());
        let mut pool = self.0.borrow_mut();
        pool.slots[slot].file = Some(file);
        pool.slots[slot].role = role;
        pool.slots[slot].client.clone()
    }

    /// The lead worker of `file` (a .json.gz) asks for a worker to inflate it: the two get
    /// the ends of a channel.
    fn inflate(&self, lead: usize, file: usize) {
        let (lead_client, handle, request) = {
            let mut pool = self.0.borrow_mut();
            pool.inflating = Some(lead);
            (pool.slots[lead].client.clone(), pool.files[file].clone(), pool.request.clone())
        };
        let Ok(channel) = MessageChannel::new() else {
            return lead_client.inflater(None);
        };
        let client = self.helper(file, Role::Inflate);
        client.analyse(Array::of1(&handle), &request, &Job::Inflate, Some(channel.port2()));
        lead_client.inflater(Some(channel.port1()));
    }

    /// The inflating worker is done, or died (`lost`): its slot is free; a lead still reading
    /// learns that it must read the file alone.
    fn inflate_done(&self, slot: usize, lost: bool) {
        let lead = {
            let mut pool = self.0.borrow_mut();
            pool.slots[slot].free();
            let lead = pool.inflating.take().map(|lead| pool.slots[lead].client.clone());
            lead.filter(|_| lost)
        };
        if let Some(lead) = lead {
            lead.inflater_lost();
        }
        self.feed(slot);
    }

    /// Part `part` is read (`data` None: it failed); once every part is in, the lead gets them.
    fn part_done(&self, slot: usize, part: usize, data: Option<JsValue>) {
        let lead = {
            let mut pool = self.0.borrow_mut();
            pool.slots[slot].free();
            let lead = pool.split.as_mut().and_then(|s| {
                *s.data.get_mut(part - 1)? = Some(data.unwrap_or(JsValue::NULL));
                s.data.iter().all(Option::is_some).then(|| {
                    let parts: Array = s.data.iter_mut().map(|d| d.take().unwrap_or(JsValue::NULL)).collect();
                    (s.lead, parts)
                })
            });
            lead.map(|(slot, parts)| (pool.slots[slot].client.clone(), parts))
        };
        if let Some((client, parts)) = lead {
            client.join(parts);
        }
        self.feed(slot);
    }

    /// Progress of `file` as the page shows it: bytes read by every worker reading it.
    fn progress(&self, slot: usize, file: usize, bytes: f64) -> f64 {
        let mut pool = self.0.borrow_mut();
        let size = pool.files.get(file).map_or(f64::MAX, |f| f.size());
        let part = match pool.slots[slot].role {
            Role::Part(k) => k,
            Role::Lead | Role::Inflate => 0,
        };
        match pool.split.as_mut().filter(|s| s.file == file) {
            Some(s) => {
                // The lead's count going back means it reads on from where the parts joined
                // end, or whole (`Progress::read_on`): the parts read before no longer count.
                if part == 0 && s.bytes.first().is_some_and(|&before| bytes < before) {
                    s.bytes.iter_mut().for_each(|b| *b = 0.0);
                }
                if let Some(b) = s.bytes.get_mut(part) {
                    *b = bytes;
                }
                s.bytes.iter().sum::<f64>().min(size)
            }
            None => bytes,
        }
    }
}

fn on_client_event(pool: &Weak<RefCell<Pool>>, slot: usize, ev: WorkerEvent) {
    let Some(pool) = pool.upgrade().map(WorkerPool) else { return };
    let (file, role, handler) = {
        let p = pool.0.borrow();
        let s = p.slots.get(slot);
        (s.and_then(|s| s.file), s.map_or(Role::Lead, |s| s.role), p.on_event.clone())
    };
    let finished = |p: &WorkerPool| {
        let mut p = p.0.borrow_mut();
        if let Some(s) = p.slots.get_mut(slot) {
            s.file = None;
        }
        if p.split.as_ref().is_some_and(|s| s.lead == slot) {
            p.split = None;
        }
        if p.inflating == Some(slot) {
            p.inflating = None;
        }
    };
    match (ev, file, role) {
        (WorkerEvent::Message(ToPage::Ready { warm_up_kernels }), _, _) => {
            handler(PoolEvent::Ready { warm_up_kernels })
        }
        (WorkerEvent::WarmUpReport(json), _, _) => handler(PoolEvent::WarmUpReport(json)),
        (WorkerEvent::Message(ToPage::Progress { bytes, .. }), Some(file), _) => {
            let bytes = pool.progress(slot, file, bytes);
            handler(PoolEvent::Progress { file, bytes })
        }
        (WorkerEvent::Message(ToPage::Split { parts }), Some(file), Role::Lead) => pool.split(slot, file, parts),
        (WorkerEvent::PartDone { data }, Some(_), Role::Part(part)) => pool.part_done(slot, part, data),
        // A worker reading a part died: the lead reads on from that part itself.
        (WorkerEvent::Crashed(_), Some(_), Role::Part(part)) => pool.part_done(slot, part, None),
        (WorkerEvent::Message(ToPage::Inflate), Some(file), Role::Lead) => pool.inflate(slot, file),
        (WorkerEvent::Message(ToPage::InflateDone), Some(_), Role::Inflate) => pool.inflate_done(slot, false),
        // The inflating worker died: the lead reads the file alone.
        (WorkerEvent::Crashed(_), Some(_), Role::Inflate) => pool.inflate_done(slot, true),
        (WorkerEvent::Done { done, json }, Some(file), Role::Lead) => {
            finished(&pool);
            let stats = WorkerStats { read: done, done_ms: js_sys::Date::now() };
            handler(PoolEvent::Finished { file, outcome: json, stats });
            pool.feed(slot);
        }
        // The worker died on this file: the file failed, the others go on (the client has
        // started a fresh worker, or will when given the next file).
        (WorkerEvent::Crashed(text), Some(file), Role::Lead) => {
            finished(&pool);
            handler(PoolEvent::Finished { file, outcome: Err(text), stats: WorkerStats::default() });
            pool.feed(slot);
        }
        (WorkerEvent::Crashed(text), None, _) if slot == 0 => handler(PoolEvent::Unavailable(text)),
        // Per-file completion arrives as Done; messages of a cancelled file are dropped.
        _ => {}
    }
}
