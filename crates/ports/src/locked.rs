//! The loaders that take the locks of the rows they load, written once for every store: each
//! store's repository method calls its loader here, and only a store can (it alone takes locks).

use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::cupping::Cupping;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::order::Order;
use roastery_domain::product::Product;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_lock::{ForUpdate, RowLocks, Rows};
use uuid::Uuid;

use crate::error::StoreError;
use crate::repo::*;

pub fn green_lot_for_update<Tx: GreenLotRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    id: Uuid,
) -> StoreResult<Option<ForUpdate<GreenLot>>> {
    ForUpdate::load(tx, Rows::GreenLots(&[id]), |tx| tx.green_lot(id)).map(ForUpdate::transpose)
}

#[expect(
    clippy::type_complexity,
    reason = "a source and its optional target, both locked"
)]
pub fn green_lot_to_transfer<Tx: GreenLotRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    id: Uuid,
    location_id: Uuid,
) -> StoreResult<Option<(ForUpdate<GreenLot>, Option<ForUpdate<GreenLot>>)>> {
    let loaded = ForUpdate::load(tx, Rows::GreenLotOrigin(id), |tx| {
        let Some(source) = tx.green_lot(id)? else {
            return Ok(None);
        };
        let target = tx.active_green_lot_at(source.origin_id, location_id)?;
        Ok(Some((source, target)))
    })?;
    Ok(loaded.transpose().map(|both| {
        let (source, target) = both.unzip();
        (source, target.transpose())
    }))
}

pub fn roasted_lot_for_update<Tx: RoastRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    id: Uuid,
) -> StoreResult<Option<ForUpdate<RoastedLot>>> {
    ForUpdate::load(tx, Rows::RoastedLots(&[id]), |tx| tx.roasted_lot(id)).map(ForUpdate::transpose)
}

pub fn roasted_lots_for_update<Tx: RoastRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    ids: &[Uuid],
) -> StoreResult<Vec<ForUpdate<RoastedLot>>> {
    ForUpdate::load(tx, Rows::RoastedLots(ids), |tx| tx.roasted_lots_by_ids(ids))
        .map(ForUpdate::into_each)
}

pub fn blended_lot_for_update<Tx: BlendRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    id: Uuid,
) -> StoreResult<Option<ForUpdate<BlendedLot>>> {
    ForUpdate::load(tx, Rows::BlendedLots(&[id]), |tx| tx.blended_lot(id)).map(ForUpdate::transpose)
}

pub fn cupping_for_update<Tx: CuppingRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    id: Uuid,
) -> StoreResult<Option<ForUpdate<Cupping>>> {
    ForUpdate::load(tx, Rows::Cuppings(&[id]), |tx| tx.cupping(id)).map(ForUpdate::transpose)
}

pub fn products_for_update<Tx: ProductRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    external_ids: &[String],
) -> StoreResult<Vec<ForUpdate<Product>>> {
    ForUpdate::load(tx, Rows::ProductsByExternalId(external_ids), |tx| {
        tx.products_by_external_ids(external_ids)
    })
    .map(ForUpdate::into_each)
}

pub fn orders_for_update<Tx: OrderRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    external_ids: &[String],
) -> StoreResult<Vec<ForUpdate<Order>>> {
    ForUpdate::load(tx, Rows::OrdersByExternalId(external_ids), |tx| {
        tx.orders_by_external_ids(external_ids)
    })
    .map(ForUpdate::into_each)
}

pub fn order_for_update<Tx: OrderRepo + RowLocks<Error = StoreError> + ?Sized>(
    tx: &mut Tx,
    id: Uuid,
) -> StoreResult<Option<ForUpdate<Order>>> {
    ForUpdate::load(tx, Rows::Orders(&[id]), |tx| tx.order(id)).map(ForUpdate::transpose)
}
