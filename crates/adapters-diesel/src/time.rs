//! Instants are stored as UTC timestamps without zone (the type both backends share).

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use diesel::deserialize::FromSql;
use diesel::pg::{Pg, PgValue};
use diesel::sql_types::Timestamp;
use diesel::sqlite::{Sqlite, SqliteValue};

use crate::connection::{MultiBackend, MultiRawValue};

pub(crate) fn to_db(at: DateTime<Utc>) -> NaiveDateTime {
    at.naive_utc()
}

pub(crate) fn from_db(at: NaiveDateTime) -> DateTime<Utc> {
    at.and_utc()
}

/// A timestamp column read into a [`NaiveDateTime`] (`#[diesel(deserialize_as = StoredInstant)]`
/// on a row's field).
///
/// SQLite stores timestamps as the text Diesel writes, `YYYY-MM-DD HH:MM:SS` with a fraction of
/// second when there is one. Diesel reads that text back by trying a list of strftime patterns,
/// each interpreted anew for every value: a few percent of a listing's CPU. This reads that exact
/// shape digit by digit and leaves anything else (other text forms, Julian day numbers) to Diesel,
/// so every stored value reads as before. PostgreSQL's binary timestamps go to Diesel unchanged.
#[derive(Debug, Clone, Copy, diesel::deserialize::FromSqlRow)]
pub(crate) struct StoredInstant(NaiveDateTime);

impl From<StoredInstant> for NaiveDateTime {
    fn from(at: StoredInstant) -> Self {
        at.0
    }
}

impl FromSql<Timestamp, Sqlite> for StoredInstant {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> diesel::deserialize::Result<Self> {
        if let Some(at) = parse_stored(value.read_text()) {
            return Ok(Self(at));
        }
        <NaiveDateTime as FromSql<Timestamp, Sqlite>>::from_sql(value).map(Self)
    }
}

impl FromSql<Timestamp, Pg> for StoredInstant {
    fn from_sql(value: PgValue<'_>) -> diesel::deserialize::Result<Self> {
        <NaiveDateTime as FromSql<Timestamp, Pg>>::from_sql(value).map(Self)
    }
}

impl FromSql<Timestamp, MultiBackend> for StoredInstant {
    fn from_sql(value: MultiRawValue<'_>) -> diesel::deserialize::Result<Self> {
        value.from_sql::<Self, Timestamp>()
    }
}

/// `YYYY-MM-DD HH:MM:SS` with an optional `.` and 1 to 9 digits of fraction, as Diesel writes
/// timestamps into SQLite (`%F %T%.f`); `None` for any other text (a leap second included).
fn parse_stored(text: &str) -> Option<NaiveDateTime> {
    let bytes = text.as_bytes();
    let (head, fraction) = bytes.split_at_checked(19)?;
    let number = |from: usize, to: usize| -> Option<u32> {
        head.get(from..to)?.iter().try_fold(0u32, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
        })
    };
    let separators = [(4, b'-'), (7, b'-'), (10, b' '), (13, b':'), (16, b':')];
    if separators.iter().any(|&(at, c)| head.get(at) != Some(&c)) {
        return None;
    }
    let nanos = match fraction {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            let value = digits.iter().try_fold(0u32, |n, &b| {
                b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
            })?;
            let scale = digits.len().try_into().ok()?;
            value.checked_mul(10u32.checked_pow(9u32.checked_sub(scale)?)?)?
        }
        _ => return None,
    };
    let year = i32::try_from(number(0, 4)?).ok()?;
    let date = NaiveDate::from_ymd_opt(year, number(5, 7)?, number(8, 10)?)?;
    let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
    if second > 59 {
        return None;
    }
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    Some(NaiveDateTime::new(date, time))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Diesel's SQLite reader makes of a stored text: the patterns it tries, in its order.
    fn diesel_reading(text: &str) -> Option<NaiveDateTime> {
        ["%F %T%.f", "%F %T"]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
    }

    #[test]
    fn the_stored_shape_reads_as_diesel_reads_it() {
        let day = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        let mut instants = vec![
            day.and_hms_opt(0, 0, 0).unwrap(),
            day.and_hms_opt(23, 59, 59).unwrap(),
            day.and_hms_milli_opt(9, 5, 7, 120).unwrap(),
            day.and_hms_micro_opt(9, 5, 7, 123_456).unwrap(),
            day.and_hms_nano_opt(9, 5, 7, 123_456_789).unwrap(),
            day.and_hms_nano_opt(9, 5, 7, 1).unwrap(),
            NaiveDate::from_ymd_opt(2024, 2, 29)
                .unwrap()
                .and_hms_opt(12, 0, 0)
                .unwrap(),
            NaiveDate::from_ymd_opt(1, 1, 1)
                .unwrap()
                .and_hms_opt(0, 0, 1)
                .unwrap(),
            NaiveDate::from_ymd_opt(9999, 12, 31)
                .unwrap()
                .and_hms_nano_opt(23, 59, 59, 999_999_999)
                .unwrap(),
        ];
        // A spread of instants over the years, with every length of fraction Diesel writes.
        let mut seconds: i64 = -62_000_000_000;
        while seconds < 253_000_000_000 {
            let nanos = u32::try_from(seconds.rem_euclid(1_000_000_007) % 1_000_000_000).unwrap();
            for nanos in [0, nanos / 1_000_000 * 1_000_000, nanos / 1000 * 1000, nanos] {
                instants.push(
                    chrono::DateTime::from_timestamp(seconds, nanos)
                        .unwrap()
                        .naive_utc(),
                );
            }
            seconds += 7_777_777_777;
        }
        for at in instants {
            // Exactly what Diesel writes into a SQLite timestamp column.
            let stored = at.format("%F %T%.f").to_string();
            assert_eq!(parse_stored(&stored), Some(at), "{stored}");
            assert_eq!(parse_stored(&stored), diesel_reading(&stored), "{stored}");
        }
    }

    #[test]
    fn other_text_is_left_to_diesel() {
        for text in [
            "",
            "2026-11-23",
            "2026-11-23T10:00:00",
            "2026-11-23 10:00:00Z",
            "2026-11-23 10:00:00+01:00",
            "2026-11-23 10:00",
            "2026-11-23 10:00:00.",
            "2026-11-23 10:00:00.1234567890",
            "2026-11-23 10:00:60",
            "2026-13-01 10:00:00",
            "2026-02-30 10:00:00",
            "2026-11-23 24:00:00",
            "+2026-11-23 10:00:0",
            "2026-11-23 1a:00:00",
            "２０２６-11-23 10:00",
            "2461002.5",
        ] {
            assert_eq!(parse_stored(text), None, "{text}");
        }
    }
}
