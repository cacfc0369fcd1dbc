//! quality.physical: physical analyses of green, roasted and blended lots.

use actix_web::HttpResponse;
use roastery_app::physical::ListPhysicalAnalyses;
use roastery_domain::physical_analysis::{
    NewDefect, NewPhysicalAnalysis, NewScreenSize, PhysicalAnalysis,
};
use roastery_ports::Store;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::call::Ctx;
use crate::decode::decode;
use crate::error::ApiError;
use crate::wire::{
    Amount, DateRange, Instant, LotRefDto, NameRef, ReadRequest, WriteRequest, required,
};

#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct ScreenSizeDto {
    /// The screen's label (`18`, `17/18`, `PB`).
    #[schema(value_type = String, required = true)]
    pub size: Option<String>,
    pub percentage: Option<Amount>,
}

#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct DefectDto {
    #[schema(value_type = String, required = true)]
    pub name: Option<String>,
    pub count: Option<i32>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalAnalysisDto {
    pub id: Uuid,
    pub analysis_number: String,
    pub analysis_date: Instant,
    pub analysed_lot: LotRefDto,
    #[schema(required = true)]
    pub moisture: Option<Amount>,
    #[schema(required = true)]
    pub water_activity: Option<Amount>,
    #[schema(required = true)]
    pub density: Option<Amount>,
    pub screen_sizes: Vec<ScreenSizeDto>,
    pub defects: Vec<DefectDto>,
    #[schema(required = true)]
    pub note: Option<String>,
    #[schema(required = true)]
    pub evaluator: Option<NameRef>,
}

impl From<PhysicalAnalysis> for PhysicalAnalysisDto {
    fn from(a: PhysicalAnalysis) -> Self {
        Self {
            id: a.id,
            analysis_number: a.display_number(),
            analysis_date: a.analysis_date.into(),
            analysed_lot: a.analysed_lot.into(),
            moisture: a.moisture.map(Amount),
            water_activity: a.water_activity.map(Amount),
            density: a.density.map(Amount),
            screen_sizes: a
                .screen_sizes
                .into_iter()
                .map(|s| ScreenSizeDto {
                    size: Some(s.size),
                    percentage: Some(Amount(s.percentage)),
                })
                .collect(),
            defects: a
                .defects
                .into_iter()
                .map(|d| DefectDto {
                    name: Some(d.name),
                    count: Some(d.count),
                })
                .collect(),
            note: a.note,
            evaluator: a.evaluator.map(|name| NameRef { name: Some(name) }),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalAnalysisResult {
    pub physical_analysis: PhysicalAnalysisDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalAnalysesResult {
    pub physical_analyses: Vec<PhysicalAnalysisDto>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordPhysicalAnalysisData {
    #[schema(value_type = Instant, required = true)]
    pub analysis_date: Option<Instant>,
    #[schema(value_type = LotRefDto, required = true)]
    pub analysed_lot: Option<LotRefDto>,
    pub moisture: Option<Amount>,
    pub water_activity: Option<Amount>,
    pub density: Option<Amount>,
    pub screen_sizes: Option<Vec<ScreenSizeDto>>,
    pub defects: Option<Vec<DefectDto>>,
    pub note: Option<String>,
    pub evaluator: Option<NameRef>,
}

pub(super) async fn record_physical_analysis<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let data = decode::<WriteRequest<RecordPhysicalAnalysisData>>(body)?.data()?;
    let lot = required(data.analysed_lot, "data.analysedLot")?;
    let new = NewPhysicalAnalysis {
        analysis_date: required(data.analysis_date, "data.analysisDate")?.0,
        analysed_lot: LotRefDto::parse(lot.id, lot.lot_type, "data.analysedLot")?,
        moisture: data.moisture.map(|a| a.0),
        water_activity: data.water_activity.map(|a| a.0),
        density: data.density.map(|a| a.0),
        screen_sizes: data
            .screen_sizes
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                Ok(NewScreenSize {
                    size: required(s.size, &format!("data.screenSizes[{i}].size"))?,
                    percentage: s.percentage.map(|a| a.0),
                })
            })
            .collect::<Result<Vec<_>, ApiError>>()?,
        defects: data
            .defects
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                Ok(NewDefect {
                    name: required(d.name, &format!("data.defects[{i}].name"))?,
                    count: d.count,
                })
            })
            .collect::<Result<Vec<_>, ApiError>>()?,
        note: data.note,
        evaluator: data.evaluator.and_then(|e| e.name),
    };
    let analysis = ctx
        .run(move |app| app.record_physical_analysis(new))
        .await?;
    ctx.ok(PhysicalAnalysisResult {
        physical_analysis: analysis.into(),
    })
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListPhysicalAnalysesFilter {
    pub analysis_date: Option<DateRange>,
    pub analysed_lot_ids: Option<Vec<Uuid>>,
}

pub(super) async fn list_physical_analyses<S: Store>(
    ctx: Ctx<S>,
    body: &[u8],
) -> Result<HttpResponse, ApiError> {
    let (filter, pagination) =
        decode::<ReadRequest<ListPhysicalAnalysesFilter>>(body)?.into_parts();
    let filter = filter.unwrap_or_default();
    let range = filter.analysis_date.unwrap_or_default();
    let cmd = ListPhysicalAnalyses {
        from: range.from.map(|i| i.0),
        to: range.to.map(|i| i.0),
        analysed_lot_ids: filter.analysed_lot_ids,
    };
    let page = ctx.page_request(&pagination)?;
    let page = ctx
        .run(move |app| app.list_physical_analyses(cmd, page))
        .await?;
    ctx.page(
        PhysicalAnalysesResult {
            physical_analyses: page.items.into_iter().map(Into::into).collect(),
        },
        page.next,
    )
}
