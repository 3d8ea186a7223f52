//! HTTPS for the signalling: the answerer's certificate and key (`answer --tls-cert/--tls-key`),
//! the listener that runs TLS in front of axum, and the caller's client configuration
//! (`call --ca`).
//!
//! rustls with its ring provider: webrtc-rs's DTLS already builds both (so HTTPS adds no C
//! library and no build tool that aws-lc-rs would need), and both ends speak TLS 1.3 only
//! (RFC 8446; every current browser does), since the tree's rustls is built without `tls12`.
//! The caller verifies the server's certificate against the roots it is given (`--ca`): a
//! self-signed certificate is its own root, and a public CA's bundle can be passed the same way.

use super::LiveError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take over its TLS handshake (loopback or a LAN: milliseconds); a
/// connection that has not finished by then is dropped, so it cannot hold a handshake slot.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Handshakes run at once; further connections wait in the kernel's accept queue.
pub const MAX_HANDSHAKES: usize = 64;

/// The protocol offered in ALPN (RFC 7301): the server speaks HTTP/1.1 only.
const ALPN_HTTP1: &[u8] = b"http/1.1";

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The answerer's TLS identity: a certificate chain and its private key.
#[derive(Debug, Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
}

impl ServerTls {
    /// Reads a PEM certificate chain (the server's first) and a PEM private key (PKCS#8,
    /// PKCS#1 or SEC1).
    ///
    /// # Errors
    ///
    /// [`LiveError::Config`] naming the file that cannot be read or holds no certificate or key,
    /// or saying that the key is not the certificate's.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, LiveError> {
        let chain = read_certificates(cert)?;
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| {
            LiveError::Config(format!(
                "no private key in {} ({}): --tls-key wants a PEM PKCS#8, PKCS#1 or SEC1 key",
                key.display(),
                pem_reason(&e)
            ))
        })?;
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| LiveError::Config(format!("TLS: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(|e| {
                LiveError::Config(format!(
                    "the key in {} does not go with the certificate in {}: {e}",
                    key.display(),
                    cert.display()
                ))
            })?;
        config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
        Ok(Self {
            config: Arc::new(config),
        })
    }
}

/// The certificates of a PEM file, in order; at least one.
fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, LiveError> {
    let unreadable = |e: rustls::pki_types::pem::Error| {
        LiveError::Config(format!(
            "cannot read the certificates in {}: {}",
            path.display(),
            pem_reason(&e)
        ))
    };
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(unreadable)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    if chain.is_empty() {
        return Err(LiveError::Config(format!(
            "no certificate (-----BEGIN CERTIFICATE-----) in {}",
            path.display()
        )));
    }
    Ok(chain)
}

fn pem_reason(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => io.to_string(),
        rustls::pki_types::pem::Error::NoItemsFound => "none found".to_owned(),
        other => format!("{other:?}"),
    }
}

/// The caller's TLS configuration: servers are verified against the certificates in `ca`
/// (webpki: chain, validity and the peer URL's host name or IP address).
///
/// # Errors
///
/// [`LiveError::Config`] when `ca` cannot be read or holds no usable certificate.
pub fn client_config(ca: &Path) -> Result<Arc<ClientConfig>, LiveError> {
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(read_certificates(ca)?);
    if added == 0 {
        return Err(LiveError::Config(format!(
            "no usable certificate in {} (--ca)",
            ca.display()
        )));
    }
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| LiveError::Config(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
    Ok(Arc::new(config))
}

/// A TCP listener with TLS in front, for `axum::serve`: handshakes run in their own tasks (at
/// most [`MAX_HANDSHAKES`], each within [`HANDSHAKE_TIMEOUT`]), so a client that stalls its
/// handshake delays nobody; only finished handshakes are handed to axum.
pub(super) struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
    acceptor: JoinHandle<()>,
}

impl TlsListener {
    /// Starts accepting on `listener` with `tls`.
    pub(super) fn new(listener: TcpListener, addr: SocketAddr, tls: &ServerTls) -> Self {
        let (tx, ready) = mpsc::channel(MAX_HANDSHAKES);
        let acceptor = TlsAcceptor::from(Arc::clone(&tls.config));
        let slots = Arc::new(Semaphore::new(MAX_HANDSHAKES));
        let acceptor = tokio::spawn(async move {
            loop {
                let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                    return;
                };
                let (tcp, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(_) => {
                        // Out of file descriptors and the like: wait, as axum's own loop does.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await;
                    drop(slot);
                    if let Ok(Ok(stream)) = handshake {
                        let _ = tx.send((stream, peer)).await;
                    }
                });
            }
        });
        Self {
            ready,
            addr,
            acceptor,
        }
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The acceptor stopped (the server is going away): nothing more comes.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
