//! Prices: an exact, non-negative amount in micro-units of an ISO 4217 currency.

use std::fmt;

use iso_currency::Currency as IsoCurrency;
use rust_decimal::Decimal;

use crate::decimal::{from_micros, to_micros};
use crate::violation::{BrokenRule, Violation};

/// Largest price amount accepted.
pub const MAX_AMOUNT: i64 = 1_000_000_000_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    #[error("currency `{0}` is not an ISO 4217 currency code")]
    UnsupportedCurrency(String),
    #[error("price must not be negative; {0} was given")]
    Negative(Decimal),
    #[error("price {0} is too large")]
    TooLarge(Decimal),
}

impl BrokenRule for PriceError {
    fn violation(&self) -> Violation {
        match self {
            Self::UnsupportedCurrency(_) => Violation::UnsupportedCurrency,
            Self::Negative(_) => Violation::InvalidPrice,
            Self::TooLarge(_) => Violation::InvalidParameter,
        }
    }
}

/// An ISO 4217 currency, validated against the maintained `iso_currency` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency(IsoCurrency);

impl Currency {
    pub fn parse(code: &str) -> Result<Self, PriceError> {
        IsoCurrency::from_code(code)
            .map(Self)
            .ok_or_else(|| PriceError::UnsupportedCurrency(code.to_owned()))
    }

    pub fn code(self) -> &'static str {
        self.0.code()
    }
}

/// Checks that an amount is within what a price may be; its sign is judged by [`Price::new`].
/// A shape rule (400), separate so callers can apply it before looking anything up.
pub fn check_bound(amount: Decimal) -> Result<(), PriceError> {
    if amount > Decimal::from(MAX_AMOUNT) {
        return Err(PriceError::TooLarge(amount));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Price {
    micros: i64,
    currency: Currency,
}

/// A price as a request gave it, judged after the rules that rank before `invalid_price`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedPrice {
    pub amount: Decimal,
    pub currency: Currency,
}

impl RequestedPrice {
    pub fn judge(self) -> Result<Price, PriceError> {
        Price::new(self.amount, self.currency)
    }
}

impl Price {
    pub fn new(amount: Decimal, currency: Currency) -> Result<Self, PriceError> {
        if amount.is_sign_negative() && !amount.is_zero() {
            return Err(PriceError::Negative(amount));
        }
        check_bound(amount)?;
        let micros = to_micros(amount).ok_or(PriceError::TooLarge(amount))?;
        Ok(Self { micros, currency })
    }

    pub fn from_micros(micros: i64, currency: Currency) -> Result<Self, PriceError> {
        if micros < 0 {
            return Err(PriceError::Negative(from_micros(micros)));
        }
        Ok(Self { micros, currency })
    }

    pub fn micros(self) -> i64 {
        self.micros
    }

    pub fn amount(self) -> Decimal {
        from_micros(self.micros)
    }

    pub fn currency(self) -> Currency {
        self.currency
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount(), self.currency.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn currencies_are_iso_4217_codes() {
        assert_eq!(Currency::parse("EUR").unwrap().code(), "EUR");
        let err = Currency::parse("EURO").unwrap_err();
        assert_eq!(err.violation(), Violation::UnsupportedCurrency);
        assert!(Currency::parse("eur").is_err());
    }

    #[test]
    fn negative_price_is_invalid_price() {
        let eur = Currency::parse("EUR").unwrap();
        let err = Price::new(Decimal::from_str("-0.01").unwrap(), eur).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidPrice);
    }

    #[test]
    fn prices_are_exact_to_six_decimals() {
        let usd = Currency::parse("USD").unwrap();
        let price = Price::new(Decimal::from_str("5.2").unwrap(), usd).unwrap();
        assert_eq!(price.micros(), 5_200_000);
        assert_eq!(price.to_string(), "5.2 USD");
    }
}
