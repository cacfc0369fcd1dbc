//! Roastery's business rules: value objects (weights, prices, names), lots and their state
//! machines, roasts, blends, cuppings, products and orders.
//!
//! This crate is pure. It never reads a clock, draws a random number or touches I/O: everything a
//! transition needs (the current time, new ids) is passed in. That is why its tests are instant and
//! why every rule of the service is checked here first.
//!
//! Every error type implements [`BrokenRule`], which names the [`Violation`] category the API
//! reports; the HTTP adapter turns categories into status and code in one table.

// Request data reaches every rule here: no arithmetic that could overflow and panic on it
// (checked or saturating operations instead). Tests compute expectations freely.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]
// Tests build fixtures with plain casts; the code itself converts with checks.
#![cfg_attr(
    test,
    allow(
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )
)]

pub mod account;
pub mod blended_lot;
pub mod bulk;
pub mod cost;
pub mod cupping;
pub mod cupping_result;
pub mod dds;
pub mod decimal;
pub mod due_diligence;
pub mod epcis;
pub mod epcis_hash;
pub mod eu_geolocation;
pub mod event;
pub mod field;
pub mod geojson;
pub mod green_lot;
pub mod green_lot_details;
pub mod ledger;
pub mod location;
pub mod lot_source;
pub mod measure;
pub mod operation;
pub mod order;
pub mod page;
pub mod physical_analysis;
pub mod planning;
pub mod price;
pub mod product;
pub mod profile;
pub mod project;
pub mod roast;
pub mod roast_curve;
pub mod roast_details;
pub mod roast_log;
pub mod roasted_lot;
pub mod scope;
pub mod stock;
pub mod stored_plots;
pub mod submission;
#[cfg(test)]
mod test_values;
pub mod text;
pub mod violation;
pub mod webhook;
pub mod weight;

pub use field::FieldPath;
pub use violation::{BrokenRule, Violation};
