//! The operations, one module per namespace. A handler decodes its DTO, calls one use case and
//! encodes the answer; rules live in the domain.

mod blend;
mod core;
mod cupping;
mod green;
mod mrp;
mod physical;
mod roast;
mod trace;

use std::sync::Arc;

use actix_web::HttpResponse;
use actix_web::web::Bytes;
use roastery_domain::page::{PageRequest, Position};
use roastery_domain::scope::Scope;
use roastery_ports::{AppError, Caller, Roastery, Store};
use serde::Serialize;

use crate::error::ApiError;
use crate::state::AppState;
use crate::wire::{Envelope, NoMeta, PageInfo, PageMeta, PaginationDto};

/// A known operation and the scope it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    pub name: &'static str,
    pub scope: Scope,
}

/// Every operation, by namespace.
fn operations(scope: Scope) -> &'static [&'static str] {
    match scope {
        Scope::CoreLocation | Scope::CoreProject => core::OPERATIONS,
        Scope::MrpProduct | Scope::MrpOrder => mrp::OPERATIONS,
        Scope::QualityCupping => cupping::OPERATIONS,
        Scope::QualityPhysical => physical::OPERATIONS,
        Scope::InventoryGreen => green::OPERATIONS,
        Scope::InventoryRoast => roast::OPERATIONS,
        Scope::InventoryBlend => blend::OPERATIONS,
        Scope::InventoryTrace => trace::OPERATIONS,
    }
}

pub fn find(name: &str) -> Option<Operation> {
    let scope = Scope::of_operation(name)?;
    operations(scope)
        .iter()
        .find(|known| **known == name)
        .map(|known| Operation { name: known, scope })
}

/// All operation names (for the OpenAPI document and tests).
pub fn all() -> impl Iterator<Item = &'static str> {
    // A module may serve several scopes: list each operation once, under its own scope.
    Scope::ALL.into_iter().flat_map(|s| {
        operations(s)
            .iter()
            .copied()
            .filter(move |name| Scope::of_operation(name) == Some(s))
    })
}

/// Adds every operation to the OpenAPI document.
pub(crate) fn document(doc: &mut crate::openapi::ApiDoc) {
    core::document(doc);
    green::document(doc);
    roast::document(doc);
    blend::document(doc);
    cupping::document(doc);
    physical::document(doc);
    mrp::document(doc);
    trace::document(doc);
}

pub(crate) async fn call<S: Store>(ctx: Ctx<S>, body: Bytes) -> Result<HttpResponse, ApiError> {
    match ctx.operation.scope {
        Scope::CoreLocation | Scope::CoreProject => core::call(ctx, body).await,
        Scope::MrpProduct | Scope::MrpOrder => mrp::call(ctx, body).await,
        Scope::QualityCupping => cupping::call(ctx, body).await,
        Scope::QualityPhysical => physical::call(ctx, body).await,
        Scope::InventoryGreen => green::call(ctx, body).await,
        Scope::InventoryRoast => roast::call(ctx, body).await,
        Scope::InventoryBlend => blend::call(ctx, body).await,
        Scope::InventoryTrace => trace::call(ctx, body).await,
    }
}

/// One operation call.
pub(crate) struct Ctx<S: Store> {
    pub state: Arc<AppState<S>>,
    pub operation: Operation,
    /// The authenticated client: ledger entries name it.
    pub client_id: Arc<str>,
}

impl<S: Store> Ctx<S> {
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Roastery<S>) -> Result<T, AppError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let caller = Caller {
            client_id: self.client_id.clone(),
            operation: Some(self.operation.name),
        };
        self.state.run(move |app| work(&app.acting_as(caller))).await
    }

    pub fn page_request(&self, pagination: &PaginationDto) -> Result<PageRequest, ApiError> {
        self.state
            .cursors
            .page_request(self.operation.name, pagination)
    }

    /// `{"ok": true, "result": ..., "meta": {}}`
    pub fn ok<R: Serialize>(&self, result: R) -> Result<HttpResponse, ApiError> {
        Ok(HttpResponse::Ok().json(Envelope {
            ok: true,
            result,
            meta: NoMeta {},
        }))
    }

    /// A page: `meta.pagination.endCursor` is the signed position of the next page, or null.
    pub fn page<R: Serialize>(
        &self,
        result: R,
        next: Option<Position>,
    ) -> Result<HttpResponse, ApiError> {
        let end_cursor = next.map(|p| self.state.cursors.encode(self.operation.name, p));
        Ok(HttpResponse::Ok().json(Envelope {
            ok: true,
            result,
            meta: PageMeta {
                pagination: PageInfo { end_cursor },
            },
        }))
    }
}
