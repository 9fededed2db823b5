//! The man page (roff, `man(7)` macros) written from the option tables and the help texts: the
//! main command's options with their full help, the help's own sections (custom command,
//! examples), then a section per subcommand with its description and options.

use super::{Command, names, summaries};
use crate::cli::flag::Doc;

/// The whole page for `commands` (the main command line first) at `version`.
pub fn man_page(commands: &[Command], version: &str) -> String {
    let mut out = format!(
        ".TH RESPBENCH 1 \"\" \"respbench {}\" \"User Commands\"\n.nh\n.ad l\n",
        escape(version)
    );
    let Some((main, subs)) = commands.split_first() else {
        return out;
    };
    out.push_str(&format!(
        ".SH NAME\nrespbench \\- {}\n.SH SYNOPSIS\n",
        escape(main.summary)
    ));
    for c in commands {
        let usage = c.help.lines().next().unwrap_or("");
        out.push_str(&format!(
            ".B {}\n.br\n",
            escape(usage.trim_start_matches("Usage: "))
        ));
    }
    out.push_str(
        ".SH DESCRIPTION\n\
         A load generator and benchmark for servers that speak the Redis protocol (RESP):\n\
         Valkey, Redis and the like; a drop-in for valkey\\-benchmark with the same flags,\n\
         defaults and output. Subcommands are recognised only as the first argument.\n\
         .SH OPTIONS\n",
    );
    options(&mut out, &main.options);
    // The help's sections other than its groups of options (the custom command, subcommands,
    // examples): the options are written above from the table, in its order.
    if let Some((_, rest)) = main.help.split_once("\n\n") {
        for block in rest.split("\n\n") {
            let Some((title, body)) = block.split_once('\n') else {
                continue;
            };
            if title.starts_with(' ') || !title.ends_with(':') || body.starts_with(" -") {
                continue;
            }
            section(&mut out, title.trim_end_matches(':'), body);
        }
    }
    for c in subs {
        out.push_str(&format!(".SH \"{}\"\n", escape(&c.name.to_uppercase())));
        out.push_str(&format!(".PP\n{}\n", escape(c.summary)));
        // The description: the help between its usage line and "Options:".
        let description = c
            .help
            .split_once("\n\n")
            .map(|(_, rest)| rest.split("\nOptions:\n").next().unwrap_or(rest))
            .unwrap_or("");
        for paragraph in description.split("\n\n").filter(|p| !p.trim().is_empty()) {
            paragraph_text(&mut out, paragraph);
        }
        out.push_str(".SS Options\n");
        options(&mut out, &c.options);
    }
    out
}

/// `.TP` entries: each option's usage, then its help as `--help` shows it (an entry shown with
/// the one before it gets that one's first line).
fn options(out: &mut String, docs: &[&Doc]) {
    let lines = summaries(docs);
    for (doc, line) in docs.iter().zip(&lines) {
        // The usage as `--help` shows it, and any spelling it does not show (`--master-name`).
        let mut head = doc.usage.to_string();
        for name in names(doc) {
            if !head.split([' ', ',']).any(|w| w == name) {
                if !head.is_empty() {
                    head.push_str(", ");
                }
                head.push_str(name);
            }
        }
        out.push_str(&format!(".TP\n.B {}\n", escape(&head)));
        let text = if doc.help.is_empty() { line } else { doc.help };
        for l in text.lines() {
            out.push_str(&escape_line(l));
            out.push('\n');
        }
    }
}

/// A section of preformatted text (examples keep their layout).
fn section(out: &mut String, title: &str, body: &str) {
    out.push_str(&format!(".SH \"{}\"\n.nf\n", escape(&title.to_uppercase())));
    for l in body.lines() {
        out.push_str(&escape_line(l));
        out.push('\n');
    }
    out.push_str(".fi\n");
}

/// A help paragraph: filled prose, or kept as laid out when it is indented (lists, examples).
fn paragraph_text(out: &mut String, paragraph: &str) {
    let laid_out = paragraph.lines().any(|l| l.starts_with(' '));
    out.push_str(if laid_out { ".PP\n.nf\n" } else { ".PP\n" });
    for l in paragraph.lines() {
        out.push_str(&escape_line(l));
        out.push('\n');
    }
    if laid_out {
        out.push_str(".fi\n");
    }
}

/// Text for roff: backslashes and hyphens escaped (a `-` in an option must stay a hyphen-minus
/// to be searchable and copyable).
fn escape(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

/// A line of text: [`escape`], and a line starting with `.` or `'` kept from being a request.
fn escape_line(line: &str) -> String {
    let text = escape(line);
    if text.starts_with('.') || text.starts_with('\'') {
        format!("\\&{text}")
    } else {
        text
    }
}
