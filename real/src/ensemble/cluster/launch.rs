//! Starting the three servers: ports, link proxies, per-server configs.

use std::fs::{self, File};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{
    Ensemble, Member, ENSEMBLE_MAX_TIMEOUT_TICKS, ENSEMBLE_TICK_MS, INIT_LIMIT, MEMBERS,
    START_TIMEOUT,
};
use crate::server::{free_port, log_tail, private_dir};
use crate::{FaultProxy, Unavailable, MIN_SESSION_TIMEOUT};

pub(super) fn launch(
    java: &Path,
    classpath: &str,
    sync_limit: u64,
) -> Result<Ensemble, Unavailable> {
    let failed = |reason: String| Unavailable::Failed {
        reason,
        log_tail: String::new(),
    };
    let mut ports = Vec::new();
    for _ in 0..3 * MEMBERS {
        ports.push(free_port().map_err(|e| failed(format!("finding a free port: {e}")))?);
    }
    let mut links: Vec<Vec<Option<FaultProxy>>> = Vec::new();
    for i in 0..MEMBERS {
        let mut row = Vec::new();
        for j in 0..MEMBERS {
            if i == j {
                row.push(None);
                continue;
            }
            let quorum = SocketAddr::from((Ipv4Addr::LOCALHOST, ports[3 * j + 1]));
            let proxy = FaultProxy::start_quorum(quorum)
                .map_err(|e| failed(format!("starting the link proxy {i}→{j}: {e}")))?;
            row.push(Some(proxy));
        }
        links.push(row);
    }
    let started = Instant::now();
    let mut ensemble = Ensemble {
        members: Vec::new(),
        links,
        startup: Duration::ZERO,
        sync_limit,
    };
    for i in 0..MEMBERS {
        let dir = private_dir().map_err(|e| failed(format!("creating a data directory: {e}")))?;
        let member = spawn_member(java, classpath, i, &ports, &ensemble, dir)?;
        ensemble.members.push(member);
    }
    let deadline = started + START_TIMEOUT;
    loop {
        for (i, member) in ensemble.members.iter_mut().enumerate() {
            if let Ok(Some(status)) = member.child.try_wait() {
                return Err(Unavailable::Failed {
                    reason: format!("server {i} exited with {status}"),
                    log_tail: log_tail(&member.dir),
                });
            }
        }
        if ensemble.roles().is_some() {
            ensemble.startup = started.elapsed();
            return Ok(ensemble);
        }
        if Instant::now() > deadline {
            let tails: Vec<String> = (0..MEMBERS)
                .map(|i| format!("--- server {i} ---\n{}", ensemble.log_tail(i)))
                .collect();
            return Err(Unavailable::Failed {
                reason: format!("no leader and two followers after {START_TIMEOUT:?}"),
                log_tail: tails.join("\n"),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn_member(
    java: &Path,
    classpath: &str,
    i: usize,
    ports: &[u16],
    ensemble: &Ensemble,
    dir: PathBuf,
) -> Result<Member, Unavailable> {
    let failed = |reason: String| Unavailable::Failed {
        reason,
        log_tail: String::new(),
    };
    let data = dir.join("data");
    fs::create_dir_all(&data).map_err(|e| failed(format!("creating {}: {e}", data.display())))?;
    fs::write(data.join("myid"), format!("{}\n", i + 1))
        .map_err(|e| failed(format!("writing myid: {e}")))?;
    let quorum_port = |j: usize| {
        ensemble.links[i][j]
            .as_ref()
            .map_or(ports[3 * j + 1], FaultProxy::port)
    };
    let servers: Vec<(usize, u16, u16)> = (0..MEMBERS)
        .map(|j| (j + 1, quorum_port(j), ports[3 * j + 2]))
        .collect();
    let cfg = dir.join("zoo.cfg");
    fs::write(
        &cfg,
        config_text(ports[3 * i], &data, &servers, ensemble.sync_limit),
    )
    .map_err(|e| failed(format!("writing {}: {e}", cfg.display())))?;
    let log = File::create(dir.join("server.log")).map_err(|e| failed(format!("log file: {e}")))?;
    let log_err = log
        .try_clone()
        .map_err(|e| failed(format!("log file: {e}")))?;
    let child = Command::new(java)
        .args([
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.net.preferIPv4Stack=true",
        ])
        .arg("-cp")
        .arg(classpath)
        .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
        .arg(&cfg)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| failed(format!("spawning {}: {e}", java.display())))?;
    Ok(Member {
        child,
        client_port: ports[3 * i],
        dir,
    })
}

/// One server's `zoo.cfg`: `servers` lists `(myid, quorum port, election
/// port)` as this server sees them (the others' quorum ports are its links).
fn config_text(
    client_port: u16,
    data_dir: &Path,
    servers: &[(usize, u16, u16)],
    sync_limit: u64,
) -> String {
    let mut text = format!(
        "tickTime={ENSEMBLE_TICK_MS}\n\
         initLimit={INIT_LIMIT}\n\
         syncLimit={sync_limit}\n\
         dataDir={}\n\
         clientPort={client_port}\n\
         clientPortAddress=127.0.0.1\n\
         admin.enableServer=false\n\
         4lw.commands.whitelist=*\n\
         minSessionTimeout={}\n\
         maxSessionTimeout={}\n\
         maxClientCnxns=0\n\
         preAllocSize=1024\n\
         forceSync=no\n\
         reconfigEnabled=false\n",
        data_dir.display(),
        MIN_SESSION_TIMEOUT.as_millis(),
        ENSEMBLE_MAX_TIMEOUT_TICKS * ENSEMBLE_TICK_MS,
    );
    for (id, quorum, election) in servers {
        text.push_str(&format!("server.{id}=127.0.0.1:{quorum}:{election}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_config_names_its_own_quorum_port_and_the_others_links() {
        let text = config_text(
            2181,
            Path::new("/tmp/d"),
            &[(1, 1001, 2001), (2, 1002, 2002), (3, 1003, 2003)],
            7,
        );
        assert!(text.contains("server.2=127.0.0.1:1002:2002\n"), "{text}");
        assert!(text.contains("syncLimit=7\n"));
        assert!(text.contains("maxSessionTimeout=2000\n"));
        assert!(text.contains("clientPortAddress=127.0.0.1\n"));
        assert!(text.contains("reconfigEnabled=false\n"));
    }
}
