//! What a batch upsert (orders, products) writes once its records are planned: the new records
//! to insert, and each changed record put in place of its row loaded under lock.

use std::collections::HashMap;

use roastery_domain::bulk::{Change, Planned};
use roastery_ports::error::{AppError, StoreError};
use roastery_ports::lock::{ForUpdate, Keyed, LockedRow};

/// The rows of a batch loaded for update, by their external id.
pub(crate) fn by_external_id<T: Keyed>(
    rows: Vec<ForUpdate<T>>,
    external_id: impl Fn(&T) -> &str,
) -> HashMap<String, ForUpdate<T>> {
    rows.into_iter()
        .map(|row| (external_id(&row).to_owned(), row))
        .collect()
}

/// Splits `planned` into the records to insert and the rows to write back: each updated record
/// replaces its loaded row, and `written` turns the row (and what it was before, still readable
/// in the row) into what the store's update takes. Unchanged records write nothing.
pub(crate) fn writes<T, U>(
    planned: &[Planned<T>],
    mut stored: HashMap<String, ForUpdate<T>>,
    external_id: impl Fn(&T) -> &str,
    mut written: impl FnMut(ForUpdate<T>, &T) -> Result<U, StoreError>,
) -> Result<(Vec<T>, Vec<U>), AppError>
where
    T: Keyed + Clone,
{
    let mut created = Vec::new();
    let mut updated = Vec::new();
    for p in planned {
        match p.change {
            Change::Created => created.push(p.record.clone()),
            Change::Updated => {
                let row = stored.remove(external_id(&p.record)).ok_or_else(|| {
                    StoreError::Internal("a planned update names a row that was not loaded".into())
                })?;
                updated.push(written(row, &p.record)?);
            }
            Change::Unchanged => {}
        }
    }
    Ok((created, updated))
}

/// Puts `next` in place of the loaded row and hands the row back for writing.
pub(crate) fn put<T: Keyed + Clone>(
    mut row: ForUpdate<T>,
    next: &T,
) -> Result<ForUpdate<T>, StoreError> {
    row.put(next.clone())?;
    Ok(row)
}
