//! Which write fired a wakeup: the searches behind the attribution rules
//! of the ledger's module docs.

use zksim::{ClientId, Zxid};

use super::{Charge, WakeupLedger, Write, WriteId, WriteKind};
use crate::monitor::view::parent_of;

impl WakeupLedger {
    /// A create became known: record it, and charge it with the
    /// `NodeCreated` wakeups of its path that waited for it.
    pub(super) fn created(&mut self, client: ClientId, path: &str, czxid: Zxid) -> Option<WriteId> {
        let id = WriteId {
            kind: WriteKind::Create,
            index: self.creates.len(),
        };
        let mut write = Write {
            kind: WriteKind::Create,
            client,
            node: Some(path.to_string()),
            czxid: Some(czxid),
            woken: Vec::new(),
            wasted: 0,
        };
        let fired: Vec<(ClientId, String)> = self
            .awaiting
            .iter()
            .filter(|((_, p), a)| p == path && a.above < czxid)
            .map(|(k, _)| k.clone())
            .collect();
        for key in &fired {
            let Some(a) = self.awaiting.remove(key) else {
                continue;
            };
            write.woken.push((key.0, a.writer));
            write.wasted += u32::from(a.wasted);
            if let Some(wait) = self.waiting.get_mut(&key.0) {
                if wait.pending == Some(Charge::Awaiting(key.1.clone())) {
                    wait.pending = Some(Charge::To(id));
                }
            }
        }
        self.creates.push(write);
        (!fired.is_empty()).then_some(id)
    }

    /// The newest czxid of a node of `path` known to be gone: released,
    /// with the releaser knowing which node it freed.
    pub(super) fn gone_before(&self, path: &str) -> Zxid {
        self.releases
            .iter()
            .filter(|r| r.node.as_deref() == Some(path))
            .filter_map(|r| r.czxid)
            .max()
            .unwrap_or(0)
    }

    /// The create of `path` a `NodeCreated` to `client` was fired by: the
    /// known one with the smallest czxid above `above`, or, if none is
    /// known yet, the next one whose reply arrives.
    pub(super) fn creator_of(&self, path: &str, above: Zxid) -> Charge {
        self.creates
            .iter()
            .enumerate()
            .filter(|(_, w)| w.node.as_deref() == Some(path))
            .filter_map(|(i, w)| Some((w.czxid?, i)))
            .filter(|&(czxid, _)| czxid > above)
            .min()
            .map_or(Charge::Awaiting(path.to_string()), |(_, index)| {
                Charge::To(WriteId {
                    kind: WriteKind::Create,
                    index,
                })
            })
    }

    /// The release that deleted the node `client` saw at `path`.
    pub(super) fn deleter_of(
        &self,
        client: ClientId,
        path: &str,
        seen: Option<Zxid>,
    ) -> Option<usize> {
        let on_path = |r: &Write| r.node.as_deref() == Some(path);
        if let Some(czxid) = seen {
            if let Some(i) = self
                .releases
                .iter()
                .position(|r| on_path(r) && r.czxid == Some(czxid))
            {
                return Some(i);
            }
        }
        // The releaser never saw its node's czxid: only an unambiguous path
        // match among such releases not yet charged to this client.
        let mut unknown = self.releases.iter().enumerate().filter(|(_, r)| {
            on_path(r) && r.czxid.is_none() && !r.woken.iter().any(|(c, _)| *c == client)
        });
        match (unknown.next(), unknown.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    }

    /// The earliest release that deleted a child of `parent` that `client`
    /// last listed, not yet charged to it.
    pub(super) fn child_deleter(
        &self,
        client: ClientId,
        parent: &str,
        listed: Option<Vec<String>>,
    ) -> Option<usize> {
        let listed = listed?;
        self.releases.iter().position(|r| {
            let Some(node) = r.node.as_deref() else {
                return false;
            };
            parent_of(node) == Some(parent)
                && listed
                    .binary_search_by(|name| name.as_str().cmp(base_name(node)))
                    .is_ok()
                && !r.woken.iter().any(|(c, _)| *c == client)
        })
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
