//! The HTML report's connection storm and memory per key tables (`compare::costs`), when a run
//! holds them.

use std::fmt::Write;

use crate::compare::costs::tables;
use crate::compare::input::Input;
use crate::html::esc;

/// Appends one section per table.
pub fn section(s: &mut String, inputs: &[Input]) {
    for t in tables(inputs) {
        let id = t.title.to_lowercase().replace(' ', "-");
        let _ = write!(
            s,
            "<section class=\"costs\" id=\"{id}\"><h2>{}</h2><p class=\"note\">{}</p><table><tr>",
            esc(t.title),
            esc(t.note)
        );
        for h in &t.head {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
        s.push_str("</tr>");
        for r in &t.rows {
            s.push_str("<tr>");
            for c in r {
                let _ = write!(s, "<td>{}</td>", esc(c));
            }
            s.push_str("</tr>");
        }
        s.push_str("</table></section>");
    }
}
