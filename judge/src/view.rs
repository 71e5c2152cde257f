//! The history as one self-contained HTML page: the verdicts with their
//! stories on top, then a swimlane diagram — one lane per session and per
//! server (s0 leads), time running down, one row per record. Requests,
//! replies and notifications are arrows between a session and its server;
//! commits sit on the leader's lane, applies on the followers', faults are
//! red. The records a verdict cites are marked, and each story line's
//! `line N` links to its row. No script, no network: it opens from disk.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::history::{FaultRecord, Record, SessionEvent, TxnRecord};
use crate::report::Report;
use crate::run::Run;
use crate::verdict::Status;

const GUTTER: i64 = 110;
const LANE: i64 = 150;
const ROW: i64 = 18;
const TOP: i64 = 40;
/// Rows drawn at most: a page past that is unreadable anyway; the text
/// verdicts name lines, which stay drawn when cited.
pub const MAX_ROWS: usize = 20_000;

/// XML/HTML text escaping.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn txn_words(txn: &TxnRecord) -> String {
    match txn {
        TxnRecord::Create {
            path,
            ephemeral_owner,
            ..
        } => {
            if *ephemeral_owner != 0 {
                format!("create {path} (eph {ephemeral_owner:#x})")
            } else {
                format!("create {path}")
            }
        }
        TxnRecord::Delete { path } => format!("delete {path}"),
        TxnRecord::SetData { path, version, .. } => format!("setData {path} v{version}"),
        TxnRecord::Check { path } => format!("check {path}"),
        TxnRecord::Multi { txns } => {
            let parts: Vec<String> = txns.iter().map(txn_words).collect();
            format!("multi [{}]", parts.join("; "))
        }
        TxnRecord::Error { err } => format!("error {err}"),
        TxnRecord::CreateSession { .. } => "createSession".into(),
        TxnRecord::CloseSession {
            ephemerals,
            expired,
        } => format!(
            "{} ({} ephemerals)",
            if *expired { "expire" } else { "closeSession" },
            ephemerals.len()
        ),
    }
}

/// Whether a record is drawn (pings and raw inputs are not).
fn drawn(run: &Run, i: usize) -> bool {
    match run.record(i) {
        Record::Meta { .. } | Record::Input { .. } | Record::End { .. } => false,
        Record::Request { op, .. } => op.op != "ping",
        Record::Reply { xid, .. } => *xid != -2,
        _ => true,
    }
}

/// The page for `run` and its `report`.
pub fn page(run: &Run, report: &Report) -> String {
    let sessions = run.sessions();
    let lane_of: BTreeMap<i64, i64> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, i as i64))
        .collect();
    // Every session a record names is in `sessions`; a fault naming one
    // that nothing else did is drawn on the first lane rather than panic.
    let lane = |s: &i64| lane_of.get(s).copied().unwrap_or(0);
    let server_lane = |s: usize| sessions.len() as i64 + s as i64;
    let x = |lane: i64| GUTTER + lane * LANE + LANE / 2;
    let cited: std::collections::BTreeSet<usize> = report
        .verdicts
        .iter()
        .flat_map(|v| v.lines.iter().copied())
        .collect();
    let rows: Vec<usize> = (0..run.records.len())
        .filter(|&i| drawn(run, i))
        .enumerate()
        .filter(|(n, i)| *n < MAX_ROWS || cited.contains(&run.line(*i)))
        .map(|(_, i)| i)
        .collect();
    let total_drawable = (0..run.records.len()).filter(|&i| drawn(run, i)).count();
    let lanes = sessions.len() as i64 + run.servers as i64;
    let width = GUTTER + lanes * LANE + 20;
    let height = TOP + rows.len() as i64 * ROW + 20;

    let mut svg = String::with_capacity(256 * rows.len() + 4096);
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"monospace\" font-size=\"10\">\n<defs><marker id=\"a\" viewBox=\"0 0 10 10\" \
         refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">\
         <path d=\"M0 0L10 5L0 10z\" fill=\"context-stroke\"/></marker></defs>"
    );
    for (i, s) in sessions.iter().enumerate() {
        let lx = x(i as i64);
        let _ = writeln!(
            svg,
            "<text x=\"{lx}\" y=\"20\" text-anchor=\"middle\" font-weight=\"bold\">{s:#x}</text>\
             <line x1=\"{lx}\" y1=\"{TOP}\" x2=\"{lx}\" y2=\"{height}\" stroke=\"#94a3b8\"/>"
        );
    }
    for s in 0..run.servers {
        let lx = x(server_lane(s));
        let _ =
            writeln!(
            svg,
            "<text x=\"{lx}\" y=\"20\" text-anchor=\"middle\" font-weight=\"bold\">s{s}{}</text>\
             <line x1=\"{lx}\" y1=\"{TOP}\" x2=\"{lx}\" y2=\"{height}\" stroke=\"#7c2d12\"{}/>",
            if s == 0 { " (leader)" } else { "" },
            if s == 0 { "" } else { " stroke-dasharray=\"4 3\"" }
        );
    }
    for (row, &i) in rows.iter().enumerate() {
        let y = TOP + row as i64 * ROW + ROW / 2;
        let line = run.line(i);
        if cited.contains(&line) {
            let _ = writeln!(
                svg,
                "<rect x=\"0\" y=\"{}\" width=\"{width}\" height=\"{ROW}\" fill=\"#fde047\"/>",
                y - ROW / 2
            );
        }
        let t = match run.record(i) {
            Record::Session { t, .. }
            | Record::Request { t, .. }
            | Record::Commit { t, .. }
            | Record::Apply { t, .. }
            | Record::Reply { t, .. }
            | Record::Notify { t, .. }
            | Record::Fault { t, .. } => *t,
            _ => 0,
        };
        let _ = writeln!(
            svg,
            "<g id=\"line-{line}\"><title>line {line}</title><text x=\"4\" y=\"{}\" fill=\"#64748b\">{line} t{t}</text>",
            y + 3
        );
        let arrow = |svg: &mut String, from: i64, to: i64, color: &str, dash: &str, label: &str| {
            let (x1, x2) = (x(from), x(to));
            let _ = writeln!(
                svg,
                "<line x1=\"{x1}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" stroke=\"{color}\" {dash} marker-end=\"url(#a)\"/>\
                 <text x=\"{}\" y=\"{}\" fill=\"{color}\">{}</text>",
                x1.min(x2) + 6,
                y - 2,
                esc(label)
            );
        };
        let mark = |svg: &mut String, lane: i64, color: &str, label: &str| {
            let lx = x(lane);
            let _ = writeln!(
                svg,
                "<circle cx=\"{lx}\" cy=\"{y}\" r=\"4\" fill=\"{color}\"/>\
                 <text x=\"{}\" y=\"{}\" fill=\"{color}\">{}</text>",
                lx + 7,
                y + 3,
                esc(label)
            );
        };
        match run.record(i) {
            Record::Request {
                session,
                server,
                xid,
                op,
                ..
            } => arrow(
                &mut svg,
                lane(session),
                server_lane(*server),
                "#1d4ed8",
                "",
                &format!(
                    "{xid}: {} {}{}",
                    op.op,
                    op.path.as_deref().unwrap_or(""),
                    if op.watch { " +watch" } else { "" }
                ),
            ),
            Record::Reply {
                session,
                server,
                xid,
                zxid,
                err,
                lost,
                ..
            } => arrow(
                &mut svg,
                server_lane(*server),
                lane(session),
                if *lost { "#9ca3af" } else { "#475569" },
                "stroke-dasharray=\"5 3\"",
                &format!(
                    "{xid} ← zxid {zxid}{}{}",
                    if *err != 0 {
                        format!(" err {err}")
                    } else {
                        String::new()
                    },
                    if *lost { " (lost)" } else { "" }
                ),
            ),
            Record::Notify {
                session,
                server,
                event,
                path,
                ..
            } => arrow(
                &mut svg,
                server_lane(*server),
                lane(session),
                "#c2410c",
                "stroke-dasharray=\"2 2\" stroke-width=\"2\"",
                &format!("{event} {path}"),
            ),
            Record::Commit {
                zxid, session, txn, ..
            } => mark(
                &mut svg,
                server_lane(0),
                "#7c2d12",
                &format!("zxid {zxid} {:#x}: {}", session, txn_words(txn)),
            ),
            Record::Apply { server, zxid, .. } => mark(
                &mut svg,
                server_lane(*server),
                "#a8a29e",
                &format!("apply {zxid}"),
            ),
            Record::Session { session, event, .. } => {
                let bad = matches!(event, SessionEvent::Expired | SessionEvent::Refused);
                mark(
                    &mut svg,
                    lane(session),
                    if bad { "#dc2626" } else { "#7c3aed" },
                    &format!("{event:?}").to_lowercase(),
                )
            }
            Record::Fault { fault, .. } => {
                let (lane, words) = match fault {
                    FaultRecord::Drop {
                        session, reason, ..
                    } => (lane(session), format!("FAULT drop ({reason})")),
                    FaultRecord::Silence { session, reason } => {
                        (lane(session), format!("FAULT silence ({reason})"))
                    }
                    FaultRecord::Lag { server, ticks, .. } => {
                        (server_lane(*server), format!("FAULT lag {ticks} ticks"))
                    }
                    FaultRecord::Partition { server, ticks, .. } => (
                        server_lane(*server),
                        format!("FAULT partition {ticks} ticks"),
                    ),
                    FaultRecord::Heal { server } => (server_lane(*server), "heal".into()),
                };
                mark(&mut svg, lane, "#dc2626", &words)
            }
            _ => {}
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");

    let mut out = String::with_capacity(svg.len() + 8192);
    let title = format!(
        "zkcheck judge: {}",
        match report.exit {
            0 => "ok",
            1 => "violation",
            _ => "incomplete",
        }
    );
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
         <style>\nbody{{font-family:sans-serif;margin:1em}}.v{{margin:.4em 0}}.bad{{color:#b91c1c}}\
         .good{{color:#15803d}}.inc{{color:#a16207}}ul{{margin:.2em 0}}li{{font-family:monospace;font-size:12px}}\
         #diagram{{overflow:auto;border:1px solid #cbd5e1}}:target rect{{fill:#fb923c}}\n</style>\n</head>\n<body>\n\
         <h1>{title}</h1>\n<p>{} records, {} sessions, {} servers (s0 leads); {}. Lanes: sessions, then servers; \
         time runs down, one row per record (pings not drawn); cited records are yellow.</p>\n",
        report.records,
        report.sessions,
        report.servers,
        if report.ended {
            "the run ended cleanly"
        } else {
            "<b>no end record: the run was cut</b>"
        }
    );
    for v in &report.verdicts {
        let (class, word) = match v.status {
            Status::Ok => ("good", "ok"),
            Status::Violation => ("bad", "VIOLATION"),
            Status::Incomplete => ("inc", "incomplete"),
        };
        let _ = writeln!(
            out,
            "<div class=\"v\"><b class=\"{class}\">{}: {word}</b> {}",
            esc(v.judge),
            esc(&v.summary)
        );
        if !v.story.is_empty() || !v.notes.is_empty() {
            out.push_str("<ul>");
            for line in v.story.iter().chain(&v.notes) {
                let _ = write!(out, "<li>{}</li>", link_lines(&esc(line)));
            }
            out.push_str("</ul>");
        }
        out.push_str("</div>\n");
    }
    if rows.len() < total_drawable {
        let _ = writeln!(
            out,
            "<p>Only the first {MAX_ROWS} rows (and the cited ones) of {total_drawable} are drawn.</p>"
        );
    }
    out.push_str("<div id=\"diagram\">\n");
    out.push_str(&svg);
    out.push_str("</div>\n</body>\n</html>\n");
    out
}

/// `line 12` → a link to row 12.
fn link_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("line ") {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let digits: String = after[5..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if digits.is_empty() {
            out.push_str("line ");
            rest = &after[5..];
        } else {
            let _ = write!(out, "<a href=\"#line-{digits}\">line {digits}</a>");
            rest = &after[5 + digits.len()..];
        }
    }
    out.push_str(rest);
    out
}
