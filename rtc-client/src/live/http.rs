//! The small HTTP/1.1 client the caller speaks the signalling protocol with.
//!
//! One request per connection (`Connection: close`), JSON bodies, a size cap and a timeout on the
//! whole exchange, over TCP or TLS ([`super::tls`]), with the answerer's bearer token when it needs
//! one ([`super::auth`]). That is all [`super::signal`] needs, and it keeps an HTTP client stack out
//! of the dependency tree (the server side uses axum, already in the tree through tonic).

use super::LiveError;
use super::auth::Token;
use rustls::pki_types::ServerName;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// The largest response read (a QoE snapshot or an answer is a few kB).
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// A peer's base URL, `http[s]://HOST:PORT[/prefix]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerUrl {
    /// `HOST:PORT` to connect to.
    pub authority: String,
    /// The path prefix, without a trailing `/` (empty for the root).
    pub prefix: String,
    /// `https`: the exchange runs over TLS.
    pub https: bool,
}

impl PeerUrl {
    /// Parses `http[s]://HOST[:PORT][/prefix]` (port 80 or 443 when missing). Credentials in the
    /// URL (`user:pass@`) are refused: RFC 3986 section 3.2.1 deprecates them, and a URL ends up
    /// in shell histories and process lists (the token goes in `--token-file`).
    ///
    /// # Errors
    ///
    /// [`LiveError::Config`] for anything else.
    pub fn parse(url: &str) -> Result<Self, LiveError> {
        let (rest, https) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(rest), _) => (rest, false),
            (_, Some(rest)) => (rest, true),
            _ => {
                return Err(LiveError::Config(format!(
                    "--peer must be an http:// or https:// URL, not {url:?}"
                )));
            }
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(LiveError::Config(format!(
                "--peer {url:?} carries credentials: give the token with --token-file instead"
            )));
        }
        if authority.is_empty() || authority.contains(' ') {
            return Err(LiveError::Config(format!("no host in --peer {url:?}")));
        }
        if path.contains(['#', '?', ' ']) {
            return Err(LiveError::Config(format!(
                "--peer {url:?} is a base URL: no query, fragment or space"
            )));
        }
        let authority = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            authority.to_owned()
        } else {
            format!("{authority}:{}", if https { 443 } else { 80 })
        };
        Ok(Self {
            authority,
            prefix: path.trim_end_matches('/').to_owned(),
            https,
        })
    }

    /// The host without the port (and without an IPv6 address's brackets): the name the
    /// server's certificate must carry.
    pub fn host(&self) -> &str {
        let host = self
            .authority
            .rsplit_once(':')
            .map_or(self.authority.as_str(), |(h, _)| h);
        host.trim_start_matches('[').trim_end_matches(']')
    }
}

/// A peer to talk to: its URL, the token it wants (if any) and, for `https`, how its
/// certificate is checked.
#[derive(Clone)]
pub struct Peer {
    /// Where it is.
    pub url: PeerUrl,
    token: Option<Token>,
    tls: Option<(TlsConnector, ServerName<'static>)>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("url", &self.url)
            .field("token", &self.token)
            .field("tls", &self.tls.as_ref().map(|(_, name)| name))
            .finish()
    }
}

impl Peer {
    /// The peer at `url`, sent `token` on every request; an `https` URL needs `ca`, the roots
    /// its certificate is checked against (a self-signed certificate is its own).
    ///
    /// # Errors
    ///
    /// [`LiveError::Config`] for a bad URL, an `https` URL without `ca` (or `ca` with `http`),
    /// or a `ca` file that cannot be used.
    pub fn new(url: &str, token: Option<Token>, ca: Option<&Path>) -> Result<Self, LiveError> {
        let url = PeerUrl::parse(url)?;
        let tls = match (url.https, ca) {
            (false, None) => None,
            (false, Some(_)) => {
                return Err(LiveError::Config(
                    "--ca is for an https:// peer; this one is http://".into(),
                ));
            }
            (true, None) => {
                return Err(LiveError::Config(
                    "an https:// peer needs --ca PEM: the certificate of the CA that signed its                      certificate, or its own if self-signed"
                        .into(),
                ));
            }
            (true, Some(ca)) => {
                let name = ServerName::try_from(url.host().to_owned()).map_err(|e| {
                    LiveError::Config(format!("{:?} is no TLS server name: {e}", url.host()))
                })?;
                let config = super::tls::client_config(ca)?;
                Some((TlsConnector::from(config), name))
            }
        };
        Ok(Self { url, token, tls })
    }

    /// A plain-HTTP peer without a token (loopback).
    ///
    /// # Errors
    ///
    /// As [`Peer::new`].
    pub fn plain(url: &str) -> Result<Self, LiveError> {
        Self::new(url, None, None)
    }
}

/// An HTTP response: status, headers and body.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names as sent, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (case-insensitive), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

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
/// [`LiveError::Io`] when the connection cannot be made (`ConnectionRefused`: nothing listens
/// there), [`LiveError::Signalling`] on a failure after, a timeout or a malformed response.
pub async fn request(
    peer: &Peer,
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
    peer: &Peer,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<Response, LiveError> {
    let url = &peer.url;
    let authorization = peer.token.as_ref().map_or(String::new(), |t| {
        format!("Authorization: Bearer {}\r\n", t.expose())
    });
    let head = format!(
        "{method} {}{path} HTTP/1.1\r\nHost: {}\r\n{authorization}Content-Type: {content_type}\r\n\
         Content-Length: {}\r\nConnection: close\r\nAccept: application/json\r\n\r\n",
        url.prefix,
        url.authority,
        body.len()
    );
    let exchange = async {
        let stream = TcpStream::connect(&url.authority).await.map_err(|e| {
            // Kept an I/O error so that the caller can tell a refusal (nothing listens there)
            // from a silence; it prints as before.
            LiveError::Io {
                context: format!("signalling: cannot connect to {}", url.authority),
                source: e,
            }
        })?;
        let _ = stream.set_nodelay(true);
        let raw = match &peer.tls {
            None => exchange(stream, head.as_bytes(), body).await?,
            Some((connector, name)) => {
                let stream = connector.connect(name.clone(), stream).await.map_err(|e| {
                    LiveError::Signalling(format!(
                        "TLS with {} failed: {e}{}",
                        url.authority,
                        tls_hint(&e)
                    ))
                })?;
                exchange(stream, head.as_bytes(), body).await?
            }
        };
        parse_response(&raw)
    };
    tokio::time::timeout(timeout, exchange).await.map_err(|_| {
        LiveError::Signalling(format!(
            "no answer from {} within {timeout:?}",
            url.authority
        ))
    })?
}

/// What to do about a certificate webpki refuses for a reason a self-signed certificate often
/// has: `openssl req -x509` marks it a CA (basicConstraints CA:TRUE), which may not serve.
fn tls_hint(e: &std::io::Error) -> &'static str {
    if e.to_string().contains("CaUsedAsEndEntity") {
        " (the server's certificate says CA:TRUE: make it with basicConstraints=critical,CA:FALSE, \
         README \"Real calls\")"
    } else {
        ""
    }
}

/// Writes the request and reads the response until the server closes. A TLS peer that closes
/// without `close_notify` ends the read with `UnexpectedEof`; what came before is kept and the
/// parser decides whether it is whole (`Content-Length`).
async fn exchange(
    mut stream: impl AsyncRead + AsyncWrite + Unpin,
    head: &[u8],
    body: &[u8],
) -> Result<Vec<u8>, LiveError> {
    stream.write_all(head).await.map_err(io_err)?;
    stream.write_all(body).await.map_err(io_err)?;
    stream.flush().await.map_err(io_err)?;
    let mut raw = Vec::new();
    match (&mut stream)
        .take(MAX_RESPONSE_BYTES)
        .read_to_end(&mut raw)
        .await
    {
        Ok(_) => Ok(raw),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => Ok(raw),
        Err(e) => Err(io_err(e)),
    }
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
    let mut headers = Vec::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            headers.push((name.trim().to_owned(), value.to_owned()));
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
    Ok(Response {
        status,
        headers,
        body,
    })
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
        assert_eq!((url.prefix.as_str(), url.https), ("", false));
        let url = PeerUrl::parse("http://localhost/rtc/").unwrap();
        assert_eq!(url.authority, "localhost:80");
        assert_eq!(url.prefix, "/rtc");
        let url = PeerUrl::parse("https://[::1]/x").unwrap();
        assert_eq!((url.authority.as_str(), url.https), ("[::1]:443", true));
        assert_eq!(url.host(), "::1");
        assert_eq!(
            PeerUrl::parse("https://a.example:9").unwrap().host(),
            "a.example"
        );
        assert!(PeerUrl::parse("ftp://x").is_err());
        assert!(PeerUrl::parse("http://").is_err());
        let credentials = PeerUrl::parse("http://u:secret@h:1").unwrap_err();
        assert!(
            credentials.to_string().contains("--token-file"),
            "{credentials}"
        );
        let https = Peer::new("https://127.0.0.1:1", None, None).unwrap_err();
        assert!(https.to_string().contains("--ca"), "{https}");
        assert!(Peer::new("http://127.0.0.1:1", None, Some(Path::new("ca.pem"))).is_err());

        let r = parse_response(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}xx").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (201, b"{}".as_slice()));
        assert_eq!(r.header("content-LENGTH"), Some("2"));
        assert_eq!(r.header("location"), None);
        let r = parse_response(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.body, b"abc");
        assert!(parse_response(b"garbage").is_err());
    }
}
