//! The page skeleton every report shares: one self-contained HTML file. Styles are inlined,
//! charts are inline SVG, and a Content-Security-Policy of `default-src 'none'` forbids any
//! request, so the page works offline and cannot leak anything even if edited. Wide tables sit
//! in a `.scroll` box: on a phone they scroll inside it, never the page.
//!
//! Owns: the head (charset, policy, viewport, title, styles), the title line, and the closing
//! note with respbench's version. Must not: know what the sections say.

use std::fmt::Write as _;

use super::esc;

const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1360px;padding:16px 20px;color:#222}\
.scroll{overflow-x:auto;max-width:100%}p,li{overflow-wrap:anywhere}\
@media (max-width:600px){body{padding:8px}.charts{grid-template-columns:1fr !important}td,th{padding:3px 5px}}\
@media print{body{max-width:none;padding:0}.scroll{overflow:visible}td,th{white-space:normal}section.test,svg.chart{break-inside:avoid}details{display:block}}\
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 7px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}\
th:first-child,td:first-child{text-align:left}td.m{text-align:left;color:#555}\
.better{color:#08753a}.worse{color:#b3261e}.noise{color:#888}.unattributable{color:#888;font-style:italic}\
td.better,td.worse,td.noise,td.unattributable,td[class=\"\"]{white-space:normal;min-width:6em;max-width:9em;text-align:left}\
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px}\
.bar{display:inline-block;height:8px;background:#bcd;margin-left:6px;vertical-align:0}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(480px,100%),1fr));gap:8px 20px}\
svg.chart{width:100%;height:auto;font-size:11px}div.forest{overflow-x:auto}div.forest svg{min-width:600px}svg .grid{stroke:#e6e6e6}svg .tk,svg .al{fill:#555}\
svg .ct{font-weight:600;fill:#222}svg .lg{font-weight:600}summary{cursor:pointer;color:#0550ae}a{color:inherit}svg .line{fill:none;stroke-width:1.6}\
.note{color:#555;font-size:13px}code{font-size:12px}li.problem{color:#b3261e;list-style:none;margin-left:18px}p.problem{color:#b3261e}.headline{font-weight:600}\
nav.toc{font-size:13px;margin:8px 0;line-height:1.9}nav.toc a{margin-right:12px;white-space:nowrap;color:#0550ae}\
section.test>details>summary{margin-top:24px;border-bottom:1px solid #ddd}section.test>details>summary>h2{display:inline;border:0}\
td.chg{min-width:0;max-width:7em}.fig{white-space:nowrap}table.figures td{text-align:left}";

/// Starts the document in `s`: the head with `title`, then the body's `<h1>` of the same title.
pub fn open(s: &mut String, title: &str) {
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    s.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">");
    s.push_str("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">");
    let _ = write!(
        s,
        "<title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>",
        esc(title),
        esc(title)
    );
}

/// Ends the document in `s`: a note naming respbench's version, then `note` (how to read the
/// figures), and the closing tags.
pub fn close(s: &mut String, note: &str) {
    let _ = writeln!(
        s,
        "<p class=\"note\">Made by respbench {}. {note}</p></body></html>",
        env!("CARGO_PKG_VERSION")
    );
}
