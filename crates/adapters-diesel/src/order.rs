//! Stored orders and their items.
//!
//! A `setOrders` batch is written in a number of statements that does not depend on its size
//! (up to [`CHUNK`] orders, and the contract allows 50): the orders are loaded with one
//! `IN (...)` query and their items and shipments with one kept statement each, new orders and
//! all items of new and changed orders are inserted with one multi-row `INSERT` per table, the
//! items of changed orders are replaced (one `DELETE ... WHERE order_id IN (...)`), and changed
//! orders are updated with one `UPDATE orders SET customer = CASE .. END, ... WHERE id IN
//! (...)`. Item lists longer than [`CHUNK`] rows are split so no statement exceeds the
//! bind-parameter limits of the backends.

use roastery_domain::event::{Change, Resource, Subject};
use roastery_ports::repo::EventRepo as _;
use std::collections::HashMap;

use diesel::dsl::case_when;
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text, Timestamp};
use roastery_domain::order::{CustomerType, Order, OrderItem, OrderStatus, Shipment};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::product::Sku;
use roastery_domain::stock::TypedLotRef;
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::*;
use uuid::Uuid;

use crate::error::{OrStoreError, corrupt};
use crate::product::{CHUNK, Db};
use crate::row::uuid;
use crate::store::DieselTx;
use crate::time::{StoredInstant, from_db, to_db};

use crate::schema::*;

/// Also read from JSON (a trace's one statement): its timestamps as PostgreSQL writes them there,
/// ISO 8601 with microseconds, which is every digit a timestamp column keeps.
#[derive(Queryable, QueryableByName, Insertable, serde::Deserialize)]
#[diesel(table_name = orders)]
// None is NULL, not DEFAULT: that lets SQLite insert a whole batch in one statement.
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct OrderRow {
    id: String,
    external_id: String,
    #[diesel(deserialize_as = StoredInstant)]
    order_date: chrono::NaiveDateTime,
    customer: Option<String>,
    customer_type: Option<String>,
    status: String,
    #[diesel(deserialize_as = StoredInstant)]
    created_at: chrono::NaiveDateTime,
    #[diesel(deserialize_as = StoredInstant)]
    updated_at: chrono::NaiveDateTime,
    shipped_date: Option<chrono::NaiveDateTime>,
}

#[derive(Queryable, QueryableByName, Insertable, serde::Deserialize)]
#[diesel(table_name = shipments)]
pub(crate) struct ShipmentRow {
    order_id: String,
    position: i32,
    sku: String,
    lot_id: String,
    lot_type: String,
    lot_number: i64,
    quantity: i32,
    weight_micros: i64,
    weight_unit: String,
    #[diesel(deserialize_as = StoredInstant)]
    shipped_date: chrono::NaiveDateTime,
}

fn shipment(row: ShipmentRow) -> StoreResult<Shipment> {
    let lot = TypedLotRef::parse(uuid("shipment", &row.lot_id)?, &row.lot_type)
        .map_err(|e| corrupt("shipment", e))?;
    let unit = WeightUnit::parse(&row.weight_unit).map_err(|e| corrupt("shipment", e))?;
    Ok(Shipment {
        sku: Sku::parse(&row.sku).map_err(|e| corrupt("shipment", e))?,
        lot,
        lot_number: row.lot_number,
        quantity: row.quantity,
        weight: Weight::from_micros(row.weight_micros, unit).map_err(|e| corrupt("shipment", e))?,
    })
}

#[derive(Queryable, QueryableByName, Insertable, serde::Deserialize)]
#[diesel(table_name = order_items)]
// None is NULL, not DEFAULT: that lets SQLite insert a whole batch in one statement.
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct ItemRow {
    order_id: String,
    position: i32,
    sku: String,
    quantity: i32,
}

fn item_rows<'a>(orders: impl IntoIterator<Item = &'a Order>) -> StoreResult<Vec<ItemRow>> {
    orders
        .into_iter()
        .flat_map(|o| {
            o.items
                .iter()
                .enumerate()
                .map(move |(i, item)| (o, i, item))
        })
        .map(|(o, i, item)| {
            Ok(ItemRow {
                order_id: o.id.to_string(),
                position: i32::try_from(i).map_err(|e| corrupt("order item", e))?,
                sku: item.sku.to_string(),
                quantity: item.quantity,
            })
        })
        .collect()
}

/// The order of `row`, with the rows of its items and shipments, each in position order.
pub(crate) fn order(
    row: OrderRow,
    items: Vec<ItemRow>,
    shipments: Vec<ShipmentRow>,
) -> StoreResult<Order> {
    Ok(Order {
        id: uuid("order", &row.id)?,
        items: items
            .into_iter()
            .map(|item| {
                Ok(OrderItem {
                    sku: Sku::parse(&item.sku).map_err(|e| corrupt("order item", e))?,
                    quantity: item.quantity,
                })
            })
            .collect::<StoreResult<_>>()?,
        shipments: shipments
            .into_iter()
            .map(shipment)
            .collect::<StoreResult<_>>()?,
        shipped_date: row.shipped_date.map(from_db),
        external_id: row.external_id,
        order_date: from_db(row.order_date),
        customer: row.customer,
        customer_type: row
            .customer_type
            .as_deref()
            .map(CustomerType::parse)
            .transpose()
            .map_err(|e| corrupt("order", e))?,
        status: OrderStatus::parse(&row.status).map_err(|e| corrupt("order", e))?,
        created_at: from_db(row.created_at),
        updated_at: from_db(row.updated_at),
    })
}

const ITEMS_OF_ORDERS: &str = "SELECT order_id, position, sku, quantity FROM order_items \
     WHERE order_id {ids} ORDER BY order_id, position";

const SHIPMENTS_OF_ORDERS: &str = "SELECT order_id, position, sku, lot_id, lot_type, lot_number, \
     quantity, weight_micros, weight_unit, shipped_date FROM shipments \
     WHERE order_id {ids} ORDER BY order_id, position";

impl DieselTx {
    /// Orders of these rows with their items, in the order of the rows.
    ///
    /// The items and the shipments are one kept statement each, whatever the number of orders.
    pub(crate) fn with_items(&mut self, rows: Vec<OrderRow>) -> StoreResult<Vec<Order>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let ids = rows
            .iter()
            .map(|r| uuid("order", &r.id))
            .collect::<StoreResult<Vec<Uuid>>>()?;
        let mut items: HashMap<String, Vec<ItemRow>> = HashMap::new();
        let mut shipped: HashMap<String, Vec<ShipmentRow>> = HashMap::new();
        let found: Vec<ShipmentRow> = self.load_for_ids(SHIPMENTS_OF_ORDERS, &ids)?;
        for row in found {
            shipped.entry(row.order_id.clone()).or_default().push(row);
        }
        let found: Vec<ItemRow> = self.load_for_ids(ITEMS_OF_ORDERS, &ids)?;
        for row in found {
            items.entry(row.order_id.clone()).or_default().push(row);
        }
        rows.into_iter()
            .map(|row| {
                let items = items.remove(&row.id).unwrap_or_default();
                let shipments = shipped.remove(&row.id).unwrap_or_default();
                order(row, items, shipments)
            })
            .collect()
    }

    fn insert_items(&mut self, rows: &[ItemRow]) -> StoreResult<()> {
        for chunk in rows.chunks(CHUNK) {
            on_backend!(self.conn()?, |c| insert_rows!(c, order_items::table, chunk)).store()?;
        }
        Ok(())
    }
}

type OrderExpr<ST> = Box<dyn BoxableExpression<orders::table, Db, SqlType = ST>>;

impl OrderRepo for DieselTx {
    fn orders_for_update(&mut self, external_ids: &[String]) -> StoreResult<Vec<ForUpdate<Order>>> {
        roastery_ports::locked::orders_for_update(self, external_ids)
    }

    fn order_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<Order>>> {
        roastery_ports::locked::order_for_update(self, id)
    }

    fn orders_by_external_ids(&mut self, external_ids: &[String]) -> StoreResult<Vec<Order>> {
        let mut rows = Vec::new();
        for chunk in external_ids.chunks(CHUNK) {
            rows.extend(
                orders::table
                    .filter(orders::external_id.eq_any(chunk))
                    .load::<OrderRow>(self.conn()?)
                    .store()?,
            );
        }
        self.with_items(rows)
    }

    fn insert_orders(&mut self, orders: &[Order]) -> StoreResult<()> {
        for o in orders {
            self.record_change(Subject::new(Resource::Order, o.id), Change::Created);
        }
        let rows: Vec<OrderRow> = orders
            .iter()
            .map(|o| OrderRow {
                id: o.id.to_string(),
                external_id: o.external_id.clone(),
                order_date: to_db(o.order_date),
                customer: o.customer.clone(),
                customer_type: o.customer_type.map(|t| t.as_str().to_owned()),
                status: o.status.as_str().to_owned(),
                created_at: to_db(o.created_at),
                updated_at: to_db(o.updated_at),
                shipped_date: o.shipped_date.map(to_db),
            })
            .collect();
        for chunk in rows.chunks(CHUNK) {
            on_backend!(self.conn()?, |c| insert_rows!(c, orders::table, chunk))
                .store()
                .map_err(crate::error::concurrent_insert)?;
        }
        self.insert_items(&item_rows(orders)?)
    }

    fn update_orders(&mut self, orders: &[ForUpdate<Order>]) -> StoreResult<()> {
        for o in orders {
            self.record_change(Subject::new(Resource::Order, o.id), Change::Updated);
        }
        for chunk in orders.chunks(CHUNK) {
            let ids: Vec<String> = chunk.iter().map(|o| o.id.to_string()).collect();
            let mut customer: OrderExpr<Nullable<Text>> = Box::new(orders::customer);
            let mut customer_type: OrderExpr<Nullable<Text>> = Box::new(orders::customer_type);
            let mut status: OrderExpr<Text> = Box::new(orders::status);
            let mut updated_at: OrderExpr<Timestamp> = Box::new(orders::updated_at);
            for o in chunk {
                let id = o.id.to_string();
                customer = Box::new(
                    case_when(
                        orders::id.eq(id.clone()),
                        o.customer.clone().into_sql::<Nullable<Text>>(),
                    )
                    .otherwise(customer),
                );
                customer_type = Box::new(
                    case_when(
                        orders::id.eq(id.clone()),
                        o.customer_type
                            .map(|t| t.as_str().to_owned())
                            .into_sql::<Nullable<Text>>(),
                    )
                    .otherwise(customer_type),
                );
                status = Box::new(
                    case_when(
                        orders::id.eq(id.clone()),
                        o.status.as_str().to_owned().into_sql::<Text>(),
                    )
                    .otherwise(status),
                );
                updated_at = Box::new(
                    case_when(
                        orders::id.eq(id),
                        to_db(o.updated_at).into_sql::<Timestamp>(),
                    )
                    .otherwise(updated_at),
                );
            }
            diesel::update(orders::table.filter(orders::id.eq_any(&ids)))
                .set((
                    orders::customer.eq(customer),
                    orders::customer_type.eq(customer_type),
                    orders::status.eq(status),
                    orders::updated_at.eq(updated_at),
                ))
                .execute(self.conn()?)
                .store()?;
            // Items are replaced as a whole: an update may reorder, add or drop lines.
            diesel::delete(order_items::table.filter(order_items::order_id.eq_any(&ids)))
                .execute(self.conn()?)
                .store()?;
        }
        self.insert_items(&item_rows(orders.iter().map(|o| &**o))?)
    }

    fn order(&mut self, id: Uuid) -> StoreResult<Option<Order>> {
        let row: Option<OrderRow> = orders::table
            .find(id.to_string())
            .first(self.conn()?)
            .optional()
            .store()?;
        Ok(self.with_items(row.into_iter().collect())?.pop())
    }

    fn record_shipments(&mut self, order: &ForUpdate<Order>) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Order, order.id), Change::Updated);
        let id = order.id.to_string();
        diesel::update(orders::table.find(&id))
            .set((
                orders::status.eq(order.status.as_str()),
                orders::updated_at.eq(to_db(order.updated_at)),
                orders::shipped_date.eq(order.shipped_date.map(to_db)),
            ))
            .execute(self.conn()?)
            .store()?;
        let shipped_date = to_db(order.shipped_date.unwrap_or(order.updated_at));
        let rows = order
            .shipments
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Ok(ShipmentRow {
                    order_id: id.clone(),
                    position: i32::try_from(i).map_err(|e| corrupt("shipment", e))?,
                    sku: s.sku.to_string(),
                    lot_id: s.lot.id.to_string(),
                    lot_type: s.lot.kind.reference_type().to_owned(),
                    lot_number: s.lot_number,
                    quantity: s.quantity,
                    weight_micros: s.weight.micros(),
                    weight_unit: s.weight.unit().as_str().to_owned(),
                    shipped_date,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        for chunk in rows.chunks(CHUNK) {
            on_backend!(self.conn()?, |c| insert_rows!(c, shipments::table, chunk)).store()?;
        }
        Ok(())
    }

    fn list_orders(
        &mut self,
        filter: &OrderFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Order>> {
        let mut query = orders::table.into_boxed();
        if let Some(from) = filter.order_date_from {
            query = query.filter(orders::order_date.ge(to_db(from)));
        }
        if let Some(to) = filter.order_date_to {
            query = query.filter(orders::order_date.lt(to_db(to)));
        }
        if let Some(status) = filter.status {
            query = query.filter(orders::status.eq(status.as_str()));
        }
        let rows: Vec<OrderRow> = newest_first!(query, page, orders::order_date, orders::id)
            .load(self.conn()?)
            .store()?;
        let items = self.with_items(rows)?;
        Ok(Page::from_overfetch(items, page.limit, |o| {
            (o.order_date, o.id)
        }))
    }
}
