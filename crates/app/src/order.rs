//! mrp.order: upserting orders in bulk, moving them along their status machine, listing them.
//!
//! `setOrders` is one transaction in the three steps of every write: the batch is parsed (400 for
//! the whole request), the stored orders and known SKUs the batch refers to are loaded in one go,
//! the domain plans the whole batch, and either every item is written or none (422
//! `bulk_operation_failed`).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use roastery_domain::FieldPath;
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::bulk;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::ledger::{EntryKind, Movement, Reference};
use roastery_domain::lot_source::SourceError;
use roastery_domain::operation::Operation;
use roastery_domain::order::{
    Allocation, CustomerType, Order, OrderError, OrderInput, OrderStatus, Shipment, plan_orders,
    shipment_weight,
};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::product::Sku;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::stock::{LotKind, Stock, StockError};
use roastery_domain::weight::Weight;
use uuid::Uuid;

use crate::{Repos, Roastery, Store, upsert};
use roastery_ports::error::{AppError, StoreError};
use roastery_ports::lock::{ForUpdate, LockedRow};
use roastery_ports::repo::*;

/// One order of a `setOrders` call, as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOrder {
    pub external_id: String,
    pub order_date: DateTime<Utc>,
    pub customer: Option<String>,
    /// Parsed by the transport, like every enum name on the wire.
    pub customer_type: Option<CustomerType>,
    pub items: Vec<SetOrderItem>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOrderItem {
    pub sku: String,
    pub quantity: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOrderStatus {
    pub order_id: Uuid,
    pub status: OrderStatus,
}

/// `mrp.order.shipOrder`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShipOrder {
    pub order_id: Uuid,
    pub shipped_date: DateTime<Utc>,
    pub allocations: Vec<ShipAllocation>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShipAllocation {
    pub sku: String,
    pub lot_id: Uuid,
    pub quantity: i32,
}

/// A lot an order ships from, as loaded.
enum Held {
    Green(ForUpdate<GreenLot>),
    Roasted(ForUpdate<RoastedLot>),
    Blended(ForUpdate<BlendedLot>),
}

impl Held {
    fn lot(&self) -> TypedLotRef {
        let (id, kind) = match self {
            Self::Green(l) => (l.id, LotKind::Green),
            Self::Roasted(l) => (l.id, LotKind::Roasted),
            Self::Blended(l) => (l.id, LotKind::Blended),
        };
        TypedLotRef { id, kind }
    }

    fn lot_number(&self) -> i64 {
        match self {
            Self::Green(l) => l.lot_number,
            Self::Roasted(l) => l.lot_number,
            Self::Blended(l) => l.lot_number,
        }
    }

    fn stock(&self) -> &Stock {
        match self {
            Self::Green(l) => &l.stock,
            Self::Roasted(l) => &l.stock,
            Self::Blended(l) => &l.stock,
        }
    }

    fn stock_mut(&mut self) -> &mut Stock {
        match self {
            Self::Green(l) => l.stock_mut(),
            Self::Roasted(l) => l.stock_mut(),
            Self::Blended(l) => l.stock_mut(),
        }
    }

    fn write(&mut self, tx: &mut impl Repos, now: DateTime<Utc>) -> Result<(), AppError> {
        match self {
            Self::Green(l) => {
                l.apply(|l| l.last_modified_date = now)?;
                tx.update_green_lot(l)?;
            }
            Self::Roasted(l) => {
                l.apply(|l| l.last_modified_at = now)?;
                tx.update_roasted_lot_stock(l)?;
            }
            Self::Blended(l) => {
                l.apply(|l| l.last_modified_at = now)?;
                tx.update_blended_lot_stock(l)?;
            }
        }
        Ok(())
    }
}

/// The lots an order ships from, once each, in the order the allocations first name them; the
/// first unknown one is `resource_not_found`.
///
/// They are loaded kind by kind, all green lots in one call, then all roasted lots, then the
/// blended ones by ascending id, whatever order the request names them in: a store that locks
/// what it loads (PostgreSQL) then takes the locks of two shipments naming the same lots in
/// opposite orders in the same order, so neither waits for the other in a cycle.
fn load_lots(tx: &mut impl Repos, allocations: &[ShipAllocation]) -> Result<Vec<Held>, AppError> {
    let mut ids: Vec<Uuid> = allocations.iter().map(|a| a.lot_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut found: HashMap<Uuid, Held> = HashMap::with_capacity(ids.len());
    found.extend(
        tx.green_lots_for_update(&ids)?
            .into_iter()
            .map(|l| (l.id, Held::Green(l))),
    );
    ids.retain(|id| !found.contains_key(id));
    found.extend(
        tx.roasted_lots_for_update(&ids)?
            .into_iter()
            .map(|l| (l.id, Held::Roasted(l))),
    );
    ids.retain(|id| !found.contains_key(id));
    for id in ids {
        if let Some(l) = tx.blended_lot_for_update(id)? {
            found.insert(id, Held::Blended(l));
        }
    }
    let mut held = Vec::with_capacity(found.len());
    for a in allocations {
        if held.iter().any(|h: &Held| h.lot().id == a.lot_id) {
            continue;
        }
        let lot = found
            .remove(&a.lot_id)
            .ok_or(OrderError::LotNotFound(a.lot_id))?;
        held.push(lot);
    }
    Ok(held)
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOrders {
    pub order_date_from: Option<DateTime<Utc>>,
    pub order_date_to: Option<DateTime<Utc>>,
    pub status: Option<OrderStatus>,
}

impl<S: Store> Roastery<S> {
    /// Creates or updates a batch of orders by external id; returns them in request order. The
    /// three steps of every write: parse the batch (400 for the whole request), load the stored
    /// orders and known SKUs it refers to, then let the domain plan it (422
    /// `bulk_operation_failed`, one detail per failing item).
    pub fn set_orders(&self, batch: Vec<SetOrder>) -> Result<Vec<Order>, AppError> {
        // 1. Parse.
        let inputs = bulk::parse_batch(
            &FieldPath::ROOT,
            &batch,
            |o| &o.external_id,
            |at, o| {
                OrderInput::parse(
                    at,
                    &o.external_id,
                    o.order_date,
                    o.customer.as_deref(),
                    o.customer_type,
                    o.items.iter().map(|i| (i.sku.as_str(), i.quantity)),
                )
            },
        )?;
        let now = self.clock.now();
        let external_ids: Vec<String> = inputs.iter().map(|i| i.external_id().to_owned()).collect();
        let mut skus: Vec<Sku> = inputs
            .iter()
            .flat_map(|i| i.items().iter().map(|item| item.sku.clone()))
            .collect();
        skus.sort();
        skus.dedup();
        self.write(Operation::SetOrders, |tx| {
            // 2. Load.
            let stored =
                upsert::by_external_id(tx.orders_for_update(&external_ids)?, |o| &o.external_id);
            let known: HashSet<Sku> = tx.sku_owners(&skus)?.into_iter().map(|(s, _)| s).collect();
            // 3. Decide.
            let planned = plan_orders(
                &inputs,
                |ext| stored.get(ext).map(|o| &**o),
                |sku| known.contains(sku),
                now,
                || self.ids.new_id(),
            )
            .map_err(AppError::bulk)?;
            let (created, updated) =
                upsert::writes(&planned, stored, |o| &o.external_id, upsert::put)?;
            if !created.is_empty() {
                tx.insert_orders(&created)?;
            }
            if !updated.is_empty() {
                tx.update_orders(&updated)?;
            }
            Ok(planned.into_iter().map(|p| p.record).collect())
        })
    }

    /// Moves one order along the status machine: parse the status (400), load the order (422
    /// `resource_not_found`), then let the order decide (an illegal move, 422
    /// `invalid_request`).
    pub fn set_order_status(&self, cmd: SetOrderStatus) -> Result<Order, AppError> {
        let status = cmd.status;
        let now = self.clock.now();
        self.write(Operation::SetOrderStatus, |tx| {
            // 2. Load.
            let mut order = tx
                .order_for_update(cmd.order_id)?
                .ok_or(OrderError::NotFound(cmd.order_id))?;
            // 3. Decide.
            order.apply(|o| o.set_status(status, now))??;
            tx.update_orders(std::slice::from_ref(&order))?;
            Ok(order.into_inner())
        })
    }

    /// Ships an order: takes `quantity × packageSize` from each allocated lot, records the
    /// shipments and their ledger entries, completes the order; one transaction.
    pub fn ship_order(&self, cmd: ShipOrder) -> Result<Order, AppError> {
        // Shape first (400): the skus.
        let skus = cmd
            .allocations
            .iter()
            .enumerate()
            .map(|(i, a)| {
                Sku::parse_at(
                    FieldPath::ROOT.key("allocations").index(i).key("sku"),
                    &a.sku,
                )
                .map_err(OrderError::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let now = self.clock.now();
        self.write(Operation::ShipOrder, |tx| {
            // resource_not_found: the order, then each lot.
            let mut order = tx
                .order_for_update(cmd.order_id)?
                .ok_or(OrderError::NotFound(cmd.order_id))?;
            let mut held = load_lots(tx, &cmd.allocations)?;
            let allocations: Vec<Allocation> = cmd
                .allocations
                .iter()
                .zip(&skus)
                .map(|(a, sku)| {
                    // `load_lots` found every allocated lot or answered not found.
                    let lot = held
                        .iter()
                        .find(|h| h.lot().id == a.lot_id)
                        .map(Held::lot)
                        .ok_or_else(|| StoreError::Internal("allocated lot not loaded".into()))?;
                    Ok(Allocation {
                        sku: sku.clone(),
                        lot,
                        quantity: a.quantity,
                    })
                })
                .collect::<Result<_, StoreError>>()?;
            // State rules: the order, the allocations, consumed lots.
            order.check_allocations(&allocations)?;
            if let Some(h) = held.iter().find(|h| h.stock().is_consumed()) {
                return Err(SourceError::Stock {
                    kind: h.lot().kind,
                    id: h.lot().id,
                    error: StockError::Consumed,
                }
                .into());
            }
            let lots: Vec<TypedLotRef> = held.iter().map(Held::lot).collect();
            let verified_since = self
                .eudr_timing
                .reverify_after
                .and_then(|after| self.clock.now().checked_sub_signed(after));
            crate::due_diligence::check_shippable(tx, self.eudr_enforce, &lots, verified_since)?;
            let owners = tx.sku_owners(&skus)?;
            let external_ids: Vec<String> = owners.iter().map(|(_, p)| p.clone()).collect();
            // Locked: their variants' package sizes must not change before the order ships.
            let products = tx.products_for_update(&external_ids)?;
            let before: Vec<Weight> = held.iter().map(|h| h.stock().weight()).collect();
            let mut shipments = Vec::with_capacity(allocations.len());
            for a in &allocations {
                let variant = products
                    .iter()
                    .flat_map(|p| &p.variants)
                    .find(|v| v.sku == a.sku)
                    .ok_or_else(|| {
                        StoreError::Internal(format!("sku `{}` has no stored variant", a.sku))
                    })?;
                let weight = shipment_weight(variant.package_size, a.quantity)?;
                let h = held
                    .iter_mut()
                    .find(|h| h.lot().id == a.lot.id)
                    .ok_or_else(|| StoreError::Internal("allocated lot not loaded".into()))?;
                let taken =
                    h.stock_mut()
                        .take(weight, now)
                        .map_err(|error| SourceError::Stock {
                            kind: a.lot.kind,
                            id: a.lot.id,
                            error,
                        })?;
                shipments.push(Shipment {
                    sku: a.sku.clone(),
                    lot: a.lot,
                    lot_number: h.lot_number(),
                    quantity: a.quantity,
                    weight: taken,
                });
            }
            let movements: Vec<Movement> = held
                .iter()
                .zip(before)
                .map(|(h, before)| Movement {
                    lot: h.lot(),
                    kind: EntryKind::Shipment,
                    before,
                    after: h.stock().weight(),
                    reference: Some(Reference::Order(order.id)),
                })
                .collect();
            for h in &mut held {
                h.write(tx, now)?;
            }
            order.apply(|o| o.ship(shipments, cmd.shipped_date, now))?;
            tx.record_shipments(&order)?;
            tx.insert_ledger_entries(&self.ledger_entries(Operation::ShipOrder, now, &movements))?;
            Ok(order.into_inner())
        })
    }

    /// Orders, newest `orderDate` first.
    pub fn list_orders(&self, cmd: ListOrders, page: PageRequest) -> Result<Page<Order>, AppError> {
        page.keyset()?;
        let filter = OrderFilter {
            order_date_from: cmd.order_date_from,
            order_date_to: cmd.order_date_to,
            status: cmd.status,
        };
        self.store
            .read_replica(|tx| Ok(tx.list_orders(&filter, &page)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::{SyncProduct, SyncVariant};
    use crate::testing::memory_roastery;
    use chrono::TimeDelta;
    use roastery_domain::Violation;
    use roastery_domain::bulk::BatchShapeError;
    use roastery_domain::page::Limit;
    use roastery_domain::product::PackageSize;
    use roastery_domain::text::TextError;
    use roastery_ports::testing::InMemoryStore;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    fn order(ext: &str, date: i64, items: &[(&str, i32)]) -> SetOrder {
        SetOrder {
            external_id: ext.into(),
            order_date: at(date),
            customer: Some("Café Nord".into()),
            customer_type: Some(CustomerType::Wholesale),
            items: items
                .iter()
                .map(|(sku, quantity)| SetOrderItem {
                    sku: (*sku).into(),
                    quantity: *quantity,
                })
                .collect(),
        }
    }

    fn app_with_skus() -> (
        Roastery<InMemoryStore>,
        roastery_ports::testing::ManualClock,
    ) {
        let (app, clock) = memory_roastery();
        app.sync_products(vec![SyncProduct {
            external_id: "p-1".into(),
            name: "Guji".into(),
            variants: ["GUJI-250", "GUJI-1000"]
                .into_iter()
                .map(|sku| SyncVariant {
                    sku: sku.into(),
                    package_size: PackageSize::parse("PACKAGE250G").unwrap(),
                })
                .collect(),
        }])
        .unwrap();
        (app, clock)
    }

    fn list(app: &Roastery<InMemoryStore>, cmd: ListOrders) -> Vec<Order> {
        let page = PageRequest {
            limit: Limit::parse(Some(100)).unwrap(),
            after: None,
        };
        app.list_orders(cmd, page).unwrap().items
    }

    #[test]
    fn new_orders_are_open_and_updates_keep_the_order_date() {
        let (app, clock) = app_with_skus();
        let created = app
            .set_orders(vec![order("o-1", 0, &[("GUJI-250", 2)])])
            .unwrap();
        assert_eq!(created[0].status, OrderStatus::Open);
        clock.advance(TimeDelta::seconds(1));
        let mut update = order("o-1", 999, &[("GUJI-1000", 1), ("GUJI-250", 3)]);
        update.customer = None;
        update.customer_type = Some(CustomerType::Retail);
        let updated = app.set_orders(vec![update]).unwrap();
        assert_eq!(updated[0].id, created[0].id);
        let stored = list(&app, ListOrders::default());
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].order_date, at(0));
        assert_eq!(stored[0].customer, None);
        assert_eq!(stored[0].customer_type, Some(CustomerType::Retail));
        assert_eq!(stored[0].items.len(), 2);
    }

    #[test]
    fn repeating_set_orders_changes_nothing() {
        let (app, clock) = app_with_skus();
        let batch = vec![order("o-1", 0, &[("GUJI-250", 2)])];
        app.set_orders(batch.clone()).unwrap();
        let before = list(&app, ListOrders::default());
        clock.advance(TimeDelta::seconds(3));
        app.set_orders(batch).unwrap();
        assert_eq!(list(&app, ListOrders::default()), before);
    }

    #[test]
    fn a_mixed_batch_stores_nothing_and_reports_each_bad_item() {
        let (app, _) = app_with_skus();
        let done = app
            .set_orders(vec![order("o-done", 0, &[("GUJI-250", 1)])])
            .unwrap();
        app.set_order_status(SetOrderStatus {
            order_id: done[0].id,
            status: OrderStatus::Cancelled,
        })
        .unwrap();
        let before = list(&app, ListOrders::default());
        let err = app
            .set_orders(vec![
                order("o-new", 1, &[("GUJI-250", 1)]),
                order("o-sku", 2, &[("NOPE", 1)]),
                order("o-done", 3, &[("GUJI-250", 2)]),
                order("o-empty", 4, &[]),
                order("o-zero", 5, &[("GUJI-250", 0)]),
                order("o-new", 6, &[("GUJI-250", 1)]),
            ])
            .unwrap_err();
        let AppError::Bulk(items) = err else {
            panic!("expected a bulk failure, got {err:?}")
        };
        let summary: Vec<_> = items
            .iter()
            .map(|i| (i.index, i.rejection.rule::<OrderError>().cloned()))
            .collect();
        let ext = |id: &str| id.to_owned();
        assert_eq!(
            summary,
            vec![
                (
                    1,
                    Some(OrderError::UnknownSkus {
                        external_id: ext("o-sku"),
                        skus: vec![ext("NOPE")],
                    })
                ),
                (
                    2,
                    Some(OrderError::NotOpen {
                        external_id: ext("o-done"),
                        status: OrderStatus::Cancelled,
                    })
                ),
                (
                    3,
                    Some(OrderError::NoItems {
                        external_id: ext("o-empty"),
                    })
                ),
                (
                    4,
                    Some(OrderError::NonPositiveQuantity {
                        external_id: ext("o-zero"),
                        sku: ext("GUJI-250"),
                        quantity: 0,
                    })
                ),
                (
                    5,
                    Some(OrderError::DuplicateExternalId {
                        external_id: ext("o-new"),
                        first_index: 0,
                    })
                ),
            ]
        );
        assert_eq!(list(&app, ListOrders::default()), before);
    }

    #[test]
    fn shape_errors_refuse_the_whole_batch() {
        let (app, _) = app_with_skus();
        let bad = order("o-2", 0, &[("GUJI-250", 1), (" ", 1)]);
        let err = app
            .set_orders(vec![order("o-1", 0, &[("GUJI-250", 1)]), bad])
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&BatchShapeError::Item(bulk::ItemFailure {
                index: 1,
                at: FieldPath::from("[1]"),
                external_id: "o-2".into(),
                error: OrderError::Text(TextError::Empty {
                    field: FieldPath::from("[1].orderItems[1].sku")
                })
            }))
        );
        assert_eq!(err.violation(), Some(Violation::InvalidParameter));
        let too_many: Vec<_> = (0..51)
            .map(|i| order(&format!("o-{i}"), i, &[("GUJI-250", 1)]))
            .collect();
        assert_eq!(
            app.set_orders(too_many).unwrap_err().violation(),
            Some(Violation::InvalidParameter)
        );
        assert!(list(&app, ListOrders::default()).is_empty());
        let fifty: Vec<_> = (0..50)
            .map(|i| order(&format!("o-{i}"), i, &[("GUJI-250", 1)]))
            .collect();
        let synced = app.set_orders(fifty).unwrap();
        let ext: Vec<_> = synced.iter().map(|o| o.external_id.clone()).collect();
        let expected: Vec<_> = (0..50).map(|i| format!("o-{i}")).collect();
        assert_eq!(ext, expected);
    }

    #[test]
    fn status_moves_along_the_machine_only() {
        let (app, _) = app_with_skus();
        let id = app
            .set_orders(vec![order("o-1", 0, &[("GUJI-250", 1)])])
            .unwrap()[0]
            .id;
        let set = |status| {
            app.set_order_status(SetOrderStatus {
                order_id: id,
                status,
            })
        };
        let illegal = |from, to| OrderError::IllegalTransition {
            external_id: "o-1".into(),
            from,
            to,
        };
        assert_eq!(
            set(OrderStatus::Completed).unwrap_err().rule(),
            Some(&illegal(OrderStatus::Open, OrderStatus::Completed))
        );
        assert_eq!(
            set(OrderStatus::InProgress).unwrap().status,
            OrderStatus::InProgress
        );
        // No longer OPEN: updates are refused.
        let err = app
            .set_orders(vec![order("o-1", 0, &[("GUJI-250", 5)])])
            .unwrap_err();
        let AppError::Bulk(items) = err else {
            panic!("expected a bulk failure, got {err:?}")
        };
        assert_eq!(
            items[0].rejection.rule(),
            Some(&OrderError::NotOpen {
                external_id: "o-1".into(),
                status: OrderStatus::InProgress,
            })
        );
        assert_eq!(
            set(OrderStatus::Completed).unwrap().status,
            OrderStatus::Completed
        );
        assert_eq!(
            set(OrderStatus::Cancelled).unwrap_err().rule(),
            Some(&illegal(OrderStatus::Completed, OrderStatus::Cancelled))
        );
        let unknown = app
            .set_order_status(SetOrderStatus {
                order_id: Uuid::nil(),
                status: OrderStatus::Cancelled,
            })
            .unwrap_err();
        assert_eq!(unknown.rule(), Some(&OrderError::NotFound(Uuid::nil())));
    }

    #[test]
    fn listing_filters_by_date_range_and_status_newest_first() {
        let (app, _) = app_with_skus();
        let synced = app
            .set_orders(
                (0..4)
                    .map(|i| order(&format!("o-{i}"), i * 10, &[("GUJI-250", 1)]))
                    .collect(),
            )
            .unwrap();
        app.set_order_status(SetOrderStatus {
            order_id: synced[2].id,
            status: OrderStatus::InProgress,
        })
        .unwrap();
        let ext = |orders: Vec<Order>| -> Vec<String> {
            orders.into_iter().map(|o| o.external_id).collect()
        };
        assert_eq!(
            ext(list(&app, ListOrders::default())),
            ["o-3", "o-2", "o-1", "o-0"]
        );
        let range = ListOrders {
            order_date_from: Some(at(10)),
            order_date_to: Some(at(30)),
            status: None,
        };
        assert_eq!(ext(list(&app, range)), ["o-2", "o-1"]);
        let open = ListOrders {
            status: Some(OrderStatus::Open),
            ..ListOrders::default()
        };
        assert_eq!(ext(list(&app, open)), ["o-3", "o-1", "o-0"]);
    }
}
