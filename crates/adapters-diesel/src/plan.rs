//! Stored planning data and recipes, and the reads of planning and costs (api-decisions §15).
//!
//! Every read is a fixed number of statements whatever the number of orders, profiles or lots
//! (id lists longer than [`CHUNK`] are split): the last roasts of all asked profiles come from
//! one window query over `roasted_lots_profile_roasted`, the open demand from one join of
//! orders and their items.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use roastery_domain::cost::{Basis, CostLot};
use roastery_domain::decimal::{from_micros, to_micros};
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::planning::{
    BatchSize, ProfilePlanning, Recipe, RecipeComponent, RoastYield, SkuDemand,
};
use roastery_domain::price::{Currency, Price};
use roastery_domain::product::{PackageSize, Product, Sku};
use roastery_domain::stock::{LotKind, TypedLotRef};
use roastery_domain::weight::{Weight, WeightUnit};
use roastery_ports::StoreError;
use roastery_ports::repo::{EventRepo as _, GreenLotUse, PlanRepo, StoreResult};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{OrStoreError, corrupt};
use crate::id_set::IDS;
use crate::product::CHUNK;
use crate::roast::id_texts;
use crate::row::uuid;
use crate::schema::{
    blended_lots, green_lots, ledger_entries, order_items, orders, product_recipes,
    product_variants, profile_planning, roast_sources, roasted_lots,
};
use crate::store::DieselTx;
use crate::time::to_db;

#[derive(Queryable, Insertable, AsChangeset)]
#[diesel(table_name = profile_planning, primary_key(profile_id), treat_none_as_null = true)]
struct PlanningRow {
    profile_id: String,
    expected_loss_micros: Option<i64>,
    batch_min_micros: Option<i64>,
    batch_min_unit: Option<String>,
    batch_max_micros: Option<i64>,
    batch_max_unit: Option<String>,
    updated_at: chrono::NaiveDateTime,
}

fn weight(what: &str, micros: i64, unit: &str) -> StoreResult<Weight> {
    let unit = WeightUnit::parse(unit).map_err(|e| corrupt(what, e))?;
    Weight::from_micros(micros, unit).map_err(|e| corrupt(what, e))
}

impl PlanningRow {
    fn into_domain(self) -> StoreResult<(Uuid, ProfilePlanning)> {
        const WHAT: &str = "profile planning";
        let batch_size = match (
            self.batch_min_micros,
            self.batch_min_unit,
            self.batch_max_micros,
            self.batch_max_unit,
        ) {
            (Some(min), Some(min_unit), Some(max), Some(max_unit)) => Some(BatchSize {
                min: weight(WHAT, min, &min_unit)?,
                max: weight(WHAT, max, &max_unit)?,
            }),
            _ => None,
        };
        Ok((
            uuid(WHAT, &self.profile_id)?,
            ProfilePlanning {
                expected_loss: self.expected_loss_micros.map(from_micros),
                batch_size,
            },
        ))
    }
}

/// A recipe component as stored: the percentage in micro-units.
#[derive(Serialize, Deserialize)]
struct ComponentJson {
    profile_id: Uuid,
    percentage_micros: i64,
}

#[derive(Queryable, Insertable, AsChangeset)]
#[diesel(table_name = product_recipes, primary_key(product_id))]
struct RecipeRow {
    product_id: String,
    components: String,
    updated_at: chrono::NaiveDateTime,
}

/// A green lot's id, lot number, weight (micros, unit) and price (micros, currency).
type GreenCostRow = (String, i64, i64, String, Option<i64>, Option<String>);

#[derive(QueryableByName)]
struct RecentRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    profile_id: String,
    #[diesel(sql_type = BigInt)]
    roasted_micros: i64,
    #[diesel(sql_type = Text)]
    weight_unit: String,
}

/// Far beyond any order date: "no limit" as a bound both databases compare.
fn no_limit() -> chrono::NaiveDateTime {
    NaiveDate::from_ymd_opt(9999, 12, 31)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .unwrap_or_default()
}

impl PlanRepo for DieselTx {
    fn profile_plannings(&mut self, ids: &[Uuid]) -> StoreResult<Vec<(Uuid, ProfilePlanning)>> {
        let mut out = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            let rows: Vec<PlanningRow> = profile_planning::table
                .filter(profile_planning::profile_id.eq_any(id_texts(chunk)))
                .load(self.conn()?)
                .store()?;
            for row in rows {
                out.push(row.into_domain()?);
            }
        }
        Ok(out)
    }

    fn put_profile_planning(
        &mut self,
        id: Uuid,
        planning: &ProfilePlanning,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Profile, id), Change::Updated);
        let micros =
            |d| to_micros(d).ok_or_else(|| StoreError::Internal(format!("{d} out of range")));
        let row = PlanningRow {
            profile_id: id.to_string(),
            expected_loss_micros: planning.expected_loss.map(micros).transpose()?,
            batch_min_micros: planning.batch_size.map(|b| b.min.micros()),
            batch_min_unit: planning
                .batch_size
                .map(|b| b.min.unit().as_str().to_owned()),
            batch_max_micros: planning.batch_size.map(|b| b.max.micros()),
            batch_max_unit: planning
                .batch_size
                .map(|b| b.max.unit().as_str().to_owned()),
            updated_at: to_db(at),
        };
        on_backend!(self.conn()?, |c| diesel::insert_into(
            profile_planning::table
        )
        .values(&row)
        .on_conflict(profile_planning::profile_id)
        .do_update()
        .set(&row)
        .execute(c))
        .store()
        .map(drop)
    }

    fn recent_roasts(
        &mut self,
        profile_ids: &[Uuid],
        per_profile: usize,
    ) -> StoreResult<Vec<(Uuid, RoastYield)>> {
        let mut lots: Vec<RecentRow> = Vec::new();
        for chunk in profile_ids.chunks(CHUNK) {
            lots.extend(self.load_for_ids::<RecentRow>(
                &format!(
                    "SELECT id, profile_id, roasted_micros, weight_unit FROM (\
                     SELECT id, profile_id, roasted_micros, weight_unit, ROW_NUMBER() OVER (\
                     PARTITION BY profile_id ORDER BY roasted_date DESC, id DESC) AS n \
                     FROM roasted_lots WHERE profile_id {IDS}) recent WHERE n <= {per_profile}"
                ),
                chunk,
            )?);
        }
        let ids: Vec<String> = lots.iter().map(|l| l.id.clone()).collect();
        let mut used: HashMap<String, Vec<Weight>> = HashMap::new();
        for chunk in ids.chunks(CHUNK) {
            let rows: Vec<(String, i64, String)> = roast_sources::table
                .filter(roast_sources::roasted_lot_id.eq_any(chunk))
                .select((
                    roast_sources::roasted_lot_id,
                    roast_sources::used_micros,
                    roast_sources::used_unit,
                ))
                .load(self.conn()?)
                .store()?;
            for (lot, micros, unit) in rows {
                used.entry(lot)
                    .or_default()
                    .push(weight("roast source", micros, &unit)?);
            }
        }
        lots.into_iter()
            .map(|l| {
                Ok((
                    uuid("roasted lot", &l.profile_id)?,
                    RoastYield {
                        used_green: used.remove(&l.id).unwrap_or_default(),
                        roasted: weight("roasted lot", l.roasted_micros, &l.weight_unit)?,
                    },
                ))
            })
            .collect()
    }

    fn roasted_on_hand(&mut self, profile_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Weight)>> {
        let mut out = Vec::new();
        for chunk in profile_ids.chunks(CHUNK) {
            let rows: Vec<(Option<String>, i64, String)> = roasted_lots::table
                .filter(roasted_lots::profile_id.eq_any(id_texts(chunk)))
                .filter(roasted_lots::consumed_at.is_null())
                .select((
                    roasted_lots::profile_id,
                    roasted_lots::weight_micros,
                    roasted_lots::weight_unit,
                ))
                .load(self.conn()?)
                .store()?;
            for (profile, micros, unit) in rows {
                if let Some(profile) = profile {
                    out.push((
                        uuid("roasted lot", &profile)?,
                        weight("roasted lot", micros, &unit)?,
                    ));
                }
            }
        }
        Ok(out)
    }

    fn product_by_id(&mut self, id: Uuid) -> StoreResult<Option<Product>> {
        self.product_of_id(id)
    }

    fn recipes_of(&mut self, product_ids: &[Uuid]) -> StoreResult<Vec<(Uuid, Recipe)>> {
        let mut out = Vec::new();
        for chunk in product_ids.chunks(CHUNK) {
            let rows: Vec<RecipeRow> = product_recipes::table
                .filter(product_recipes::product_id.eq_any(id_texts(chunk)))
                .load(self.conn()?)
                .store()?;
            for row in rows {
                let components: Vec<ComponentJson> =
                    serde_json::from_str(&row.components).map_err(|e| corrupt("recipe", e))?;
                out.push((
                    uuid("recipe", &row.product_id)?,
                    Recipe {
                        components: components
                            .into_iter()
                            .map(|c| RecipeComponent {
                                profile_id: c.profile_id,
                                percentage: from_micros(c.percentage_micros),
                            })
                            .collect(),
                    },
                ));
            }
        }
        Ok(out)
    }

    fn put_recipe(
        &mut self,
        product_id: Uuid,
        recipe: Option<&Recipe>,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::Product, product_id), Change::Updated);
        let key = product_id.to_string();
        let Some(recipe) = recipe else {
            diesel::delete(product_recipes::table.find(&key))
                .execute(self.conn()?)
                .store()?;
            return Ok(());
        };
        let components = recipe
            .components
            .iter()
            .map(|c| {
                Ok(ComponentJson {
                    profile_id: c.profile_id,
                    percentage_micros: to_micros(c.percentage).ok_or_else(|| {
                        StoreError::Internal(format!("percentage {} too large", c.percentage))
                    })?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let row = RecipeRow {
            product_id: key,
            components: serde_json::to_string(&components)
                .map_err(|e| StoreError::Internal(e.to_string()))?,
            updated_at: to_db(at),
        };
        on_backend!(self.conn()?, |c| diesel::insert_into(
            product_recipes::table
        )
        .values(&row)
        .on_conflict(product_recipes::product_id)
        .do_update()
        .set(&row)
        .execute(c))
        .store()
        .map(drop)
    }

    fn open_demand(&mut self, until: Option<DateTime<Utc>>) -> StoreResult<Vec<SkuDemand>> {
        let until = until.map_or_else(no_limit, to_db);
        let rows: Vec<(String, i32)> = order_items::table
            .inner_join(orders::table)
            .filter(orders::status.eq_any(["OPEN", "IN_PROGRESS"]))
            .filter(orders::order_date.le(until))
            .select((order_items::sku, order_items::quantity))
            .load(self.conn()?)
            .store()?;
        let mut bags: HashMap<String, i64> = HashMap::new();
        for (sku, quantity) in rows {
            let sum = bags.entry(sku).or_default();
            *sum = sum.saturating_add(i64::from(quantity));
        }
        let skus: Vec<String> = bags.keys().cloned().collect();
        let mut out = Vec::with_capacity(skus.len());
        for chunk in skus.chunks(CHUNK) {
            let variants: Vec<(String, String, i64)> = product_variants::table
                .filter(product_variants::sku.eq_any(chunk))
                .select((
                    product_variants::sku,
                    product_variants::product_id,
                    product_variants::package_size_ug,
                ))
                .load(self.conn()?)
                .store()?;
            for (sku, product_id, grams) in variants {
                out.push(SkuDemand {
                    bags: bags.get(&sku).copied().unwrap_or(0),
                    sku: Sku::parse(&sku).map_err(|e| corrupt("variant", e))?,
                    product_id: uuid("variant", &product_id)?,
                    package_size: PackageSize::from_grams(from_micros(grams))
                        .map_err(|e| corrupt("variant", e))?,
                });
            }
        }
        Ok(out)
    }

    fn green_lot_use(
        &mut self,
        since: DateTime<Utc>,
        location: Option<Uuid>,
    ) -> StoreResult<Vec<GreenLotUse>> {
        let lots: Vec<(String, i64, i64, String)> = match location {
            None => green_lots::table
                .filter(green_lots::consumed_at.is_null())
                .select((
                    green_lots::id,
                    green_lots::lot_number,
                    green_lots::weight_micros,
                    green_lots::weight_unit,
                ))
                .load(self.conn()?),
            Some(at) => green_lots::table
                .filter(green_lots::consumed_at.is_null())
                .filter(green_lots::location_id.eq(at.to_string()))
                .select((
                    green_lots::id,
                    green_lots::lot_number,
                    green_lots::weight_micros,
                    green_lots::weight_unit,
                ))
                .load(self.conn()?),
        }
        .store()?;
        let entries: Vec<(String, i64)> = ledger_entries::table
            .filter(ledger_entries::created_date.ge(to_db(since)))
            .filter(ledger_entries::lot_type.eq(LotKind::Green.reference_type()))
            .filter(ledger_entries::kind.eq_any(["ROAST_INPUT", "SHIPMENT"]))
            .select((ledger_entries::lot_id, ledger_entries::delta_micros))
            .load(self.conn()?)
            .store()?;
        let mut used: HashMap<String, i64> = HashMap::new();
        for (lot, delta) in entries {
            let sum = used.entry(lot).or_default();
            *sum = sum.saturating_sub(delta);
        }
        lots.into_iter()
            .map(|(id, lot_number, micros, unit)| {
                Ok(GreenLotUse {
                    used_micros: used.get(&id).copied().unwrap_or(0),
                    id: uuid("green lot", &id)?,
                    lot_number,
                    weight: weight("green lot", micros, &unit)?,
                })
            })
            .collect()
    }

    fn cost_lots(&mut self, lots: &[TypedLotRef]) -> StoreResult<Vec<CostLot>> {
        let of = |kind: LotKind| -> Vec<String> {
            lots.iter()
                .filter(|l| l.kind == kind)
                .map(|l| l.id.to_string())
                .collect()
        };
        let mut out = Vec::with_capacity(lots.len());
        for chunk in of(LotKind::Green).chunks(CHUNK) {
            let rows: Vec<GreenCostRow> = green_lots::table
                .filter(green_lots::id.eq_any(chunk))
                .select((
                    green_lots::id,
                    green_lots::lot_number,
                    green_lots::weight_micros,
                    green_lots::weight_unit,
                    green_lots::price_micros,
                    green_lots::price_currency,
                ))
                .load(self.conn()?)
                .store()?;
            for (id, lot_number, micros, unit, price, currency) in rows {
                let price = match (price, currency) {
                    (Some(micros), Some(code)) => {
                        let currency = Currency::parse(&code).map_err(|e| corrupt("price", e))?;
                        Some(
                            Price::from_micros(micros, currency)
                                .map_err(|e| corrupt("price", e))?,
                        )
                    }
                    _ => None,
                };
                out.push(CostLot {
                    lot: TypedLotRef {
                        id: uuid("green lot", &id)?,
                        kind: LotKind::Green,
                    },
                    lot_number,
                    weight: weight("green lot", micros, &unit)?,
                    basis: Basis::Green { price },
                });
            }
        }
        for chunk in of(LotKind::Roasted).chunks(CHUNK) {
            let rows: Vec<(String, i64, i64, String, i64)> = roasted_lots::table
                .filter(roasted_lots::id.eq_any(chunk))
                .select((
                    roasted_lots::id,
                    roasted_lots::lot_number,
                    roasted_lots::weight_micros,
                    roasted_lots::weight_unit,
                    roasted_lots::roasted_micros,
                ))
                .load(self.conn()?)
                .store()?;
            for (id, lot_number, micros, unit, roasted) in rows {
                out.push(CostLot {
                    lot: TypedLotRef {
                        id: uuid("roasted lot", &id)?,
                        kind: LotKind::Roasted,
                    },
                    lot_number,
                    weight: weight("roasted lot", micros, &unit)?,
                    basis: Basis::Roasted {
                        created: weight("roasted lot", roasted, &unit)?,
                    },
                });
            }
        }
        for chunk in of(LotKind::Blended).chunks(CHUNK) {
            let rows: Vec<(String, i64, i64, String)> = blended_lots::table
                .filter(blended_lots::id.eq_any(chunk))
                .select((
                    blended_lots::id,
                    blended_lots::lot_number,
                    blended_lots::weight_micros,
                    blended_lots::weight_unit,
                ))
                .load(self.conn()?)
                .store()?;
            for (id, lot_number, micros, unit) in rows {
                out.push(CostLot {
                    lot: TypedLotRef {
                        id: uuid("blended lot", &id)?,
                        kind: LotKind::Blended,
                    },
                    lot_number,
                    weight: weight("blended lot", micros, &unit)?,
                    basis: Basis::Blended,
                });
            }
        }
        Ok(out)
    }
}
