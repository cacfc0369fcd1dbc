//! libpq in a process that may exit while a connection opens or closes on another thread.
//!
//! r2d2 opens connections on its own threads and a pool's last owner may be one of them, so a
//! process (the server after SIGTERM, a one-shot command, a test binary) can reach `exit` while
//! libpq is inside OpenSSL or Kerberos. Both libraries tear down their global state at exit, and
//! the thread still using it then crashes the process (a freed mutex, a corrupted heap). Two
//! settings remove that teardown from under libpq:
//! - OpenSSL is initialised without its exit handler (`OPENSSL_INIT_NO_ATEXIT`, through
//!   `openssl_sys::init`) before the first connection, since the first initialisation decides;
//! - GSSAPI encryption is not probed (`gssencmode=disable`) unless the URL or `PGGSSENCMODE`
//!   asks for it: the probe touches Kerberos on every connect, even with no ticket anywhere.

use std::borrow::Cow;

use diesel::{Connection, ConnectionResult, PgConnection};

/// Opens a PostgreSQL connection to `url` as every connection of the store is opened.
pub fn connect(url: &str) -> ConnectionResult<PgConnection> {
    openssl_sys::init();
    PgConnection::establish(&with_defaults(
        url,
        std::env::var_os("PGGSSENCMODE").is_some(),
    ))
}

/// `url` with `gssencmode=disable` added, unless it names `gssencmode` itself or the environment
/// chooses (`gssencmode_in_env`).
fn with_defaults(url: &str, gssencmode_in_env: bool) -> Cow<'_, str> {
    let query = url.split_once('?').map(|(_, query)| query);
    let named = query.is_some_and(|query| {
        query
            .split('&')
            .any(|param| param.split('=').next() == Some("gssencmode"))
    });
    if named || gssencmode_in_env {
        return Cow::Borrowed(url);
    }
    let mut out = url.to_owned();
    match query {
        None => out.push('?'),
        Some(query) if query.is_empty() || query.ends_with('&') => {}
        Some(_) => out.push('&'),
    }
    out.push_str("gssencmode=disable");
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gss_encryption_is_off_unless_the_url_or_the_environment_chooses() {
        let cases = [
            ("postgres://h/db", "postgres://h/db?gssencmode=disable"),
            ("postgres://h/db?", "postgres://h/db?gssencmode=disable"),
            (
                "postgres://h/db?sslmode=require&",
                "postgres://h/db?sslmode=require&gssencmode=disable",
            ),
            (
                "postgres://h/db?sslmode=require",
                "postgres://h/db?sslmode=require&gssencmode=disable",
            ),
            (
                "postgres://h/db?gssencmode=require",
                "postgres://h/db?gssencmode=require",
            ),
            (
                "postgres://h/db?sslmode=disable&gssencmode=prefer",
                "postgres://h/db?sslmode=disable&gssencmode=prefer",
            ),
            // A parameter that only ends in the name is another parameter.
            (
                "postgres://h/db?xgssencmode=1",
                "postgres://h/db?xgssencmode=1&gssencmode=disable",
            ),
        ];
        for (url, expected) in cases {
            assert_eq!(with_defaults(url, false), expected, "{url}");
        }
        assert_eq!(with_defaults("postgres://h/db", true), "postgres://h/db");
    }
}
