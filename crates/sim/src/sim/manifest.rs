//! Reading Kubernetes manifests: multi-document YAML in which the StatefulSets are kept and every
//! other kind is skipped with a warning (`ststui sim -f FILE`, the scenario command `apply FILE`).
//!
//! Owns: splitting documents, kind / apiVersion checks, deserialization into k8s-openapi
//! `StatefulSet`, error positions (file and line). Must not touch: defaulting and validation
//! (the simulator's API layer applies `core::defaults` and `sim::validate` on create / update),
//! the store, stdout or stderr (warnings are returned; the caller prints them).

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::StatefulSet;
use serde_yaml_ng::Value;

/// The StatefulSets of a manifest, in document order, and what was skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub sets: Vec<StatefulSet>,
    /// Where each of `sets` was read, for the API's answer about it: `web.yaml:14 (document 2)`.
    pub places: Vec<String>,
    /// One line per skipped document, e.g. `web.yaml: document 2 (line 14) is a Service, not a
    /// StatefulSet: skipped`.
    pub warnings: Vec<String>,
}

impl Manifest {
    /// Each set with where it was read.
    pub fn located(&self) -> impl Iterator<Item = (&str, &StatefulSet)> {
        self.places.iter().map(String::as_str).zip(&self.sets)
    }
}

/// Why a manifest could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("{file}: cannot read the manifest: {message}")]
    Read { file: String, message: String },
    #[error("{file}:{line}: {message}")]
    Parse { file: String, line: usize, message: String },
}

impl ManifestError {
    /// The 1-based line the error points at, when it has one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ManifestError::Read { .. } => None,
            ManifestError::Parse { line, .. } => Some(*line),
        }
    }
}

/// Reads and parses the manifest at `path`.
pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
    let text = crate::sim::textfile::read(path).map_err(|e| ManifestError::Read {
        file: path.display().to_string(),
        message: e.to_string(),
    })?;
    parse(&path.display().to_string(), &text)
}

/// Resolves `file` against the directory of `relative_to` (a script), unless it is absolute.
pub fn resolve(relative_to: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match relative_to.parent() {
        Some(dir) => dir.join(p),
        None => p.to_path_buf(),
    }
}

/// One YAML document: its text and the 1-based line where its content starts in the file.
struct Doc<'a> {
    text: &'a str,
    first_line: usize,
}

/// Splits at `---` document markers (a line that is `---` or starts with `--- `) and `...` end
/// markers. Lines are kept whole, so positions inside a document map back to the file.
fn split_documents(text: &str) -> Vec<Doc<'_>> {
    let mut docs = Vec::new();
    let mut start = 0usize;
    let mut first_line = 1usize;
    let mut offset = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        let marker =
            bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t") || bare == "...";
        if marker {
            docs.push(Doc { text: &text[start..offset], first_line });
            start = offset + line.len();
            first_line = i + 2;
        }
        offset += line.len();
    }
    docs.push(Doc { text: &text[start..], first_line });
    docs
}

/// Removes serde_yaml's own ` at line L column C` suffix (the line is reported separately).
fn message_without_mark(err: &serde_yaml_ng::Error) -> String {
    let msg = err.to_string();
    match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains(" column ") => msg[..i].to_string(),
        _ => msg,
    }
}

fn parse_error(file: &str, doc: &Doc<'_>, err: &serde_yaml_ng::Error, what: &str) -> ManifestError {
    let line = err.location().map_or(doc.first_line, |l| doc.first_line + l.line() - 1);
    ManifestError::Parse {
        file: file.into(),
        line,
        message: format!("{what}{}", message_without_mark(err)),
    }
}

/// A field's path as kubectl writes it: `spec.template.spec.containers[0].imag`.
fn field_path(p: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match p {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", field_path(parent)),
        Path::Map { parent, key } => match field_path(parent) {
            s if s.is_empty() => key.to_string(),
            s => format!("{s}.{key}"),
        },
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => field_path(parent),
    }
}

/// The deepest flow nesting (`[`, `{`) a manifest may have; Kubernetes objects stay far below.
pub const MAX_NESTING: usize = 64;

/// Refuses flow collections nested deeper than [`MAX_NESTING`] in one linear pass, before the
/// YAML parser (whose cost grows much faster than the input on such text) sees them. Quotes and
/// comments are skipped; `Err((line, message))`.
fn nesting(doc: &Doc<'_>) -> Result<(), (usize, String)> {
    let (mut depth, mut line) = (0usize, doc.first_line);
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut prev = '\n';
    let mut chars = doc.text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            // A quoted scalar may span lines; a comment ends here.
            line += 1;
            comment = false;
        } else if comment {
            // skipped to the end of the line
        } else if let Some(q) = quote {
            if c == '\\' && q == '"' {
                chars.next();
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                '#' if prev.is_whitespace() => comment = true,
                '"' | '\'' if prev.is_whitespace() || "[{,:".contains(prev) => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err((
                            line,
                            format!(
                                "invalid YAML: nested deeper than {MAX_NESTING} levels; a \
                                 Kubernetes object never is"
                            ),
                        ));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        prev = c;
    }
    Ok(())
}

/// Parses manifest text; `file` names it in messages.
pub fn parse(file: &str, text: &str) -> Result<Manifest, ManifestError> {
    let mut out = Manifest::default();
    let mut index = 0usize;
    for doc in split_documents(text) {
        nesting(&doc).map_err(|(line, message)| ManifestError::Parse {
            file: file.into(),
            line,
            message,
        })?;
        let value: Value = serde_yaml_ng::from_str(doc.text)
            .map_err(|e| parse_error(file, &doc, &e, "invalid YAML: "))?;
        if value.is_null() {
            continue; // an empty document (comments only, or a leading `---`)
        }
        index += 1;
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let at = |what: String| ManifestError::Parse {
            file: file.into(),
            line: doc.first_line,
            message: format!("document {index}: {what}"),
        };
        if kind.is_empty() {
            return Err(at(
                "no `kind`; expected a Kubernetes object such as `kind: StatefulSet`".into()
            ));
        }
        if kind != "StatefulSet" {
            let name = value
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .map(|n| format!(" {n:?}"))
                .unwrap_or_default();
            out.warnings.push(format!(
                "{file}: document {index} (line {}) is a {kind}{name}, not a StatefulSet: skipped",
                doc.first_line
            ));
            continue;
        }
        if api_version != "apps/v1" {
            let found =
                if api_version.is_empty() { "none".to_string() } else { api_version.to_string() };
            return Err(at(format!(
                "a StatefulSet needs `apiVersion: apps/v1`, found {found} \
                 (apps/v1beta1 and apps/v1beta2 were removed in Kubernetes 1.16)"
            )));
        }
        // Strict, as kubectl's validation: a field the type does not have is refused by path.
        let mut unknown = Vec::new();
        let set: StatefulSet =
            serde_ignored::deserialize(serde_yaml_ng::Deserializer::from_str(doc.text), |path| {
                unknown.push(field_path(&path))
            })
            .map_err(|e| {
                parse_error(file, &doc, &e, &format!("document {index}: not a valid StatefulSet: "))
            })?;
        if let Some(path) = unknown.first() {
            let leaf = path.rsplit('.').next().unwrap_or(path);
            let line = doc
                .text
                .lines()
                .position(|l| {
                    l.trim_start().trim_start_matches("- ").starts_with(&format!("{leaf}:"))
                })
                .map_or(doc.first_line, |i| doc.first_line + i);
            return Err(ManifestError::Parse {
                file: file.into(),
                line,
                message: format!(
                    "document {index}: unknown field \"{path}\" (a StatefulSet has no such \
                     field; strict validation refuses it, as kubectl does)"
                ),
            });
        }
        if set.metadata.name.as_deref().unwrap_or("").is_empty() {
            return Err(at("the StatefulSet has no `metadata.name`; expected a name".into()));
        }
        out.sets.push(set);
        out.places.push(format!("{file}:{} (document {index})", doc.first_line));
    }
    Ok(out)
}
