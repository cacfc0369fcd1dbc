//! The machinery of the operation registry: [`operations!`] turns one entry per operation of
//! `roastery_domain::operation::Operation` into exhaustive matches (scope, contract, handler), so
//! no operation can be routed, guarded or documented without the others.

use std::borrow::Cow;

use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

pub use crate::shape::Shape;

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

/// One entry per operation of [`Operation`], named by its variant:
///
/// ```text
/// Variant {
///     scope: ScopeVariant,              // the OAuth scope it needs
///     shape: Write<RequestDto, ResultDto>,  // or Bulk, Read, Page
///     handler: module::handler,         // async fn(Ctx<S>, &[u8]) -> Result<HttpResponse, ApiError>
///     summary: "One line for the document.",
/// }
/// ```
///
/// The matches it writes list no other arm, so an operation without an entry fails to compile,
/// and one with two entries too (an unreachable arm).
macro_rules! operations {
    ($(
        $variant:ident {
            scope: $scope:ident,
            shape: $shape:ident<$request:ty, $result:ty>,
            handler: $handler:path,
            summary: $summary:literal $(,)?
        }
    )*) => {
        /// The entries, in the order they are written (a test holds it to [`Operation::ALL`]).
        #[cfg(test)]
        const ENTRIES: &[Operation] = &[$(Operation::$variant,)*];

        /// What the registry knows of an operation beside its name.
        pub(crate) trait Entry {
            /// The scope a token needs to call it.
            fn scope(self) -> roastery_domain::scope::Scope;

            /// How it takes its input: what its request's field paths are relative to.
            fn shape(self) -> $crate::ops::Shape;

            fn contract(self) -> $crate::ops::Contract;

            /// Runs the operation's handler.
            async fn handle<S: roastery_ports::Store>(
                self,
                ctx: Ctx<S>,
                body: &[u8],
            ) -> Result<actix_web::HttpResponse, $crate::error::ApiError>;
        }

        #[deny(unreachable_patterns)]
        impl Entry for Operation {
            fn scope(self) -> roastery_domain::scope::Scope {
                match self {
                    $(Operation::$variant => roastery_domain::scope::Scope::$scope,)*
                }
            }

            fn shape(self) -> $crate::ops::Shape {
                match self {
                    $(Operation::$variant => $crate::ops::Shape::$shape,)*
                }
            }

            fn contract(self) -> $crate::ops::Contract {
                match self {
                    $(Operation::$variant => $crate::ops::Contract {
                        shape: $crate::ops::Shape::$shape,
                        summary: $summary,
                        request: $crate::ops::SchemaSet::of::<$request>(),
                        result: $crate::ops::SchemaSet::of::<$result>(),
                    },)*
                }
            }

            async fn handle<S: roastery_ports::Store>(
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
