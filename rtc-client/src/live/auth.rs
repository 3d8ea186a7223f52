//! Who may use the signalling server: a bearer token on every request when it listens beyond
//! loopback.
//!
//! Every `POST /calls` makes the answerer build a peer connection, bind a UDP socket and run a
//! receiver task (up to [`MAX_CALLS`](super::answer::MAX_CALLS) of them), so an open signalling
//! port lets anyone who reaches it spend the machine's sockets and CPU and fill its call slots.
//! On loopback only local processes reach it, as before; on any other address the server
//! requires `Authorization: Bearer <token>` (RFC 6750 section 2.1) on every request and answers
//! anything else `401` with `WWW-Authenticate: Bearer` (RFC 6750 section 3) before reading a
//! body or starting anything. The token is 256 random bits from the TLS provider's system random
//! source, written in hex; `answer` prints it once at start, or takes one (`--token`,
//! `--token-file`). It is compared in constant time ([`subtle`]) on SHA-256 digests, so neither
//! the position of the first wrong character nor the token's length shows in the response time.
//!
//! A token travels in clear text over plain HTTP: beyond a trusted network, serve HTTPS too
//! ([`super::tls`]). A token proves the right to call, not who calls: it is one shared secret
//! per server, and a new server (or a restart without `--token`) makes a new one.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// Random bytes in a generated token: 256 bits, as an AES-256 or HMAC-SHA-256 key.
pub const TOKEN_BYTES: usize = 32;

/// The shortest token accepted: 22 characters are 128 bits when each carries 6 (a random
/// URL-safe base64 string, RFC 4648 section 5), the least a guessable-by-nobody secret should
/// carry (NIST SP 800-131A's floor for keys); a hex token needs 32 for the same.
pub const MIN_TOKEN_CHARS: usize = 22;

/// Distinct characters a given token must hold: a random 22-character token almost surely has
/// more than 15, so fewer than this means it was typed, not drawn.
pub const MIN_DISTINCT_CHARS: usize = 8;

/// The realm named in `WWW-Authenticate` (RFC 6750 section 3).
const REALM: &str = "leopace";

/// Why a token could not be made or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// Shorter than [`MIN_TOKEN_CHARS`].
    #[error(
        "the token has {chars} characters: at least {MIN_TOKEN_CHARS} are needed (128 bits of \
         a random URL-safe base64 string); leave it out and `answer` generates one"
    )]
    TooShort {
        /// Its length.
        chars: usize,
    },
    /// A character outside RFC 6750's `b64token`.
    #[error(
        "the token holds {found:?} at character {at}: a bearer token is letters, digits and \
         -._~+/ with = only at the end (RFC 6750 section 2.1)"
    )]
    BadCharacter {
        /// The character.
        found: char,
        /// Its position, from 1.
        at: usize,
    },
    /// Too few distinct characters to be random.
    #[error(
        "the token uses only {distinct} distinct characters: a random token of this length has \
         many more (at least {MIN_DISTINCT_CHARS} are required); leave it out and `answer` \
         generates one"
    )]
    NotRandom {
        /// Distinct characters in it.
        distinct: usize,
    },
    /// The token file could not be read.
    #[error("cannot read the token file {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The system random source failed.
    #[error("the system random source failed, no token could be generated")]
    Random,
}

/// A bearer token. Its `Debug` form does not show it, so it never lands in a log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// [`TOKEN_BYTES`] from the system random source (rustls's ring provider: `getrandom(2)` on
    /// Linux), in lowercase hex.
    ///
    /// # Errors
    ///
    /// [`AuthError::Random`] if the random source fails.
    pub fn generate() -> Result<Self, AuthError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        rustls::crypto::ring::default_provider()
            .secure_random
            .fill(&mut bytes)
            .map_err(|_| AuthError::Random)?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// A given token, with surrounding white space (a file's final newline) removed.
    ///
    /// # Errors
    ///
    /// [`AuthError::TooShort`], [`AuthError::BadCharacter`] or [`AuthError::NotRandom`].
    pub fn parse(text: &str) -> Result<Self, AuthError> {
        let token = text.trim();
        let chars = token.chars().count();
        let body_end = token.trim_end_matches('=').len();
        for (i, c) in token.char_indices() {
            let allowed = c.is_ascii_alphanumeric() || "-._~+/".contains(c) || c == '=';
            if !allowed || (c == '=' && i < body_end) {
                let at = token[..i].chars().count() + 1;
                return Err(AuthError::BadCharacter { found: c, at });
            }
        }
        if chars < MIN_TOKEN_CHARS {
            return Err(AuthError::TooShort { chars });
        }
        let mut distinct: Vec<char> = token.chars().collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < MIN_DISTINCT_CHARS {
            return Err(AuthError::NotRandom {
                distinct: distinct.len(),
            });
        }
        Ok(Self(token.to_owned()))
    }

    /// The token in the file at `path` (its only content, white space around it ignored).
    ///
    /// # Errors
    ///
    /// [`AuthError::File`] if it cannot be read, else as [`Token::parse`].
    pub fn read_file(path: &Path) -> Result<Self, AuthError> {
        let text = std::fs::read_to_string(path).map_err(|source| AuthError::File {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text)
    }

    /// The token itself, to print once or to send.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `presented` is this token, in time that depends on neither (both are hashed to
    /// SHA-256 first, so even their lengths are compared in constant time).
    pub fn matches(&self, presented: &[u8]) -> bool {
        let ours = Sha256::digest(self.0.as_bytes());
        let theirs = Sha256::digest(presented);
        ours.as_slice().ct_eq(theirs.as_slice()).into()
    }
}

/// Whether a server listening on `ip` must require a token: anything but loopback
/// (127.0.0.0/8 and ::1; an IPv4-mapped loopback address counts as not loopback, the safe side).
pub fn token_required(ip: IpAddr) -> bool {
    !ip.is_loopback()
}

/// What the request's `Authorization` header holds.
#[derive(Debug, PartialEq, Eq)]
enum Presented<'a> {
    /// No `Authorization` header, or one of another scheme.
    Nothing,
    /// More than one header, or a `Bearer` header without a token.
    Malformed,
    /// A bearer token.
    Bearer(&'a [u8]),
}

fn presented(headers: &HeaderMap) -> Presented<'_> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if headers.contains_key(header::AUTHORIZATION) {
            Presented::Malformed
        } else {
            Presented::Nothing
        };
    };
    let value = value.as_bytes();
    let scheme_end = value.iter().position(|&b| b == b' ').unwrap_or(value.len());
    // The scheme is case-insensitive (RFC 9110 section 11.1).
    if !value[..scheme_end].eq_ignore_ascii_case(b"bearer") {
        return Presented::Nothing;
    }
    let token = value[scheme_end..].trim_ascii();
    if token.is_empty() {
        Presented::Malformed
    } else {
        Presented::Bearer(token)
    }
}

/// The `401`: the protocol's JSON error body, and `WWW-Authenticate: Bearer realm=...`, with
/// `error="invalid_token"` when a token was presented and is not this server's (RFC 6750
/// section 3: a request without credentials gets no error code).
fn unauthorized(invalid: bool, message: &str) -> Response {
    let mut response = super::respond::error(StatusCode::UNAUTHORIZED, message);
    let challenge = if invalid {
        format!("Bearer realm=\"{REALM}\", error=\"invalid_token\"")
    } else {
        format!("Bearer realm=\"{REALM}\"")
    };
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The middleware in front of every route but the page: the request goes on only with this
/// server's token, and nothing else (not its body) is read before.
pub(super) async fn require_bearer(
    State(token): State<Arc<Token>>,
    request: Request,
    next: Next,
) -> Response {
    match presented(request.headers()) {
        Presented::Bearer(t) if token.matches(t) => next.run(request).await,
        Presented::Bearer(_) => unauthorized(true, "the bearer token is not this server's"),
        Presented::Malformed => unauthorized(
            true,
            "the Authorization header must be one `Bearer <token>`",
        ),
        Presented::Nothing => unauthorized(
            false,
            "this server needs `Authorization: Bearer <token>`: the token `answer` printed at \
             start (call --token-file FILE, or the page's URL with #token=...)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_256_bit_hex_and_differ() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_eq!(a.expose().len(), 2 * TOKEN_BYTES);
        assert!(a.expose().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(Token::parse(a.expose()).unwrap(), a);
        assert_eq!(format!("{a:?}"), "Token(..)");
    }

    #[test]
    fn weak_or_malformed_tokens_are_refused_with_the_reason() {
        let short = Token::parse("abcdefghij").unwrap_err();
        assert!(short.to_string().contains("10 characters"), "{short}");
        let spaced = Token::parse("abcdefghijklmn opqrstuvwxyz").unwrap_err();
        assert!(
            matches!(spaced, AuthError::BadCharacter { found: ' ', at: 15 }),
            "{spaced}"
        );
        let padded_inside = Token::parse("abcdefgh=ijklmnopqrstuvwxyz").unwrap_err();
        assert!(matches!(
            padded_inside,
            AuthError::BadCharacter { found: '=', .. }
        ));
        let repeated = Token::parse("abababababababababababab").unwrap_err();
        assert!(matches!(repeated, AuthError::NotRandom { distinct: 2 }));
        let ok = Token::parse("  Zm9vYmFyLWJhei1xdXV4LTEyMzQ1==\n").unwrap();
        assert_eq!(ok.expose(), "Zm9vYmFyLWJhei1xdXV4LTEyMzQ1==");
    }

    #[test]
    fn only_the_same_token_matches() {
        let token = Token::parse("0123456789abcdef0123456789abcdef").unwrap();
        assert!(token.matches(b"0123456789abcdef0123456789abcdef"));
        assert!(!token.matches(b"0123456789abcdef0123456789abcdee"));
        assert!(!token.matches(b"0123456789abcdef0123456789abcdef0"));
        assert!(!token.matches(b""));
    }

    #[test]
    fn the_authorization_header_is_read_as_rfc_6750_says() {
        let with = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for v in values {
                headers.append(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
            }
            headers
        };
        assert_eq!(presented(&with(&[])), Presented::Nothing);
        assert_eq!(
            presented(&with(&["Basic dXNlcjpwdw=="])),
            Presented::Nothing
        );
        assert_eq!(
            presented(&with(&["bearer  abc "])),
            Presented::Bearer(b"abc")
        );
        assert_eq!(presented(&with(&["Bearer"])), Presented::Malformed);
        assert_eq!(
            presented(&with(&["Bearer a", "Bearer b"])),
            Presented::Malformed
        );
    }

    #[test]
    fn only_loopback_goes_without_a_token() {
        for ip in ["127.0.0.1", "127.8.9.10", "::1"] {
            assert!(!token_required(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "0.0.0.0",
            "192.168.1.2",
            "::",
            "::ffff:127.0.0.1",
            "10.0.0.1",
        ] {
            assert!(token_required(ip.parse().unwrap()), "{ip}");
        }
    }
}
