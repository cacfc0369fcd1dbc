//! Products and their variants, kept in step with an external shop by `mrp.product.syncProducts`.
//!
//! Sync is an upsert by `externalId` that never loses anything: a new product is created; for an
//! existing one the name may change and new variants are added, but a variant, once stored, never
//! changes (same SKU, other package size → conflict) and variants missing from the input are kept.
//! A SKU belongs to one product for good. Syncing the same input twice changes nothing, and says so,
//! so that the store can skip the write.
//!
//! Decisions the contract leaves open:
//! - A SKU given twice inside one product is a duplicate in a unique list: 400 `invalid_parameter`
//!   for the whole request ([`ProductError::DuplicateSku`]).
//! - The same `externalId` twice in one batch is a conflict of the input with itself: the repeats
//!   fail with `resource_conflict`, pointing at the first ([`ProductError::DuplicateExternalId`]);
//!   so does a SKU claimed by two products of one batch ([`ProductError::SkuClaimedInBatch`]).
//! - A product may have no variants yet.
//! - SKUs are compared exactly (case-sensitive) after trimming.
//!
//! This module must never look anything up itself: the owners of SKUs and the stored products come
//! from the caller.

use std::collections::{HashMap, HashSet};
use std::fmt;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::bulk::{self, Change, ItemFailure, Planned};
use crate::decimal;
use crate::field::FieldPath;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Longest SKU.
pub const SKU_MAX: usize = 100;
/// Most decimals of a package size in grams.
pub const PACKAGE_DECIMALS_MAX: usize = 6;
/// Most digits before the decimal point of a package size in grams (under 1000 tonnes).
pub const PACKAGE_INTEGER_DIGITS_MAX: usize = 9;

const MICROGRAMS_PER_GRAM: i64 = 1_000_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProductError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(
        "packageSize `{value}` is not of the form PACKAGE<grams>G with `_` as decimal point \
         (e.g. PACKAGE250G, PACKAGE13_2G): {reason}"
    )]
    InvalidPackageSize { value: String, reason: &'static str },
    #[error("product `{external_id}` lists sku `{sku}` more than once")]
    DuplicateSku { external_id: String, sku: String },
    #[error(
        "product `{external_id}` has variant `{sku}` with packageSize {stored}; a stored variant \
         cannot change, so {given} is refused (use a new sku)"
    )]
    VariantChanged {
        external_id: String,
        sku: String,
        stored: PackageSize,
        given: PackageSize,
    },
    #[error("sku `{sku}` given for product `{external_id}` belongs to product `{owner}`")]
    SkuOwnedByOther {
        external_id: String,
        sku: String,
        owner: String,
    },
    #[error(
        "sku `{sku}` given for product `{external_id}` is also given for product `{owner}` \
         (item {first_index}) of this batch"
    )]
    SkuClaimedInBatch {
        external_id: String,
        sku: String,
        owner: String,
        first_index: usize,
    },
    #[error(
        "product `{external_id}` appears more than once in this batch (first at item {first_index})"
    )]
    DuplicateExternalId {
        external_id: String,
        first_index: usize,
    },
}

impl BrokenRule for ProductError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::InvalidPackageSize { .. } | Self::DuplicateSku { .. } => {
                Violation::InvalidParameter
            }
            Self::VariantChanged { .. }
            | Self::SkuOwnedByOther { .. }
            | Self::SkuClaimedInBatch { .. }
            | Self::DuplicateExternalId { .. } => Violation::Conflict,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        if let Self::Text(e) = self {
            e.rebase(base);
        }
    }
}

/// A stock keeping unit: trimmed, non-empty, at most [`SKU_MAX`] characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sku(String);

impl Sku {
    /// A SKU given in a request at `field`, its path (`[2].variants[0].sku`).
    pub fn parse_at(field: impl Into<FieldPath>, value: &str) -> Result<Self, TextError> {
        text::required(field, value, SKU_MAX).map(Self)
    }

    /// A SKU the service holds already (a stored one): named `sku` when malformed.
    pub fn parse(value: &str) -> Result<Self, TextError> {
        Self::parse_at("sku", value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Sku {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The size of a package in grams, above zero, exact to the microgram.
///
/// Its wire form is `PACKAGE<grams>G` with `_` as decimal point. Only the canonical form is
/// accepted — no leading zeros (`PACKAGE0250G`), no trailing zeros after the point
/// (`PACKAGE13_20G`, `PACKAGE250_0G`), no sign, at most six decimals — so that every size has
/// exactly one spelling and parsing and formatting round-trip: two spellings of one size would
/// let a stored variant "change" without changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackageSize {
    micrograms: i64,
}

impl PackageSize {
    /// Parses the wire form, e.g. `PACKAGE250G` or `PACKAGE13_2G`.
    pub fn parse(value: &str) -> Result<Self, ProductError> {
        let bad = |reason| ProductError::InvalidPackageSize {
            value: value.to_owned(),
            reason,
        };
        let grams = value
            .strip_prefix("PACKAGE")
            .and_then(|rest| rest.strip_suffix('G'))
            .ok_or_else(|| bad("it must start with PACKAGE and end with G"))?;
        let (integer, fraction) = match grams.split_once('_') {
            Some((integer, fraction)) => (integer, Some(fraction)),
            None => (grams, None),
        };
        if !is_digits(integer) {
            return Err(bad(
                "the grams must be digits, with at most one `_` between digits",
            ));
        }
        if integer.len() > 1 && integer.starts_with('0') {
            return Err(bad("the grams must not have leading zeros"));
        }
        if integer.len() > PACKAGE_INTEGER_DIGITS_MAX {
            return Err(bad("the grams must stay below 1000000000"));
        }
        // At most nine digits, so below 10^15 micrograms.
        let mut micrograms = parse_digits(integer).saturating_mul(MICROGRAMS_PER_GRAM);
        if let Some(fraction) = fraction {
            if !is_digits(fraction) {
                return Err(bad(
                    "the grams must be digits, with at most one `_` between digits",
                ));
            }
            if fraction.len() > PACKAGE_DECIMALS_MAX {
                return Err(bad("the grams may have at most 6 decimals"));
            }
            if fraction.ends_with('0') {
                return Err(bad("the decimals must not end in zero"));
            }
            let missing = PACKAGE_DECIMALS_MAX.saturating_sub(fraction.len());
            let scale = 10_i64.saturating_pow(u32::try_from(missing).unwrap_or(0));
            micrograms = micrograms.saturating_add(parse_digits(fraction).saturating_mul(scale));
        }
        if micrograms == 0 {
            return Err(bad("the grams must be above zero"));
        }
        Ok(Self { micrograms })
    }

    /// A package of `grams`: above zero, at most six decimals, below 10^9.
    pub fn from_grams(grams: Decimal) -> Result<Self, ProductError> {
        let bad = |reason| ProductError::InvalidPackageSize {
            value: grams.to_string(),
            reason,
        };
        if grams <= Decimal::ZERO {
            return Err(bad("the grams must be above zero"));
        }
        if usize::try_from(grams.normalize().scale()).map_or(true, |s| s > PACKAGE_DECIMALS_MAX) {
            return Err(bad("the grams may have at most 6 decimals"));
        }
        match decimal::to_micros(grams) {
            Some(micrograms) if micrograms < 1_000_000_000 * MICROGRAMS_PER_GRAM => {
                Ok(Self { micrograms })
            }
            _ => Err(bad("the grams must stay below 1000000000")),
        }
    }

    /// The size in grams, without trailing zeros.
    pub fn grams(self) -> Decimal {
        decimal::from_micros(self.micrograms)
    }
}

/// The wire form: `PACKAGE250G`, `PACKAGE13_2G`.
impl fmt::Display for PackageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let integer = self.micrograms / MICROGRAMS_PER_GRAM;
        let fraction = self.micrograms % MICROGRAMS_PER_GRAM;
        if fraction == 0 {
            write!(f, "PACKAGE{integer}G")
        } else {
            let digits = format!("{fraction:06}");
            write!(f, "PACKAGE{integer}_{}G", digits.trim_end_matches('0'))
        }
    }
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Value of at most nine (integer) or six (fraction) ASCII digits: cannot overflow.
fn parse_digits(s: &str) -> i64 {
    s.bytes().fold(0, |acc: i64, b| {
        acc.saturating_mul(10)
            .saturating_add(i64::from(b.saturating_sub(b'0')))
    })
}

/// One sellable form of a product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    pub sku: Sku,
    pub package_size: PackageSize,
}

impl Variant {
    /// A variant from the text of its fields, outside a request (seeds, tests): a request's
    /// variants are parsed by [`ProductInput::parse`], which names their paths.
    pub fn parse(sku: &str, package_size: &str) -> Result<Self, ProductError> {
        Ok(Self {
            sku: Sku::parse(sku)?,
            package_size: PackageSize::parse(package_size)?,
        })
    }
}

/// One product of a `syncProducts` batch, checked for shape: what the client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductInput {
    external_id: String,
    name: String,
    variants: Vec<Variant>,
}

impl ProductInput {
    /// Step one of `syncProducts` for the product at `at` in the request (`[2]`: the batch's third item), from its
    /// wire fields (package sizes parsed by the transport, like every enum name): each
    /// variant's SKU, then the texts and the SKUs' uniqueness ([`ProductInput::new`]); all 400,
    /// naming the field by its path.
    pub fn parse<'a>(
        at: &FieldPath,
        external_id: &str,
        name: &str,
        variants: impl IntoIterator<Item = (&'a str, PackageSize)>,
    ) -> Result<Self, ProductError> {
        let variants = variants
            .into_iter()
            .enumerate()
            .map(|(i, (sku, package_size))| {
                Ok(Variant {
                    sku: Sku::parse_at(at.clone().key("variants").index(i).key("sku"), sku)?,
                    package_size,
                })
            })
            .collect::<Result<Vec<_>, ProductError>>()?;
        Self::new(at, external_id, name, variants)
    }

    /// Refuses blank or overlong text, naming it by its path under `at`, and a SKU listed twice
    /// (all 400 `invalid_parameter`).
    pub fn new(
        at: &FieldPath,
        external_id: &str,
        name: &str,
        variants: Vec<Variant>,
    ) -> Result<Self, ProductError> {
        let external_id = text::required(
            at.clone().key("externalId"),
            external_id,
            text::EXTERNAL_ID_MAX,
        )?;
        let name = text::required(at.clone().key("name"), name, text::NAME_MAX)?;
        let mut seen = HashSet::with_capacity(variants.len());
        for variant in &variants {
            if !seen.insert(&variant.sku) {
                return Err(ProductError::DuplicateSku {
                    external_id,
                    sku: variant.sku.to_string(),
                });
            }
        }
        Ok(Self {
            external_id,
            name,
            variants,
        })
    }

    pub fn external_id(&self) -> &str {
        &self.external_id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn variants(&self) -> &[Variant] {
        &self.variants
    }

    /// Checks that no SKU of this input belongs to another product. `owner_of` gives the external
    /// id of the product that owns a SKU in the store, if any.
    pub fn check_sku_owners(
        &self,
        owner_of: impl Fn(&Sku) -> Option<String>,
    ) -> Result<(), ProductError> {
        for variant in &self.variants {
            if let Some(owner) = owner_of(&variant.sku)
                && owner != self.external_id
            {
                return Err(ProductError::SkuOwnedByOther {
                    external_id: self.external_id.clone(),
                    sku: variant.sku.to_string(),
                    owner,
                });
            }
        }
        Ok(())
    }
}

/// A product and every variant it ever had.
///
/// Fields are public so that the store can rebuild stored products; changes go through
/// [`Product::sync`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    pub id: Uuid,
    pub external_id: String,
    pub name: String,
    /// In the order they were first synced.
    pub variants: Vec<Variant>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Product {
    /// A new product. SKU ownership is checked by [`ProductInput::check_sku_owners`].
    pub fn create(input: &ProductInput, id: Uuid, now: DateTime<Utc>) -> Self {
        Self {
            id,
            external_id: input.external_id.clone(),
            name: input.name.clone(),
            variants: input.variants.clone(),
            created_at: now,
            updated_at: now,
        }
    }

    /// Brings this product in step with `input`: takes its name, adds its new variants, keeps the
    /// variants it does not list. Returns whether anything changed. Refuses, changing nothing, when
    /// an input variant has a stored SKU with another package size.
    pub fn sync(&mut self, input: &ProductInput, now: DateTime<Utc>) -> Result<bool, ProductError> {
        let mut added = Vec::new();
        for variant in &input.variants {
            match self.variants.iter().find(|v| v.sku == variant.sku) {
                Some(stored) if stored.package_size != variant.package_size => {
                    return Err(ProductError::VariantChanged {
                        external_id: self.external_id.clone(),
                        sku: variant.sku.to_string(),
                        stored: stored.package_size,
                        given: variant.package_size,
                    });
                }
                Some(_) => {}
                None => added.push(variant.clone()),
            }
        }
        let renamed = self.name != input.name;
        if !renamed && added.is_empty() {
            return Ok(false);
        }
        self.name.clone_from(&input.name);
        self.variants.extend(added);
        self.updated_at = now;
        Ok(true)
    }
}

/// Judges a whole `syncProducts` batch without I/O.
///
/// `existing` gives the stored product of an external id; `owner_of` the external id of the
/// product owning a SKU in the store; `new_id` an id for each product to create. Either every item
/// passes and comes back as the product it will be, or every failing item comes back with the
/// first rule it broke.
pub fn plan_products<'a>(
    inputs: &[ProductInput],
    existing: impl Fn(&str) -> Option<&'a Product>,
    owner_of: impl Fn(&Sku) -> Option<String>,
    now: DateTime<Utc>,
    mut new_id: impl FnMut() -> Uuid,
) -> Result<Vec<Planned<Product>>, Vec<ItemFailure<ProductError>>> {
    let repeats = bulk::earlier_occurrences(inputs.iter().map(ProductInput::external_id));
    // Which product of the batch named each SKU first.
    let mut claims: HashMap<&Sku, (usize, &str)> = HashMap::new();
    for (index, input) in inputs.iter().enumerate() {
        for variant in &input.variants {
            claims
                .entry(&variant.sku)
                .or_insert((index, input.external_id()));
        }
    }
    bulk::judge(inputs, ProductInput::external_id, |index, input| {
        input.check_sku_owners(&owner_of)?;
        let planned = match existing(input.external_id()) {
            Some(stored) => {
                let mut product = stored.clone();
                let change = if product.sync(input, now)? {
                    Change::Updated
                } else {
                    Change::Unchanged
                };
                Planned {
                    record: product,
                    change,
                }
            }
            None => Planned {
                record: Product::create(input, new_id(), now),
                change: Change::Created,
            },
        };
        for variant in &input.variants {
            // Every sku of the batch was claimed above.
            let Some(&(first_index, owner)) = claims.get(&variant.sku) else {
                continue;
            };
            if owner != input.external_id() {
                return Err(ProductError::SkuClaimedInBatch {
                    external_id: input.external_id.clone(),
                    sku: variant.sku.to_string(),
                    owner: owner.to_owned(),
                    first_index,
                });
            }
        }
        if let Some(first_index) = repeats.get(index).copied().flatten() {
            return Err(ProductError::DuplicateExternalId {
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
    use proptest::prelude::*;
    use std::str::FromStr;

    fn size(s: &str) -> PackageSize {
        PackageSize::parse(s).unwrap()
    }

    fn variant(sku: &str, size: &str) -> Variant {
        Variant::parse(sku, size).unwrap()
    }

    fn input(external_id: &str, name: &str, variants: &[(&str, &str)]) -> ProductInput {
        let variants = variants.iter().map(|(s, p)| variant(s, p)).collect();
        ProductInput::new(&FieldPath::ROOT.index(0), external_id, name, variants).unwrap()
    }

    #[test]
    fn parsing_a_product_checks_its_variants_before_its_texts() {
        let parsed = ProductInput::parse(
            &FieldPath::ROOT.index(0),
            " P-1 ",
            "Guji",
            [
                ("GUJI-250", size("PACKAGE250G")),
                ("GUJI-13", size("PACKAGE13_2G")),
            ],
        )
        .unwrap();
        assert_eq!(parsed.external_id(), "P-1");
        assert_eq!(parsed.variants()[1], variant("GUJI-13", "PACKAGE13_2G"));
        // A blank name and a blank sku: the variant is named first, by its path.
        let err = ProductInput::parse(
            &FieldPath::ROOT.index(2),
            "P-1",
            " ",
            [(" ", size("PACKAGE250G"))],
        )
        .unwrap_err();
        assert_eq!(
            err,
            ProductError::Text(TextError::Empty {
                field: FieldPath::from("[2].variants[0].sku")
            })
        );
        let err = ProductInput::parse(
            &FieldPath::ROOT.index(2),
            "P-1",
            " ",
            [("GUJI-250", size("PACKAGE250G"))],
        )
        .unwrap_err();
        assert_eq!(
            err,
            ProductError::Text(TextError::Empty {
                field: FieldPath::from("[2].name")
            })
        );
        let err = ProductInput::parse(
            &FieldPath::ROOT.index(0),
            "P-1",
            "Guji",
            [("A", size("PACKAGE1G")), ("A", size("PACKAGE2G"))],
        )
        .unwrap_err();
        assert_eq!(
            err,
            ProductError::DuplicateSku {
                external_id: "P-1".into(),
                sku: "A".into()
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    fn stored(external_id: &str, variants: &[(&str, &str)]) -> Product {
        Product::create(
            &input(external_id, "Guji", variants),
            Uuid::from_u128(1),
            at(0),
        )
    }

    // --- PackageSize -------------------------------------------------------------------------

    #[test]
    fn package_sizes_parse_whole_and_decimal_grams() {
        assert_eq!(size("PACKAGE250G").grams(), Decimal::from(250));
        assert_eq!(
            size("PACKAGE13_2G").grams(),
            Decimal::from_str("13.2").unwrap()
        );
        assert_eq!(
            size("PACKAGE0_5G").grams(),
            Decimal::from_str("0.5").unwrap()
        );
        assert_eq!(
            size("PACKAGE1_000001G").grams(),
            Decimal::from_str("1.000001").unwrap()
        );
        assert_eq!(
            size("PACKAGE999999999G").grams(),
            Decimal::from(999_999_999)
        );
    }

    #[test]
    fn package_sizes_format_back_to_their_wire_form() {
        for wire in [
            "PACKAGE250G",
            "PACKAGE13_2G",
            "PACKAGE0_5G",
            "PACKAGE1000_05G",
        ] {
            assert_eq!(size(wire).to_string(), wire);
        }
    }

    #[test]
    fn package_sizes_outside_the_canonical_form_are_invalid_parameters() {
        for wire in [
            "",
            "PACKAGE",
            "PACKAGEG",
            "PACKAGE250",
            "250G",
            "package250g",
            "PACKAGE250g",
            "PACKAGE_2G",
            "PACKAGE2_G",
            "PACKAGE1_2_3G",
            "PACKAGE0250G",
            "PACKAGE00G",
            "PACKAGE13_20G",
            "PACKAGE250_0G",
            "PACKAGE-250G",
            "PACKAGE+250G",
            "PACKAGE 250G",
            "PACKAGE13.2G",
            "PACKAGE0G",
            "PACKAGE0_0G",
            "PACKAGE1_0000001G",
            "PACKAGE1000000000G",
            "PACKAGE２５０G",
        ] {
            let err = PackageSize::parse(wire).unwrap_err();
            assert!(
                matches!(err, ProductError::InvalidPackageSize { .. }),
                "{wire}"
            );
            assert_eq!(err.violation(), Violation::InvalidParameter, "{wire}");
        }
    }

    #[test]
    fn package_size_messages_name_the_value_and_the_form() {
        let message = PackageSize::parse("PACKAGE0250G").unwrap_err().to_string();
        assert!(message.contains("PACKAGE0250G"), "{message}");
        assert!(message.contains("leading zeros"), "{message}");
    }

    #[test]
    fn package_sizes_from_grams_must_be_positive_and_exact_to_six_decimals() {
        let d = |s| Decimal::from_str(s).unwrap();
        assert_eq!(
            PackageSize::from_grams(d("13.20")).unwrap(),
            size("PACKAGE13_2G")
        );
        assert!(PackageSize::from_grams(d("0")).is_err());
        assert!(PackageSize::from_grams(d("-1")).is_err());
        assert!(PackageSize::from_grams(d("0.0000001")).is_err());
        assert!(PackageSize::from_grams(d("1000000000")).is_err());
    }

    proptest! {
        #[test]
        fn package_size_format_and_parse_round_trip(micrograms in 1_i64..1_000_000_000_000_000) {
            let grams = decimal::from_micros(micrograms);
            let size = PackageSize::from_grams(grams).unwrap();
            let wire = size.to_string();
            prop_assert_eq!(PackageSize::parse(&wire).unwrap(), size);
            prop_assert_eq!(size.grams(), grams);
        }

        #[test]
        fn canonical_wire_forms_parse_and_format_unchanged(
            wire in "PACKAGE(0|[1-9][0-9]{0,8})(_[0-9]{0,5}[1-9])?G"
        ) {
            prop_assume!(wire != "PACKAGE0G");
            prop_assert_eq!(PackageSize::parse(&wire).unwrap().to_string(), wire);
        }
    }

    // --- Input shape -------------------------------------------------------------------------

    #[test]
    fn a_sku_listed_twice_in_one_product_is_an_invalid_parameter() {
        let err = ProductInput::new(
            &FieldPath::ROOT.index(0),
            "p-1",
            "Guji",
            vec![
                variant("GUJI-250", "PACKAGE250G"),
                variant("GUJI-250", "PACKAGE250G"),
            ],
        )
        .unwrap_err();
        assert_eq!(
            err,
            ProductError::DuplicateSku {
                external_id: "p-1".into(),
                sku: "GUJI-250".into()
            }
        );
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn products_need_an_external_id_a_name_and_valid_skus() {
        assert_eq!(
            ProductInput::new(&FieldPath::ROOT.index(4), " ", "Guji", vec![]),
            Err(ProductError::Text(TextError::Empty {
                field: FieldPath::from("[4].externalId")
            }))
        );
        assert!(ProductInput::new(&FieldPath::ROOT.index(0), "p-1", "", vec![]).is_err());
        assert!(Variant::parse("  ", "PACKAGE250G").is_err());
        assert_eq!(
            Variant::parse(" GUJI-250 ", "PACKAGE250G")
                .unwrap()
                .sku
                .as_str(),
            "GUJI-250"
        );
    }

    // --- Sync rules --------------------------------------------------------------------------

    #[test]
    fn a_new_product_is_created_with_its_variants() {
        let product = Product::create(
            &input("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]),
            Uuid::from_u128(7),
            at(5),
        );
        assert_eq!(product.id, Uuid::from_u128(7));
        assert_eq!(product.external_id, "p-1");
        assert_eq!(product.variants, vec![variant("GUJI-250", "PACKAGE250G")]);
        assert_eq!((product.created_at, product.updated_at), (at(5), at(5)));
    }

    #[test]
    fn sync_may_rename_a_product() {
        let mut product = stored("p-1", &[("GUJI-250", "PACKAGE250G")]);
        let changed = product
            .sync(&input("p-1", "Guji Natural", &[]), at(9))
            .unwrap();
        assert!(changed);
        assert_eq!(product.name, "Guji Natural");
        assert_eq!(product.updated_at, at(9));
        assert_eq!(product.created_at, at(0));
    }

    #[test]
    fn sync_adds_new_variants_after_the_stored_ones() {
        let mut product = stored("p-1", &[("GUJI-250", "PACKAGE250G")]);
        let changed = product
            .sync(
                &input(
                    "p-1",
                    "Guji",
                    &[("GUJI-1000", "PACKAGE1000G"), ("GUJI-250", "PACKAGE250G")],
                ),
                at(9),
            )
            .unwrap();
        assert!(changed);
        assert_eq!(
            product.variants,
            vec![
                variant("GUJI-250", "PACKAGE250G"),
                variant("GUJI-1000", "PACKAGE1000G")
            ]
        );
    }

    #[test]
    fn sync_keeps_variants_missing_from_the_input() {
        let mut product = stored(
            "p-1",
            &[("GUJI-250", "PACKAGE250G"), ("GUJI-1000", "PACKAGE1000G")],
        );
        let changed = product
            .sync(&input("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]), at(9))
            .unwrap();
        assert!(!changed);
        assert_eq!(product.variants.len(), 2);
    }

    #[test]
    fn changing_the_package_size_of_a_stored_variant_is_a_conflict_and_changes_nothing() {
        let mut product = stored("p-1", &[("GUJI-250", "PACKAGE250G")]);
        let before = product.clone();
        let err = product
            .sync(
                &input(
                    "p-1",
                    "Renamed",
                    &[("GUJI-NEW", "PACKAGE500G"), ("GUJI-250", "PACKAGE13_2G")],
                ),
                at(9),
            )
            .unwrap_err();
        assert_eq!(
            err,
            ProductError::VariantChanged {
                external_id: "p-1".into(),
                sku: "GUJI-250".into(),
                stored: size("PACKAGE250G"),
                given: size("PACKAGE13_2G"),
            }
        );
        assert_eq!(err.violation(), Violation::Conflict);
        assert!(err.to_string().contains("PACKAGE250G"));
        assert_eq!(product, before);
    }

    #[test]
    fn syncing_the_same_input_twice_changes_nothing() {
        let same = input("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]);
        let mut product = Product::create(&same, Uuid::from_u128(1), at(0));
        let before = product.clone();
        assert!(!product.sync(&same, at(9)).unwrap());
        assert_eq!(product, before);
    }

    #[test]
    fn a_sku_owned_by_another_product_is_a_conflict() {
        let claim = input("p-2", "Sidamo", &[("GUJI-250", "PACKAGE250G")]);
        let err = claim
            .check_sku_owners(|sku| (sku.as_str() == "GUJI-250").then(|| "p-1".to_owned()))
            .unwrap_err();
        assert_eq!(
            err,
            ProductError::SkuOwnedByOther {
                external_id: "p-2".into(),
                sku: "GUJI-250".into(),
                owner: "p-1".into()
            }
        );
        assert_eq!(err.violation(), Violation::Conflict);
    }

    #[test]
    fn skus_owned_by_the_product_itself_or_by_nobody_are_fine() {
        let claim = input(
            "p-1",
            "Guji",
            &[("GUJI-250", "PACKAGE250G"), ("NEW", "PACKAGE1G")],
        );
        assert!(
            claim
                .check_sku_owners(|sku| (sku.as_str() == "GUJI-250").then(|| "p-1".to_owned()))
                .is_ok()
        );
    }

    // --- Batch -------------------------------------------------------------------------------

    #[test]
    fn a_clean_batch_plans_creates_updates_and_unchanged_products() {
        let p1 = stored("p-1", &[("GUJI-250", "PACKAGE250G")]);
        let p2 = stored("p-2", &[("SID-250", "PACKAGE250G")]);
        let store = [p1.clone(), p2.clone()];
        let owners: HashMap<&str, &str> = [("GUJI-250", "p-1"), ("SID-250", "p-2")].into();
        let batch = [
            input("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]),
            input("p-2", "Sidamo", &[("SID-1000", "PACKAGE1000G")]),
            input("p-3", "Yirga", &[("YIR-250", "PACKAGE250G")]),
        ];
        let mut ids = (100..).map(Uuid::from_u128);
        let planned = plan_products(
            &batch,
            |ext| store.iter().find(|p| p.external_id == ext),
            |sku| owners.get(sku.as_str()).map(|o| (*o).to_owned()),
            at(9),
            || ids.next().unwrap(),
        )
        .unwrap();
        let changes: Vec<Change> = planned.iter().map(|p| p.change).collect();
        assert_eq!(
            changes,
            vec![Change::Unchanged, Change::Updated, Change::Created]
        );
        assert_eq!(planned[0].record, p1);
        assert_eq!(planned[1].record.variants.len(), 2);
        assert_eq!(planned[1].record.name, "Sidamo");
        assert_eq!(planned[2].record.id, Uuid::from_u128(100));
    }

    #[test]
    fn a_batch_with_bad_items_reports_every_failing_item() {
        let p1 = stored("p-1", &[("GUJI-250", "PACKAGE250G")]);
        let store = [p1];
        let batch = [
            // 0: fine
            input("p-1", "Guji", &[("GUJI-250", "PACKAGE250G")]),
            // 1: changes a stored variant (and repeats p-1: the first rule broken is reported)
            input("p-1", "Guji", &[("GUJI-250", "PACKAGE500G")]),
            // 2: takes a SKU of a stored product
            input("p-2", "Sidamo", &[("GUJI-250", "PACKAGE250G")]),
            // 3: fine, claims NEW first
            input("p-3", "Yirga", &[("NEW", "PACKAGE250G")]),
            // 4: claims NEW too
            input("p-4", "Kochere", &[("NEW", "PACKAGE250G")]),
            // 5: repeats p-3
            input("p-3", "Yirga", &[("NEW", "PACKAGE250G")]),
        ];
        let failures = plan_products(
            &batch,
            |ext| store.iter().find(|p| p.external_id == ext),
            |sku| (sku.as_str() == "GUJI-250").then(|| "p-1".to_owned()),
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
                (1, "p-1", Violation::Conflict),
                (2, "p-2", Violation::Conflict),
                (4, "p-4", Violation::Conflict),
                (5, "p-3", Violation::Conflict),
            ]
        );
        assert!(matches!(
            failures[0].error,
            ProductError::VariantChanged { .. }
        ));
        assert!(matches!(
            failures[1].error,
            ProductError::SkuOwnedByOther { .. }
        ));
        assert_eq!(
            failures[2].error,
            ProductError::SkuClaimedInBatch {
                external_id: "p-4".into(),
                sku: "NEW".into(),
                owner: "p-3".into(),
                first_index: 3
            }
        );
        assert_eq!(
            failures[3].error,
            ProductError::DuplicateExternalId {
                external_id: "p-3".into(),
                first_index: 3
            }
        );
    }
}
