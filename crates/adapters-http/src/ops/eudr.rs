//! `eudr.statement.*`: filing and verifying EUDR statements with the EU information system
//! (api-decisions §14). Without a configured client every operation answers 503
//! `eudr_not_configured` (once its body has the right shape) and changes nothing.

use std::sync::Arc;

use actix_web::HttpResponse;
use roastery_app::{Caller, Roastery};
use roastery_domain::submission::{Problem, StatementInput, Submission};
use roastery_ports::Store;
use roastery_ports::repo::SubmissionFilter;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::green::{DueDiligenceResult, GreenLotDetailsDto, GreenLotWithDetailsDto};
use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::outbound::eudr::EudrClient;
use crate::outbound::eudr_jobs;
use crate::shared::Shared;
use crate::wire::{Instant, ReadRequest, WriteRequest, required};

impl<S: Store> Ctx<S> {
    /// The client of the IS, or 503 `eudr_not_configured`.
    fn eudr(&self) -> Result<Arc<EudrClient>, ApiError> {
        self.state
            .eudr
            .clone()
            .ok_or_else(ApiError::eudr_not_configured)
    }

    /// The use cases acting as this call's client.
    fn app(&self) -> Roastery<S> {
        self.state.app.acting_as(Caller {
            client_id: self.client_id.clone(),
            operation: Some(self.operation),
        })
    }

    fn eudr_timing(&self) -> roastery_app::eudr_settings::EudrTiming {
        eudr_jobs::timing(&self.state.eudr_schedule)
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifyStatementsData {
    /// A source green lot.
    #[schema(value_type = Uuid, required = true)]
    pub green_lot_id: Option<Uuid>,
}

pub(super) async fn verify_statements<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<VerifyStatementsData>>(body)?.data()?;
    let lot_id = required(data.green_lot_id, "data.greenLotId")?;
    let eu = ctx.eudr()?;
    let lot = eudr_jobs::verify_statements(&ctx.app(), eu.as_ref(), lot_id)
        .await
        .map_err(|e| ctx.error(e))?;
    let mut shared = Shared::default();
    let details = GreenLotDetailsDto::new(
        (lot.view.lot.id, lot.details, lot.due_diligence),
        &mut shared,
    );
    let result = DueDiligenceResult {
        green_lot: GreenLotWithDetailsDto {
            lot: lot.view.into(),
            details,
        },
    };
    ctx.ok_shared(result, shared)
}

/// The statement's data (`previewStatement`, `submitStatement`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileStatementData {
    /// 1–100 distinct source green lots declared together.
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub green_lot_ids: Option<Vec<Uuid>>,
    /// `IMPORT`, `DOMESTIC` or `EXPORT`.
    #[schema(value_type = String, required = true)]
    pub activity_type: Option<String>,
    /// An EU member state (required for `IMPORT`).
    pub country_of_activity: Option<String>,
    pub border_cross_country: Option<String>,
    /// ≤ 35 letters, digits, `-`, `_`; default `RST-` and the submission's first 8 hex digits.
    pub internal_reference_number: Option<String>,
    /// ≤ 2,000 characters.
    pub comment: Option<String>,
    /// Default false.
    pub geo_location_confidential: Option<bool>,
}

impl FileStatementData {
    fn input(self) -> Result<StatementInput, ApiError> {
        Ok(StatementInput {
            green_lot_ids: required(self.green_lot_ids, "data.greenLotIds")?,
            activity_type: required(self.activity_type, "data.activityType")?,
            country_of_activity: self.country_of_activity,
            border_cross_country: self.border_cross_country,
            internal_reference_number: self.internal_reference_number,
            comment: self.comment,
            geo_location_confidential: self.geo_location_confidential.unwrap_or(false),
        })
    }
}

/// One EU rule the statement would break.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemDto {
    #[schema(required = true)]
    pub lot_id: Option<Uuid>,
    pub field: String,
    pub rule: &'static str,
    pub message: String,
}

impl From<Problem> for ProblemDto {
    fn from(p: Problem) -> Self {
        Self {
            lot_id: p.lot_id,
            field: p.field.to_string(),
            rule: p.rule,
            message: p.message,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreviewResult {
    /// The DDS Roastery would send, as JSON (plots as GeoJSON FeatureCollections).
    #[schema(value_type = Object)]
    pub statement: serde_json::Value,
    pub problems: Vec<ProblemDto>,
    /// No problems.
    pub ready: bool,
}

pub(super) async fn preview_statement<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let input = decode::<WriteRequest<FileStatementData>>(body)?
        .data()?
        .input()?;
    ctx.eudr()?;
    let preview = ctx.run(move |app| app.preview_statement(input)).await?;
    let data = ctx.payload();
    ctx.ok(PreviewResult {
        statement: preview.statement_json(),
        ready: preview.ready(),
        problems: preview
            .problems
            .into_iter()
            .map(|mut p| {
                p.rebase(&data);
                p.into()
            })
            .collect(),
    })
}

/// `{"status", "date", "message"}`
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntryDto {
    pub status: String,
    pub date: Instant,
    #[schema(required = true)]
    pub message: Option<String>,
}

/// A statement filed with the EU information system.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmissionDto {
    pub id: Uuid,
    /// The IS's uuid, once it answered.
    #[schema(required = true)]
    pub eu_uuid: Option<String>,
    /// `SENDING`, `SUBMITTED`, `AVAILABLE`, `REJECTED`, `WITHDRAWN`, `FAILED`, … (the IS's
    /// statuses).
    pub status: String,
    pub internal_reference_number: String,
    pub activity_type: &'static str,
    pub green_lot_ids: Vec<Uuid>,
    #[schema(required = true)]
    pub reference_number: Option<String>,
    #[schema(required = true)]
    pub verification_number: Option<String>,
    pub submitted_date: Instant,
    pub updated_date: Instant,
    pub history: Vec<HistoryEntryDto>,
}

impl From<Submission> for SubmissionDto {
    fn from(s: Submission) -> Self {
        Self {
            id: s.id,
            eu_uuid: s.eu_uuid,
            status: s.status.as_str().to_owned(),
            internal_reference_number: s.internal_reference_number,
            activity_type: s.activity_type.as_str(),
            green_lot_ids: s.green_lot_ids,
            reference_number: s.reference_number,
            verification_number: s.verification_number,
            submitted_date: s.submitted_date.into(),
            updated_date: s.updated_date.into(),
            history: s
                .history
                .into_iter()
                .map(|h| HistoryEntryDto {
                    status: h.status,
                    date: h.date.into(),
                    message: h.message,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmissionResult {
    pub submission: SubmissionDto,
}

pub(super) async fn submit_statement<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let input = decode::<WriteRequest<FileStatementData>>(body)?
        .data()?
        .input()?;
    let eu = ctx.eudr()?;
    let submission = eudr_jobs::submit_statement(&ctx.app(), eu.as_ref(), input, ctx.eudr_timing())
        .await
        .map_err(|e| ctx.error(e))?;
    ctx.ok(SubmissionResult {
        submission: submission.into(),
    })
}

/// `submissionId` and the statement's data but `activityType` (the IS keeps it).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AmendStatementData {
    #[schema(value_type = Uuid, required = true)]
    pub submission_id: Option<Uuid>,
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub green_lot_ids: Option<Vec<Uuid>>,
    pub country_of_activity: Option<String>,
    pub border_cross_country: Option<String>,
    /// The submission's when absent.
    pub internal_reference_number: Option<String>,
    pub comment: Option<String>,
    pub geo_location_confidential: Option<bool>,
}

pub(super) async fn amend_statement<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<AmendStatementData>>(body)?.data()?;
    let id = required(data.submission_id, "data.submissionId")?;
    let input = StatementInput {
        green_lot_ids: required(data.green_lot_ids, "data.greenLotIds")?,
        activity_type: String::new(),
        country_of_activity: data.country_of_activity,
        border_cross_country: data.border_cross_country,
        internal_reference_number: data.internal_reference_number,
        comment: data.comment,
        geo_location_confidential: data.geo_location_confidential.unwrap_or(false),
    };
    let eu = ctx.eudr()?;
    let submission =
        eudr_jobs::amend_statement(&ctx.app(), eu.as_ref(), id, input, ctx.eudr_timing())
            .await
            .map_err(|e| ctx.error(e))?;
    ctx.ok(SubmissionResult {
        submission: submission.into(),
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WithdrawStatementData {
    #[schema(value_type = Uuid, required = true)]
    pub submission_id: Option<Uuid>,
}

pub(super) async fn withdraw_statement<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<WithdrawStatementData>>(body)?.data()?;
    let id = required(data.submission_id, "data.submissionId")?;
    let eu = ctx.eudr()?;
    let submission = eudr_jobs::withdraw_statement(&ctx.app(), eu.as_ref(), id)
        .await
        .map_err(|e| ctx.error(e))?;
    ctx.ok(SubmissionResult {
        submission: submission.into(),
    })
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListSubmissionsFilter {
    /// Only submissions in this status.
    pub status: Option<String>,
    /// Only submissions declaring this lot.
    pub green_lot_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmissionsResult {
    pub submissions: Vec<SubmissionDto>,
}

pub(super) async fn list_submissions<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) = decode::<ReadRequest<ListSubmissionsFilter>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let filter = SubmissionFilter {
        status: filter.status,
        green_lot_id: filter.green_lot_id,
    };
    let page = ctx.page_request(&pagination)?;
    ctx.eudr()?;
    let page = ctx
        .run(move |app| app.list_submissions(filter, page))
        .await?;
    ctx.page(
        SubmissionsResult {
            submissions: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmissionsByIdsFilter {
    /// 1–100 distinct ids.
    #[schema(value_type = Vec<Uuid>, required = true)]
    pub submission_ids: Option<Vec<Uuid>>,
}

pub(super) async fn submissions_by_ids<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, _) = decode::<ReadRequest<SubmissionsByIdsFilter>>(body)?.into_parts();
    let filter = required(filter, "params.filter")?;
    let ids = required(filter.submission_ids, "params.filter.submissionIds")?;
    ctx.eudr()?;
    let found = ctx.run(move |app| app.submissions_by_ids(ids)).await?;
    ctx.ok(SubmissionsResult {
        submissions: found.into_iter().map(Into::into).collect(),
    })
}
