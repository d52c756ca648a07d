//! The view state of the report on screen, one signal per part so that changing one redraws
//! only what reads it; a share link writes it and reopens it.

use crate::vocab::Bucket;
use crate::web::view_state::{CompareSets, Figures, TableState, ViewState};
use leptos::prelude::*;

#[derive(Clone, Copy)]
pub struct ViewSignals {
    /// The trace whose sections are shown.
    pub selected: RwSignal<usize>,
    /// The bucket the top tables are filtered to.
    pub bucket: RwSignal<Option<Bucket>>,
    pub kernels: RwSignal<TableState>,
    pub ops: RwSignal<TableState>,
    /// Buckets whose "why" is unfolded.
    pub buckets_open: RwSignal<Vec<Bucket>>,
    /// The two sides compared, when the comparison is open.
    pub compare: RwSignal<Option<CompareSets>>,
    /// The user's peaks and model size, over the efficiency section and the tables' columns.
    pub figures: RwSignal<Figures>,
}

impl ViewSignals {
    pub fn new(view: &ViewState) -> ViewSignals {
        ViewSignals {
            selected: RwSignal::new(view.trace as usize),
            bucket: RwSignal::new(view.bucket),
            kernels: RwSignal::new(view.kernels.clone()),
            ops: RwSignal::new(view.ops.clone()),
            buckets_open: RwSignal::new(view.buckets_open.clone()),
            compare: RwSignal::new(view.compare.clone()),
            figures: RwSignal::new(view.figures.clone()),
        }
    }

    /// The view as it is now, with the bucket `rules` the report was made with.
    pub fn current(self, rules: String) -> ViewState {
        ViewState {
            trace: self.selected.get_untracked() as u32,
            bucket: self.bucket.get_untracked(),
            kernels: self.kernels.get_untracked(),
            ops: self.ops.get_untracked(),
            buckets_open: self.buckets_open.get_untracked(),
            compare: self.compare.get_untracked(),
            rules,
            figures: self.figures.get_untracked(),
        }
    }

    /// Another trace's sections: the filter and unfolded rows were the previous trace's.
    pub fn pick(self, trace: usize) {
        self.selected.set(trace);
        self.bucket.set(None);
        self.kernels.update(|k| k.expanded.clear());
        self.ops.update(|o| o.expanded.clear());
    }
}
