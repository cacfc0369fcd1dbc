//! The due diligence statement (DDS) as the EU's EUDR information system takes it (V3), and the
//! words the system answers with: statuses and verification outcomes.
//!
//! These are plain values: how a statement is assembled from source lots, and which EU rules it
//! must meet, live beside them; how it is written as SOAP lives in the outbound adapter.

use rust_decimal::Decimal;

/// What the operator does with the goods (`activityType`; V3 has no `TRADE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActivityType {
    Import,
    Domestic,
    Export,
}

impl ActivityType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Import => "IMPORT",
            Self::Domestic => "DOMESTIC",
            Self::Export => "EXPORT",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "IMPORT" => Some(Self::Import),
            "DOMESTIC" => Some(Self::Domestic),
            "EXPORT" => Some(Self::Export),
            _ => None,
        }
    }
}

/// Who files (`operatorRole`). Roastery files as the operator itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperatorRole {
    Operator,
    RepresentativeOperator,
}

impl OperatorRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Operator => "OPERATOR",
            Self::RepresentativeOperator => "REPRESENTATIVE_OPERATOR",
        }
    }
}

/// One statement, as submitted or amended (`DueDiligenceStatementBaseType`), in the XSD's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsStatement {
    /// ≤ 35 letters, digits, `-`, `_` (the IS generates one when absent).
    pub internal_reference_number: Option<String>,
    pub activity_type: ActivityType,
    /// An EU member state code (`EuropeanCountry`).
    pub country_of_activity: Option<String>,
    pub border_cross_country: Option<String>,
    /// ≤ 2,000 characters.
    pub comment: Option<String>,
    /// 1..=100 commodities.
    pub commodities: Vec<DdsCommodity>,
    pub geo_location_confidential: bool,
}

/// One commodity of a statement (`DdsCommodityType`): Roastery sends one per source lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsCommodity {
    pub position: i64,
    /// `descriptors/descriptionOfGoods`, ≤ 150 characters.
    pub description_of_goods: String,
    /// `descriptors/goodsMeasure/netWeight`, in kg, at most 6 decimals.
    pub net_weight_kg: Decimal,
    /// `hsHeading`, `[0-9]{2,6}`.
    pub hs_heading: String,
    /// 0..=1,000 producers.
    pub producers: Vec<DdsProducer>,
}

/// One producer of a commodity (`DdsProducerType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsProducer {
    pub position: Option<i64>,
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// ≤ 500 characters.
    pub name: Option<String>,
    /// The UTF-8 text of a GeoJSON `FeatureCollection` of this producer's plots; the SOAP client
    /// sends it base64-encoded as `geometryGeojson`.
    pub geometry_geojson: String,
}

/// Longest reference number the IS issues (`ReferenceNumber`).
pub const REFERENCE_NUMBER_MAX: usize = 14;
/// Shortest and longest verification number (`VerificationNumber`).
pub const VERIFICATION_NUMBER_MIN: usize = 5;
pub const VERIFICATION_NUMBER_MAX: usize = 35;

/// Why a reference number is not of the IS's form (1–14 upper-case letters or digits), if not.
pub fn reference_number_problem(text: &str) -> Option<String> {
    let ok = (1..=REFERENCE_NUMBER_MAX).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    (!ok).then(|| {
        format!(
            "`{text}` is not a reference number of the EU information system (1 to \
             {REFERENCE_NUMBER_MAX} upper-case letters or digits)"
        )
    })
}

/// Why a verification number is not of the IS's form (5–35 letters or digits), if not.
pub fn verification_number_problem(text: &str) -> Option<String> {
    let ok = (VERIFICATION_NUMBER_MIN..=VERIFICATION_NUMBER_MAX).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric());
    (!ok).then(|| {
        format!(
            "`{text}` is not a verification number of the EU information system \
             ({VERIFICATION_NUMBER_MIN} to {VERIFICATION_NUMBER_MAX} letters or digits)"
        )
    })
}

/// A statement's status in the IS (`EudrStatus`). New values may appear: they are kept as text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EudrStatus {
    Submitted,
    Available,
    Rejected,
    Withdrawn,
    Archived,
    Suspended,
    Updated,
    Grouped,
    Obsolete,
    Other(String),
}

impl EudrStatus {
    pub fn parse(text: &str) -> Self {
        match text {
            "SUBMITTED" => Self::Submitted,
            "AVAILABLE" => Self::Available,
            "REJECTED" => Self::Rejected,
            "WITHDRAWN" => Self::Withdrawn,
            "ARCHIVED" => Self::Archived,
            "SUSPENDED" => Self::Suspended,
            "UPDATED" => Self::Updated,
            "GROUPED" => Self::Grouped,
            "OBSOLETE" => Self::Obsolete,
            other => Self::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Submitted => "SUBMITTED",
            Self::Available => "AVAILABLE",
            Self::Rejected => "REJECTED",
            Self::Withdrawn => "WITHDRAWN",
            Self::Archived => "ARCHIVED",
            Self::Suspended => "SUSPENDED",
            Self::Updated => "UPDATED",
            Self::Grouped => "GROUPED",
            Self::Obsolete => "OBSOLETE",
            Self::Other(text) => text,
        }
    }
}

/// What `verifyDeclaration` says of a reference and verification number pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VerificationResult {
    ExistingUsable,
    ExistingNonUsable,
    NonExistent,
}

impl VerificationResult {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ExistingUsable => "EXISTING_USABLE",
            Self::ExistingNonUsable => "EXISTING_NON_USABLE",
            Self::NonExistent => "NON_EXISTENT",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "EXISTING_USABLE" => Some(Self::ExistingUsable),
            "EXISTING_NON_USABLE" => Some(Self::ExistingNonUsable),
            "NON_EXISTENT" => Some(Self::NonExistent),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_status_is_kept_as_its_text() {
        let status = EudrStatus::parse("UNDER_REVIEW");
        assert_eq!(status, EudrStatus::Other("UNDER_REVIEW".to_owned()));
        assert_eq!(status.as_str(), "UNDER_REVIEW");
        assert_eq!(EudrStatus::parse("AVAILABLE"), EudrStatus::Available);
    }

    #[test]
    fn words_read_back_as_written() {
        for activity in [
            ActivityType::Import,
            ActivityType::Domestic,
            ActivityType::Export,
        ] {
            assert_eq!(ActivityType::parse(activity.as_str()), Some(activity));
        }
        for result in [
            VerificationResult::ExistingUsable,
            VerificationResult::ExistingNonUsable,
            VerificationResult::NonExistent,
        ] {
            assert_eq!(VerificationResult::parse(result.as_str()), Some(result));
        }
        assert_eq!(ActivityType::parse("TRADE"), None);
    }

    #[test]
    fn statement_numbers_follow_the_eu_forms() {
        assert_eq!(reference_number_problem("26BE7XTVCZAQ2S"), None);
        assert_eq!(reference_number_problem("S"), None);
        for bad in ["", "26be7xtvczaq2s", "26BE7XTVCZAQ2SX", "26BE-7"] {
            assert!(reference_number_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(verification_number_problem("SFFCB4Y3"), None);
        assert_eq!(verification_number_problem("abcde"), None);
        for bad in ["ABCD", &"A".repeat(36), "ABC-DE"] {
            assert!(verification_number_problem(bad).is_some(), "{bad}");
        }
    }
}
