//! `roastery seed demo`: a realistic data set, written through the same use cases as the API.

use roastery_ports::location::ImportLocation;
use roastery_ports::project::ImportProject;
use roastery_ports::{Roastery, Store};

pub fn demo<S: Store>(app: &Roastery<S>) -> anyhow::Result<()> {
    for (name, external_id) in [
        ("Hamburg green coffee warehouse", "WH-HAM"),
        ("Roastery floor", "RST-01"),
        ("Shop stock room", "SHOP-01"),
    ] {
        app.import_location(ImportLocation {
            name: name.into(),
            external_id: Some(external_id.into()),
        })?;
    }
    for (name, description) in [
        (
            "Direct Trade 2026",
            "Lots bought directly from partner farms",
        ),
        ("Espresso Program", "Components of the house espresso"),
    ] {
        app.import_project(ImportProject {
            name: name.into(),
            description: Some(description.into()),
        })?;
    }
    println!("demo data loaded");
    Ok(())
}
