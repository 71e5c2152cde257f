//! A quick load figure: N `zookeeper-client` sessions, each looping
//! create / getData / setData / getChildren (with a watch) / delete on its
//! own node for a few seconds, against zkserve (in process) and, with
//! `--real`, against a real 3.8 server (`zkreal::TestServer`) on the same
//! machine. Prints ops/s and latency percentiles per target.
//!
//! ```sh
//! cargo run --release -p zkserve --example load -- --conns 1,16,256 --secs 3 --real
//! ```

use std::time::{Duration, Instant};

use zkserve::driver::{start, Options};
use zkserve::Limits;
use zookeeper_client as zk;

struct Args {
    conns: Vec<usize>,
    secs: u64,
    real: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        conns: vec![1, 16],
        secs: 3,
        real: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--conns" => {
                let v = it.next().ok_or("--conns needs a list")?;
                a.conns = v
                    .split(',')
                    .map(|n| n.parse().map_err(|e| format!("--conns {n}: {e}")))
                    .collect::<Result<_, _>>()?;
            }
            "--secs" => {
                let v = it.next().ok_or("--secs needs a number")?;
                a.secs = v.parse().map_err(|e| format!("--secs {v}: {e}"))?;
            }
            "--real" => a.real = true,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

async fn session(cs: &str) -> zk::Client {
    zk::Client::connector()
        .with_session_timeout(Duration::from_secs(20))
        .connect(cs)
        .await
        .expect("connect")
}

/// Runs `conns` sessions for `secs`; returns (ops, latencies in µs).
async fn load(cs: &str, conns: usize, secs: u64, tag: &str) -> (u64, Vec<u64>) {
    let setup = session(cs).await;
    let root = format!("/load-{tag}-{conns}");
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let _ = setup.create(&root, b"", &persistent).await;
    let mut tasks = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(secs);
    for i in 0..conns {
        let client = session(cs).await;
        let path = format!("{root}/n{i}");
        tasks.push(tokio::spawn(async move {
            let options = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
            let mut lat = Vec::new();
            let time = |t: Instant, lat: &mut Vec<u64>| lat.push(t.elapsed().as_micros() as u64);
            while Instant::now() < deadline {
                let t = Instant::now();
                client.create(&path, b"x", &options).await.expect("create");
                time(t, &mut lat);
                let t = Instant::now();
                client.get_data(&path).await.expect("get");
                time(t, &mut lat);
                let t = Instant::now();
                client.set_data(&path, b"y", None).await.expect("set");
                time(t, &mut lat);
                let t = Instant::now();
                let (_, _w) = client
                    .get_and_watch_children(&path)
                    .await
                    .map(|(c, _, w)| (c, w))
                    .expect("children");
                time(t, &mut lat);
                let t = Instant::now();
                client.delete(&path, None).await.expect("delete");
                time(t, &mut lat);
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("task"));
    }
    (all.len() as u64, all)
}

fn report(target: &str, conns: usize, secs: u64, (ops, mut lat): (u64, Vec<u64>)) {
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "{target:>7}  conns {conns:>4}  {:>9.0} ops/s  p50 {:>6} µs  p99 {:>7} µs",
        ops as f64 / secs as f64,
        pct(0.50),
        pct(0.99)
    );
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("load: {e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let real = if args.real {
        match zkreal::TestServer::start() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("load: no real server: {e}");
                None
            }
        }
    } else {
        None
    };
    // The server on a thread of its own, as a real server has its own
    // process: the clients' runtime does not share its thread.
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server_thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let serve = start(Options {
                limits: Limits::default(),
                bind: [127, 0, 0, 1].into(),
                port: 0,
                verbose: false,
            })
            .await
            .expect("serve");
            tx.send(serve.connect_string()).expect("send");
            let _ = stop_rx.await;
            serve.stop().await;
        });
    });
    let serve_cs = rx.recv().expect("serve started");
    rt.block_on(async {
        for &n in &args.conns {
            report(
                "serve",
                n,
                args.secs,
                load(&serve_cs, n, args.secs, "s").await,
            );
            if let Some(real) = &real {
                let cs = real.connect_string();
                report("real", n, args.secs, load(&cs, n, args.secs, "r").await);
            }
        }
    });
    let _ = stop_tx.send(());
    let _ = server_thread.join();
}
