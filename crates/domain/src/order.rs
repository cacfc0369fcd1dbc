//! Sales orders, created and updated by `mrp.order.setOrders` and moved along their status machine
//! by the fulfilment process.
//!
//! An order is upserted by `externalId`: a new one is created `OPEN`; an existing one is updated
//! only while `OPEN`, and its order date never changes. Every order has at least one item, every
//! quantity is above zero and every SKU must exist (the store says which exist). Status moves
//! `OPEN` → `IN_PROGRESS` → `COMPLETED`, and `OPEN` or `IN_PROGRESS` → `CANCELLED`; nothing else,
//! not even to the same status.
//!
//! Decisions the contract leaves open:
//! - Empty `orderItems` and a quantity ≤ 0 are business rules of the item (422 `invalid_request`),
//!   not shape errors, as the contract fixes for this call.
//! - The same `externalId` twice in one batch: the repeats fail with `resource_conflict`, pointing
//!   at the first ([`OrderError::DuplicateExternalId`]).
//! - Per item, the first rule broken is reported, in the contract's precedence: unknown SKUs, then
//!   state and item rules, then conflicts.
//! - Order items keep the order and lines the client sent (a SKU may appear on two lines); an
//!   update with the same lines in another order counts as a change.
//!
//! This module must never look anything up itself: stored orders and known SKUs come from the
//! caller.

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::bulk::{self, Change, ItemFailure, Planned};
use crate::field::FieldPath;
use crate::product::{PackageSize, Sku};
use crate::stock::TypedLotRef;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};
use crate::weight::{Weight, WeightError, WeightUnit};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("customerType `{0}` is not one of RETAIL, WHOLESALE")]
    InvalidCustomerType(String),
    #[error("status `{0}` is not one of OPEN, IN_PROGRESS, COMPLETED, CANCELLED")]
    InvalidStatus(String),
    #[error("order {0} does not exist")]
    NotFound(Uuid),
    #[error("order `{external_id}` refers to unknown skus: {}", .skus.join(", "))]
    UnknownSkus {
        external_id: String,
        skus: Vec<String>,
    },
    #[error("order `{external_id}` is {status}; only OPEN orders can be updated")]
    NotOpen {
        external_id: String,
        status: OrderStatus,
    },
    #[error(
        "order `{external_id}` cannot move from {from} to {to}; allowed: OPEN → IN_PROGRESS → \
         COMPLETED, OPEN or IN_PROGRESS → CANCELLED"
    )]
    IllegalTransition {
        external_id: String,
        from: OrderStatus,
        to: OrderStatus,
    },
    #[error("order `{external_id}` must have at least one order item")]
    NoItems { external_id: String },
    #[error("order `{external_id}` orders {quantity} of sku `{sku}`; quantity must be above zero")]
    NonPositiveQuantity {
        external_id: String,
        sku: String,
        quantity: i32,
    },
    #[error(
        "order `{external_id}` appears more than once in this batch (first at item {first_index})"
    )]
    DuplicateExternalId {
        external_id: String,
        first_index: usize,
    },
    #[error("lot {0} does not exist (no green, roasted or blended lot has this id)")]
    LotNotFound(Uuid),
    #[error("order `{external_id}` is {status}; only OPEN or IN_PROGRESS orders can be shipped")]
    NotShippable {
        external_id: String,
        status: OrderStatus,
    },
    #[error("allocation {index} ships {quantity} of sku `{sku}`; quantity must be above zero")]
    NonPositiveAllocation {
        index: usize,
        sku: String,
        quantity: i32,
    },
    #[error("order `{external_id}` has no item of sku `{sku}` to allocate")]
    SkuNotOrdered { external_id: String, sku: String },
    #[error(
        "order `{external_id}` orders {ordered} of sku `{sku}`; the allocations ship {allocated}"
    )]
    AllocationMismatch {
        external_id: String,
        sku: String,
        ordered: i64,
        allocated: i64,
    },
    #[error("a shipment of {quantity} × {package_size} cannot be weighed: {error}")]
    ShipmentWeight {
        quantity: i32,
        package_size: PackageSize,
        error: WeightError,
    },
}

impl BrokenRule for OrderError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::InvalidCustomerType(_) | Self::InvalidStatus(_) => Violation::InvalidParameter,
            Self::NotFound(_) | Self::UnknownSkus { .. } | Self::LotNotFound(_) => {
                Violation::NotFound
            }
            Self::NotOpen { .. }
            | Self::IllegalTransition { .. }
            | Self::NoItems { .. }
            | Self::NonPositiveQuantity { .. } => Violation::BusinessRule,
            Self::DuplicateExternalId { .. } => Violation::Conflict,
            Self::NotShippable { .. }
            | Self::NonPositiveAllocation { .. }
            | Self::SkuNotOrdered { .. }
            | Self::AllocationMismatch { .. } => Violation::BusinessRule,
            Self::ShipmentWeight { error, .. } => error.violation(),
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        if let Self::Text(e) = self {
            e.rebase(base);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CustomerType {
    Retail,
    Wholesale,
}

impl CustomerType {
    pub fn parse(value: &str) -> Result<Self, OrderError> {
        match value {
            "RETAIL" => Ok(Self::Retail),
            "WHOLESALE" => Ok(Self::Wholesale),
            other => Err(OrderError::InvalidCustomerType(other.to_owned())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Retail => "RETAIL",
            Self::Wholesale => "WHOLESALE",
        }
    }
}

impl fmt::Display for CustomerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    Open,
    InProgress,
    Completed,
    Cancelled,
}

impl OrderStatus {
    pub const ALL: [Self; 4] = [
        Self::Open,
        Self::InProgress,
        Self::Completed,
        Self::Cancelled,
    ];

    pub fn parse(value: &str) -> Result<Self, OrderError> {
        match value {
            "OPEN" => Ok(Self::Open),
            "IN_PROGRESS" => Ok(Self::InProgress),
            "COMPLETED" => Ok(Self::Completed),
            "CANCELLED" => Ok(Self::Cancelled),
            other => Err(OrderError::InvalidStatus(other.to_owned())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "OPEN",
            Self::InProgress => "IN_PROGRESS",
            Self::Completed => "COMPLETED",
            Self::Cancelled => "CANCELLED",
        }
    }

    /// Whether the status machine allows moving from `self` to `next`.
    pub fn can_become(self, next: Self) -> bool {
        matches!(
            (self, next),
            (Self::Open, Self::InProgress)
                | (Self::InProgress, Self::Completed)
                | (Self::Open | Self::InProgress, Self::Cancelled)
        )
    }
}

impl fmt::Display for OrderStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of an order. The quantity is checked when the order is created or updated, because a
/// quantity ≤ 0 is a business rule of the item, not a shape error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderItem {
    pub sku: Sku,
    pub quantity: i32,
}

/// One order of a `setOrders` batch, checked for shape: what the client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderInput {
    external_id: String,
    order_date: DateTime<Utc>,
    customer: Option<String>,
    customer_type: Option<CustomerType>,
    items: Vec<OrderItem>,
}

impl OrderInput {
    /// Step one of `setOrders` for the order at `at` in the request (`[2]`: the batch's third item), from its wire
    /// fields (the customer type parsed by the transport, like every enum name): each item's
    /// SKU, then the texts ([`OrderInput::new`]); all 400, naming the field by its path. Empty
    /// items and quantities are judged later, per item.
    pub fn parse<'a>(
        at: &FieldPath,
        external_id: &str,
        order_date: DateTime<Utc>,
        customer: Option<&str>,
        customer_type: Option<CustomerType>,
        items: impl IntoIterator<Item = (&'a str, i32)>,
    ) -> Result<Self, OrderError> {
        let items = items
            .into_iter()
            .enumerate()
            .map(|(i, (sku, quantity))| {
                Ok(OrderItem {
                    sku: Sku::parse_at(at.clone().key("orderItems").index(i).key("sku"), sku)?,
                    quantity,
                })
            })
            .collect::<Result<Vec<_>, OrderError>>()?;
        Self::new(at, external_id, order_date, customer, customer_type, items)
    }

    /// Refuses blank or overlong text (400 `invalid_parameter`), naming it by its path under
    /// `at`. Empty items and quantities are judged later, per item.
    pub fn new(
        at: &FieldPath,
        external_id: &str,
        order_date: DateTime<Utc>,
        customer: Option<&str>,
        customer_type: Option<CustomerType>,
        items: Vec<OrderItem>,
    ) -> Result<Self, OrderError> {
        Ok(Self {
            external_id: text::required(
                at.clone().key("externalId"),
                external_id,
                text::EXTERNAL_ID_MAX,
            )?,
            order_date,
            customer: text::optional(at.clone().key("customer"), customer, text::NAME_MAX)?,
            customer_type,
            items,
        })
    }

    pub fn external_id(&self) -> &str {
        &self.external_id
    }

    pub fn order_date(&self) -> DateTime<Utc> {
        self.order_date
    }

    pub fn customer(&self) -> Option<&str> {
        self.customer.as_deref()
    }

    pub fn customer_type(&self) -> Option<CustomerType> {
        self.customer_type
    }

    pub fn items(&self) -> &[OrderItem] {
        &self.items
    }

    /// At least one item, every quantity above zero.
    fn check_items(&self) -> Result<(), OrderError> {
        if self.items.is_empty() {
            return Err(OrderError::NoItems {
                external_id: self.external_id.clone(),
            });
        }
        match self.items.iter().find(|item| item.quantity <= 0) {
            Some(item) => Err(OrderError::NonPositiveQuantity {
                external_id: self.external_id.clone(),
                sku: item.sku.to_string(),
                quantity: item.quantity,
            }),
            None => Ok(()),
        }
    }

    /// Checks every SKU of the order exists; names all unknown ones at once.
    pub fn check_skus(&self, sku_exists: impl Fn(&Sku) -> bool) -> Result<(), OrderError> {
        let mut unknown: Vec<String> = Vec::new();
        for item in &self.items {
            let sku = item.sku.as_str();
            if !sku_exists(&item.sku) && !unknown.iter().any(|u| u == sku) {
                unknown.push(sku.to_owned());
            }
        }
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(OrderError::UnknownSkus {
                external_id: self.external_id.clone(),
                skus: unknown,
            })
        }
    }
}

/// A sales order.
///
/// Fields are public so that the store can rebuild stored orders; changes go through
/// [`Order::update`] and [`Order::set_status`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: Uuid,
    pub external_id: String,
    pub order_date: DateTime<Utc>,
    pub customer: Option<String>,
    pub customer_type: Option<CustomerType>,
    pub status: OrderStatus,
    pub items: Vec<OrderItem>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When the order was shipped (null until then).
    pub shipped_date: Option<DateTime<Utc>>,
    /// What was shipped from which lot (empty until shipped).
    pub shipments: Vec<Shipment>,
}

/// What `shipOrder` asks: ship `quantity` packages of `sku` from `lot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub sku: Sku,
    pub lot: TypedLotRef,
    pub quantity: i32,
}

/// Packages of one SKU shipped from one lot, and the weight they took from it (in the lot's unit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shipment {
    pub sku: Sku,
    pub lot: TypedLotRef,
    /// Sequence number of the lot's number (`PR-n`).
    pub lot_number: i64,
    pub quantity: i32,
    pub weight: Weight,
}

/// The weight of `quantity` packages of `package_size`, in kilograms.
pub fn shipment_weight(package_size: PackageSize, quantity: i32) -> Result<Weight, OrderError> {
    // Below 10^9 grams times an i32 quantity: far inside a Decimal.
    let grams = package_size
        .grams()
        .saturating_mul(rust_decimal::Decimal::from(quantity));
    let kilograms = grams
        .checked_div(rust_decimal::Decimal::ONE_THOUSAND)
        .unwrap_or(rust_decimal::Decimal::MAX);
    Weight::new(kilograms, WeightUnit::Kg).map_err(|error| OrderError::ShipmentWeight {
        quantity,
        package_size,
        error,
    })
}

impl Order {
    /// A new `OPEN` order. SKU existence is checked by [`OrderInput::check_skus`].
    pub fn create(input: &OrderInput, id: Uuid, now: DateTime<Utc>) -> Result<Self, OrderError> {
        input.check_items()?;
        Ok(Self {
            id,
            external_id: input.external_id.clone(),
            order_date: input.order_date,
            customer: input.customer.clone(),
            customer_type: input.customer_type,
            status: OrderStatus::Open,
            items: input.items.clone(),
            created_at: now,
            updated_at: now,
            shipped_date: None,
            shipments: Vec::new(),
        })
    }

    /// Checks that `allocations` ship exactly the order's items: every quantity above zero, only
    /// ordered SKUs, and per SKU the quantities sum to what was ordered. Only `OPEN` or
    /// `IN_PROGRESS` orders ship.
    pub fn check_allocations(&self, allocations: &[Allocation]) -> Result<(), OrderError> {
        if !matches!(self.status, OrderStatus::Open | OrderStatus::InProgress) {
            return Err(OrderError::NotShippable {
                external_id: self.external_id.clone(),
                status: self.status,
            });
        }
        if let Some((index, a)) = allocations
            .iter()
            .enumerate()
            .find(|(_, a)| a.quantity <= 0)
        {
            return Err(OrderError::NonPositiveAllocation {
                index,
                sku: a.sku.to_string(),
                quantity: a.quantity,
            });
        }
        if let Some(a) = allocations
            .iter()
            .find(|a| !self.items.iter().any(|i| i.sku == a.sku))
        {
            return Err(OrderError::SkuNotOrdered {
                external_id: self.external_id.clone(),
                sku: a.sku.to_string(),
            });
        }
        let mut skus: Vec<&Sku> = self.items.iter().map(|i| &i.sku).collect();
        skus.dedup();
        for sku in skus {
            let ordered: i64 = self
                .items
                .iter()
                .filter(|i| &i.sku == sku)
                .map(|i| i64::from(i.quantity))
                .sum();
            let allocated: i64 = allocations
                .iter()
                .filter(|a| &a.sku == sku)
                .map(|a| i64::from(a.quantity))
                .sum();
            if ordered != allocated {
                return Err(OrderError::AllocationMismatch {
                    external_id: self.external_id.clone(),
                    sku: sku.to_string(),
                    ordered,
                    allocated,
                });
            }
        }
        Ok(())
    }

    /// Records the shipments and completes the order. Rules are checked by
    /// [`Order::check_allocations`] first.
    pub fn ship(
        &mut self,
        shipments: Vec<Shipment>,
        shipped_date: DateTime<Utc>,
        now: DateTime<Utc>,
    ) {
        self.status = OrderStatus::Completed;
        self.shipped_date = Some(shipped_date);
        self.shipments = shipments;
        self.updated_at = now;
    }

    /// Replaces customer, customer type and items with those of `input`; the order date is kept
    /// whatever `input` says. Only while `OPEN`. Returns whether anything changed.
    pub fn update(&mut self, input: &OrderInput, now: DateTime<Utc>) -> Result<bool, OrderError> {
        if self.status != OrderStatus::Open {
            return Err(OrderError::NotOpen {
                external_id: self.external_id.clone(),
                status: self.status,
            });
        }
        input.check_items()?;
        if self.customer == input.customer
            && self.customer_type == input.customer_type
            && self.items == input.items
        {
            return Ok(false);
        }
        self.customer.clone_from(&input.customer);
        self.customer_type = input.customer_type;
        self.items.clone_from(&input.items);
        self.updated_at = now;
        Ok(true)
    }

    /// Moves the order along the status machine.
    pub fn set_status(&mut self, next: OrderStatus, now: DateTime<Utc>) -> Result<(), OrderError> {
        if !self.status.can_become(next) {
            return Err(OrderError::IllegalTransition {
                external_id: self.external_id.clone(),
                from: self.status,
                to: next,
            });
        }
        self.status = next;
        self.updated_at = now;
        Ok(())
    }
}

/// Judges a whole `setOrders` batch without I/O.
///
/// `existing` gives the stored order of an external id; `sku_exists` whether a SKU is known;
/// `new_id` an id for each order to create. Either every item passes and comes back as the order
/// it will be, or every failing item comes back with the first rule it broke, in the contract's
/// precedence (not found → state and item rules → conflict).
pub fn plan_orders<'a>(
    inputs: &[OrderInput],
    existing: impl Fn(&str) -> Option<&'a Order>,
    sku_exists: impl Fn(&Sku) -> bool,
    now: DateTime<Utc>,
    mut new_id: impl FnMut() -> Uuid,
) -> Result<Vec<Planned<Order>>, Vec<ItemFailure<OrderError>>> {
    let repeats = bulk::earlier_occurrences(inputs.iter().map(OrderInput::external_id));
    bulk::judge(inputs, OrderInput::external_id, |index, input| {
        input.check_skus(&sku_exists)?;
        let planned = match existing(input.external_id()) {
            Some(stored) => {
                let mut order = stored.clone();
                let change = if order.update(input, now)? {
                    Change::Updated
                } else {
                    Change::Unchanged
                };
                Planned {
                    record: order,
                    change,
                }
            }
            None => Planned {
                record: Order::create(input, new_id(), now)?,
                change: Change::Created,
            },
        };
        if let Some(first_index) = repeats.get(index).copied().flatten() {
            return Err(OrderError::DuplicateExternalId {
                external_id: input.external_id.clone(),
                first_index,
            });
        }
        Ok(planned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::at;

    fn item(sku: &str, quantity: i32) -> OrderItem {
        OrderItem {
            sku: Sku::parse(sku).unwrap(),
            quantity,
        }
    }

    fn input(external_id: &str, items: Vec<OrderItem>) -> OrderInput {
        OrderInput::new(
            &FieldPath::ROOT.index(0),
            external_id,
            at(100),
            Some("Café Nord"),
            Some(CustomerType::Wholesale),
            items,
        )
        .unwrap()
    }

    #[test]
    fn parsing_an_order_checks_skus_then_texts_naming_their_paths() {
        let parsed = OrderInput::parse(
            &FieldPath::ROOT.index(0),
            "O-1",
            at(0),
            Some(" Café Nord "),
            Some(CustomerType::Retail),
            [("GUJI-250", 2), ("HUILA-1K", 0)],
        )
        .unwrap();
        assert_eq!(parsed.customer(), Some("Café Nord"));
        assert_eq!(parsed.customer_type(), Some(CustomerType::Retail));
        assert_eq!(parsed.items(), [item("GUJI-250", 2), item("HUILA-1K", 0)]);
        // A quantity of zero is judged later, per item; the empty list too.
        assert!(OrderInput::parse(&FieldPath::ROOT.index(0), "O-1", at(0), None, None, []).is_ok());
        let err = OrderInput::parse(
            &FieldPath::ROOT.index(3),
            " ",
            at(0),
            None,
            None,
            [("A", 1), (" ", 1)],
        )
        .unwrap_err();
        assert_eq!(
            err,
            OrderError::Text(TextError::Empty {
                field: FieldPath::from("[3].orderItems[1].sku")
            })
        );
        let err = OrderInput::parse(
            &FieldPath::ROOT.index(3),
            " ",
            at(0),
            None,
            None,
            [("GUJI-250", 1)],
        )
        .unwrap_err();
        assert_eq!(
            err,
            OrderError::Text(TextError::Empty {
                field: FieldPath::from("[3].externalId")
            })
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let err = OrderInput::parse(&FieldPath::ROOT.index(1), "O-1", at(0), Some(" "), None, [])
            .unwrap_err();
        assert_eq!(
            err,
            OrderError::Text(TextError::Empty {
                field: FieldPath::from("[1].customer")
            })
        );
    }

    fn open_order(external_id: &str) -> Order {
        Order::create(
            &input(external_id, vec![item("GUJI-250", 2)]),
            Uuid::from_u128(1),
            at(0),
        )
        .unwrap()
    }

    fn order_in(status: OrderStatus) -> Order {
        Order {
            status,
            ..open_order("o-1")
        }
    }

    // --- Shipments -------------------------------------------------------------------------

    fn allocation(sku: &str, quantity: i32) -> Allocation {
        Allocation {
            sku: Sku::parse(sku).unwrap(),
            lot: TypedLotRef {
                id: Uuid::from_u128(7),
                kind: crate::stock::LotKind::Roasted,
            },
            quantity,
        }
    }

    #[test]
    fn allocations_must_ship_exactly_the_items() {
        let order = open_order("o-1");
        assert_eq!(
            order.check_allocations(&[allocation("GUJI-250", 1), allocation("GUJI-250", 1)]),
            Ok(())
        );
        for bad in [
            vec![allocation("GUJI-250", 1)],
            vec![allocation("GUJI-250", 3)],
            vec![allocation("GUJI-250", 2), allocation("OTHER", 1)],
            vec![allocation("GUJI-250", 3), allocation("GUJI-250", -1)],
            vec![],
        ] {
            let err = order.check_allocations(&bad).unwrap_err();
            assert_eq!(err.violation(), Violation::BusinessRule, "{bad:?}");
        }
    }

    #[test]
    fn only_open_or_in_progress_orders_ship_and_shipping_completes() {
        for status in [OrderStatus::Completed, OrderStatus::Cancelled] {
            let err = order_in(status)
                .check_allocations(&[allocation("GUJI-250", 2)])
                .unwrap_err();
            assert!(matches!(err, OrderError::NotShippable { .. }));
        }
        let mut order = order_in(OrderStatus::InProgress);
        order.ship(Vec::new(), at(5), at(6));
        assert_eq!(order.status, OrderStatus::Completed);
        assert_eq!(order.shipped_date, Some(at(5)));
    }

    #[test]
    fn a_shipment_weighs_quantity_times_package_size_in_kilograms() {
        let size = PackageSize::parse("PACKAGE13_2G").unwrap();
        assert_eq!(shipment_weight(size, 10).unwrap().to_string(), "0.132 KG");
    }

    // --- Wire names --------------------------------------------------------------------------

    #[test]
    fn statuses_and_customer_types_use_their_wire_names() {
        for status in OrderStatus::ALL {
            assert_eq!(OrderStatus::parse(status.as_str()), Ok(status));
        }
        assert_eq!(OrderStatus::InProgress.to_string(), "IN_PROGRESS");
        for kind in [CustomerType::Retail, CustomerType::Wholesale] {
            assert_eq!(CustomerType::parse(kind.as_str()), Ok(kind));
        }
    }

    #[test]
    fn unknown_enum_values_are_invalid_parameters() {
        for err in [
            OrderStatus::parse("open").unwrap_err(),
            OrderStatus::parse("DONE").unwrap_err(),
            CustomerType::parse("retail").unwrap_err(),
            CustomerType::parse("").unwrap_err(),
        ] {
            assert_eq!(err.violation(), Violation::InvalidParameter);
        }
    }

    // --- Create and update -------------------------------------------------------------------

    #[test]
    fn a_new_order_is_open() {
        let order = open_order("o-1");
        assert_eq!(order.status, OrderStatus::Open);
        assert_eq!(order.order_date, at(100));
        assert_eq!(order.customer.as_deref(), Some("Café Nord"));
        assert_eq!((order.created_at, order.updated_at), (at(0), at(0)));
    }

    #[test]
    fn an_order_without_items_is_refused_as_a_business_rule() {
        let err = Order::create(&input("o-1", vec![]), Uuid::nil(), at(0)).unwrap_err();
        assert_eq!(
            err,
            OrderError::NoItems {
                external_id: "o-1".into()
            }
        );
        assert_eq!(err.violation(), Violation::BusinessRule);
    }

    #[test]
    fn a_quantity_of_zero_or_less_is_refused_as_a_business_rule() {
        for quantity in [0, -1, i32::MIN] {
            let err = Order::create(
                &input("o-1", vec![item("A", 1), item("B", quantity)]),
                Uuid::nil(),
                at(0),
            )
            .unwrap_err();
            assert_eq!(
                err,
                OrderError::NonPositiveQuantity {
                    external_id: "o-1".into(),
                    sku: "B".into(),
                    quantity
                }
            );
            assert_eq!(err.violation(), Violation::BusinessRule);
        }
    }

    #[test]
    fn an_update_replaces_customer_type_and_items_but_never_the_order_date() {
        let mut order = open_order("o-1");
        let new = OrderInput::new(
            &FieldPath::ROOT.index(0),
            "o-1",
            at(999),
            None,
            Some(CustomerType::Retail),
            vec![item("GUJI-1000", 1), item("GUJI-250", 3)],
        )
        .unwrap();
        assert!(order.update(&new, at(50)).unwrap());
        assert_eq!(order.order_date, at(100));
        assert_eq!(order.customer, None);
        assert_eq!(order.customer_type, Some(CustomerType::Retail));
        assert_eq!(order.items, new.items().to_vec());
        assert_eq!((order.created_at, order.updated_at), (at(0), at(50)));
    }

    #[test]
    fn repeating_an_update_changes_nothing() {
        let mut order = open_order("o-1");
        let before = order.clone();
        let same = input("o-1", vec![item("GUJI-250", 2)]);
        assert!(!order.update(&same, at(50)).unwrap());
        assert_eq!(order, before);
    }

    #[test]
    fn only_open_orders_can_be_updated() {
        for status in [
            OrderStatus::InProgress,
            OrderStatus::Completed,
            OrderStatus::Cancelled,
        ] {
            let mut order = order_in(status);
            let before = order.clone();
            let err = order
                .update(&input("o-1", vec![item("X", 1)]), at(50))
                .unwrap_err();
            assert_eq!(
                err,
                OrderError::NotOpen {
                    external_id: "o-1".into(),
                    status
                }
            );
            assert_eq!(err.violation(), Violation::BusinessRule);
            assert_eq!(order, before);
        }
    }

    #[test]
    fn an_update_must_keep_at_least_one_item_with_positive_quantities() {
        let mut order = open_order("o-1");
        let before = order.clone();
        assert!(matches!(
            order.update(&input("o-1", vec![]), at(50)),
            Err(OrderError::NoItems { .. })
        ));
        assert!(matches!(
            order.update(&input("o-1", vec![item("A", 0)]), at(50)),
            Err(OrderError::NonPositiveQuantity { .. })
        ));
        assert_eq!(order, before);
    }

    #[test]
    fn unknown_skus_are_not_found_and_all_named() {
        let order = input(
            "o-1",
            vec![
                item("A", 1),
                item("GONE", 1),
                item("LOST", 2),
                item("GONE", 3),
            ],
        );
        let err = order.check_skus(|sku| sku.as_str() == "A").unwrap_err();
        assert_eq!(
            err,
            OrderError::UnknownSkus {
                external_id: "o-1".into(),
                skus: vec!["GONE".into(), "LOST".into()]
            }
        );
        assert_eq!(err.violation(), Violation::NotFound);
        assert!(err.to_string().contains("GONE, LOST"));
    }

    #[test]
    fn blank_external_ids_and_customers_are_invalid_parameters() {
        let blank_id =
            OrderInput::new(&FieldPath::ROOT.index(0), " ", at(0), None, None, vec![]).unwrap_err();
        assert_eq!(blank_id.violation(), Violation::InvalidParameter);
        let blank_customer = OrderInput::new(
            &FieldPath::ROOT.index(0),
            "o-1",
            at(0),
            Some(""),
            None,
            vec![],
        )
        .unwrap_err();
        assert_eq!(blank_customer.violation(), Violation::InvalidParameter);
    }

    // --- Status machine ----------------------------------------------------------------------

    #[test]
    fn an_open_order_can_go_in_progress() {
        let mut order = order_in(OrderStatus::Open);
        order.set_status(OrderStatus::InProgress, at(7)).unwrap();
        assert_eq!(order.status, OrderStatus::InProgress);
        assert_eq!(order.updated_at, at(7));
    }

    #[test]
    fn an_order_in_progress_can_be_completed() {
        let mut order = order_in(OrderStatus::InProgress);
        order.set_status(OrderStatus::Completed, at(7)).unwrap();
        assert_eq!(order.status, OrderStatus::Completed);
    }

    #[test]
    fn open_orders_and_orders_in_progress_can_be_cancelled() {
        for from in [OrderStatus::Open, OrderStatus::InProgress] {
            let mut order = order_in(from);
            order.set_status(OrderStatus::Cancelled, at(7)).unwrap();
            assert_eq!(order.status, OrderStatus::Cancelled);
        }
    }

    #[test]
    fn every_other_move_is_an_illegal_transition() {
        let legal = [
            (OrderStatus::Open, OrderStatus::InProgress),
            (OrderStatus::InProgress, OrderStatus::Completed),
            (OrderStatus::Open, OrderStatus::Cancelled),
            (OrderStatus::InProgress, OrderStatus::Cancelled),
        ];
        for from in OrderStatus::ALL {
            for to in OrderStatus::ALL {
                let mut order = order_in(from);
                let result = order.set_status(to, at(7));
                if legal.contains(&(from, to)) {
                    assert!(result.is_ok(), "{from} → {to}");
                    continue;
                }
                let err = result.unwrap_err();
                assert_eq!(
                    err,
                    OrderError::IllegalTransition {
                        external_id: "o-1".into(),
                        from,
                        to
                    },
                    "{from} → {to}"
                );
                assert_eq!(err.violation(), Violation::BusinessRule);
                assert_eq!(order.status, from, "{from} → {to} must change nothing");
                assert_eq!(order.updated_at, at(0));
            }
        }
    }

    #[test]
    fn completed_and_cancelled_orders_are_final() {
        for from in [OrderStatus::Completed, OrderStatus::Cancelled] {
            assert!(OrderStatus::ALL.iter().all(|&to| !from.can_become(to)));
        }
    }

    #[test]
    fn staying_in_the_same_status_is_not_a_transition() {
        assert!(OrderStatus::ALL.iter().all(|&s| !s.can_become(s)));
    }

    // --- Batch -------------------------------------------------------------------------------

    #[test]
    fn a_clean_batch_plans_creates_updates_and_unchanged_orders() {
        let store = [open_order("o-1"), open_order("o-2")];
        let batch = [
            input("o-1", vec![item("GUJI-250", 2)]),
            input("o-2", vec![item("GUJI-250", 5)]),
            input("o-3", vec![item("GUJI-250", 1)]),
        ];
        let mut ids = (100..).map(Uuid::from_u128);
        let planned = plan_orders(
            &batch,
            |ext| store.iter().find(|o| o.external_id == ext),
            |sku| sku.as_str() == "GUJI-250",
            at(9),
            || ids.next().unwrap(),
        )
        .unwrap();
        let changes: Vec<Change> = planned.iter().map(|p| p.change).collect();
        assert_eq!(
            changes,
            vec![Change::Unchanged, Change::Updated, Change::Created]
        );
        assert_eq!(planned[1].record.items, vec![item("GUJI-250", 5)]);
        assert_eq!(planned[2].record.id, Uuid::from_u128(100));
        assert_eq!(planned[2].record.status, OrderStatus::Open);
    }

    #[test]
    fn a_batch_with_bad_items_reports_every_failing_item() {
        let store = [open_order("o-open"), order_in(OrderStatus::Completed)];
        let batch = [
            input("o-new", vec![item("GUJI-250", 1)]),  // 0: fine
            input("o-1", vec![item("GUJI-250", 1)]),    // 1: completed order
            input("o-empty", vec![]),                   // 2: no items
            input("o-zero", vec![item("GUJI-250", 0)]), // 3: quantity 0
            input("o-sku", vec![item("NOPE", 0)]),      // 4: unknown sku wins over quantity
            input("o-new", vec![item("GUJI-250", 1)]),  // 5: repeats item 0
            input("o-open", vec![item("GUJI-250", 3)]), // 6: fine
        ];
        let failures = plan_orders(
            &batch,
            |ext| store.iter().find(|o| o.external_id == ext),
            |sku| sku.as_str() == "GUJI-250",
            at(9),
            Uuid::nil,
        )
        .unwrap_err();
        let summary: Vec<(usize, &str, Violation)> = failures
            .iter()
            .map(|f| (f.index, f.external_id.as_str(), f.violation()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (1, "o-1", Violation::BusinessRule),
                (2, "o-empty", Violation::BusinessRule),
                (3, "o-zero", Violation::BusinessRule),
                (4, "o-sku", Violation::NotFound),
                (5, "o-new", Violation::Conflict),
            ]
        );
        assert!(matches!(failures[0].error, OrderError::NotOpen { .. }));
        assert!(matches!(failures[1].error, OrderError::NoItems { .. }));
        assert!(matches!(
            failures[2].error,
            OrderError::NonPositiveQuantity { .. }
        ));
        assert!(matches!(failures[3].error, OrderError::UnknownSkus { .. }));
        assert_eq!(
            failures[4].error,
            OrderError::DuplicateExternalId {
                external_id: "o-new".into(),
                first_index: 0
            }
        );
        assert!(failures[4].to_string().starts_with("[5] (externalId"));
    }
}
