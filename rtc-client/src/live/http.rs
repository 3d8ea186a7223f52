//! The small HTTP/1.1 client the caller speaks the signalling protocol with.
//!
//! One request per connection (`Connection: close`), JSON bodies, a size cap and a timeout on the
//! whole exchange. That is all [`super::signal`] needs, and it keeps an HTTP client stack out of
//! the dependency tree (the server side uses axum, already in the tree through tonic).

use super::LiveError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest response read (a QoE snapshot or an answer is a few kB).
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// A peer's base URL, `http://HOST:PORT[/prefix]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerUrl {
    /// `HOST:PORT` to connect to.
    pub authority: String,
    /// The path prefix, without a trailing `/` (empty for the root).
    pub prefix: String,
}

impl PeerUrl {
    /// Parses `http://HOST[:PORT][/prefix]` (port 80 when missing). `https` is not supported: the
    /// signalling is meant for loopback and trusted networks.
    ///
    /// # Errors
    ///
    /// [`LiveError::Config`] for anything else.
    pub fn parse(url: &str) -> Result<Self, LiveError> {
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            LiveError::Config(format!("--peer must be an http:// URL, not {url:?}"))
        })?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.contains(['@', ' ']) {
            return Err(LiveError::Config(format!("no host in --peer {url:?}")));
        }
        let authority = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        Ok(Self {
            authority,
            prefix: path.trim_end_matches('/').to_owned(),
        })
    }
}

/// An HTTP response: status and body.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The body as JSON of type `T`.
    ///
    /// # Errors
    ///
    /// [`LiveError::Signalling`] if it is not.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, LiveError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            LiveError::Signalling(format!(
                "unexpected response body ({e}): {}",
                String::from_utf8_lossy(&self.body[..self.body.len().min(200)])
            ))
        })
    }

    /// The body as text, for error messages.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `method path` with an optional JSON body; the whole exchange is bounded by `timeout`.
///
/// # Errors
///
/// [`LiveError::Signalling`] on a connection failure, a timeout or a malformed response.
pub async fn request(
    peer: &PeerUrl,
    method: &str,
    path: &str,
    body: Option<&impl Serialize>,
    timeout: Duration,
) -> Result<Response, LiveError> {
    let body = match body {
        Some(b) => serde_json::to_vec(b).map_err(|e| LiveError::Signalling(e.to_string()))?,
        None => Vec::new(),
    };
    request_raw(peer, method, path, "application/json", &body, timeout).await
}

/// Like [`request`] with a body sent as is (tests send malformed ones).
///
/// # Errors
///
/// As [`request`].
pub async fn request_raw(
    peer: &PeerUrl,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<Response, LiveError> {
    let exchange = async {
        let mut stream = TcpStream::connect(&peer.authority).await.map_err(|e| {
            LiveError::Signalling(format!("cannot connect to {}: {e}", peer.authority))
        })?;
        let _ = stream.set_nodelay(true);
        let head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\nConnection: close\r\nAccept: application/json\r\n\r\n",
            peer.prefix,
            peer.authority,
            body.len()
        );
        stream.write_all(head.as_bytes()).await.map_err(io_err)?;
        stream.write_all(body).await.map_err(io_err)?;
        stream.flush().await.map_err(io_err)?;
        let mut raw = Vec::new();
        (&mut stream)
            .take(MAX_RESPONSE_BYTES)
            .read_to_end(&mut raw)
            .await
            .map_err(io_err)?;
        parse_response(&raw)
    };
    tokio::time::timeout(timeout, exchange).await.map_err(|_| {
        LiveError::Signalling(format!(
            "no answer from {} within {timeout:?}",
            peer.authority
        ))
    })?
}

fn io_err(e: std::io::Error) -> LiveError {
    LiveError::Signalling(format!("signalling connection failed: {e}"))
}

/// Parses a `Connection: close` response: status line, headers, then the body (by
/// `Content-Length` when given, else to the end; chunked bodies are decoded).
fn parse_response(raw: &[u8]) -> Result<Response, LiveError> {
    let bad = |what: &str| LiveError::Signalling(format!("malformed HTTP response: {what}"));
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| bad("headers are not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| bad("no status"))?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            }
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        dechunk(rest).ok_or_else(|| bad("bad chunked body"))?
    } else {
        match length {
            Some(n) => rest.get(..n).ok_or_else(|| bad("short body"))?.to_vec(),
            None => rest.to_vec(),
        }
    };
    Ok(Response { status, body })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_responses_parse() {
        let url = PeerUrl::parse("http://127.0.0.1:8443").unwrap();
        assert_eq!(url.authority, "127.0.0.1:8443");
        assert_eq!(url.prefix, "");
        let url = PeerUrl::parse("http://localhost/rtc/").unwrap();
        assert_eq!(url.authority, "localhost:80");
        assert_eq!(url.prefix, "/rtc");
        assert!(PeerUrl::parse("https://x").is_err());
        assert!(PeerUrl::parse("http://").is_err());

        let r = parse_response(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}xx").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (201, b"{}".as_slice()));
        let r = parse_response(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.body, b"abc");
        assert!(parse_response(b"garbage").is_err());
    }
}
