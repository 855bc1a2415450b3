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
    /// `details`, when there are any (boxed: most refusals have none, and every handler
    /// returns a `Result<_, Status>`).
    pub details: Option<Box<Details>>,
}

/// A Status's `details`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Details {
    /// (name, group, kind) of the object, when there is one: the plural for most errors, the
    /// kind for `Invalid`, as upstream.
    pub about: Option<(String, String, String)>,
    /// Each cause (a field's problem, a budget's words on an eviction).
    pub causes: Vec<Cause>,
    /// `retryAfterSeconds` (a 429's suggestion; 0: not said).
    pub retry_after: u32,
}

/// One of `details.causes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    pub reason: String,
    pub message: String,
    /// The field it is about (empty: none).
    pub field: String,
}

impl Status {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Status {
        Status { code, reason, message: message.into(), details: None }
    }

    fn about(mut self, def: &Def, name: &str) -> Status {
        let about = Some((name.to_string(), def.group.to_string(), def.plural.to_string()));
        self.details_mut().about = about;
        self
    }

    fn details_mut(&mut self) -> &mut Details {
        self.details.get_or_insert_with(Box::default)
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
        let mut d = serde_json::Map::new();
        let details = self.details.as_deref().cloned().unwrap_or_default();
        if let Some((name, group, kind)) = &details.about {
            d.insert("name".into(), name.clone().into());
            if !group.is_empty() {
                d.insert("group".into(), group.clone().into());
            }
            d.insert("kind".into(), kind.clone().into());
        }
        if !details.causes.is_empty() {
            let causes: Vec<Value> = details
                .causes
                .iter()
                .map(|c| {
                    let mut v = json!({"reason": c.reason, "message": c.message});
                    if let (false, Some(o)) = (c.field.is_empty(), v.as_object_mut()) {
                        o.insert("field".into(), c.field.clone().into());
                    }
                    v
                })
                .collect();
            d.insert("causes".into(), causes.into());
        }
        if details.retry_after > 0 {
            d.insert("retryAfterSeconds".into(), details.retry_after.into());
        }
        if let (false, Some(o)) = (d.is_empty(), v.as_object_mut()) {
            o.insert("details".into(), d.into());
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
            ApiError::Invalid(v) => {
                // As upstream's NewInvalid: the kind (not the plural) and each field's cause,
                // which kubectl prints (`The PodDisruptionBudget "web" is invalid: spec: …`).
                let mut st = Status::invalid(def, name, v.to_string());
                let d = st.details_mut();
                d.about = Some((name.to_string(), def.group.to_string(), def.kind.to_string()));
                d.causes = v
                    .errors
                    .iter()
                    .map(|e| Cause {
                        reason: e.reason().into(),
                        message: e.body(),
                        field: e.field.clone(),
                    })
                    .collect();
                st
            }
            ApiError::ClaimTerminating(_) | ApiError::Quota(_) => Status::forbidden(e.to_string()),
            ApiError::Conflict(why) => Status::conflict(def, name, why),
            ApiError::Refused { code, message, cause, retry_after, budget } => {
                let reason = match code {
                    429 => "TooManyRequests",
                    403 => "Forbidden",
                    _ => "InternalError",
                };
                let mut st = Status::new(*code, reason, message.clone());
                if *code == 403 {
                    let name = budget.clone().unwrap_or_default();
                    let about = Some((name, "policy".into(), "poddisruptionbudget".into()));
                    st.details_mut().about = about;
                }
                let d = st.details_mut();
                d.causes = cause
                    .iter()
                    .map(|c| Cause {
                        reason: "DisruptionBudget".into(),
                        message: c.clone(),
                        field: String::new(),
                    })
                    .collect();
                d.retry_after = *retry_after;
                st
            }
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
