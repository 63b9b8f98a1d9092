//! Plain words for numbers, sizes, durations and times, shared by the filters, the turn
//! templates and the page: no markup here.

/// A duration as a reader says it: `850 ms`, `4.2 s`, `3 min 12 s`, `1 h 4 min`.
pub(crate) fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..10_000 => format!("{:.1} s", ms as f64 / 1000.0),
        10_000..60_000 => format!("{s} s"),
        60_000..3_600_000 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// A timestamp as `2026-01-23 14:21:43 UTC`; the text itself when it is not one.
pub(crate) fn when(ts: &str) -> String {
    match humantime::parse_rfc3339_weak(ts.trim_end_matches('Z')) {
        Ok(t) => {
            let s = humantime::format_rfc3339_seconds(t).to_string();
            format!("{} {} UTC", &s[..10], &s[11..19])
        }
        Err(_) => ts.to_owned(),
    }
}

/// `1 turn`, `2 turns`, `2 patches`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    match (n, word.ends_with("ch") || word.ends_with('s')) {
        (1, _) => format!("1 {word}"),
        (_, true) => format!("{n} {word}es"),
        _ => format!("{n} {word}s"),
    }
}

/// A count with thousands separators: `40,932`.
pub(crate) fn num(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The opening words of a turn's process line: its events, then the messages and calls among
/// them when there are any (`12 events · 2 messages · 9 tool calls`, as parts).
pub(crate) fn process_counts(events: usize, messages: usize, calls: usize) -> Vec<String> {
    let mut parts = vec![plural(events, "event")];
    if messages > 0 {
        parts.push(plural(messages, "message"));
    }
    if calls > 0 {
        parts.push(plural(calls, "tool call"));
    }
    parts
}

/// Bytes in B, KB or MB (1 KB = 1024 bytes).
pub fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}
