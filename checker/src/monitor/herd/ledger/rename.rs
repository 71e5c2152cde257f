//! The ledger under a renaming of clients, for the model checker's
//! symmetry reduction.

use zksim::ClientId;

use super::{Charge, Read, Wait, WakeupLedger, Write};

impl WakeupLedger {
    /// This ledger under a renaming of clients (symmetry reduction): client
    /// ids and the names in paths renamed, each listing sorted again (it
    /// is kept sorted to be searched). Nothing here reads the order of
    /// client ids: writes are kept in time order and searched in it.
    pub fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        let read = |read: &Read| match read {
            Read::Node {
                path,
                watches_creation,
            } => Read::Node {
                path: r.text(path),
                watches_creation: *watches_creation,
            },
            Read::Children(path) => Read::Children(r.text(path)),
            Read::Delete(path) => Read::Delete(r.text(path)),
        };
        let key = |(c, path): &(ClientId, String)| (r.client(*c), r.text(path));
        let write = |w: &Write| Write {
            kind: w.kind,
            client: r.client(w.client),
            node: w.node.as_deref().map(|n| r.text(n)),
            czxid: w.czxid,
            woken: w.woken.iter().map(|&(c, w)| (r.client(c), w)).collect(),
            wasted: w.wasted,
        };
        let charge = |charge: &Charge| match charge {
            Charge::Awaiting(path) => Charge::Awaiting(r.text(path)),
            other => other.clone(),
        };
        WakeupLedger {
            waiting: self
                .waiting
                .iter()
                .map(|(&c, wait)| {
                    let wait = Wait {
                        shared: wait.shared,
                        pending: wait.pending.as_ref().map(charge),
                    };
                    (r.client(c), wait)
                })
                .collect(),
            reads: self
                .reads
                .iter()
                .map(|(&(c, op), rd)| ((r.client(c), op), read(rd)))
                .collect(),
            seen: self.seen.iter().map(|(k, &z)| (key(k), z)).collect(),
            absent: self.absent.iter().map(|(k, &z)| (key(k), z)).collect(),
            awaiting: self
                .awaiting
                .iter()
                .map(|(k, a)| (key(k), a.clone()))
                .collect(),
            listed: self
                .listed
                .iter()
                .map(|(k, names)| {
                    let mut names: Vec<String> = names.iter().map(|n| r.text(n)).collect();
                    names.sort();
                    (key(k), names)
                })
                .collect(),
            last_delete: self
                .last_delete
                .iter()
                .map(|(&c, path)| (r.client(c), r.text(path)))
                .collect(),
            releases: self.releases.iter().map(write).collect(),
            creates: self.creates.iter().map(write).collect(),
            tally: self.tally.clone(),
        }
    }
}
