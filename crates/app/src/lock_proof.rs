//! What the compiler refuses a use case that would write back a row without holding its lock.
//! Each refused example has a compiling twin that differs from it in the one line that breaks
//! the rule, so a refusal for any other reason would show as a failing twin.
//!
//! Writing back a row loaded without its lock:
//!
//! ```compile_fail,E0308
//! use roastery_app::{AppError, Store};
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let Some(lot) = tx.green_lot(id)? else { return Ok(()) };
//!         tx.update_green_lot(&lot)?; // a `GreenLot`, not a `ForUpdate<GreenLot>`
//!         Ok(())
//!     })
//! }
//! ```
//!
//! and its twin, through the locking loader:
//!
//! ```
//! use roastery_app::{AppError, Store};
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let Some(lot) = tx.green_lot_for_update(id)? else { return Ok(()) };
//!         tx.update_green_lot(&lot)?;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! Making the proof itself from its transaction: a use case's transaction is only `Repos`, which
//! does not lock rows,
//!
//! ```compile_fail,E0277
//! use roastery_app::{AppError, Store};
//! use roastery_ports::lock::{ForUpdate, Rows};
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let lot = ForUpdate::load(tx, Rows::GreenLots(&[id]), |tx| tx.green_lot(id))?;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! while the same call compiles on a store's own transaction (here the in-memory store's):
//!
//! ```
//! use roastery_app::{AppError, Store};
//! use roastery_ports::lock::{ForUpdate, Rows};
//! use roastery_ports::repo::GreenLotRepo;
//! use roastery_ports::testing::InMemoryStore;
//! use uuid::Uuid;
//!
//! fn write_back(store: &InMemoryStore, id: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let lot = ForUpdate::load(tx, Rows::GreenLots(&[id]), |tx| tx.green_lot(id))?;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! and asking for locking rows is impossible: this crate cannot name `RowLocks` (only the stores
//! depend on `roastery-lock`; `deny.toml` refuses any other crate that does),
//!
//! ```compile_fail,E0433
//! use roastery_app::{AppError, Store};
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError>
//! where
//!     S::Tx: roastery_lock::RowLocks,
//! {
//!     store.write(|_| Ok(()))
//! }
//! ```
//!
//! while a bound on a trait it can name compiles:
//!
//! ```
//! use roastery_app::{AppError, Store};
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid) -> Result<(), AppError>
//! where
//!     S::Tx: roastery_ports::repo::GreenLotRepo,
//! {
//!     store.write(|_| Ok(()))
//! }
//! ```
//!
//! Putting another row in place of a locked one: the value does not change in place,
//!
//! ```compile_fail,E0594
//! use roastery_app::{AppError, Store};
//! use roastery_ports::lock::LockedRow;
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid, other: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let Some(mut lot) = tx.green_lot_for_update(id)? else { return Ok(()) };
//!         let Some(next) = tx.green_lot(other)? else { return Ok(()) };
//!         *lot = next;
//!         tx.update_green_lot(&lot)?;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! and a replacement is checked to be the same row (at run time: a `StoreError`, nothing
//! written, when it is not):
//!
//! ```
//! use roastery_app::{AppError, Store};
//! use roastery_ports::lock::LockedRow;
//! use roastery_ports::repo::GreenLotRepo;
//! use uuid::Uuid;
//!
//! fn write_back<S: Store>(store: &S, id: Uuid, other: Uuid) -> Result<(), AppError> {
//!     store.write(|tx| {
//!         let Some(mut lot) = tx.green_lot_for_update(id)? else { return Ok(()) };
//!         let Some(next) = tx.green_lot(other)? else { return Ok(()) };
//!         lot.put(next)?;
//!         tx.update_green_lot(&lot)?;
//!         Ok(())
//!     })
//! }
//! ```
