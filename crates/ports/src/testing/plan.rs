//! In-memory planning data, recipes and the reads of planning and costs.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use roastery_domain::cost::{Basis, CostLot};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::ledger::EntryKind;
use roastery_domain::order::OrderStatus;
use roastery_domain::planning::{ProfilePlanning, Recipe, RoastYield, SkuDemand};
use roastery_domain::product::Product;
use roastery_domain::stock::{LotKind, TypedLotRef};
use roastery_domain::weight::Weight;
use uuid::Uuid;

use super::store::MemTx;
use crate::repo::{EventRepo as _, GreenLotUse, PlanRepo, StoreResult};

impl PlanRepo for MemTx {
    fn profile_plannings(&mut self, ids: &[Uuid]) -> StoreResult<Vec<(Uuid, ProfilePlanning)>> {
        Ok(ids
            .iter()
            .filter_map(|id| self.data.plan.plannings.get(id).map(|p| (*id, *p)))
            .collect())
    }

    fn put_profile_planning(
        &mut self,
        id: Uuid,
        planning: &ProfilePlanning,
        _at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Profile, id), Change::Updated);
        self.data.plan.plannings.insert(id, *planning);
        Ok(())
    }

    fn recent_roasts(
        &mut self,
        profile_ids: &[Uuid],
        per_profile: usize,
    ) -> StoreResult<Vec<(Uuid, RoastYield)>> {
        let mut out = Vec::new();
        for id in profile_ids {
            let mut lots: Vec<_> = self
                .data
                .roast
                .lots
                .iter()
                .filter(|l| l.profile_id == Some(*id))
                .collect();
            lots.sort_by(|a, b| b.roasted_date.cmp(&a.roasted_date).then(b.id.cmp(&a.id)));
            out.extend(lots.into_iter().take(per_profile).map(|l| {
                (
                    *id,
                    RoastYield {
                        used_green: l.sources.iter().map(|s| s.used_weight).collect(),
                        roasted: l.roasted_weight,
                    },
                )
            }));
        }
        Ok(out)
    }

    fn roasted_on_hand(&mut self, profile_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Weight)>> {
        Ok(self
            .data
            .roast
            .lots
            .iter()
            .filter(|l| !l.stock.is_consumed())
            .filter_map(|l| {
                l.profile_id
                    .filter(|p| profile_ids.contains(p))
                    .map(|p| (p, l.stock.weight()))
            })
            .collect())
    }

    fn product_by_id(&mut self, id: Uuid) -> StoreResult<Option<Product>> {
        Ok(self
            .data
            .product
            .products
            .iter()
            .find(|p| p.id == id)
            .cloned())
    }

    fn recipes_of(&mut self, product_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Recipe)>> {
        Ok(product_ids
            .iter()
            .filter_map(|id| self.data.plan.recipes.get(id).map(|r| (*id, r.clone())))
            .collect())
    }

    fn put_recipe(
        &mut self,
        product_id: Uuid,
        recipe: Option<&Recipe>,
        _at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Product, product_id), Change::Updated);
        match recipe {
            Some(r) => self.data.plan.recipes.insert(product_id, r.clone()),
            None => self.data.plan.recipes.remove(&product_id),
        };
        Ok(())
    }

    fn open_demand(&mut self, until: Option<DateTime<Utc>>) -> StoreResult<Vec<SkuDemand>> {
        let mut bags: BTreeMap<String, i64> = BTreeMap::new();
        for o in &self.data.order.orders {
            if !matches!(o.status, OrderStatus::Open | OrderStatus::InProgress)
                || until.is_some_and(|u| o.order_date > u)
            {
                continue;
            }
            for item in &o.items {
                let sum = bags.entry(item.sku.to_string()).or_default();
                *sum = sum.saturating_add(i64::from(item.quantity));
            }
        }
        let mut out = Vec::new();
        for p in &self.data.product.products {
            for v in &p.variants {
                if let Some(n) = bags.get(v.sku.as_str()) {
                    out.push(SkuDemand {
                        sku: v.sku.clone(),
                        product_id: p.id,
                        bags: *n,
                        package_size: v.package_size,
                    });
                }
            }
        }
        Ok(out)
    }

    fn green_lot_use(
        &mut self,
        since: DateTime<Utc>,
        location: Option<Uuid>,
    ) -> StoreResult<Vec<GreenLotUse>> {
        let mut used: HashMap<Uuid, i64> = HashMap::new();
        for e in &self.data.ledger {
            if e.lot.kind == LotKind::Green
                && matches!(e.kind, EntryKind::RoastInput | EntryKind::Shipment)
                && e.created_date >= since
            {
                let sum = used.entry(e.lot.id).or_default();
                *sum = sum.saturating_sub(e.delta_micros);
            }
        }
        Ok(self
            .data
            .green
            .lots
            .iter()
            .filter(|l| !l.stock.is_consumed())
            .filter(|l| location.is_none_or(|at| l.location_id == Some(at)))
            .map(|l| GreenLotUse {
                id: l.id,
                lot_number: l.lot_number,
                weight: l.stock.weight(),
                used_micros: used.get(&l.id).copied().unwrap_or(0),
            })
            .collect())
    }

    fn cost_lots(&mut self, lots: &[TypedLotRef]) -> StoreResult<Vec<CostLot>> {
        let mut out = Vec::new();
        for r in lots {
            let found = match r.kind {
                LotKind::Green => self.data.green.lots.iter().find(|l| l.id == r.id).map(|l| {
                    (
                        l.lot_number,
                        l.stock.weight(),
                        Basis::Green { price: l.price },
                    )
                }),
                LotKind::Roasted => self.data.roast.lots.iter().find(|l| l.id == r.id).map(|l| {
                    (
                        l.lot_number,
                        l.stock.weight(),
                        Basis::Roasted {
                            created: l.roasted_weight,
                        },
                    )
                }),
                LotKind::Blended => self
                    .data
                    .blend
                    .lots
                    .iter()
                    .find(|l| l.id == r.id)
                    .map(|l| (l.lot_number, l.stock.weight(), Basis::Blended)),
            };
            if let Some((lot_number, weight, basis)) = found {
                out.push(CostLot {
                    lot: *r,
                    lot_number,
                    weight,
                    basis,
                });
            }
        }
        Ok(out)
    }
}
