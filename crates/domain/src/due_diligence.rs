//! EUDR due diligence of a source green lot (api-decisions §12): the HS code, country and period
//! of production, the plots of land ([`crate::geojson`]), the suppliers and the due diligence
//! statements. Only source lots carry it ([`is_source`]); every other lot answers with the
//! statements of its sources. A lot's due diligence is complete when it has at least one
//! statement ([`missing`]).
//!
//! Parsing checks every field and names it by its full path; nothing here reads a clock.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::field::FieldPath;
use crate::geojson::{Plots, PlotsError, json_string, write_properties};
use crate::stored_plots::StoredPlots;
use crate::violation::{BrokenRule, Violation};

/// The HS code when none is given: coffee, not roasted, not decaffeinated.
pub const DEFAULT_HS_CODE: &str = "090111";
pub const SUPPLIER_NAME_MAX: usize = 200;
/// Longest address or e-mail of a supplier (the contract sets none; this keeps rows bounded).
pub const SUPPLIER_TEXT_MAX: usize = 500;
/// Most suppliers or statements one lot may list.
pub const LIST_MAX: usize = 100;
pub const REFERENCE_MAX: usize = 50;
/// The most stored due diligence (its JSON, plots included: about what it adds to an answer) one
/// `getDueDiligence` answer carries, and one page of `getGreenLotDetailsByIds`: 4 MiB. A report
/// over more is refused naming its source lots, which are asked for one by one; a page of lot
/// details ends early (its cursor goes on).
pub const ANSWER_DOCUMENT_MAX: u64 = 4 * 1024 * 1024;

static ALPHA2: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    iso_country::data::all()
        .into_iter()
        .map(|country| country.alpha2)
        .collect()
});

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DueDiligenceError {
    /// A field breaks its format or range.
    #[error("{field}: {problem}")]
    Invalid { field: FieldPath, problem: String },
    #[error(transparent)]
    Plots(#[from] PlotsError),
    /// Due diligence belongs on the lots where coffee entered the business.
    #[error(
        "green lot {lot} was made by a transfer and is not a source lot; set its due diligence \
         on its source green lot {source_lot} ({source_id})"
    )]
    NotASource {
        lot: String,
        source_lot: String,
        source_id: Uuid,
    },
    /// `ROASTERY_EUDR_ENFORCE=ship`: a shipment needs complete due diligence behind every lot.
    #[error(
        "due diligence is required before shipping (EUDR enforcement is on) and is incomplete \
         for {}; nothing was shipped",
        describe(.0)
    )]
    Incomplete(Vec<Missing>),
    /// The report's plots would make an answer over [`ANSWER_DOCUMENT_MAX`].
    #[error(
        "the due diligence behind this lot or order is {size} characters of JSON in {} source \
         green lots, more than the {ANSWER_DOCUMENT_MAX} one answer carries; ask \
         inventory.trace.getDueDiligence for each source green lot (filter.lotId), or read them \
         page by page with inventory.green.getGreenLotDetailsByIds: {}",
        .lots.len(),
        .lots.iter().map(|l| format!("{} ({})", l.lot_number, l.id)).collect::<Vec<_>>().join(", ")
    )]
    TooLarge { size: u64, lots: Vec<SourceLot> },
}

fn describe(missing: &[Missing]) -> String {
    missing
        .iter()
        .map(|m| {
            format!(
                "green lot {} ({}: {})",
                m.lot_number,
                m.id,
                m.reason.as_str()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl BrokenRule for DueDiligenceError {
    fn violation(&self) -> Violation {
        match self {
            Self::Invalid { .. } | Self::Plots(_) => Violation::InvalidParameter,
            Self::NotASource { .. } | Self::Incomplete(_) | Self::TooLarge { .. } => {
                Violation::BusinessRule
            }
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Invalid { field, .. } => field.rebase(base),
            Self::Plots(e) => e.rebase(base),
            Self::NotASource { .. } | Self::Incomplete(_) | Self::TooLarge { .. } => {}
        }
    }
}

fn invalid(field: &FieldPath, problem: impl Into<String>) -> DueDiligenceError {
    DueDiligenceError::Invalid {
        field: field.clone(),
        problem: problem.into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StatementKind {
    Dds,
    SimplifiedDeclaration,
}

impl StatementKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dds => "DDS",
            Self::SimplifiedDeclaration => "SIMPLIFIED_DECLARATION",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "DDS" => Some(Self::Dds),
            "SIMPLIFIED_DECLARATION" => Some(Self::SimplifiedDeclaration),
            _ => None,
        }
    }
}

/// Who filed a statement: this business, or the supplier upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StatementRole {
    Own,
    Upstream,
}

impl StatementRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Own => "OWN",
            Self::Upstream => "UPSTREAM",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "OWN" => Some(Self::Own),
            "UPSTREAM" => Some(Self::Upstream),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Statement {
    pub reference_number: String,
    pub verification_number: Option<String>,
    pub kind: StatementKind,
    pub role: StatementRole,
    /// What the EU information system last said of it (api-decisions §14); absent in documents
    /// stored before.
    #[serde(default)]
    pub verification: Option<Verification>,
}

/// The outcome of the EU information system's `verifyDeclaration` for a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// `EXISTING_USABLE`, `EXISTING_NON_USABLE` or `NON_EXISTENT`.
    pub result: String,
    /// The statement's status in the IS, if it told one.
    pub status: Option<String>,
    pub checked_date: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Supplier {
    pub name: String,
    pub address: Option<String>,
    pub email: Option<String>,
    pub country: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProductionPeriod {
    pub from: NaiveDate,
    pub to: NaiveDate,
}

/// The due diligence of a source green lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDiligence {
    pub hs_code: String,
    pub country_of_production: String,
    pub production_period: ProductionPeriod,
    /// As stored: answered as text, decoded only to be checked or drawn.
    pub plots: StoredPlots,
    pub suppliers: Vec<Supplier>,
    pub statements: Vec<Statement>,
    pub updated_date: DateTime<Utc>,
}

/// A supplier as sent; `name` is required (the adapter reports its absence).
#[derive(Debug, Clone, Default)]
pub struct SupplierInput {
    pub name: String,
    pub address: Option<String>,
    pub email: Option<String>,
    pub country: Option<String>,
}

/// A statement as sent; all but `verification_number` are required.
#[derive(Debug, Clone, Default)]
pub struct StatementInput {
    pub reference_number: String,
    pub verification_number: Option<String>,
    pub kind: String,
    pub role: String,
}

/// `setDueDiligence`'s `data` as sent.
#[derive(Debug, Clone, Default)]
pub struct DueDiligenceInput {
    pub country_of_production: String,
    pub production_from: String,
    pub production_to: String,
    /// The `FeatureCollection`'s JSON text, as sent.
    pub plots: String,
    pub suppliers: Vec<SupplierInput>,
    pub statements: Vec<StatementInput>,
    pub hs_code: Option<String>,
}

/// A checked due diligence, waiting for its lot and time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDiligenceDraft {
    pub hs_code: String,
    pub country_of_production: String,
    pub production_period: ProductionPeriod,
    pub plots: Plots,
    pub suppliers: Vec<Supplier>,
    pub statements: Vec<Statement>,
}

fn country(code: &str, field: &FieldPath) -> Result<String, DueDiligenceError> {
    if code.len() == 2 && ALPHA2.contains(code) {
        Ok(code.to_owned())
    } else {
        Err(invalid(
            field,
            format!(
                "`{code}` is not an ISO 3166-1 alpha-2 country code in upper case (e.g. CO, ET)"
            ),
        ))
    }
}

fn date(text: &str, field: &FieldPath) -> Result<NaiveDate, DueDiligenceError> {
    let parsed = (text.len() == 10)
        .then(|| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .flatten();
    parsed.ok_or_else(|| invalid(field, format!("`{text}` is not a date YYYY-MM-DD")))
}

fn bounded(
    text: Option<String>,
    field: &FieldPath,
    max: usize,
) -> Result<Option<String>, DueDiligenceError> {
    match text {
        Some(t) if t.chars().count() > max => Err(invalid(
            field,
            format!(
                "is {} characters long; at most {max} are accepted",
                t.chars().count()
            ),
        )),
        other => Ok(other),
    }
}

fn reference(text: &str, field: &FieldPath) -> Result<String, DueDiligenceError> {
    if (1..=REFERENCE_MAX).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        Ok(text.to_owned())
    } else {
        Err(invalid(
            field,
            format!("`{text}` must be 1 to {REFERENCE_MAX} letters or digits"),
        ))
    }
}

/// New statement numbers follow the EU information system's forms (api-decisions §14).
fn eu_numbers(
    reference_number: &str,
    verification_number: Option<&str>,
    field: &FieldPath,
) -> Result<(), DueDiligenceError> {
    if let Some(problem) = crate::dds::reference_number_problem(reference_number) {
        return Err(invalid(&field.clone().key("referenceNumber"), problem));
    }
    if let Some(problem) = verification_number.and_then(crate::dds::verification_number_problem) {
        return Err(invalid(&field.clone().key("verificationNumber"), problem));
    }
    Ok(())
}

fn list_bound(len: usize, field: &FieldPath) -> Result<(), DueDiligenceError> {
    if len > LIST_MAX {
        return Err(invalid(
            field,
            format!("holds {len} entries; at most {LIST_MAX} are accepted"),
        ));
    }
    Ok(())
}

impl DueDiligenceDraft {
    /// Checks every field of `input`; errors name the field by its path in `input`.
    pub fn parse(input: DueDiligenceInput) -> Result<Self, DueDiligenceError> {
        let country_of_production = country(
            &input.country_of_production,
            &FieldPath::from("countryOfProduction"),
        )?;
        let from = date(
            &input.production_from,
            &FieldPath::from("productionPeriod.from"),
        )?;
        let to = date(
            &input.production_to,
            &FieldPath::from("productionPeriod.to"),
        )?;
        if from > to {
            return Err(invalid(
                &FieldPath::from("productionPeriod"),
                format!("from ({from}) is after to ({to})"),
            ));
        }
        let plots = Plots::parse(&input.plots, "plots")?;
        crate::eu_geolocation::check_new(&plots, &FieldPath::from("plots"))?;
        list_bound(input.suppliers.len(), &FieldPath::from("suppliers"))?;
        let suppliers = input
            .suppliers
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let field = FieldPath::ROOT.key("suppliers").index(i);
                let name = s.name.trim();
                if name.is_empty() {
                    return Err(invalid(&field.clone().key("name"), "must not be blank"));
                }
                let name = bounded(
                    Some(name.to_owned()),
                    &field.clone().key("name"),
                    SUPPLIER_NAME_MAX,
                )?
                .unwrap_or_default();
                Ok(Supplier {
                    name,
                    address: bounded(s.address, &field.clone().key("address"), SUPPLIER_TEXT_MAX)?,
                    email: bounded(s.email, &field.clone().key("email"), SUPPLIER_TEXT_MAX)?,
                    country: s
                        .country
                        .map(|c| country(&c, &field.clone().key("country")))
                        .transpose()?,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        list_bound(input.statements.len(), &FieldPath::from("statements"))?;
        let mut seen = HashSet::new();
        let statements = input
            .statements
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let field = FieldPath::ROOT.key("statements").index(i);
                let reference_number =
                    reference(&s.reference_number, &field.clone().key("referenceNumber"))?;
                eu_numbers(&reference_number, s.verification_number.as_deref(), &field)?;
                if !seen.insert(reference_number.clone()) {
                    return Err(invalid(
                        &field.clone().key("referenceNumber"),
                        format!("`{reference_number}` is listed twice; reference numbers are unique within a lot"),
                    ));
                }
                Ok(Statement {
                    reference_number,
                    verification_number: s
                        .verification_number
                        .map(|v| reference(&v, &field.clone().key("verificationNumber")))
                        .transpose()?,
                    kind: StatementKind::parse(&s.kind).ok_or_else(|| {
                        invalid(
                            &field.clone().key("kind"),
                            format!("`{}` is not DDS or SIMPLIFIED_DECLARATION", s.kind),
                        )
                    })?,
                    role: StatementRole::parse(&s.role).ok_or_else(|| {
                        invalid(
                            &field.clone().key("role"),
                            format!("`{}` is not OWN or UPSTREAM", s.role),
                        )
                    })?,
                    verification: None,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let hs_code = input.hs_code.unwrap_or_else(|| DEFAULT_HS_CODE.to_owned());
        if hs_code.len() != 6
            || !hs_code.starts_with("0901")
            || !hs_code.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(invalid(
                &FieldPath::from("hsCode"),
                format!("`{hs_code}` is not a six-digit HS code of coffee (0901…)"),
            ));
        }
        Ok(Self {
            hs_code,
            country_of_production,
            production_period: ProductionPeriod { from, to },
            plots,
            suppliers,
            statements,
        })
    }

    /// The due diligence of a source lot, as of `now`.
    pub fn decide(self, now: DateTime<Utc>) -> DueDiligence {
        DueDiligence {
            hs_code: self.hs_code,
            country_of_production: self.country_of_production,
            production_period: self.production_period,
            plots: StoredPlots::written(&self.plots),
            suppliers: self.suppliers,
            statements: self.statements,
            updated_date: now,
        }
    }
}

/// Whether a green lot is a source lot: imported (its own origin) or older than the ledger (it
/// has an `OPENING` entry, and where it came from is not recorded).
pub fn is_source(lot_id: Uuid, origin_id: Uuid, has_opening_entry: bool) -> bool {
    lot_id == origin_id || has_opening_entry
}

/// Why a source lot's due diligence is not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingReason {
    NoDueDiligence,
    NoStatement,
}

impl MissingReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoDueDiligence => "NO_DUE_DILIGENCE",
            Self::NoStatement => "NO_STATEMENT",
        }
    }
}

/// What a source lot lacks, if anything: complete is due diligence with at least one statement.
pub fn missing(due_diligence: Option<&DueDiligence>) -> Option<MissingReason> {
    match due_diligence {
        None => Some(MissingReason::NoDueDiligence),
        Some(d) if d.statements.is_empty() => Some(MissingReason::NoStatement),
        Some(_) => None,
    }
}

/// A source green lot as a due diligence report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLot {
    pub id: Uuid,
    /// `PG-n`.
    pub lot_number: String,
    pub number: i64,
    pub name: String,
}

/// A source lot and its due diligence, if set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDueDiligence {
    pub lot: SourceLot,
    pub due_diligence: Option<DueDiligence>,
}

/// A source lot whose due diligence is not complete, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub id: Uuid,
    pub lot_number: String,
    pub reason: MissingReason,
}

/// What stands behind a lot or an order: its source lots, their statements and plots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDiligenceReport {
    /// By lot number.
    pub sources: Vec<SourceDueDiligence>,
    /// Distinct by reference number, in its order.
    pub statements: Vec<Statement>,
    pub complete: bool,
    pub missing: Vec<Missing>,
}

/// One plot of a report's `plots`: a feature of a source's plots, written from its text.
#[derive(Debug, Clone)]
pub struct ReportPlot<'a> {
    /// The index of its source in [`DueDiligenceReport::sources`].
    pub source: usize,
    /// Its geometry: a slice of the source's [`StoredPlots::answer`].
    pub geometry: &'a RawValue,
    /// Its properties, with `ProducerCountry` (when absent) and `lotNumber`.
    pub properties: Box<RawValue>,
}

impl ReportPlot<'_> {
    /// The feature as [`Plots::to_json`] writes it.
    pub fn write(&self, out: &mut String) {
        out.push_str("{\"type\":\"Feature\",\"geometry\":");
        out.push_str(self.geometry.get());
        out.push_str(",\"properties\":");
        out.push_str(self.properties.get());
        out.push('}');
    }
}

impl DueDiligenceReport {
    /// Every source's plots, by lot number, as one `FeatureCollection` lists them: each
    /// feature gains `ProducerCountry` (when absent) and `lotNumber`. Read from the sources'
    /// text; no coordinate is decoded and no geometry copied.
    pub fn plots(&self) -> Result<Vec<ReportPlot<'_>>, DocumentError> {
        let mut plots = Vec::new();
        for (index, source) in self.sources.iter().enumerate() {
            let Some(d) = &source.due_diligence else {
                continue;
            };
            let country = RawValue::from_string(json_string(&d.country_of_production)).ok();
            let lot_number = RawValue::from_string(json_string(&source.lot.lot_number)).ok();
            for feature in d.plots.features().map_err(DocumentError)? {
                let mut properties: BTreeMap<String, &RawValue> = feature.properties;
                if let Some(country) = &country {
                    properties
                        .entry("ProducerCountry".to_owned())
                        .or_insert(country);
                }
                if let Some(lot_number) = &lot_number {
                    properties.insert("lotNumber".to_owned(), lot_number);
                }
                let mut written = String::new();
                write_properties(
                    &mut written,
                    properties
                        .iter()
                        .map(|(name, value)| (name.as_str(), value.get())),
                );
                plots.push(ReportPlot {
                    source: index,
                    geometry: feature.geometry,
                    properties: RawValue::from_string(written)
                        .map_err(|e| DocumentError(e.to_string()))?,
                });
            }
        }
        Ok(plots)
    }

    /// [`Self::plots`] as one GeoJSON `FeatureCollection`.
    pub fn plots_json(&self) -> Result<String, DocumentError> {
        let mut out = String::from("{\"type\":\"FeatureCollection\",\"features\":[");
        for (i, plot) in self.plots()?.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            plot.write(&mut out);
        }
        out.push_str("]}");
        Ok(out)
    }
}

/// Refuses a report over these sources (with the stored size of their due diligence) when it
/// would carry more than [`ANSWER_DOCUMENT_MAX`]; checked before any due diligence is read.
pub fn check_answer_size(
    sources: &[SourceLot],
    sizes: &[(Uuid, u64)],
) -> Result<(), DueDiligenceError> {
    let size = sizes
        .iter()
        .fold(0_u64, |total, (_, n)| total.saturating_add(*n));
    if size <= ANSWER_DOCUMENT_MAX {
        return Ok(());
    }
    let mut lots = sources.to_vec();
    lots.sort_by_key(|l| l.number);
    Err(DueDiligenceError::TooLarge { size, lots })
}

/// How many of these items (each with the stored size of its due diligence) one page holds:
/// up to `limit`, ending early before the sizes pass [`ANSWER_DOCUMENT_MAX`] (but never
/// empty).
pub fn page_length(sizes: impl IntoIterator<Item = u64>, limit: usize) -> usize {
    let mut total = 0_u64;
    let mut n = 0_usize;
    for size in sizes.into_iter().take(limit) {
        total = total.saturating_add(size);
        if n > 0 && total > ANSWER_DOCUMENT_MAX {
            break;
        }
        n = n.saturating_add(1);
    }
    n
}

/// The report over these source lots (each listed once, in any order).
pub fn report(mut sources: Vec<SourceDueDiligence>) -> DueDiligenceReport {
    sources.sort_by_key(|s| s.lot.number);
    sources.dedup_by_key(|s| s.lot.id);
    let mut statements: Vec<Statement> = Vec::new();
    let mut missing_lots = Vec::new();
    for source in &sources {
        if let Some(reason) = missing(source.due_diligence.as_ref()) {
            missing_lots.push(Missing {
                id: source.lot.id,
                lot_number: source.lot.lot_number.clone(),
                reason,
            });
        }
        let Some(d) = &source.due_diligence else {
            continue;
        };
        statements.extend(d.statements.iter().cloned());
    }
    statements.sort_by(|a, b| a.reference_number.cmp(&b.reference_number));
    statements.dedup_by(|a, b| a.reference_number == b.reference_number);
    DueDiligenceReport {
        complete: missing_lots.is_empty(),
        sources,
        statements,
        missing: missing_lots,
    }
}

/// The stored form of a due diligence (all but its date), JSON with the plots' digits as sent.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    hs_code: String,
    country_of_production: String,
    production_period: ProductionPeriod,
    plots: Box<RawValue>,
    suppliers: Vec<Supplier>,
    statements: Vec<Statement>,
}

/// A stored document that cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored due diligence is unreadable: {0}")]
pub struct DocumentError(pub String);

impl DueDiligence {
    /// The stored form; its plots are their answer ([`StoredPlots::answer`]).
    pub fn to_document(&self) -> Result<String, DocumentError> {
        let plots = RawValue::from_string(self.plots.answer().to_owned())
            .map_err(|e| DocumentError(e.to_string()))?;
        serde_json::to_string(&Document {
            hs_code: self.hs_code.clone(),
            country_of_production: self.country_of_production.clone(),
            production_period: self.production_period,
            plots,
            suppliers: self.suppliers.clone(),
            statements: self.statements.clone(),
        })
        .map_err(|e| DocumentError(e.to_string()))
    }

    pub fn from_document(
        document: &str,
        updated_date: DateTime<Utc>,
    ) -> Result<Self, DocumentError> {
        let d: Document =
            serde_json::from_str(document).map_err(|e| DocumentError(e.to_string()))?;
        // As stored: the plots met the rules when they were written and are not judged again.
        let plots = StoredPlots::from_stored(String::from(Box::<str>::from(d.plots)))
            .map_err(DocumentError)?;
        Ok(Self {
            hs_code: d.hs_code,
            country_of_production: d.country_of_production,
            production_period: d.production_period,
            plots,
            suppliers: d.suppliers,
            statements: d.statements,
            updated_date,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLOTS: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.59,6.2518]},"properties":{"Area":1.5}}]}"#;

    fn input() -> DueDiligenceInput {
        DueDiligenceInput {
            country_of_production: "CO".to_owned(),
            production_from: "2025-10-01".to_owned(),
            production_to: "2026-03-31".to_owned(),
            plots: PLOTS.to_owned(),
            suppliers: vec![SupplierInput {
                name: "Cooperativa Andes".to_owned(),
                country: Some("CO".to_owned()),
                ..SupplierInput::default()
            }],
            statements: vec![StatementInput {
                reference_number: "25NLSN6LX69730".to_owned(),
                verification_number: Some("K7R8LA90".to_owned()),
                kind: "DDS".to_owned(),
                role: "UPSTREAM".to_owned(),
            }],
            hs_code: None,
        }
    }

    fn field_of(e: DueDiligenceError) -> String {
        match e {
            DueDiligenceError::Invalid { field, .. } => field.to_string(),
            DueDiligenceError::Plots(p) => p.field.to_string(),
            other => panic!("not a field error: {other}"),
        }
    }

    #[test]
    fn a_complete_input_parses_with_the_default_hs_code() {
        let draft = DueDiligenceDraft::parse(input()).unwrap();
        assert_eq!(draft.hs_code, DEFAULT_HS_CODE);
        assert_eq!(draft.statements.len(), 1);
    }

    #[test]
    fn each_broken_field_is_named() {
        let cases: Vec<(DueDiligenceInput, &str)> = vec![
            (
                DueDiligenceInput {
                    country_of_production: "co".to_owned(),
                    ..input()
                },
                "countryOfProduction",
            ),
            (
                DueDiligenceInput {
                    country_of_production: "XX".to_owned(),
                    ..input()
                },
                "countryOfProduction",
            ),
            (
                DueDiligenceInput {
                    production_from: "2025-13-01".to_owned(),
                    ..input()
                },
                "productionPeriod.from",
            ),
            (
                DueDiligenceInput {
                    production_to: "2025-1-1".to_owned(),
                    ..input()
                },
                "productionPeriod.to",
            ),
            (
                DueDiligenceInput {
                    production_from: "2026-04-01".to_owned(),
                    ..input()
                },
                "productionPeriod",
            ),
            (
                DueDiligenceInput {
                    hs_code: Some("090211".to_owned()),
                    ..input()
                },
                "hsCode",
            ),
            (
                DueDiligenceInput {
                    hs_code: Some("0901".to_owned()),
                    ..input()
                },
                "hsCode",
            ),
            (
                DueDiligenceInput {
                    plots: "{}".to_owned(),
                    ..input()
                },
                "plots.type",
            ),
        ];
        for (bad, field) in cases {
            assert_eq!(field_of(DueDiligenceDraft::parse(bad).unwrap_err()), field);
        }
    }

    #[test]
    fn statements_need_unique_alphanumeric_reference_numbers() {
        let mut twice = input();
        twice.statements.push(twice.statements[0].clone());
        assert_eq!(
            field_of(DueDiligenceDraft::parse(twice).unwrap_err()),
            "statements[1].referenceNumber"
        );
        let mut dashed = input();
        dashed.statements[0].reference_number = "25-NL".to_owned();
        assert_eq!(
            field_of(DueDiligenceDraft::parse(dashed).unwrap_err()),
            "statements[0].referenceNumber"
        );
        let mut kind = input();
        kind.statements[0].kind = "dds".to_owned();
        assert_eq!(
            field_of(DueDiligenceDraft::parse(kind).unwrap_err()),
            "statements[0].kind"
        );
    }

    #[test]
    fn supplier_names_are_bounded() {
        let mut long = input();
        long.suppliers[0].name = "x".repeat(SUPPLIER_NAME_MAX + 1);
        assert_eq!(
            field_of(DueDiligenceDraft::parse(long).unwrap_err()),
            "suppliers[0].name"
        );
    }

    #[test]
    fn completeness_needs_a_statement() {
        let now = DateTime::<Utc>::UNIX_EPOCH;
        let full = DueDiligenceDraft::parse(input()).unwrap().decide(now);
        assert_eq!(missing(Some(&full)), None);
        let bare = DueDiligence {
            statements: vec![],
            ..full
        };
        assert_eq!(missing(Some(&bare)), Some(MissingReason::NoStatement));
        assert_eq!(missing(None), Some(MissingReason::NoDueDiligence));
    }

    #[test]
    fn only_imported_or_pre_ledger_lots_are_sources() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        assert!(is_source(a, a, false));
        assert!(is_source(b, a, true));
        assert!(!is_source(b, a, false));
    }

    fn source(n: i64, d: Option<DueDiligence>) -> SourceDueDiligence {
        SourceDueDiligence {
            lot: SourceLot {
                id: Uuid::from_u128(n as u128),
                lot_number: format!("PG-{n}"),
                number: n,
                name: format!("lot {n}"),
            },
            due_diligence: d,
        }
    }

    #[test]
    fn a_report_merges_plots_and_statements_and_names_what_is_missing() {
        let now = DateTime::<Utc>::UNIX_EPOCH;
        let full = DueDiligenceDraft::parse(input()).unwrap().decide(now);
        let bare = DueDiligence {
            statements: vec![],
            country_of_production: "ET".to_owned(),
            ..full.clone()
        };
        let r = report(vec![
            source(3, None),
            source(1, Some(full.clone())),
            source(2, Some(full.clone())),
            source(4, Some(bare)),
        ]);
        let numbers: Vec<i64> = r.sources.iter().map(|s| s.lot.number).collect();
        assert_eq!(numbers, vec![1, 2, 3, 4]);
        assert_eq!(
            r.statements.len(),
            1,
            "the same statement twice is listed once"
        );
        let plots = r.plots().unwrap();
        assert_eq!(plots.len(), 3);
        assert_eq!(
            plots.iter().map(|p| p.source).collect::<Vec<_>>(),
            [0, 1, 3]
        );
        assert_eq!(
            plots[0].properties.get(),
            r#"{"Area":1.5,"ProducerCountry":"CO","lotNumber":"PG-1"}"#
        );
        assert_eq!(
            plots[2].properties.get(),
            r#"{"Area":1.5,"ProducerCountry":"ET","lotNumber":"PG-4"}"#
        );
        assert_eq!(
            r.plots_json().unwrap(),
            format!(
                r#"{{"type":"FeatureCollection","features":[{}]}}"#,
                ["CO\",\"lotNumber\":\"PG-1", "CO\",\"lotNumber\":\"PG-2", "ET\",\"lotNumber\":\"PG-4"]
                    .map(|p| format!(
                        r#"{{"type":"Feature","geometry":{{"type":"Point","coordinates":[-75.59,6.2518]}},"properties":{{"Area":1.5,"ProducerCountry":"{p}"}}}}"#
                    ))
                    .join(",")
            )
        );
        assert!(!r.complete);
        let missing: Vec<(&str, MissingReason)> = r
            .missing
            .iter()
            .map(|m| (m.lot_number.as_str(), m.reason))
            .collect();
        assert_eq!(
            missing,
            vec![
                ("PG-3", MissingReason::NoDueDiligence),
                ("PG-4", MissingReason::NoStatement)
            ]
        );
        assert!(report(vec![source(1, Some(full))]).complete);
    }

    /// `result.plots` as it was written before plots were kept as text: every source's plots
    /// decoded, given their properties, written again.
    fn decoded_report_plots(r: &DueDiligenceReport) -> String {
        let mut plots = Plots::default();
        for source in &r.sources {
            let Some(d) = &source.due_diligence else {
                continue;
            };
            let country = RawValue::from_string(json_string(&d.country_of_production)).unwrap();
            let lot_number = RawValue::from_string(json_string(&source.lot.lot_number)).unwrap();
            for mut plot in d.plots.decode().unwrap().features {
                plot.property_or_insert("ProducerCountry", country.clone());
                plot.set_property("lotNumber", lot_number.clone());
                plots.features.push(plot);
            }
        }
        plots.to_json()
    }

    #[test]
    fn a_report_s_plots_are_written_as_decoding_wrote_them() {
        let now = DateTime::<Utc>::UNIX_EPOCH;
        let full = DueDiligenceDraft::parse(input()).unwrap().decide(now);
        let stored = |plots: &str| DueDiligence {
            plots: StoredPlots::from_stored(plots.to_owned()).unwrap(),
            ..full.clone()
        };
        // Wound clockwise with unsorted properties and a member more (stored before today's
        // writing), a bow tie, names and strings holding brackets and quotes.
        let legacy = r#"{"type":"FeatureCollection","features":[{"type":"Feature","id":1,"properties":{"lotNumber":"old","ProducerCountry":"PE","Z":[1, "]}"]},"geometry":{"type":"Polygon","coordinates":[[[0.1,0.1],[0.1,0.2],[0.2,0.2],[0.2,0.1],[0.1,0.1]]]}}]}"#;
        let bow_tie = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]},"properties":{"a\"]}":"{[\"","b":{"c":[[]]}}},{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}]}"#;
        let mut sources = vec![
            source(1, Some(stored(legacy))),
            source(2, Some(full.clone())),
            source(3, Some(stored(bow_tie))),
            source(4, None),
        ];
        sources[0].lot.lot_number = "PG-\"1\"".to_owned();
        let r = report(sources);
        let written = r.plots_json().unwrap();
        assert_eq!(written, decoded_report_plots(&r));
        assert!(
            written.contains(r#""ProducerCountry":"PE","Z":[1, "]}"],"lotNumber":"PG-\"1\""}"#),
            "{written}"
        );
        assert!(
            written.contains("[[[0,0],[1,1],[1,0],[0,1],[0,0]]]"),
            "{written}"
        );
        let plots = r.plots().unwrap();
        assert_eq!(plots.len(), 4);
        for plot in &plots {
            let answer = r.sources[plot.source]
                .due_diligence
                .as_ref()
                .unwrap()
                .plots
                .answer();
            assert!(
                crate::stored_plots::range_within(answer, plot.geometry.get()).is_some(),
                "a geometry is a slice of its source's answer"
            );
        }
    }

    #[test]
    fn a_report_over_too_much_is_refused_naming_every_source() {
        let lots: Vec<SourceLot> = [2, 1].map(|n| source(n, None).lot).to_vec();
        let half = ANSWER_DOCUMENT_MAX / 2;
        let sizes = [(lots[0].id, half), (lots[1].id, half)];
        assert!(check_answer_size(&lots, &sizes).is_ok());
        let sizes = [(lots[0].id, half), (lots[1].id, half + 1)];
        let e = check_answer_size(&lots, &sizes).unwrap_err();
        assert_eq!(e.violation(), Violation::BusinessRule);
        let message = e.to_string();
        assert!(
            message.contains("PG-1 (") && message.contains("PG-2 ("),
            "{message}"
        );
        assert!(message.contains("filter.lotId"), "{message}");
    }

    #[test]
    fn a_page_of_details_ends_before_its_documents_pass_the_bound() {
        let mib = 1024 * 1024;
        assert_eq!(page_length([mib; 10], 100), 4);
        assert_eq!(page_length([mib; 10], 3), 3);
        assert_eq!(page_length([10 * mib, 1], 100), 1, "never empty");
        assert_eq!(page_length([0; 200], 100), 100);
        assert_eq!(page_length([], 100), 0);
    }

    #[test]
    fn the_stored_document_reads_back_the_same() {
        let now = DateTime::<Utc>::UNIX_EPOCH;
        let d = DueDiligenceDraft::parse(input()).unwrap().decide(now);
        let back = DueDiligence::from_document(&d.to_document().unwrap(), now).unwrap();
        assert_eq!(back, d);
        assert!(d.to_document().unwrap().contains("[-75.59,6.2518]"));
    }
}
