//! mrp.plan and costs (api-decisions §15): planning data of profiles, recipes of products, the
//! net requirements of the open orders, run-out dates of green lots and the cost of a lot or an
//! order. Each read is one read transaction of a bounded number of statements; every figure is
//! computed by the domain (`roastery_domain::planning`, `roastery_domain::cost`).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use roastery_domain::cost::{Cost, CostLot, Genealogy};
use roastery_domain::ledger::Reference;
use roastery_domain::location::LocationError;
use roastery_domain::operation::Operation;
use roastery_domain::order::OrderError;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::planning::{
    self, NetRequirements, PlanGreenLot, PlanInput, PlanProfile, PlanningDraft, PlanningError,
    Recipe, RecipeComponent, RecipeDraft, RecipeError, RunOut,
};
use roastery_domain::product::Product;
use roastery_domain::profile::Profile;
use roastery_domain::stock::{LotKind, TypedLotRef};
use roastery_domain::weight::{RequestedWeight, Weight};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::profile::{ProfileView, plannings, profile_views};
use crate::trace::LotNotFound;
use crate::{Repos, Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::repo::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetProfilePlanning {
    pub profile_id: Uuid,
    pub expected_loss: Option<Decimal>,
    /// `(min, max)` green weight per roast.
    pub batch_size: Option<(RequestedWeight, RequestedWeight)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRecipe {
    pub product_id: Uuid,
    pub components: Vec<RecipeComponent>,
}

/// A product and its recipe (`None` until set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductView {
    pub product: Product,
    pub recipe: Option<Recipe>,
}

/// The net requirements and the date they were asked up to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub until: Option<DateTime<Utc>>,
    pub requirements: NetRequirements,
    /// The names of the green lots the profiles draw from (for a roast list).
    pub green_lot_names: HashMap<Uuid, String>,
}

/// One green lot of a run-out list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutLine {
    pub green_lot_id: Uuid,
    pub lot_number: i64,
    pub weight: Weight,
    pub run_out: RunOut,
}

/// What a cost is asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostOf {
    Lot(Uuid),
    Order(Uuid),
}

impl<S: Store> Roastery<S> {
    /// Sets a profile's expected loss (`None`: derived from its roasts) and batch size.
    pub fn set_profile_planning(&self, cmd: SetProfilePlanning) -> Result<ProfileView, AppError> {
        // 1. Parse (400).
        let draft = PlanningDraft::parse(cmd.expected_loss, cmd.batch_size)?;
        let now = self.clock.now();
        self.write(Operation::SetProfilePlanning, |tx| {
            // 2. Load (422 resource_not_found).
            let profile = tx
                .profile(cmd.profile_id)?
                .ok_or(PlanningError::ProfileNotFound(cmd.profile_id))?;
            // 3. Decide (422 invalid_weight).
            let planning = draft.decide()?;
            tx.put_profile_planning(profile.id, &planning, now)?;
            let mut views = profile_views(tx, vec![profile])?;
            views
                .pop()
                .ok_or_else(|| AppError::Store(crate::StoreError::Internal("no profile".into())))
        })
    }

    /// Replaces a product's recipe; an empty list removes it.
    pub fn set_recipe(&self, cmd: SetRecipe) -> Result<ProductView, AppError> {
        let draft = RecipeDraft::parse(cmd.components)?;
        let now = self.clock.now();
        self.write(Operation::SetRecipe, |tx| {
            let product = tx
                .product_by_id(cmd.product_id)?
                .ok_or(RecipeError::ProductNotFound(cmd.product_id))?;
            let ids = draft.profile_ids();
            let found: HashSet<Uuid> = tx.profiles_by_ids(&ids)?.iter().map(|p| p.id).collect();
            if let Some(missing) = ids.iter().find(|id| !found.contains(id)) {
                return Err(RecipeError::ProfileNotFound(*missing).into());
            }
            let recipe = draft.clone().decide()?;
            tx.put_recipe(product.id, recipe.as_ref(), now)?;
            Ok(ProductView { product, recipe })
        })
    }

    /// What must be roasted for the open orders up to `until`, from which green lots.
    pub fn net_requirements(&self, until: Option<DateTime<Utc>>) -> Result<Plan, AppError> {
        let mut green_lot_names = HashMap::new();
        let requirements = self.store.read(|tx| {
            let demand = tx.open_demand(until)?;
            let mut product_ids: Vec<Uuid> = demand.iter().map(|d| d.product_id).collect();
            product_ids.sort();
            product_ids.dedup();
            let recipes: HashMap<Uuid, Recipe> = tx.recipes_of(&product_ids)?.into_iter().collect();
            let mut profile_ids: Vec<Uuid> = recipes
                .values()
                .flat_map(|r| r.components.iter().map(|c| c.profile_id))
                .collect();
            profile_ids.sort();
            profile_ids.dedup();
            let profiles = tx.profiles_by_ids(&profile_ids)?;
            let plannings = plannings(tx, &profile_ids)?;
            let mut on_hand: HashMap<Uuid, Vec<Weight>> = HashMap::new();
            for (id, w) in tx.roasted_on_hand(&profile_ids)? {
                on_hand.entry(id).or_default().push(w);
            }
            let mut green: Vec<TypedLotRef> = profiles
                .iter()
                .flat_map(|p| &p.components)
                .flat_map(|c| &c.green_lots)
                .map(|l| TypedLotRef {
                    id: l.id,
                    kind: LotKind::Green,
                })
                .collect();
            green.sort_by_key(|l| l.id);
            green.dedup();
            let green_lots = tx
                .cost_lots(&green)?
                .into_iter()
                .map(|l| {
                    (
                        l.lot.id,
                        PlanGreenLot {
                            id: l.lot.id,
                            lot_number: l.lot_number,
                            weight: l.weight,
                        },
                    )
                })
                .collect();
            green_lot_names = profiles
                .iter()
                .flat_map(|p| &p.components)
                .flat_map(|c| &c.green_lots)
                .map(|l| (l.id, l.name.clone()))
                .collect();
            let profiles = profiles
                .into_iter()
                .map(|p: Profile| {
                    let plan = PlanProfile {
                        id: p.id,
                        name: p.name,
                        planning: plannings.get(&p.id).copied().unwrap_or_default(),
                        components: p
                            .components
                            .into_iter()
                            .map(|c| {
                                (
                                    c.percentage,
                                    c.green_lots.into_iter().map(|l| l.id).collect(),
                                )
                            })
                            .collect(),
                        roasted_on_hand: on_hand.remove(&p.id).unwrap_or_default(),
                    };
                    (plan.id, plan)
                })
                .collect();
            let input = PlanInput {
                demand,
                recipes,
                profiles,
                green_lots,
            };
            Ok(planning::net_requirements(&input)?)
        })?;
        Ok(Plan {
            until,
            requirements,
            green_lot_names,
        })
    }

    /// Every unconsumed green lot (at `location` when given), the soonest to run out first.
    pub fn run_out(
        &self,
        window: Option<i64>,
        location: Option<Uuid>,
        page: PageRequest,
    ) -> Result<Page<RunOutLine>, AppError> {
        let window = planning::window(window)?;
        page.index()?;
        let now = self.clock.now();
        let since = now
            .checked_sub_signed(TimeDelta::days(i64::from(window)))
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let today: NaiveDate = now.date_naive();
        let lots = self.store.read(|tx| {
            if let Some(id) = location
                && tx.location(id)?.is_none()
            {
                return Err(LocationError::NotFound(id).into());
            }
            Ok(tx.green_lot_use(since, location)?)
        })?;
        let mut lines: Vec<RunOutLine> = lots
            .into_iter()
            .map(|l| {
                let used = Weight::from_micros(l.used_micros.max(0), l.weight.unit())
                    .unwrap_or_else(|_| Weight::zero(l.weight.unit()));
                RunOutLine {
                    green_lot_id: l.id,
                    lot_number: l.lot_number,
                    weight: l.weight,
                    run_out: planning::run_out(l.weight, used, window, today),
                }
            })
            .collect();
        lines.sort_by_key(|l| {
            (
                l.run_out.run_out_date.is_none(),
                l.run_out.run_out_date,
                l.lot_number,
            )
        });
        Ok(Page::from_found(lines, &page)?)
    }

    /// What a lot or an order cost, through transfers, roasts and blends.
    pub fn cost(&self, of: CostOf) -> Result<Cost, AppError> {
        self.store.read_report(|tx| {
            let start = match of {
                CostOf::Lot(id) => {
                    let candidates = [LotKind::Green, LotKind::Roasted, LotKind::Blended]
                        .map(|kind| TypedLotRef { id, kind });
                    let found = tx.cost_lots(&candidates)?;
                    let lot = found.first().ok_or(LotNotFound(id))?;
                    Reference::Lot(lot.lot)
                }
                CostOf::Order(id) => {
                    tx.order(id)?.ok_or(OrderError::NotFound(id))?;
                    Reference::Order(id)
                }
            };
            let edges = tx.upstream_edges(&[start])?;
            let mut refs: HashSet<TypedLotRef> = HashSet::new();
            if let Reference::Lot(l) = start {
                refs.insert(l);
            }
            for e in &edges {
                refs.insert(e.from);
                if let Reference::Lot(to) = e.to {
                    refs.insert(to);
                }
            }
            let lots: HashMap<TypedLotRef, CostLot> = tx
                .cost_lots(&refs.into_iter().collect::<Vec<_>>())?
                .into_iter()
                .map(|l| (l.lot, l))
                .collect();
            let mut genealogy = Genealogy::new(&lots, &edges);
            Ok(match start {
                Reference::Lot(l) => genealogy.lot_cost(l)?,
                Reference::Order(o) => genealogy.order_cost(o)?,
            })
        })
    }
}

/// Products with their recipes, read in one statement for any number of products.
pub(crate) fn product_views(
    tx: &mut impl Repos,
    products: Vec<Product>,
) -> Result<Vec<ProductView>, AppError> {
    let ids: Vec<Uuid> = products.iter().map(|p| p.id).collect();
    let mut recipes: HashMap<Uuid, Recipe> = tx.recipes_of(&ids)?.into_iter().collect();
    Ok(products
        .into_iter()
        .map(|product| ProductView {
            recipe: recipes.remove(&product.id),
            product,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use roastery_domain::Violation;
    use roastery_domain::order::CustomerType;
    use roastery_domain::product::PackageSize;
    use roastery_domain::profile::ComponentDraft;
    use roastery_domain::weight::WeightUnit;

    use super::*;
    use crate::order::{SetOrder, SetOrderItem};
    use crate::product::{SyncProduct, SyncVariant};
    use crate::profile::ImportProfile;
    use crate::roast::tests::{Setup, roast, setup, violation};

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn w(amount: &str) -> RequestedWeight {
        RequestedWeight {
            amount: d(amount),
            unit: WeightUnit::Kg,
        }
    }

    /// Profile "House" of 100 % of green lots 0 then 1.
    fn house(s: &Setup) -> Uuid {
        s.app
            .import_profile(ImportProfile {
                name: "House".into(),
                external_id: None,
                profile_group: None,
                components: vec![ComponentDraft {
                    percentage: Decimal::ONE_HUNDRED,
                    green_lot_ids: vec![s.green[0], s.green[1]],
                }],
                reference_roast_id: None,
                projects: vec![],
            })
            .unwrap()
            .profile
            .id
    }

    fn product(s: &Setup) -> Uuid {
        s.app
            .sync_products(vec![SyncProduct {
                external_id: "P-1".into(),
                name: "House".into(),
                variants: vec![SyncVariant {
                    sku: "H-1000".into(),
                    package_size: PackageSize::parse("PACKAGE1000G").unwrap(),
                }],
            }])
            .unwrap()[0]
            .id
    }

    #[test]
    fn planning_is_set_then_derived_and_errors_change_nothing() {
        let s = setup();
        let p = house(&s);
        let mut cmd = roast(&s, "R", "8", &[(0, "10")]);
        cmd.profile_id = Some(p);
        s.app.record_roast(cmd).unwrap();
        let set = |loss: Option<&str>, batch: Option<(&str, &str)>| SetProfilePlanning {
            profile_id: p,
            expected_loss: loss.map(d),
            batch_size: batch.map(|(a, b)| (w(a), w(b))),
        };
        let view = s
            .app
            .set_profile_planning(set(None, Some(("5", "12"))))
            .unwrap();
        assert_eq!(view.planning.expected_loss, Some(d("20")));
        assert_eq!(
            view.planning.source,
            Some(roastery_domain::planning::LossSource::Roasts)
        );
        let view = s.app.set_profile_planning(set(Some("15"), None)).unwrap();
        assert_eq!(view.planning.expected_loss, Some(d("15")));
        assert_eq!(view.planning.batch_size, None);
        for (cmd, v) in [
            (set(Some("100"), None), Violation::InvalidParameter),
            (set(None, Some(("6", "5"))), Violation::InvalidParameter),
            (set(None, Some(("-6", "5"))), Violation::InvalidWeight),
            (
                SetProfilePlanning {
                    profile_id: Uuid::from_u128(9),
                    ..set(None, Some(("-6", "5")))
                },
                Violation::NotFound,
            ),
        ] {
            assert_eq!(violation(s.app.set_profile_planning(cmd).unwrap_err()), v);
        }
        let found = s
            .app
            .profiles_by_ids(vec![p], PageRequest::default())
            .unwrap();
        assert_eq!(found.items[0].planning.expected_loss, Some(d("15")));
    }

    #[test]
    fn recipes_need_known_product_and_profiles_before_the_sum() {
        let s = setup();
        let p = house(&s);
        let product = product(&s);
        let c = |id, pct: &str| RecipeComponent {
            profile_id: id,
            percentage: d(pct),
        };
        let err = s
            .app
            .set_recipe(SetRecipe {
                product_id: product,
                components: vec![c(Uuid::from_u128(9), "10"), c(p, "20")],
            })
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&RecipeError::ProfileNotFound(Uuid::from_u128(9)))
        );
        let err = s
            .app
            .set_recipe(SetRecipe {
                product_id: product,
                components: vec![c(p, "20")],
            })
            .unwrap_err();
        assert_eq!(violation(err), Violation::BusinessRule);
        let err = s
            .app
            .set_recipe(SetRecipe {
                product_id: Uuid::from_u128(8),
                components: vec![],
            })
            .unwrap_err();
        assert_eq!(
            err.rule(),
            Some(&RecipeError::ProductNotFound(Uuid::from_u128(8)))
        );
        let view = s
            .app
            .set_recipe(SetRecipe {
                product_id: product,
                components: vec![c(p, "100")],
            })
            .unwrap();
        assert_eq!(view.recipe.unwrap().components, vec![c(p, "100")]);
        let listed = s.app.list_products(PageRequest::default()).unwrap();
        assert!(listed.items[0].recipe.is_some());
    }

    #[test]
    fn net_requirements_plan_the_open_orders_from_the_profiles_lots() {
        let s = setup();
        let p = house(&s);
        let product = product(&s);
        s.app
            .set_recipe(SetRecipe {
                product_id: product,
                components: vec![RecipeComponent {
                    profile_id: p,
                    percentage: Decimal::ONE_HUNDRED,
                }],
            })
            .unwrap();
        s.app
            .set_profile_planning(SetProfilePlanning {
                profile_id: p,
                expected_loss: Some(d("20")),
                batch_size: None,
            })
            .unwrap();
        s.app
            .set_orders(vec![SetOrder {
                external_id: "O-1".into(),
                order_date: s.clock.now_value(),
                customer: None,
                customer_type: Some(CustomerType::Retail),
                items: vec![SetOrderItem {
                    sku: "H-1000".into(),
                    quantity: 56,
                }],
            }])
            .unwrap();
        // 56 KG roasted / 0.8 = 70 KG green: 60 from the first lot, 10 from the second.
        let plan = s.app.net_requirements(None).unwrap();
        let r = &plan.requirements;
        assert_eq!(r.profiles[0].green_needed, Some(d("70")));
        let taken: Vec<Decimal> = r.green_lots.iter().map(|a| a.allocated).collect();
        assert_eq!(taken, vec![d("60"), d("10")]);
        assert!(r.shortfalls.is_empty());
        assert_eq!(
            plan.green_lot_names.get(&s.green[1]).map(String::as_str),
            Some("Huila")
        );
        // Before the order: nothing.
        let earlier = s
            .app
            .net_requirements(Some(s.clock.now_value() - chrono::TimeDelta::seconds(1)))
            .unwrap();
        assert!(earlier.requirements.demand.is_empty());
    }

    #[test]
    fn run_out_and_cost_of_a_roast() {
        let s = setup();
        s.app
            .record_roast(roast(&s, "R", "40", &[(0, "50")]))
            .unwrap();
        let page = s
            .app
            .run_out(Some(10), None, PageRequest::default())
            .unwrap();
        // 10 KG left, 50 used in 10 days: 5 KG a day, 2 days.
        assert_eq!(page.items[0].green_lot_id, s.green[0]);
        assert_eq!(page.items[0].run_out.use_per_day, d("5"));
        assert_eq!(
            page.items[0].run_out.run_out_date,
            s.clock
                .now_value()
                .date_naive()
                .checked_add_days(chrono::Days::new(2))
        );
        assert_eq!(page.items[1].run_out.run_out_date, None);
        assert_eq!(
            violation(
                s.app
                    .run_out(Some(0), None, PageRequest::default())
                    .unwrap_err()
            ),
            Violation::InvalidParameter
        );
        // The setup's lots have no price: the roast's cost is incomplete and names its source.
        let roasted = s
            .app
            .record_roast(roast(&s, "R2", "4", &[(1, "5")]))
            .unwrap()
            .roasted_lot
            .lot
            .id;
        let cost = s.app.cost(CostOf::Lot(roasted)).unwrap();
        assert!(!cost.complete);
        assert_eq!(cost.missing[0].id, s.green[1]);
        assert_eq!(
            violation(s.app.cost(CostOf::Order(Uuid::from_u128(5))).unwrap_err()),
            Violation::NotFound
        );
        assert_eq!(
            violation(s.app.cost(CostOf::Lot(Uuid::from_u128(5))).unwrap_err()),
            Violation::NotFound
        );
    }
}
