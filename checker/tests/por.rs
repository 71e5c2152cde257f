//! scratch
use zkcheck::explore::exhaustive::Exhaustive;
use zkcheck::explore::{Exploration, Strategy};
use zkcheck::progress::Progress;
use zkcheck::scenario::Scenario;

fn run(s: &Scenario, dfs: bool, sym: bool, por: bool, exact: bool) -> Exploration {
    let mut e = if dfs { Exhaustive::dfs(200) } else { Exhaustive::bfs(200) }
        .with_symmetry(sym)
        .with_por(por);
    e.exact_symmetry = exact;
    e.explore(s, &Progress::hidden())
}

#[test]
fn scratch() {
    let text = std::fs::read_to_string("../scenarios/lock-sequential-small.toml").unwrap();
    let s = Scenario::parse(&text, "x").unwrap();
    for dfs in [false, true] {
        for exact in [false, true] {
            for por in [false, true] {
                let r = run(&s, dfs, true, por, exact);
                eprintln!("dfs {dfs} exact {exact} por {por}: {:?} {} {}", r.distinct_states, r.events, r.schedules);
            }
        }
    }
}
