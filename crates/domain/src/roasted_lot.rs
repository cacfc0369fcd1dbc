//! Roasted lots: coffee that came out of a roast, made from one or more green lots.
//!
//! A roasted lot lives like a green lot (active while it holds weight, consumed and final at zero).
//! Its weight loss is derived, never stored: it compares what the green lots gave with what the
//! roaster weighed out at roast time, which stays fixed while the current weight later changes.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::decimal::round2;
use crate::lot_source::LotSource;
use crate::project::ProjectRef;
use crate::stock::{self, LotKind, Stock, StockError, WeightChange};
use crate::weight::{Weight, WeightError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoastedLot {
    pub id: Uuid,
    /// Sequence number of `PR-n`; see [`RoastedLot::lot_number`].
    pub lot_number: i64,
    pub name: String,
    /// The `roastUUID` of the roast log it was imported from; `None` for roasts recorded otherwise.
    pub external_id: Option<String>,
    /// Current weight and active/consumed state; its unit is the lot's unit.
    pub stock: Stock,
    /// What came out of the roaster, fixed at roast time, in the lot's unit.
    pub roasted_weight: Weight,
    /// The green lots used and the weight each gave.
    pub sources: Vec<LotSource>,
    pub profile_id: Option<Uuid>,
    pub location_id: Uuid,
    pub roasted_date: DateTime<Utc>,
    pub projects: Vec<ProjectRef>,
    pub created_at: DateTime<Utc>,
    pub last_modified_at: DateTime<Utc>,
}

/// `weightLoss` of a roasted lot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightLoss {
    /// Used green weight minus roasted weight, in the roasted lot's unit; never negative.
    pub amount: Weight,
    /// `amount` as a percentage of the used green weight, rounded half-even to 2 decimals.
    pub percentage: Decimal,
}

impl RoastedLot {
    /// The human-readable lot number, `PR-n`.
    pub fn lot_number(&self) -> String {
        stock::number(LotKind::Roasted.prefix(), self.lot_number)
    }

    /// The green weight used, summed in the roasted lot's unit.
    pub fn used_green_weight(&self) -> Result<Weight, WeightError> {
        used_total(&self.sources, self.roasted_weight.unit())
    }

    /// How much weight roasting lost. Stored lots were checked when roasted, so the loss is never
    /// negative; should stored figures disagree, it is reported as zero rather than below.
    pub fn weight_loss(&self) -> Result<WeightLoss, WeightError> {
        let used = self.used_green_weight()?;
        let roasted = self.roasted_weight.to_unit(used.unit());
        let amount = used
            .checked_sub(roasted)
            .unwrap_or_else(|| Weight::zero(used.unit()));
        let percentage = if used.is_zero() {
            Decimal::ZERO
        } else {
            // Micro-units fit in i64, so neither step can overflow a Decimal.
            Decimal::from(amount.micros())
                .saturating_mul(Decimal::ONE_HUNDRED)
                .checked_div(Decimal::from(used.micros()))
                .map_or(Decimal::ZERO, round2)
        };
        Ok(WeightLoss { amount, percentage })
    }

    /// Sets the current weight, like `setGreenLotWeight`: zero consumes; a consumed lot is final.
    pub fn set_weight(
        &mut self,
        weight: impl Into<crate::weight::RequestedWeight>,
        now: DateTime<Utc>,
    ) -> Result<WeightChange, StockError> {
        let change = self.stock.set_weight(weight, now)?;
        if change != WeightChange::Unchanged {
            self.last_modified_at = now;
        }
        Ok(change)
    }
}

/// The sum of the used weights of `sources`, in `unit`.
pub(crate) fn used_total(
    sources: &[LotSource],
    unit: crate::weight::WeightUnit,
) -> Result<Weight, WeightError> {
    sources
        .iter()
        .try_fold(Weight::zero(unit), |sum, s| sum.checked_add(s.used_weight))
}
