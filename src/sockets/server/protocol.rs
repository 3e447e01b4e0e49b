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
//! A datagram socket has no connection: a client sends the request header as its
//! first datagram to the server's address, and the server answers with the
//! greeting from a socket of its own for that client, connected to it; the client
//! connects to that socket and goes on as over a connection. An empty datagram
//! ends the session ([`BYE`]), and `messages` answers every end it receives, since
//! an end can be lost as any datagram can.

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
