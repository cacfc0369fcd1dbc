//! In-memory orders.

use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::order::Order;
use roastery_domain::page::{Page, PageRequest};
use uuid::Uuid;

use super::store::{MemTx, page_newest_first};
use crate::lock::ForUpdate;
use crate::repo::*;

impl OrderRepo for MemTx {
    fn orders_for_update(&mut self, external_ids: &[String]) -> StoreResult<Vec<ForUpdate<Order>>> {
        crate::locked::orders_for_update(self, external_ids)
    }

    fn order_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<Order>>> {
        crate::locked::order_for_update(self, id)
    }

    fn orders_by_external_ids(&mut self, external_ids: &[String]) -> StoreResult<Vec<Order>> {
        Ok(self
            .data
            .order
            .orders
            .iter()
            .filter(|o| external_ids.contains(&o.external_id))
            .cloned()
            .collect())
    }

    fn insert_orders(&mut self, orders: &[Order]) -> StoreResult<()> {
        for o in orders {
            self.record_change(Subject::new(Resource::Order, o.id), Change::Created);
        }
        let mut stored: Vec<&Order> = self.data.order.orders.iter().collect();
        for o in orders {
            // Like the database's unique keys: taken after the unit of work found it free, by a
            // concurrent sync; it runs again.
            if (stored.iter()).any(|s| s.id == o.id || s.external_id == o.external_id) {
                return Err(crate::StoreError::Contention);
            }
            stored.push(o);
        }
        self.data.order.orders.extend_from_slice(orders);
        Ok(())
    }

    fn update_orders(&mut self, orders: &[ForUpdate<Order>]) -> StoreResult<()> {
        for o in orders {
            self.record_change(Subject::new(Resource::Order, o.id), Change::Updated);
        }
        for order in orders {
            if let Some(stored) = self.data.order.orders.iter_mut().find(|o| o.id == order.id) {
                // The order date and creation time never change.
                stored.customer.clone_from(&order.customer);
                stored.customer_type = order.customer_type;
                stored.status = order.status;
                stored.items.clone_from(&order.items);
                stored.updated_at = order.updated_at;
            }
        }
        Ok(())
    }

    fn order(&mut self, id: Uuid) -> StoreResult<Option<Order>> {
        Ok(self.data.order.orders.iter().find(|o| o.id == id).cloned())
    }

    fn record_shipments(&mut self, order: &ForUpdate<Order>) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Order, order.id), Change::Updated);
        if let Some(stored) = self.data.order.orders.iter_mut().find(|o| o.id == order.id) {
            stored.status = order.status;
            stored.updated_at = order.updated_at;
            stored.shipped_date = order.shipped_date;
            stored.shipments.clone_from(&order.shipments);
        }
        Ok(())
    }

    fn list_orders(
        &mut self,
        filter: &OrderFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Order>> {
        page_newest_first(
            self.data
                .order
                .orders
                .iter()
                .filter(|o| filter.matches(o))
                .cloned(),
            |o| (o.order_date, o.id),
            page,
        )
    }
}
