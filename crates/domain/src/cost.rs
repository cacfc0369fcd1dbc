//! What a lot or an order cost (api-decisions §15), along the genealogy of §8.
//!
//! A green lot costs its price per kilogram (a lot made by a transfer carries its source's
//! price); a roasted lot costs what its green cost, spread over the roasted weight at creation
//! (so roast loss raises the cost per kilogram); a blend costs what its roasted lots cost, over
//! its weight at creation; an order costs what its shipments cost. Each currency is summed on
//! its own and never converted. Figures keep every digit; the answer rounds.

use std::collections::{BTreeMap, HashMap, HashSet};

use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

use crate::ledger::{Edge, EdgeKind, Reference};
use crate::planning::{Overflow, add, div, mul};
use crate::price::Price;
use crate::stock::{LotKind, TypedLotRef};
use crate::weight::{Weight, WeightUnit};

/// Amounts by ISO 4217 currency code, in code order.
pub type Amounts = BTreeMap<&'static str, Decimal>;

/// Money as the answer writes it: half-even to 6 decimals.
pub fn money6(amount: Decimal) -> Decimal {
    amount
        .round_dp_with_strategy(6, RoundingStrategy::MidpointNearestEven)
        .normalize()
}

/// What a lot's cost is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// A green lot and its price per unit of its weight unit (none: not known).
    Green { price: Option<Price> },
    /// A roasted lot and its weight when it came out of the roaster.
    Roasted { created: Weight },
    /// A blend: it weighs what its roasted lots gave.
    Blended,
}

/// A lot of the genealogy, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostLot {
    pub lot: TypedLotRef,
    pub lot_number: i64,
    /// Its weight now.
    pub weight: Weight,
    pub basis: Basis,
}

/// A direct input of the asked lot or order: the weight it gave (kilograms) and its cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostInput {
    pub lot: TypedLotRef,
    pub lot_number: i64,
    pub weight: Decimal,
    pub cost_per_kg: Amounts,
}

/// A source green lot without a price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unpriced {
    pub lot_number: i64,
    pub id: Uuid,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cost {
    pub cost_per_kg: Amounts,
    pub total: Amounts,
    pub complete: bool,
    pub missing: Vec<Unpriced>,
    pub inputs: Vec<CostInput>,
}

/// A price per unit of `unit`, per kilogram.
fn per_kg(price: Price, unit: WeightUnit) -> Result<Decimal, Overflow> {
    match unit {
        WeightUnit::Kg => Ok(price.amount()),
        WeightUnit::Lbs => div(price.amount(), crate::weight::kg_per_lb()),
    }
}

fn scaled(amounts: &Amounts, factor: Decimal) -> Result<Amounts, Overflow> {
    amounts
        .iter()
        .map(|(c, a)| Ok((*c, mul(*a, factor)?)))
        .collect()
}

fn add_into(sum: &mut Amounts, more: &Amounts) -> Result<(), Overflow> {
    for (c, a) in more {
        let s = sum.entry(c).or_default();
        *s = add(*s, *a)?;
    }
    Ok(())
}

/// The genealogy upstream of what is asked: its lots and edges.
pub struct Genealogy<'a> {
    lots: &'a HashMap<TypedLotRef, CostLot>,
    into: HashMap<Reference, Vec<&'a Edge>>,
    known: HashMap<TypedLotRef, (Amounts, HashSet<TypedLotRef>)>,
}

impl<'a> Genealogy<'a> {
    pub fn new(lots: &'a HashMap<TypedLotRef, CostLot>, edges: &'a [Edge]) -> Self {
        let mut into: HashMap<Reference, Vec<&Edge>> = HashMap::new();
        for e in edges {
            into.entry(e.to).or_default().push(e);
        }
        Self {
            lots,
            into,
            known: HashMap::new(),
        }
    }

    fn edges_into(&self, to: Reference, kind: EdgeKind) -> Vec<&'a Edge> {
        self.into
            .get(&to)
            .map(|v| v.iter().copied().filter(|e| e.kind == kind).collect())
            .unwrap_or_default()
    }

    /// A lot's cost per kilogram and the green lots without a price it was made from.
    fn cost_per_kg(
        &mut self,
        lot: TypedLotRef,
        visiting: &mut HashSet<TypedLotRef>,
    ) -> Result<(Amounts, HashSet<TypedLotRef>), Overflow> {
        if let Some(known) = self.known.get(&lot) {
            return Ok(known.clone());
        }
        let Some(stored) = self.lots.get(&lot).copied() else {
            return Ok((Amounts::new(), HashSet::new()));
        };
        // Roasts and blends make new lots, so the genealogy has no cycle through them; should
        // stored data hold one, the lot on the cycle adds nothing.
        if !visiting.insert(lot) {
            return Ok((Amounts::new(), HashSet::new()));
        }
        let found = match stored.basis {
            Basis::Green { price: Some(price) } => (
                Amounts::from([(
                    price.currency().code(),
                    per_kg(price, stored.weight.unit())?,
                )]),
                HashSet::new(),
            ),
            Basis::Green { price: None } => (Amounts::new(), HashSet::from([lot])),
            Basis::Roasted { created } => {
                self.made_of(lot, EdgeKind::Roast, Some(created.in_kg()), visiting)?
            }
            Basis::Blended => self.made_of(lot, EdgeKind::Blend, None, visiting)?,
        };
        visiting.remove(&lot);
        self.known.insert(lot, found.clone());
        Ok(found)
    }

    /// Σ (input kg × input cost per kg) / `created` kg (a blend: Σ input kg).
    fn made_of(
        &mut self,
        lot: TypedLotRef,
        kind: EdgeKind,
        created: Option<Decimal>,
        visiting: &mut HashSet<TypedLotRef>,
    ) -> Result<(Amounts, HashSet<TypedLotRef>), Overflow> {
        let mut sum = Amounts::new();
        let mut unpriced = HashSet::new();
        let mut weight = Decimal::ZERO;
        for e in self.edges_into(Reference::Lot(lot), kind) {
            let kg = e.weight.in_kg();
            weight = add(weight, kg)?;
            let (cost, missing) = self.cost_per_kg(e.from, visiting)?;
            add_into(&mut sum, &scaled(&cost, kg)?)?;
            unpriced.extend(missing);
        }
        let created = created.unwrap_or(weight);
        if created <= Decimal::ZERO {
            return Ok((Amounts::new(), unpriced));
        }
        let per_kg = sum
            .into_iter()
            .map(|(c, a)| Ok((c, div(a, created)?)))
            .collect::<Result<Amounts, Overflow>>()?;
        Ok((per_kg, unpriced))
    }

    /// The lots a transfer-made green lot descends from that no transfer made (its imported
    /// source), each once.
    fn sources(&self, lot: TypedLotRef) -> Vec<TypedLotRef> {
        let mut roots = Vec::new();
        let mut seen = HashSet::from([lot]);
        let mut next = vec![lot];
        while let Some(l) = next.pop() {
            let from: Vec<TypedLotRef> = self
                .edges_into(Reference::Lot(l), EdgeKind::Transfer)
                .iter()
                .map(|e| e.from)
                .collect();
            if from.is_empty() {
                roots.push(l);
            }
            for f in from {
                if seen.insert(f) {
                    next.push(f);
                }
            }
        }
        roots
    }

    fn missing(&self, unpriced: HashSet<TypedLotRef>) -> Vec<Unpriced> {
        let mut out: Vec<Unpriced> = unpriced
            .into_iter()
            .flat_map(|l| self.sources(l))
            .collect::<HashSet<_>>()
            .into_iter()
            .filter_map(|l| {
                self.lots.get(&l).map(|s| Unpriced {
                    lot_number: s.lot_number,
                    id: l.id,
                })
            })
            .collect();
        out.sort();
        out
    }

    /// The inputs of `to` along edges of `kind`, one per lot (weights summed), by lot type
    /// then number.
    fn inputs(&mut self, to: Reference, kind: EdgeKind) -> Result<Vec<CostInput>, Overflow> {
        let mut by_lot: Vec<(TypedLotRef, Decimal)> = Vec::new();
        for e in self.edges_into(to, kind) {
            let kg = e.weight.in_kg();
            match by_lot.iter_mut().find(|(l, _)| *l == e.from) {
                Some((_, w)) => *w = add(*w, kg)?,
                None => by_lot.push((e.from, kg)),
            }
        }
        let mut inputs = Vec::with_capacity(by_lot.len());
        for (lot, weight) in by_lot {
            let (cost_per_kg, _) = self.cost_per_kg(lot, &mut HashSet::new())?;
            inputs.push(CostInput {
                lot,
                lot_number: self.lots.get(&lot).map_or(0, |l| l.lot_number),
                weight,
                cost_per_kg,
            });
        }
        inputs.sort_by_key(|i| (kind_rank(i.lot.kind), i.lot_number, i.lot.id));
        Ok(inputs)
    }

    /// The cost of a lot: per kilogram, and its weight now at that cost.
    pub fn lot_cost(&mut self, lot: TypedLotRef) -> Result<Cost, Overflow> {
        let (cost_per_kg, unpriced) = self.cost_per_kg(lot, &mut HashSet::new())?;
        let weight = self
            .lots
            .get(&lot)
            .map_or(Decimal::ZERO, |l| l.weight.in_kg());
        let total = scaled(&cost_per_kg, weight)?;
        let kind = match lot.kind {
            LotKind::Green => EdgeKind::Transfer,
            LotKind::Roasted => EdgeKind::Roast,
            LotKind::Blended => EdgeKind::Blend,
        };
        let inputs = self.inputs(Reference::Lot(lot), kind)?;
        let missing = self.missing(unpriced);
        Ok(Cost {
            cost_per_kg,
            total,
            complete: missing.is_empty(),
            missing,
            inputs,
        })
    }

    /// The cost of an order: Σ shipped kg × the shipped lot's cost per kg, and that over the
    /// kilograms shipped.
    pub fn order_cost(&mut self, order: Uuid) -> Result<Cost, Overflow> {
        let mut total = Amounts::new();
        let mut shipped = Decimal::ZERO;
        let mut unpriced = HashSet::new();
        for e in self.edges_into(Reference::Order(order), EdgeKind::Shipment) {
            let kg = e.weight.in_kg();
            shipped = add(shipped, kg)?;
            let (cost, missing) = self.cost_per_kg(e.from, &mut HashSet::new())?;
            add_into(&mut total, &scaled(&cost, kg)?)?;
            unpriced.extend(missing);
        }
        let cost_per_kg = if shipped > Decimal::ZERO {
            total
                .iter()
                .map(|(c, a)| Ok((*c, div(*a, shipped)?)))
                .collect::<Result<Amounts, Overflow>>()?
        } else {
            Amounts::new()
        };
        let inputs = self.inputs(Reference::Order(order), EdgeKind::Shipment)?;
        let missing = self.missing(unpriced);
        Ok(Cost {
            cost_per_kg,
            total,
            complete: missing.is_empty(),
            missing,
            inputs,
        })
    }
}

fn kind_rank(kind: LotKind) -> u8 {
    match kind {
        LotKind::Green => 0,
        LotKind::Roasted => 1,
        LotKind::Blended => 2,
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use proptest::prelude::*;

    use super::*;
    use crate::price::Currency;
    use crate::test_values::d;

    fn green(n: u128) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(n),
            kind: LotKind::Green,
        }
    }
    fn roasted(n: u128) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(n),
            kind: LotKind::Roasted,
        }
    }
    fn blended(n: u128) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(n),
            kind: LotKind::Blended,
        }
    }
    fn w(amount: Decimal, unit: WeightUnit) -> Weight {
        Weight::new(amount, unit).unwrap()
    }
    fn eur(amount: Decimal) -> Option<Price> {
        Some(Price::new(amount, Currency::parse("EUR").unwrap()).unwrap())
    }
    fn edge(from: TypedLotRef, to: Reference, kind: EdgeKind, weight: Weight) -> Edge {
        Edge {
            from,
            to,
            kind,
            weight,
            date: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        }
    }
    fn lot(lot: TypedLotRef, n: i64, weight: Weight, basis: Basis) -> (TypedLotRef, CostLot) {
        (
            lot,
            CostLot {
                lot,
                lot_number: n,
                weight,
                basis,
            },
        )
    }

    #[test]
    fn roast_loss_raises_the_cost_per_kg_and_currencies_stay_apart() {
        let kg = WeightUnit::Kg;
        let usd = Some(Price::new(d("6"), Currency::parse("USD").unwrap()).unwrap());
        let lots = HashMap::from([
            lot(
                green(1),
                1,
                w(d("90"), kg),
                Basis::Green { price: eur(d("8")) },
            ),
            lot(green(2), 2, w(d("95"), kg), Basis::Green { price: usd }),
            lot(green(3), 3, w(d("95"), kg), Basis::Green { price: None }),
            lot(
                roasted(4),
                1,
                w(d("10"), kg),
                Basis::Roasted {
                    created: w(d("12"), kg),
                },
            ),
        ]);
        let edges = vec![
            edge(
                green(1),
                Reference::Lot(roasted(4)),
                EdgeKind::Roast,
                w(d("10"), kg),
            ),
            edge(
                green(2),
                Reference::Lot(roasted(4)),
                EdgeKind::Roast,
                w(d("3"), kg),
            ),
            edge(
                green(3),
                Reference::Lot(roasted(4)),
                EdgeKind::Roast,
                w(d("2"), kg),
            ),
        ];
        let cost = Genealogy::new(&lots, &edges).lot_cost(roasted(4)).unwrap();
        // EUR: 10 × 8 / 12; USD: 3 × 6 / 12.
        assert_eq!(money6(cost.cost_per_kg["EUR"]), d("6.666667"));
        assert_eq!(cost.cost_per_kg["USD"], d("1.5"));
        assert_eq!(money6(cost.total["EUR"]), d("66.666667"));
        assert!(!cost.complete);
        assert_eq!(
            cost.missing,
            vec![Unpriced {
                lot_number: 3,
                id: Uuid::from_u128(3)
            }]
        );
        assert_eq!(cost.inputs.len(), 3);
        assert_eq!(cost.inputs[0].weight, d("10"));
    }

    #[test]
    fn a_price_per_pound_is_converted_to_per_kg_exactly() {
        let lots = HashMap::from([lot(
            green(1),
            1,
            w(d("100"), WeightUnit::Lbs),
            Basis::Green { price: eur(d("1")) },
        )]);
        let cost = Genealogy::new(&lots, &[]).lot_cost(green(1)).unwrap();
        // 1 per pound is 1 / 0.45359237 per kg; 100 pounds cost 100, with no rounding between.
        assert_eq!(money6(cost.cost_per_kg["EUR"]), d("2.204623"));
        assert_eq!(money6(cost.total["EUR"]), d("100"));
        assert!(cost.inputs.is_empty());
    }

    #[test]
    fn an_unpriced_transferred_lot_names_its_imported_source() {
        let kg = WeightUnit::Kg;
        let lots = HashMap::from([
            lot(green(1), 1, w(d("0"), kg), Basis::Green { price: None }),
            lot(green(2), 2, w(d("5"), kg), Basis::Green { price: None }),
        ]);
        let edges = vec![edge(
            green(1),
            Reference::Lot(green(2)),
            EdgeKind::Transfer,
            w(d("5"), kg),
        )];
        let cost = Genealogy::new(&lots, &edges).lot_cost(green(2)).unwrap();
        assert_eq!(cost.missing[0].lot_number, 1);
        assert_eq!(cost.inputs[0].lot, green(1));
    }

    proptest! {
        #[test]
        fn a_blend_of_lots_costing_the_same_per_kg_costs_that(
            price in 1i64..10_000_000,
            loss in 0i64..60,
            used in prop::collection::vec(1i64..100_000_000, 1..6),
        ) {
            let kg = WeightUnit::Kg;
            let mut lots = HashMap::new();
            let mut edges = Vec::new();
            let blend = blended(999);
            let mut blend_weight = Decimal::ZERO;
            // Roasts of one price and one loss: every roasted lot costs the same per kg.
            for (i, green_used) in used.iter().enumerate() {
                let g = green(i as u128 + 1);
                let r = roasted(i as u128 + 100);
                let green_used = Decimal::new(*green_used, 3);
                let created = green_used * Decimal::new(100 - loss, 2);
                lots.extend([
                    lot(g, i as i64, w(green_used, kg), Basis::Green { price: eur(Decimal::new(price, 4)) }),
                    lot(r, i as i64, w(created, kg), Basis::Roasted { created: w(created, kg) }),
                ]);
                edges.push(edge(g, Reference::Lot(r), EdgeKind::Roast, w(green_used, kg)));
                edges.push(edge(r, Reference::Lot(blend), EdgeKind::Blend, w(created, kg)));
                blend_weight += created;
            }
            lots.extend([lot(blend, 1, w(blend_weight, kg), Basis::Blended)]);
            let mut g = Genealogy::new(&lots, &edges);
            let one = g.lot_cost(roasted(100)).unwrap().cost_per_kg["EUR"];
            let cost = g.lot_cost(blend).unwrap();
            prop_assert!((cost.cost_per_kg["EUR"] - one).abs() < d("0.0000000000000001"));
            prop_assert!(cost.complete);
            prop_assert_eq!(cost.inputs.len(), used.len());
        }

        #[test]
        fn cost_is_conserved_along_a_chain_of_transfers(
            price in 0i64..10_000_000,
            weights in prop::collection::vec(1i64..100_000_000, 1..6),
            shipped in 1i64..1_000_000,
        ) {
            let kg = WeightUnit::Kg;
            let mut lots = HashMap::new();
            let mut edges = Vec::new();
            // Each transfer-made lot carries its source's price, as the store copies it.
            for (i, weight) in weights.iter().enumerate() {
                let g = green(i as u128 + 1);
                lots.extend([lot(g, i as i64 + 1, w(Decimal::new(*weight, 3), kg),
                    Basis::Green { price: eur(Decimal::new(price, 2)) })]);
                if i > 0 {
                    edges.push(edge(green(i as u128), Reference::Lot(g), EdgeKind::Transfer,
                        w(Decimal::new(*weight, 3), kg)));
                }
            }
            let last = green(weights.len() as u128);
            let order = Uuid::from_u128(7777);
            let shipped_kg = Decimal::new(shipped, 3);
            edges.push(edge(last, Reference::Order(order), EdgeKind::Shipment, w(shipped_kg, kg)));
            let mut g = Genealogy::new(&lots, &edges);
            let first = g.lot_cost(green(1)).unwrap();
            let end = g.lot_cost(last).unwrap();
            prop_assert_eq!(&first.cost_per_kg, &end.cost_per_kg);
            let o = g.order_cost(order).unwrap();
            prop_assert_eq!(o.total["EUR"], shipped_kg * Decimal::new(price, 2));
            prop_assert_eq!(&o.cost_per_kg, &first.cost_per_kg);
        }
    }
}
