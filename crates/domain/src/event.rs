//! The change feed: what a committed write tells integrations (api-decisions §13).
//!
//! A write records which resources it created or changed ([`Changes`]); the store turns them into
//! one [`Event`] per resource in the write's own transaction. Events carry no resource body.

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::violation::{BrokenRule, Violation};

/// The resources whose changes the feed reports; `subject.type` is [`Resource::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    Location,
    Project,
    GreenLot,
    RoastedLot,
    BlendedLot,
    Profile,
    Cupping,
    PhysicalAnalysis,
    Product,
    Order,
    Submission,
}

impl Resource {
    pub const ALL: [Resource; 11] = [
        Resource::Location,
        Resource::Project,
        Resource::GreenLot,
        Resource::RoastedLot,
        Resource::BlendedLot,
        Resource::Profile,
        Resource::Cupping,
        Resource::PhysicalAnalysis,
        Resource::Product,
        Resource::Order,
        Resource::Submission,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Location => "location",
            Resource::Project => "project",
            Resource::GreenLot => "greenLot",
            Resource::RoastedLot => "roastedLot",
            Resource::BlendedLot => "blendedLot",
            Resource::Profile => "profile",
            Resource::Cupping => "cupping",
            Resource::PhysicalAnalysis => "physicalAnalysis",
            Resource::Product => "product",
            Resource::Order => "order",
            Resource::Submission => "submission",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

/// Whether a write made a resource or changed one it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Change {
    Created,
    Updated,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Updated => "updated",
        }
    }
}

/// The resource an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Subject {
    pub resource: Resource,
    pub id: Uuid,
}

impl Subject {
    pub fn new(resource: Resource, id: Uuid) -> Self {
        Self { resource, id }
    }
}

/// `<resource>.created` or `<resource>.updated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventType {
    pub resource: Resource,
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventTypeError {
    #[error("`{0}` is not an event type (`<resource>.created` or `<resource>.updated`)")]
    Unknown(String),
}

impl BrokenRule for EventTypeError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }
}

impl EventType {
    /// Every event type, resource by resource.
    pub fn all() -> impl Iterator<Item = EventType> {
        Resource::ALL.into_iter().flat_map(|resource| {
            [Change::Created, Change::Updated]
                .into_iter()
                .map(move |change| EventType { resource, change })
        })
    }

    pub fn parse(name: &str) -> Result<Self, EventTypeError> {
        let unknown = || EventTypeError::Unknown(name.to_owned());
        let (resource, change) = name.split_once('.').ok_or_else(unknown)?;
        let resource = Resource::parse(resource).ok_or_else(unknown)?;
        let change = match change {
            "created" => Change::Created,
            "updated" => Change::Updated,
            _ => return Err(unknown()),
        };
        Ok(Self { resource, change })
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.resource.as_str(), self.change.as_str())
    }
}

/// What one unit of work created or changed: one entry per resource, in the order first
/// recorded. A resource created and then changed in the same unit of work was created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    entries: Vec<(Subject, Change)>,
}

impl Changes {
    pub fn record(&mut self, subject: Subject, change: Change) {
        match self.entries.iter_mut().find(|(s, _)| *s == subject) {
            Some((_, seen)) => {
                if change == Change::Created {
                    *seen = Change::Created;
                }
            }
            None => self.entries.push((subject, change)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `subject` was noted, created or changed.
    pub fn contains(&self, subject: Subject) -> bool {
        self.entries.iter().any(|(s, _)| *s == subject)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The events of these changes, all made by one operation of one client at one instant.
    pub fn into_events(self, origin: &EventOrigin, mut new_id: impl FnMut() -> Uuid) -> Vec<Event> {
        self.entries
            .into_iter()
            .map(|(subject, change)| Event {
                id: new_id(),
                sequence: None,
                event_type: EventType {
                    resource: subject.resource,
                    change,
                },
                subject,
                operation: origin.operation.clone(),
                client_id: origin.client_id.clone(),
                created_date: origin.created_date,
            })
            .collect()
    }
}

/// Who made the changes, with what, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventOrigin {
    pub operation: String,
    pub client_id: String,
    pub created_date: DateTime<Utc>,
}

/// One entry of the change feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub id: Uuid,
    /// The position in the feed; `None` until the store has placed the event (its transaction
    /// committed and every earlier one has too).
    pub sequence: Option<i64>,
    pub event_type: EventType,
    pub subject: Subject,
    pub operation: String,
    pub client_id: String,
    pub created_date: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    #[test]
    fn one_change_per_resource_and_created_wins_over_updated() {
        let mut changes = Changes::default();
        changes.record(Subject::new(Resource::GreenLot, id(1)), Change::Updated);
        changes.record(Subject::new(Resource::GreenLot, id(2)), Change::Created);
        changes.record(Subject::new(Resource::GreenLot, id(2)), Change::Updated);
        changes.record(Subject::new(Resource::GreenLot, id(1)), Change::Updated);
        changes.record(Subject::new(Resource::RoastedLot, id(1)), Change::Updated);
        changes.record(Subject::new(Resource::RoastedLot, id(1)), Change::Created);
        let origin = EventOrigin {
            operation: "inventory.roast.recordRoast".into(),
            client_id: "c".into(),
            created_date: DateTime::UNIX_EPOCH,
        };
        let mut next = 10;
        let events = changes.into_events(&origin, || {
            next += 1;
            id(next)
        });
        let types: Vec<_> = events
            .iter()
            .map(|e| (e.subject.id, e.event_type.to_string()))
            .collect();
        assert_eq!(
            types,
            [
                (id(1), "greenLot.updated".to_owned()),
                (id(2), "greenLot.created".to_owned()),
                (id(1), "roastedLot.created".to_owned()),
            ]
        );
        assert_eq!(
            events.iter().map(|e| e.id).collect::<Vec<_>>(),
            [id(11), id(12), id(13)]
        );
    }

    #[test]
    fn event_types_read_as_they_are_written() {
        for t in EventType::all() {
            assert_eq!(EventType::parse(&t.to_string()), Ok(t));
        }
        assert_eq!(EventType::all().count(), 22);
        for bad in [
            "greenLot",
            "greenLot.deleted",
            "lot.created",
            ".created",
            "",
        ] {
            assert!(EventType::parse(bad).is_err(), "{bad}");
        }
    }
}
