//! The HTTP responses and JSON bodies shared by the signalling server ([`super::answer`]) and
//! the browser page's endpoints ([`super::web`]).

use super::signal::{ErrorBody, MAX_BODY_BYTES};
use axum::body::{Body, to_bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `value` as a JSON response (axum's `Json` needs a feature that pulls in more crates).
pub(super) fn json<T: serde::Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// The protocol's error body (`{"error": ...}`) with `status`.
pub(super) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    json(
        status,
        &ErrorBody {
            error: message.into(),
        },
    )
}

/// A JSON body of at most [`MAX_BODY_BYTES`], or the error response saying what is wrong.
pub(super) async fn read_json<T: serde::de::DeserializeOwned>(body: Body) -> Result<T, Response> {
    let bytes = to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is larger than {MAX_BODY_BYTES} bytes"),
        )
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| error(StatusCode::BAD_REQUEST, format!("malformed JSON: {e}")))
}
