//! A [`Property`] as text, for machine-readable results (`check --json`,
//! `merge`): the built-in properties by their catalogue JSON names
//! ([`super::catalogue::PropertySpec::json_name`]: `mutex`, `no-panic`,
//! …), a user's invariant as `always:<name>` and a user's monitor as
//! `custom:<name>` (built-in names never hold a `:`, a catalogue test
//! keeps it so, so the three never collide).
//!
//! `Always` and `Custom` hold `&'static str` because code names them with
//! literals; a name read back from a file is interned: each distinct name
//! is leaked once for the life of the process (a merge reads a handful).

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use super::catalogue;
use super::Property;

const ALWAYS: &str = "always:";
const CUSTOM: &str = "custom:";

/// The property's name in results.
pub fn result_name(p: Property) -> String {
    match p {
        Property::Always(name) => format!("{ALWAYS}{name}"),
        Property::Custom(name) => format!("{CUSTOM}{name}"),
        p => catalogue::json_name(p)
            .unwrap_or(catalogue::property_name(p))
            .to_string(),
    }
}

/// The property a result names, if any.
pub fn from_result_name(name: &str) -> Option<Property> {
    if let Some(n) = name.strip_prefix(ALWAYS) {
        return Some(Property::Always(intern(n)));
    }
    if let Some(n) = name.strip_prefix(CUSTOM) {
        return Some(Property::Custom(intern(n)));
    }
    catalogue::by_json_name(name)
}

/// The one `&'static` copy of `name`.
fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

impl Serialize for Property {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&result_name(*self))
    }
}

impl<'de> Deserialize<'de> for Property {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        from_result_name(&name).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown property `{name}` (a check's name, `always:<name>` or `custom:<name>`)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::catalogue::ALL_PROPERTIES;

    #[test]
    fn every_property_round_trips_through_its_name() {
        let mut all = ALL_PROPERTIES.to_vec();
        all.extend([
            Property::NoPanic,
            Property::Always("at most 3 clients"),
            Property::Custom("mine"),
        ]);
        for p in all {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(
                serde_json::from_str::<Property>(&json).unwrap(),
                p,
                "{json}"
            );
        }
        assert_eq!(result_name(Property::Always("x")), "always:x");
        assert!(serde_json::from_str::<Property>("\"mutexx\"").is_err());
    }
}
