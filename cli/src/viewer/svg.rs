//! The sequence diagram as one static SVG: lanes across, time down.
//!
//! The same text is written as a `.svg` file next to a Markdown report
//! (forges render it as an image: no script, no external font) and inlined
//! into the HTML viewer, whose script only adds selection on top. Rows and
//! lanes carry `data-` attributes and classes for that script and for the
//! browser tests; nothing else depends on them.

use std::fmt::Write as _;

use super::timeline::{ArrowKind, Belief, Item, LaneKind, MarkKind, Timeline};

/// Sizes of a drawing.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Horizontal distance between lanes.
    pub lane_width: u32,
    /// Height of one item line.
    pub line: u32,
    /// Longest label drawn (longer ones end in `…`; the HTML panel has them whole).
    pub max_label: usize,
    /// Room right of the last lane for its marks' labels.
    pub right: u32,
}

impl Style {
    /// For a counterexample: room for paths in labels.
    pub const WIDE: Style = Style {
        lane_width: 136,
        line: 17,
        max_label: 64,
        right: 260,
    };
    /// For many clients side by side (the herd comparison).
    pub const COMPACT: Style = Style {
        lane_width: 70,
        line: 15,
        max_label: 40,
        right: 90,
    };
}

const GUTTER: u32 = 96;
const HEADER: u32 = 48;
const SERVER_GAP: u32 = 24;
const PAD: u32 = 4;

/// Where things go.
pub struct Layout {
    pub width: u32,
    pub height: u32,
    /// Top of each row, and one past the last.
    pub row_top: Vec<u32>,
    lane_x: Vec<u32>,
}

impl Layout {
    pub fn new(t: &Timeline, style: &Style) -> Self {
        let clients = t.clients() as u32;
        let lane_x: Vec<u32> = (0..t.lanes.len() as u32)
            .map(|i| {
                let gap = if i >= clients { SERVER_GAP } else { 0 };
                GUTTER + gap + i * style.lane_width + style.lane_width / 2
            })
            .collect();
        let mut row_top = Vec::with_capacity(t.rows.len() + 1);
        let mut y = HEADER;
        for row in &t.rows {
            row_top.push(y);
            y += row.items.len().max(1) as u32 * style.line + PAD;
        }
        row_top.push(y);
        let width = GUTTER + SERVER_GAP + t.lanes.len() as u32 * style.lane_width + style.right;
        Layout {
            width,
            height: y + 12,
            row_top,
            lane_x,
        }
    }
    pub fn x(&self, lane: usize) -> u32 {
        self.lane_x[lane]
    }
}

/// The whole diagram as an `<svg>` element.
pub fn render(t: &Timeline, style: &Style) -> String {
    let l = Layout::new(t, style);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11">
<defs>{markers}</defs>
<rect width="{w}" height="{h}" fill="#ffffff"/>
"##,
        w = l.width,
        h = l.height,
        markers = markers(),
    );
    rows(&mut out, t, &l);
    lanes(&mut out, t, &l);
    bands(&mut out, t, &l);
    items(&mut out, t, &l, style);
    violation(&mut out, t, &l);
    heads(&mut out, t, &l);
    out.push_str("</svg>\n");
    out
}

fn markers() -> String {
    let mut m = String::new();
    for (id, color) in [
        ("req", "#1d4ed8"),
        ("rep", "#475569"),
        ("watch", "#c2410c"),
        ("conn", "#7c3aed"),
    ] {
        let _ = write!(
            m,
            r#"<marker id="ah-{id}" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="{color}"/></marker>"#
        );
    }
    m
}

fn rows(out: &mut String, t: &Timeline, l: &Layout) {
    out.push_str("<g class=\"rows\">\n");
    for (r, row) in t.rows.iter().enumerate() {
        let (y0, y1) = (l.row_top[r], l.row_top[r + 1]);
        let fill = if row.ticks > 0 {
            "#f1f5f9"
        } else if r % 2 == 0 {
            "#ffffff"
        } else {
            "#fafafa"
        };
        let _ = writeln!(
            out,
            r#"<rect class="row" data-row="{r}" data-first="{}" data-last="{}" x="0" y="{y0}" width="{}" height="{}" fill="{fill}"/>"#,
            row.first,
            row.last,
            l.width,
            y1 - y0
        );
        let step = if row.last == 0 {
            "start".to_string()
        } else if row.first == row.last {
            format!("{}", row.last - 1)
        } else {
            format!("{}–{}", row.first - 1, row.last - 1)
        };
        let _ = writeln!(
            out,
            r##"<text x="6" y="{}" fill="#334155" font-family="DejaVu Sans Mono, monospace" font-size="10">{} <tspan fill="#94a3b8">t={}</tspan></text>"##,
            y0 + 12,
            esc(&step),
            row.time
        );
        if row.ticks > 0 {
            let _ = writeln!(
                out,
                r##"<text class="ticks" x="{}" y="{}" fill="#64748b" font-style="italic">⋯ {} tick{} (nothing else happens)</text>"##,
                GUTTER + 8,
                y0 + 12,
                row.ticks,
                if row.ticks == 1 { "" } else { "s" }
            );
        }
    }
    out.push_str("</g>\n");
}

fn lanes(out: &mut String, t: &Timeline, l: &Layout) {
    out.push_str("<g class=\"lanes\">\n");
    let bottom = l.row_top.last().copied().unwrap_or(HEADER);
    for (i, lane) in t.lanes.iter().enumerate() {
        let dash = match lane.kind {
            LaneKind::Server { leader: false } => " stroke-dasharray=\"2 3\"",
            _ => "",
        };
        let kind = match lane.kind {
            LaneKind::Client => "client",
            LaneKind::Server { .. } => "server",
        };
        let _ = writeln!(
            out,
            r##"<line class="lane {kind}" data-lane="{name}" x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="#cbd5e1" stroke-width="1.5"{dash}/>"##,
            name = esc(&lane.name),
            x = l.x(i),
            top = HEADER - 8,
        );
    }
    out.push_str("</g>\n");
}

/// Lane names, drawn last so they stay on top (the page keeps them in view
/// while the diagram scrolls).
fn heads(out: &mut String, t: &Timeline, l: &Layout) {
    let _ = writeln!(
        out,
        r##"<g class="heads"><rect x="0" y="0" width="{}" height="{}" fill="#ffffff" fill-opacity="0.92"/>"##,
        l.width,
        HEADER - 10
    );
    for (i, lane) in t.lanes.iter().enumerate() {
        let (label, color) = match lane.kind {
            LaneKind::Client => (lane.name.clone(), "#0f172a"),
            LaneKind::Server { leader: true } => (format!("{} ★ leader", lane.name), "#7c2d12"),
            LaneKind::Server { leader: false } => (lane.name.clone(), "#7c2d12"),
        };
        let _ = writeln!(
            out,
            r##"<text class="lane-head" data-lane="{name}" x="{x}" y="{y}" text-anchor="middle" font-weight="bold" font-size="13" fill="{color}">{label}</text>"##,
            name = esc(&lane.name),
            x = l.x(i),
            y = HEADER - 16,
            label = esc(&label),
        );
    }
    out.push_str("</g>\n");
}

fn band_color(b: Belief) -> &'static str {
    match b {
        Belief::Idle => "none",
        Belief::Waiting => "#facc15",
        Belief::Holding => "#16a34a",
        Belief::HoldingExpired => "#dc2626",
        Belief::Lost => "#9ca3af",
    }
}

fn bands(out: &mut String, t: &Timeline, l: &Layout) {
    out.push_str("<g class=\"bands\">\n");
    for b in &t.bands {
        let x = l.x(b.lane);
        let (y0, y1) = (l.row_top[b.from], l.row_top[b.to + 1]);
        let _ = writeln!(
            out,
            r#"<rect class="band {cls}" x="{}" y="{y0}" width="10" height="{}" fill="{}" fill-opacity="0.75" rx="2"><title>c{}: {}</title></rect>"#,
            x - 5,
            y1 - y0,
            band_color(b.belief),
            b.lane,
            b.belief.name(),
            cls = b.belief.name().replace([',', ' '], "-").replace("--", "-"),
        );
    }
    out.push_str("</g>\n");
}

fn items(out: &mut String, t: &Timeline, l: &Layout, style: &Style) {
    out.push_str("<g class=\"items\">\n");
    for (r, row) in t.rows.iter().enumerate() {
        for (i, item) in row.items.iter().enumerate() {
            let y = l.row_top[r] + i as u32 * style.line + style.line - 4;
            item_svg(out, item, y, l, style);
        }
    }
    out.push_str("</g>\n");
}

/// A label on a white halo, so it stays readable over lines and bands.
fn label(out: &mut String, x: u32, y: u32, anchor: &str, color: &str, extra: &str, text: &str) {
    let _ = writeln!(
        out,
        r##"<text x="{x}" y="{y}" text-anchor="{anchor}" fill="{color}" stroke="#ffffff" stroke-width="3" paint-order="stroke"{extra}>{}</text>"##,
        esc(text)
    );
}

fn item_svg(out: &mut String, item: &Item, y: u32, l: &Layout, style: &Style) {
    match item {
        Item::Arrow {
            from,
            to,
            kind,
            label: text,
        } => {
            let (x1, x2) = (l.x(*from), l.x(*to));
            let (cls, id, color, dash) = match kind {
                ArrowKind::Request => ("request", "req", "#1d4ed8", ""),
                ArrowKind::Reply => ("reply", "rep", "#475569", " stroke-dasharray=\"5 3\""),
                ArrowKind::Watch => ("watch", "watch", "#c2410c", " stroke-dasharray=\"2 2\""),
                ArrowKind::Connect => ("connect", "conn", "#7c3aed", ""),
            };
            let ya = y - 1;
            let _ = writeln!(
                out,
                r#"<g class="arrow {cls}"><line x1="{}" y1="{ya}" x2="{}" y2="{ya}" stroke="{color}" stroke-width="{}"{dash} marker-end="url(#ah-{id})"/>"#,
                if x1 < x2 { x1 + 6 } else { x1 - 6 },
                if x1 < x2 { x2 - 7 } else { x2 + 7 },
                if *kind == ArrowKind::Watch { 2 } else { 1 },
            );
            let text = clip(text, style.max_label);
            let weight = if *kind == ArrowKind::Watch {
                " font-weight=\"bold\""
            } else {
                ""
            };
            // Always from the left end, so a long label runs into the room
            // on the right and never over the step numbers.
            label(out, x1.min(x2) + 10, ya - 3, "start", color, weight, &text);
            out.push_str("</g>\n");
        }
        Item::Mark {
            lane,
            kind,
            label: text,
        } => {
            let x = l.x(*lane);
            let (cls, color, shape) = match kind {
                MarkKind::Commit => ("commit", "#7c2d12", "square"),
                MarkKind::Apply => ("apply", "#9a3412", "square"),
                MarkKind::Fault => ("fault", "#dc2626", "bolt"),
                MarkKind::SessionEnded => ("session-ended", "#dc2626", "cross"),
                MarkKind::Session => ("session", "#6d28d9", "dot"),
                MarkKind::Timer => ("timer", "#64748b", "dot"),
                MarkKind::App => ("app", "#0f172a", "dot"),
                MarkKind::Acquired => ("acquired", "#15803d", "diamond"),
                MarkKind::Lost => ("lost", "#b91c1c", "diamond"),
            };
            let cy = y - 4;
            let _ = write!(out, r#"<g class="mark {cls}">"#);
            match shape {
                "square" => {
                    let _ = write!(
                        out,
                        r#"<rect x="{}" y="{}" width="8" height="8" fill="{color}"/>"#,
                        x - 4,
                        cy - 4
                    );
                }
                "bolt" => {
                    let _ = write!(
                        out,
                        r##"<rect x="{}" y="{}" width="14" height="14" fill="#fee2e2" stroke="{color}" stroke-width="2" transform="rotate(45 {x} {cy})"/>"##,
                        x - 7,
                        cy - 7
                    );
                }
                "cross" => {
                    let _ = write!(
                        out,
                        r#"<path d="M{a},{b} l8,8 M{a},{c} l8,-8" stroke="{color}" stroke-width="2.5"/>"#,
                        a = x - 4,
                        b = cy - 4,
                        c = cy + 4
                    );
                }
                "diamond" => {
                    let _ = write!(
                        out,
                        r#"<path d="M{x},{} l6,6 l-6,6 l-6,-6 z" fill="{color}"/>"#,
                        cy - 6
                    );
                }
                _ => {
                    let _ = write!(
                        out,
                        r#"<circle cx="{x}" cy="{cy}" r="3.5" fill="{color}"/>"#
                    );
                }
            }
            let bold = matches!(
                kind,
                MarkKind::Fault | MarkKind::Acquired | MarkKind::Lost | MarkKind::SessionEnded
            );
            label(
                out,
                x + 10,
                y,
                "start",
                color,
                if bold { " font-weight=\"bold\"" } else { "" },
                &clip(text, style.max_label),
            );
            out.push_str("</g>\n");
        }
        Item::Banner { label: text } => {
            let width_chars = ((l.width - GUTTER) / 6) as usize;
            label(
                out,
                GUTTER + 8,
                y,
                "start",
                "#b91c1c",
                " font-weight=\"bold\" class=\"banner\"",
                &clip(&format!("✖ {text}"), width_chars),
            );
        }
    }
}

fn violation(out: &mut String, t: &Timeline, l: &Layout) {
    let Some(v) = &t.violation else {
        return;
    };
    let (y0, y1) = (l.row_top[v.row], l.row_top[v.row + 1]);
    let _ = writeln!(
        out,
        r##"<g id="violation" data-row="{}" data-step="{}"><rect x="1" y="{y0}" width="{}" height="{}" fill="#dc2626" fill-opacity="0.10" stroke="#dc2626" stroke-width="2"/>"##,
        v.row,
        v.snapshot,
        l.width - 2,
        y1 - y0
    );
    // The overlap: every holder's band outlined at the violating row.
    for &lane in &v.holders {
        let x = l.x(lane);
        let _ = writeln!(
            out,
            r##"<rect class="holder" x="{}" y="{}" width="18" height="{}" fill="none" stroke="#dc2626" stroke-width="3" rx="4"/>"##,
            x - 9,
            y0 + 1,
            y1 - y0 - 2
        );
    }
    if v.holders.len() > 1 {
        let (a, b) = (l.x(v.holders[0]), l.x(*v.holders.last().unwrap()));
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#dc2626" stroke-width="3"/>"##,
            a + 9,
            b - 9,
            y = y0 + 3
        );
    }
    out.push_str("</g>\n");
}

/// Shorten a label to `max` characters.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Escape text for XML and HTML.
pub fn esc(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            c => s.push(c),
        }
    }
    s
}
