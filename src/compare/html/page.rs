//! The report page, in the skeleton of `html::page` (self-contained, no request possible), with
//! the data embedded (a JSON block, `id="respbench-data"`, the same document as `compare
//! --format json`).
//!
//! Owns: the page's sections and their order (a comparison's answer: headline and forest plot;
//! runs, a table of contents, summary, overview, comparison table, one section per test, folded
//! so a long report reads as its summary first). Wide tables sit in a `.scroll` box: on a phone
//! they scroll inside it, never the page.

use std::fmt::Write as _;

use crate::compare::input::Input;
use crate::compare::render;
use crate::compare::table::{Change, Comparison, Direction, Judgement, Metric};
use crate::html::{self, esc, svg};

use super::charts::{self, MAX_CHARTED_TESTS, MAX_TABLED_TESTS};
use super::mix;
use super::split;

/// The whole page for `inputs` (the first is the base of the comparison).
pub fn page(inputs: &[Input], full: &Comparison) -> String {
    let mut s = String::with_capacity(64 * 1024);
    // Beyond MAX_TABLED_TESTS tests the page draws the first ones only (the headline still
    // judges them all); `left_out` says how many it left to `compare --format csv`.
    let left_out = full.tests.len().saturating_sub(MAX_TABLED_TESTS);
    let first;
    let cmp = if left_out > 0 {
        first = Comparison {
            labels: full.labels.clone(),
            servers: full.servers.clone(),
            facts: full.facts.clone(),
            client_bound: full.client_bound.clone(),
            machine_busy: full.machine_busy.clone(),
            tests: full.tests[..MAX_TABLED_TESTS].to_vec(),
            repeat_refused: full.repeat_refused,
        };
        &first
    } else {
        full
    };
    let title = if inputs.len() == 1 {
        format!("respbench report: {}", inputs[0].label)
    } else {
        let labels: Vec<&str> = inputs.iter().map(|i| i.label.as_str()).collect();
        format!("respbench report: {}", labels.join(" vs "))
    };
    html::page::open(&mut s, &title);
    if inputs.len() > 1 {
        answer(&mut s, full, cmp);
    }
    runs(&mut s, inputs);
    toc(&mut s, inputs, cmp);
    super::summary::section(&mut s, inputs, cmp);
    overview(&mut s, inputs, cmp);
    left_out_note(&mut s, left_out);
    if inputs.len() > 1 {
        s.push_str("<h2 id=\"comparison\">Comparison</h2>");
        comparison(&mut s, cmp);
        left_out_note(&mut s, left_out);
    }
    find_max(&mut s, inputs);
    super::costs::section(&mut s, inputs);
    super::blocks::run_sections(&mut s, inputs);
    let sections = full.tests.iter().filter(|t| t.mix_of.is_none()).count();
    if sections > MAX_CHARTED_TESTS {
        let tabled = if left_out > 0 {
            format!("the first {MAX_TABLED_TESTS} tests' figures are in the tables above")
        } else {
            "every test's figures are in the tables above".to_string()
        };
        let _ = write!(
            s,
            "<p class=\"note\" id=\"summarised\">{sections} tests: charts for the first \
             {MAX_CHARTED_TESTS} only; {tabled}.</p>"
        );
    }
    let charted = cmp
        .tests
        .iter()
        .enumerate()
        .filter(|(_, t)| t.mix_of.is_none())
        .take(MAX_CHARTED_TESTS);
    for (i, t) in charted {
        test_section(&mut s, inputs, i, &t.name);
    }
    data_script(&mut s, inputs, cmp, sections > MAX_CHARTED_TESTS);
    html::page::close(
        &mut s,
        "Latencies in ms; values with repetitions are medians.",
    );
    s
}

/// One test's section: what limited it, its charts (or its one-point figures), and its tables.
fn test_section(s: &mut String, inputs: &[Input], i: usize, name: &str) {
    let _ = write!(
        s,
        "<section class=\"test\" id=\"t{i}\" data-test=\"{}\"><details><summary><h2>{}</h2></summary>",
        esc(name),
        esc(name)
    );
    // What limited it first: the charts are read in its light.
    super::verdict::section(s, inputs, name);
    let (charts, dots): (Vec<_>, Vec<_>) = charts::for_test(inputs, name)
        .into_iter()
        .partition(|c| c.series.iter().any(|s| s.points.len() > 1));
    if charts.is_empty() && dots.is_empty() {
        s.push_str("<p class=\"note\">No per-second data for this test in the inputs (CSV files carry totals only).</p>");
    }
    if !charts.is_empty() {
        s.push_str("<div class=\"charts\">");
        for c in &charts {
            s.push_str(&svg::render(c));
        }
        s.push_str("</div>");
    }
    figures(s, &dots);
    if charts::no_errors(inputs, name) {
        s.push_str(
            "<p class=\"note no-errors\">No errors: no error replies, no lost requests.</p>",
        );
    }
    mix::table(s, inputs, name);
    split::table(s, inputs, name);
    super::blocks::test_parts(s, inputs, name);
    for line in charts::totals_note(inputs, name) {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc(&line));
    }
    s.push_str("</details></section>");
}

/// The comparison as JSON for the page's script (`compact`: without indentation, for pages of
/// thousands of tests).
fn data_script(s: &mut String, inputs: &[Input], cmp: &Comparison, compact: bool) {
    let files: Vec<Vec<String>> = inputs.iter().map(|i| i.files.clone()).collect();
    let data = if compact {
        // Thousands of tests: the same document without its indentation (a third of the size).
        render::json_value(cmp, &files).to_string()
    } else {
        render::json(cmp, &files)
    };
    let data = data.replace("</", "<\\/");
    let _ = write!(
        s,
        "<script type=\"application/json\" id=\"respbench-data\">{data}</script>"
    );
}

/// The line under a table cut at [`MAX_TABLED_TESTS`] tests: how many it left out, and where
/// they are.
fn left_out_note(s: &mut String, left_out: usize) {
    if left_out > 0 {
        let _ = write!(
            s,
            "<p class=\"note left-out\">… {left_out} more tests: see <code>compare --format \
             csv</code> (this page draws the first {MAX_TABLED_TESTS}).</p>"
        );
    }
}

/// The runs with their colour, files and server.
/// A comparison's answer, right under the title: the headline as `compare` prints it, what
/// else differs between the sides, its warnings, and the forest plot (each test and metric's
/// change with its interval), so the first screen says which side is faster, by how much and how
/// sure that is.
fn answer(s: &mut String, full: &Comparison, cmp: &Comparison) {
    s.push_str("<div id=\"answer\">");
    let summary = crate::compare::headline::summary(full);
    for line in &summary.headline {
        let _ = write!(s, "<p class=\"headline\">{}</p>", esc(line));
    }
    if !summary.differences.is_empty() {
        s.push_str("<p class=\"note\">Besides the numbers, the sides differ in:</p><ul>");
        for d in &summary.differences {
            let _ = write!(s, "<li>{}</li>", esc(d));
        }
        s.push_str("</ul>");
    }
    for w in &summary.warnings {
        let _ = write!(s, "<p class=\"problem\">⚠ {}</p>", esc(w));
    }
    s.push_str(
        "<p class=\"note\">Against the base, by each metric's direction, with a 95% interval, \
         as a ratio on a log scale (a halving and a doubling equally far from 0%); green and red \
         only for findings.</p><div class=\"forest\">",
    );
    s.push_str(&super::forest::render(cmp));
    s.push_str("</div></div>");
}

/// Links to the page's sections and to each test's (folded) section, under the runs: a report of
/// many tests is long, and its summary is what most readers want.
fn toc(s: &mut String, inputs: &[Input], cmp: &Comparison) {
    s.push_str("<nav class=\"toc\"><b>Contents:</b> <a href=\"#summary\">Summary</a><a href=\"#overview\">Overview</a>");
    if inputs.len() > 1 {
        s.push_str("<a href=\"#comparison\">Comparison</a>");
    }
    let tests = cmp
        .tests
        .iter()
        .enumerate()
        .filter(|(_, t)| t.mix_of.is_none())
        .take(MAX_CHARTED_TESTS);
    s.push_str("<br><b>Tests</b> (each folded; click to open):");
    for (i, t) in tests {
        let _ = write!(s, " <a href=\"#t{i}\">{}</a>", esc(&t.name));
    }
    s.push_str("</nav>");
}

/// An overview change cell's attributes' end and text: the figure, kept on one line, and the
/// judgement's first words (`+8.25% can't tell`), the whole text as its tooltip (the answer above
/// and the comparison table below give it in full), so the overview's numbers do not wrap.
fn short_change(text: &str) -> String {
    // Without its interval (`[+8.1%, +12.3%]`), its reason and its counts.
    let mut short = text.to_string();
    if let (Some(open), Some(close)) = (short.find(" ["), short.find(']'))
        && open < close
    {
        short.replace_range(open..=close, "");
    }
    let short = short.split(':').next().unwrap_or(&short);
    let short = short.split(" (").next().unwrap_or(short);
    // The figure (with a leading `~`) never wraps; the words may go under it.
    let skip = if short.starts_with("~ ") { 2 } else { 0 };
    let (fig, words) = match short[skip..].find(' ') {
        Some(i) => short.split_at(skip + i),
        None => (short, ""),
    };
    format!(
        " title=\"{}\"><span class=\"fig\">{}</span>{}",
        esc(text),
        esc(fig),
        esc(words)
    )
}

/// The per-second figures of a test too short for a line (one point a series: a test under a
/// second), as a table of figures instead of charts of single dots.
fn figures(s: &mut String, dots: &[svg::Chart]) {
    if dots.is_empty() {
        return;
    }
    s.push_str(
        "<p class=\"note\">Under a second: one figure per run, not a chart.</p>\
         <div class=\"scroll\"><table class=\"figures\">",
    );
    for c in dots {
        let _ = write!(
            s,
            "<tr data-chart=\"{}\" data-test=\"{}\"><th>{} ({})</th><td>",
            c.kind,
            esc(&c.test),
            esc(&c.title),
            esc(c.y_label)
        );
        let shown: Vec<String> = c
            .series
            .iter()
            .filter_map(|x| x.points.first().map(|p| (x, p.1)))
            .map(|(x, y)| format!("{} {}", esc(&x.label), figure(y)))
            .collect();
        s.push_str(&shown.join(" · "));
        s.push_str("</td></tr>");
    }
    s.push_str("</table></div>");
}

/// A figure to three significant digits or so (`12345`, `12.3`, `0.123`).
fn figure(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}

fn runs(s: &mut String, inputs: &[Input]) {
    s.push_str("<ul class=\"runs\">");
    for (i, input) in inputs.iter().enumerate() {
        let _ = write!(
            s,
            "<li data-run=\"{}\"><span class=\"sw\" style=\"background:{}\"></span><b>{}</b>{}{}{}</li>",
            esc(&input.label),
            svg::colour(i),
            esc(&input.label),
            // The label is often the server already (`--html`): say it once.
            input
                .server
                .as_deref()
                .filter(|v| *v != input.label)
                .map(|v| format!(" ({})", esc(v)))
                .unwrap_or_default(),
            if input.files.is_empty() {
                String::new()
            } else {
                format!(" — <code>{}</code>", esc(&input.files.join(", ")))
            },
            if i == 0 && inputs.len() > 1 {
                " (base)"
            } else {
                ""
            }
        );
        // A failed or cut-short run must not read as a normal one.
        for p in &input.problems {
            let _ = write!(s, "<li class=\"problem\">⚠ {}</li>", esc(p));
        }
    }
    s.push_str("</ul>");
}

/// The class of a change: `better` or `worse` for a finding only; `unattributable` (grey,
/// italic) for a test a side ran machine-busy or client-bound; `noise` (grey) for anything else
/// that moved (within the noise, too noisy, within-run evidence, can't tell), so an
/// inconclusive change is never coloured as one.
fn class_of(c: Option<&Change>) -> &'static str {
    match c {
        Some(c) if matches!(c.judgement, Judgement::Unattributable(_)) => "unattributable",
        Some(c) if c.direction == Direction::Same => "",
        Some(c) if !c.is_finding() => "noise",
        Some(c) if c.direction == Direction::Better => "better",
        Some(c) if c.direction == Direction::Worse => "worse",
        _ => "",
    }
}

/// rps and p99 per test and run (with a bar of each rps against the largest) and, with several
/// runs, each one's change against the base. Test names link to their charts.
fn overview(s: &mut String, inputs: &[Input], cmp: &Comparison) {
    s.push_str("<h2 id=\"overview\">Overview</h2><div class=\"scroll\"><table class=\"overview\"><tr><th>test</th>");
    for (k, input) in inputs.iter().enumerate() {
        let _ = write!(s, "<th>{} rps</th>", esc(&input.label));
        if k > 0 {
            s.push_str("<th>change</th>");
        }
    }
    for (k, input) in inputs.iter().enumerate() {
        let _ = write!(s, "<th>{} p99 ms</th>", esc(&input.label));
        if k > 0 {
            s.push_str("<th>change</th>");
        }
    }
    s.push_str("</tr>");
    let brief = Comparison::new(inputs, &[Metric::Rps, Metric::P99]);
    let max_rps = brief
        .tests
        .iter()
        .flat_map(|t| t.rows[0].cells.iter().flatten())
        .fold(0f64, |m, c| m.max(c.shown()));
    // Indexes as the sections' ids (`t{i}` in `cmp`, which has the same tests in the same order).
    let mut shown = 0;
    for (i, t) in brief.tests.iter().take(cmp.tests.len()).enumerate() {
        if t.mix_of.is_some() {
            continue; // The test's section has each command's figures.
        }
        shown += 1;
        if shown <= MAX_CHARTED_TESTS {
            let _ = write!(s, "<tr><td><a href=\"#t{i}\">{}</a></td>", esc(&t.name));
        } else {
            let _ = write!(s, "<tr><td>{}</td>", esc(&t.name));
        }
        for row in &t.rows {
            for (k, label) in cmp.labels.iter().enumerate() {
                match &row.cells[k] {
                    Some(c) => {
                        let bar = if row.metric == Metric::Rps && max_rps > 0.0 {
                            format!(
                                "<span class=\"bar\" style=\"width:{:.0}px\"></span>",
                                c.shown() / max_rps * 40.0
                            )
                        } else {
                            String::new()
                        };
                        let _ = write!(
                            s,
                            "<td data-test=\"{}\" data-run=\"{}\" data-metric=\"{}\" data-value=\"{}\">{}{bar}</td>",
                            esc(&t.name),
                            esc(label),
                            row.metric.name(),
                            c.shown(),
                            render::cell_text(row.metric, Some(c))
                        );
                    }
                    None => s.push_str("<td>-</td>"),
                }
                if k > 0 {
                    let change = row.changes[k - 1].as_ref();
                    let _ = write!(
                        s,
                        "<td class=\"{} chg\"{}</td>",
                        class_of(change),
                        short_change(&render::change_text(
                            change,
                            (&cmp.labels[0], &cmp.labels[k])
                        ))
                    );
                }
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</table></div>");
}

/// The compare table of every metric (folded: the overview has the headline figures), then the
/// tests that are not in every run.
fn comparison(s: &mut String, cmp: &Comparison) {
    s.push_str("<details><summary>Every metric (rps, avg, min, p50, p95, p99, max)</summary>");
    s.push_str("<div class=\"scroll\"><table class=\"compare\"><tr><th>test</th><th>metric</th>");
    for l in &cmp.labels {
        let _ = write!(s, "<th>{}</th>", esc(l));
    }
    for l in &cmp.labels[1..] {
        let _ = write!(s, "<th>{} vs {}</th>", esc(l), esc(&cmp.labels[0]));
    }
    s.push_str("</tr>");
    for t in &cmp.tests {
        for r in &t.rows {
            let _ = write!(
                s,
                "<tr><td>{}</td><td class=\"m\">{}</td>",
                esc(&t.name),
                r.metric.label()
            );
            for c in &r.cells {
                let _ = write!(s, "<td>{}</td>", render::cell_text(r.metric, c.as_ref()));
            }
            for (k, c) in r.changes.iter().enumerate() {
                let labels = (cmp.labels[0].as_str(), cmp.labels[k + 1].as_str());
                let _ = write!(
                    s,
                    "<td class=\"{}\">{}</td>",
                    class_of(c.as_ref()),
                    esc(&render::change_text(c.as_ref(), labels))
                );
            }
            s.push_str("</tr>");
        }
    }
    s.push_str("</table></div></details>");
    for t in cmp.tests.iter().filter(|t| !t.missing_from.is_empty()) {
        let names: Vec<&str> = t
            .missing_from
            .iter()
            .map(|&i| cmp.labels[i].as_str())
            .collect();
        let _ = write!(
            s,
            "<p class=\"note\">Test “{}” is missing from: {}.</p>",
            esc(&t.name),
            esc(&names.join(", "))
        );
    }
}

/// The `--find-max` section: the latency-vs-throughput curve and each run's answer (only when a
/// run holds a search).
fn find_max(s: &mut String, inputs: &[Input]) {
    let Some(chart) = super::find_max::find_max(inputs) else {
        return;
    };
    s.push_str(
        "<section class=\"find-max\" id=\"find-max\"><h2>Latency vs throughput (--find-max)</h2>",
    );
    for line in super::find_max::find_max_notes(inputs) {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc(&line));
    }
    s.push_str("<div class=\"charts\">");
    s.push_str(&svg::render(&chart));
    s.push_str("</div></section>");
}
