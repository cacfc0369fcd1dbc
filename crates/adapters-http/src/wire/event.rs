//! The change feed's event: what `listEvents` answers and the body of every webhook delivery.

use roastery_domain::event::Event;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::value::Instant;

#[derive(Debug, Serialize, ToSchema)]
pub struct SubjectDto {
    pub id: Uuid,
    /// The resource: `location`, `project`, `greenLot`, `roastedLot`, `blendedLot`, `profile`,
    /// `cupping`, `physicalAnalysis`, `product` or `order`.
    #[serde(rename = "type")]
    pub subject_type: &'static str,
}

/// One event of the change feed; also the body of a webhook delivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventDto {
    pub id: Uuid,
    /// Position in the feed: an integer, written as a string.
    pub sequence: String,
    /// `<resource>.created` or `<resource>.updated`.
    #[serde(rename = "type")]
    pub event_type: String,
    pub created_date: Instant,
    pub subject: SubjectDto,
    /// The operation that made the change (`inventory.green.setGreenLotWeight`).
    pub operation: String,
    pub client_id: String,
}

impl From<Event> for EventDto {
    fn from(e: Event) -> Self {
        Self {
            id: e.id,
            sequence: e.sequence.unwrap_or_default().to_string(),
            event_type: e.event_type.to_string(),
            created_date: Instant(e.created_date),
            subject: SubjectDto {
                id: e.subject.id,
                subject_type: e.subject.resource.as_str(),
            },
            operation: e.operation,
            client_id: e.client_id,
        }
    }
}
