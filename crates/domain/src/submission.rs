//! Filing due diligence statements with the EU information system (api-decisions §14): the
//! statement assembled from source green lots, every EU rule it would break, and the
//! submission's state machine (`SENDING` → `SUBMITTED` → `AVAILABLE` | `REJECTED` | …, or
//! `FAILED`), each change kept in its history.
//!
//! Nothing here reads a clock or calls the IS: the use cases pass the time and what the IS said.

use std::collections::HashSet;

use chrono::{DateTime, TimeDelta, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::dds::{
    ActivityType, DdsCommodity, DdsProducer, DdsStatement, EudrStatus, reference_number_problem,
    verification_number_problem,
};
use crate::due_diligence::{DueDiligence, StatementRole};
use crate::eu_geolocation;
use crate::field::FieldPath;
use crate::geojson::{Plot, Plots};
use crate::violation::{BrokenRule, Violation};

/// Most source lots one statement may declare (the IS's business limit of commodities).
pub const MAX_LOTS: usize = 100;
/// Lots a request may name at all (beyond [`MAX_LOTS`] they are a problem, not a parse error).
pub const MAX_REQUESTED_LOTS: usize = 1_000;
/// Most producers per commodity.
pub const MAX_PRODUCERS: usize = 1_000;
/// Most bytes of geolocation (base64, as sent) per statement.
pub const MAX_GEOLOCATION_BYTES: usize = 25_000_000;
pub const COMMENT_MAX: usize = 2_000;
pub const INTERNAL_REFERENCE_MAX: usize = 35;
pub const DESCRIPTION_MAX: usize = 150;
/// Amend and withdraw are possible this long after submission.
pub const MODIFICATION_WINDOW: TimeDelta = TimeDelta::hours(72);

/// The IS's `EuropeanCountry` codes.
pub const EUROPEAN_COUNTRIES: [&str; 28] = [
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK", "XI",
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmissionError {
    #[error("{field}: {problem}")]
    Invalid { field: FieldPath, problem: String },
    #[error("no submission has id {0}")]
    NotFound(Uuid),
    /// The statement would break rules of the EU information system: nothing was sent.
    #[error(
        "the statement would break {} rule(s) of the EU information system (see details); nothing was sent",
        .0.len()
    )]
    Problems(Vec<Problem>),
    /// Amend or withdraw outside the IS's window or status.
    #[error("{0}")]
    NotAllowed(String),
}

impl BrokenRule for SubmissionError {
    fn violation(&self) -> Violation {
        match self {
            Self::Invalid { .. } => Violation::InvalidParameter,
            Self::NotFound(_) => Violation::NotFound,
            Self::Problems(_) | Self::NotAllowed(_) => Violation::BusinessRule,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Invalid { field, .. } => field.rebase(base),
            Self::Problems(problems) => problems.iter_mut().for_each(|p| p.rebase(base)),
            Self::NotFound(_) | Self::NotAllowed(_) => {}
        }
    }
}

fn invalid(field: &'static str, problem: impl Into<String>) -> SubmissionError {
    SubmissionError::Invalid {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Where a problem lies: in the request (relative to its data, placed by the transport like any
/// field path), or in a source lot's stored record, named as that lot's details name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemAt {
    Request(FieldPath),
    Lot(FieldPath),
}

impl std::fmt::Display for ProblemAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Request(path) | Self::Lot(path) => path.fmt(f),
        }
    }
}

/// Written as its path: `data.greenLotIds[0]`, `dueDiligence.plots`.
impl Serialize for ProblemAt {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One EU rule the statement would break.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// The source lot it concerns, if one.
    pub lot_id: Option<Uuid>,
    pub field: ProblemAt,
    pub rule: &'static str,
    pub message: String,
}

impl Problem {
    /// Puts a path in the request under `base`; a path in a stored lot stays as it is.
    pub fn rebase(&mut self, base: &FieldPath) {
        if let ProblemAt::Request(path) = &mut self.field {
            path.rebase(base);
        }
    }
}

/// `previewStatement`'s and `submitStatement`'s data, as sent.
#[derive(Debug, Clone, Default)]
pub struct StatementInput {
    pub green_lot_ids: Vec<Uuid>,
    pub activity_type: String,
    pub country_of_activity: Option<String>,
    pub border_cross_country: Option<String>,
    pub internal_reference_number: Option<String>,
    pub comment: Option<String>,
    pub geo_location_confidential: bool,
}

/// The data, with its shape checked; EU rules are judged by [`assemble`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementRequest {
    pub green_lot_ids: Vec<Uuid>,
    pub activity_type: ActivityType,
    pub country_of_activity: Option<String>,
    pub border_cross_country: Option<String>,
    pub internal_reference_number: Option<String>,
    pub comment: Option<String>,
    pub geo_location_confidential: bool,
}

impl StatementRequest {
    pub fn parse(input: StatementInput) -> Result<Self, SubmissionError> {
        if input.green_lot_ids.is_empty() || input.green_lot_ids.len() > MAX_REQUESTED_LOTS {
            return Err(invalid(
                "greenLotIds",
                format!(
                    "holds {} lots; give 1 to {MAX_LOTS} source lots",
                    input.green_lot_ids.len()
                ),
            ));
        }
        let mut seen = HashSet::new();
        if let Some(twice) = input.green_lot_ids.iter().find(|id| !seen.insert(**id)) {
            return Err(invalid("greenLotIds", format!("{twice} is listed twice")));
        }
        let activity_type = ActivityType::parse(&input.activity_type).ok_or_else(|| {
            invalid(
                "activityType",
                format!(
                    "`{}` is not IMPORT, DOMESTIC or EXPORT",
                    input.activity_type
                ),
            )
        })?;
        Ok(Self {
            green_lot_ids: input.green_lot_ids,
            activity_type,
            country_of_activity: input.country_of_activity,
            border_cross_country: input.border_cross_country,
            internal_reference_number: input.internal_reference_number,
            comment: input.comment,
            geo_location_confidential: input.geo_location_confidential,
        })
    }
}

/// What the assembly knows of one requested lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsLot {
    pub id: Uuid,
    /// `PG-n`.
    pub lot_number: String,
    pub name: String,
    pub is_source: bool,
    pub due_diligence: Option<DueDiligence>,
    /// The lot's imported weight (its `IMPORT` or `OPENING` entry), in kg.
    pub net_weight_kg: Option<Decimal>,
}

/// The statement Roastery would send, which lot each commodity declares, and the problems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    pub statement: DdsStatement,
    /// The lot of each commodity, in order.
    pub commodity_lots: Vec<Uuid>,
    pub problems: Vec<Problem>,
}

impl Preview {
    pub fn ready(&self) -> bool {
        self.problems.is_empty()
    }

    /// `result.statement` as JSON (plots as GeoJSON objects with the digits as sent).
    pub fn statement_json(&self) -> serde_json::Value {
        let s = &self.statement;
        let commodities: Vec<serde_json::Value> = s
            .commodities
            .iter()
            .zip(self.commodity_lots.iter())
            .map(|(c, lot)| {
                let producers: Vec<serde_json::Value> = c
                    .producers
                    .iter()
                    .map(|p| {
                        let plots: serde_json::Value =
                            serde_json::from_str(&p.geometry_geojson).unwrap_or_default();
                        json!({"country": p.country, "name": p.name, "plots": plots})
                    })
                    .collect();
                json!({
                    "position": c.position,
                    "lotId": lot,
                    "descriptionOfGoods": c.description_of_goods,
                    "hsHeading": c.hs_heading,
                    "netWeight": c.net_weight_kg.normalize().to_string(),
                    "producers": producers,
                })
            })
            .collect();
        json!({
            "operatorRole": "OPERATOR",
            "internalReferenceNumber": s.internal_reference_number,
            "activityType": s.activity_type.as_str(),
            "countryOfActivity": s.country_of_activity,
            "borderCrossCountry": s.border_cross_country,
            "comment": s.comment,
            "geoLocationConfidential": s.geo_location_confidential,
            "commodities": commodities,
        })
    }
}

/// The default internal reference of a submission: `RST-` and its id's first 8 hex digits.
pub fn default_internal_reference(submission_id: Uuid) -> String {
    let hex = submission_id.simple().to_string();
    format!("RST-{}", hex.get(..8).unwrap_or(&hex))
}

fn is_european(code: &str) -> bool {
    EUROPEAN_COUNTRIES.contains(&code)
}

/// A JSON string property's value.
fn text_property(plot: &Plot, name: &str) -> Option<String> {
    plot.property(name)
        .and_then(|raw| serde_json::from_str::<String>(raw).ok())
        .filter(|s| !s.trim().is_empty())
}

fn truncated(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// A producer: `ProducerName` (if any) and `ProducerCountry`.
type ProducerKey = (Option<String>, String);

/// Base64 length of `bytes` bytes.
fn base64_len(bytes: usize) -> usize {
    bytes.div_ceil(3).saturating_mul(4)
}

/// Assembles the statement of `lots` (in the request's order) and judges it by the IS's rules.
pub fn assemble(request: &StatementRequest, lots: &[DdsLot], internal_reference: &str) -> Preview {
    let mut problems = Vec::new();
    let mut problem =
        |lot_id: Option<Uuid>, field: ProblemAt, rule: &'static str, message: String| {
            problems.push(Problem {
                lot_id,
                field,
                rule,
                message,
            });
        };
    if lots.len() > MAX_LOTS {
        problem(
            None,
            ProblemAt::Request("greenLotIds".into()),
            "TOO_MANY_LOTS",
            format!(
                "{} lots; a statement declares at most {MAX_LOTS} commodities",
                lots.len()
            ),
        );
    }
    match (&request.country_of_activity, request.activity_type) {
        (None, ActivityType::Import) => problem(
            None,
            ProblemAt::Request("countryOfActivity".into()),
            "COUNTRY_OF_ACTIVITY",
            "is required for an IMPORT (the EU member state of entry)".into(),
        ),
        (Some(c), _) if !is_european(c) => problem(
            None,
            ProblemAt::Request("countryOfActivity".into()),
            "COUNTRY_OF_ACTIVITY",
            format!("`{c}` is not an EU member state code of the EU information system"),
        ),
        _ => {}
    }
    if let Some(c) = &request.border_cross_country
        && !is_european(c)
    {
        problem(
            None,
            ProblemAt::Request("borderCrossCountry".into()),
            "BORDER_CROSS_COUNTRY",
            format!("`{c}` is not an EU member state code of the EU information system"),
        );
    }
    let reference_ok = (1..=INTERNAL_REFERENCE_MAX).contains(&internal_reference.chars().count())
        && internal_reference
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !reference_ok {
        problem(
            None,
            ProblemAt::Request("internalReferenceNumber".into()),
            "INTERNAL_REFERENCE_NUMBER",
            format!(
                "`{internal_reference}` must be 1 to {INTERNAL_REFERENCE_MAX} letters, digits, `-` or `_`"
            ),
        );
    }
    if let Some(comment) = &request.comment
        && comment.chars().count() > COMMENT_MAX
    {
        problem(
            None,
            ProblemAt::Request("comment".into()),
            "COMMENT_TOO_LONG",
            format!(
                "is {} characters long; at most {COMMENT_MAX} are accepted",
                comment.chars().count()
            ),
        );
    }
    let mut commodities = Vec::new();
    let mut commodity_lots = Vec::new();
    let mut geolocation_bytes: usize = 0;
    for (i, lot) in lots.iter().enumerate() {
        let at = || ProblemAt::Request(FieldPath::from("greenLotIds").index(i));
        if !lot.is_source {
            problem(
                Some(lot.id),
                at(),
                "NOT_A_SOURCE",
                format!(
                    "green lot {} was made by a transfer; declare its source lot instead",
                    lot.lot_number
                ),
            );
            continue;
        }
        let Some(d) = &lot.due_diligence else {
            problem(
                Some(lot.id),
                at(),
                "NO_DUE_DILIGENCE",
                format!("green lot {} has no due diligence", lot.lot_number),
            );
            continue;
        };
        for (j, s) in d.statements.iter().enumerate() {
            if s.role == StatementRole::Own {
                continue;
            }
            let field = FieldPath::from("dueDiligence.statements").index(j);
            if let Some(message) = reference_number_problem(&s.reference_number) {
                problem(
                    Some(lot.id),
                    ProblemAt::Lot(field.clone().key("referenceNumber")),
                    "STATEMENT_NUMBER",
                    message,
                );
            }
            if let Some(message) = s
                .verification_number
                .as_deref()
                .and_then(verification_number_problem)
            {
                problem(
                    Some(lot.id),
                    ProblemAt::Lot(field.clone().key("verificationNumber")),
                    "STATEMENT_NUMBER",
                    message,
                );
            }
        }
        // Checked and regrouped here, so decoded: every coordinate becomes a value.
        let plots = match d.plots.decode() {
            Ok(plots) => plots,
            Err(e) => {
                problem(
                    Some(lot.id),
                    ProblemAt::Lot("dueDiligence.plots".into()),
                    "PLOTS_UNREADABLE",
                    format!(
                        "the stored plots of green lot {} are unreadable: {e}",
                        lot.lot_number
                    ),
                );
                continue;
            }
        };
        for p in eu_geolocation::problems(&plots) {
            problem(
                Some(lot.id),
                ProblemAt::Lot(
                    FieldPath::from("dueDiligence.plots.features")
                        .index(p.feature)
                        .join(&p.field.into()),
                ),
                p.rule.as_str(),
                p.message,
            );
        }
        let Some(net_weight) = lot.net_weight_kg else {
            problem(
                Some(lot.id),
                at(),
                "NO_NET_WEIGHT",
                format!("green lot {} has no imported weight", lot.lot_number),
            );
            continue;
        };
        // Producers by name and country, in the order their first plot appears.
        let mut groups: Vec<(ProducerKey, Vec<Plot>)> = Vec::new();
        for plot in &plots.features {
            let key = (
                text_property(plot, "ProducerName"),
                text_property(plot, "ProducerCountry")
                    .unwrap_or_else(|| d.country_of_production.clone()),
            );
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, plots)) => plots.push(plot.clone()),
                None => groups.push((key, vec![plot.clone()])),
            }
        }
        if groups.len() > MAX_PRODUCERS {
            problem(
                Some(lot.id),
                ProblemAt::Lot("dueDiligence.plots".into()),
                "TOO_MANY_PRODUCERS",
                format!(
                    "{} producers (by ProducerName and ProducerCountry); a commodity has at most {MAX_PRODUCERS}",
                    groups.len()
                ),
            );
        }
        let producers: Vec<DdsProducer> = groups
            .into_iter()
            .enumerate()
            .map(|(k, ((name, country), features))| {
                let geometry_geojson = Plots { features }.to_json();
                geolocation_bytes =
                    geolocation_bytes.saturating_add(base64_len(geometry_geojson.len()));
                DdsProducer {
                    position: i64::try_from(k).ok().and_then(|k| k.checked_add(1)),
                    country,
                    name: name.map(|n| truncated(&n, 500)),
                    geometry_geojson,
                }
            })
            .collect();
        commodities.push(DdsCommodity {
            position: i64::try_from(commodities.len())
                .unwrap_or(i64::MAX)
                .saturating_add(1),
            description_of_goods: truncated(
                &format!("{} {}", lot.lot_number, lot.name),
                DESCRIPTION_MAX,
            ),
            net_weight_kg: net_weight,
            hs_heading: d.hs_code.clone(),
            producers,
        });
        commodity_lots.push(lot.id);
    }
    if geolocation_bytes > MAX_GEOLOCATION_BYTES {
        problem(
            None,
            ProblemAt::Request("greenLotIds".into()),
            "GEOLOCATION_TOO_LARGE",
            format!(
                "the plots take {geolocation_bytes} bytes as sent; the EU information system takes at most {MAX_GEOLOCATION_BYTES}"
            ),
        );
    }
    Preview {
        statement: DdsStatement {
            internal_reference_number: Some(internal_reference.to_owned()),
            activity_type: request.activity_type,
            country_of_activity: request.country_of_activity.clone(),
            border_cross_country: request.border_cross_country.clone(),
            comment: request.comment.clone(),
            commodities,
            geo_location_confidential: request.geo_location_confidential,
        },
        commodity_lots,
        problems,
    }
}

/// Where a submission stands: Roastery's own `SENDING` and `FAILED`, or the IS's status.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SubmissionStatus {
    /// Stored; `submitDds` not (yet) confirmed.
    Sending,
    /// The IS refused it, or it never reached the IS.
    Failed,
    Eu(EudrStatus),
}

impl SubmissionStatus {
    pub fn parse(text: &str) -> Self {
        match text {
            "SENDING" => Self::Sending,
            "FAILED" => Self::Failed,
            other => Self::Eu(EudrStatus::parse(other)),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Sending => "SENDING",
            Self::Failed => "FAILED",
            Self::Eu(status) => status.as_str(),
        }
    }
}

/// One change of a submission's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub status: String,
    pub date: DateTime<Utc>,
    pub message: Option<String>,
}

/// A statement filed (or being filed) with the IS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    pub id: Uuid,
    /// The IS's uuid, once `submitDds` answered.
    pub eu_uuid: Option<String>,
    pub status: SubmissionStatus,
    pub internal_reference_number: String,
    pub activity_type: ActivityType,
    pub green_lot_ids: Vec<Uuid>,
    pub reference_number: Option<String>,
    pub verification_number: Option<String>,
    pub submitted_date: DateTime<Utc>,
    pub updated_date: DateTime<Utc>,
    pub history: Vec<HistoryEntry>,
    /// The statement sent (`previewStatement`'s `result.statement`), JSON.
    pub statement: String,
    /// When the poller next looks at it; `None` when nothing is left to learn.
    pub next_poll_at: Option<DateTime<Utc>>,
}

/// What the IS says a submission stands at (`getDds`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub eu_uuid: String,
    pub status: EudrStatus,
    pub reference_number: Option<String>,
    pub verification_number: Option<String>,
    pub rejection_reason: Option<String>,
}

/// Amend or withdraw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modification {
    Amend,
    Withdraw,
}

impl Submission {
    /// A new submission about to be sent; the poller resolves it at `resolve_at` if it is
    /// still `SENDING` then (a crash between storing and sending).
    pub fn sending(
        id: Uuid,
        preview: &Preview,
        request: &StatementRequest,
        now: DateTime<Utc>,
        resolve_at: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            eu_uuid: None,
            status: SubmissionStatus::Sending,
            internal_reference_number: preview
                .statement
                .internal_reference_number
                .clone()
                .unwrap_or_default(),
            activity_type: request.activity_type,
            green_lot_ids: request.green_lot_ids.clone(),
            reference_number: None,
            verification_number: None,
            submitted_date: now,
            updated_date: now,
            history: vec![HistoryEntry {
                status: SubmissionStatus::Sending.as_str().to_owned(),
                date: now,
                message: None,
            }],
            statement: preview.statement_json().to_string(),
            next_poll_at: Some(resolve_at),
        }
    }

    fn record(&mut self, status: SubmissionStatus, message: Option<String>, now: DateTime<Utc>) {
        self.history.push(HistoryEntry {
            status: status.as_str().to_owned(),
            date: now,
            message,
        });
        self.status = status;
        self.updated_date = now;
    }

    /// `submitDds` answered `uuid`: polled from `first_poll` on.
    pub fn submitted(&mut self, uuid: String, now: DateTime<Utc>, first_poll: DateTime<Utc>) {
        self.eu_uuid = Some(uuid);
        self.record(SubmissionStatus::Eu(EudrStatus::Submitted), None, now);
        self.next_poll_at = Some(first_poll);
    }

    /// The IS refused it (or it never reached the IS): `why` is kept in the history.
    pub fn failed(&mut self, why: String, now: DateTime<Utc>) {
        self.record(SubmissionStatus::Failed, Some(why), now);
        self.next_poll_at = None;
    }

    /// What the IS says now; returns whether anything changed. Polled again at `next_poll`
    /// while `SUBMITTED`.
    pub fn observe(
        &mut self,
        observed: Observed,
        now: DateTime<Utc>,
        next_poll: DateTime<Utc>,
    ) -> bool {
        let mut changed = false;
        if self.eu_uuid.as_deref() != Some(observed.eu_uuid.as_str()) {
            self.eu_uuid = Some(observed.eu_uuid);
            changed = true;
        }
        for (mine, theirs) in [
            (&mut self.reference_number, observed.reference_number),
            (&mut self.verification_number, observed.verification_number),
        ] {
            if theirs.is_some() && *mine != theirs {
                *mine = theirs;
                changed = true;
            }
        }
        let status = SubmissionStatus::Eu(observed.status);
        if status != self.status {
            let message = match status {
                SubmissionStatus::Eu(EudrStatus::Rejected) => observed.rejection_reason,
                _ => None,
            };
            self.record(status, message, now);
            changed = true;
        }
        self.next_poll_at =
            (self.status == SubmissionStatus::Eu(EudrStatus::Submitted)).then_some(next_poll);
        if changed {
            self.updated_date = now;
        }
        changed
    }

    /// `submitDds` got no answer (timeout, connection, 5xx): the IS may have the statement, so
    /// it stays `SENDING` for the poller to resolve; `why` is kept in the history.
    pub fn unanswered(&mut self, why: String, now: DateTime<Utc>) {
        self.record(SubmissionStatus::Sending, Some(why), now);
    }

    /// A submission left `SENDING` that the IS does not know: given up on.
    pub fn not_found_in_the_is(&mut self, now: DateTime<Utc>) {
        self.failed(
            "the EU information system has no statement with this internal reference number".into(),
            now,
        );
    }

    /// Whether the IS allows `what` now: within 72 h of submission, and amend only when
    /// `AVAILABLE`, withdraw when `SUBMITTED` or `AVAILABLE`.
    pub fn check_modifiable(
        &self,
        what: Modification,
        now: DateTime<Utc>,
    ) -> Result<(), SubmissionError> {
        let verb = match what {
            Modification::Amend => "amended",
            Modification::Withdraw => "withdrawn",
        };
        let allowed = matches!(
            (&self.status, what),
            (SubmissionStatus::Eu(EudrStatus::Available), _)
                | (
                    SubmissionStatus::Eu(EudrStatus::Submitted),
                    Modification::Withdraw
                )
        );
        if !allowed || self.eu_uuid.is_none() {
            return Err(SubmissionError::NotAllowed(format!(
                "submission {} is {}; it can be {verb} only when {}",
                self.id,
                self.status.as_str(),
                match what {
                    Modification::Amend => "AVAILABLE",
                    Modification::Withdraw => "SUBMITTED or AVAILABLE",
                }
            )));
        }
        let until = self
            .submitted_date
            .checked_add_signed(MODIFICATION_WINDOW)
            .unwrap_or(self.submitted_date);
        if now > until {
            return Err(SubmissionError::NotAllowed(format!(
                "submission {} was submitted on {}; it can be {verb} only within 72 hours of \
                 submission (file a new statement instead)",
                self.id,
                self.submitted_date.to_rfc3339()
            )));
        }
        Ok(())
    }

    /// `amendDds` answered `status`; the statement sent is now `statement`.
    pub fn amended(
        &mut self,
        status: EudrStatus,
        statement: String,
        now: DateTime<Utc>,
        next_poll: DateTime<Utc>,
    ) {
        self.statement = statement;
        self.record(SubmissionStatus::Eu(status), Some("amended".into()), now);
        self.next_poll_at =
            (self.status == SubmissionStatus::Eu(EudrStatus::Submitted)).then_some(next_poll);
    }

    /// `withdrawDds` answered `status`.
    pub fn withdrawn(&mut self, status: EudrStatus, now: DateTime<Utc>) {
        self.record(SubmissionStatus::Eu(status), Some("withdrawn".into()), now);
        self.next_poll_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::due_diligence::{DueDiligenceDraft, DueDiligenceInput, StatementInput as SIn};
    use crate::stored_plots::StoredPlots;

    fn at(hours: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + hours * 3600, 0).unwrap()
    }

    fn due_diligence(plots: &str) -> DueDiligence {
        DueDiligenceDraft::parse(DueDiligenceInput {
            country_of_production: "CO".into(),
            production_from: "2025-10-01".into(),
            production_to: "2026-03-31".into(),
            plots: plots.into(),
            statements: vec![SIn {
                reference_number: "25NLSN6LX69730".into(),
                verification_number: Some("K7R8LA90".into()),
                kind: "DDS".into(),
                role: "UPSTREAM".into(),
            }],
            ..DueDiligenceInput::default()
        })
        .unwrap()
        .decide(at(0))
    }

    const TWO_PRODUCERS: &str = r#"{"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-75.59,6.2518]},"properties":{"Area":1.5,"ProducerName":"Finca A"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-75.6,6.26]},"properties":{"Area":1,"ProducerName":"Finca B","ProducerCountry":"PE"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-75.61,6.27]},"properties":{"ProducerName":"Finca A"}}]}"#;

    fn lot(n: u128, d: Option<DueDiligence>) -> DdsLot {
        DdsLot {
            id: Uuid::from_u128(n),
            lot_number: format!("PG-{n}"),
            name: "Huila".into(),
            is_source: true,
            due_diligence: d,
            net_weight_kg: Some(Decimal::new(605, 1)),
        }
    }

    fn request(ids: Vec<Uuid>) -> StatementRequest {
        StatementRequest::parse(StatementInput {
            green_lot_ids: ids,
            activity_type: "IMPORT".into(),
            country_of_activity: Some("DE".into()),
            ..StatementInput::default()
        })
        .unwrap()
    }

    #[test]
    fn one_commodity_per_lot_and_producers_by_name_and_country() {
        let lots = vec![lot(1, Some(due_diligence(TWO_PRODUCERS)))];
        let preview = assemble(&request(vec![lots[0].id]), &lots, "RST-0001");
        assert!(preview.ready(), "{:?}", preview.problems);
        let c = &preview.statement.commodities[0];
        assert_eq!(c.net_weight_kg, Decimal::new(605, 1));
        assert_eq!(c.hs_heading, "090111");
        assert_eq!(c.description_of_goods, "PG-1 Huila");
        let producers: Vec<(Option<&str>, &str)> = c
            .producers
            .iter()
            .map(|p| (p.name.as_deref(), p.country.as_str()))
            .collect();
        assert_eq!(
            producers,
            vec![(Some("Finca A"), "CO"), (Some("Finca B"), "PE")]
        );
        assert!(c.producers[0].geometry_geojson.contains("-75.61"));
        let json = preview.statement_json();
        assert_eq!(json["commodities"][0]["netWeight"], "60.5");
        assert_eq!(json["commodities"][0]["lotId"], lots[0].id.to_string());
        assert_eq!(json["countryOfActivity"], "DE");
    }

    #[test]
    fn every_broken_rule_is_a_problem() {
        let holed = r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]],[[0.2,0.2],[0.2,0.4],[0.4,0.4],[0.4,0.2],[0.2,0.2]]]},"properties":{}}]}"#;
        // Stored before the EU rules: set directly.
        let mut d = due_diligence(TWO_PRODUCERS);
        d.plots = StoredPlots::written(&Plots::parse(holed, "plots").unwrap());
        d.statements[0].reference_number = "old-number".into();
        let mut transferred = lot(2, None);
        transferred.is_source = false;
        let lots = vec![lot(1, Some(d)), transferred, lot(3, None)];
        let mut req = request(lots.iter().map(|l| l.id).collect());
        req.country_of_activity = Some("CH".into());
        req.comment = Some("x".repeat(2001));
        let preview = assemble(&req, &lots, "bad reference!");
        let rules: Vec<&str> = preview.problems.iter().map(|p| p.rule).collect();
        for rule in [
            "COUNTRY_OF_ACTIVITY",
            "INTERNAL_REFERENCE_NUMBER",
            "COMMENT_TOO_LONG",
            "STATEMENT_NUMBER",
            "POLYGON_HOLE",
            "NOT_A_SOURCE",
            "NO_DUE_DILIGENCE",
        ] {
            assert!(rules.contains(&rule), "{rule} in {rules:?}");
        }
        assert!(!preview.ready());
        // Request fields are relative (the transport places them); a lot's fields as stored.
        let mut problems = preview.problems.clone();
        problems.iter_mut().for_each(|p| p.rebase(&"data".into()));
        let fields: Vec<(&str, String)> = problems
            .iter()
            .map(|p| (p.rule, p.field.to_string()))
            .collect();
        for expected in [
            ("COUNTRY_OF_ACTIVITY", "data.countryOfActivity"),
            (
                "STATEMENT_NUMBER",
                "dueDiligence.statements[0].referenceNumber",
            ),
            (
                "POLYGON_HOLE",
                "dueDiligence.plots.features[0].geometry.coordinates",
            ),
            ("NOT_A_SOURCE", "data.greenLotIds[1]"),
            ("NO_DUE_DILIGENCE", "data.greenLotIds[2]"),
        ] {
            assert!(
                fields.contains(&(expected.0, expected.1.to_owned())),
                "{expected:?} in {fields:?}"
            );
        }
        let mut req = request(vec![lots[0].id]);
        req.country_of_activity = None;
        let preview = assemble(&req, &lots[..1], "RST-1");
        assert!(
            preview
                .problems
                .iter()
                .any(|p| p.rule == "COUNTRY_OF_ACTIVITY")
        );
    }

    #[test]
    fn more_than_100_lots_is_a_problem_and_duplicates_are_refused() {
        let ids: Vec<Uuid> = (1..=101).map(Uuid::from_u128).collect();
        let lots: Vec<DdsLot> = (1..=101)
            .map(|n| lot(n, Some(due_diligence(TWO_PRODUCERS))))
            .collect();
        let preview = assemble(&request(ids), &lots, "RST-1");
        assert_eq!(preview.problems[0].rule, "TOO_MANY_LOTS");
        let twice = StatementRequest::parse(StatementInput {
            green_lot_ids: vec![Uuid::from_u128(1), Uuid::from_u128(1)],
            activity_type: "IMPORT".into(),
            ..StatementInput::default()
        });
        assert!(matches!(twice, Err(SubmissionError::Invalid { .. })));
    }

    fn submission() -> Submission {
        let lots = vec![lot(1, Some(due_diligence(TWO_PRODUCERS)))];
        let req = request(vec![lots[0].id]);
        let preview = assemble(&req, &lots, "RST-1");
        Submission::sending(Uuid::from_u128(9), &preview, &req, at(0), at(1))
    }

    #[test]
    fn a_submission_goes_from_sending_to_available_with_its_history() {
        let mut s = submission();
        assert_eq!(s.status, SubmissionStatus::Sending);
        s.submitted("uuid-1".into(), at(0), at(1));
        assert_eq!(s.status.as_str(), "SUBMITTED");
        assert_eq!(s.next_poll_at, Some(at(1)));
        let seen = |status| Observed {
            eu_uuid: "uuid-1".into(),
            status,
            reference_number: None,
            verification_number: None,
            rejection_reason: None,
        };
        assert!(!s.observe(seen(EudrStatus::Submitted), at(1), at(2)));
        assert_eq!(s.history.len(), 2);
        assert_eq!(s.next_poll_at, Some(at(2)));
        let mut available = seen(EudrStatus::Available);
        available.reference_number = Some("26DE7XTVCZAQ2S".into());
        available.verification_number = Some("SFFCB4Y3".into());
        assert!(s.observe(available, at(2), at(3)));
        assert_eq!(s.status.as_str(), "AVAILABLE");
        assert_eq!(s.reference_number.as_deref(), Some("26DE7XTVCZAQ2S"));
        assert_eq!(s.next_poll_at, None);
        let statuses: Vec<&str> = s.history.iter().map(|h| h.status.as_str()).collect();
        assert_eq!(statuses, ["SENDING", "SUBMITTED", "AVAILABLE"]);
    }

    #[test]
    fn a_rejection_keeps_its_reason_and_a_failure_its_fault() {
        let mut s = submission();
        s.submitted("uuid-1".into(), at(0), at(1));
        s.observe(
            Observed {
                eu_uuid: "uuid-1".into(),
                status: EudrStatus::Rejected,
                reference_number: None,
                verification_number: None,
                rejection_reason: Some("plots overlap a forest".into()),
            },
            at(1),
            at(2),
        );
        assert_eq!(
            s.history.last().unwrap().message.as_deref(),
            Some("plots overlap a forest")
        );
        let mut f = submission();
        f.failed("EUDR_COMMODITIES_HS_CODE_INVALID".into(), at(0));
        assert_eq!(f.status, SubmissionStatus::Failed);
        assert_eq!(f.next_poll_at, None);
    }

    #[test]
    fn amend_and_withdraw_only_within_72_hours_and_in_an_allowed_status() {
        let mut s = submission();
        assert!(s.check_modifiable(Modification::Withdraw, at(0)).is_err());
        s.submitted("uuid-1".into(), at(0), at(1));
        assert!(s.check_modifiable(Modification::Withdraw, at(1)).is_ok());
        assert!(s.check_modifiable(Modification::Amend, at(1)).is_err());
        s.status = SubmissionStatus::Eu(EudrStatus::Available);
        assert!(s.check_modifiable(Modification::Amend, at(72)).is_ok());
        assert!(s.check_modifiable(Modification::Amend, at(73)).is_err());
        s.withdrawn(EudrStatus::Withdrawn, at(2));
        assert!(s.check_modifiable(Modification::Withdraw, at(3)).is_err());
    }

    #[test]
    fn the_default_internal_reference_is_rst_and_8_hex_digits() {
        let id = Uuid::parse_str("0190abcd-0000-7000-8000-000000000001").unwrap();
        assert_eq!(default_internal_reference(id), "RST-0190abcd");
    }
}
