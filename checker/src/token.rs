//! Replay tokens: one printable line that carries a whole failing run.
//!
//! ```text
//! zk1:<scenario>:<schedule>:<checksum>
//! ```
//!
//! - `zk1` — the format version.
//! - `<scenario>` — the scenario's canonical TOML ([`Scenario::to_canonical`]),
//!   base64url without padding: replay needs no file, and a scenario file
//!   edited since cannot change what the token replays.
//! - `<schedule>` — the index of each chosen event in the list of enabled
//!   events at its step, as base64url digits of a little-endian varint
//!   (5 bits per digit; digit value ≥ 32 means "more digits follow").
//!   Most indices are below 32, so a step costs one character.
//! - `<cycle>` — only in a lasso's token (`zk1:<scenario>:<schedule>:<cycle>:<checksum>`):
//!   the step, in decimal, from which the schedule's events are a cycle that
//!   can repeat for ever ([`crate::lasso`]). Replay judges such a token by
//!   replaying the whole schedule and asking [`crate::lasso::judge`] whether
//!   the state after the last step is the state before that step (up to a
//!   shift of the clock) with a client waiting, no progress and every
//!   always-enabled step taken.
//! - `<checksum>` — FNV-1a (32 bits, 8 hex digits) of everything before it,
//!   so that a token cut or mangled in a copy-paste is refused with a clear
//!   message rather than replaying some other run.
//!
//! Every decoding error names the field and the byte where it went wrong.

use std::fmt;

use zkrecipes::{AnyRecipe, RecipeSet};

use crate::scenario::Scenario;

const PREFIX: &str = "zk";
const VERSION: u32 = 1;
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A decoded token: the scenario and the schedule's choice indices. The
/// recipe *type* is not in the token: the scenario names its recipe, and
/// decoding for a type `C` ([`Token::decode_as`]) checks that `C` has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token<C: zksim::Client = AnyRecipe> {
    /// The scenario, whole (its canonical text is in the token).
    pub scenario: Scenario<C>,
    /// Which of the enabled events each step took.
    pub indices: Vec<u32>,
    /// A lasso: the schedule's choices from this step on repeat for ever.
    pub cycle_from: Option<usize>,
}

/// Why a token could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenError {
    /// 0-based byte offset in the token, when one byte is to blame.
    pub byte: Option<usize>,
    /// What is wrong with the token.
    pub message: String,
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.byte {
            Some(b) => write!(f, "malformed token at byte {b}: {}", self.message),
            None => write!(f, "malformed token: {}", self.message),
        }
    }
}

impl std::error::Error for TokenError {}

fn err(byte: Option<usize>, message: impl Into<String>) -> TokenError {
    TokenError {
        byte,
        message: message.into(),
    }
}

impl Token {
    /// Read a token of the registered recipes (surrounding whitespace is ignored).
    pub fn decode(token: &str) -> Result<Token, TokenError> {
        Token::decode_as(token)
    }

    /// Read a token for the recipes of type `C`: its scenario must name a
    /// recipe `C` can build.
    pub fn decode_as<C: RecipeSet>(token: &str) -> Result<Token<C>, TokenError> {
        decode(token, true)
    }

    /// [`Token::decode_as`] for [`crate::check::Check::replay`], whose
    /// caller adds the failing check's invariants and monitors (code, which
    /// a token does not carry) before it runs: whether the check judges
    /// something is decided then, by [`crate::check::Check::run`].
    pub fn decode_pending_code<C: RecipeSet>(token: &str) -> Result<Token<C>, TokenError> {
        decode(token, false)
    }
}

impl<C: RecipeSet> Token<C> {
    /// A token for the run that takes `indices` on `scenario` (not a lasso).
    pub fn new(scenario: Scenario<C>, indices: Vec<u32>) -> Self {
        Token {
            scenario,
            indices,
            cycle_from: None,
        }
    }

    /// The same token marked as a lasso whose cycle starts at step `from`.
    pub fn with_cycle(mut self, from: Option<usize>) -> Self {
        self.cycle_from = from;
        self
    }

    /// The token as one line.
    pub fn encode(&self) -> String {
        let mut out = format!("{PREFIX}{VERSION}:");
        base64_encode(self.scenario.to_canonical().as_bytes(), &mut out);
        out.push(':');
        for &i in &self.indices {
            varint_encode(i, &mut out);
        }
        if let Some(from) = self.cycle_from {
            out.push_str(&format!(":{from}"));
        }
        let sum = fnv32(out.as_bytes());
        out.push_str(&format!(":{sum:08x}"));
        out
    }
}

fn decode<C: RecipeSet>(token: &str, judged: bool) -> Result<Token<C>, TokenError> {
    if token.len() as u64 > crate::limits::TOKEN_BYTES.max {
        return Err(err(
            None,
            crate::limits::TOKEN_BYTES.refusal(&format!("{} bytes", token.len())),
        ));
    }
    let lead = token.len() - token.trim_start().len();
    let token = token.trim();
    let Some(rest) = token.strip_prefix(PREFIX) else {
        return Err(err(
            Some(lead),
            format!("a replay token starts with `{PREFIX}{VERSION}:`"),
        ));
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let version: u32 = rest[..digits].parse().map_err(|_| {
        err(
            Some(lead + PREFIX.len()),
            format!("expected the format version after `{PREFIX}`"),
        )
    })?;
    if version != VERSION {
        return Err(err(
            Some(lead + PREFIX.len()),
            format!("token version {PREFIX}{version} is not supported; this zkcheck reads {PREFIX}{VERSION}"),
        ));
    }
    let header = PREFIX.len() + digits;
    if !rest[digits..].starts_with(':') {
        return Err(err(Some(lead + header), "expected `:` after the version"));
    }
    let body = &token[header + 1..];
    let mut fields: Vec<&str> = body.split(':').collect();
    if fields.len() != 3 && fields.len() != 4 {
        return Err(err(
            None,
            format!(
                "expected 3 fields after `{PREFIX}{VERSION}:` (scenario:schedule:checksum, \
                 or scenario:schedule:cycle:checksum for a lasso), found {}",
                fields.len()
            ),
        ));
    }
    let scenario_at = lead + header + 1;
    let schedule_at = scenario_at + fields[0].len() + 1;
    let cycle = (fields.len() == 4).then(|| (fields.remove(2), schedule_at + fields[1].len() + 1));
    let checksum_at = match cycle {
        Some((field, at)) => at + field.len() + 1,
        None => schedule_at + fields[1].len() + 1,
    };
    let checksum = fields[2];
    // Lowercase only, as `encode` writes it: an uppercase digit would read
    // as the same number, so two different texts would be one token.
    if checksum.len() != 8
        || !checksum
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(err(
            Some(checksum_at),
            "the checksum field must be 8 lowercase hex digits",
        ));
    }
    check_alphabet(fields[0], scenario_at, "scenario")?;
    check_alphabet(fields[1], schedule_at, "schedule")?;
    let signed = &token[..checksum_at - lead - 1];
    let expected =
        u32::from_str_radix(checksum, 16).map_err(|_| err(Some(checksum_at), "bad checksum"))?;
    let actual = fnv32(signed.as_bytes());
    if expected != actual {
        return Err(err(
            Some(checksum_at),
            format!("checksum mismatch (token says {expected:08x}, content gives {actual:08x}): the token was altered or cut"),
        ));
    }
    let bytes = base64_decode(fields[0], scenario_at)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| err(Some(scenario_at), "the scenario field is not UTF-8 text"))?;
    let parsed = if judged {
        Scenario::parse_as::<C>(&text, "token scenario")
    } else {
        Scenario::parse_pending_code::<C>(&text, "token scenario")
    };
    let scenario = parsed.map_err(|e| {
        err(
            Some(scenario_at),
            format!("the scenario field does not hold a valid scenario: {e}"),
        )
    })?;
    let indices = varints_decode(fields[1], schedule_at)?;
    let cycle_from = match cycle {
        None => None,
        Some((field, at)) => {
            let from: usize = field
                .parse()
                .ok()
                .filter(|_| field.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| err(Some(at), "the cycle field must be a step number"))?;
            if from >= indices.len() {
                return Err(err(
                    Some(at),
                    format!(
                        "the cycle starts at step {from}, but the schedule has {} steps",
                        indices.len()
                    ),
                ));
            }
            Some(from)
        }
    };
    Ok(Token {
        scenario,
        indices,
        cycle_from,
    })
}

fn check_alphabet(field: &str, at: usize, name: &str) -> Result<(), TokenError> {
    match field.bytes().position(|b| digit_value(b).is_none()) {
        Some(i) => Err(err(
            Some(at + i),
            format!(
                "`{}` is not allowed in the {name} field (only A-Z a-z 0-9 - _)",
                field[i..].chars().next().unwrap_or('?')
            ),
        )),
        None => Ok(()),
    }
}

fn digit_value(b: u8) -> Option<u32> {
    match b {
        b'A'..=b'Z' => Some(u32::from(b - b'A')),
        b'a'..=b'z' => Some(u32::from(b - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(b - b'0') + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

fn base64_encode(bytes: &[u8], out: &mut String) {
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
}

fn base64_decode(field: &str, at: usize) -> Result<Vec<u8>, TokenError> {
    if field.len() % 4 == 1 {
        return Err(err(
            Some(at + field.len() - 1),
            "the scenario field has a stray last character (cut token?)",
        ));
    }
    let mut out = Vec::with_capacity(field.len() * 3 / 4);
    for chunk in field.as_bytes().chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| {
            n | digit_value(b).unwrap_or(0) << (18 - 6 * i)
        });
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Ok(out)
}

fn varint_encode(mut value: u32, out: &mut String) {
    loop {
        let low = value & 31;
        value >>= 5;
        if value == 0 {
            out.push(ALPHABET[low as usize] as char);
            return;
        }
        out.push(ALPHABET[(low | 32) as usize] as char);
    }
}

fn varints_decode(field: &str, at: usize) -> Result<Vec<u32>, TokenError> {
    let mut out = Vec::with_capacity(field.len());
    let (mut value, mut shift, mut start) = (0u64, 0u32, 0usize);
    for (i, b) in field.bytes().enumerate() {
        if shift == 0 {
            start = i;
        }
        let d = u64::from(digit_value(b).unwrap_or(0));
        value |= (d & 31) << shift;
        shift += 5;
        if value > u64::from(u32::MAX) || shift > 35 {
            return Err(err(
                Some(at + start),
                format!("choice {} of the schedule is too large", out.len()),
            ));
        }
        if d < 32 {
            out.push(value as u32);
            (value, shift) = (0, 0);
        }
    }
    if shift != 0 {
        return Err(err(
            Some(at + start),
            "the schedule field ends inside a number (cut token?)",
        ));
    }
    Ok(out)
}

/// FNV-1a, 32 bits.
fn fnv32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        for len in 0..10 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 200) as u8).collect();
            let mut s = String::new();
            base64_encode(&bytes, &mut s);
            assert_eq!(base64_decode(&s, 0).unwrap(), bytes);
        }
    }

    #[test]
    fn varints_round_trip() {
        let values = [0, 1, 31, 32, 33, 1023, 1024, 65_535, u32::MAX];
        let mut s = String::new();
        for v in values {
            varint_encode(v, &mut s);
        }
        assert_eq!(varints_decode(&s, 0).unwrap(), values);
        assert_eq!(s.len(), 1 + 1 + 1 + 2 + 2 + 2 + 3 + 4 + 7);
    }
}
