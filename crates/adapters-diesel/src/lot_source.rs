//! The sources of roasted and blended lots: a roast's green lots and a blend's roasted lots,
//! stored in two tables of one shape (owning lot, position, source lot, name, external id, used
//! weight), read and written by the same code.

use std::collections::HashMap;

use diesel::prelude::*;
use roastery_domain::lot_source::LotSource;
use roastery_ports::repo::StoreResult;
use uuid::Uuid;

use crate::error::OrStoreError;
use crate::row::uuid;
use crate::row::weight_from_db;
use crate::schema::{blend_sources, roast_sources};
use crate::store::DieselTx;

/// Whose sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SourceTable {
    /// `roast_sources`: the green lots of roasted lots.
    Roast,
    /// `blend_sources`: the roasted lots of blended lots.
    Blend,
}

impl SourceTable {
    fn what(self) -> &'static str {
        match self {
            SourceTable::Roast => "roast source",
            SourceTable::Blend => "blend source",
        }
    }
}

/// A stored source row: owning lot id, position, source lot id, name, external id, used weight.
type SourceTuple = (String, i32, String, String, Option<String>, i64, String);

fn source(what: &str, row: SourceTuple) -> StoreResult<(String, LotSource)> {
    let (lot_id, _, source_id, name, external_id, used_micros, used_unit) = row;
    Ok((
        lot_id,
        LotSource {
            lot_id: uuid(what, &source_id)?,
            used_weight: weight_from_db(what, used_micros, &used_unit)?,
            name,
            external_id,
        },
    ))
}

/// One multi-row insert of a lot's sources into `$table`, whose owning and source lot columns
/// are `$owner` and `$source`.
macro_rules! insert_sources {
    ($conn:expr, $table:ident, $owner:ident, $source:ident, $lot:expr, $sources:expr) => {{
        let rows: Vec<_> = $sources
            .iter()
            .enumerate()
            .map(|(at, s)| {
                (
                    $table::$owner.eq($lot.clone()),
                    $table::position.eq(i32::try_from(at).unwrap_or(i32::MAX)),
                    $table::$source.eq(s.lot_id.to_string()),
                    $table::name.eq(s.name.clone()),
                    $table::external_id.eq(s.external_id.clone()),
                    $table::used_micros.eq(s.used_weight.micros()),
                    $table::used_unit.eq(s.used_weight.unit().as_str()),
                )
            })
            .collect();
        on_backend!($conn, |c| insert_rows!(c, $table::table, rows.as_slice()))
    }};
}

impl DieselTx {
    /// The sources of these lots, by lot, each lot's in the order given: one query.
    fn sources_of(
        &mut self,
        table: SourceTable,
        lot_ids: &[&str],
    ) -> StoreResult<HashMap<String, Vec<LotSource>>> {
        if lot_ids.is_empty() {
            return Ok(HashMap::new());
        }
        let rows: Vec<SourceTuple> = match table {
            SourceTable::Roast => roast_sources::table
                .filter(roast_sources::roasted_lot_id.eq_any(lot_ids))
                .order((roast_sources::roasted_lot_id, roast_sources::position))
                .load(self.conn()?),
            SourceTable::Blend => blend_sources::table
                .filter(blend_sources::blended_lot_id.eq_any(lot_ids))
                .order((blend_sources::blended_lot_id, blend_sources::position))
                .load(self.conn()?),
        }
        .store()?;
        let mut by_lot: HashMap<String, Vec<LotSource>> = HashMap::new();
        for row in rows {
            let (lot_id, source) = source(table.what(), row)?;
            by_lot.entry(lot_id).or_default().push(source);
        }
        Ok(by_lot)
    }

    /// Lots built from their rows and their sources, the sources read in one query.
    pub(crate) fn lots_with_sources<R, L>(
        &mut self,
        table: SourceTable,
        rows: Vec<R>,
        id: impl Fn(&R) -> &str,
        build: impl Fn(R, Vec<LotSource>) -> StoreResult<L>,
    ) -> StoreResult<Vec<L>> {
        let ids: Vec<&str> = rows.iter().map(&id).collect();
        let mut by_lot = self.sources_of(table, &ids)?;
        rows.into_iter()
            .map(|row| {
                let sources = by_lot.remove(id(&row)).unwrap_or_default();
                build(row, sources)
            })
            .collect()
    }

    /// Stores a new lot's sources in the order given: one statement.
    pub(crate) fn insert_sources(
        &mut self,
        table: SourceTable,
        lot_id: Uuid,
        sources: &[LotSource],
    ) -> StoreResult<()> {
        if sources.is_empty() {
            return Ok(());
        }
        let lot = lot_id.to_string();
        match table {
            SourceTable::Roast => insert_sources!(
                self.conn()?,
                roast_sources,
                roasted_lot_id,
                green_lot_id,
                lot,
                sources
            ),
            SourceTable::Blend => insert_sources!(
                self.conn()?,
                blend_sources,
                blended_lot_id,
                roasted_lot_id,
                lot,
                sources
            ),
        }
        .store()
        .map(drop)
    }
}
