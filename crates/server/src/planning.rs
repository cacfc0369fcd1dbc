//! `roastery plan`: the net requirements of the open orders as a roast list a roaster reads at
//! the roaster — what to roast (profile, batches), which green lots to fetch, what is short and
//! what the plan could not work out.

use std::io::Write;

use roastery_app::plan::Plan;
use roastery_domain::planning::{MissingItem, kg3};
use roastery_domain::stock::{LotKind, number};
use rust_decimal::Decimal;

fn kg(amount: Decimal) -> String {
    format!("{} kg", kg3(amount))
}

/// A CSV field, quoted when it must be (RFC 4180).
fn field(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

fn profile_name(plan: &Plan, id: uuid::Uuid) -> String {
    plan.requirements
        .profiles
        .iter()
        .find(|p| p.profile_id == id)
        .map_or_else(|| id.to_string(), |p| p.name.clone())
}

fn lot_name(plan: &Plan, id: uuid::Uuid) -> String {
    plan.green_lot_names.get(&id).cloned().unwrap_or_default()
}

fn missing_line(plan: &Plan, item: &MissingItem) -> (String, &'static str) {
    match item {
        MissingItem::Sku(sku) => (
            format!("SKU {sku}"),
            "no recipe: set one with mrp.product.setRecipe",
        ),
        MissingItem::Profile(id) => (
            format!("profile {}", profile_name(plan, *id)),
            "no expected loss: set one, or roast it once",
        ),
    }
}

/// A table for a terminal: roasts, green lots to fetch, shortfalls, what is missing.
pub fn write_table(plan: &Plan, out: &mut impl Write) -> anyhow::Result<()> {
    let r = &plan.requirements;
    match plan.until {
        Some(until) => writeln!(
            out,
            "Roast list for the open orders up to {}",
            until.format("%Y-%m-%d %H:%M UTC")
        )?,
        None => writeln!(out, "Roast list for all open orders")?,
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<24} {:>12} {:>12} {:>12} {:>7} {:>12}  BATCHES",
        "PROFILE", "DEMAND", "ON HAND", "TO ROAST", "LOSS", "GREEN"
    )?;
    for p in &r.profiles {
        let batches = match p.batches.as_slice() {
            [] if p.green_needed.is_none() => "-".to_owned(),
            [] => "no batch size set".to_owned(),
            [first, ..] if p.batches.iter().all(|b| b == first) => {
                format!("{} × {}", p.batches.len(), kg(*first))
            }
            all => all.iter().map(|b| kg(*b)).collect::<Vec<_>>().join(" + "),
        };
        writeln!(
            out,
            "{:<24} {:>12} {:>12} {:>12} {:>7} {:>12}  {}",
            p.name,
            kg(p.roasted_demand),
            kg(p.roasted_on_hand),
            kg(p.roasted_needed),
            p.expected_loss
                .map_or_else(|| "?".to_owned(), |l| format!("{l}%")),
            p.green_needed.map_or_else(|| "?".to_owned(), kg),
            batches,
        )?;
    }
    if r.profiles.is_empty() {
        writeln!(out, "(nothing to roast)")?;
    }
    writeln!(out)?;
    writeln!(out, "GREEN LOTS TO FETCH")?;
    writeln!(
        out,
        "{:<8} {:<32} {:>12} {:>12}",
        "LOT", "NAME", "TAKE", "IN STOCK"
    )?;
    for a in &r.green_lots {
        writeln!(
            out,
            "{:<8} {:<32} {:>12} {:>12}",
            number(LotKind::Green.prefix(), a.lot_number),
            lot_name(plan, a.green_lot_id),
            kg(a.allocated),
            kg(a.available),
        )?;
    }
    if r.green_lots.is_empty() {
        writeln!(out, "(none)")?;
    }
    if !r.shortfalls.is_empty() {
        writeln!(out)?;
        writeln!(out, "SHORT OF GREEN")?;
        for s in &r.shortfalls {
            writeln!(
                out,
                "{} component {}: {} more green needed",
                profile_name(plan, s.profile_id),
                s.component_index.saturating_add(1),
                kg(s.weight)
            )?;
        }
    }
    if !r.missing.is_empty() {
        writeln!(out)?;
        writeln!(out, "NOT PLANNED")?;
        for (item, _) in &r.missing {
            let (what, why) = missing_line(plan, item);
            writeln!(out, "{what}: {why}")?;
        }
    }
    Ok(())
}

/// One row per batch, green lot to fetch, shortfall and missing item, for a spreadsheet.
pub fn write_csv(plan: &Plan, out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(out, "line,profile,batch,lot_number,lot_name,weight_kg,note")?;
    let r = &plan.requirements;
    let mut row = |cells: [String; 7]| -> anyhow::Result<()> {
        let cells: Vec<String> = cells.iter().map(|c| field(c)).collect();
        writeln!(out, "{}", cells.join(","))?;
        Ok(())
    };
    for p in &r.profiles {
        for (i, b) in p.batches.iter().enumerate() {
            row([
                "ROAST".into(),
                p.name.clone(),
                i.saturating_add(1).to_string(),
                String::new(),
                String::new(),
                kg3(*b).to_string(),
                String::new(),
            ])?;
        }
    }
    for a in &r.green_lots {
        row([
            "FETCH".into(),
            String::new(),
            String::new(),
            number(LotKind::Green.prefix(), a.lot_number),
            lot_name(plan, a.green_lot_id),
            kg3(a.allocated).to_string(),
            format!("{} kg in stock", kg3(a.available)),
        ])?;
    }
    for s in &r.shortfalls {
        row([
            "SHORT".into(),
            profile_name(plan, s.profile_id),
            String::new(),
            String::new(),
            String::new(),
            kg3(s.weight).to_string(),
            format!("component {}", s.component_index.saturating_add(1)),
        ])?;
    }
    for (item, _) in &r.missing {
        let (what, why) = missing_line(plan, item);
        row([
            "MISSING".into(),
            what,
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            why.into(),
        ])?;
    }
    Ok(())
}
