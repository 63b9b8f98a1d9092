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

/// `1 turn`, `2 turns`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
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
