use super::*;
use std::os::unix::net::UnixStream;

fn done(bytes: &[u8]) -> (Reply<'_>, usize) {
    match parse(bytes).unwrap() {
        Parsed::Done(frame, used) => (frame.reply(bytes), used),
        Parsed::Need(n) => panic!("incomplete, needs {n}"),
    }
}

#[test]
fn every_reply_type_is_parsed() {
    assert_eq!(done(b"+PONG\r\n"), (Reply::Status(b"PONG"), 7));
    assert_eq!(
        done(b"-ERR unknown command\r\n").0,
        Reply::Error(b"ERR unknown command")
    );
    assert_eq!(done(b":42\r\n"), (Reply::Integer(42), 5));
    assert_eq!(done(b":-7\r\n").0, Reply::Integer(-7));
    assert_eq!(done(b"$3\r\nfoo\r\n"), (Reply::Bulk(b"foo"), 9));
    assert_eq!(done(b"$0\r\n\r\n"), (Reply::Bulk(b""), 6));
    assert_eq!(done(b"$-1\r\n"), (Reply::Nil, 5));
    assert_eq!(done(b"*2\r\n$1\r\na\r\n"), (Reply::Array(2), 4));
    assert_eq!(done(b"*-1\r\n").0, Reply::NilArray);
    // A bulk string may hold CR and LF.
    assert_eq!(done(b"$4\r\n\r\n\r\n\r\n").0, Reply::Bulk(b"\r\n\r\n"));
}

#[test]
fn every_split_of_a_reply_asks_for_more() {
    let whole: &[u8] = b"$5\r\nhello\r\n";
    for cut in 0..whole.len() {
        match parse(&whole[..cut]).unwrap() {
            Parsed::Need(n) => assert!(n > cut && n <= whole.len(), "cut {cut}: needs {n}"),
            done => panic!("cut {cut}: {done:?}"),
        }
    }
    // Once the header is in, the whole length is known.
    assert_eq!(parse(&whole[..5]).unwrap(), Parsed::Need(whole.len()));
}

#[test]
fn what_is_not_resp_is_refused() {
    for bad in [
        &b"?x\r\n"[..],
        b"+OK\rX",
        b"$3\r\nfooXY",
        b"$-2\r\n",
        b"*-5\r\n",
        b":12a\r\n",
        b":\r\n",
        b"$99999999999999999999\r\n",
    ] {
        let e = parse(bad).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{bad:?}");
        assert!(e.to_string().contains("not RESP"), "{e}");
    }
}

#[test]
fn requests_are_encoded_once_and_repeated_for_a_pipeline() {
    let ping = Encoded::new(&[b"PING"]);
    assert_eq!(ping.bytes(), b"*1\r\n$4\r\nPING\r\n");
    let get = Encoded::pipelined(&[b"GET", b"k"], 3);
    assert_eq!(get.commands(), 3);
    assert_eq!(get.bytes(), b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".repeat(3));
}

/// A client on one end of a socket pair, and a thread writing `replies` to the
/// other end in chunks of `chunk` bytes after reading the request.
fn serve(replies: Vec<u8>, chunk: usize, request_len: usize) -> RedisConn {
    let (ours, mut theirs) = UnixStream::pair().unwrap();
    std::thread::spawn(move || {
        let mut request = vec![0; request_len];
        theirs.read_exact(&mut request).unwrap();
        for piece in replies.chunks(chunk) {
            theirs.write_all(piece).unwrap();
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    });
    RedisConn::new(Conn::Unix(ours), 0, &pair(), Duration::from_secs(10))
}

/// Where a socket pair's client says its server is.
fn pair() -> Endpoint {
    Endpoint {
        transport: crate::transport::Transport::Unix,
        address: crate::transport::Address::Path("pair".into()),
    }
}

#[test]
fn a_bulk_of_64_kib_read_in_small_pieces_is_whole() {
    let value: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
    let mut replies = b"$65536\r\n".to_vec();
    replies.extend_from_slice(&value);
    replies.extend_from_slice(b"\r\n+PONG\r\n");
    let get = Encoded::new(&[b"GET", b"k"]);
    let mut client = serve(replies, 1000, get.bytes().len());
    client.send(&get).unwrap();
    assert_eq!(client.reply().unwrap(), Reply::Bulk(&value));
    assert_eq!(client.reply().unwrap(), Reply::Status(b"PONG"));
}

#[test]
fn pipelined_replies_split_anywhere_are_read_in_order() {
    let get = Encoded::pipelined(&[b"GET", b"k"], 16);
    let mut replies = Vec::new();
    for i in 0..16 {
        replies.extend_from_slice(format!("$3\r\nv{i:02}\r\n").as_bytes());
    }
    let mut client = serve(replies, 7, get.bytes().len());
    client.exchange(&get, Expect::Bulk(3)).unwrap();
}

#[test]
fn an_error_reply_fails_the_exchange_with_its_text() {
    let ping = Encoded::new(&[b"PING"]);
    let mut client = serve(
        b"-NOAUTH Authentication required.\r\n".to_vec(),
        64,
        ping.bytes().len(),
    );
    let e = client.exchange(&ping, Expect::Status("PONG")).unwrap_err();
    assert!(e.to_string().contains("NOAUTH"), "{e}");
}

#[test]
fn a_nil_where_a_value_was_expected_is_an_error() {
    let get = Encoded::new(&[b"GET", b"k"]);
    let mut client = serve(b"$-1\r\n".to_vec(), 64, get.bytes().len());
    let e = client.exchange(&get, Expect::Bulk(64)).unwrap_err();
    assert!(e.to_string().contains("Nil"), "{e}");
}

#[test]
fn arrays_are_read_whole() {
    let mget = Encoded::new(&[b"MGET", b"a", b"b"]);
    let mut client = serve(
        b"*2\r\n$1\r\nx\r\n$-1\r\n+PONG\r\n".to_vec(),
        3,
        mget.bytes().len(),
    );
    client.exchange(&mget, Expect::Any).unwrap();
    assert_eq!(client.reply().unwrap(), Reply::Status(b"PONG"));
}

#[test]
fn a_closed_connection_says_the_server_went_away() {
    let ping = Encoded::new(&[b"PING"]);
    let mut client = serve(b"+PO".to_vec(), 64, ping.bytes().len());
    let e = client.exchange(&ping, Expect::Status("PONG")).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    assert!(e.to_string().contains("closed the connection"), "{e}");
}

#[test]
fn a_reply_larger_than_the_limit_is_refused_before_it_is_read() {
    let get = Encoded::new(&[b"GET", b"k"]);
    let mut client = serve(b"$999999999\r\n".to_vec(), 64, get.bytes().len());
    let e = client.exchange(&get, Expect::Any).unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}
