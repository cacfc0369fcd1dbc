//! `roastery verify` and `roastery trace`: the ledger audit and the genealogy of a lot, printed.

use roastery_domain::stock::LotKind;
use std::collections::HashMap;
use std::io::Write;

use roastery_adapters_diesel::DieselStore;
use roastery_app::Roastery;
use roastery_app::trace::Trace;
use roastery_domain::ledger::Reference;
use roastery_domain::stock::number;
use roastery_domain::weight::Weight;
use serde_json::{Value, json};

use crate::csv::field;

/// Prints one line per lot that disagrees with its ledger (or a summary when none does); returns
/// whether every lot agrees.
pub fn verify(app: &Roastery<DieselStore>, out: &mut impl Write) -> anyhow::Result<bool> {
    let audit = app.audit_ledger()?;
    for lot in &audit.disagreeing {
        let name = number(lot.lot.kind.prefix(), lot.lot_number);
        let ledger = format!(
            "{} {}",
            roastery_domain::decimal::from_micros(lot.ledger_micros),
            lot.weight.unit().as_str()
        );
        let why = if lot.ledger_micros != lot.weight.micros() {
            format!("weighs {} but its ledger sums to {ledger}", lot.weight)
        } else {
            format!("is consumed but weighs {}", lot.weight)
        };
        writeln!(out, "{name} ({}) {why}", lot.lot.id)?;
    }
    if audit.disagreeing.is_empty() {
        writeln!(
            out,
            "ok: {} lots, every ledger sums to its lot's weight",
            audit.lots_checked
        )?;
    } else {
        writeln!(
            out,
            "{} of {} lots disagree with the ledger",
            audit.disagreeing.len(),
            audit.lots_checked
        )?;
    }
    let (checked, stale) = app.check_listing_items()?;
    for item in &stale {
        writeln!(
            out,
            "{} {}: its stored listing item differs from the lot ({})",
            match item.kind {
                LotKind::Green => "green lot",
                LotKind::Roasted => "roasted lot",
                LotKind::Blended => "blended lot",
            },
            item.id,
            match &item.stored {
                Some(_) => "stale",
                None => "missing",
            }
        )?;
    }
    if stale.is_empty() {
        writeln!(
            out,
            "ok: {checked} listing items, each the one rendered from its lot"
        )?;
    } else {
        writeln!(
            out,
            "{} of {checked} listing items differ from their lots",
            stale.len()
        )?;
    }
    Ok(audit.disagreeing.is_empty() && stale.is_empty())
}

fn date(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// One row per edge: both ends (lot number or order external id, name or customer, type), the
/// kind, the weight that flowed, its date and, for shipments, the customer.
pub fn write_csv(trace: &Trace, out: &mut impl Write) -> anyhow::Result<()> {
    let lots: HashMap<_, _> = trace.lots.iter().map(|l| (l.lot.lot.id, l)).collect();
    let orders: HashMap<_, _> = trace.orders.iter().map(|o| (o.id, o)).collect();
    writeln!(
        out,
        "from_lot_number,from_name,from_type,to_number,to_name,to_type,kind,weight,unit,date,customer"
    )?;
    for e in &trace.edges {
        let from = lots.get(&e.from.id);
        let (to_number, to_name, customer) = match e.to {
            Reference::Lot(l) => match lots.get(&l.id) {
                Some(t) => (
                    number(l.kind.prefix(), t.lot.lot_number),
                    t.lot.name.clone(),
                    String::new(),
                ),
                None => (l.id.to_string(), String::new(), String::new()),
            },
            Reference::Order(id) => match orders.get(&id) {
                Some(o) => (
                    o.external_id.clone(),
                    String::new(),
                    o.customer.clone().unwrap_or_default(),
                ),
                None => (id.to_string(), String::new(), String::new()),
            },
        };
        let row = [
            from.map_or(e.from.id.to_string(), |l| {
                number(e.from.kind.prefix(), l.lot.lot_number)
            }),
            from.map_or(String::new(), |l| l.lot.name.clone()),
            e.from.kind.reference_type().to_owned(),
            to_number,
            to_name,
            e.to.type_name().to_owned(),
            e.kind.as_str().to_owned(),
            e.weight.amount().to_string(),
            e.weight.unit().as_str().to_owned(),
            date(e.date),
            customer,
        ];
        let row: Vec<String> = row.iter().map(|v| field(v)).collect();
        writeln!(out, "{}", row.join(","))?;
    }
    Ok(())
}

fn reference(r: Reference) -> Value {
    json!({"id": r.id(), "type": r.type_name()})
}

/// The trace as `inventory.trace.traceLot` answers it.
pub fn write_json(trace: &Trace, out: &mut impl Write) -> anyhow::Result<()> {
    let weight = |w: Weight| json!({"amount": w.amount().to_string(), "unit": w.unit().as_str()});
    let value = json!({
        "lots": trace.lots.iter().map(|l| json!({
            "id": l.lot.lot.id,
            "type": l.lot.lot.kind.reference_type(),
            "lotNumber": number(l.lot.lot.kind.prefix(), l.lot.lot_number),
            "name": l.lot.name,
            "weight": weight(l.lot.weight),
            "location": l.location.as_ref().map(|loc| json!({"id": loc.id, "externalId": loc.external_id})),
            "consumedDate": l.lot.consumed_at.map(date),
            "depth": l.depth,
        })).collect::<Vec<_>>(),
        "edges": trace.edges.iter().map(|e| json!({
            "from": reference(Reference::Lot(e.from)),
            "to": reference(e.to),
            "kind": e.kind.as_str(),
            "weight": weight(e.weight),
            "date": date(e.date),
        })).collect::<Vec<_>>(),
        "orders": trace.orders.iter().map(|o| json!({
            "id": o.id,
            "externalId": o.external_id,
            "customer": o.customer,
            "customerType": o.customer_type.map(|t| t.as_str()),
            "status": o.status.as_str(),
            "shippedDate": o.shipped_date.map(date),
        })).collect::<Vec<_>>(),
        "cuppings": trace.cuppings.iter().map(|c| json!({
            "id": c.id,
            "cuppingNumber": number(roastery_domain::cupping::CUPPING_PREFIX, c.number),
            "state": c.state.as_str(),
            "cuppedLot": reference(Reference::Lot(c.cupped_lot)),
        })).collect::<Vec<_>>(),
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    Ok(())
}
