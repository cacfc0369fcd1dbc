//! Settings, sequences, accounts and tokens, locations, projects.

use roastery_domain::account::{AccessGrant, Account};
use roastery_domain::location::Location;
use roastery_domain::project::Project;
use roastery_domain::scope::ScopeSet;
use roastery_ports::repo::{AccountRepo, Credentials, LocationRepo, ProjectRepo, SystemRepo};
use roastery_ports::{AppError, Store, StoreError};
use uuid::Uuid;

use super::fixtures::{all_pages, at, page_of, read, write, write_err};

pub fn sequences_count_from_one_and_roll_back_with_the_transaction<S: Store>(store: S) {
    let numbers = write(&store, |tx| {
        Ok((
            tx.next_number("PG")?,
            tx.next_number("PG")?,
            tx.next_number("PR")?,
        ))
    });
    assert_eq!(numbers, (1, 2, 1));
    let rolled_back = store.write(|tx| {
        tx.next_number("PG")?;
        Err::<(), _>(AppError::Forbidden("rolled back".into()))
    });
    assert!(rolled_back.is_err());
    assert_eq!(write(&store, |tx| tx.next_number("PG")), 3, "no gap");
}

pub fn a_setting_keeps_its_first_value<S: Store>(store: S) {
    assert_eq!(
        write(&store, |tx| tx.setting_or_insert("key", "first")),
        "first"
    );
    assert_eq!(
        write(&store, |tx| tx.setting_or_insert("key", "second")),
        "first"
    );
    assert_eq!(write(&store, |tx| tx.setting_or_insert("other", "x")), "x");
    read(&store, |tx| tx.ping());
}

fn account(client_id: &str, minutes: i64) -> Credentials {
    Credentials {
        account: Account::open(
            client_id.to_owned(),
            &format!("account {client_id}"),
            ScopeSet::parse("core.location inventory.green").unwrap(),
            at(minutes),
        )
        .unwrap(),
        secret_hash: format!("$argon2id$hash-of-{client_id}"),
    }
}

pub fn accounts_tokens_and_revocation<S: Store>(store: S) {
    let (b, a) = (account("client-b", 0), account("client-a", 1));
    write(&store, |tx| {
        tx.insert_account(&b)?;
        tx.insert_account(&a)
    });
    assert!(matches!(
        write_err(&store, |tx| tx.insert_account(&account("client-a", 2))),
        StoreError::Duplicate(_)
    ));
    assert_eq!(read(&store, |tx| tx.account("client-a")), Some(a.clone()));
    assert_eq!(read(&store, |tx| tx.account("nobody")), None);
    // Oldest first.
    assert_eq!(
        read(&store, |tx| tx.accounts()),
        vec![b.account.clone(), a.account.clone()]
    );

    let early = AccessGrant::issue(&a.account, a.account.scopes, at(0));
    let late = AccessGrant::issue(&a.account, a.account.scopes, at(30));
    write(&store, |tx| {
        tx.insert_token("hash-early", &early)?;
        tx.insert_token("hash-late", &late)
    });
    let found = read(&store, |tx| tx.grant_for_token("hash-late")).unwrap();
    assert_eq!((found.grant, found.account_active), (late.clone(), true));
    assert_eq!(read(&store, |tx| tx.grant_for_token("unknown")), None);

    // Expired at the instant given counts as expired.
    let deleted = write(&store, |tx| {
        tx.delete_tokens_expired_before(early.expires_at)
    });
    assert_eq!(deleted, 1);
    assert_eq!(read(&store, |tx| tx.grant_for_token("hash-early")), None);

    write(&store, |tx| tx.set_account_revoked("client-a", at(40)));
    let revoked = read(&store, |tx| tx.account("client-a")).unwrap();
    assert_eq!(revoked.account.revoked_at, Some(at(40)));
    assert!(
        !read(&store, |tx| tx.grant_for_token("hash-late"))
            .unwrap()
            .account_active
    );
}

fn location(n: u128, minutes: i64, external_id: Option<&str>) -> Location {
    Location::new(
        Uuid::from_u128(n),
        &format!("Store {n}"),
        external_id,
        at(minutes),
    )
    .unwrap()
}

pub fn locations_by_id_external_id_and_newest_first_pages<S: Store>(store: S) {
    // Two share an instant: the id breaks the tie.
    let locations = [
        location(1, 0, Some("LOC-1")),
        location(2, 5, None),
        location(3, 5, Some("LOC-3")),
        location(4, 9, None),
    ];
    write(&store, |tx| {
        locations.iter().try_for_each(|l| tx.insert_location(l))
    });
    assert!(matches!(
        write_err(&store, |tx| tx.insert_location(&location(
            5,
            10,
            Some("LOC-1")
        ))),
        StoreError::Duplicate(_)
    ));
    assert!(matches!(
        write_err(&store, |tx| tx.insert_location(&location(1, 10, None))),
        StoreError::Duplicate(_)
    ));
    let [l1, l2, l3, l4] = locations;
    assert_eq!(read(&store, |tx| tx.location(l2.id)), Some(l2.clone()));
    assert_eq!(read(&store, |tx| tx.location(Uuid::from_u128(99))), None);
    assert_eq!(
        read(&store, |tx| tx.location_by_external_id("LOC-3")),
        Some(l3.clone())
    );
    assert_eq!(read(&store, |tx| tx.location_by_external_id("LOC-9")), None);
    let mut found = read(&store, |tx| {
        tx.locations_by_ids(&[l3.id, Uuid::from_u128(99), l1.id, l3.id])
    });
    found.sort_by_key(|l| l.id);
    assert_eq!(
        found,
        vec![l1.clone(), l3.clone()],
        "each once, unknown ids left out"
    );
    let listed = all_pages(3, |page| read(&store, |tx| tx.list_locations(page)));
    assert_eq!(listed, vec![l4, l3, l2, l1]);
    let first = read(&store, |tx| {
        tx.list_locations(&page_of::<Location>(4, None))
    });
    assert_eq!(
        (first.items.len(), first.next),
        (4, None),
        "an exact page has no next"
    );
}

fn project(n: u128, minutes: i64) -> Project {
    Project::new(
        Uuid::from_u128(n),
        &format!("Project {n}"),
        Some("a note"),
        at(minutes),
    )
    .unwrap()
}

pub fn projects_by_name_and_newest_first_pages<S: Store>(store: S) {
    let projects = [project(1, 0), project(2, 1), project(3, 1)];
    write(&store, |tx| {
        projects.iter().try_for_each(|p| tx.insert_project(p))
    });
    let same_name = Project {
        id: Uuid::from_u128(9),
        ..project(1, 5)
    };
    assert!(matches!(
        write_err(&store, |tx| tx.insert_project(&same_name)),
        StoreError::Duplicate(_)
    ));
    let [p1, p2, p3] = projects;
    assert_eq!(
        read(&store, |tx| tx.project_by_name("Project 2")),
        Some(p2.clone())
    );
    assert_eq!(read(&store, |tx| tx.project_by_name("project 2")), None);
    let listed = all_pages(2, |page| read(&store, |tx| tx.list_projects(page)));
    assert_eq!(listed, vec![p3, p2, p1]);
}
