//! What each request gets: the page and its assets, the state as JSON, the SSE stream, and
//! (only when allowed, from the page served, with its token) the stop. Everything else is an
//! HTTP error.

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use giving::Timestamp;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::assets;
use super::shared::Shared;
use super::sse;
use super::state::{ClientView, Status};

/// The body of every response.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// The header that carries the page's stop token.
pub(crate) const TOKEN_HEADER: &str = "x-giving-token";

/// Answers one request.
pub(crate) fn route(request: Request<Incoming>, shared: &Arc<Shared>) -> Response<Body> {
    // No route takes a body: one that announces more than a few bytes is refused unread.
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if length.is_some_and(|n| n > 64) || request.headers().contains_key(header::TRANSFER_ENCODING) {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "requests take no body");
    }
    let method = request.method();
    let read = method == Method::GET || method == Method::HEAD;
    match request.uri().path() {
        "/" | "/index.html" if read => page(shared),
        "/app.js" if read => asset(assets::APP_JS, "text/javascript; charset=utf-8"),
        "/app.css" if read => asset(assets::APP_CSS, "text/css; charset=utf-8"),
        "/state" if read => state(shared),
        "/events" if read => events(shared),
        "/stop" if method == Method::POST => stop(&request, shared),
        "/" | "/index.html" | "/app.js" | "/app.css" | "/state" | "/events" | "/stop" => {
            error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        _ => error(StatusCode::NOT_FOUND, "not found"),
    }
}

fn page(shared: &Shared) -> Response<Body> {
    let token = shared.stop.as_ref().map_or("", |(token, _)| token.as_str());
    asset(assets::page(token).into_bytes(), "text/html; charset=utf-8")
}

fn state(shared: &Shared) -> Response<Body> {
    let json = shared
        .state()
        .batch(&mut ClientView::default(), Timestamp::now())
        .unwrap_or_default();
    asset(json.into_bytes(), "application/json")
}

fn events(shared: &Arc<Shared>) -> Response<Body> {
    let frames = sse::events(shared.clone(), shared.every).map(|b| Ok(Frame::data(b)));
    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    secure(headers);
    response
}

/// Stops the run when the page may, the token is the page's, and the request comes from the
/// page itself: a browser adds `Origin` to a cross-site POST, and cannot add the token header
/// without a CORS preflight this server never grants. A host that is not an IP address or
/// `localhost` is refused too: a page of another site rebound to this address by DNS would
/// be same-origin otherwise.
fn stop(request: &Request<Incoming>, shared: &Shared) -> Response<Body> {
    let Some((token, stop)) = &shared.stop else {
        return error(StatusCode::FORBIDDEN, "this dashboard is read-only");
    };
    let headers = request.headers();
    let given = headers.get(TOKEN_HEADER).map(HeaderValue::as_bytes);
    if given != Some(token.as_bytes()) {
        return error(StatusCode::FORBIDDEN, "wrong or missing token");
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(addressed_directly) {
        return error(StatusCode::FORBIDDEN, "unexpected host");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let expected = host.map(|h| format!("http://{h}"));
        if origin.to_str().ok() != expected.as_deref() {
            return error(StatusCode::FORBIDDEN, "cross-site request");
        }
    }
    stop.stop();
    shared.state().set_status(Status::Stopping);
    let mut response = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *response.status_mut() = StatusCode::NO_CONTENT;
    secure(response.headers_mut());
    response
}

/// Whether `host` (a Host header, port included) names this machine by address or
/// `localhost`.
fn addressed_directly(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok()
}

fn asset(body: impl Into<Bytes>, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    secure(headers);
    response
}

fn error(status: StatusCode, message: &'static str) -> Response<Body> {
    let mut response = asset(format!("{message}\n"), "text/plain; charset=utf-8");
    *response.status_mut() = status;
    response
}

/// Headers that keep the page to itself: no caching of live figures, no framing (the stop
/// button), scripts and styles from this server only, no content sniffing.
fn secure(headers: &mut hyper::HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_addresses_and_localhost_are_addressed_directly() {
        for host in [
            "127.0.0.1:8080",
            "localhost:1",
            "[::1]:80",
            "10.0.0.2",
            "LOCALHOST",
        ] {
            assert!(addressed_directly(host), "{host}");
        }
        for host in [
            "evil.example:8080",
            "127.0.0.1.evil.example",
            "",
            "localhost.evil",
        ] {
            assert!(!addressed_directly(host), "{host}");
        }
    }
}
