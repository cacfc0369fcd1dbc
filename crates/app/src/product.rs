//! mrp.product: syncing products and their variants from an external shop, and listing them.
//!
//! A sync is one transaction in the three steps of every write: the batch is parsed (400 for the
//! whole request), the stored products and SKU owners the batch refers to are loaded in one go,
//! the domain plans the whole batch, and either every item is written or none (422
//! `bulk_operation_failed`).

use std::collections::HashMap;

use roastery_domain::FieldPath;
use roastery_domain::bulk;
use roastery_domain::operation::Operation;
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::product::{PackageSize, Product, ProductInput, Sku, plan_products};

use crate::{Roastery, Store, upsert};
use roastery_ports::error::AppError;
use roastery_ports::repo::*;

/// One product of a `syncProducts` call, as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncProduct {
    pub external_id: String,
    pub name: String,
    pub variants: Vec<SyncVariant>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncVariant {
    pub sku: String,
    /// Parsed by the transport, like every enum name on the wire.
    pub package_size: PackageSize,
}

impl<S: Store> Roastery<S> {
    /// Upserts a batch of products by external id; returns them in request order. The three
    /// steps of every write: parse the batch (400 for the whole request), load the stored
    /// products and SKU owners it refers to, then let the domain plan it (422
    /// `bulk_operation_failed`, one detail per failing item).
    pub fn sync_products(&self, batch: Vec<SyncProduct>) -> Result<Vec<Product>, AppError> {
        // 1. Parse.
        let inputs = bulk::parse_batch(
            &FieldPath::ROOT,
            &batch,
            |p| &p.external_id,
            |at, p| {
                ProductInput::parse(
                    at,
                    &p.external_id,
                    &p.name,
                    p.variants.iter().map(|v| (v.sku.as_str(), v.package_size)),
                )
            },
        )?;
        let now = self.clock.now();
        let external_ids: Vec<String> = inputs.iter().map(|i| i.external_id().to_owned()).collect();
        let mut skus: Vec<Sku> = inputs
            .iter()
            .flat_map(|i| i.variants().iter().map(|v| v.sku.clone()))
            .collect();
        skus.sort();
        skus.dedup();
        self.write(Operation::SyncProducts, |tx| {
            // 2. Load.
            let stored =
                upsert::by_external_id(tx.products_for_update(&external_ids)?, |p| &p.external_id);
            let owners: HashMap<Sku, String> = tx.sku_owners(&skus)?.into_iter().collect();
            // 3. Decide.
            let planned = plan_products(
                &inputs,
                |ext| stored.get(ext).map(|p| &**p),
                |sku| owners.get(sku).cloned(),
                now,
                || self.ids.new_id(),
            )
            .map_err(AppError::bulk)?;
            let (created, updated) = upsert::writes(
                &planned,
                stored,
                |p| &p.external_id,
                |product, next| {
                    // The variants the update adds: those past the ones stored.
                    let added = next
                        .variants
                        .get(product.variants.len()..)
                        .unwrap_or_default()
                        .to_vec();
                    let product = upsert::put(product, next)?;
                    Ok(ProductUpdate { product, added })
                },
            )?;
            if !created.is_empty() {
                tx.insert_products(&created)?;
            }
            if !updated.is_empty() {
                tx.update_products(&updated)?;
            }
            Ok(planned.into_iter().map(|p| p.record).collect())
        })
    }

    pub fn list_products(
        &self,
        page: PageRequest,
    ) -> Result<Page<crate::plan::ProductView>, AppError> {
        page.keyset()?;
        self.store.read_replica(|tx| {
            let page = tx.list_products(&page)?;
            Ok(Page {
                items: crate::plan::product_views(tx, page.items)?,
                next: page.next,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::memory_roastery;
    use chrono::TimeDelta;
    use roastery_domain::Violation;
    use roastery_domain::bulk::BatchShapeError;
    use roastery_domain::page::Limit;
    use roastery_domain::product::{PackageSize, ProductError};
    use roastery_domain::text::TextError;

    fn product(ext: &str, name: &str, variants: &[(&str, &str)]) -> SyncProduct {
        SyncProduct {
            external_id: ext.into(),
            name: name.into(),
            variants: variants
                .iter()
                .map(|(sku, size)| SyncVariant {
                    sku: (*sku).into(),
                    package_size: PackageSize::parse(size).unwrap(),
                })
                .collect(),
        }
    }

    fn all(app: &Roastery<roastery_ports::testing::InMemoryStore>) -> Vec<Product> {
        app.list_products(PageRequest {
            limit: Limit::parse(Some(100)).unwrap(),
            after: None,
        })
        .unwrap()
        .items
        .into_iter()
        .map(|v| v.product)
        .collect()
    }

    fn skus(p: &Product) -> Vec<(String, String)> {
        p.variants
            .iter()
            .map(|v| (v.sku.to_string(), v.package_size.to_string()))
            .collect()
    }

    #[test]
    fn sync_creates_then_adds_variants_and_renames_keeping_ids() {
        let (app, clock) = memory_roastery();
        let first = app
            .sync_products(vec![
                product("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]),
                product("p-2", "Huila", &[]),
            ])
            .unwrap();
        assert_eq!(first[0].external_id, "p-1");
        assert_eq!(first[1].external_id, "p-2");
        clock.advance(TimeDelta::seconds(1));
        let second = app
            .sync_products(vec![product(
                "p-1",
                "Guji Natural",
                &[("GUJI-1000", "PACKAGE1000G")],
            )])
            .unwrap();
        assert_eq!(second[0].id, first[0].id);
        let stored = all(&app);
        let p1 = stored.iter().find(|p| p.external_id == "p-1").unwrap();
        assert_eq!(p1.name, "Guji Natural");
        assert_eq!(
            skus(p1),
            vec![
                ("GUJI-250".into(), "PACKAGE250G".into()),
                ("GUJI-1000".into(), "PACKAGE1000G".into())
            ]
        );
    }

    #[test]
    fn repeating_a_sync_changes_nothing() {
        let (app, clock) = memory_roastery();
        let batch = vec![product("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")])];
        app.sync_products(batch.clone()).unwrap();
        let before = all(&app);
        clock.advance(TimeDelta::seconds(5));
        let again = app.sync_products(batch).unwrap();
        assert_eq!(again, before);
        assert_eq!(all(&app), before);
    }

    #[test]
    fn a_batch_with_a_bad_item_stores_nothing_and_names_every_failure() {
        let (app, _) = memory_roastery();
        app.sync_products(vec![
            product("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]),
            product("p-2", "Huila", &[("HUILA-250", "PACKAGE250G")]),
        ])
        .unwrap();
        let before = all(&app);
        let err = app
            .sync_products(vec![
                product("p-3", "New", &[("NEW-250", "PACKAGE250G")]),
                product("p-1", "Guji", &[("GUJI-250", "PACKAGE500G")]),
                product("p-4", "Thief", &[("HUILA-250", "PACKAGE250G")]),
                product("p-2", "Huila renamed", &[]),
            ])
            .unwrap_err();
        let AppError::Bulk(items) = err else {
            panic!("expected a bulk failure, got {err:?}")
        };
        let summary: Vec<_> = items
            .iter()
            .map(|i| (i.index, i.rejection.rule::<ProductError>().cloned()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    1,
                    Some(ProductError::VariantChanged {
                        external_id: "p-1".into(),
                        sku: "GUJI-250".into(),
                        stored: PackageSize::parse("PACKAGE250G").unwrap(),
                        given: PackageSize::parse("PACKAGE500G").unwrap(),
                    })
                ),
                (
                    2,
                    Some(ProductError::SkuOwnedByOther {
                        external_id: "p-4".into(),
                        sku: "HUILA-250".into(),
                        owner: "p-2".into(),
                    })
                ),
            ]
        );
        assert_eq!(all(&app), before);
    }

    #[test]
    fn shape_errors_and_sizes_refuse_the_whole_request() {
        let (app, _) = memory_roastery();
        let blank_sku = app
            .sync_products(vec![
                product("p-1", "Guji", &[]),
                product(
                    "p-2",
                    "Huila",
                    &[("H", "PACKAGE250G"), (" ", "PACKAGE250G")],
                ),
            ])
            .unwrap_err();
        assert_eq!(
            blank_sku.rule(),
            Some(&BatchShapeError::Item(bulk::ItemFailure {
                index: 1,
                at: FieldPath::from("[1]"),
                external_id: "p-2".into(),
                error: ProductError::Text(TextError::Empty {
                    field: FieldPath::from("[1].variants[1].sku")
                })
            }))
        );
        assert_eq!(blank_sku.violation(), Some(Violation::InvalidParameter));
        let too_many: Vec<_> = (0..51)
            .map(|i| product(&format!("p-{i}"), "P", &[]))
            .collect();
        assert_eq!(
            app.sync_products(too_many).unwrap_err().violation(),
            Some(Violation::InvalidParameter)
        );
        assert_eq!(
            app.sync_products(vec![]).unwrap_err().violation(),
            Some(Violation::InvalidParameter)
        );
        let fifty: Vec<_> = (0..50)
            .map(|i| product(&format!("p-{i}"), "P", &[]))
            .collect();
        assert_eq!(app.sync_products(fifty).unwrap().len(), 50);
    }

    #[test]
    fn products_list_newest_first() {
        let (app, clock) = memory_roastery();
        for i in 0..3 {
            app.sync_products(vec![product(&format!("p-{i}"), "P", &[])])
                .unwrap();
            clock.advance(TimeDelta::seconds(1));
        }
        let ext: Vec<_> = all(&app).into_iter().map(|p| p.external_id).collect();
        assert_eq!(ext, ["p-2", "p-1", "p-0"]);
    }
}
