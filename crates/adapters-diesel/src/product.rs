//! Stored products and their variants.
//!
//! A sync batch is written in a number of statements that does not depend on its size: the
//! products and SKU owners it refers to are loaded with `IN (...)` queries, new products and new
//! variants are inserted with one multi-row `INSERT` per table, and renamed products are updated
//! with one `UPDATE ... SET name = CASE id WHEN .. THEN .. END WHERE id IN (...)`. Lists longer
//! than [`CHUNK`] are split, so no statement exceeds the bind-parameter limits of the backends.

use roastery_domain::event::{Change, Resource, Subject};
use roastery_ports::repo::EventRepo as _;
use std::collections::HashMap;

use diesel::dsl::case_when;
use diesel::prelude::*;
use diesel::sql_types::{Text, Timestamp};
use roastery_domain::decimal;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::product::{PackageSize, Product, Sku, Variant};
use roastery_ports::lock::ForUpdate;
use roastery_ports::repo::*;

use uuid::Uuid;

use crate::connection::AnyConnection;
use crate::error::{OrStoreError, corrupt};
use crate::row::uuid;
use crate::store::DieselTx;
use crate::time::{from_db, to_db};

pub(crate) type Db = <AnyConnection as diesel::Connection>::Backend;

/// Most rows (or keys) per statement: far below the bind-parameter limits of both backends.
pub(crate) const CHUNK: usize = 500;

use crate::schema::*;

#[derive(Queryable, Insertable)]
#[diesel(table_name = products)]
// None is NULL, not DEFAULT: that lets SQLite insert a whole batch in one statement.
#[diesel(treat_none_as_default_value = false)]
struct ProductRow {
    id: String,
    external_id: String,
    name: String,
    created_at: chrono::NaiveDateTime,
    updated_at: chrono::NaiveDateTime,
}

#[derive(Queryable, Insertable)]
#[diesel(table_name = product_variants)]
// None is NULL, not DEFAULT: that lets SQLite insert a whole batch in one statement.
#[diesel(treat_none_as_default_value = false)]
struct VariantRow {
    sku: String,
    product_id: String,
    position: i32,
    package_size_ug: i64,
}

fn variant_row(product: &Product, position: usize, v: &Variant) -> StoreResult<VariantRow> {
    Ok(VariantRow {
        sku: v.sku.to_string(),
        product_id: product.id.to_string(),
        position: i32::try_from(position).map_err(|e| corrupt("variant", e))?,
        package_size_ug: decimal::to_micros(v.package_size.grams())
            .ok_or_else(|| corrupt("variant", "package size out of range"))?,
    })
}

fn variant_from_row(row: VariantRow) -> StoreResult<Variant> {
    Ok(Variant {
        sku: Sku::parse(&row.sku).map_err(|e| corrupt("variant", e))?,
        package_size: PackageSize::from_grams(decimal::from_micros(row.package_size_ug))
            .map_err(|e| corrupt("variant", e))?,
    })
}

impl DieselTx {
    /// The stored product of this id, with its variants.
    pub(crate) fn product_of_id(&mut self, id: Uuid) -> StoreResult<Option<Product>> {
        let rows: Vec<ProductRow> = products::table
            .filter(products::id.eq(id.to_string()))
            .load(self.conn()?)
            .store()?;
        Ok(self.with_variants(rows)?.pop())
    }

    /// Products of these rows with their variants, in the order of the rows.
    fn with_variants(&mut self, rows: Vec<ProductRow>) -> StoreResult<Vec<Product>> {
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let mut variants: HashMap<String, Vec<Variant>> = HashMap::new();
        for chunk in ids.chunks(CHUNK) {
            let found: Vec<VariantRow> = product_variants::table
                .filter(product_variants::product_id.eq_any(chunk))
                .order((product_variants::product_id, product_variants::position))
                .load(self.conn()?)
                .store()?;
            for row in found {
                let product_id = row.product_id.clone();
                variants
                    .entry(product_id)
                    .or_default()
                    .push(variant_from_row(row)?);
            }
        }
        rows.into_iter()
            .map(|row| {
                Ok(Product {
                    id: uuid("product", &row.id)?,
                    variants: variants.remove(&row.id).unwrap_or_default(),
                    external_id: row.external_id,
                    name: row.name,
                    created_at: from_db(row.created_at),
                    updated_at: from_db(row.updated_at),
                })
            })
            .collect()
    }

    fn insert_variants(&mut self, rows: &[VariantRow]) -> StoreResult<()> {
        for chunk in rows.chunks(CHUNK) {
            on_backend!(self.conn()?, |c| diesel::insert_into(
                product_variants::table
            )
            .values(chunk)
            .execute(c))
            .store()?;
        }
        Ok(())
    }
}

impl ProductRepo for DieselTx {
    fn products_for_update(
        &mut self,
        external_ids: &[String],
    ) -> StoreResult<Vec<ForUpdate<Product>>> {
        roastery_ports::locked::products_for_update(self, external_ids)
    }

    fn products_by_external_ids(&mut self, external_ids: &[String]) -> StoreResult<Vec<Product>> {
        let mut rows = Vec::new();
        for chunk in external_ids.chunks(CHUNK) {
            rows.extend(
                products::table
                    .filter(products::external_id.eq_any(chunk))
                    .load::<ProductRow>(self.conn()?)
                    .store()?,
            );
        }
        self.with_variants(rows)
    }

    fn sku_owners(&mut self, skus: &[Sku]) -> StoreResult<Vec<(Sku, String)>> {
        let skus: Vec<&str> = skus.iter().map(Sku::as_str).collect();
        let mut owners = Vec::new();
        for chunk in skus.chunks(CHUNK) {
            let found: Vec<(String, String)> = product_variants::table
                .inner_join(products::table)
                .filter(product_variants::sku.eq_any(chunk))
                .select((product_variants::sku, products::external_id))
                .load(self.conn()?)
                .store()?;
            for (sku, owner) in found {
                owners.push((Sku::parse(&sku).map_err(|e| corrupt("variant", e))?, owner));
            }
        }
        Ok(owners)
    }

    fn insert_products(&mut self, products: &[Product]) -> StoreResult<()> {
        for p in products {
            self.record_change(Subject::new(Resource::Product, p.id), Change::Created);
        }
        let rows: Vec<ProductRow> = products
            .iter()
            .map(|p| ProductRow {
                id: p.id.to_string(),
                external_id: p.external_id.clone(),
                name: p.name.clone(),
                created_at: to_db(p.created_at),
                updated_at: to_db(p.updated_at),
            })
            .collect();
        for chunk in rows.chunks(CHUNK) {
            on_backend!(self.conn()?, |c| diesel::insert_into(products::table)
                .values(chunk)
                .execute(c))
            .store()
            .map_err(crate::error::concurrent_insert)?;
        }
        let variants = products
            .iter()
            .flat_map(|p| p.variants.iter().enumerate().map(move |(i, v)| (p, i, v)))
            .map(|(p, i, v)| variant_row(p, i, v))
            .collect::<StoreResult<Vec<_>>>()?;
        self.insert_variants(&variants)
    }

    fn update_products(&mut self, updates: &[ProductUpdate]) -> StoreResult<()> {
        for u in updates {
            self.record_change(
                Subject::new(Resource::Product, u.product.id),
                Change::Updated,
            );
        }
        for chunk in updates.chunks(CHUNK) {
            let ids: Vec<String> = chunk.iter().map(|u| u.product.id.to_string()).collect();
            let mut name: Box<dyn BoxableExpression<products::table, Db, SqlType = Text>> =
                Box::new(products::name);
            let mut updated_at: Box<
                dyn BoxableExpression<products::table, Db, SqlType = Timestamp>,
            > = Box::new(products::updated_at);
            for u in chunk {
                let id = u.product.id.to_string();
                name = Box::new(
                    case_when(
                        products::id.eq(id.clone()),
                        u.product.name.clone().into_sql::<Text>(),
                    )
                    .otherwise(name),
                );
                updated_at = Box::new(
                    case_when(
                        products::id.eq(id),
                        to_db(u.product.updated_at).into_sql::<Timestamp>(),
                    )
                    .otherwise(updated_at),
                );
            }
            diesel::update(products::table.filter(products::id.eq_any(ids)))
                .set((products::name.eq(name), products::updated_at.eq(updated_at)))
                .execute(self.conn()?)
                .store()?;
        }
        let variants = updates
            .iter()
            .flat_map(|u| {
                let first = u.product.variants.len() - u.added.len();
                u.added
                    .iter()
                    .enumerate()
                    .map(move |(i, v)| (&u.product, first + i, v))
            })
            .map(|(p, i, v)| variant_row(p, i, v))
            .collect::<StoreResult<Vec<_>>>()?;
        self.insert_variants(&variants)
    }

    fn list_products(&mut self, page: &PageRequest) -> StoreResult<Page<Product>> {
        let query = products::table.into_boxed();
        let rows: Vec<ProductRow> = newest_first!(query, page, products::created_at, products::id)
            .load(self.conn()?)
            .store()?;
        let items = self.with_variants(rows)?;
        Ok(Page::from_overfetch(items, page.limit, |p| {
            (p.created_at, p.id)
        }))
    }
}
