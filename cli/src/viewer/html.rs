//! The self-contained viewer page: the SVG diagram inline, the snapshots
//! as JSON in a `<script type="application/json">`, and a small script
//! (`page.js`) that renders the state panel and handles selection. No
//! network, no external file: the page opens offline from disk.

use std::fmt::Write as _;

use serde_json::json;

use zkcheck::scenario::property_name;

use super::record::Recording;
use super::svg::{esc, render, Style};

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The viewer page for a recorded run. `token` (the replay token) is
/// printed in the header so the page says how to reproduce what it shows.
pub fn page<C: zkrecipes::RecipeSet>(rec: &Recording<C>, token: Option<&str>) -> String {
    let t = &rec.timeline;
    let s = &rec.scenario;
    let data = json!({
        "snapshots": rec.snapshots,
        "lines": rec.lines,
        "violation": t.violation.as_ref().map(|v| v.snapshot),
    });
    // `<` escaped so that no string in the data can close the script element.
    let data = serde_json::to_string(&data)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c");

    let mut out = String::with_capacity(128 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width\">\n<title>{title}</title>\n\
         <style>\n{CSS}</style>\n</head>\n<body>\n<header>\n<h1>{title}</h1>\n",
        title = esc(&t.title)
    );
    let checks: Vec<&str> = s.hard.iter().map(|&p| property_name(p)).collect();
    let _ = writeln!(
        out,
        "<p class=\"sub\">scenario <b>{}</b>: recipe <b>{}</b>, {} clients, {} servers \
         (s0 leads), session timeout {} ticks; hard checks: {}; {} steps</p>",
        esc(&s.name),
        esc(&s.recipe),
        s.clients,
        s.ensemble.servers,
        s.ensemble.session_timeout,
        esc(&checks.join(", ")),
        rec.lines.len() - 1
    );
    match &t.violation {
        Some(v) => {
            let step = if v.snapshot == 0 {
                "start".to_string()
            } else {
                format!("step {}", v.snapshot - 1)
            };
            let _ = writeln!(
                out,
                "<p id=\"verdict\" class=\"bad\">VIOLATION of {} at <a href=\"#step={}\">{step}</a> \
                 (press <kbd>v</kbd>): {}</p>",
                property_name(v.property),
                if v.snapshot == 0 {
                    "start".to_string()
                } else {
                    (v.snapshot - 1).to_string()
                },
                esc(&v.explanation)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "<p id=\"verdict\" class=\"good\">No hard check failed in this run.</p>"
            );
        }
    }
    out.push_str(LEGEND);
    if let Some(token) = token {
        let _ = writeln!(
            out,
            "<details><summary>reproduce</summary><code>zkcheck replay {} --trace</code></details>",
            esc(token)
        );
    }
    out.push_str(
        "<div id=\"errors\"></div><div id=\"status\">script did not run</div>\n</header>\n<main>\n\
         <div id=\"diagram\">\n",
    );
    out.push_str(&render(t, &Style::WIDE));
    out.push_str(
        "</div>\n<aside id=\"panel\"><div id=\"nav\"><button id=\"prev\" title=\"previous step (↑)\">◀</button>\
         <span id=\"where\"></span><button id=\"next\" title=\"next step (↓)\">▶</button></div>\n\
         <pre id=\"lines\"></pre><div id=\"state\"></div></aside>\n</main>\n",
    );
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"zk-data\">{data}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n"
    );
    out
}

const LEGEND: &str = r##"<details><summary>how to read this</summary><div class="legend">
<p>Time runs down, one row per step (the gutter shows the step and the simulated time after it); runs of clock ticks in which nothing else happens are one grey row. Lanes: clients c0…, servers s0… (s0 leads, followers dashed).
Click a row or use <kbd>↑</kbd>/<kbd>↓</kbd> (<kbd>k</kbd>/<kbd>j</kbd>) to see the world after that step on the right; <kbd>v</kbd> jumps to the violation; the address (<code>#step=12</code>) keeps the selection. Entries the step changed are yellow.</p>
<span><span class="sw" style="background:#1d4ed8"></span>request taken</span>
<span><span class="sw" style="background:#475569"></span>reply (dashed)</span>
<span><span class="sw" style="background:#c2410c"></span>watch notification (dotted, bold)</span>
<span><span class="sw" style="background:#7c3aed"></span>connect</span>
<span><span class="sw" style="background:#7c2d12"></span>commit (leader) / apply (follower)</span>
<span><span class="sw" style="background:#dc2626"></span>fault, session ended</span>
<br><span>belief bands:</span>
<span><span class="sw" style="background:#facc15"></span>waiting</span>
<span><span class="sw" style="background:#16a34a"></span>holding</span>
<span><span class="sw" style="background:#dc2626"></span>holding, session expired</span>
<span><span class="sw" style="background:#9ca3af"></span>lost / gave up</span>
</div></details>
"##;
