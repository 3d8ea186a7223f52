//! The gRPC client for a Starlink dish (or the simulated one): `SpaceX.API.Device.Device/Handle`
//! over plaintext HTTP/2 (reference A1, A2), with a per-call timeout, bounded retries for
//! transient failures, and errors that say what went wrong.
//!
//! This is the I/O edge: it owns a tonic channel and reads tokio's clock for timeouts and
//! backoff. Everything it returns is decoded by the sans-I/O [`super::decode`] functions into
//! plain types.

use super::decode::{
    DecodeError, DeviceIdentity, DishLocation, DishStatus, RequestKind, decode_clear,
    decode_device_info, decode_location, decode_obstruction_map, decode_status,
};
use super::map::ObstructionMap;
use super::proto::device::{self as pb, device_client::DeviceClient};
use chrono::{DateTime, Utc};
use std::time::Duration;
use tonic::transport::{Channel, Endpoint};

/// The dish's gRPC address on a Starlink network (reference A1: the default of every tool).
pub const DEFAULT_DISH_ADDR: &str = "192.168.100.1:9200";

/// Default per-call timeout. The public tools use 10 s (reference A1); a detector that polls
/// every second needs an answer well within its poll interval, and a local dish answers in
/// milliseconds, so 2 s is plenty and keeps an unreachable dish from stalling a caller.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// Default number of retries after the first attempt, for transient failures only.
pub const DEFAULT_RETRIES: u32 = 2;

/// Default delay before the first retry; it doubles after each retry up to [`DEFAULT_MAX_BACKOFF`].
pub const DEFAULT_INITIAL_BACKOFF: Duration = Duration::from_millis(100);

/// Upper bound of the backoff between retries.
pub const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(1);

/// gRPC response metadata key under which the simulated dish reports its own clock (RFC 3339,
/// UTC). Real dishes do not send it; the client then leaves `dish_time` at `None`. This is how
/// a detector driving a time-scaled simulator labels each map with the simulated instant it
/// shows (see [`super::driver`]).
pub const DISH_TIME_METADATA: &str = "x-sim-dish-time";

/// Timeouts and retries of a [`DishClient`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    /// Limit of one attempt (connect or call), [`DEFAULT_CALL_TIMEOUT`] by default.
    pub call_timeout: Duration,
    /// Retries after the first attempt for transient failures (unreachable, timeout,
    /// `Unavailable`, `ResourceExhausted`, `Aborted`); never for permission, unimplemented or
    /// malformed replies.
    pub retries: u32,
    /// Delay before the first retry, doubled after each one.
    pub initial_backoff: Duration,
    /// Largest delay between retries.
    pub max_backoff: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            call_timeout: DEFAULT_CALL_TIMEOUT,
            retries: DEFAULT_RETRIES,
            initial_backoff: DEFAULT_INITIAL_BACKOFF,
            max_backoff: DEFAULT_MAX_BACKOFF,
        }
    }
}

impl ClientConfig {
    /// The longest one operation (connect, or one call with its retries) can take: every
    /// attempt timing out plus every backoff. Nothing in the client waits longer.
    pub fn budget(&self) -> Duration {
        let attempts = self.retries.saturating_add(1);
        let mut total = self.call_timeout.saturating_mul(attempts);
        for retry in 0..self.retries {
            total = total.saturating_add(self.backoff(retry));
        }
        total
    }

    /// Delay before retry number `retry` (0-based).
    fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(16)).unwrap_or(u32::MAX);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// What went wrong talking to the dish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DishError {
    /// The address cannot be turned into a gRPC endpoint.
    #[error("invalid dish address {addr:?}: {reason}")]
    InvalidAddress {
        /// The address given.
        addr: String,
        /// Why it is invalid.
        reason: String,
    },
    /// No connection could be made, or the connection failed (`Unavailable`). Is this machine on
    /// the Starlink network (or is the simulator running)?
    #[error("dish at {addr} is unreachable: {reason}")]
    Unreachable {
        /// The address tried.
        addr: String,
        /// The transport's reason.
        reason: String,
    },
    /// An attempt got no answer within the per-call timeout.
    #[error(
        "dish at {addr} did not answer {} within {timeout:?}",
        .request.map_or("the connection attempt", RequestKind::request_name)
    )]
    Timeout {
        /// The address tried.
        addr: String,
        /// What was asked (`connect` attempts report as `None`).
        request: Option<RequestKind>,
        /// The per-call timeout.
        timeout: Duration,
    },
    /// The dish refuses the request. New firmware does this for `get_location` ("Disabled due
    /// to policy"), or when local location access is off in the app (reference A8): fall back
    /// to a configured position.
    #[error("dish refused {request}: permission denied ({message})")]
    PermissionDenied {
        /// What was asked.
        request: RequestKind,
        /// The dish's message.
        message: String,
    },
    /// The dish does not implement the request (old firmware lacks
    /// `dish_clear_obstruction_map`, reference A12).
    #[error("dish does not support {request}: {message}")]
    Unsupported {
        /// What was asked.
        request: RequestKind,
        /// The dish's message.
        message: String,
    },
    /// Any other gRPC status.
    #[error("{request} failed with gRPC status {code:?}: {message}")]
    Rpc {
        /// What was asked.
        request: RequestKind,
        /// The status code.
        code: tonic::Code,
        /// The status message.
        message: String,
    },
    /// The dish answered, but the answer is unusable (wrong member, bad map, ...).
    #[error("malformed reply to {request}: {source}")]
    Malformed {
        /// What was asked.
        request: RequestKind,
        /// What is wrong with it.
        #[source]
        source: DecodeError,
    },
}

impl DishError {
    /// Whether trying again may help (what the client retries).
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable { .. } | Self::Timeout { .. } => true,
            Self::Rpc { code, .. } => matches!(
                code,
                tonic::Code::Unavailable
                    | tonic::Code::DeadlineExceeded
                    | tonic::Code::ResourceExhausted
                    | tonic::Code::Aborted
            ),
            _ => false,
        }
    }

    /// Classifies a gRPC status. `DeadlineExceeded` (the server's view of the `grpc-timeout`
    /// header) and `Cancelled` (what tonic reports when the client's own per-request timeout
    /// fires) are both a [`DishError::Timeout`].
    fn from_status(
        addr: &str,
        request: RequestKind,
        timeout: Duration,
        status: tonic::Status,
    ) -> Self {
        let message = status.message().to_owned();
        match status.code() {
            tonic::Code::DeadlineExceeded | tonic::Code::Cancelled => Self::Timeout {
                addr: addr.to_owned(),
                request: Some(request),
                timeout,
            },
            tonic::Code::PermissionDenied => Self::PermissionDenied { request, message },
            tonic::Code::Unimplemented => Self::Unsupported { request, message },
            tonic::Code::Unavailable => Self::Unreachable {
                addr: addr.to_owned(),
                reason: if message.is_empty() {
                    "unavailable".to_owned()
                } else {
                    message
                },
            },
            code => Self::Rpc {
                request,
                code,
                message,
            },
        }
    }
}

/// A connection to a dish's local gRPC API.
///
/// Cheap to clone (clones share one HTTP/2 connection). Every method makes one `Handle` call
/// with the per-call timeout, retrying transient failures with exponential backoff; the whole
/// operation never takes longer than [`ClientConfig::budget`].
#[derive(Debug, Clone)]
pub struct DishClient {
    addr: String,
    config: ClientConfig,
    inner: DeviceClient<Channel>,
}

impl DishClient {
    /// Connects with the default [`ClientConfig`] (2-s timeout, 2 retries).
    ///
    /// `addr` is `host:port` (e.g. [`DEFAULT_DISH_ADDR`]) or an `http://` URI.
    pub async fn connect(addr: impl Into<String>) -> Result<Self, DishError> {
        Self::connect_with(addr, ClientConfig::default()).await
    }

    /// Connects with the given timeouts and retries. Fails with
    /// [`DishError::Unreachable`] or [`DishError::Timeout`] within `config.budget()` when
    /// nothing answers.
    pub async fn connect_with(
        addr: impl Into<String>,
        config: ClientConfig,
    ) -> Result<Self, DishError> {
        let addr = addr.into();
        let uri = if addr.contains("://") {
            addr.clone()
        } else {
            format!("http://{addr}")
        };
        let endpoint = Endpoint::from_shared(uri)
            .map_err(|e| DishError::InvalidAddress {
                addr: addr.clone(),
                reason: e.to_string(),
            })?
            .connect_timeout(config.call_timeout)
            .tcp_nodelay(true);
        let channel = retry(&config, |_| {
            let endpoint = endpoint.clone();
            let addr = addr.clone();
            async move {
                match tokio::time::timeout(config.call_timeout, endpoint.connect()).await {
                    Ok(Ok(channel)) => Ok(channel),
                    Ok(Err(e)) => Err(DishError::Unreachable {
                        addr,
                        reason: error_chain(&e),
                    }),
                    Err(_) => Err(DishError::Timeout {
                        addr,
                        request: None,
                        timeout: config.call_timeout,
                    }),
                }
            }
        })
        .await?;
        Ok(Self {
            addr,
            config,
            inner: DeviceClient::new(channel),
        })
    }

    /// The address this client talks to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Its timeouts and retries.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// `get_status` (reference A7): latency, throughput, obstruction, alignment, GPS and the
    /// `obstruction_map_reset` alert.
    pub async fn status(&self) -> Result<DishStatus, DishError> {
        let kind = RequestKind::GetStatus;
        let (reply, dish_time) = self.call(kind).await?;
        let mut status = decode_status(reply).map_err(|source| malformed(kind, source))?;
        status.dish_time = dish_time;
        Ok(status)
    }

    /// `dish_get_obstruction_map` (reference A6), validated: wrong sizes, a `snr` whose length
    /// is not rows x cols, or non-finite values are [`DishError::Malformed`].
    pub async fn obstruction_map(&self) -> Result<ObstructionMap, DishError> {
        let kind = RequestKind::GetObstructionMap;
        let (reply, dish_time) = self.call(kind).await?;
        let mut map = decode_obstruction_map(reply).map_err(|source| malformed(kind, source))?;
        map.dish_time = dish_time;
        Ok(map)
    }

    /// `dish_clear_obstruction_map` (reference A3/A4; request 2017, reply 2015). Old firmware
    /// answers [`DishError::Unsupported`] (A12).
    pub async fn clear_obstruction_map(&self) -> Result<(), DishError> {
        let kind = RequestKind::ClearObstructionMap;
        let (reply, _) = self.call(kind).await?;
        decode_clear(reply).map_err(|source| malformed(kind, source))
    }

    /// `get_location` (reference A8). New firmware and dishes without local location access
    /// answer [`DishError::PermissionDenied`]; callers must then use a configured position.
    pub async fn location(&self) -> Result<DishLocation, DishError> {
        let kind = RequestKind::GetLocation;
        let (reply, _) = self.call(kind).await?;
        decode_location(reply).map_err(|source| malformed(kind, source))
    }

    /// `get_device_info` (reference A4; answered by response member 1004).
    pub async fn device_info(&self) -> Result<DeviceIdentity, DishError> {
        let kind = RequestKind::GetDeviceInfo;
        let (reply, _) = self.call(kind).await?;
        decode_device_info(reply).map_err(|source| malformed(kind, source))
    }

    /// One `Handle` call with timeout and retries; returns the reply and the dish's clock if it
    /// reported one ([`DISH_TIME_METADATA`]).
    async fn call(
        &self,
        kind: RequestKind,
    ) -> Result<(pb::Response, Option<DateTime<Utc>>), DishError> {
        let timeout = self.config.call_timeout;
        retry(&self.config, |_| {
            let mut client = self.inner.clone();
            let addr = self.addr.clone();
            async move {
                let mut request = tonic::Request::new(kind.to_request());
                request.set_timeout(timeout);
                match tokio::time::timeout(timeout, client.handle(request)).await {
                    Ok(Ok(response)) => {
                        let dish_time = response
                            .metadata()
                            .get(DISH_TIME_METADATA)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
                            .map(|t| t.with_timezone(&Utc));
                        Ok((response.into_inner(), dish_time))
                    }
                    Ok(Err(status)) => Err(DishError::from_status(&addr, kind, timeout, status)),
                    Err(_) => Err(DishError::Timeout {
                        addr,
                        request: Some(kind),
                        timeout,
                    }),
                }
            }
        })
        .await
    }
}

fn malformed(request: RequestKind, source: DecodeError) -> DishError {
    DishError::Malformed { request, source }
}

/// Runs `attempt` until it succeeds, fails permanently, or the retries are spent.
async fn retry<T, F, Fut>(config: &ClientConfig, mut attempt: F) -> Result<T, DishError>
where
    F: FnMut(u32) -> Fut,
    Fut: std::future::Future<Output = Result<T, DishError>>,
{
    let mut n = 0;
    loop {
        match attempt(n).await {
            Ok(value) => return Ok(value),
            Err(e) if e.is_transient() && n < config.retries => {
                tokio::time::sleep(config.backoff(n)).await;
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// An error and its causes on one line (tonic's transport errors hide the useful part, e.g.
/// "Connection refused", in the source chain).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_covers_every_attempt_and_backoff() {
        let config = ClientConfig::default();
        // 3 attempts x 2 s + 100 ms + 200 ms.
        assert_eq!(config.budget(), Duration::from_millis(6300));
        let none = ClientConfig {
            retries: 0,
            ..config
        };
        assert_eq!(none.budget(), Duration::from_secs(2));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let config = ClientConfig::default();
        assert_eq!(config.backoff(0), Duration::from_millis(100));
        assert_eq!(config.backoff(1), Duration::from_millis(200));
        assert_eq!(config.backoff(3), Duration::from_millis(800));
        assert_eq!(config.backoff(4), Duration::from_secs(1));
        assert_eq!(config.backoff(40), Duration::from_secs(1));
    }

    #[test]
    fn only_transient_failures_are_retried() {
        const T: Duration = Duration::from_secs(2);
        let addr = "x".to_owned();
        let kind = RequestKind::GetLocation;
        let denied = DishError::from_status(&addr, kind, T, tonic::Status::permission_denied("no"));
        assert!(matches!(denied, DishError::PermissionDenied { .. }));
        assert!(!denied.is_transient());
        let gone = DishError::from_status(&addr, kind, T, tonic::Status::unavailable("down"));
        assert!(matches!(gone, DishError::Unreachable { .. }));
        assert!(gone.is_transient());
        let unimplemented =
            DishError::from_status(&addr, kind, T, tonic::Status::unimplemented(""));
        assert!(!unimplemented.is_transient());
        let busy = DishError::from_status(&addr, kind, T, tonic::Status::resource_exhausted(""));
        assert!(busy.is_transient());
        let internal = DishError::from_status(&addr, kind, T, tonic::Status::internal(""));
        assert!(!internal.is_transient());
        let expired = DishError::from_status(&addr, kind, T, tonic::Status::cancelled(""));
        assert!(matches!(expired, DishError::Timeout { .. }));
        assert!(expired.is_transient());
    }
}
