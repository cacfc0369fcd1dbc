//! The OpenAPI document, derived from the operation registry and the DTOs' `ToSchema` derives:
//! one `POST` path per operation, guarded by its scope, its request shape (`{"data": ...}` or `{"params": {"filter", "pagination"}}`), its
//! result in the success envelope, and the error envelope.

use utoipa::ToSchema;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{
    ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::security::{
    ClientCredentials, Flow, OAuth2, Scopes, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathsBuilder, Ref,
    RefOr, ServerBuilder,
};

use crate::error::ErrorDetail;
use crate::ops::{Contract, Entry, Operation, SchemaSet, Shape};
use crate::wire::PaginationDto;

/// Every error status an operation can answer (api-decisions §2), with what it means; the
/// body is the error envelope. 405 is not listed: it answers methods and names the document
/// does not have.
const ERRORS: &[(&str, &str)] = &[
    (
        "400",
        "invalid_json, invalid_request (content type, size), missing_parameter, \
         invalid_parameter, unsupported_unit, unsupported_currency",
    ),
    (
        "401",
        "invalid_authentication: no, unknown, expired or revoked token",
    ),
    (
        "403",
        "access_denied: the token lacks the operation's scope",
    ),
    (
        "422",
        "resource_not_found, invalid_weight, invalid_price, resource_conflict, invalid_request, \
         bulk_operation_failed",
    ),
    ("429", "too_many_requests (Retry-After set)"),
    ("500", "server_error: anything unexpected"),
    (
        "503",
        "server_error: database busy or unreachable, a row lock not granted in time \
         (Retry-After set)",
    ),
];

/// Reads whose filter must be given though none of its fields is required on its own:
/// "exactly one of `lotId` or `orderId`" (api-decisions §12).
const FILTER_REQUIRED: &[&str] = &["inventory.trace.getDueDiligence"];

/// Collects operations and the schemas they use.
pub struct ApiDoc {
    paths: PathsBuilder,
    schemas: Vec<(String, RefOr<Schema>)>,
}

fn reference<T: ToSchema>() -> RefOr<Schema> {
    named(&T::name())
}

fn named(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

/// `schema` or `null`, as utoipa writes an optional reference.
fn or_null(schema: RefOr<Schema>) -> RefOr<Schema> {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(SchemaType::Type(Type::Null)))
        .item(schema)
        .into()
}

fn object() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::Type(Type::Object))
}

impl ApiDoc {
    fn new() -> Self {
        Self {
            paths: PathsBuilder::new(),
            schemas: Vec::new(),
        }
    }

    fn register<T: ToSchema>(&mut self) {
        self.register_set(SchemaSet::of::<T>());
    }

    fn register_set(&mut self, set: SchemaSet) {
        self.schemas.extend(set.schemas);
    }

    fn add(
        &mut self,
        name: &str,
        scope: String,
        summary: &str,
        request: RefOr<Schema>,
        result: RefOr<Schema>,
        paged: bool,
    ) {
        let meta = if paged {
            object()
                .property(
                    "pagination",
                    object().property(
                        "endCursor",
                        ObjectBuilder::new()
                            .schema_type(SchemaType::from_iter([Type::String, Type::Null])),
                    ),
                )
                .into()
        } else {
            RefOr::T(Schema::Object(object().build()))
        };
        let envelope = object()
            .property(
                "ok",
                ObjectBuilder::new().schema_type(SchemaType::Type(Type::Boolean)),
            )
            .property("result", result)
            .property("meta", meta)
            .required("ok")
            .required("result")
            .required("meta");
        let operation = OperationBuilder::new()
            .operation_id(Some(name))
            .summary(Some(summary))
            .tag(scope.clone())
            .security(SecurityRequirement::new("oauth2", [scope]))
            .request_body(Some(
                RequestBodyBuilder::new()
                    .required(Some(utoipa::openapi::Required::True))
                    .content(
                        "application/json",
                        ContentBuilder::new().schema(Some(request)).build(),
                    )
                    .build(),
            ))
            .response(
                "200",
                ResponseBuilder::new().description("success").content(
                    "application/json",
                    ContentBuilder::new().schema(Some(envelope)).build(),
                ),
            );
        let operation = ERRORS
            .iter()
            .fold(operation, |operation, (status, description)| {
                operation.response(
                    *status,
                    ResponseBuilder::new().description(*description).content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(RefOr::Ref(Ref::from_schema_name("ErrorEnvelope"))))
                            .build(),
                    ),
                )
            })
            .build();
        let path = std::mem::take(&mut self.paths);
        self.paths = path.path(
            format!("/rpc/v1/{name}"),
            PathItem::new(HttpMethod::Post, operation),
        );
    }

    /// An operation of the registry, with its request shape and its result in the envelope.
    fn operation(&mut self, operation: Operation) {
        let Contract {
            shape,
            summary,
            request,
            result,
        } = operation.contract();
        let (request_ref, result_ref) = (named(&request.name), named(&result.name));
        let filter_required =
            has_required_fields(&request) || FILTER_REQUIRED.contains(&operation.name());
        self.register_set(request);
        self.register_set(result);
        let request = match shape {
            Shape::Write => object()
                .property("data", request_ref)
                .required("data")
                .into(),
            Shape::Bulk => object()
                .property(
                    "data",
                    ArrayBuilder::new().items(request_ref).max_items(Some(50)),
                )
                .required("data")
                .into(),
            Shape::Read | Shape::Page => {
                // What may be absent may also be null (it means the same).
                let pagination = or_null(reference::<PaginationDto>());
                // `params` may be absent only when the filter is not required.
                if filter_required {
                    let params = object()
                        .property("filter", request_ref)
                        .property("pagination", pagination)
                        .required("filter");
                    object()
                        .property("params", params)
                        .required("params")
                        .into()
                } else {
                    let params = object()
                        .property("filter", or_null(request_ref))
                        .property("pagination", pagination);
                    object().property("params", or_null(params.into())).into()
                }
            }
        };
        self.add(
            operation.name(),
            operation.scope().as_str().to_owned(),
            summary,
            request,
            result_ref,
            shape == Shape::Page,
        );
    }
}

/// Whether the object a schema set is named after lists required fields.
fn has_required_fields(set: &SchemaSet) -> bool {
    set.schemas
        .iter()
        .find(|(name, _)| *name == set.name)
        .is_some_and(|(_, schema)| {
            matches!(schema, RefOr::T(Schema::Object(object)) if !object.required.is_empty())
        })
}

/// The whole document.
pub fn document() -> OpenApi {
    let mut doc = ApiDoc::new();
    doc.register::<PaginationDto>();
    doc.register::<ErrorDetail>();
    for operation in Operation::ALL {
        doc.operation(*operation);
    }
    let error_envelope = object()
        .property(
            "ok",
            ObjectBuilder::new().schema_type(SchemaType::Type(Type::Boolean)),
        )
        .property(
            "error",
            object()
                .property(
                    "code",
                    ObjectBuilder::new().schema_type(SchemaType::Type(Type::String)),
                )
                .property(
                    "message",
                    ObjectBuilder::new().schema_type(SchemaType::Type(Type::String)),
                )
                .property(
                    "details",
                    ArrayBuilder::new().items(reference::<ErrorDetail>()),
                )
                .required("code")
                .required("message"),
        )
        .required("ok")
        .required("error");
    let scopes = Scopes::from_iter(
        roastery_domain::scope::Scope::ALL
            .into_iter()
            .map(|s| (s.as_str().to_owned(), format!("operations of {s}"))),
    );
    let mut components = ComponentsBuilder::new()
        .schema("ErrorEnvelope", error_envelope)
        .security_scheme(
            "oauth2",
            SecurityScheme::OAuth2(OAuth2::new([Flow::ClientCredentials(
                ClientCredentials::new("/oauth2/token", scopes),
            )])),
        );
    for (name, schema) in doc.schemas {
        components = components.schema(name, schema);
    }
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Roastery RPC API")
                .version("v1")
                .description(Some(
                    "Inventory, quality and order operations for coffee roasteries. Every \
                     operation is a POST to /rpc/v1/{namespace}.{operation}; tokens come from the \
                     OAuth 2.0 client credentials grant at /oauth2/token.",
                ))
                .build(),
        )
        .servers(Some([ServerBuilder::new().url("/").build()]))
        .paths(doc.paths.build())
        .components(Some(components.build()))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json() -> serde_json::Value {
        serde_json::from_str(&document().to_json().unwrap()).unwrap()
    }

    #[test]
    fn every_operation_has_a_post_path() {
        let doc = json();
        let names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
        assert_eq!(names.len(), 56);
        for name in names {
            let path = &doc["paths"][format!("/rpc/v1/{name}")]["post"];
            assert_eq!(path["operationId"], name, "{name} is not documented");
            assert!(
                path["requestBody"].is_object(),
                "{name} has no request body"
            );
        }
    }

    #[test]
    fn every_schema_reference_resolves() {
        let doc = json();
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for part in text.split("\"#/components/schemas/").skip(1) {
            let name = part.split('"').next().unwrap();
            assert!(
                schemas.contains_key(name),
                "{name} is referenced but not defined"
            );
        }
    }

    /// Required fields as the contract states them (api-decisions.md §6 and §8 mark them with
    /// `*`; rpc-spec.md gives the weight and order item fields): operation, the path of an
    /// object within the request's `data` or `params.filter` (empty for that object itself),
    /// and its required fields.
    const CONTRACT_REQUIRED: &[(&str, &str, &[&str])] = &[
        (
            "inventory.green.importGreenLot",
            "",
            &["name", "externalId", "weight"],
        ),
        (
            "inventory.green.importGreenLot",
            "weight",
            &["amount", "unit"],
        ),
        (
            "inventory.green.transferGreenLotToLocation",
            "",
            &["greenLotId", "weight", "destinationLocationId"],
        ),
        (
            "inventory.roast.recordRoast",
            "",
            &["name", "locationId", "roastedDate", "weight", "greenLots"],
        ),
        (
            "quality.cupping.createCupping",
            "",
            &["startDate", "cuppingSheet", "coffees"],
        ),
        ("quality.cupping.createCupping", "cuppingSheet", &["name"]),
        (
            "mrp.order.setOrders",
            "",
            &["externalId", "orderDate", "orderItems"],
        ),
        ("mrp.order.setOrders", "orderItems", &["sku", "quantity"]),
        (
            "mrp.order.shipOrder",
            "",
            &["orderId", "shippedDate", "allocations"],
        ),
        (
            "mrp.order.shipOrder",
            "allocations",
            &["sku", "lotId", "quantity"],
        ),
        ("inventory.trace.traceLot", "", &["lotId", "direction"]),
        (
            "inventory.roast.recordRoast",
            "greenLots",
            &["id", "usedWeight"],
        ),
        (
            "inventory.blend.createBlend",
            "",
            &["name", "locationId", "blendedDate", "roastedLots"],
        ),
        (
            "inventory.blend.createBlend",
            "roastedLots",
            &["id", "usedWeight"],
        ),
        ("inventory.roast.importRoastLog", "greenLots", &["id"]),
        (
            "inventory.green.setDueDiligence",
            "",
            &[
                "greenLotId",
                "countryOfProduction",
                "productionPeriod",
                "plots",
            ],
        ),
        (
            "inventory.green.setDueDiligence",
            "productionPeriod",
            &["from", "to"],
        ),
        ("inventory.green.setDueDiligence", "suppliers", &["name"]),
        (
            "inventory.green.setDueDiligence",
            "statements",
            &["referenceNumber", "kind", "role"],
        ),
        (
            "inventory.green.setGreenLotWeight",
            "",
            &["greenLotId", "weight"],
        ),
        ("core.location.importLocation", "", &["name"]),
        ("core.project.importProject", "", &["name"]),
        ("core.event.createWebhook", "", &["url"]),
    ];

    #[test]
    fn every_operation_lists_every_error_status_it_can_answer() {
        let doc = json();
        for op in Operation::ALL {
            let responses = &doc["paths"][format!("/rpc/v1/{}", op.name())]["post"]["responses"];
            for status in ["200", "400", "401", "403", "422", "429", "500", "503"] {
                assert!(
                    responses[status].is_object(),
                    "{} does not list {status}",
                    op.name()
                );
            }
            assert!(responses["default"].is_null(), "{}", op.name());
        }
    }

    /// The object a schema stands for: through `$ref`s, array items and a nullable `oneOf`.
    fn resolve<'a>(
        doc: &'a serde_json::Value,
        schema: &'a serde_json::Value,
    ) -> &'a serde_json::Value {
        if let Some(name) = schema["$ref"].as_str() {
            let name = name.trim_start_matches("#/components/schemas/");
            return resolve(doc, &doc["components"]["schemas"][name]);
        }
        if schema["items"].is_object() {
            return resolve(doc, &schema["items"]);
        }
        if let Some(other) = schema["oneOf"]
            .as_array()
            .and_then(|one_of| one_of.iter().find(|s| s["type"] != "null"))
        {
            return resolve(doc, other);
        }
        schema
    }

    fn nullable(schema: &serde_json::Value) -> bool {
        let null = serde_json::Value::from("null");
        schema["nullable"] == true
            || schema["type"] == null
            || schema["type"].as_array().is_some_and(|t| t.contains(&null))
            || schema["oneOf"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["type"] == null))
    }

    /// The object a write sends as `data` (each item of a bulk call), or a read as `params.filter`.
    fn request_object<'a>(doc: &'a serde_json::Value, operation: &str) -> &'a serde_json::Value {
        let body = &doc["paths"][format!("/rpc/v1/{operation}")]["post"]["requestBody"]["content"]
            ["application/json"]["schema"]["properties"];
        if body["data"].is_object() {
            resolve(doc, &body["data"])
        } else {
            resolve(doc, &body["params"]["properties"]["filter"])
        }
    }

    /// Schema names are type names: two request or answer types of one name would silently
    /// share one schema in the document, and one of them would be documented wrongly.
    #[test]
    fn no_two_types_share_a_schema_name() {
        let mut doc = ApiDoc::new();
        for operation in Operation::ALL {
            doc.operation(*operation);
        }
        let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        for (name, schema) in &doc.schemas {
            let text = serde_json::to_string(schema).unwrap();
            if let Some(earlier) = seen.insert(name.clone(), text.clone()) {
                assert_eq!(earlier, text, "two types are named {name}");
            }
        }
    }

    #[test]
    fn request_schemas_require_exactly_the_contracts_required_fields() {
        let doc = json();
        for (operation, path, expected) in CONTRACT_REQUIRED {
            let mut object = request_object(&doc, operation);
            for step in path.split('.').filter(|s| !s.is_empty()) {
                object = resolve(&doc, &object["properties"][step]);
            }
            let mut required: Vec<&str> = object["required"]
                .as_array()
                .map(|r| r.iter().filter_map(|f| f.as_str()).collect())
                .unwrap_or_default();
            required.sort_unstable();
            let mut expected = expected.to_vec();
            expected.sort_unstable();
            assert_eq!(required, expected, "{operation} {path}");
            for field in expected {
                let property = &object["properties"][field];
                assert!(
                    property.is_object(),
                    "{operation} {path}.{field} is not documented"
                );
                assert!(
                    !nullable(property),
                    "{operation} {path}.{field} is nullable"
                );
            }
        }
    }

    #[test]
    fn params_are_required_exactly_when_the_filter_is() {
        let doc = json();
        let required = |schema: &serde_json::Value, field: &str| {
            schema["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|f| f == field))
        };
        for (operation, must) in [
            ("inventory.trace.traceLot", true),
            ("inventory.green.getGreenLotDetailsByIds", true),
            ("inventory.roast.getRoastCurvesById", true),
            ("inventory.trace.getDueDiligence", true),
            ("inventory.green.listGreenLots", false),
            ("core.location.listLocations", false),
        ] {
            let body = &doc["paths"][format!("/rpc/v1/{operation}")]["post"]["requestBody"]["content"]
                ["application/json"]["schema"];
            let params = &body["properties"]["params"];
            assert_eq!(required(body, "params"), must, "{operation} params");
            assert_eq!(
                required(params, "filter"),
                must,
                "{operation} params.filter"
            );
        }
    }

    #[test]
    fn the_nullability_check_sees_both_spellings_of_null() {
        let null_type = serde_json::json!({"type": ["string", "null"]});
        let null_ref = serde_json::json!({"oneOf": [{"type": "null"}, {"$ref": "#/x"}]});
        let plain = serde_json::json!({"type": "string", "format": "uuid"});
        assert!(nullable(&null_type));
        assert!(nullable(&null_ref));
        assert!(!nullable(&plain));
    }

    #[test]
    fn the_committed_document_is_current() {
        let committed = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/openapi.json"
        ))
        .unwrap_or_default();
        assert!(
            committed.trim() == document().to_pretty_json().unwrap().trim(),
            "docs/openapi.json is stale: run `cargo run -p roastery-server -- openapi > docs/openapi.json`"
        );
    }
}
