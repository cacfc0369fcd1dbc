//! Instants are stored as UTC timestamps without zone (the type both backends share).

use chrono::{DateTime, NaiveDateTime, Utc};

pub(crate) fn to_db(at: DateTime<Utc>) -> NaiveDateTime {
    at.naive_utc()
}

pub(crate) fn from_db(at: NaiveDateTime) -> DateTime<Utc> {
    at.and_utc()
}
