//! Reading a user's input file, bounded: the one way every command reads a
//! scenario, a timing file or a shard result.
//!
//! An input is read only up to its documented size ([`crate::limits`]) and
//! refused past it, so `zkcheck check /dev/zero` or `yes | zkcheck merge -`
//! ends at once with a message instead of reading until memory runs out.
//! Only regular files and `-` (standard input) are read: a FIFO with no
//! writer would block the open for ever, and a device (`/dev/zero`,
//! `/dev/urandom`) has no end, so both are refused before they are opened,
//! naming what they are and what to give instead (pipe a FIFO's content in
//! as `-`). Text must be UTF-8; where it is not, the error names the byte,
//! the line and the column.

use std::fmt;
use std::io::Read;
use std::path::Path;

use crate::limits::Limit;

/// Why an input could not be read as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// 1-based line and column of the fault, when it is in the text.
    pub position: Option<(usize, usize)>,
    /// What is wrong, naming the file (e.g. too large, not UTF-8, a device).
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, col)) => write!(f, "{line}:{col}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl InputError {
    fn plain(message: String) -> Self {
        InputError {
            position: None,
            message,
        }
    }
}

/// The bytes of `path` (`-`: standard input), at most `limit.max` of them:
/// refused past that, and refused without opening when `path` is not a
/// regular file. `what` names the input in messages ("scenario file").
pub(crate) fn read_bytes(path: &Path, limit: Limit, what: &str) -> Result<Vec<u8>, InputError> {
    let too_big = |size: &str| InputError::plain(limit.refusal(size));
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        let stdin = std::io::stdin();
        let read = stdin.lock().take(limit.max + 1).read_to_end(&mut bytes);
        read.map_err(|e| InputError::plain(format!("cannot read standard input: {e}")))?;
        if bytes.len() as u64 > limit.max {
            return Err(too_big(&format!("more than {} bytes", limit.max)));
        }
        return Ok(bytes);
    }
    // `metadata` follows symbolic links and never opens the file, so it
    // cannot block on a FIFO.
    let meta = std::fs::metadata(path)
        .map_err(|e| InputError::plain(format!("cannot read {what}: {e}")))?;
    if !meta.is_file() {
        return Err(InputError::plain(format!(
            "cannot read {what}: it is {}, not a regular file; zkcheck reads a {what} from a \
             regular file, or from standard input as `-` (`… | zkcheck … -`), so that a FIFO \
             without a writer cannot block it and a device without an end cannot fill memory",
            kind_of(&meta)
        )));
    }
    if meta.len() > limit.max {
        return Err(too_big(&format!("{} bytes", meta.len())));
    }
    let file = std::fs::File::open(path)
        .map_err(|e| InputError::plain(format!("cannot read {what}: {e}")))?;
    let mut bytes = Vec::new();
    // The file may have grown since `metadata`: read one byte past the limit.
    file.take(limit.max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::plain(format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > limit.max {
        return Err(too_big(&format!("more than {} bytes", limit.max)));
    }
    Ok(bytes)
}

/// `read_bytes` as UTF-8 text (`text_of`).
pub fn read_text(path: &Path, limit: Limit, what: &str) -> Result<String, InputError> {
    text_of(read_bytes(path, limit, what)?)
}

/// `bytes` as UTF-8 text, or an error naming the first invalid byte with
/// its line and column.
pub(crate) fn text_of(bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        // Everything before `at` is valid UTF-8.
        let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        InputError {
            position: Some(line_col(before, at)),
            message: format!(
                "invalid UTF-8 at byte {at} (0x{:02x}): the input must be UTF-8 text",
                bytes[at]
            ),
        }
    })
}

/// What a file that is not a regular one is, for the refusal.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = text[line_start..offset].chars().count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::FILE_BYTES;

    #[test]
    fn invalid_utf8_names_its_byte_line_and_column() {
        let e = text_of(b"name = \"t\"\nroot = \"/\xff\"\n".to_vec()).unwrap_err();
        assert_eq!(e.position, Some((2, 10)));
        assert!(e.message.contains("invalid UTF-8 at byte 20 (0xff)"), "{e}");
        assert_eq!(text_of("ünï\n".as_bytes().to_vec()).unwrap(), "ünï\n");
    }

    #[test]
    fn devices_and_directories_are_refused_before_they_are_read() {
        let e = read_bytes(Path::new("/dev/zero"), FILE_BYTES, "scenario file").unwrap_err();
        assert!(e.message.contains("a character device"), "{e}");
        assert!(e.message.contains("`-`"), "{e}");
        let e = read_bytes(Path::new("/"), FILE_BYTES, "scenario file").unwrap_err();
        assert!(e.message.contains("a directory"), "{e}");
    }

    #[test]
    fn a_file_past_its_limit_is_refused_and_one_at_it_is_read() {
        let dir = std::env::temp_dir().join(format!("zkcheck-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big");
        let small = Limit {
            max: 10,
            ..FILE_BYTES
        };
        std::fs::write(&path, [b'a'; 11]).unwrap();
        let e = read_bytes(&path, small, "scenario file").unwrap_err();
        assert!(e.message.contains("`scenario file` = 11 bytes"), "{e}");
        std::fs::write(&path, [b'a'; 10]).unwrap();
        assert_eq!(read_bytes(&path, small, "scenario file").unwrap().len(), 10);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
