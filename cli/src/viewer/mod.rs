//! Counterexamples people can look at: a replayed run as a swimlane
//! sequence diagram (one lane per client and server), as a static SVG for
//! Markdown reports and as a self-contained HTML page whose state panel
//! shows the world after any step.
//!
//! - [`timeline`]: the diagram's model (lanes, rows of arrows and marks,
//!   belief bands, the violation); [`builder`] makes it from a replay,
//!   [`labels`] words its arrows and marks;
//! - [`mod@record`]: the replay loop that feeds it and keeps per-step snapshots;
//! - [`snapshot`]: the world flattened for the state panel, and diffs;
//! - [`svg`]: the drawing; [`html`]: the page around it;
//! - [`herd`]: naive vs predecessor-watch lock side by side for `compare`.

pub mod builder;
pub mod herd;
pub mod html;
pub mod labels;
pub mod record;
pub mod snapshot;
pub mod svg;
pub mod timeline;

#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use record::{record, Options, Recording};

use crate::files::ReportError;
use zkcheck::scenario::{property_name, Scenario};
use zkcheck::token::Token;
use zkrecipes::RecipeSet;

/// A title for a run: the scenario and what broke, if anything.
fn title<C: RecipeSet>(scenario: &Scenario<C>, rec: Option<&Recording<C>>) -> String {
    match rec.and_then(|r| r.timeline.violation.as_ref()) {
        Some(v) => format!(
            "{}: {} violation ({})",
            scenario.name,
            property_name(v.property),
            scenario.recipe
        ),
        None => format!("{}: replay ({})", scenario.name, scenario.recipe),
    }
}

/// Replay a token and record it for the page (snapshots on).
pub fn record_token<C: RecipeSet>(token: &Token<C>) -> Result<Recording<C>, ReportError> {
    let mut rec = record(
        &token.scenario,
        &token.indices,
        String::new(),
        Options {
            snapshots: true,
            count_wakeups: false,
            cycle_from: token.cycle_from,
        },
    )
    .map_err(ReportError::Replay)?;
    rec.timeline.title = title(&token.scenario, Some(&rec));
    Ok(rec)
}

/// The viewer page of a token's run.
pub fn html_for_token<C: RecipeSet>(token: &Token<C>) -> Result<String, ReportError> {
    let rec = record_token(token)?;
    Ok(html::page(&rec, Some(&token.encode())))
}

/// `zkcheck replay <token> --html FILE`.
pub fn write_html<C: RecipeSet>(path: &Path, token: &Token<C>) -> Result<(), ReportError> {
    let page = html_for_token(token)?;
    write(path, &page)
}

/// `zkcheck check --report DIR`: for one counterexample, `NAME-PROPERTY.html`
/// (the viewer), `.svg` (the diagram) and `.md` (the story: violation,
/// diagram, trace, token). Returns the paths written.
pub fn write_counterexample<C: RecipeSet>(
    dir: &Path,
    token: &Token<C>,
) -> Result<Vec<PathBuf>, ReportError> {
    crate::files::create_dir(dir)?;
    let rec = record_token(token)?;
    let encoded = token.encode();
    let property = rec
        .timeline
        .violation
        .as_ref()
        .map_or("replay", |v| property_name(v.property));
    let stem = format!("{}-{property}", file_safe(&token.scenario.name));
    let html_path = dir.join(format!("{stem}.html"));
    let svg_path = dir.join(format!("{stem}.svg"));
    let md_path = dir.join(format!("{stem}.md"));
    write(&html_path, &html::page(&rec, Some(&encoded)))?;
    write(&svg_path, &svg::render(&rec.timeline, &svg::Style::WIDE))?;
    write(&md_path, &markdown(&rec, &stem, &encoded, token.cycle_from))?;
    Ok(vec![md_path, svg_path, html_path])
}

fn markdown<C: RecipeSet>(
    rec: &Recording<C>,
    stem: &str,
    token: &str,
    cycle_from: Option<usize>,
) -> String {
    let s = &rec.scenario;
    let mut md = format!("# {}\n\n", rec.timeline.title);
    let _ = writeln!(
        md,
        "Scenario `{}`: recipe `{}`, {} clients, {} servers; {} steps.\n",
        s.name,
        s.recipe,
        s.clients,
        s.ensemble.servers,
        rec.lines.len() - 1
    );
    if let Some(v) = &rec.timeline.violation {
        let _ = writeln!(
            md,
            "**VIOLATION of {}**: {}\n",
            property_name(v.property),
            v.explanation
        );
    }
    if let Some(from) = cycle_from {
        let _ = writeln!(
            md,
            "**LASSO**: steps {from}–{} repeat for ever (the trace marks where the cycle \
             starts: `{}`); replaying the token judges the cycle again.\n",
            rec.lines.len().saturating_sub(2),
            zkcheck::trace::CYCLE_MARK
        );
    }
    let _ = writeln!(
        md,
        "Open [{stem}.html]({stem}.html) in a browser to step through the run and see the \
         world (znodes, sessions, watches, recipe state) after each step.\n\n\
         ![sequence diagram]({stem}.svg)\n\n\
         <details><summary>trace</summary>\n\n```text"
    );
    for line in rec.lines.iter().flatten() {
        md.push_str(line);
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "```\n\n</details>\n\nReplay: `zkcheck replay {token} --trace`"
    );
    md
}

/// A scenario name made safe for a file name.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub(crate) use crate::files::write_file as write;
