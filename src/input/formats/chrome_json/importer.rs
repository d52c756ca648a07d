//! The Chrome-trace JSON format behind the [`Importer`] interface.

use super::edge::Neutral;
use super::push::PushReader;
use crate::input::importer::{Imported, Importer};
use crate::trace::{Ending, Sink};

/// Reads a Chrome-trace JSON stream pushed in chunks of any size, parsing each in place.
pub struct ChromeJson {
    reader: PushReader,
}

impl ChromeJson {
    pub fn new() -> ChromeJson {
        ChromeJson { reader: PushReader::new() }
    }
}

impl Default for ChromeJson {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Sink> Importer<S> for ChromeJson {
    fn push(&mut self, bytes: &[u8], sink: &mut S) {
        self.reader.feed(bytes, &mut Neutral(sink));
    }

    fn wants_more(&self) -> bool {
        self.reader.wants_more()
    }

    fn finish(self: Box<Self>, sink: &mut S, ending: Ending) -> Imported {
        Imported::Reading(self.reader.finish(&mut Neutral(sink), ending))
    }
}
