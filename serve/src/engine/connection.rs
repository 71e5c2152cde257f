//! One TCP connection as the engine sees it.

use zksim::{ClientId, ServerId};
use zkwire::FrameReader;

pub struct Conn {
    /// The simulated server whose port it came in on.
    pub server: ServerId,
    pub reader: FrameReader,
    pub state: ConnState,
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
