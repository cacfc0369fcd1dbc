//! In-memory products.

use crate::repo::EventRepo as _;
use roastery_domain::event::{Change, Resource, Subject};
use roastery_domain::page::{Page, PageRequest};
use roastery_domain::product::{Product, Sku};

use super::store::{MemTx, page_newest_first};
use crate::lock::ForUpdate;
use crate::repo::*;

impl ProductRepo for MemTx {
    fn products_for_update(
        &mut self,
        external_ids: &[String],
    ) -> StoreResult<Vec<ForUpdate<Product>>> {
        crate::locked::products_for_update(self, external_ids)
    }

    fn products_by_external_ids(&mut self, external_ids: &[String]) -> StoreResult<Vec<Product>> {
        Ok(self
            .data
            .product
            .products
            .iter()
            .filter(|p| external_ids.contains(&p.external_id))
            .cloned()
            .collect())
    }

    fn sku_owners(&mut self, skus: &[Sku]) -> StoreResult<Vec<(Sku, String)>> {
        Ok(self
            .data
            .product
            .products
            .iter()
            .flat_map(|p| {
                p.variants
                    .iter()
                    .filter(|v| skus.contains(&v.sku))
                    .map(|v| (v.sku.clone(), p.external_id.clone()))
            })
            .collect())
    }

    fn insert_products(&mut self, products: &[Product]) -> StoreResult<()> {
        for p in products {
            self.record_change(Subject::new(Resource::Product, p.id), Change::Created);
        }
        let mut stored: Vec<&Product> = self.data.product.products.iter().collect();
        for p in products {
            // Like the database's unique keys: a product key taken after the unit of work found
            // it free is a concurrent sync (run again); a SKU of another product is refused.
            if (stored.iter()).any(|s| s.id == p.id || s.external_id == p.external_id) {
                return Err(crate::StoreError::Contention);
            }
            let owned = |s: &&Product| {
                (s.variants.iter()).any(|v| p.variants.iter().any(|w| w.sku == v.sku))
            };
            if stored.iter().any(owned) {
                return Err(crate::StoreError::Duplicate(format!(
                    "product {}",
                    p.external_id
                )));
            }
            stored.push(p);
        }
        self.data.product.products.extend_from_slice(products);
        Ok(())
    }

    fn update_products(&mut self, updates: &[ProductUpdate]) -> StoreResult<()> {
        for u in updates {
            self.record_change(
                Subject::new(Resource::Product, u.product.id),
                Change::Updated,
            );
        }
        for update in updates {
            if let Some(stored) = self
                .data
                .product
                .products
                .iter_mut()
                .find(|p| p.id == update.product.id)
            {
                stored.name.clone_from(&update.product.name);
                stored.updated_at = update.product.updated_at;
                stored.variants.extend(update.added.iter().cloned());
            }
        }
        Ok(())
    }

    fn list_products(&mut self, page: &PageRequest) -> StoreResult<Page<Product>> {
        page_newest_first(
            self.data.product.products.iter().cloned(),
            |p| (p.created_at, p.id),
            page,
        )
    }
}
