//! Text from the trace in Markdown: escaped, or in code spans, so a name can never become
//! markup; names clipped for tables.

pub(super) fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// One line of plain text: whatever Markdown or HTML could read as markup is escaped (a `<`
/// that could open a tag, an `&` that could start an entity, emphasis and code marks, link
/// brackets, table pipes), the rest is left alone so the raw text stays readable in chat;
/// line breaks are folded.
pub fn escape(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        match c {
            '\\' | '`' | '*' | '|' => {
                out.push('\\');
                out.push(c);
            }
            // Intraword underscores never emphasise (GFM); others may.
            '_' if !(word(prev) && word(next)) => out.push_str("\\_"),
            '[' | ']' | '~' | '!' => {
                if matches!((c, next), (']', Some('(' | '[' | ':')) | ('~', Some('~')) | ('!', Some('['))) {
                    out.push('\\');
                }
                out.push(c);
            }
            '<' if next.is_some_and(|n| n.is_ascii_alphabetic() || "/!?".contains(n)) => out.push_str("&lt;"),
            '&' if next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#') => out.push_str("&amp;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// An inline code span holding `s` verbatim (the fence is longer than any backtick run in
/// it); pipes are escaped so the span can sit in a table cell.
pub fn code(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() { " " } else { "" };
    format!("{fence}{pad}{}{pad}{fence}", s.replace('|', "\\|"))
}

/// The report's prose, where `backticked` spans are code: those stay code, the rest is escaped.
pub(super) fn prose(s: &str) -> String {
    s.split('`').enumerate().map(|(i, part)| if i % 2 == 1 { code(part) } else { escape(part) }).collect()
}
