//! Errors as the API server sends them: a `metav1.Status` with the HTTP code, the reason
//! clients switch on (`NotFound`, `Conflict`, `Invalid`, `Expired`, …), the message kubectl
//! prints, and details naming the object.

use serde_json::{Value, json};

use super::resources::Def;
use crate::sim::ApiError;
use crate::sim::store::StoreError;

/// A refused request.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// (name, group, kind as the plural) of the object, when there is one.
    pub details: Option<(String, String, String)>,
}

impl Status {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Status {
        Status { code, reason, message: message.into(), details: None }
    }

    fn about(mut self, def: &Def, name: &str) -> Status {
        self.details = Some((name.to_string(), def.group.to_string(), def.plural.to_string()));
        self
    }

    pub fn not_found(def: &Def, name: &str) -> Status {
        let message = format!("{} \"{name}\" not found", def.qualified());
        Status::new(404, "NotFound", message).about(def, name)
    }

    pub fn namespace_not_found(ns: &str) -> Status {
        let def = Def::of(super::resources::Res::Namespaces);
        Status::not_found(def, ns)
    }

    pub fn already_exists(def: &Def, name: &str) -> Status {
        let message = format!("{} \"{name}\" already exists", def.qualified());
        Status::new(409, "AlreadyExists", message).about(def, name)
    }

    pub fn conflict(def: &Def, name: &str, why: &str) -> Status {
        let message =
            format!("Operation cannot be fulfilled on {} \"{name}\": {why}", def.qualified());
        Status::new(409, "Conflict", message).about(def, name)
    }

    /// The optimistic-concurrency refusal (a stale resourceVersion).
    pub fn modified(def: &Def, name: &str) -> Status {
        Status::conflict(
            def,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    pub fn invalid(def: &Def, name: &str, message: impl Into<String>) -> Status {
        Status::new(422, "Invalid", message).about(def, name)
    }

    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::new(400, "BadRequest", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Status {
        Status::new(403, "Forbidden", message)
    }

    pub fn method_not_allowed(what: &str) -> Status {
        Status::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({what})"),
        )
    }

    pub fn expired(message: impl Into<String>) -> Status {
        Status::new(410, "Expired", message)
    }

    pub fn too_many(message: impl Into<String>) -> Status {
        Status::new(429, "TooManyRequests", message)
    }

    pub fn unavailable(message: impl Into<String>) -> Status {
        Status::new(503, "ServiceUnavailable", message)
    }

    pub fn path_not_found(path: &str) -> Status {
        Status::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        )
    }

    /// The `metav1.Status` document.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let (Some((name, group, kind)), Some(o)) = (&self.details, v.as_object_mut()) {
            let mut d = json!({"name": name, "kind": kind});
            if !group.is_empty()
                && let Some(m) = d.as_object_mut()
            {
                m.insert("group".into(), group.clone().into());
            }
            o.insert("details".into(), d);
        }
        v
    }

    /// A simulator API error for `def`/`name` as the API server reports it.
    pub fn from_api(def: &Def, name: &str, e: &ApiError) -> Status {
        match e {
            ApiError::Store(StoreError::NotFound { .. }) => Status::not_found(def, name),
            ApiError::Store(StoreError::AlreadyExists { .. }) => Status::already_exists(def, name),
            ApiError::Store(StoreError::NoName { .. }) => Status::invalid(
                def,
                name,
                format!(
                    "{} \"\" is invalid: metadata.name: Required value: name or generateName is required",
                    def.kind
                ),
            ),
            ApiError::Invalid(v) => Status::invalid(def, name, v.to_string()),
            ApiError::ClaimTerminating(_) => Status::forbidden(e.to_string()),
            ApiError::Conflict(why) => Status::conflict(def, name, why),
        }
    }
}

/// The success Status a delete of an already-gone object returns.
pub fn success(def: &Def, name: &str, uid: Option<&str>) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": name, "group": def.group, "kind": def.plural, "uid": uid},
    })
}
