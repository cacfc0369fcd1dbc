//! mrp.product and mrp.order.

use actix_web::HttpResponse;
use roastery_app::order::{
    ListOrders, SetOrder, SetOrderItem, SetOrderStatus, ShipAllocation, ShipOrder,
};
use roastery_app::plan::{ProductView, SetRecipe};
use roastery_app::product::{SyncProduct, SyncVariant};
use roastery_domain::order::{CustomerType, Order, OrderStatus};
use roastery_domain::planning::RecipeComponent;
use roastery_domain::product::PackageSize;
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    Amount, DateRange, Instant, NoFilter, ReadRequest, WeightDto, WriteRequest, required, rule,
};

// --- Products --------------------------------------------------------------------------------

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductData {
    #[schema(value_type = String, required = true)]
    pub external_id: Option<String>,
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    /// Optional: a product may have no variants yet.
    pub variants: Option<Vec<VariantData>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantData {
    #[schema(value_type = String, required = true)]
    pub sku: Option<String>,
    #[schema(value_type = CoffeeOptionsData, required = true)]
    pub coffee_options: Option<CoffeeOptionsData>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoffeeOptionsData {
    #[schema(value_type = String, required = true)]
    pub package_size: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductDto {
    pub id: Uuid,
    pub external_id: String,
    pub name: String,
    pub variants: Vec<VariantDto>,
    /// The profiles every variant is roasted from (api-decisions §15); null until set.
    #[schema(required = true)]
    pub recipe: Option<RecipeDto>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RecipeDto {
    pub components: Vec<RecipeComponentDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecipeComponentDto {
    pub profile_id: Uuid,
    pub percentage: Amount,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantDto {
    pub sku: String,
    pub coffee_options: CoffeeOptionsDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoffeeOptionsDto {
    pub package_size: String,
}

impl From<ProductView> for ProductDto {
    fn from(v: ProductView) -> Self {
        let p = v.product;
        Self {
            recipe: v.recipe.map(|r| RecipeDto {
                components: r
                    .components
                    .into_iter()
                    .map(|c| RecipeComponentDto {
                        profile_id: c.profile_id,
                        percentage: Amount(c.percentage),
                    })
                    .collect(),
            }),
            id: p.id,
            external_id: p.external_id,
            name: p.name,
            variants: p
                .variants
                .into_iter()
                .map(|v| VariantDto {
                    sku: v.sku.to_string(),
                    coffee_options: CoffeeOptionsDto {
                        package_size: v.package_size.to_string(),
                    },
                })
                .collect(),
        }
    }
}

/// `{"id", "externalId"}` of a synced record.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncedDto {
    pub id: Uuid,
    pub external_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncedProductsResult {
    pub synced_products: Vec<SyncedDto>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProductsResult {
    pub products: Vec<ProductDto>,
}

/// One product of the batch: every field's presence, then the package sizes' form (parsed here,
/// like every enum name); the domain's batch parse checks the rest.
fn sync_product(index: usize, p: ProductData) -> Result<SyncProduct, ApiError> {
    let at = |field: &str| format!("data[{index}].{field}");
    let variants = p
        .variants
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let options = required(
                v.coffee_options,
                &at(&format!("variants[{i}].coffeeOptions")),
            )?;
            let sku = required(v.sku, &at(&format!("variants[{i}].sku")))?;
            let package_size = required(
                options.package_size,
                &at(&format!("variants[{i}].coffeeOptions.packageSize")),
            )?;
            Ok((sku, package_size))
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    let external_id = required(p.external_id, &at("externalId"))?;
    let name = required(p.name, &at("name"))?;
    let variants = variants
        .into_iter()
        .enumerate()
        .map(|(i, (sku, package_size))| {
            let field = at(&format!("variants[{i}].coffeeOptions.packageSize"));
            Ok(SyncVariant {
                sku,
                package_size: PackageSize::parse(&package_size).map_err(|e| rule(&field, e))?,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(SyncProduct {
        external_id,
        name,
        variants,
    })
}

pub(super) async fn sync_products<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<Vec<ProductData>>>(body)?.data()?;
    let batch = data
        .into_iter()
        .enumerate()
        .map(|(i, p)| sync_product(i, p))
        .collect::<Result<Vec<_>, _>>()?;
    let synced = ctx.run(move |app| app.sync_products(batch)).await?;
    ctx.ok(SyncedProductsResult {
        synced_products: synced
            .into_iter()
            .map(|p| SyncedDto {
                id: p.id,
                external_id: p.external_id,
            })
            .collect(),
    })
}

pub(super) async fn list_products<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (_, pagination) = decode::<ReadRequest<NoFilter>>(body)?.into_parts();
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.list_products(page)).await?;
    ctx.page(
        ProductsResult {
            products: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetRecipeData {
    #[schema(value_type = Uuid, required = true)]
    pub product_id: Option<Uuid>,
    /// 1–10 distinct profiles whose percentages sum to 100; `[]` removes the recipe.
    #[schema(value_type = Vec<RecipeComponentData>, required = true)]
    pub components: Option<Vec<RecipeComponentData>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecipeComponentData {
    #[schema(value_type = Uuid, required = true)]
    pub profile_id: Option<Uuid>,
    /// Above zero, up to 2 decimals.
    #[schema(value_type = Amount, required = true)]
    pub percentage: Option<Amount>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProductResult {
    pub product: ProductDto,
}

pub(super) async fn set_recipe<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<SetRecipeData>>(body)?.data()?;
    let product_id = required(data.product_id, "data.productId")?;
    let components = required(data.components, "data.components")?
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            Ok(RecipeComponent {
                profile_id: required(c.profile_id, &format!("data.components[{i}].profileId"))?,
                percentage: required(c.percentage, &format!("data.components[{i}].percentage"))?.0,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    let cmd = SetRecipe {
        product_id,
        components,
    };
    let view = ctx.run(move |app| app.set_recipe(cmd)).await?;
    ctx.ok(ProductResult {
        product: view.into(),
    })
}

// --- Orders ----------------------------------------------------------------------------------

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderData {
    #[schema(value_type = String, required = true)]
    pub external_id: Option<String>,
    #[schema(value_type = Instant, required = true)]
    pub order_date: Option<Instant>,
    pub customer: Option<String>,
    /// `RETAIL` or `WHOLESALE`.
    pub customer_type: Option<String>,
    #[schema(value_type = Vec<OrderItemData>, required = true)]
    pub order_items: Option<Vec<OrderItemData>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderItemData {
    #[schema(value_type = String, required = true)]
    pub sku: Option<String>,
    /// int32; must be above zero.
    #[schema(value_type = i32, required = true)]
    pub quantity: Option<i32>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderDto {
    pub id: Uuid,
    pub external_id: String,
    pub order_date: Instant,
    #[schema(required = true)]
    pub customer: Option<String>,
    #[schema(required = true)]
    pub customer_type: Option<String>,
    pub status: String,
    pub order_items: Vec<OrderItemDto>,
    /// Null until shipped.
    #[schema(required = true)]
    pub shipped_date: Option<Instant>,
    /// Empty until shipped.
    pub shipments: Vec<ShipmentDto>,
}

/// Packages of one SKU shipped from one lot; `weight` is what left the lot, in its unit.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShipmentDto {
    pub sku: String,
    pub lot: ShippedLotDto,
    pub quantity: i32,
    pub weight: WeightDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShippedLotDto {
    pub id: Uuid,
    /// `INVENTORY_GREEN`, `INVENTORY_ROAST` or `INVENTORY_BLEND`.
    #[serde(rename = "type")]
    pub lot_type: &'static str,
    pub lot_number: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderItemDto {
    pub sku: String,
    pub quantity: i32,
}

impl From<Order> for OrderDto {
    fn from(o: Order) -> Self {
        Self {
            id: o.id,
            external_id: o.external_id,
            order_date: o.order_date.into(),
            customer: o.customer,
            customer_type: o.customer_type.map(|t| t.as_str().to_owned()),
            status: o.status.as_str().to_owned(),
            order_items: o
                .items
                .into_iter()
                .map(|i| OrderItemDto {
                    sku: i.sku.to_string(),
                    quantity: i.quantity,
                })
                .collect(),
            shipped_date: o.shipped_date.map(Into::into),
            shipments: o
                .shipments
                .into_iter()
                .map(|s| ShipmentDto {
                    sku: s.sku.to_string(),
                    lot: ShippedLotDto {
                        id: s.lot.id,
                        lot_type: s.lot.kind.reference_type(),
                        lot_number: roastery_domain::stock::number(
                            s.lot.kind.prefix(),
                            s.lot_number,
                        ),
                    },
                    quantity: s.quantity,
                    weight: s.weight.into(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncedOrdersResult {
    pub synced_orders: Vec<SyncedDto>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrdersResult {
    pub orders: Vec<OrderDto>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderResult {
    pub order: OrderDto,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListOrdersFilter {
    pub order_date: Option<DateRange>,
    pub status: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetOrderStatusData {
    #[schema(value_type = Uuid, required = true)]
    pub order_id: Option<Uuid>,
    #[schema(value_type = String, required = true)]
    pub status: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShipOrderData {
    #[schema(value_type = Uuid, required = true)]
    pub order_id: Option<Uuid>,
    #[schema(value_type = Instant, required = true)]
    pub shipped_date: Option<Instant>,
    #[schema(value_type = Vec<AllocationData>, required = true)]
    pub allocations: Option<Vec<AllocationData>>,
}

/// `quantity` packages of `sku` taken from the green, roasted or blended lot `lotId`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllocationData {
    #[schema(value_type = String, required = true)]
    pub sku: Option<String>,
    #[schema(value_type = Uuid, required = true)]
    pub lot_id: Option<Uuid>,
    /// int32; must be above zero.
    #[schema(value_type = i32, required = true)]
    pub quantity: Option<i32>,
}

pub(super) async fn ship_order<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<ShipOrderData>>(body)?.data()?;
    let order_id = required(data.order_id, "data.orderId")?;
    let shipped_date = required(data.shipped_date, "data.shippedDate")?.0;
    let allocations = required(data.allocations, "data.allocations")?
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            let at = |field: &str| format!("data.allocations[{i}].{field}");
            Ok(ShipAllocation {
                sku: required(a.sku, &at("sku"))?,
                lot_id: required(a.lot_id, &at("lotId"))?,
                quantity: required(a.quantity, &at("quantity"))?,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    let cmd = ShipOrder {
        order_id,
        shipped_date,
        allocations,
    };
    let order = ctx.run(move |app| app.ship_order(cmd)).await?;
    ctx.ok(OrderResult {
        order: order.into(),
    })
}

/// One order of the batch: every field's presence, then the customer type's form (parsed here,
/// like every enum name); the domain's batch parse checks the rest.
fn set_order(index: usize, o: OrderData) -> Result<SetOrder, ApiError> {
    let at = |field: &str| format!("data[{index}].{field}");
    let items = required(o.order_items, &at("orderItems"))?
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            Ok(SetOrderItem {
                sku: required(item.sku, &at(&format!("orderItems[{i}].sku")))?,
                quantity: required(item.quantity, &at(&format!("orderItems[{i}].quantity")))?,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    let external_id = required(o.external_id, &at("externalId"))?;
    let order_date = required(o.order_date, &at("orderDate"))?.0;
    let customer_type = o
        .customer_type
        .map(|t| CustomerType::parse(&t).map_err(|e| rule(&at("customerType"), e)))
        .transpose()?;
    Ok(SetOrder {
        external_id,
        order_date,
        customer: o.customer,
        customer_type,
        items,
    })
}

pub(super) async fn set_orders<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<Vec<OrderData>>>(body)?.data()?;
    let batch = data
        .into_iter()
        .enumerate()
        .map(|(i, o)| set_order(i, o))
        .collect::<Result<Vec<_>, _>>()?;
    let synced = ctx.run(move |app| app.set_orders(batch)).await?;
    ctx.ok(SyncedOrdersResult {
        synced_orders: synced
            .into_iter()
            .map(|o| SyncedDto {
                id: o.id,
                external_id: o.external_id,
            })
            .collect(),
    })
}

pub(super) async fn list_orders<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListOrdersFilter>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let range = filter.order_date.unwrap_or_default();
    let cmd = ListOrders {
        order_date_from: range.from.map(|i| i.0),
        order_date_to: range.to.map(|i| i.0),
        status: filter
            .status
            .map(|s| OrderStatus::parse(&s).map_err(|e| rule("params.filter.status", e)))
            .transpose()?,
    };
    let page = ctx.page_request(&pagination)?;
    let page = ctx.run(move |app| app.list_orders(cmd, page)).await?;
    ctx.page(
        OrdersResult {
            orders: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}

pub(super) async fn set_order_status<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<SetOrderStatusData>>(body)?.data()?;
    let cmd = SetOrderStatus {
        order_id: required(data.order_id, "data.orderId")?,
        status: OrderStatus::parse(&required(data.status, "data.status")?)
            .map_err(|e| rule("data.status", e))?,
    };
    let order = ctx.run(move |app| app.set_order_status(cmd)).await?;
    ctx.ok(OrderResult {
        order: order.into(),
    })
}

#[cfg(test)]
mod handler_tests {
    use roastery_app::product::{SyncProduct, SyncVariant};
    use roastery_domain::product::PackageSize;
    use serde_json::json;

    use super::*;
    use crate::call::testing::{answer, call};
    use crate::ops::Operation;

    fn body(value: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    /// Each order's fields reach the use case under their wire names, and the answer maps each
    /// synced order to its `id` and `externalId`.
    #[actix_web::test]
    async fn set_orders_maps_the_wire_fields_and_answers_each_order() {
        let (ctx, app) = call(Operation::SetOrders);
        app.sync_products(vec![SyncProduct {
            external_id: "P-1".into(),
            name: "House blend".into(),
            variants: vec![SyncVariant {
                sku: "HB-250".into(),
                package_size: PackageSize::parse("PACKAGE250G").unwrap(),
            }],
        }])
        .unwrap();
        let request = json!({"data": [{
            "externalId": "ORD-1",
            "orderDate": "2026-11-20T10:00:00Z",
            "customer": "Café Nord",
            "customerType": "WHOLESALE",
            "orderItems": [{"sku": "HB-250", "quantity": 3}]
        }]});
        let (status, answered) = answer(set_orders(ctx, &body(request)).await).await;
        assert_eq!(status, 200, "{answered}");
        let synced = &answered["result"]["syncedOrders"];
        assert_eq!(synced[0]["externalId"], "ORD-1", "{answered}");
        let id: uuid::Uuid = serde_json::from_value(synced[0]["id"].clone()).unwrap();
        let stored = app
            .store()
            .read(|tx| Ok(roastery_ports::repo::OrderRepo::order(tx, id)?))
            .unwrap()
            .expect("stored");
        assert_eq!(stored.customer.as_deref(), Some("Café Nord"));
        assert_eq!(stored.customer_type, Some(CustomerType::Wholesale));
        assert_eq!(stored.items[0].sku.as_str(), "HB-250");
        assert_eq!(stored.items[0].quantity, 3);
    }

    /// A required field left out is named by its path in the request, and nothing is stored.
    #[actix_web::test]
    async fn set_orders_names_the_missing_field_by_its_path() {
        for (order, path) in [
            (
                json!({"orderDate": "2026-11-20T10:00:00Z", "orderItems": []}),
                "data[0].externalId",
            ),
            (
                json!({"externalId": "ORD-1", "orderItems": []}),
                "data[0].orderDate",
            ),
            (
                json!({"externalId": "ORD-1", "orderDate": "2026-11-20T10:00:00Z"}),
                "data[0].orderItems",
            ),
            (
                json!({"externalId": "ORD-1", "orderDate": "2026-11-20T10:00:00Z",
                       "orderItems": [{"quantity": 1}]}),
                "data[0].orderItems[0].sku",
            ),
        ] {
            let (ctx, app) = call(Operation::SetOrders);
            let (status, answered) =
                answer(set_orders(ctx, &body(json!({"data": [order]}))).await).await;
            assert_eq!(status, 400, "{answered}");
            assert_eq!(answered["error"]["code"], "missing_parameter", "{answered}");
            let message = answered["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(path), "{path}: {answered}");
            let none = app
                .store()
                .read(|tx| {
                    Ok(roastery_ports::repo::OrderRepo::orders_by_external_ids(
                        tx,
                        &["ORD-1".into()],
                    )?)
                })
                .unwrap();
            assert!(none.is_empty(), "{none:?}");
        }
    }

    /// An enum name on the wire is parsed by the handler and refused under its path.
    #[actix_web::test]
    async fn set_orders_refuses_an_unknown_customer_type_under_its_path() {
        let (ctx, _) = call(Operation::SetOrders);
        let request = json!({"data": [{
            "externalId": "ORD-1", "orderDate": "2026-11-20T10:00:00Z",
            "customerType": "FRIENDS", "orderItems": [{"sku": "HB-250", "quantity": 1}]
        }]});
        let (status, answered) = answer(set_orders(ctx, &body(request)).await).await;
        assert_eq!(status, 400, "{answered}");
        assert_eq!(answered["error"]["code"], "invalid_parameter", "{answered}");
        assert!(
            answered["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("data[0].customerType")
        );
    }
}
