//! What keeps a web page in the operator's browser out of the served simulator. It listens on
//! loopback only (`--serve` refuses other addresses), but a page can still reach it: by DNS
//! rebinding (a name of the attacker's that resolves to 127.0.0.1, sent as the `Host`) or by a
//! "simple" cross-origin POST, which a browser sends without asking first when its body is
//! `text/plain` or a form. So a request is answered only when its `Host` is a loopback name or
//! address, and a POST or PUT only when its body is JSON (or protobuf, which the server reads
//! for access reviews and refuses otherwise, as kube-apiserver's clients expect). PATCH bodies
//! are checked by their patch type (`patch`). Refusals are Status objects, like the API
//! server's.
//!
//! Owns: these two checks. Must not: look at anything else of the request.

use axum::http::{HeaderMap, Method};

use super::status::Status;

/// Refuses what a browser page could send but a Kubernetes client never does.
pub fn browser(method: &Method, headers: &HeaderMap) -> Result<(), Status> {
    if let Some(host) = headers.get("host") {
        let host = host.to_str().unwrap_or_default();
        if !loopback_host(host) {
            let shown: String = host.chars().take(80).collect();
            return Err(Status::forbidden(format!(
                "the simulated API server answers loopback Host names only (localhost, \
                 127.0.0.1, [::1]); got Host {shown:?}"
            )));
        }
    }
    if matches!(*method, Method::POST | Method::PUT) {
        let ct = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
        let base = ct.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        let accepted = ["application/json", "application/vnd.kubernetes.protobuf"];
        if !accepted.contains(&base.as_str()) {
            return Err(Status::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format {base:?} - accepted media \
                     types include: application/json"
                ),
            ));
        }
    }
    Ok(())
}

/// `localhost`, `*.localhost`, an IPv4 loopback address or `[::1]`, with or without a port.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((addr, rest)) if rest.is_empty() || rest.starts_with(':') => addr,
            _ => return false,
        },
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_loopback_hosts_are_answered() {
        for ok in [
            "127.0.0.1:6443",
            "localhost",
            "LOCALHOST:80",
            "[::1]:6443",
            "127.1.2.3",
            "a.localhost",
        ] {
            assert!(browser(&Method::GET, &headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in
            ["evil.example", "evil.example:6443", "127.0.0.1.evil.example", "[::2]:1", "10.0.0.1"]
        {
            let st = browser(&Method::GET, &headers(&[("host", bad)])).unwrap_err();
            assert_eq!(st.code, 403, "{bad}");
            assert!(st.message.contains("loopback Host names only"), "{}", st.message);
        }
    }

    #[test]
    fn a_write_body_must_be_json() {
        let h = |ct: &str| headers(&[("host", "127.0.0.1"), ("content-type", ct)]);
        assert!(browser(&Method::POST, &h("application/json")).is_ok());
        assert!(browser(&Method::PUT, &h("application/json; charset=utf-8")).is_ok());
        for bad in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x"] {
            let st = browser(&Method::POST, &h(bad)).unwrap_err();
            assert_eq!(st.code, 415, "{bad}");
        }
        let none = headers(&[("host", "127.0.0.1")]);
        assert_eq!(browser(&Method::POST, &none).unwrap_err().code, 415);
        assert!(browser(&Method::DELETE, &none).is_ok(), "no body to judge");
    }
}
