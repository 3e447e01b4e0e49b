//! sockbench's wire protocol between its client and its server.
//!
//! On accept the server sends the 12-byte greeting `Hello there!` at once, as in the
//! connect experiment that started it all. A client that only measures connecting
//! reads the greeting and closes. Any other client then sends one fixed 16-byte
//! request header naming a workload:
//!
//! ```text
//! byte 0      op: b'P' pingpong, b'S' stream, b'C' count, b'M' messages
//! bytes 1..4  zero
//! bytes 4..8  u32 little endian: message size (pingpong, messages) or write size
//!             (stream)
//! bytes 8..16 u64 little endian: total bytes to send (stream); the receive
//!             buffer to set, bytes (messages; 0: the system's); else zero
//! ```
//!
//! `pingpong` echoes every `size`-byte message until the client closes. `stream`
//! writes `total` bytes in `size`-byte writes. `count` answers with a u64: how many
//! connections on this listener closed right after the greeting, which lets the
//! client check its connect count against the server's. `messages` receives
//! `size`-byte messages and counts them; one that starts with [`END`] is the end,
//! answered with a u64, how many came before it.
//!
//! A datagram socket has no connection, and every account can see a client's
//! datagram socket (`/proc/net/unix`, `/proc/net/udp`) and send to it. So a client
//! sends as its first datagram, to the server's address, the request header
//! followed by the server's [`Secret`] (zeros for a server started without one) and
//! a [`Nonce`] of its own, 48 bytes ([`DatagramRequest`]). The server answers with
//! the greeting followed by the nonce ([`greeting_for`]), from a socket of its own
//! for that client, connected to it; only the server read the nonce, so a client
//! that gets it back knows the server answered. The client then connects to that
//! socket and goes on as over a connection. A server with a secret starts no
//! session for a request without it. An empty datagram ends the session ([`BYE`]),
//! and `messages` answers every end it receives, since an end can be lost as any
//! datagram can.
//!
//! A server that has as many sessions as it keeps ([`MAX_SESSIONS`]) answers a new
//! one with [`BUSY`] instead of the greeting (followed by the nonce over
//! datagrams), and closes it.

/// The greeting every connection starts with.
pub const GREETING: &[u8; 12] = b"Hello there!";
/// Length of a request header.
pub const HEADER_LEN: usize = 16;
/// Largest pingpong message or stream write the server accepts.
pub const MAX_MESSAGE: u32 = 1 << 20;
/// The first byte of the message that ends a `messages` session (every other one
/// starts with [`DATA`]).
pub const END: u8 = b'E';
pub const DATA: u8 = b'D';
/// What ends a datagram session: an empty datagram.
pub const BYE: &[u8] = &[];
/// What a server that keeps [`MAX_SESSIONS`] already sends instead of the greeting.
pub const BUSY: &[u8; 12] = b"Server busy!";
/// The most sessions one server process keeps at once, over all its sockets:
/// twice the clients one sockbench run starts (`--clients` 1,024), so that two
/// runs can share a `sockbench serve`.
pub const MAX_SESSIONS: usize = 2_048;

/// Length of a datagram client's first datagram: header, secret, nonce.
pub const DATAGRAM_REQUEST_LEN: usize = HEADER_LEN + SECRET_LEN + NONCE_LEN;
/// Length of a datagram session's greeting: the greeting and the client's nonce.
pub const DATAGRAM_GREETING_LEN: usize = GREETING.len() + NONCE_LEN;
const SECRET_LEN: usize = 16;
const NONCE_LEN: usize = 16;

/// What a server sockbench starts for itself shares with its client alone (over
/// the child's standard input): a datagram request without it starts nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Secret([u8; SECRET_LEN]);

/// A datagram client's random bytes for one session, which the server's greeting
/// gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nonce([u8; NONCE_LEN]);

impl Secret {
    /// A new random secret.
    pub fn random() -> Secret {
        Secret(random_bytes())
    }

    pub fn bytes(self) -> [u8; SECRET_LEN] {
        self.0
    }

    /// The secret as 32 hexadecimal digits, as the server child reads it.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A secret from its 32 hexadecimal digits.
    pub fn from_hex(hex: &str) -> Option<Secret> {
        let hex = hex.trim();
        if hex.len() != 2 * SECRET_LEN || !hex.is_ascii() {
            return None;
        }
        let mut bytes = [0u8; SECRET_LEN];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Secret(bytes))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

impl Nonce {
    pub fn random() -> Nonce {
        Nonce(random_bytes())
    }
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    openssl::rand::rand_bytes(&mut bytes).expect("OpenSSL's random generator works");
    bytes
}

/// A datagram client's first datagram, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramRequest {
    pub request: Request,
    /// The server's secret as the client knows it: zeros when it knows none.
    pub secret: [u8; SECRET_LEN],
    pub nonce: Nonce,
}

impl DatagramRequest {
    pub fn encode(self) -> [u8; DATAGRAM_REQUEST_LEN] {
        let mut bytes = [0u8; DATAGRAM_REQUEST_LEN];
        bytes[..HEADER_LEN].copy_from_slice(&self.request.encode());
        bytes[HEADER_LEN..HEADER_LEN + SECRET_LEN].copy_from_slice(&self.secret);
        bytes[HEADER_LEN + SECRET_LEN..].copy_from_slice(&self.nonce.0);
        bytes
    }

    pub fn decode(bytes: &[u8; DATAGRAM_REQUEST_LEN]) -> Result<DatagramRequest, String> {
        let header: &[u8; HEADER_LEN] = bytes[..HEADER_LEN].try_into().expect("16 bytes");
        Ok(DatagramRequest {
            request: Request::decode(header)?,
            secret: bytes[HEADER_LEN..HEADER_LEN + SECRET_LEN]
                .try_into()
                .expect("16 bytes"),
            nonce: Nonce(
                bytes[HEADER_LEN + SECRET_LEN..]
                    .try_into()
                    .expect("16 bytes"),
            ),
        })
    }

    /// Whether a server with `secret` (or none) takes this request.
    pub fn admitted_by(&self, secret: Option<Secret>) -> bool {
        secret.is_none_or(|s| openssl::memcmp::eq(&s.0, &self.secret))
    }
}

/// The greeting of a datagram session for the client that sent `nonce`, or with
/// `busy` the answer of a server that keeps as many sessions as it may.
pub fn greeting_for(nonce: Nonce, busy: bool) -> [u8; DATAGRAM_GREETING_LEN] {
    let mut bytes = [0u8; DATAGRAM_GREETING_LEN];
    bytes[..GREETING.len()].copy_from_slice(if busy { BUSY } else { GREETING });
    bytes[GREETING.len()..].copy_from_slice(&nonce.0);
    bytes
}

/// A workload request from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    PingPong { size: u32 },
    Stream { write_size: u32, total_bytes: u64 },
    Count,
    Messages { size: u32, receive_buffer: u32 },
}

impl Request {
    pub fn encode(self) -> [u8; HEADER_LEN] {
        let (op, size, total) = match self {
            Request::PingPong { size } => (b'P', size, 0),
            Request::Stream {
                write_size,
                total_bytes,
            } => (b'S', write_size, total_bytes),
            Request::Count => (b'C', 0, 0),
            Request::Messages {
                size,
                receive_buffer,
            } => (b'M', size, u64::from(receive_buffer)),
        };
        let mut header = [0u8; HEADER_LEN];
        header[0] = op;
        header[4..8].copy_from_slice(&size.to_le_bytes());
        header[8..16].copy_from_slice(&total.to_le_bytes());
        header
    }

    pub fn decode(header: &[u8; HEADER_LEN]) -> Result<Request, String> {
        let size = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes"));
        let total = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"));
        let check_size = |size: u32| {
            if size == 0 || size > MAX_MESSAGE {
                Err(format!("size {size} outside 1..={MAX_MESSAGE}"))
            } else {
                Ok(size)
            }
        };
        match header[0] {
            b'P' => Ok(Request::PingPong {
                size: check_size(size)?,
            }),
            b'S' => Ok(Request::Stream {
                write_size: check_size(size)?,
                total_bytes: total,
            }),
            b'C' => Ok(Request::Count),
            b'M' => Ok(Request::Messages {
                size: check_size(size)?,
                receive_buffer: u32::try_from(total)
                    .map_err(|_| format!("receive buffer {total} over 4 GiB"))?,
            }),
            op => Err(format!("unknown op {op:#04x}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip() {
        for request in [
            Request::PingPong { size: 64 },
            Request::Stream {
                write_size: 4096,
                total_bytes: 1 << 33,
            },
            Request::Count,
            Request::Messages {
                size: 64,
                receive_buffer: 4096,
            },
        ] {
            assert_eq!(Request::decode(&request.encode()), Ok(request));
        }
    }

    #[test]
    fn datagram_requests_round_trip_and_need_the_secret() {
        let secret = Secret::random();
        let asked = DatagramRequest {
            request: Request::PingPong { size: 64 },
            secret: secret.0,
            nonce: Nonce::random(),
        };
        let got = DatagramRequest::decode(&asked.encode()).unwrap();
        assert_eq!(got, asked);
        assert!(got.admitted_by(Some(secret)));
        assert!(got.admitted_by(None));
        assert!(!got.admitted_by(Some(Secret::random())));
        let unknowing = DatagramRequest {
            secret: [0; 16],
            ..asked
        };
        assert!(!unknowing.admitted_by(Some(secret)));
        assert_ne!(Nonce::random(), Nonce::random());
    }

    #[test]
    fn secrets_travel_as_hex() {
        let secret = Secret::random();
        assert_eq!(
            Secret::from_hex(&format!("{}\n", secret.to_hex())),
            Some(secret)
        );
        assert_eq!(Secret::from_hex("00"), None);
        assert_eq!(Secret::from_hex(&"zz".repeat(16)), None);
        assert_eq!(format!("{secret:?}"), "Secret(…)");
    }

    #[test]
    fn a_greeting_carries_the_nonce() {
        let nonce = Nonce::random();
        let greeting = greeting_for(nonce, false);
        assert_eq!(&greeting[..12], GREETING);
        assert_eq!(&greeting[12..], &nonce.0);
        assert_eq!(&greeting_for(nonce, true)[..12], BUSY);
    }

    #[test]
    fn rejects_bad_sizes_and_ops() {
        assert!(Request::decode(&Request::PingPong { size: 0 }.encode()).is_err());
        let too_big = Request::PingPong {
            size: MAX_MESSAGE + 1,
        };
        assert!(Request::decode(&too_big.encode()).is_err());
        let mut header = [0u8; HEADER_LEN];
        header[0] = b'X';
        assert!(Request::decode(&header).is_err());
    }
}
