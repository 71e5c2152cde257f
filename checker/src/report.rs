//! Reports: `compare.md` with its table and SVG charts (plotters' SVG
//! backend, so the charts are plain text files that diff and render on any
//! forge).

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::compare::{CompareConfig, Row};
use crate::explore::replay::BadChoice;
use crate::scenario::Invalid;

/// Why a report (or a viewer page) could not be written.
#[derive(Debug)]
pub enum ReportError {
    /// The report path exists and is not a directory.
    NotADirectory(PathBuf),
    /// The report directory could not be created.
    CreateDir { path: PathBuf, source: io::Error },
    /// A file could not be written.
    Write { path: PathBuf, source: io::Error },
    /// A file the report embeds (a chart in the herd page) could not be read.
    Read { path: PathBuf, source: io::Error },
    /// plotters could not draw a chart. Its error type is generic over the
    /// drawing backend, so what it says is kept as text.
    Draw { path: PathBuf, message: String },
    /// The scenario a picture needs is refused by the limits.
    Scenario(Invalid),
    /// A token's schedule does not fit its scenario.
    Replay(BadChoice),
    /// A random run's schedule did not replay as indices: a checker bug.
    ScheduleDoesNotReplay { recipe: String, seed: u64 },
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::NotADirectory(dir) => write!(
                f,
                "`--report` = {} is not a directory (the report is compare.md and SVG charts)",
                dir.display()
            ),
            ReportError::CreateDir { path, source } => {
                write!(
                    f,
                    "cannot create the directory {}: {source}",
                    path.display()
                )
            }
            ReportError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
            ReportError::Read { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            ReportError::Draw { path, message } => {
                write!(f, "cannot draw {}: {message}", path.display())
            }
            ReportError::Scenario(invalid) => write!(f, "{invalid}"),
            ReportError::Replay(bad) => {
                write!(f, "the token's schedule does not fit its scenario: {bad}")
            }
            ReportError::ScheduleDoesNotReplay { recipe, seed } => write!(
                f,
                "internal error: the random schedule of {recipe} (seed {seed}) does not replay"
            ),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::CreateDir { source, .. }
            | ReportError::Write { source, .. }
            | ReportError::Read { source, .. } => Some(source),
            ReportError::Scenario(invalid) => Some(invalid),
            ReportError::Replay(bad) => Some(bad),
            _ => None,
        }
    }
}

/// `create_dir_all`, its failure as a [`ReportError`].
pub(crate) fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })
}

/// `fs::write`, its failure as a [`ReportError`].
pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Whether `dir` can hold the report: a directory, or a path that can be
/// created as one. Checked before the comparison runs, so that a bad path
/// is bad input (exit 2) and costs no time.
pub fn check_dir(dir: &Path) -> Result<(), ReportError> {
    if dir.exists() && !dir.is_dir() {
        return Err(ReportError::NotADirectory(dir.to_path_buf()));
    }
    create_dir(dir)
}

/// The client count of the side-by-side herd picture.
pub const HERD_CLIENTS: usize = 8;

/// Write `compare.md`, `wakeups-per-release.svg`, `latency.svg`,
/// `total-time.svg` and the herd picture (`herd-n8.svg`, `herd-n8.html`: one schedule of each recipe
/// at 8 clients, side by side) into `dir` (created if missing). Returns the
/// paths written.
pub fn write_compare(
    dir: &Path,
    config: &CompareConfig,
    rows: &[Row],
) -> Result<Vec<PathBuf>, ReportError> {
    create_dir(dir)?;
    let wakeups = dir.join("wakeups-per-release.svg");
    let latency = dir.join("latency.svg");
    chart(
        &wakeups,
        "Wakeups per release",
        "wakeups",
        rows,
        &config.recipes,
        Lines {
            solid: "solid: max per release",
            dashed: "dashed: mean per release",
        },
        |r| r.figures.max_wakeups_per_release() as f64,
        |r| r.figures.mean_wakeups_per_release(),
    )?;
    chart(
        &latency,
        "Requested → Acquired (model time)",
        "ms",
        rows,
        &config.recipes,
        Lines {
            solid: "solid: p99",
            dashed: "dashed: mean",
        },
        |r| r.time.p99_latency_ms(),
        |r| r.time.mean_latency_ms(),
    )?;
    let total = dir.join("total-time.svg");
    chart(
        &total,
        "Time for every client to acquire once (model time)",
        "ms",
        rows,
        &config.recipes,
        Lines {
            solid: "solid: total time of a run",
            dashed: "dashed: the server's busy time in it",
        },
        |r| r.time.mean_total_ms(),
        |r| r.time.mean_total_ms() * r.time.busy_fraction().unwrap_or(0.0),
    )?;
    // One schedule of each recipe drawn side by side, beside the charts.
    let herd = crate::viewer::herd::write_herd(
        dir,
        HERD_CLIENTS,
        config.first_seed,
        &["wakeups-per-release.svg", "latency.svg", "total-time.svg"],
    )?;
    let md = dir.join("compare.md");
    write_file(&md, &markdown_in(config, rows, dir))?;
    let mut written = vec![md, wakeups, latency, total];
    written.extend(herd);
    Ok(written)
}

/// The command line that regenerates the report: `zkcheck compare`, or
/// `zkreal`'s `compare` example when the rows carry real-server figures.
pub fn command_line(config: &CompareConfig, rows: &[Row], dir: &Path) -> String {
    let clients = config
        .clients
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let real = rows.iter().find_map(|r| r.real.as_ref());
    let mut cmd = if real.is_some() {
        format!(
            "cargo run --release -p zkreal --example compare -- --clients {clients} --seeds {}",
            config.seeds
        )
    } else {
        format!(
            "cargo run --release -- compare --clients {clients} --faults {} --seeds {}",
            if config.faults { "default" } else { "none" },
            config.seeds,
        )
    };
    if config.first_seed != 0 {
        let _ = write!(cmd, " --seed {}", config.first_seed);
    }
    if config.hold_ticks != CompareConfig::default().hold_ticks {
        let _ = write!(cmd, " --hold-ticks {}", config.hold_ticks);
    }
    if config.timing != crate::timing::Timing::default() {
        cmd.push_str(" --timing <FILE>");
    }
    if let Some(real) = real {
        if real.figures.runs != 1 {
            let _ = write!(cmd, " --real-runs {}", real.figures.runs);
        }
    }
    let _ = write!(cmd, " --report {}", dir.display());
    cmd
}

/// The Markdown page.
pub fn markdown(config: &CompareConfig, rows: &[Row]) -> String {
    markdown_in(config, rows, Path::new("reports"))
}

/// The Markdown page of a report written into `dir`.
pub fn markdown_in(config: &CompareConfig, rows: &[Row], dir: &Path) -> String {
    let mut out = String::from(
        "# Naive lock vs predecessor-watch lock

",
    );
    let t = &config.timing;
    let hold = match config.hold_ticks {
        0 => "each holder releasing as soon as it acquires (acquisitions follow each other \
              back to back)"
            .to_string(),
        n => format!(
            "each holder keeping the lock until the {n}{} tick boundary (ticks of 100 ms) \
             after it acquired",
            match n {
                1 => "st",
                2 => "nd",
                3 => "rd",
                _ => "th",
            }
        ),
    };
    let _ = writeln!(
        out,
        "Generated by `{}`: {} seeded timed runs per cell (seeds {}..{}), one round per client, \
         {hold}, one server, {}.\n",
        command_line(config, rows, dir),
        config.seeds,
        config.first_seed,
        config.first_seed + config.seeds,
        if config.faults {
            "with up to two connection drops and one session expiry per run (arriving as a Poisson process in model time)"
        } else {
            "no faults"
        },
    );
    let _ = writeln!(
        out,
        "Every run is scheduled by the calibrated timing model (`checker/src/timing/`, \
         `[timing]` in docs/SCENARIOS.md): one-way latency {} µs, service {} µs per read and {} µs \
         per write (+{} µs commit delay), {} µs per watch notification, ±{} % jitter; the server \
         is one FIFO queue, so a herd's requests and notifications make everyone behind them \
         wait. Times are model milliseconds.\n",
        t.latency_us, t.read_us, t.write_us, t.commit_delay_us, t.notify_us, t.jitter_percent
    );
    out.push_str(
        "A *wakeup* is a node-watch event delivered to a client waiting for the lock; it belongs \
         to the release that deleted exactly the node the client was watching (the czxid it last \
         saw at that path; `recipes/src/wakeups.rs` has the exact rules). *Requests* are every \
         operation a client sent; *notifications* every watch notification the server sent. \
         *Latency* runs from `Requested` to `Acquired`; *total time* from the start to the last \
         `Released`; *server busy* is the share of the total time the server spent serving \
         requests and sending notifications.\n\n",
    );
    out.push_str(&crate::compare::table(rows));
    if crate::compare::any_cut(rows) {
        let _ = writeln!(
            out,
            "\n**{}** (marked × in the charts).",
            crate::compare::truncation_note(rows)
        );
    }
    if rows.iter().any(|r| r.real.is_some()) {
        out.push_str(
            "\n## Simulated vs real server\n\n\
             The same cells on Debian's ZooKeeper 3.8 (a private standalone server on loopback, \
             `zkreal::TestServer`), the clients driven by `zkreal::drive` on one tokio thread \
             exactly as the real-server example runs them (`cargo run --release -p zkreal \
             --example lock`), counted by the same code. Real times are wall-clock \
             milliseconds; the real server's busy time cannot be seen from its clients (—). \
             *gap* is (sim − real) / real. With holds of a tick or more every waiter has set \
             its watch before each release, and the discrete figures follow from the recipes \
             and the model's order of events; back to back (`--hold-ticks 0`) they depend on \
             timing, and the gaps measure how well the calibrated model predicts this \
             machine's server and client stack (see docs/CONFORMANCE.md).\n\n",
        );
        out.push_str(&crate::compare::real_table(rows));
    }
    out.push_str(
        "\n![wakeups per release](wakeups-per-release.svg)\n\n![latency](latency.svg)\n\n\
         ![total time](total-time.svg)\n\n\
         The predecessor-watch lock wakes exactly the next waiter on each release; the naive \
         lock wakes every client then watching the lock node, and only one of them can win: \
         N−1 at the first release when every other client is already watching (a hold of a \
         tick or more leaves them time to; with `--hold-ticks 0` releases can come before \
         the waiters' watches are set, and their wakeups are then `NodeCreated` events that \
         belong to no release). Every woken waiter sends a create and, losing, an `exists`: \
         the herd's requests and notifications queue at the one server, which is what the \
         time columns and the busy share show.\n\n\
         ## One schedule of each, 8 clients\n\n\
         Every release (the leader committing the lock node's delete, labelled with how many \
         waiters it woke), every wakeup it caused (a watch notification, numbered) and every \
         acquisition, in one seeded schedule of each recipe; everything else is left out. \
         [herd-n8.html](herd-n8.html) has the same pictures beside the charts.\n\n\
         ![naive vs sequential, one schedule each at 8 clients](herd-n8.svg)\n\n\
         Notes: the naive lock has no line to keep (a client is `Enqueued` only when its create \
         wins), so FIFO is vacuous for it and its FIFO column is 0 by definition. Wasted wakeups \
         are wakeups not followed by the woken client acquiring before any further wakeup. \
         `zkrecipes::figures::LockFigures` (the real-server example) counts wakeups, wasted \
         wakeups and requests with the same code (`zkrecipes::wakeups::WakeupLedger`).\n",
    );
    out
}

const COLORS: [RGBColor; 4] = [RED, BLUE, GREEN, MAGENTA];

/// One chart's two figures per row: a solid line and a dashed one.
struct Lines<'a> {
    solid: &'a str,
    dashed: &'a str,
}

/// Tick values for an integer axis from 0 to at least `max`: steps of 1,
/// 2, 5, 10, 20, 50, … so that there are at most 10 ticks.
fn integer_ticks(max: f64) -> Vec<f64> {
    let mut step = 1u64;
    let mut grow = [2u64, 5, 10].into_iter().cycle();
    let mut base = 1u64;
    while max / step as f64 > 10.0 {
        let m = grow.next().unwrap_or(10);
        step = base * m;
        if m == 10 {
            base *= 10;
        }
    }
    let top = (max / step as f64).ceil() as u64 * step;
    (0..=top / step).map(|i| (i * step) as f64).collect()
}

/// A line chart of `rows` against the client count on a log2 axis (the
/// counts are usually powers of two, and the naive lock's curve is then a
/// straight line), with integer ticks on both axes and a legend in the
/// empty upper left that says what solid and dashed lines are.
#[allow(clippy::too_many_arguments)]
fn chart(
    path: &Path,
    title: &str,
    y_label: &str,
    rows: &[Row],
    recipes: &[String],
    lines: Lines,
    solid: impl Fn(&Row) -> f64,
    dashed: impl Fn(&Row) -> f64,
) -> Result<(), ReportError> {
    let err = |e: &dyn std::fmt::Display| ReportError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let log2 = |clients: usize| (clients.max(1) as f64).log2();
    let mut counts: Vec<usize> = rows.iter().map(|r| r.clients).collect();
    counts.sort_unstable();
    // Whole powers of two, one to spare on each side so that no point sits
    // on the frame.
    let x_min = counts.first().map_or(0.0, |&c| log2(c).floor()) - 1.0;
    let x_max = counts.last().map_or(1.0, |&c| log2(c).ceil()) + 1.0;
    let data_max = rows
        .iter()
        .map(|r| solid(r).max(dashed(r)))
        .fold(1.0, f64::max);
    // Headroom above the data for the legend.
    let y_ticks = integer_ticks(data_max * 1.6);
    let y_max = y_ticks.last().copied().unwrap_or(1.0);
    let y_step = y_ticks.get(1).copied().unwrap_or(1.0);
    let root = SVGBackend::new(path, (720, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(
            (x_min.max(0.0)..x_max).step(1.0),
            (0f64..y_max).step(y_step),
        )
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("clients (log2 scale)")
        .y_desc(y_label)
        .x_label_formatter(&|x| format!("{}", 2f64.powf(*x).round()))
        .y_label_formatter(&|y| format!("{}", y.round()))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, recipe) in recipes.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.recipe == recipe).collect();
        let points: Vec<(f64, f64)> = mine.iter().map(|r| (log2(r.clients), solid(r))).collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(recipe.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
        let means: Vec<(f64, f64)> = mine.iter().map(|r| (log2(r.clients), dashed(r))).collect();
        chart
            .draw_series(DashedLineSeries::new(means, 6, 4, color.stroke_width(1)))
            .map_err(|e| err(&e))?;
        // A cell with runs cut short: its point describes unfinished runs.
        let cut = mine.iter().filter(|r| r.cut_runs > 0);
        chart
            .draw_series(
                cut.map(|r| Cross::new((log2(r.clients), solid(r)), 8, BLACK.stroke_width(2))),
            )
            .map_err(|e| err(&e))?;
    }
    if crate::compare::any_cut(rows) {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(|e| err(&e))?
            .label("× runs cut at max_steps (unfinished)")
            .legend(|(x, y)| Cross::new((x + 10, y), 6, BLACK.stroke_width(2)));
    }
    // Two legend entries that draw nothing on the chart: what the line styles mean.
    for (label, dashes) in [(lines.solid, false), (lines.dashed, true)] {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(|e| err(&e))?
            .label(label)
            .legend(
                move |(x, y)| -> DynElement<'static, SVGBackend, (i32, i32)> {
                    if dashes {
                        DashedPathElement::new(
                            vec![(x, y), (x + 20, y)],
                            6,
                            4,
                            BLACK.stroke_width(1),
                        )
                        .into_dyn()
                    } else {
                        PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2))
                            .into_dyn()
                    }
                },
            );
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::Tally;

    #[test]
    fn integer_ticks_are_whole_and_few() {
        assert_eq!(integer_ticks(3.2), [0.0, 1.0, 2.0, 3.0, 4.0]);
        let t = integer_ticks(95.0);
        assert!(t.len() <= 11 && *t.last().unwrap() >= 95.0, "{t:?}");
        assert!(t.iter().all(|v| v.fract() == 0.0));
    }

    #[test]
    fn a_report_path_that_cannot_be_a_directory_is_a_typed_error() {
        let base = std::env::temp_dir().join(format!("zkcheck-report-err-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let file = base.join("a-file");
        std::fs::write(&file, "x").unwrap();
        let err = check_dir(&file).unwrap_err();
        assert!(
            matches!(&err, ReportError::NotADirectory(p) if p == &file),
            "{err:?}"
        );
        assert!(err.to_string().contains("is not a directory"), "{err}");
        let under = file.join("sub");
        let err = write_compare(&under, &CompareConfig::default(), &[]).unwrap_err();
        assert!(
            matches!(&err, ReportError::CreateDir { path, .. } if path == &under),
            "{err:?}"
        );
        assert!(std::error::Error::source(&err).is_some());
        let dir = base.join("fresh");
        check_dir(&dir).unwrap();
        assert!(dir.is_dir());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn the_report_has_its_table_and_both_charts() {
        let config = CompareConfig {
            clients: vec![2, 4],
            seeds: 1,
            ..CompareConfig::default()
        };
        let rows: Vec<Row> = ["naive", "sequential"]
            .iter()
            .flat_map(|r| {
                [2usize, 4].map(|n| {
                    let mut figures = Tally {
                        runs: 1,
                        acquisitions: n as u64,
                        ..Tally::default()
                    };
                    figures.wakeups_per_release.record(if *r == "naive" {
                        n as u64 - 1
                    } else {
                        1
                    });
                    figures.latency.record(3);
                    let mut time = crate::timing::TimeFigures {
                        runs: 1,
                        total_us: 3000 * n as u64,
                        busy_us: Some(1000 * n as u64),
                        ..Default::default()
                    };
                    time.latency_us.record(1500);
                    Row {
                        recipe: r.to_string(),
                        clients: n,
                        figures,
                        time,
                        real: None,
                        cut_runs: 0,
                    }
                })
            })
            .collect();
        let dir = std::env::temp_dir().join(format!("zkcheck-report-{}", std::process::id()));
        let written = write_compare(&dir, &config, &rows).unwrap();
        assert_eq!(written.len(), 6);
        let md = std::fs::read_to_string(dir.join("compare.md")).unwrap();
        assert!(md.contains("| naive | 4 | 1 | 4 |"), "{md}");
        assert!(md.contains("--clients 2,4 --faults none --seeds 1"), "{md}");
        let herd = std::fs::read_to_string(dir.join("herd-n8.svg")).unwrap();
        assert!(
            herd.contains("naive, 8 clients") && herd.contains("woke"),
            "herd picture"
        );
        let page = std::fs::read_to_string(dir.join("herd-n8.html")).unwrap();
        assert!(
            page.contains("<polyline"),
            "the herd page carries the charts"
        );
        assert!(md.contains("![naive vs sequential"), "{md}");
        for chart in ["wakeups-per-release.svg", "latency.svg", "total-time.svg"] {
            let svg = std::fs::read_to_string(dir.join(chart)).unwrap();
            assert!(svg.starts_with("<svg"), "{chart}");
            assert!(
                svg.contains("naive") && svg.contains("sequential"),
                "{chart} has a legend"
            );
            assert!(svg.contains("<polyline"), "{chart} has lines");
            assert!(svg.contains("dashed: "), "{chart} says what dashes mean");
            assert!(svg.contains("log2"), "{chart} has a log2 client axis");
            assert!(
                !svg.contains(">2.5<") && !svg.contains(".5<"),
                "{chart}: integer ticks only"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
