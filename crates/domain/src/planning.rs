//! Production planning (api-decisions §15): a profile's planning data, a product's recipe, the
//! net requirements of the open orders and the run-out date of green lots.
//!
//! Everything here is exact: weights are converted to kilograms as decimals
//! ([`Weight::in_kg`]) and every figure keeps its full precision; the answer rounds (weights to
//! grams, percentages to 2 decimals) only when it is written. The functions take what the store
//! read and never look anything up themselves.

use std::collections::{HashMap, HashSet};

use chrono::NaiveDate;
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

use crate::decimal::round2;
use crate::field::FieldPath;
use crate::product::{PackageSize, Sku};
use crate::violation::{BrokenRule, Violation};
use crate::weight::{RequestedWeight, Weight, WeightError};

/// Most components of one recipe.
pub const MAX_RECIPE_COMPONENTS: usize = 10;
/// How many of a profile's last roasts its derived expected loss weighs.
pub const LOSS_ROASTS: usize = 10;
/// Days of use a run-out is judged on, unless the client asks for another window.
pub const DEFAULT_WINDOW: u32 = 28;
/// The longest window a run-out may be judged on.
pub const MAX_WINDOW: u32 = 365;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanningError {
    #[error("{field} is {loss}; an expected loss is a percentage from 0 to below 100")]
    LossOutOfRange { field: FieldPath, loss: Decimal },
    #[error("{field} is {loss}; an expected loss has at most 2 decimals")]
    LossTooPrecise { field: FieldPath, loss: Decimal },
    #[error("{field} must be above zero")]
    BatchNotPositive { field: FieldPath },
    /// `field` is the batch size (`batchSize`), whose `min` and `max` are named.
    #[error("{field}.min ({min}) is above {field}.max ({max})")]
    BatchMinAboveMax {
        field: FieldPath,
        min: Weight,
        max: Weight,
    },
    #[error("{field}: {error}")]
    BatchWeight {
        field: FieldPath,
        error: WeightError,
    },
    #[error("profile {0} does not exist")]
    ProfileNotFound(Uuid),
    #[error("{field} is {days}; a window is 1 to {MAX_WINDOW} days")]
    WindowOutOfRange { field: FieldPath, days: i64 },
}

/// The run-out window asked (days), or the default.
pub fn window(days: Option<i64>) -> Result<u32, PlanningError> {
    match days {
        None => Ok(DEFAULT_WINDOW),
        Some(d) => u32::try_from(d)
            .ok()
            .filter(|d| (1..=MAX_WINDOW).contains(d))
            .ok_or_else(|| PlanningError::WindowOutOfRange {
                field: FieldPath::from("filter.window"),
                days: d,
            }),
    }
}

impl BrokenRule for PlanningError {
    fn violation(&self) -> Violation {
        match self {
            Self::LossOutOfRange { .. }
            | Self::LossTooPrecise { .. }
            | Self::BatchNotPositive { .. }
            | Self::BatchMinAboveMax { .. }
            | Self::WindowOutOfRange { .. } => Violation::InvalidParameter,
            Self::BatchWeight { error, .. } => error.violation(),
            Self::ProfileNotFound(_) => Violation::NotFound,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::LossOutOfRange { field, .. }
            | Self::LossTooPrecise { field, .. }
            | Self::BatchNotPositive { field }
            | Self::BatchMinAboveMax { field, .. }
            | Self::BatchWeight { field, .. }
            | Self::WindowOutOfRange { field, .. } => field.rebase(base),
            Self::ProfileNotFound(_) => {}
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipeError {
    #[error("{field} lists {count} components; at most {MAX_RECIPE_COMPONENTS} are accepted")]
    TooManyComponents { field: FieldPath, count: usize },
    /// `field` is the component's (`components[2]`), as in the variants below.
    #[error("{field}.profileId: profile {id} is listed more than once")]
    DuplicateProfile {
        field: FieldPath,
        index: usize,
        id: Uuid,
    },
    #[error("{field}.percentage is {percentage}; a percentage must be above zero")]
    PercentageNotPositive {
        field: FieldPath,
        index: usize,
        percentage: Decimal,
    },
    #[error("{field}.percentage is {percentage}; at most 2 decimals are accepted")]
    PercentageTooPrecise {
        field: FieldPath,
        index: usize,
        percentage: Decimal,
    },
    #[error("the component percentages sum to {0}; they must sum to exactly 100")]
    PercentagesNotHundred(Decimal),
    #[error("product {0} does not exist")]
    ProductNotFound(Uuid),
    #[error("profile {0} does not exist")]
    ProfileNotFound(Uuid),
}

impl BrokenRule for RecipeError {
    fn violation(&self) -> Violation {
        match self {
            Self::TooManyComponents { .. }
            | Self::DuplicateProfile { .. }
            | Self::PercentageNotPositive { .. }
            | Self::PercentageTooPrecise { .. } => Violation::InvalidParameter,
            Self::PercentagesNotHundred(_) => Violation::BusinessRule,
            Self::ProductNotFound(_) | Self::ProfileNotFound(_) => Violation::NotFound,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::TooManyComponents { field, .. }
            | Self::DuplicateProfile { field, .. }
            | Self::PercentageNotPositive { field, .. }
            | Self::PercentageTooPrecise { field, .. } => field.rebase(base),
            _ => {}
        }
    }
}

/// A computation went past what a decimal holds: only absurd stored figures get here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a planning figure is too large to compute")]
pub struct Overflow;

impl BrokenRule for Overflow {
    fn violation(&self) -> Violation {
        Violation::InvalidWeight
    }
}

pub(crate) fn add(a: Decimal, b: Decimal) -> Result<Decimal, Overflow> {
    a.checked_add(b).ok_or(Overflow)
}
pub(crate) fn sub(a: Decimal, b: Decimal) -> Result<Decimal, Overflow> {
    a.checked_sub(b).ok_or(Overflow)
}
pub(crate) fn mul(a: Decimal, b: Decimal) -> Result<Decimal, Overflow> {
    a.checked_mul(b).ok_or(Overflow)
}
pub(crate) fn div(a: Decimal, b: Decimal) -> Result<Decimal, Overflow> {
    a.checked_div(b).ok_or(Overflow)
}

/// A weight in kilograms as the answer writes it: half-even to grams.
pub fn kg3(amount: Decimal) -> Decimal {
    amount
        .round_dp_with_strategy(3, RoundingStrategy::MidpointNearestEven)
        .normalize()
}

/// Green weight per roast, as a roaster's machine takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSize {
    pub min: Weight,
    pub max: Weight,
}

/// What `setProfilePlanning` stores: `None` expected loss means "derive it from the roasts".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProfilePlanning {
    pub expected_loss: Option<Decimal>,
    pub batch_size: Option<BatchSize>,
}

/// Where a profile's expected loss comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossSource {
    Set,
    Roasts,
}

impl LossSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Set => "SET",
            Self::Roasts => "ROASTS",
        }
    }
}

/// The planning a profile answers: its expected loss (set, or derived from its roasts) and
/// batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Planning {
    pub expected_loss: Option<Decimal>,
    pub source: Option<LossSource>,
    pub batch_size: Option<BatchSize>,
}

impl Planning {
    /// The stored planning (if any) over the loss derived from the profile's last roasts.
    pub fn of(stored: Option<&ProfilePlanning>, roasts: &[RoastYield]) -> Self {
        let batch_size = stored.and_then(|p| p.batch_size);
        if let Some(loss) = stored.and_then(|p| p.expected_loss) {
            return Self {
                expected_loss: Some(loss),
                source: Some(LossSource::Set),
                batch_size,
            };
        }
        let derived = derived_loss(roasts);
        Self {
            expected_loss: derived,
            source: derived.map(|_| LossSource::Roasts),
            batch_size,
        }
    }
}

/// A request's planning, checked for shape (400) but with its batch weights not yet judged: a
/// negative weight is a 422 that ranks after the profile's lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanningDraft {
    expected_loss: Option<Decimal>,
    batch_size: Option<(RequestedWeight, RequestedWeight)>,
}

impl PlanningDraft {
    /// `expectedLoss` 0 ≤ x < 100 with at most 2 decimals; `batchSize` 0 < min ≤ max.
    pub fn parse(
        expected_loss: Option<Decimal>,
        batch_size: Option<(RequestedWeight, RequestedWeight)>,
    ) -> Result<Self, PlanningError> {
        if let Some(loss) = expected_loss {
            if loss.is_sign_negative() && !loss.is_zero() || loss >= Decimal::ONE_HUNDRED {
                return Err(PlanningError::LossOutOfRange {
                    field: FieldPath::from("expectedLoss"),
                    loss,
                });
            }
            if loss.normalize().scale() > 2 {
                return Err(PlanningError::LossTooPrecise {
                    field: FieldPath::from("expectedLoss"),
                    loss,
                });
            }
        }
        if let Some((min, max)) = batch_size {
            // A negative weight is judged later (422); the range needs both of them known.
            let negative = |w: RequestedWeight| w.amount.is_sign_negative() && !w.amount.is_zero();
            if !negative(min) && !negative(max) {
                if min.amount.is_zero() {
                    return Err(PlanningError::BatchNotPositive {
                        field: FieldPath::from("batchSize.min"),
                    });
                }
                if max.amount.is_zero() {
                    return Err(PlanningError::BatchNotPositive {
                        field: FieldPath::from("batchSize.max"),
                    });
                }
                let (a, b) = (
                    Weight::new(min.amount, min.unit),
                    Weight::new(max.amount, max.unit),
                );
                if let (Ok(a), Ok(b)) = (a, b)
                    && a.in_kg() > b.in_kg()
                {
                    return Err(PlanningError::BatchMinAboveMax {
                        field: FieldPath::from("batchSize"),
                        min: a,
                        max: b,
                    });
                }
            }
        }
        Ok(Self {
            expected_loss: expected_loss.map(|l| l.normalize()),
            batch_size,
        })
    }

    /// Judges the batch weights (negative or too large: 422 `invalid_weight`).
    pub fn decide(self) -> Result<ProfilePlanning, PlanningError> {
        let batch_size = match self.batch_size {
            None => None,
            Some((min, max)) => {
                let judge = |field: &'static str, w: RequestedWeight| {
                    w.judge().map_err(|error| PlanningError::BatchWeight {
                        field: field.into(),
                        error,
                    })
                };
                Some(BatchSize {
                    min: judge("batchSize.min", min)?,
                    max: judge("batchSize.max", max)?,
                })
            }
        };
        Ok(ProfilePlanning {
            expected_loss: self.expected_loss,
            batch_size,
        })
    }
}

/// One roast of a profile: the green used and what came out of the roaster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoastYield {
    pub used_green: Vec<Weight>,
    /// The roasted weight at creation.
    pub roasted: Weight,
}

/// (Σ used green − Σ roasted) / Σ used green of these roasts, as a percentage rounded half-even
/// to 2 decimals; `None` without roasts (or without green used).
pub fn derived_loss(roasts: &[RoastYield]) -> Option<Decimal> {
    let mut used = Decimal::ZERO;
    let mut roasted = Decimal::ZERO;
    for r in roasts {
        for w in &r.used_green {
            used = add(used, w.in_kg()).ok()?;
        }
        roasted = add(roasted, r.roasted.in_kg()).ok()?;
    }
    if used <= Decimal::ZERO {
        return None;
    }
    let loss = div(
        mul(sub(used, roasted).ok()?, Decimal::ONE_HUNDRED).ok()?,
        used,
    )
    .ok()?;
    Some(round2(loss))
}

/// One component of a recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecipeComponent {
    pub profile_id: Uuid,
    pub percentage: Decimal,
}

/// What every variant of a product is made of: roasted coffee of these profiles in these
/// proportions (a post-roast blend when several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    pub components: Vec<RecipeComponent>,
}

/// A `setRecipe` request, its shape checked (400); the sum is judged by [`Self::decide`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeDraft {
    components: Vec<RecipeComponent>,
}

impl RecipeDraft {
    /// At most 10 components, distinct profiles, percentages above zero with at most 2 decimals.
    /// An empty list removes the recipe.
    pub fn parse(components: Vec<RecipeComponent>) -> Result<Self, RecipeError> {
        if components.len() > MAX_RECIPE_COMPONENTS {
            return Err(RecipeError::TooManyComponents {
                field: FieldPath::from("components"),
                count: components.len(),
            });
        }
        let mut seen = HashSet::new();
        for (index, c) in components.iter().enumerate() {
            let field = || FieldPath::ROOT.key("components").index(index);
            if !seen.insert(c.profile_id) {
                return Err(RecipeError::DuplicateProfile {
                    field: field(),
                    index,
                    id: c.profile_id,
                });
            }
            if c.percentage <= Decimal::ZERO {
                return Err(RecipeError::PercentageNotPositive {
                    field: field(),
                    index,
                    percentage: c.percentage,
                });
            }
            if c.percentage.normalize().scale() > 2 {
                return Err(RecipeError::PercentageTooPrecise {
                    field: field(),
                    index,
                    percentage: c.percentage,
                });
            }
        }
        Ok(Self {
            components: components
                .into_iter()
                .map(|c| RecipeComponent {
                    percentage: c.percentage.normalize(),
                    ..c
                })
                .collect(),
        })
    }

    pub fn profile_ids(&self) -> Vec<Uuid> {
        self.components.iter().map(|c| c.profile_id).collect()
    }

    /// The recipe to store (`None`: remove it); percentages must sum to exactly 100.
    pub fn decide(self) -> Result<Option<Recipe>, RecipeError> {
        if self.components.is_empty() {
            return Ok(None);
        }
        let sum = self
            .components
            .iter()
            .try_fold(Decimal::ZERO, |sum, c| sum.checked_add(c.percentage))
            .unwrap_or(Decimal::MAX);
        if sum != Decimal::ONE_HUNDRED {
            return Err(RecipeError::PercentagesNotHundred(sum.normalize()));
        }
        Ok(Some(Recipe {
            components: self.components,
        }))
    }
}

/// The bags of one SKU the open orders ask for, and its variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkuDemand {
    pub sku: Sku,
    pub product_id: Uuid,
    pub bags: i64,
    pub package_size: PackageSize,
}

/// A profile as planning needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanProfile {
    pub id: Uuid,
    pub name: String,
    pub planning: Planning,
    /// Each component's percentage and green lots, in the profile's order.
    pub components: Vec<(Decimal, Vec<Uuid>)>,
    /// The weights of the unconsumed roasted lots of this profile.
    pub roasted_on_hand: Vec<Weight>,
}

/// A green lot a profile draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanGreenLot {
    pub id: Uuid,
    pub lot_number: i64,
    pub weight: Weight,
}

/// What the net requirements start from, as read in one transaction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanInput {
    /// One entry per SKU with open demand.
    pub demand: Vec<SkuDemand>,
    pub recipes: HashMap<Uuid, Recipe>,
    pub profiles: HashMap<Uuid, PlanProfile>,
    pub green_lots: HashMap<Uuid, PlanGreenLot>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemandLine {
    pub sku: Sku,
    pub product_id: Uuid,
    pub bags: i64,
    /// Kilograms, exact.
    pub weight: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileNeed {
    pub profile_id: Uuid,
    pub name: String,
    pub roasted_demand: Decimal,
    pub roasted_on_hand: Decimal,
    pub roasted_needed: Decimal,
    pub expected_loss: Option<Decimal>,
    pub green_needed: Option<Decimal>,
    /// Green kilograms per batch.
    pub batches: Vec<Decimal>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub green_lot_id: Uuid,
    pub lot_number: i64,
    /// The lot's weight before this plan, in kilograms.
    pub available: Decimal,
    pub allocated: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    pub profile_id: Uuid,
    pub component_index: usize,
    pub weight: Decimal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    NoRecipe,
    NoExpectedLoss,
}

impl Missing {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoRecipe => "NO_RECIPE",
            Self::NoExpectedLoss => "NO_EXPECTED_LOSS",
        }
    }
}

/// Something the plan could not work out, named rather than guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingItem {
    Sku(Sku),
    Profile(Uuid),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetRequirements {
    pub demand: Vec<DemandLine>,
    pub profiles: Vec<ProfileNeed>,
    pub green_lots: Vec<Allocation>,
    pub shortfalls: Vec<Shortfall>,
    pub missing: Vec<(MissingItem, Missing)>,
}

/// n = ceil(green / max) batches of max(min, green / n) each; none without a batch size or need.
pub fn batches(green: Decimal, size: Option<BatchSize>) -> Result<Vec<Decimal>, Overflow> {
    let Some(size) = size else {
        return Ok(Vec::new());
    };
    let (min, max) = (size.min.in_kg(), size.max.in_kg());
    if green <= Decimal::ZERO || max <= Decimal::ZERO {
        return Ok(Vec::new());
    }
    let n = div(green, max)?.ceil();
    let each = div(green, n)?.max(min);
    let count = n.to_usize().ok_or(Overflow)?;
    Ok(vec![each; count])
}

/// The steps of §15: demand per SKU → roasted and green need per profile → green lots allocated
/// in the profiles' order, with shortfalls → what is missing.
pub fn net_requirements(input: &PlanInput) -> Result<NetRequirements, Overflow> {
    let mut out = NetRequirements::default();
    // 1. Demand, by SKU.
    let mut demand: Vec<&SkuDemand> = input.demand.iter().collect();
    demand.sort_by(|a, b| a.sku.as_str().cmp(b.sku.as_str()));
    let mut roasted_demand: HashMap<Uuid, Decimal> = HashMap::new();
    let mut no_recipe = Vec::new();
    for d in demand {
        let grams = mul(Decimal::from(d.bags), d.package_size.grams())?;
        let weight = div(grams, Decimal::ONE_THOUSAND)?;
        out.demand.push(DemandLine {
            sku: d.sku.clone(),
            product_id: d.product_id,
            bags: d.bags,
            weight,
        });
        match input.recipes.get(&d.product_id) {
            None => no_recipe.push((MissingItem::Sku(d.sku.clone()), Missing::NoRecipe)),
            Some(recipe) => {
                for c in &recipe.components {
                    let share = div(mul(weight, c.percentage)?, Decimal::ONE_HUNDRED)?;
                    let sum = roasted_demand.entry(c.profile_id).or_default();
                    *sum = add(*sum, share)?;
                }
            }
        }
    }
    out.missing.extend(no_recipe);
    // 2. Profiles, by name then id.
    let mut profiles: Vec<&PlanProfile> = roasted_demand
        .keys()
        .filter_map(|id| input.profiles.get(id))
        .collect();
    profiles.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    // 3. Green lots, drawn in the profiles' order.
    let mut taken: HashMap<Uuid, Decimal> = HashMap::new();
    for p in profiles {
        let demand = roasted_demand.get(&p.id).copied().unwrap_or_default();
        let on_hand = p
            .roasted_on_hand
            .iter()
            .try_fold(Decimal::ZERO, |s, w| add(s, w.in_kg()))?;
        let needed = sub(demand, on_hand)?.max(Decimal::ZERO);
        let loss = p.planning.expected_loss;
        let green = match loss {
            None => {
                out.missing
                    .push((MissingItem::Profile(p.id), Missing::NoExpectedLoss));
                None
            }
            Some(loss) => {
                let keep = sub(Decimal::ONE, div(loss, Decimal::ONE_HUNDRED)?)?;
                Some(div(needed, keep)?)
            }
        };
        let batches = match green {
            Some(g) => batches(g, p.planning.batch_size)?,
            None => Vec::new(),
        };
        if let Some(green) = green.filter(|g| *g > Decimal::ZERO) {
            allocate(p, green, input, &mut taken, &mut out.shortfalls)?;
        }
        out.profiles.push(ProfileNeed {
            profile_id: p.id,
            name: p.name.clone(),
            roasted_demand: demand,
            roasted_on_hand: on_hand,
            roasted_needed: needed,
            expected_loss: loss,
            green_needed: green,
            batches,
        });
    }
    let mut lots: Vec<Allocation> = taken
        .into_iter()
        .filter(|(_, allocated)| *allocated > Decimal::ZERO)
        .filter_map(|(id, allocated)| {
            input.green_lots.get(&id).map(|l| Allocation {
                green_lot_id: id,
                lot_number: l.lot_number,
                available: l.weight.in_kg(),
                allocated,
            })
        })
        .collect();
    lots.sort_by_key(|a| (a.lot_number, a.green_lot_id));
    out.green_lots = lots;
    Ok(out)
}

/// Splits a profile's green need over its components and takes each share from the component's
/// lots in the profile's order, each up to what earlier profiles left of it.
fn allocate(
    p: &PlanProfile,
    green: Decimal,
    input: &PlanInput,
    taken: &mut HashMap<Uuid, Decimal>,
    shortfalls: &mut Vec<Shortfall>,
) -> Result<(), Overflow> {
    for (index, (percentage, lot_ids)) in p.components.iter().enumerate() {
        let mut left = div(mul(green, *percentage)?, Decimal::ONE_HUNDRED)?;
        for id in lot_ids {
            if left <= Decimal::ZERO {
                break;
            }
            let Some(lot) = input.green_lots.get(id) else {
                continue;
            };
            let already = taken.get(id).copied().unwrap_or_default();
            let free = sub(lot.weight.in_kg(), already)?.max(Decimal::ZERO);
            let take = free.min(left);
            if take > Decimal::ZERO {
                taken.insert(*id, add(already, take)?);
                left = sub(left, take)?;
            }
        }
        if left > Decimal::ZERO {
            shortfalls.push(Shortfall {
                profile_id: p.id,
                component_index: index,
                weight: left,
            });
        }
    }
    Ok(())
}

/// A green lot's use over the window and the day it runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOut {
    /// Kilograms per day.
    pub use_per_day: Decimal,
    pub run_out_date: Option<NaiveDate>,
}

/// `used` is what roasts and shipments took from the lot within the last `window` days (a
/// positive weight in the lot's unit); the lot runs out `floor(weight × window / used)` days
/// after `today`. Nothing used: no run-out date.
pub fn run_out(weight: Weight, used: Weight, window: u32, today: NaiveDate) -> RunOut {
    let days = Decimal::from(window);
    let used_kg = used.in_kg();
    if used_kg <= Decimal::ZERO || window == 0 {
        return RunOut {
            use_per_day: Decimal::ZERO,
            run_out_date: None,
        };
    }
    let use_per_day = div(used_kg, days).unwrap_or(Decimal::ZERO);
    let run_out_date = mul(weight.in_kg(), days)
        .and_then(|w| div(w, used_kg))
        .ok()
        .and_then(|d| d.floor().to_u64())
        .and_then(|d| today.checked_add_days(chrono::Days::new(d)));
    RunOut {
        use_per_day,
        run_out_date,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::d;
    use crate::weight::WeightUnit;
    use proptest::prelude::*;

    fn kg(amount: &str) -> Weight {
        Weight::new(d(amount), WeightUnit::Kg).unwrap()
    }

    fn req(amount: &str) -> RequestedWeight {
        RequestedWeight {
            amount: d(amount),
            unit: WeightUnit::Kg,
        }
    }

    #[test]
    fn expected_loss_must_be_below_100_with_two_decimals() {
        assert_eq!(
            PlanningDraft::parse(Some(d("100")), None),
            Err(PlanningError::LossOutOfRange {
                field: FieldPath::from("expectedLoss"),
                loss: d("100")
            })
        );
        assert_eq!(
            PlanningDraft::parse(Some(d("-1")), None),
            Err(PlanningError::LossOutOfRange {
                field: FieldPath::from("expectedLoss"),
                loss: d("-1")
            })
        );
        assert_eq!(
            PlanningDraft::parse(Some(d("14.125")), None),
            Err(PlanningError::LossTooPrecise {
                field: FieldPath::from("expectedLoss"),
                loss: d("14.125")
            })
        );
        assert!(PlanningDraft::parse(Some(d("0")), None).is_ok());
        assert!(PlanningDraft::parse(Some(d("99.99")), None).is_ok());
    }

    #[test]
    fn batch_size_needs_zero_below_min_below_max_and_judges_negatives_last() {
        assert_eq!(
            PlanningDraft::parse(None, Some((req("0"), req("5")))),
            Err(PlanningError::BatchNotPositive {
                field: FieldPath::from("batchSize.min")
            })
        );
        assert!(matches!(
            PlanningDraft::parse(None, Some((req("6"), req("5")))),
            Err(PlanningError::BatchMinAboveMax { .. })
        ));
        let draft = PlanningDraft::parse(None, Some((req("-1"), req("5")))).unwrap();
        let err = draft.decide().unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidWeight);
        let lbs = RequestedWeight {
            amount: d("10"),
            unit: WeightUnit::Lbs,
        };
        // 10 LBS is 4.54 KG: below a 5 KG maximum.
        assert!(PlanningDraft::parse(None, Some((lbs, req("5")))).is_ok());
    }

    #[test]
    fn set_loss_wins_over_the_roasts_and_no_roasts_derive_nothing() {
        let roasts = [RoastYield {
            used_green: vec![kg("10")],
            roasted: kg("8.5"),
        }];
        let set = ProfilePlanning {
            expected_loss: Some(d("14")),
            batch_size: None,
        };
        assert_eq!(
            Planning::of(Some(&set), &roasts).expected_loss,
            Some(d("14"))
        );
        let derived = Planning::of(None, &roasts);
        assert_eq!(derived.expected_loss, Some(d("15")));
        assert_eq!(derived.source, Some(LossSource::Roasts));
        assert_eq!(Planning::of(None, &[]).expected_loss, None);
        assert_eq!(Planning::of(None, &[]).source, None);
    }

    #[test]
    fn derived_loss_is_weighted_by_green_used_and_rounded_half_even() {
        let roasts = [
            RoastYield {
                used_green: vec![kg("10"), kg("2")],
                roasted: kg("10"),
            },
            RoastYield {
                used_green: vec![kg("3")],
                roasted: kg("2.5"),
            },
        ];
        // (15 − 12.5) / 15 = 16.666…%
        assert_eq!(derived_loss(&roasts), Some(d("16.67")));
    }

    #[test]
    fn recipes_need_distinct_profiles_and_exactly_100() {
        let a = Uuid::from_u128(1);
        let b = Uuid::from_u128(2);
        let c = |id, p: &str| RecipeComponent {
            profile_id: id,
            percentage: d(p),
        };
        assert!(matches!(
            RecipeDraft::parse(vec![c(a, "50"), c(a, "50")]),
            Err(RecipeError::DuplicateProfile { index: 1, .. })
        ));
        assert!(matches!(
            RecipeDraft::parse(vec![c(a, "0"), c(b, "100")]),
            Err(RecipeError::PercentageNotPositive { index: 0, .. })
        ));
        assert!(matches!(
            RecipeDraft::parse(vec![c(a, "33.333"), c(b, "66.667")]),
            Err(RecipeError::PercentageTooPrecise { index: 0, .. })
        ));
        let eleven = (0..11).map(|i| c(Uuid::from_u128(i), "1")).collect();
        assert_eq!(
            RecipeDraft::parse(eleven),
            Err(RecipeError::TooManyComponents {
                field: FieldPath::from("components"),
                count: 11
            })
        );
        let err = RecipeDraft::parse(vec![c(a, "60"), c(b, "30")])
            .unwrap()
            .decide()
            .unwrap_err();
        assert_eq!(err.violation(), Violation::BusinessRule);
        assert_eq!(RecipeDraft::parse(vec![]).unwrap().decide(), Ok(None));
        let recipe = RecipeDraft::parse(vec![c(a, "60.5"), c(b, "39.50")])
            .unwrap()
            .decide()
            .unwrap()
            .unwrap();
        assert_eq!(recipe.components[1].percentage.to_string(), "39.5");
    }

    #[test]
    fn batches_split_the_need_evenly_and_never_below_the_minimum() {
        let size = BatchSize {
            min: kg("5"),
            max: kg("12"),
        };
        assert_eq!(
            batches(d("30"), Some(size)).unwrap(),
            vec![d("10"), d("10"), d("10")]
        );
        assert_eq!(batches(d("2"), Some(size)).unwrap(), vec![d("5")]);
        assert_eq!(batches(d("12"), Some(size)).unwrap(), vec![d("12")]);
        assert!(batches(d("30"), None).unwrap().is_empty());
        assert!(batches(d("0"), Some(size)).unwrap().is_empty());
    }

    #[test]
    fn run_out_is_today_plus_the_days_the_weight_lasts() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 25).unwrap();
        let r = run_out(kg("100"), kg("28"), 28, today);
        assert_eq!(r.use_per_day, d("1"));
        assert_eq!(r.run_out_date, NaiveDate::from_ymd_opt(2027, 3, 5));
        let r = run_out(kg("10"), kg("0"), 28, today);
        assert_eq!(r.run_out_date, None);
        // floor(5 × 7 / 10) = 3 days
        let r = run_out(kg("5"), kg("10"), 7, today);
        assert_eq!(r.run_out_date, NaiveDate::from_ymd_opt(2026, 11, 28));
    }

    fn sku(s: &str) -> Sku {
        Sku::parse(s).unwrap()
    }

    fn lot(n: u128, weight: &str) -> PlanGreenLot {
        PlanGreenLot {
            id: Uuid::from_u128(1000 + n),
            lot_number: n as i64,
            weight: kg(weight),
        }
    }

    #[test]
    fn net_requirements_walk_demand_profiles_and_lots_and_name_what_is_missing() {
        let espresso = Uuid::from_u128(1);
        let filter = Uuid::from_u128(2);
        let blend_product = Uuid::from_u128(10);
        let bare_product = Uuid::from_u128(11);
        let lots = [lot(1, "10"), lot(2, "100")];
        let input = PlanInput {
            demand: vec![
                SkuDemand {
                    sku: sku("ESP-1KG"),
                    product_id: blend_product,
                    bags: 20,
                    package_size: PackageSize::parse("PACKAGE1000G").unwrap(),
                },
                SkuDemand {
                    sku: sku("BARE"),
                    product_id: bare_product,
                    bags: 3,
                    package_size: PackageSize::parse("PACKAGE250G").unwrap(),
                },
            ],
            recipes: HashMap::from([(
                blend_product,
                Recipe {
                    components: vec![
                        RecipeComponent {
                            profile_id: espresso,
                            percentage: d("75"),
                        },
                        RecipeComponent {
                            profile_id: filter,
                            percentage: d("25"),
                        },
                    ],
                },
            )]),
            profiles: HashMap::from([
                (
                    espresso,
                    PlanProfile {
                        id: espresso,
                        name: "Espresso".into(),
                        planning: Planning {
                            expected_loss: Some(d("20")),
                            source: Some(LossSource::Set),
                            batch_size: Some(BatchSize {
                                min: kg("5"),
                                max: kg("12"),
                            }),
                        },
                        components: vec![(d("100"), vec![lots[0].id, lots[1].id])],
                        roasted_on_hand: vec![kg("3")],
                    },
                ),
                (
                    filter,
                    PlanProfile {
                        id: filter,
                        name: "Filter".into(),
                        planning: Planning::default(),
                        components: vec![(d("100"), vec![lots[1].id])],
                        roasted_on_hand: vec![],
                    },
                ),
            ]),
            green_lots: lots.iter().map(|l| (l.id, *l)).collect(),
        };
        let plan = net_requirements(&input).unwrap();
        assert_eq!(plan.demand[0].sku, sku("BARE"));
        assert_eq!(plan.demand[1].weight, d("20"));
        let esp = &plan.profiles[0];
        assert_eq!(esp.roasted_demand, d("15"));
        assert_eq!(esp.roasted_needed, d("12"));
        assert_eq!(esp.green_needed, Some(d("15")));
        assert_eq!(esp.batches, vec![d("7.5"), d("7.5")]);
        assert_eq!(plan.profiles[1].green_needed, None);
        assert_eq!(plan.green_lots.len(), 2);
        assert_eq!(plan.green_lots[0].allocated, d("10"));
        assert_eq!(plan.green_lots[1].allocated, d("5"));
        assert!(plan.shortfalls.is_empty());
        assert_eq!(
            plan.missing,
            vec![
                (MissingItem::Sku(sku("BARE")), Missing::NoRecipe),
                (MissingItem::Profile(filter), Missing::NoExpectedLoss)
            ]
        );
    }

    /// A profile of one or two components over a few shared lots, with a random loss.
    fn plan_input(weights: Vec<u32>, needs: Vec<(u32, u16, u8)>) -> (PlanInput, Vec<Uuid>) {
        let lots: Vec<PlanGreenLot> = weights
            .iter()
            .enumerate()
            .map(|(i, w)| PlanGreenLot {
                id: Uuid::from_u128(1000 + i as u128),
                lot_number: i as i64 + 1,
                weight: Weight::new(Decimal::new(i64::from(*w), 3), WeightUnit::Kg).unwrap(),
            })
            .collect();
        let mut input = PlanInput {
            green_lots: lots.iter().map(|l| (l.id, *l)).collect(),
            ..PlanInput::default()
        };
        let mut ids = Vec::new();
        for (i, (grams, loss, split)) in needs.into_iter().enumerate() {
            let profile = Uuid::from_u128(i as u128 + 1);
            let product = Uuid::from_u128(i as u128 + 100);
            ids.push(profile);
            let first = Decimal::from(split % 99 + 1);
            let n = lots.len();
            input.profiles.insert(
                profile,
                PlanProfile {
                    id: profile,
                    name: format!("P{i}"),
                    planning: Planning {
                        expected_loss: Some(Decimal::new(i64::from(loss % 9999), 2)),
                        source: Some(LossSource::Set),
                        batch_size: None,
                    },
                    components: vec![
                        (first, vec![lots[i % n].id, lots[(i + 1) % n].id]),
                        (Decimal::ONE_HUNDRED - first, vec![lots[(i + 2) % n].id]),
                    ],
                    roasted_on_hand: vec![],
                },
            );
            input.recipes.insert(
                product,
                Recipe {
                    components: vec![RecipeComponent {
                        profile_id: profile,
                        percentage: Decimal::ONE_HUNDRED,
                    }],
                },
            );
            input.demand.push(SkuDemand {
                sku: sku(&format!("S{i}")),
                product_id: product,
                bags: i64::from(grams),
                package_size: PackageSize::parse("PACKAGE250G").unwrap(),
            });
        }
        (input, ids)
    }

    proptest! {
        #[test]
        fn planned_green_times_what_roasting_keeps_is_the_roasted_need(
            weights in prop::collection::vec(0u32..50_000_000, 1..5),
            needs in prop::collection::vec((1u32..10_000, 0u16..9999, any::<u8>()), 1..6),
        ) {
            let (input, _) = plan_input(weights, needs);
            let plan = net_requirements(&input).unwrap();
            for p in &plan.profiles {
                let green = p.green_needed.unwrap();
                let keep = Decimal::ONE - p.expected_loss.unwrap() / Decimal::ONE_HUNDRED;
                let back = green * keep;
                // Exact up to the last of 28 significant digits of the division.
                prop_assert!((back - p.roasted_needed).abs() < d("0.000000000000000001"));
            }
        }

        #[test]
        fn allocations_stay_within_each_lot_and_with_shortfalls_make_the_need(
            weights in prop::collection::vec(0u32..50_000_000, 1..5),
            needs in prop::collection::vec((1u32..10_000, 0u16..9999, any::<u8>()), 1..6),
        ) {
            let (input, ids) = plan_input(weights, needs);
            let plan = net_requirements(&input).unwrap();
            for a in &plan.green_lots {
                prop_assert!(a.allocated <= a.available);
                prop_assert!(a.allocated > Decimal::ZERO);
            }
            // Replay per profile: what each took plus its shortfalls is its green need.
            let mut taken: HashMap<Uuid, Decimal> = HashMap::new();
            for p in &plan.profiles {
                let profile = &input.profiles[&p.profile_id];
                let mut shortfalls = Vec::new();
                let before: Decimal = taken.values().copied().sum();
                allocate(profile, p.green_needed.unwrap(), &input, &mut taken, &mut shortfalls).unwrap();
                let after: Decimal = taken.values().copied().sum();
                let short: Decimal = shortfalls.iter().map(|s| s.weight).sum();
                let expected: Vec<&Shortfall> =
                    plan.shortfalls.iter().filter(|s| s.profile_id == p.profile_id).collect();
                prop_assert_eq!(expected.len(), shortfalls.len());
                let diff = (after - before + short - p.green_needed.unwrap()).abs();
                prop_assert!(diff < d("0.0000000000000000001"));
            }
            let total: Decimal = plan.green_lots.iter().map(|a| a.allocated).sum();
            let short: Decimal = plan.shortfalls.iter().map(|s| s.weight).sum();
            let need: Decimal = plan.profiles.iter().filter_map(|p| p.green_needed).sum();
            prop_assert!((total + short - need).abs() < d("0.000000000000000001"));
            prop_assert_eq!(ids.len(), plan.profiles.len());
        }
    }
}
