//! sockbench's wire protocol between its client and its server.
//!
//! On accept the server sends the 12-byte greeting `Hello there!` at once, as in the
//! connect experiment that started it all. A client that only measures connecting
//! reads the greeting and closes. Any other client then sends one fixed 16-byte
//! request header naming a workload:
//!
//! ```text
//! byte 0      op: b'P' pingpong, b'S' stream, b'C' count
//! bytes 1..4  zero
//! bytes 4..8  u32 little endian: message size (pingpong) or write size (stream)
//! bytes 8..16 u64 little endian: total bytes to send (stream), else zero
//! ```
//!
//! `pingpong` echoes every `size`-byte message until the client closes. `stream`
//! writes `total` bytes in `size`-byte writes. `count` answers with a u64: how many
//! connections on this listener closed right after the greeting, which lets the
//! client check its connect count against the server's.

/// The greeting every connection starts with.
pub const GREETING: &[u8; 12] = b"Hello there!";
/// Length of a request header.
pub const HEADER_LEN: usize = 16;
/// Largest pingpong message or stream write the server accepts.
pub const MAX_MESSAGE: u32 = 1 << 20;

/// A workload request from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    PingPong { size: u32 },
    Stream { write_size: u32, total_bytes: u64 },
    Count,
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
