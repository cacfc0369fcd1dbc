//! The machinery of the operation registry: [`operations!`] turns one entry per operation into
//! the [`Operation`] enum and its exhaustive matches (name, scope, contract, handler), so no
//! operation can be routed, guarded or documented without the others.

use std::borrow::Cow;

use roastery_domain::FieldPath;
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

/// How an operation takes its input and answers, as documented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"data": Request}`.
    Write,
    /// `{"data": [Request]}`, at most 50 items.
    Bulk,
    /// `{"params": {"filter": Request, "pagination": ...}}` answering one result.
    Read,
    /// A read whose answer carries `meta.pagination.endCursor`.
    Page,
}

impl Shape {
    /// The member of the request that holds what the use case is given: the field paths the
    /// domain and the use cases name are relative to it.
    pub fn payload(self) -> FieldPath {
        match self {
            Self::Write | Self::Bulk => FieldPath::from("data"),
            Self::Read | Self::Page => FieldPath::from("params"),
        }
    }
}

/// A named schema and every schema it refers to.
pub struct SchemaSet {
    pub name: Cow<'static, str>,
    pub schemas: Vec<(String, RefOr<Schema>)>,
}

impl SchemaSet {
    pub fn of<T: ToSchema>() -> Self {
        let mut schemas = vec![(T::name().into_owned(), T::schema())];
        T::schemas(&mut schemas);
        Self {
            name: T::name(),
            schemas,
        }
    }
}

/// What the OpenAPI document says of an operation.
pub struct Contract {
    pub shape: Shape,
    pub summary: &'static str,
    pub request: SchemaSet,
    pub result: SchemaSet,
}

/// One entry per operation:
///
/// ```text
/// Variant {
///     name: "namespace.operation",
///     scope: ScopeVariant,              // the OAuth scope it needs
///     shape: Write<RequestDto, ResultDto>,  // or Bulk, Read, Page
///     handler: module::handler,         // async fn(Ctx<S>, &[u8]) -> Result<HttpResponse, ApiError>
///     summary: "One line for the document.",
/// }
/// ```
macro_rules! operations {
    ($(
        $variant:ident {
            name: $name:literal,
            scope: $scope:ident,
            shape: $shape:ident<$request:ty, $result:ty>,
            handler: $handler:path,
            summary: $summary:literal $(,)?
        }
    )*) => {
        /// Every operation of the API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Operation {
            $($variant,)*
        }

        impl Operation {
            /// Every operation, in the order of the document.
            pub const ALL: &'static [Operation] = &[$(Operation::$variant,)*];

            /// The operation called `name`, if there is one.
            pub fn find(name: &str) -> Option<Operation> {
                match name {
                    $($name => Some(Operation::$variant),)*
                    _ => None,
                }
            }

            pub fn name(self) -> &'static str {
                match self {
                    $(Operation::$variant => $name,)*
                }
            }

            /// How it takes its input: what its request's field paths are relative to.
            pub fn shape(self) -> $crate::ops::Shape {
                match self {
                    $(Operation::$variant => $crate::ops::Shape::$shape,)*
                }
            }

            /// The scope a token needs to call it.
            pub fn scope(self) -> roastery_domain::scope::Scope {
                match self {
                    $(Operation::$variant => roastery_domain::scope::Scope::$scope,)*
                }
            }

            pub fn contract(self) -> $crate::ops::Contract {
                match self {
                    $(Operation::$variant => $crate::ops::Contract {
                        shape: $crate::ops::Shape::$shape,
                        summary: $summary,
                        request: $crate::ops::SchemaSet::of::<$request>(),
                        result: $crate::ops::SchemaSet::of::<$result>(),
                    },)*
                }
            }

            /// Runs the operation's handler.
            pub(crate) async fn handle<S: roastery_ports::Store>(
                self,
                ctx: Ctx<S>,
                body: &[u8],
            ) -> Result<actix_web::HttpResponse, $crate::error::ApiError> {
                match self {
                    $(Operation::$variant => $handler(ctx, body).await,)*
                }
            }
        }
    };
}

pub(crate) use operations;
