//! Products, variants and orders.

use roastery_domain::order::{CustomerType, Order, OrderItem, OrderStatus};
use roastery_domain::product::{Product, Sku, Variant};
use roastery_ports::lock::LockedRow;
use roastery_ports::repo::{OrderFilter, OrderRepo, ProductRepo, ProductUpdate};
use roastery_ports::{Store, StoreError};
use uuid::Uuid;

use super::fixtures::{all_pages, at, read, write, write_err};

pub fn product(n: u128, minutes: i64, skus: &[&str]) -> Product {
    Product {
        id: Uuid::from_u128(n),
        external_id: format!("SHOP-{n}"),
        name: format!("Espresso blend {n}"),
        variants: skus
            .iter()
            .map(|s| Variant::parse(s, "PACKAGE250G").unwrap())
            .collect(),
        created_at: at(minutes),
        updated_at: at(minutes),
    }
}

pub fn order(n: u128, minutes: i64, status: OrderStatus, items: &[(&str, i32)]) -> Order {
    Order {
        id: Uuid::from_u128(n),
        external_id: format!("ORD-{n}"),
        order_date: at(minutes),
        customer: Some(format!("Café {n}")),
        customer_type: Some(CustomerType::Wholesale),
        status,
        items: items
            .iter()
            .map(|(sku, quantity)| OrderItem {
                sku: Sku::parse(sku).unwrap(),
                quantity: *quantity,
            })
            .collect(),
        created_at: at(minutes),
        updated_at: at(minutes),
        shipped_date: None,
        shipments: vec![],
    }
}

pub fn orders_and_products_by_external_ids_and_updates<S: Store>(store: S) {
    let products = [
        product(1, 0, &["ESP-250", "ESP-1000"]),
        product(2, 1, &["FLT-250"]),
    ];
    write(&store, |tx| tx.insert_products(&products));
    let [p1, p2] = products;
    // A product key taken after the unit of work found it free: a concurrent sync, run again.
    let same_key = Product {
        id: Uuid::from_u128(3),
        ..p1.clone()
    };
    assert!(matches!(
        write_err(&store, |tx| tx
            .insert_products(std::slice::from_ref(&same_key))),
        StoreError::Contention
    ));
    // A SKU another product owns.
    assert!(matches!(
        write_err(&store, |tx| tx.insert_products(&[product(
            3,
            2,
            &["ESP-250"]
        )])),
        StoreError::Duplicate(_)
    ));
    let mut found = read(&store, |tx| {
        tx.products_by_external_ids(&["SHOP-2".into(), "SHOP-9".into(), "SHOP-1".into()])
    });
    found.sort_by_key(|p| p.id);
    assert_eq!(
        found,
        vec![p1.clone(), p2.clone()],
        "variants in their order"
    );
    let mut owners = read(&store, |tx| {
        tx.sku_owners(&[
            Sku::parse("FLT-250").unwrap(),
            Sku::parse("ESP-1000").unwrap(),
            Sku::parse("NONE").unwrap(),
        ])
    });
    owners.sort();
    assert_eq!(
        owners,
        vec![
            (Sku::parse("ESP-1000").unwrap(), "SHOP-1".to_owned()),
            (Sku::parse("FLT-250").unwrap(), "SHOP-2".to_owned()),
        ]
    );
    write(&store, |tx| {
        let mut locked = tx.products_for_update(&["SHOP-1".into()])?;
        let mut product = locked.pop().unwrap();
        let added = vec![Variant::parse("ESP-500", "PACKAGE500G").unwrap()];
        product.apply(|product| {
            product.name = "Espresso, renamed".into();
            product.updated_at = at(5);
            product.variants.extend(added.clone());
        })?;
        tx.update_products(&[ProductUpdate { product, added }])
    });
    let listed = all_pages(1, |page| read(&store, |tx| tx.list_products(page)));
    let mut renamed = p1.clone();
    renamed.name = "Espresso, renamed".into();
    renamed.updated_at = at(5);
    renamed
        .variants
        .push(Variant::parse("ESP-500", "PACKAGE500G").unwrap());
    assert_eq!(listed, vec![p2, renamed]);

    let orders = [
        order(10, 0, OrderStatus::Open, &[("ESP-250", 2), ("FLT-250", 1)]),
        order(11, 5, OrderStatus::InProgress, &[("ESP-500", 3)]),
        order(12, 5, OrderStatus::Open, &[("FLT-250", 4)]),
    ];
    write(&store, |tx| tx.insert_orders(&orders));
    let [o10, o11, o12] = orders;
    assert!(matches!(
        write_err(&store, |tx| {
            let again = Order {
                id: Uuid::from_u128(13),
                ..o10.clone()
            };
            tx.insert_orders(&[again])
        }),
        StoreError::Contention
    ));
    assert_eq!(read(&store, |tx| tx.order(o11.id)), Some(o11.clone()));
    assert_eq!(read(&store, |tx| tx.order(Uuid::from_u128(99))), None);
    let mut found = read(&store, |tx| {
        tx.orders_by_external_ids(&["ORD-12".into(), "ORD-10".into()])
    });
    found.sort_by_key(|o| o.id);
    assert_eq!(
        found,
        vec![o10.clone(), o12.clone()],
        "items in their order"
    );

    let all = all_pages(2, |page| {
        read(&store, |tx| tx.list_orders(&OrderFilter::default(), page))
    });
    assert_eq!(all, vec![o12.clone(), o11.clone(), o10.clone()]);
    let open = OrderFilter {
        status: Some(OrderStatus::Open),
        ..OrderFilter::default()
    };
    let listed = all_pages(5, |page| read(&store, |tx| tx.list_orders(&open, page)));
    assert_eq!(listed, vec![o12.clone(), o10.clone()]);
    let window = OrderFilter {
        order_date_from: Some(at(0)),
        order_date_to: Some(at(5)),
        status: None,
    };
    let listed = all_pages(5, |page| read(&store, |tx| tx.list_orders(&window, page)));
    assert_eq!(listed, vec![o10.clone()], "from inclusive, to exclusive");

    // Update: customer, type, status, items and updated_at; never the dates it was made with.
    write(&store, |tx| {
        let mut locked = tx.orders_for_update(&["ORD-10".into()])?;
        let order = locked.first_mut().unwrap();
        order.apply(|order| {
            order.customer = None;
            order.customer_type = None;
            order.status = OrderStatus::Cancelled;
            order.items = vec![OrderItem {
                sku: Sku::parse("ESP-500").unwrap(),
                quantity: 1,
            }];
            order.updated_at = at(8);
            order.order_date = at(60);
        })?;
        tx.update_orders(&locked)
    });
    let updated = read(&store, |tx| tx.order(o10.id)).unwrap();
    assert_eq!(
        updated,
        Order {
            customer: None,
            customer_type: None,
            status: OrderStatus::Cancelled,
            items: vec![OrderItem {
                sku: Sku::parse("ESP-500").unwrap(),
                quantity: 1
            }],
            updated_at: at(8),
            ..o10
        }
    );
}
