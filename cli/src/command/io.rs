//! The command's two outputs. A write that fails (the reader of a pipe went
//! away: `zkcheck check … | head -1`) is remembered and every later write
//! is dropped, so the command finishes its work and exits with its verdict
//! without the "failed printing to stdout" panic of `println!`.

use std::io::{self, Write};
use std::path::Path;

use zkcheck::limits::Limit;

/// Every input file a command reads (`-`: standard input), bounded and
/// checked as [`zkcheck::input`] does for scenario files: at most
/// `limit.max` bytes, regular files only (a FIFO or a device is refused
/// before it is opened), UTF-8 with the first bad byte located. The error
/// starts with the path.
pub fn read_input(path: &Path, limit: Limit, what: &str) -> Result<String, String> {
    zkcheck::input::read_text(path, limit, what).map_err(|e| match e.position {
        Some(_) => format!("{}:{e}", path.display()),
        None => format!("{}: {e}", path.display()),
    })
}

/// One output that swallows errors after the first.
pub struct Out<'a> {
    inner: &'a mut dyn Write,
    error: Option<io::Error>,
}

impl<'a> Out<'a> {
    fn new(inner: &'a mut dyn Write) -> Self {
        Out { inner, error: None }
    }
}

impl Write for Out<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.error.is_none() {
            if let Err(e) = self.inner.write_all(buf) {
                self.error = Some(e);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.error.is_none() {
            if let Err(e) = self.inner.flush() {
                self.error = Some(e);
            }
        }
        Ok(())
    }
}

/// stdout and stderr of one command.
pub struct Io<'a> {
    pub out: Out<'a>,
    pub err: Out<'a>,
}

impl<'a> Io<'a> {
    pub fn new(out: &'a mut dyn Write, err: &'a mut dyn Write) -> Self {
        Io {
            out: Out::new(out),
            err: Out::new(err),
        }
    }

    /// Flush both; report an output error other than a closed pipe on stderr.
    pub fn finish(&mut self) {
        let _ = self.out.flush();
        let _ = self.err.flush();
        if let Some(e) = &self.out.error {
            if e.kind() != io::ErrorKind::BrokenPipe {
                let message = format!("error: cannot write the output: {e}\n");
                let _ = self.err.write_all(message.as_bytes());
                let _ = self.err.flush();
            }
        }
    }
}

/// Where a command's human-readable text goes: `say!(text, …)` writes to
/// `out` (stdout, or stderr when stdout carries JSON).
pub struct Text<'a> {
    pub out: &'a mut dyn Write,
}

/// `println!` to a command's stdout (never panics).
macro_rules! say {
    ($io:expr) => {{
        let _ = ::std::io::Write::write_all(&mut $io.out, b"\n");
    }};
    ($io:expr, $($arg:tt)*) => {{
        let _ = ::std::io::Write::write_fmt(&mut $io.out, format_args!("{}\n", format_args!($($arg)*)));
    }};
}
pub(crate) use say;
