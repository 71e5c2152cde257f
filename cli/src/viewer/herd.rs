//! The herd effect as a picture: one seeded schedule of the naive lock and
//! one of the predecessor-watch lock at the same client count, side by
//! side, showing only what the comparison is about — each release (the
//! leader committing the lock node's delete, labelled with how many
//! waiters its watch notifications woke), each wakeup (a watch
//! notification reaching a client) and each acquisition.
//!
//! A wakeup is attributed to the latest delete of the path it reports,
//! which is the release that caused it (the watch was set on that node).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::compare::scenario;
use crate::files::ReportError;
use crate::timing::run_timed;

use super::record::{record, Options};
use super::svg::{esc, render, Style};
use super::timeline::{ArrowKind, Item, MarkKind, Timeline};

/// One recipe's schedule, filtered down to releases, wakeups and acquisitions.
pub fn herd_timeline(recipe: &str, clients: usize, seed: u64) -> Result<Timeline, ReportError> {
    let s = scenario(recipe, clients, false);
    s.validate_for_figures().map_err(ReportError::Scenario)?;
    let (outcome, _) = run_timed(&s, seed);
    let indices =
        outcome
            .schedule
            .to_indices(&s)
            .ok_or_else(|| ReportError::ScheduleDoesNotReplay {
                recipe: recipe.to_string(),
                seed,
            })?;
    let rec = record(
        &s,
        &indices,
        format!("{recipe}, {clients} clients, seed {seed}"),
        Options {
            snapshots: false,
            count_wakeups: true,
            cycle_from: None,
        },
    )
    .map_err(ReportError::Replay)?;
    Ok(filter(rec.timeline, is_herd_item))
}

/// Releases, wakeups, acquisitions and releases by the holder.
fn is_herd_item(item: &Item) -> bool {
    match item {
        Item::Arrow { kind, .. } => *kind == ArrowKind::Watch,
        Item::Mark { kind, label, .. } => match kind {
            MarkKind::Commit => label.contains(" → woke "),
            MarkKind::Acquired | MarkKind::Lost => true,
            MarkKind::App => label == "Released",
            _ => false,
        },
        Item::Banner { .. } => true,
    }
}

/// Keep only the items `keep` accepts, drop rows left empty, and move the
/// belief bands (and the violation) onto the rows that remain.
pub fn filter(mut t: Timeline, keep: fn(&Item) -> bool) -> Timeline {
    let mut new_index = Vec::with_capacity(t.rows.len());
    let mut rows = Vec::new();
    for mut row in std::mem::take(&mut t.rows) {
        row.items.retain(keep);
        if row.items.is_empty() {
            new_index.push(None);
        } else {
            new_index.push(Some(rows.len()));
            rows.push(row);
        }
    }
    let first_kept_from = |r: usize| new_index[r..].iter().flatten().next().copied();
    let last_kept_upto = |r: usize| new_index[..=r].iter().rev().flatten().next().copied();
    t.bands = std::mem::take(&mut t.bands)
        .into_iter()
        .filter_map(|mut b| {
            let (from, to) = (first_kept_from(b.from)?, last_kept_upto(b.to)?);
            (from <= to).then(|| {
                b.from = from;
                b.to = to;
                b
            })
        })
        .collect();
    if let Some(v) = &mut t.violation {
        match new_index[v.row] {
            Some(r) => v.row = r,
            None => t.violation = None,
        }
    }
    t.rows = rows;
    t
}

/// Side by side in one SVG, each under a caption.
pub fn side_by_side(timelines: &[Timeline]) -> String {
    let style = Style::COMPACT;
    let parts: Vec<(String, u32, u32)> = timelines
        .iter()
        .map(|t| {
            let l = super::svg::Layout::new(t, &style);
            (render(t, &style), l.width, l.height)
        })
        .collect();
    let caption = 30;
    let width: u32 = parts.iter().map(|p| p.1).sum();
    let height = parts.iter().map(|p| p.2).max().unwrap_or(0) + caption;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n\
         <rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\n"
    );
    let mut x = 0;
    for (t, (svg, w, _)) in timelines.iter().zip(&parts) {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\" fill=\"#0f172a\">{}</text>\n\
             <g transform=\"translate({x},{caption})\">{svg}</g>",
            x + 12,
            esc(&t.title)
        );
        x += w;
    }
    out.push_str("</svg>\n");
    out
}

/// Write `herd-nN.svg` and `herd-nN.html` (the two diagrams beside the
/// report's charts, read from `charts` in `dir`). Returns the paths written.
pub fn write_herd(
    dir: &Path,
    clients: usize,
    seed: u64,
    charts: &[&str],
) -> Result<Vec<PathBuf>, ReportError> {
    let timelines = crate::compare::HEADLINE
        .iter()
        .map(|r| herd_timeline(r, clients, seed))
        .collect::<Result<Vec<_>, _>>()?;
    let svg_path = dir.join(format!("herd-n{clients}.svg"));
    super::write(&svg_path, &side_by_side(&timelines))?;

    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Herd: naive vs sequential, {clients} clients</title>\n<style>\n\
         body {{ margin: 0 16px; font: 13px/1.4 \"DejaVu Sans\", Helvetica, Arial, sans-serif; color: #0f172a; }}\n\
         .pair {{ display: flex; gap: 16px; align-items: flex-start; overflow-x: auto; }}\n\
         .pair figure {{ margin: 0; }} figcaption {{ font-weight: bold; font-size: 15px; margin: 6px 0; }}\n\
         .charts {{ display: flex; flex-wrap: wrap; gap: 16px; }}\n</style>\n</head>\n<body>\n\
         <h1>Herd: naive lock vs predecessor-watch lock, {clients} clients</h1>\n\
         <p>One seeded schedule of each (seed {seed}, no faults), showing only releases (the \
         leader committing the lock node's delete, with how many waiters its watch \
         notifications woke), wakeups (watch notifications, numbered per release) and \
         acquisitions. Bands: yellow waiting, green holding. The naive lock wakes every \
         waiter on each release; the predecessor-watch lock wakes one.</p>\n<div class=\"pair\">\n"
    );
    for t in &timelines {
        let _ = writeln!(
            page,
            "<figure><figcaption>{}</figcaption>{}</figure>",
            esc(&t.title),
            render(t, &Style::COMPACT)
        );
    }
    page.push_str("</div>\n<h2>Over many schedules</h2>\n<div class=\"charts\">\n");
    for chart in charts {
        let path = dir.join(chart);
        let text =
            std::fs::read_to_string(&path).map_err(|source| ReportError::Read { path, source })?;
        let text = text.trim_start_matches(|c| c != '<');
        let text = match text.strip_prefix("<?xml") {
            Some(rest) => rest.split_once("?>").map_or(rest, |(_, r)| r),
            None => text,
        };
        let _ = writeln!(page, "<figure>{text}</figure>");
    }
    page.push_str("</div>\n</body>\n</html>\n");
    let html_path = dir.join(format!("herd-n{clients}.html"));
    super::write(&html_path, &page)?;
    Ok(vec![svg_path, html_path])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(t: &Timeline, pred: impl Fn(&Item) -> bool) -> usize {
        t.rows
            .iter()
            .flat_map(|r| &r.items)
            .filter(|i| pred(i))
            .count()
    }

    /// Both directions: the naive lock's picture has a release that woke
    /// several waiters; the predecessor-watch lock's never more than one.
    #[test]
    fn the_naive_picture_shows_a_herd_and_the_sequential_one_does_not() {
        let woke = |t: &Timeline| -> Vec<u32> {
            t.rows
                .iter()
                .flat_map(|r| &r.items)
                .filter_map(|i| match i {
                    Item::Mark { label, .. } => label
                        .split(" → woke ")
                        .nth(1)
                        .and_then(|s| s.split(' ').next())
                        .and_then(|n| n.parse().ok()),
                    _ => None,
                })
                .collect()
        };
        let naive = herd_timeline("naive", 8, 0).unwrap();
        let sequential = herd_timeline("sequential", 8, 0).unwrap();
        assert!(woke(&naive).iter().any(|&n| n >= 4), "{:?}", woke(&naive));
        assert!(!woke(&sequential).is_empty());
        assert!(
            woke(&sequential).iter().all(|&n| n == 1),
            "{:?}",
            woke(&sequential)
        );
        for t in [&naive, &sequential] {
            let acquired = count(t, |i| {
                matches!(
                    i,
                    Item::Mark {
                        kind: MarkKind::Acquired,
                        ..
                    }
                )
            });
            assert_eq!(acquired, 8, "every client acquires once: {}", t.title);
            assert!(count(t, |i| matches!(i, Item::Arrow { .. })) > 0);
        }
        let svg = side_by_side(&[naive, sequential]);
        assert!(svg.contains("naive, 8 clients") && svg.contains("sequential, 8 clients"));
        assert_eq!(svg.matches("class=\"timeline\"").count(), 2);
    }
}
