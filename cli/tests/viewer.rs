//! The counterexample viewer in a real browser: headless Chromium (Debian's
//! `chromium` package) loads generated pages, runs their script, and the
//! tests read the DOM it leaves (`--dump-dom`) and take screenshots.
//!
//! Without Chromium installed the browser tests print `SKIPPED` and pass;
//! under `CI=true` that is a failure (`.ci/run` installs it). The path can be
//! forced with `ZKCHECK_CHROMIUM`. Screenshots go to
//! `target/tmp/viewer-screenshots/` for a person to look at.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use zkcheck::explore::random::run_random;
use zkcheck::explore::replay::replay;
use zkcheck::scenario::{property_name, Scenario};
use zkcheck::state::SystemState;
use zkcheck::token::Token;
use zkcheck_cli::viewer;

// ---- finding and running the browser ----

/// The Chromium binary, like `zkreal::require_server` finds the
/// ZooKeeper server: `None` after saying so loudly, a panic under CI.
fn require_chromium() -> Option<PathBuf> {
    let found = std::env::var_os("ZKCHECK_CHROMIUM")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .flat_map(|dir| {
                    ["chromium", "chromium-browser", "google-chrome"].map(|n| dir.join(n))
                })
                .find(|p| p.is_file())
        });
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    match found {
        Some(p) => Some(p),
        None if ci => panic!(
            "CI=true and no Chromium found (install Debian package `chromium` or set ZKCHECK_CHROMIUM)"
        ),
        None => {
            let test = std::thread::current()
                .name()
                .unwrap_or("<unnamed test>")
                .to_string();
            eprintln!(
                "SKIPPED: {test} — no Chromium found (install Debian package `chromium` \
                 or set ZKCHECK_CHROMIUM)"
            );
            None
        }
    }
}

fn work_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run headless Chromium once with a fresh profile; returns stdout.
fn chromium(bin: &Path, args: &[String]) -> String {
    let profile = work_dir("viewer-chromium-profiles").join(format!(
        "p{}-{}",
        std::process::id(),
        PROFILE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).unwrap();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&profile);
    reader.join().unwrap()
}

static PROFILE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn url(path: &Path, fragment: &str) -> String {
    format!(
        "file://{}{fragment}",
        path.canonicalize().unwrap().display()
    )
}

fn dump_dom(bin: &Path, page: &Path, fragment: &str) -> String {
    chromium(bin, &["--dump-dom".to_string(), url(page, fragment)])
}

fn screenshot(bin: &Path, page: &Path, fragment: &str, png: &Path) {
    let _ = std::fs::remove_file(png);
    chromium(
        bin,
        &[
            "--window-size=1600,1000".to_string(),
            format!("--screenshot={}", png.display()),
            url(page, fragment),
        ],
    );
    let bytes = std::fs::read(png).expect("chromium wrote the screenshot");
    assert!(bytes.starts_with(b"\x89PNG"), "{} is a PNG", png.display());
    assert!(bytes.len() > 20_000, "{} is not blank", png.display());
}

/// The text between `<tag id="id"` and its closing tag (no nesting of the same tag assumed).
fn element<'a>(dom: &'a str, tag: &str, id: &str) -> &'a str {
    let open = format!("<{tag} id=\"{id}\"");
    let start = dom
        .find(&open)
        .unwrap_or_else(|| panic!("no {open} in the DOM"));
    let rest = &dom[start..];
    let end = rest.find(&format!("</{tag}>")).unwrap_or(rest.len());
    &rest[..end]
}

/// The page's script ran to the end and reported no error.
fn assert_script_ok(dom: &str, what: &str) {
    let errors = element(dom, "div", "errors");
    assert_eq!(
        errors, "<div id=\"errors\">",
        "{what}: the page reported JavaScript errors"
    );
    assert!(
        dom.contains("<div id=\"status\">ok</div>"),
        "{what}: the page's script did not finish"
    );
}

// ---- the pages under test ----

/// Every replay token in docs/VERDICTS.md, read at test time (the seeds'
/// helper may re-run them), with the doc's order.
fn verdict_tokens() -> Vec<Token> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/VERDICTS.md"))
            .expect("docs/VERDICTS.md");
    let mut tokens: Vec<String> = Vec::new();
    for (i, _) in doc.match_indices("zk1:") {
        let token: String = doc[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "-_:".contains(*c))
            .collect();
        if !tokens.contains(&token) {
            tokens.push(token);
        }
    }
    tokens
        .iter()
        .map(|t| Token::decode(t).unwrap_or_else(|e| panic!("VERDICTS token {t}: {e}")))
        .collect()
}

fn write_page(token: &Token, dir: &Path, name: &str) -> PathBuf {
    let page = viewer::html_for_token(token).unwrap();
    assert!(
        page.len() < 400_000,
        "{name}: the page is {} bytes (a few hundred KB at most)",
        page.len()
    );
    assert_eq!(
        page.matches("http://").count(),
        page.matches("http://www.w3.org/2000/svg").count(),
        "{name}: only the SVG namespace names a URL"
    );
    for forbidden in ["https://", "<link", "src=\"http", "@import"] {
        assert!(
            !page.contains(forbidden),
            "{name}: the page loads nothing ({forbidden})"
        );
    }
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, page).unwrap();
    path
}

/// A replay of `token`'s first `steps` choices: the world the panel must show.
fn world_after(token: &Token, steps: usize) -> SystemState {
    let mut model = SystemState::new(&token.scenario);
    let mut enabled = Vec::new();
    let mut log = Vec::new();
    for &i in &token.indices[..steps] {
        enabled.clear();
        model.enabled(&mut enabled);
        let event = enabled[i as usize].clone();
        let _ = model.step(&event, &mut log);
    }
    model
}

fn recipe_paths(model: &SystemState) -> Vec<String> {
    model
        .world
        .leader_tree()
        .nodes()
        .map(|(p, _)| p.to_string())
        .filter(|p| p != "/" && p != "/zookeeper" && !p.starts_with("/zookeeper/"))
        .collect()
}

// ---- tests ----

/// Every counterexample of docs/VERDICTS.md renders in a real browser with
/// no script error, one lane per client and server, the violation marked
/// and selected, and the violation the page names is the one the replay finds.
#[test]
fn every_verdicts_counterexample_renders_in_a_browser() {
    let tokens = verdict_tokens();
    assert!(
        tokens.len() >= 5,
        "VERDICTS.md lists its counterexamples' tokens"
    );
    let Some(bin) = require_chromium() else {
        return;
    };
    let dir = work_dir("viewer-verdicts");
    for (n, token) in tokens.iter().enumerate() {
        let s = &token.scenario;
        let name = format!("{n:02}-{}", s.name);
        let replayed = replay(s, &token.indices).unwrap();
        let violation = replayed
            .run
            .violation
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: a VERDICTS token replays a violation"));
        let page = write_page(token, &dir, &name);
        let dom = dump_dom(&bin, &page, "");
        assert_script_ok(&dom, &name);
        let clients = dom.matches("class=\"lane client\"").count();
        let servers = dom.matches("class=\"lane server\"").count();
        assert_eq!(
            (clients, servers),
            (s.clients, s.ensemble.servers),
            "{name}: one lane per client and per server"
        );
        assert!(dom.contains("★ leader"), "{name}: the leader is marked");
        assert!(
            dom.contains("class=\"arrow request\"") && dom.contains("class=\"arrow reply\""),
            "{name}: requests and replies are drawn"
        );
        let marker = element(&dom, "g", "violation");
        assert!(
            dom.contains(&format!("VIOLATION {}", property_name(violation.property))),
            "{name}: the diagram names the broken property"
        );
        // The page opens on the violating step, and says so.
        let step = marker
            .split("data-step=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap();
        assert!(
            dom.contains(&format!("<div id=\"state\" data-step=\"{step}\"")),
            "{name}: the state panel shows the violating step {step}"
        );
        assert!(dom.contains("— the violation</span>"), "{name}");
        assert!(
            element(&dom, "div", "state-clients").contains("<td>c0</td>"),
            "{name}: the panel lists the clients"
        );
    }
}

/// `#step=K` selects step K: the panel's znodes are the leader's after K
/// steps, computed here by an independent replay — and a node that exists
/// only later is absent.
#[test]
fn the_address_selects_a_step_and_the_panel_shows_the_world_after_it() {
    let tokens = verdict_tokens();
    let token = tokens
        .iter()
        .find(|t| t.scenario.recipe == "seed003-apache-writelock" && t.scenario.clients == 2)
        .unwrap_or(&tokens[0]);
    let Some(bin) = require_chromium() else {
        return;
    };
    let dir = work_dir("viewer-select");
    let page = write_page(token, &dir, "select");
    let end = world_after(token, token.indices.len());
    let final_nodes = recipe_paths(&end);
    // The last step at which some node of the final world did not exist yet.
    let k = (1..token.indices.len())
        .rev()
        .find(|&k| recipe_paths(&world_after(token, k)).len() < final_nodes.len())
        .expect("the run creates nodes");
    let step = k - 1; // the trace's 0-based step number of the k-th choice
    let at_k = recipe_paths(&world_after(token, k));
    let dom = dump_dom(&bin, &page, &format!("#step={step}"));
    assert_script_ok(&dom, "select");
    assert!(
        dom.contains(&format!("<div id=\"state\" data-step=\"{k}\"")),
        "the panel shows snapshot {k}"
    );
    assert!(dom.contains(&format!("<span id=\"where\">step {step} of")));
    let nodes = element(&dom, "div", "state-nodes");
    for p in &at_k {
        assert!(
            nodes.contains(&format!("data-name=\"{p}\"")),
            "{p} at step {step}"
        );
    }
    for p in final_nodes.iter().filter(|p| !at_k.contains(p)) {
        assert!(
            !nodes.contains(&format!("data-name=\"{p}\"")),
            "{p} only exists later"
        );
    }
    // The selected row is highlighted.
    assert!(dom.contains("class=\"row sel\""), "a row is selected");
    let sel = dom.split("class=\"row sel\"").nth(1).unwrap();
    let first: usize = attr(sel, "data-first");
    let last: usize = attr(sel, "data-last");
    assert!(
        first <= k && k <= last,
        "the selected row holds step {step}"
    );

    screenshot(
        &bin,
        &page,
        &format!("#step={step}"),
        &work_dir("viewer-screenshots").join("select.png"),
    );
}

fn attr(s: &str, name: &str) -> usize {
    s.split(&format!("{name}=\""))
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The other direction: a run that breaks nothing has no violation marker
/// and says so; its page still renders every lane.
#[test]
fn a_correct_run_renders_without_a_violation() {
    let mut s = Scenario::lock("sequential", 3);
    s.name = "sequential-ok".into();
    let outcome = run_random(&s, 7);
    assert!(outcome.violation.is_none(), "the reference lock passes");
    let token = Token::new(s.clone(), outcome.schedule.to_indices(&s).unwrap());
    let Some(bin) = require_chromium() else {
        return;
    };
    let dir = work_dir("viewer-ok");
    let page = write_page(&token, &dir, "ok");
    let dom = dump_dom(&bin, &page, "");
    assert_script_ok(&dom, "ok");
    assert!(!dom.contains("id=\"violation\""), "no violation marker");
    assert!(dom.contains("No hard check failed"));
    assert_eq!(dom.matches("class=\"lane client\"").count(), 3);
    assert!(
        dom.contains("<div id=\"state\" data-step=\"0\""),
        "opens at the start"
    );
    assert!(
        dom.contains("class=\"band holding\""),
        "holding bands are drawn"
    );
}

/// The screenshots a person looks at: a counterexample with followers and
/// faults, opened on its violation, and the herd comparison page.
#[test]
fn screenshots_of_a_counterexample_and_the_herd_page() {
    let tokens = verdict_tokens();
    let token = tokens
        .iter()
        .find(|t| t.scenario.ensemble.servers > 1)
        .unwrap_or(&tokens[0]);
    let Some(bin) = require_chromium() else {
        return;
    };
    let shots = work_dir("viewer-screenshots");
    let page = write_page(token, &work_dir("viewer-shots"), "counterexample");
    screenshot(&bin, &page, "", &shots.join("counterexample.png"));

    let dir = work_dir("viewer-herd");
    let written = viewer::herd::write_herd(&dir, 8, 0, &[]).unwrap();
    let html = written
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "html"))
        .unwrap();
    let dom = dump_dom(&bin, html, "");
    assert_eq!(
        dom.matches("class=\"timeline\"").count(),
        2,
        "two diagrams side by side"
    );
    assert!(dom.contains("naive, 8 clients") && dom.contains("sequential, 8 clients"));
    assert!(
        dom.contains("woke 1 waiter") && dom.contains("waiters"),
        "releases are labelled"
    );
    screenshot(&bin, html, "", &shots.join("herd.png"));
}

/// The SVG files written for Markdown are well-formed XML: the browser
/// parses them as images without a parser error.
#[test]
fn the_cli_writes_a_viewer_and_a_report_whose_svg_parses() {
    let tokens = verdict_tokens();
    let token = &tokens[0];
    let dir = work_dir("viewer-cli");
    let html = dir.join("replay.html");
    let _ = std::fs::remove_file(&html);
    let out = Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args(["replay", &token.encode(), "--html"])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a violation still exits 1");
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("id=\"zk-data\""));

    let report = dir.join("report");
    let _ = std::fs::remove_dir_all(&report);
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/seeds/apache-writelock-nofaults.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .arg("check")
        .arg(&scenario)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stem = "apache-writelock-nofaults-mutex";
    let md = std::fs::read_to_string(report.join(format!("{stem}.md"))).unwrap();
    assert!(
        md.contains(&format!("![sequence diagram]({stem}.svg)")),
        "{md}"
    );
    assert!(md.contains("**VIOLATION of mutex**"), "{md}");
    assert!(md.contains("zkcheck replay zk1:"), "{md}");
    let svg = report.join(format!("{stem}.svg"));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));

    // A path that cannot be written is bad input (exit 2), not a violation.
    let out = Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args([
            "replay",
            &token.encode(),
            "--html",
            "/nonexistent-dir/x.html",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let Some(bin) = require_chromium() else {
        return;
    };
    let dom = dump_dom(&bin, &svg, "");
    assert!(
        !dom.contains("parsererror"),
        "the SVG is well-formed: {}",
        &dom[..dom.len().min(600)]
    );
    assert!(dom.contains("class=\"timeline\""));
    let dom = dump_dom(&bin, &report.join(format!("{stem}.html")), "");
    assert_script_ok(&dom, "check --report");
}
