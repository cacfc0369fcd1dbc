//! One operation call, as its handler sees it: the service's state, the operation and the
//! authenticated client; running its use case off the workers, and the envelopes of its answer.

use std::sync::Arc;

use actix_web::HttpResponse;
use roastery_app::{Caller, Roastery};
use roastery_domain::FieldPath;
use roastery_domain::operation::Operation;
use roastery_domain::page::{JoinedPage, Page, PageRequest, Position};
use roastery_ports::{AppError, Store};
use serde::Serialize;

use crate::error::ApiError;
use crate::shape::Shape;
use crate::shared::Shared;
use crate::state::AppState;
use crate::wire::{Envelope, NoMeta, PageInfo, PageMeta, PaginationDto};

/// One operation call.
pub(crate) struct Ctx<S: Store> {
    pub state: Arc<AppState<S>>,
    /// The operation called: its name binds the cursors it answers, and what it writes records it.
    pub operation: Operation,
    /// How the operation takes its input (`data` or `params`).
    pub shape: Shape,
    /// The authenticated client: ledger entries name it.
    pub client_id: Arc<str>,
}

impl<S: Store> Ctx<S> {
    /// Runs the operation's use case off the workers; its error answers as [`Ctx::error`].
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Roastery<S>) -> Result<T, AppError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let caller = Caller {
            client_id: self.client_id.clone(),
            operation: Some(self.operation),
        };
        // The payload's path is built only when there is an error to place.
        let shape = self.shape;
        self.state
            .run(move |app| work(&app.acting_as(caller)).map_err(|e| e.under(&shape.payload())))
            .await
    }

    /// Where the use case's input lies in the request: `data` for writes, `params` for reads.
    pub fn payload(&self) -> FieldPath {
        self.shape.payload()
    }

    /// A use case's error as this call answers it: the field paths it names (relative to what
    /// the use case was given) put under the request's `data` or `params` first.
    pub fn error(&self, err: AppError) -> ApiError {
        ApiError::from(err.under(&self.payload()))
    }

    /// Runs a read of the listing read model: on the worker itself when the store reads that
    /// fast without waiting for a connection (SQLite), otherwise as [`Ctx::run`].
    pub async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Roastery<S>) -> Result<T, AppError> + Send + 'static,
    ) -> Result<T, ApiError> {
        if self.state.app.store().reads_inline() {
            work(&self.state.app).map_err(|e| self.error(e))
        } else {
            self.run(work).await
        }
    }

    pub fn page_request(&self, pagination: &PaginationDto) -> Result<PageRequest, ApiError> {
        self.state
            .cursors
            .page_request(self.operation.name(), pagination)
    }

    /// A page read by one use case (`read`, given the page asked for) and answered as `result`
    /// of its items: what the handlers answering a page of records by ids share after decoding
    /// their filter.
    pub async fn page_of<T: Send + 'static, R: Serialize>(
        &self,
        pagination: &PaginationDto,
        read: impl FnOnce(&Roastery<S>, PageRequest) -> Result<Page<T>, AppError> + Send + 'static,
        result: impl FnOnce(Vec<T>) -> R,
    ) -> Result<HttpResponse, ApiError> {
        let page = self.page_request(pagination)?;
        let page = self.run(move |app| read(app, page)).await?;
        self.page(result(page.items), page.next)
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
        let end_cursor = self.end_cursor(next);
        Ok(HttpResponse::Ok().json(Envelope {
            ok: true,
            result,
            meta: PageMeta {
                pagination: PageInfo { end_cursor },
            },
        }))
    }

    /// [`Ctx::ok`] of a result holding shared JSON: its buffers are shared with the body, not
    /// copied into it.
    pub fn ok_shared<R: Serialize>(
        &self,
        result: R,
        shared: Shared,
    ) -> Result<HttpResponse, ApiError> {
        crate::shared::json_response(
            &Envelope {
                ok: true,
                result,
                meta: NoMeta {},
            },
            shared,
        )
    }

    /// [`Ctx::page`] of a result holding shared JSON, as [`Ctx::ok_shared`].
    pub fn page_shared<R: Serialize>(
        &self,
        result: R,
        next: Option<Position>,
        shared: Shared,
    ) -> Result<HttpResponse, ApiError> {
        let end_cursor = self.end_cursor(next);
        crate::shared::json_response(
            &Envelope {
                ok: true,
                result,
                meta: PageMeta {
                    pagination: PageInfo { end_cursor },
                },
            },
            shared,
        )
    }
}

/// [`Ctx::page`] for items stored as JSON, already joined (a JSON array's content): the envelope
/// written around them as they are, into one buffer of the answer's exact size.
pub(crate) fn joined_page_body(key: &str, items: &[u8], end_cursor: Option<&str>) -> Vec<u8> {
    page_body(key, items.len(), end_cursor, |body| {
        body.extend_from_slice(items)
    })
}

/// The page envelope around `items_len` bytes of items written by `items`.
fn page_body(
    key: &str,
    items_len: usize,
    end_cursor: Option<&str>,
    items: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    const HEAD: &[u8] = b"{\"ok\":true,\"result\":{\"";
    const MIDDLE: &[u8] = b"\":[";
    const TAIL: &[u8] = b"]},\"meta\":{\"pagination\":{\"endCursor\":";
    const END: &[u8] = b"}}}";
    // A cursor is URL-safe base64: nothing in it needs escaping.
    let cursor_len = end_cursor.map_or(4, |c| c.len() + 2);
    let size =
        HEAD.len() + key.len() + MIDDLE.len() + items_len + TAIL.len() + cursor_len + END.len();
    let mut body = Vec::with_capacity(size);
    body.extend_from_slice(HEAD);
    body.extend_from_slice(key.as_bytes());
    body.extend_from_slice(MIDDLE);
    items(&mut body);
    body.extend_from_slice(TAIL);
    match end_cursor {
        Some(cursor) => {
            body.push(b'"');
            body.extend_from_slice(cursor.as_bytes());
            body.push(b'"');
        }
        None => body.extend_from_slice(b"null"),
    }
    body.extend_from_slice(END);
    body
}

impl<S: Store> Ctx<S> {
    /// A page of stored listing items under `result.{key}`, as [`Ctx::page`] would answer it.
    pub fn stored_page(&self, key: &str, page: JoinedPage) -> Result<HttpResponse, ApiError> {
        let end_cursor = self.end_cursor(page.next());
        let body = joined_page_body(key, page.items(), end_cursor.as_deref());
        Ok(HttpResponse::Ok()
            .content_type(actix_web::http::header::ContentType::json())
            .body(body))
    }

    /// The signed cursor of the next page's position.
    fn end_cursor(&self, next: Option<Position>) -> Option<String> {
        next.map(|p| self.state.cursors.encode(self.operation.name(), p))
    }
}

/// Handlers called directly over the in-memory store, for their own tests: what they decode,
/// which use case they call and how they write its answer.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::Arc;

    use actix_web::ResponseError;
    use roastery_app::Roastery;
    use roastery_app::green_lot::{ImportGreenLot, WeightInput};
    use roastery_app::location::ImportLocation;
    use roastery_domain::operation::Operation;
    use roastery_domain::weight::WeightUnit;
    use roastery_ports::testing::InMemoryStore;
    use roastery_test_support::imports::green_import;
    use rust_decimal::Decimal;
    use uuid::Uuid;

    use super::Ctx;
    use crate::cursor::CursorCodec;
    use crate::error::ApiError;
    use crate::state::AppState;

    /// A call of `operation` by client `client-a` over a fresh in-memory store, and the use
    /// cases over that store (to set up and to check what the call did).
    pub(crate) fn call(operation: Operation) -> (Ctx<InMemoryStore>, Roastery<InMemoryStore>) {
        let (app, _clock) = roastery_app::testing::memory_roastery();
        let state = Arc::new(AppState::new(app.clone(), CursorCodec::new(vec![7; 32])));
        let ctx = Ctx {
            state,
            operation,
            shape: crate::ops::Entry::shape(operation),
            client_id: Arc::from("client-a"),
        };
        (ctx, app)
    }

    /// `n` kilograms, as the use cases take a weight.
    pub(crate) fn kg(n: i64) -> WeightInput {
        WeightInput {
            amount: Decimal::from(n),
            unit: WeightUnit::Kg,
        }
    }

    /// A location and a green lot of `kilograms` imported at it: `(location, lot)`.
    pub(crate) fn green_lot_at(app: &Roastery<InMemoryStore>, kilograms: i64) -> (Uuid, Uuid) {
        let location = app
            .import_location(ImportLocation {
                name: "Roastery".into(),
                external_id: None,
            })
            .unwrap()
            .id;
        let lot = app
            .import_green_lot(ImportGreenLot {
                location_id: Some(location),
                ..green_import("Huila", "G-1", kilograms)
            })
            .unwrap()
            .lot
            .id;
        (location, lot)
    }

    /// The status and JSON body a handler's result answers, as the server would send it.
    pub(crate) async fn answer(
        result: Result<actix_web::HttpResponse, ApiError>,
    ) -> (u16, serde_json::Value) {
        let response = match result {
            Ok(response) => response,
            Err(e) => e.error_response(),
        };
        let status = response.status().as_u16();
        let body = actix_web::body::to_bytes(response.into_body())
            .await
            .unwrap_or_default();
        (status, serde_json::from_slice(&body).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use roastery_domain::bulk::{BatchShapeError, ItemFailure as BatchItem};
    use roastery_domain::order::OrderError;
    use roastery_domain::page::PageError;
    use roastery_domain::text::TextError;
    use roastery_ports::{ItemFailure, Rejection};

    use super::*;

    fn blank(field: &'static str) -> TextError {
        TextError::Empty {
            field: FieldPath::from(field),
        }
    }

    /// Use cases name fields relative to what they were given; the answer names them under the
    /// request's `data` (writes, bulk items by their index) or `params` (reads).
    #[test]
    fn use_case_paths_are_answered_under_the_requests_envelope() {
        let write = ApiError::from(AppError::from(blank("name")).under(&Shape::Write.payload()));
        assert_eq!(write.message, "data.name must not be empty");

        let shape = BatchShapeError::Item(BatchItem {
            index: 3,
            at: FieldPath::ROOT.index(3),
            external_id: "o-3".into(),
            error: OrderError::Text(blank("[3].orderItems[1].sku")),
        });
        let batch = ApiError::from(AppError::from(shape).under(&Shape::Bulk.payload()));
        assert_eq!(
            batch.message,
            "data[3] (externalId `o-3`): data[3].orderItems[1].sku must not be empty"
        );

        let items = AppError::Bulk(vec![ItemFailure {
            index: 3,
            external_id: Some("o-3".into()),
            rejection: Rejection::new(blank("[3].sku")),
        }]);
        let bulk = ApiError::from(items.under(&Shape::Bulk.payload()));
        let details = bulk.details.unwrap_or_default();
        assert_eq!(details[0].message, "data[3].sku must not be empty");

        let ids = PageError::NoIds {
            field: FieldPath::from("filter.roastedLotIds"),
        };
        let read = ApiError::from(AppError::from(ids).under(&Shape::Page.payload()));
        assert_eq!(
            read.message,
            "params.filter.roastedLotIds must not be empty"
        );
        assert_eq!(Shape::Read.payload(), Shape::Page.payload());
    }

    /// Stored items joined into the envelope are byte for byte what serialising the page's
    /// values answers, with and without a next page, with no items and with several, whether the
    /// items come one by one or joined.
    #[test]
    fn a_stored_page_is_the_envelope_serde_writes() {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Lots {
            green_lots: Vec<serde_json::Value>,
        }
        let items = [
            serde_json::json!({"id": "a", "name": "Café \"Ñ\"", "weight": {"amount": 1.5}}),
            serde_json::json!({"id": "b", "projects": [], "consumedDate": null}),
        ];
        for count in 0..=items.len() {
            for cursor in [None, Some("azE.dGFn-_")] {
                let stored: Vec<String> = items[..count].iter().map(|i| i.to_string()).collect();
                let expected = serde_json::to_vec(&Envelope {
                    ok: true,
                    result: Lots {
                        green_lots: items[..count].to_vec(),
                    },
                    meta: PageMeta {
                        pagination: PageInfo {
                            end_cursor: cursor.map(str::to_owned),
                        },
                    },
                })
                .unwrap();
                let joined = stored.join(",");
                let body = joined_page_body("greenLots", joined.as_bytes(), cursor);
                assert_eq!(
                    String::from_utf8(body.clone()).unwrap(),
                    String::from_utf8(expected.clone()).unwrap()
                );
                assert_eq!(body.capacity(), body.len(), "one buffer of the exact size");
            }
        }
    }
}
