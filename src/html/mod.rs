//! The HTML toolkit: text escaping, SVG line charts (`svg`) and the page skeleton (`page`: the
//! head with its Content-Security-Policy and styles, the closing note). The reports are built
//! from these: the comparison page of `compare`, `respbench report`, `--html` on a run or a
//! replay, and any mode's section. It knows nothing of runs, records or comparisons (it imports
//! nothing of the crate), so a mode can draw its section without importing `compare`.
//!
//! The charts are SVG rendered here rather than a JavaScript chart library: no script to vendor,
//! audit or keep up to date, nothing that can fetch, the same bytes for the same data, and a few
//! kB per chart (see docs/architecture.md, "HTML report").

pub mod page;
pub mod svg;

/// HTML text escaping for element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
