//! Joining the collectors of consecutive parts of one file into what one collector reading
//! the whole file would have made.

use super::interner::remap_names;
use super::*;

/// A later part's name and thread ids, renumbered into the collector it joins.
struct Renumber {
    names: Vec<u32>,
    threads: Vec<u32>,
}

impl Renumber {
    fn name(&self, id: u32) -> u32 {
        if id == NO_NAME {
            NO_NAME
        } else {
            self.names[id as usize]
        }
    }

    fn thread(&self, t: u32) -> u32 {
        self.threads[t as usize]
    }

    fn comm(&self, c: CommArgs) -> CommArgs {
        CommArgs { name: self.name(c.name), group: self.name(c.group), ..c }
    }
}

impl Collector {
    /// Appends what a collector made of the next part of the same file collected, with the
    /// result of reading both parts in one collector: names and threads are re-interned in
    /// the order they were first seen, rows keep file order, metadata read later replaces what
    /// was read before. Refused (and `self` left unchanged) where that cannot be exact: a limit
    /// reached.
    pub fn join(&mut self, mut p: Collector) -> Result<(), NotJoinable> {
        if self.join_refused(&p) {
            return Err(NotJoinable);
        }
        let to = self.renumber(&p);
        self.append_rows(&mut p, &to);
        self.add_totals(p);
        Ok(())
    }

    /// Whether joining `p` could not be exact: a limit reached in either or by the join.
    fn join_refused(&self, p: &Collector) -> bool {
        let over = |a: usize, b: usize| a + b > limits::MAX_ROWS;
        // Integer-valued f64 sums are exact below 2^53, whatever the order.
        let exact = |a: f64, b: f64| a + b < (1u64 << 53) as f64;
        self.deferred.is_some()
            || self.counters.rows_dropped > 0
            || p.counters.rows_dropped > 0
            || p.names.over_limit > 0
            || p.string_ids.over_limit > 0
            || self.names.names.len() + p.names.names.len() >= limits::MAX_NAMES
            || self.string_ids.names.len() + p.string_ids.names.len() >= limits::MAX_NAMES
            || p.counters.unknown_cats.len() >= 64
            || over(self.gpu.len(), p.gpu.len())
            || over(self.runtime.len(), p.runtime.len())
            || over(self.ops.len(), p.ops.len())
            || over(self.modules.len(), p.modules.len())
            || over(self.memory.len(), p.memory.len())
            || over(self.launch_kernels.len(), p.launch_kernels.len())
            || !exact(self.sm_eff_dur, p.sm_eff_dur)
            || !exact(self.occupancy_dur, p.occupancy_dur)
            || !exact(self.occupancy_unknown_dur, p.occupancy_unknown_dur)
    }

    /// Re-interns `p`'s names and string ids, then its threads (string-id keys re-keyed).
    fn renumber(&mut self, p: &Collector) -> Renumber {
        let names = remap_names(&mut self.names, &p.names);
        let strings = remap_names(&mut self.string_ids, &p.string_ids);
        // Thread keys of string ids hold the string's id: re-keyed with it.
        let string_key = |k: i64| match k.checked_sub(i64::MIN / 2) {
            Some(s) if (0..strings.len() as i64).contains(&s) => i64::MIN / 2 + strings[s as usize] as i64,
            _ => k,
        };
        let mut keys = vec![(0, 0); p.threads.len()];
        for (&k, &id) in &p.threads {
            keys[id as usize] = k;
        }
        let threads: Vec<u32> = keys
            .into_iter()
            .map(|(pk, tk)| {
                let next = self.threads.len() as u32;
                *self.threads.entry((string_key(pk), string_key(tk))).or_insert(next)
            })
            .collect();
        Renumber { names, threads }
    }

    /// `p`'s rows after this collector's, renumbered.
    fn append_rows(&mut self, p: &mut Collector, to: &Renumber) {
        let base = self.gpu.len() as u32;
        self.gpu_comm.extend(p.gpu_comm.iter().map(|&(row, c)| (base + row, to.comm(c))));
        self.gpu_work.extend(p.gpu_work.iter().map(|&k| KernelCount { row: base + k.row, ..k }));
        self.gpu_graph.extend(p.gpu_graph.iter().map(|&g| GraphNode { row: base + g.row, ..g }));
        self.launch_kernels.extend(p.launch_kernels.iter().map(|&k| LaunchKernel { name: to.name(k.name), ..k }));
        self.ops_with_shapes += p.ops_with_shapes;
        for (&external, &w) in &p.op_work {
            self.op_work.entry(external).or_insert(w);
        }
        for i in 0..p.gpu.len() {
            let mut row = p.gpu.get(i);
            row.name = to.name(row.name);
            self.gpu.push(row, p.gpu.correlation(i), p.gpu.external(i));
        }
        drop(std::mem::take(&mut p.gpu));
        // The per-event lists grow once to their size extrapolated from the input joined so far
        // (where it is known: the page's lead), not by doubling at each part joined: in a wasm
        // memory every list that grows is copied above the rest.
        let room = self.progress;
        room.make_room_for(&mut self.runtime, p.runtime.len());
        room.make_room_for(&mut self.ops, p.ops.len());
        room.make_room_for(&mut self.modules, p.modules.len());
        room.make_room_for(&mut self.memory, p.memory.len());
        room.make_room_for(&mut self.syncs, p.syncs.len());
        self.runtime.extend(p.runtime.iter().map(|r| RuntimeCall {
            thread: to.thread(r.thread),
            name: to.name(r.name),
            ..*r
        }));
        self.ops.extend(p.ops.iter().map(|o| OpRow { thread: to.thread(o.thread), name: to.name(o.name), ..*o }));
        self.modules.extend(p.modules.iter().map(|o| OpRow {
            thread: to.thread(o.thread),
            name: to.name(o.name),
            ..*o
        }));
        self.memory.extend(p.memory.iter().map(|m| MemEvent { thread: to.thread(m.thread), ..*m }));
        self.syncs.extend(p.syncs.iter().map(|c| SyncCall {
            thread: to.thread(c.thread),
            name: to.name(c.name),
            ..*c
        }));
        self.syncs.truncate(limits::MAX_ROWS);
        self.gpu_syncs.extend_from_slice(&p.gpu_syncs);
        self.gpu_syncs.truncate(limits::MAX_ROWS);
        for (&external, &c) in &p.op_comm {
            self.op_comm.insert(external, to.comm(c));
        }
    }

    /// `p`'s sums, extents, deferred sums and metadata, and counters added to this collector's.
    fn add_totals(&mut self, p: Collector) {
        self.cpu_extent = match (self.cpu_extent, p.cpu_extent) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (a, b) => a.or(b),
        };
        self.sync_ns += p.sync_ns;
        self.launch_ns += p.launch_ns;
        self.launch_calls += p.launch_calls;
        self.sdpa_calls.extend(p.sdpa_calls);
        self.sdpa_calls.truncate(16);
        if let Some(d) = p.deferred {
            for t in d.sm_eff {
                self.sm_eff_weighted += t;
            }
            for t in d.occupancy {
                self.occupancy_weighted += t;
            }
            for meta in d.metadata {
                self.read_metadata(meta);
            }
        }
        self.sm_eff_dur += p.sm_eff_dur;
        self.occupancy_dur += p.occupancy_dur;
        self.occupancy_unknown_dur += p.occupancy_unknown_dur;
        self.names.long_names += p.names.long_names;
        self.string_ids.long_names += p.string_ids.long_names;
        let (k, q) = (&mut self.counters, p.counters);
        k.no_category += q.no_category;
        k.missing_ts += q.missing_ts;
        k.negative_dur += q.negative_dur;
        k.zero_dur_gpu += q.zero_dur_gpu;
        k.cuda_sync_rows += q.cuda_sync_rows;
        k.gpu_annotations += q.gpu_annotations;
        k.gpu_step_annotations += q.gpu_step_annotations;
        k.begin_end += q.begin_end;
        k.malformed += q.malformed;
        k.first_malformed = k.first_malformed.take().or(q.first_malformed);
        k.gpu_without_correlation += q.gpu_without_correlation;
        k.flow += q.flow;
        k.instant += q.instant;
        k.counters += q.counters;
        for (cat, n) in q.unknown_cats {
            if let Some(e) = k.unknown_cats.iter_mut().find(|(c, _)| *c == cat) {
                e.1 += n;
            } else if k.unknown_cats.len() < 64 {
                k.unknown_cats.push((cat, n));
            }
        }
    }
}
