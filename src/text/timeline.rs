//! The text report's timeline: GPU utilisation over time as a line of block characters.

use crate::vocab::fmt_us;
use std::fmt::Write;

/// Busy fraction per stream over time, one character per column.
pub(super) fn render_timeline(o: &mut String, tl: &crate::report::Timeline) {
    const COLS: usize = 60;
    const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let _ = writeln!(
        o,
        "\n GPU busy over time ({} per column; --range FROM..TO in ms zooms in):",
        fmt_us((tl.end_ns - tl.start_ns) as f64 / 1000.0 / COLS as f64)
    );
    for lane in &tl.lanes {
        let line: String =
            tl.busy_columns(lane, COLS).iter().map(|f| LEVELS[((f * 8.0).round() as usize).min(8)]).collect();
        let _ = writeln!(o, "   dev {:>2} stream {:>3} |{line}|", lane.device, lane.stream);
    }
    if tl.hidden_lanes > 0 {
        let _ = writeln!(o, "   ({} more streams, {} busy, not drawn)", tl.hidden_lanes, fmt_us(tl.hidden_busy_us));
    }
}
