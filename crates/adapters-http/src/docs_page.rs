//! `GET /docs`: the API reference as one server-rendered HTML page, generated from the OpenAPI
//! document: every operation with its scope, request and response fields and errors.
//!
//! The page is self-contained (an inline style sheet, no script, nothing from another host), so it
//! reads the same on a machine without internet; its Content-Security-Policy forbids anything else.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::OnceLock;

use actix_web::HttpResponse;
use actix_web::http::header;
use serde_json::{Map, Value};

/// The page forbids every outside resource and every script.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How deep nested fields are listed; deeper ones are named by their type only.
const MAX_DEPTH: usize = 8;

const STYLE: &str = "
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#222;background:#fdfcfa}
main{max-width:72rem;margin:0 auto;padding:1rem 2rem 4rem}
h1{margin-bottom:0}h2{border-bottom:2px solid #6f4e37;padding-bottom:.2rem;margin-top:2.5rem}
section.op{border:1px solid #ddd;border-radius:6px;padding:0 1rem 1rem;margin:1.2rem 0;background:#fff}
code{font:13px ui-monospace,monospace;background:#f3efe9;padding:0 .2rem;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.3rem 0 .8rem}
th,td{text-align:left;vertical-align:top;border-bottom:1px solid #eee;padding:.2rem .5rem}
th{background:#f7f3ee}td.req{white-space:nowrap}
nav ul{columns:2 22rem}a{color:#6f4e37}.scope{color:#555}
";

/// The page, rendered once.
pub async fn page() -> HttpResponse {
    static PAGE: OnceLock<String> = OnceLock::new();
    let html = PAGE.get_or_init(|| {
        let doc = serde_json::to_value(crate::openapi::document()).unwrap_or_default();
        render(&doc)
    });
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .body(html.clone())
}

pub use crate::html::escape_html as escape;

/// The value at `path` inside `value`, or null.
fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    static NULL: Value = Value::Null;
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .unwrap_or(&NULL)
}

/// One documented operation.
struct Operation<'a> {
    name: &'a str,
    summary: &'a str,
    scope: String,
    request: Option<&'a Value>,
    result: Option<&'a Value>,
    meta: Option<&'a Value>,
    errors: Vec<(&'a str, &'a str)>,
}

fn operations(doc: &Value) -> Vec<Operation<'_>> {
    let Some(paths) = at(doc, &["paths"]).as_object() else {
        return Vec::new();
    };
    let mut ops = Vec::new();
    for (path, item) in paths {
        let Some(op) = item.get("post") else { continue };
        let name = at(op, &["operationId"]).as_str().unwrap_or(path.as_str());
        let scope = at(op, &["security"])
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|req| req.as_object())
            .flat_map(|req| req.values())
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" ");
        let success = at(
            op,
            &["responses", "200", "content", "application/json", "schema"],
        );
        let errors = at(op, &["responses"])
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(status, _)| status.as_str() != "200")
            .map(|(status, r)| {
                (
                    status.as_str(),
                    at(r, &["description"]).as_str().unwrap_or(""),
                )
            })
            .collect();
        ops.push(Operation {
            name,
            summary: at(op, &["summary"]).as_str().unwrap_or(""),
            scope,
            request: at(op, &["requestBody", "content", "application/json"])
                .get("schema")
                .filter(|s| !s.is_null()),
            result: at(success, &["properties"]).get("result"),
            meta: at(success, &["properties"]).get("meta"),
            errors,
        });
    }
    ops.sort_by(|a, b| (&a.scope, a.name).cmp(&(&b.scope, b.name)));
    ops
}

/// One row of a field table.
struct Field {
    path: String,
    kind: String,
    required: bool,
    description: String,
}

/// Walks schemas, resolving `$ref`s against the document's components.
struct Walker<'a> {
    schemas: &'a Map<String, Value>,
    rows: Vec<Field>,
}

fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix("#/components/schemas/")
}

impl<'a> Walker<'a> {
    fn resolve(&self, schema: &'a Value) -> &'a Value {
        let mut schema = schema;
        // A chain of references cannot be longer than the number of schemas without a cycle.
        for _ in 0..=self.schemas.len() {
            match ref_name(schema).and_then(|name| self.schemas.get(name)) {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    /// `string (uuid)`, `array of NameRef`, `Instant or null`…
    fn kind(&self, schema: &Value) -> String {
        if let Some(name) = ref_name(schema) {
            return name.to_owned();
        }
        if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
            let mut kinds: Vec<String> = variants.iter().map(|v| self.kind(v)).collect();
            // `X or null` reads better than `null or X`.
            kinds.sort_by_key(|k| k == "null");
            return kinds.join(" or ");
        }
        let types: Vec<&str> = match at(schema, &["type"]) {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let mut parts: Vec<String> = types
            .iter()
            .map(|t| match *t {
                "array" => format!("array of {}", self.kind(at(schema, &["items"]))),
                "null" => "null".to_owned(),
                t => match at(schema, &["format"]).as_str() {
                    Some(format) => format!("{t} ({format})"),
                    None => t.to_owned(),
                },
            })
            .collect();
        if let Some(values) = at(schema, &["enum"]).as_array() {
            let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            parts.push(format!("one of {}", values.join(", ")));
        }
        if parts.is_empty() {
            "any".to_owned()
        } else {
            parts.join(" or ")
        }
    }

    /// Lists the fields inside `schema` under `prefix`.
    fn walk(&mut self, schema: &'a Value, prefix: &str, seen: &mut Vec<&'a str>) {
        if seen.len() >= MAX_DEPTH {
            return;
        }
        if let Some(name) = ref_name(schema) {
            // A schema inside itself (a tree) is listed once.
            if seen.contains(&name) {
                return;
            }
            seen.push(name);
            self.walk(self.resolve(schema), prefix, seen);
            seen.pop();
            return;
        }
        if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
            for variant in variants {
                self.walk(variant, prefix, seen);
            }
            return;
        }
        if let Some(items) = schema.get("items") {
            self.walk(items, &format!("{prefix}[]"), seen);
        }
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        let required: Vec<&str> = at(schema, &["required"])
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (name, property) in properties {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let description = at(property, &["description"])
                .as_str()
                .or_else(|| {
                    // A nullable reference keeps its description on the reference.
                    at(property, &["oneOf"])
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find_map(|v| at(v, &["description"]).as_str())
                })
                .or_else(|| at(self.resolve(property), &["description"]).as_str())
                .unwrap_or("");
            self.rows.push(Field {
                path: path.clone(),
                kind: self.kind(property),
                required: required.contains(&name.as_str()),
                description: description.to_owned(),
            });
            self.walk(property, &path, seen);
        }
    }
}

fn fields<'a>(schemas: &'a Map<String, Value>, schema: &'a Value, prefix: &str) -> Vec<Field> {
    let mut walker = Walker {
        schemas,
        rows: Vec::new(),
    };
    walker.walk(schema, prefix, &mut Vec::new());
    walker.rows
}

fn table(out: &mut String, rows: &[Field]) {
    if rows.is_empty() {
        out.push_str("<p><em>No fields.</em></p>\n");
        return;
    }
    out.push_str(
        "<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th></tr></thead><tbody>\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"req\">{}</td><td>{}</td></tr>",
            escape(&row.path),
            escape(&row.kind),
            if row.required { "yes" } else { "no" },
            escape(&row.description),
        );
    }
    out.push_str("</tbody></table>\n");
}

/// An HTML id for an operation name (names are dotted identifiers; anything else is dropped).
fn anchor(name: &str) -> String {
    let id: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .collect();
    format!("op-{id}")
}

/// The whole page for an OpenAPI document.
pub fn render(doc: &Value) -> String {
    let empty = Map::new();
    let schemas = at(doc, &["components", "schemas"])
        .as_object()
        .unwrap_or(&empty);
    let ops = operations(doc);
    let title = at(doc, &["info", "title"])
        .as_str()
        .unwrap_or("API reference");
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} reference</title><style>{STYLE}</style></head><body><main>\n\
         <h1>{title}</h1><p>Version {version}. {description}</p>\n",
        title = escape(title),
        version = escape(at(doc, &["info", "version"]).as_str().unwrap_or("")),
        description = escape(at(doc, &["info", "description"]).as_str().unwrap_or("")),
    );
    out.push_str(
        "<h2 id=\"calling\">Calling an operation</h2>\n\
         <p>Get a token with the OAuth 2.0 client credentials grant: <code>POST /oauth2/token</code> \
         with <code>grant_type=client_credentials</code>, the service account's client id and \
         secret (form fields or HTTP Basic) and, optionally, <code>scope</code>. Then \
         <code>POST /rpc/v1/{operation}</code> with <code>Authorization: Bearer {token}</code> and \
         <code>Content-Type: application/json</code>. A write sends <code>{\"data\": …}</code>, a \
         read <code>{\"params\": {\"filter\": …, \"pagination\": …}}</code>. Success answers \
         <code>{\"ok\": true, \"result\": …, \"meta\": …}</code>; a failure answers \
         <code>{\"ok\": false, \"error\": {\"code\", \"message\", \"details\"}}</code>. Every \
         response carries <code>X-Request-Id</code>. The machine-readable document is at \
         <a href=\"/rpc/v1/openapi.json\"><code>/rpc/v1/openapi.json</code></a>.</p>\n",
    );
    let mut by_scope: BTreeMap<&str, Vec<&Operation>> = BTreeMap::new();
    for op in &ops {
        by_scope.entry(op.scope.as_str()).or_default().push(op);
    }
    let _ = writeln!(
        out,
        "<h2 id=\"operations\">Operations ({})</h2><nav><ul>",
        ops.len()
    );
    for op in &ops {
        let _ = writeln!(
            out,
            "<li><a href=\"#{}\"><code>{}</code></a> <span class=\"scope\">{}</span></li>",
            anchor(op.name),
            escape(op.name),
            escape(&op.scope),
        );
    }
    out.push_str("</ul></nav>\n");
    for (scope, ops) in &by_scope {
        let _ = writeln!(out, "<h2>Scope <code>{}</code></h2>", escape(scope));
        for op in ops {
            let _ = writeln!(
                out,
                "<section class=\"op\" id=\"{id}\"><h3 class=\"operation\"><code>{name}</code></h3>\
                 <p>{summary}</p><p>Endpoint: <code>POST /rpc/v1/{name}</code> · scope: \
                 <code class=\"op-scope\">{scope}</code></p>",
                id = anchor(op.name),
                name = escape(op.name),
                summary = escape(op.summary),
                scope = escape(&op.scope),
            );
            out.push_str("<h4>Request body</h4>\n");
            let request = op
                .request
                .map(|s| fields(schemas, s, ""))
                .unwrap_or_default();
            table(&mut out, &request);
            out.push_str("<h4>Response <code>result</code></h4>\n");
            let mut response = op
                .result
                .map(|s| fields(schemas, s, "result"))
                .unwrap_or_default();
            if let Some(meta) = op.meta {
                response.extend(fields(schemas, meta, "meta"));
            }
            table(&mut out, &response);
            out.push_str("<h4>Errors</h4><ul>\n");
            for (status, description) in &op.errors {
                let _ = writeln!(
                    out,
                    "<li><code>{}</code>: {} (in the error envelope)</li>",
                    escape(status),
                    escape(description)
                );
            }
            let _ = writeln!(
                out,
                "<li><code>403</code> <code>forbidden</code> unless the token holds scope \
                 <code>{}</code></li></ul></section>",
                escape(&op.scope)
            );
        }
    }
    if let Some(envelope) = schemas.get("ErrorEnvelope") {
        out.push_str("<h2 id=\"errors\">Error envelope</h2>\n");
        table(&mut out, &fields(schemas, envelope, ""));
    }
    out.push_str("</main></body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> String {
        render(&serde_json::to_value(crate::openapi::document()).unwrap())
    }

    #[test]
    fn every_operation_is_on_the_page_with_its_scope() {
        let html = page();
        for name in roastery_domain::operation::Operation::ALL
            .iter()
            .map(|op| op.name())
        {
            let scope = roastery_domain::scope::Scope::of_operation(name).unwrap();
            let heading = format!("<h3 class=\"operation\"><code>{name}</code></h3>");
            let section = html
                .split(&heading)
                .nth(1)
                .unwrap_or_else(|| panic!("{name} has no section"));
            let section = section.split("</section>").next().unwrap();
            assert!(
                section.contains(&format!("<code class=\"op-scope\">{scope}</code>")),
                "{name}: scope {scope} missing"
            );
            assert!(section.contains("<h4>Request body</h4>"), "{name}");
        }
    }

    /// The part of the page that documents `operation`.
    fn operation_section<'a>(html: &'a str, operation: &str) -> &'a str {
        html.split(&format!("<code>{operation}</code></h3>"))
            .nth(1)
            .unwrap()
            .split("</section>")
            .next()
            .unwrap()
    }

    #[test]
    fn referenced_fields_are_resolved() {
        let html = page();
        // listProjects answers ProjectsResult; a write sends `data` with the DTO's own fields.
        let section = operation_section(&html, "inventory.green.importGreenLot");
        assert!(
            section.contains("<code>data.weight.unit</code>"),
            "{section}"
        );
        assert!(
            section.contains("<td>string (uuid) or null</td>"),
            "{section}"
        );
        assert!(section.contains("<code>result"), "{section}");
        assert!(!html.contains("$ref"));
    }

    #[test]
    fn required_request_fields_read_as_required_and_not_null() {
        let html = page();
        let section = operation_section(&html, "inventory.green.importGreenLot");
        for row in [
            "<tr><td><code>data.name</code></td><td>string</td><td class=\"req\">yes</td>",
            "<tr><td><code>data.weight.amount</code></td><td>Amount</td><td class=\"req\">yes</td>",
            "<tr><td><code>data.icoNumber</code></td><td>string or null</td><td class=\"req\">no</td>",
        ] {
            assert!(section.contains(row), "{row} not in {section}");
        }
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        let html = page();
        assert!(!html.contains("<script"));
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(!html.contains("<link"));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
        let doc = serde_json::json!({
            "info": {"title": "<script>alert(1)</script>"},
            "paths": {"/rpc/v1/x": {"post": {
                "operationId": "a<b", "summary": "\"quoted\" & <b>",
                "requestBody": {"content": {"application/json": {"schema":
                    {"type": "object", "properties": {"<img>": {"type": "string", "description": "<i>"}}}}}}
            }}}
        });
        let html = render(&doc);
        assert!(!html.contains("<script>") && !html.contains("<img>") && !html.contains("<i>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("a&lt;b"));
    }

    #[test]
    fn a_schema_inside_itself_ends() {
        let doc = serde_json::json!({
            "components": {"schemas": {"Node": {"type": "object", "properties": {
                "child": {"$ref": "#/components/schemas/Node"}, "name": {"type": "string"}}}}},
            "paths": {"/rpc/v1/t": {"post": {"operationId": "t.tree",
                "requestBody": {"content": {"application/json": {"schema":
                    {"$ref": "#/components/schemas/Node"}}}}}}}
        });
        let html = render(&doc);
        assert!(html.contains("<code>child</code>") && html.contains("<code>name</code>"));
        assert!(!html.contains("child.child.child"));
    }
}
