//! One TCP connection as the engine sees it.

use zksim::{ClientId, ServerId};
use zkwire::FrameReader;

pub struct Conn {
    /// The simulated server whose port it came in on.
    pub server: ServerId,
    pub reader: FrameReader,
    pub state: ConnState,
    /// A new connection's first bytes, held until there are four: they
    /// may spell a four-letter word instead of a frame's length.
    pub first_bytes: Option<Vec<u8>>,
    /// Frames read and sent on it (`stat`/`cons` print them).
    pub frames_in: u64,
    pub frames_out: u64,
    /// The session it carries once bound (0 before), for history records.
    pub session: zksim::SessionId,
    /// A planned drop: at the reply to this xid, close (before or after
    /// sending it), and why (the history's `Fault` record).
    pub drop_at: Option<(i32, bool, String)>,
    /// The handshake of a silenced session, held unanswered (its packets
    /// reach nobody) until the leader has expired the session: then it is
    /// answered as any re-attach of an expired session (timeOut 0).
    pub held: Option<(ClientId, Vec<u8>)>,
}

impl Conn {
    pub fn new(server: ServerId, max_frame: usize) -> Self {
        Conn {
            server,
            reader: FrameReader::new(max_frame),
            state: ConnState::Handshake,
            first_bytes: Some(Vec::new()),
            frames_in: 0,
            frames_out: 0,
            session: 0,
            drop_at: None,
            held: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnState {
    /// Waiting for the `ConnectRequest`.
    Handshake,
    /// Carrying a session's requests.
    Live { client: ClientId },
    /// `closeSession` was read: nothing more is.
    Closing,
}
