//! Stored blended lots and their sources (the roasted lots each blend was made from, in the order
//! given, so lineage can be walked from a blend back to its roasts and their green lots).

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::lot_source::LotSource;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::stock::Stock;
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::EventRepo as _;
use roastery_ports::repo::{BlendRepo, StoreResult};
use uuid::Uuid;

use crate::error::OrStoreError;
use crate::lot_source::SourceTable;
use crate::roast::{projects_from_db, projects_to_db};
use crate::row::uuid;
use crate::row::weight_from_db;
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

use crate::schema::*;

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = blended_lots)]
struct BlendedLotRow {
    id: String,
    lot_number: i64,
    name: String,
    weight_micros: i64,
    weight_unit: String,
    consumed_at: Option<NaiveDateTime>,
    location_id: String,
    blended_date: NaiveDateTime,
    projects: String,
    created_at: NaiveDateTime,
    last_modified_at: NaiveDateTime,
}

impl BlendedLotRow {
    fn from_domain(l: &BlendedLot) -> StoreResult<Self> {
        Ok(Self {
            id: l.id.to_string(),
            lot_number: l.lot_number,
            name: l.name.clone(),
            weight_micros: l.stock.weight().micros(),
            weight_unit: l.stock.weight().unit().as_str().to_owned(),
            consumed_at: l.stock.consumed_at().map(to_db),
            location_id: l.location_id.to_string(),
            blended_date: to_db(l.blended_date),
            projects: projects_to_db(&l.projects)?,
            created_at: to_db(l.created_at),
            last_modified_at: to_db(l.last_modified_at),
        })
    }

    fn into_domain(self, sources: Vec<LotSource>) -> StoreResult<BlendedLot> {
        const WHAT: &str = "blended lot";
        let weight = weight_from_db(WHAT, self.weight_micros, &self.weight_unit)?;
        Ok(BlendedLot {
            id: uuid(WHAT, &self.id)?,
            lot_number: self.lot_number,
            name: self.name,
            stock: Stock::restore(weight, self.consumed_at.map(from_db)),
            sources,
            location_id: uuid(WHAT, &self.location_id)?,
            blended_date: from_db(self.blended_date),
            projects: projects_from_db(WHAT, &self.projects)?,
            created_at: from_db(self.created_at),
            last_modified_at: from_db(self.last_modified_at),
        })
    }
}

impl DieselTx {
    /// Turns lot rows into blended lots, loading all their sources in one query.
    fn blended_lots_with_sources(
        &mut self,
        rows: Vec<BlendedLotRow>,
    ) -> StoreResult<Vec<BlendedLot>> {
        self.lots_with_sources(
            SourceTable::Blend,
            rows,
            |r| r.id.as_str(),
            BlendedLotRow::into_domain,
        )
    }
}

impl DieselTx {
    /// Inserts a blended lot's row, with its listing item (`None`: missing), and its sources.
    pub(crate) fn insert_blended_lot_row(
        &mut self,
        lot: &BlendedLot,
        item: Option<&str>,
    ) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::BlendedLot, lot.id), Change::Created);
        diesel::insert_into(blended_lots::table)
            .values((
                BlendedLotRow::from_domain(lot)?,
                blended_lots::listing_item.eq(item),
            ))
            .execute(self.conn()?)
            .store()?;
        self.insert_sources(SourceTable::Blend, lot.id, &lot.sources)
    }
}

impl BlendRepo for DieselTx {
    fn blended_lot_for_update(&mut self, id: Uuid) -> StoreResult<Option<ForUpdate<BlendedLot>>> {
        roastery_ports::locked::blended_lot_for_update(self, id)
    }

    fn insert_blended_lot(&mut self, lot: &BlendedLot) -> StoreResult<()> {
        // The item is stored by the unit of work once the lot is written (see `listing`).
        self.written.blended(lot);
        self.insert_blended_lot_row(lot, None)
    }

    fn blended_lot(&mut self, id: Uuid) -> StoreResult<Option<BlendedLot>> {
        let rows: Vec<BlendedLotRow> = blended_lots::table
            .select(BlendedLotRow::as_select())
            .filter(blended_lots::id.eq(id.to_string()))
            .load(self.conn()?)
            .store()?;
        Ok(self.blended_lots_with_sources(rows)?.pop())
    }

    fn update_blended_lot_stock(&mut self, lot: &ForUpdate<BlendedLot>) -> StoreResult<()> {
        self.record_change(Subject::new(Resource::BlendedLot, lot.id), Change::Updated);
        // The item is stored by the unit of work once the lot is written (see `listing`).
        self.written.blended(lot);
        diesel::update(blended_lots::table.find(lot.id.to_string()))
            .set((
                blended_lots::listing_item.eq(None::<String>),
                blended_lots::weight_micros.eq(lot.stock.weight().micros()),
                blended_lots::consumed_at.eq(lot.stock.consumed_at().map(to_db)),
                blended_lots::last_modified_at.eq(to_db(lot.last_modified_at)),
            ))
            .execute(self.conn()?)
            .store()
            .map(drop)
    }

    fn list_blended_lots(
        &mut self,
        from: Option<DateTime<Utc>>,
        page: &PageRequest,
    ) -> StoreResult<Page<BlendedLot>> {
        let mut query = blended_lots::table
            .select(BlendedLotRow::as_select())
            .into_boxed();
        if let Some(from) = from {
            query = query.filter(blended_lots::blended_date.ge(to_db(from)));
        }
        let rows: Vec<BlendedLotRow> =
            newest_first!(query, page, blended_lots::blended_date, blended_lots::id)
                .load(self.conn()?)
                .store()?;
        let items = self.blended_lots_with_sources(rows)?;
        Ok(Page::from_overfetch(items, page.limit, |l| {
            (l.blended_date, l.id)
        }))
    }
}
