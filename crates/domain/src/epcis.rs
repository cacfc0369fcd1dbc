//! GS1 EPCIS 2.0 export (api-decisions §16): the events of a genealogy's ledger, and the
//! `EPCISDocument` that carries them.
//!
//! [`events`] turns what the store read (the genealogy's edges, the ledger entries touching its
//! lots, those lots' numbers and locations, the due diligence of its source lots) into events,
//! one per ledger operation, each with its CBV 2.0 event hash as `eventID`
//! ([`crate::epcis_hash`]). Which operations belong to an export is decided by the genealogy
//! (§8): a lot's import, a transfer between two lots joined by a transfer edge, the roast or
//! blend making a lot an edge reaches, a shipment of a lot to an order an edge reaches. An
//! event holds every entry of its operation, whatever the direction of the export, so one
//! operation has one event id in every export.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::due_diligence::DueDiligence;
use crate::epcis_hash::{event_id, field};
use crate::ledger::{Edge, EdgeKind, EntryKind, LedgerEntry, Reference};
use crate::stock::{TypedLotRef, number};
use crate::violation::{BrokenRule, Violation};
use crate::weight::WeightUnit;

/// The JSON-LD context of every document: GS1's, and the `roastery` prefix of extensions.
pub const ROASTERY_NAMESPACE: &str = "urn:roastery:epcis:";
const GS1_CONTEXT: &str = "https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld";

/// The URI every identifier of an export starts with (`ROASTERY_EPCIS_BASE_URI`, default
/// `urn:roastery:{installationId}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpcisBase(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EpcisBaseError {
    #[error("the EPCIS base URI `{0}` is not an absolute URI")]
    NotAbsolute(String),
    #[error("the EPCIS base URI `{0}` must not end with `/`")]
    TrailingSlash(String),
    /// `roastery:` is the prefix of Roastery's extension fields; a base with that scheme would
    /// be read as one in JSON-LD.
    #[error("the EPCIS base URI `{0}` must not use the scheme `roastery`")]
    ReservedScheme(String),
}

impl BrokenRule for EpcisBaseError {
    fn violation(&self) -> Violation {
        Violation::InvalidParameter
    }
}

impl EpcisBase {
    pub fn parse(uri: &str) -> Result<Self, EpcisBaseError> {
        let parsed =
            url::Url::parse(uri).map_err(|_| EpcisBaseError::NotAbsolute(uri.to_owned()))?;
        if uri.ends_with('/') {
            return Err(EpcisBaseError::TrailingSlash(uri.to_owned()));
        }
        if parsed.scheme() == "roastery" {
            return Err(EpcisBaseError::ReservedScheme(uri.to_owned()));
        }
        Ok(Self(uri.to_owned()))
    }

    /// `urn:roastery:{installationId}`.
    pub fn of_installation(installation_id: Uuid) -> Self {
        Self(format!("urn:roastery:{installation_id}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn uri(&self, kind: &str, segment: &str) -> String {
        format!("{}/{kind}/{}", self.0, percent_encode(segment))
    }

    pub fn lot(&self, lot_number: &str) -> String {
        self.uri("lot", lot_number)
    }

    pub fn location(&self, id: Uuid) -> String {
        self.uri("location", &id.to_string())
    }

    pub fn order(&self, id: Uuid) -> String {
        self.uri("order", &id.to_string())
    }

    pub fn ledger_entry(&self, id: Uuid) -> String {
        self.uri("ledger", &id.to_string())
    }
}

/// A path segment with every byte but RFC 3986's unreserved characters percent-encoded.
pub fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Object,
    Transformation,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Object => "ObjectEvent",
            Self::Transformation => "TransformationEvent",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Add,
    Observe,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Add => "ADD",
            Self::Observe => "OBSERVE",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BizStep {
    Commissioning,
    Shipping,
    Receiving,
    /// Not a CBV 2.0 business step: written as the full URI `urn:roastery:epcis:notifying`.
    Notifying,
}

impl BizStep {
    /// As the document writes it: a bare CBV word, or a full URI.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Commissioning => "commissioning",
            Self::Shipping => "shipping",
            Self::Receiving => "receiving",
            Self::Notifying => "urn:roastery:epcis:notifying",
        }
    }

    fn uri(self) -> String {
        match self {
            Self::Notifying => self.as_str().to_owned(),
            _ => format!("https://ref.gs1.org/cbv/BizStep-{}", self.as_str()),
        }
    }
}

/// `KGM` or `LBR` (UN/CEFACT codes).
pub fn uom(unit: WeightUnit) -> &'static str {
    match unit {
        WeightUnit::Kg => "KGM",
        WeightUnit::Lbs => "LBR",
    }
}

/// A weight as an EPCIS quantity: thousandths of the unit, rounded half-even from micro-units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    pub millis: i64,
    pub unit: WeightUnit,
}

impl Quantity {
    pub fn from_micros(micros: i64, unit: WeightUnit) -> Self {
        let (q, r) = (micros.div_euclid(1000), micros.rem_euclid(1000));
        let millis = if r > 500 || (r == 500 && q % 2 != 0) {
            q.saturating_add(1)
        } else {
            q
        };
        Self { millis, unit }
    }

    /// The shortest decimal text (`60`, `50.4`, `0.125`).
    pub fn text(self) -> String {
        let sign = if self.millis < 0 { "-" } else { "" };
        let abs = self.millis.unsigned_abs();
        let (whole, frac) = (abs / 1000, abs % 1000);
        if frac == 0 {
            return format!("{sign}{whole}");
        }
        let frac = format!("{frac:03}");
        format!("{sign}{whole}.{}", frac.trim_end_matches('0'))
    }

    /// A JSON number: an integer when whole, else the nearest double of [`Self::text`].
    fn json(self) -> Value {
        if self.millis % 1000 == 0 {
            Value::from(self.millis / 1000)
        } else {
            self.text()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number)
        }
    }

    /// As the reference reads the JSON number: through a double.
    fn prehash_text(self) -> String {
        crate::epcis_hash::canonical_value(&self.text())
    }
}

/// A `quantityList` element: a lot (its URI as `epcClass`) and, except on notifying events, a
/// weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityElement {
    pub epc_class: String,
    pub quantity: Option<Quantity>,
}

impl QuantityElement {
    fn json(&self) -> QuantityJson<'_> {
        QuantityJson {
            epc_class: &self.epc_class,
            quantity: self.quantity.map(Quantity::json),
            uom: self.quantity.map(|q| uom(q.unit)),
        }
    }

    fn prehash(&self) -> String {
        let mut s = String::from("quantityElement");
        s.push_str(&field("epcClass", &self.epc_class));
        if let Some(q) = self.quantity {
            s.push_str(&format!("quantity={}", q.prehash_text()));
            s.push_str(&field("uom", uom(q.unit)));
        }
        s
    }
}

/// A due diligence statement as a notifying event carries it (`roastery:eudrStatements`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EudrStatement {
    pub reference_number: String,
    pub verification_number: Option<String>,
    pub kind: &'static str,
    pub role: &'static str,
}

impl EudrStatement {
    fn fields(&self) -> Vec<(&'static str, &str)> {
        let mut fields = vec![("referenceNumber", self.reference_number.as_str())];
        if let Some(v) = &self.verification_number {
            fields.push(("verificationNumber", v.as_str()));
        }
        fields.push(("kind", self.kind));
        fields.push(("role", self.role));
        fields
    }
}

/// One EPCIS event as Roastery emits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub event_type: EventType,
    /// Milliseconds at most (finer parts are cut off when the event is made).
    pub event_time: DateTime<Utc>,
    pub quantity_list: Vec<QuantityElement>,
    pub input_quantity_list: Vec<QuantityElement>,
    pub output_quantity_list: Vec<QuantityElement>,
    pub action: Option<Action>,
    pub biz_step: BizStep,
    /// Only `in_transit` (shipments).
    pub in_transit: bool,
    pub read_point: Option<String>,
    pub biz_location: Option<String>,
    /// Purchase orders (`po`), by URI.
    pub purchase_orders: Vec<String>,
    /// `roastery:ledgerEntries`: the URIs of the entries the event is made from, sorted.
    pub ledger_entries: Vec<String>,
    /// `roastery:eudrStatements`, by reference number.
    pub eudr_statements: Vec<EudrStatement>,
}

/// `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub fn time_text(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn to_millis(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap_or(t)
}

fn ns(name: &str) -> String {
    format!("{{{ROASTERY_NAMESPACE}}}{name}")
}

impl Event {
    /// The pre-hash string of the CBV 2.0 event hash ([`crate::epcis_hash`]).
    pub fn prehash(&self) -> String {
        let mut s = format!("eventType={}", self.event_type.as_str());
        s.push_str(&field("eventTime", &time_text(self.event_time)));
        s.push_str(&field("eventTimeZoneOffset", "+00:00"));
        for (name, list) in [
            ("quantityList", &self.quantity_list),
            ("inputQuantityList", &self.input_quantity_list),
            ("outputQuantityList", &self.output_quantity_list),
        ] {
            if !list.is_empty() {
                let mut elements: Vec<String> = list.iter().map(QuantityElement::prehash).collect();
                elements.sort();
                s.push_str(name);
                s.push_str(&elements.concat());
            }
        }
        if let Some(action) = self.action {
            s.push_str(&field("action", action.as_str()));
        }
        s.push_str(&field("bizStep", &self.biz_step.uri()));
        if self.in_transit {
            s.push_str(&field(
                "disposition",
                "https://ref.gs1.org/cbv/Disp-in_transit",
            ));
        }
        if let Some(id) = &self.read_point {
            s.push_str("readPoint");
            s.push_str(&field("id", id));
        }
        if let Some(id) = &self.biz_location {
            s.push_str("bizLocation");
            s.push_str(&field("id", id));
        }
        if !self.purchase_orders.is_empty() {
            let mut transactions: Vec<String> = (self.purchase_orders.iter())
                .map(|po| {
                    field("type", "https://ref.gs1.org/cbv/BTT-po") + &field("bizTransaction", po)
                })
                .collect();
            transactions.sort();
            s.push_str("bizTransactionList");
            s.push_str(&transactions.concat());
        }
        let mut extensions: Vec<String> = (self.ledger_entries.iter())
            .map(|uri| field(&ns("ledgerEntries"), uri))
            .collect();
        for statement in &self.eudr_statements {
            let mut fields: Vec<String> = (statement.fields().into_iter())
                .map(|(name, value)| field(&ns(name), value))
                .collect();
            fields.sort();
            extensions.push(ns("eudrStatements") + &fields.concat());
        }
        extensions.sort();
        s.push_str(&extensions.concat());
        s
    }

    pub fn id(&self) -> String {
        event_id(&self.prehash())
    }

    /// The event as the document carries it, `eventID` included, its fields in the order of
    /// the standard's examples (the reference hashes a business transaction's fields in the
    /// order it reads them: `type` first).
    fn json(&self) -> EventJson<'_> {
        fn list(l: &[QuantityElement]) -> Vec<QuantityJson<'_>> {
            l.iter().map(QuantityElement::json).collect()
        }
        EventJson {
            event_type: self.event_type.as_str(),
            event_id: self.id(),
            event_time: time_text(self.event_time),
            event_time_zone_offset: "+00:00",
            quantity_list: list(&self.quantity_list),
            input_quantity_list: list(&self.input_quantity_list),
            output_quantity_list: list(&self.output_quantity_list),
            action: self.action.map(Action::as_str),
            biz_step: self.biz_step.as_str(),
            disposition: self.in_transit.then_some("in_transit"),
            read_point: self.read_point.as_deref().map(|id| IdJson { id }),
            biz_location: self.biz_location.as_deref().map(|id| IdJson { id }),
            biz_transaction_list: (self.purchase_orders.iter())
                .map(|po| BizTransactionJson {
                    transaction_type: "po",
                    biz_transaction: po,
                })
                .collect(),
            ledger_entries: &self.ledger_entries,
            eudr_statements: (self.eudr_statements.iter())
                .map(|s| StatementJson {
                    reference_number: &s.reference_number,
                    verification_number: s.verification_number.as_deref(),
                    kind: s.kind,
                    role: s.role,
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventJson<'a> {
    #[serde(rename = "type")]
    event_type: &'static str,
    #[serde(rename = "eventID")]
    event_id: String,
    event_time: String,
    event_time_zone_offset: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    quantity_list: Vec<QuantityJson<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    input_quantity_list: Vec<QuantityJson<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    output_quantity_list: Vec<QuantityJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<&'static str>,
    biz_step: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    disposition: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_point: Option<IdJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    biz_location: Option<IdJson<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    biz_transaction_list: Vec<BizTransactionJson<'a>>,
    #[serde(
        rename = "roastery:ledgerEntries",
        skip_serializing_if = "<[_]>::is_empty"
    )]
    ledger_entries: &'a [String],
    #[serde(
        rename = "roastery:eudrStatements",
        skip_serializing_if = "Vec::is_empty"
    )]
    eudr_statements: Vec<StatementJson<'a>>,
}

#[derive(Serialize)]
struct IdJson<'a> {
    id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BizTransactionJson<'a> {
    #[serde(rename = "type")]
    transaction_type: &'static str,
    biz_transaction: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QuantityJson<'a> {
    epc_class: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    quantity: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uom: Option<&'static str>,
}

#[derive(Serialize)]
struct StatementJson<'a> {
    #[serde(rename = "roastery:referenceNumber")]
    reference_number: &'a str,
    #[serde(
        rename = "roastery:verificationNumber",
        skip_serializing_if = "Option::is_none"
    )]
    verification_number: Option<&'a str>,
    #[serde(rename = "roastery:kind")]
    kind: &'static str,
    #[serde(rename = "roastery:role")]
    role: &'static str,
}

/// A lot an export names: its number (for its URI) and location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportLot {
    pub lot: TypedLotRef,
    pub lot_number: i64,
    pub location_id: Option<Uuid>,
}

/// What the store read for an export, in one snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct History {
    /// The asked lot, if a lot was asked for.
    pub start: Option<TypedLotRef>,
    /// Every edge of the genealogy (§8), as the trace's query answers them.
    pub edges: Vec<Edge>,
    /// The ledger entries of the genealogy's lots and those naming them as reference, in any
    /// order (entries of operations outside the genealogy are left out here).
    pub entries: Vec<LedgerEntry>,
    /// The lots of the genealogy and of `entries`, in any order.
    pub lots: Vec<ExportLot>,
    /// The source green lots of the genealogy that have due diligence.
    pub due_diligence: Vec<(Uuid, DueDiligence)>,
}

impl History {
    /// The lots the genealogy reaches: the asked one and both ends of every edge.
    pub fn reached(&self) -> HashSet<TypedLotRef> {
        let mut reached: HashSet<TypedLotRef> = self.start.into_iter().collect();
        for e in &self.edges {
            reached.insert(e.from);
            if let Reference::Lot(to) = e.to {
                reached.insert(to);
            }
        }
        reached
    }
}

/// The operation an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Operation {
    Import(Uuid),
    /// A transfer's shipping side, by its `TRANSFER_OUT` entry.
    TransferOut(Uuid),
    /// A transfer's receiving side, by its `TRANSFER_IN` entry.
    TransferIn(Uuid),
    /// The roast or blend that made this lot.
    Making(Uuid),
    /// Shipments of a lot to an order.
    Shipment {
        lot: Uuid,
        order: Uuid,
    },
}

/// The events of an export, by `eventTime`, then `eventID`.
pub fn events(base: &EpcisBase, history: &History) -> Vec<Event> {
    let reached = history.reached();
    let reached_ids: HashSet<Uuid> = reached.iter().map(|l| l.id).collect();
    let lots: HashMap<Uuid, &ExportLot> = history.lots.iter().map(|l| (l.lot.id, l)).collect();
    let mut transfers: HashSet<(Uuid, Uuid)> = HashSet::new();
    let mut made: HashMap<Uuid, DateTime<Utc>> = HashMap::new();
    let mut shipped: HashMap<(Uuid, Uuid), DateTime<Utc>> = HashMap::new();
    for e in &history.edges {
        match (e.kind, e.to) {
            (EdgeKind::Transfer, Reference::Lot(to)) => {
                transfers.insert((e.from.id, to.id));
            }
            (EdgeKind::Roast | EdgeKind::Blend, Reference::Lot(to)) => {
                made.insert(to.id, e.date);
            }
            (EdgeKind::Shipment, Reference::Order(order)) => {
                shipped.insert((e.from.id, order), e.date);
            }
            _ => {}
        }
    }
    let lot_uri = |id: Uuid| {
        lots.get(&id)
            .map(|l| base.lot(&number(l.lot.kind.prefix(), l.lot_number)))
    };
    let location_uri = |id: Uuid| {
        lots.get(&id)
            .and_then(|l| l.location_id)
            .map(|loc| base.location(loc))
    };
    // Every entry by its operation, each operation once.
    let mut operations: BTreeMap<Operation, Vec<&LedgerEntry>> = BTreeMap::new();
    let mut entries: Vec<&LedgerEntry> = history.entries.iter().collect();
    entries.sort_by_key(|e| e.id);
    entries.dedup_by_key(|e| e.id);
    for e in &entries {
        let reference = e.reference.map(Reference::id);
        let operation = match (e.kind, reference) {
            (EntryKind::Import | EntryKind::Opening, _) if reached_ids.contains(&e.lot.id) => {
                Operation::Import(e.id)
            }
            (EntryKind::TransferOut, Some(to)) if transfers.contains(&(e.lot.id, to)) => {
                Operation::TransferOut(e.id)
            }
            (EntryKind::TransferIn, Some(from)) if transfers.contains(&(from, e.lot.id)) => {
                Operation::TransferIn(e.id)
            }
            (EntryKind::RoastOutput | EntryKind::BlendOutput, _)
                if made.contains_key(&e.lot.id) =>
            {
                Operation::Making(e.lot.id)
            }
            (EntryKind::RoastInput | EntryKind::BlendInput, Some(output))
                if made.contains_key(&output) =>
            {
                Operation::Making(output)
            }
            (EntryKind::Shipment, Some(order)) if shipped.contains_key(&(e.lot.id, order)) => {
                Operation::Shipment {
                    lot: e.lot.id,
                    order,
                }
            }
            _ => continue,
        };
        operations.entry(operation).or_default().push(e);
    }
    // A transfer's two entries carry the same date: the receiving side finds its source's.
    let outs: HashMap<(Uuid, Uuid, DateTime<Utc>), &LedgerEntry> = (entries.iter())
        .filter(|e| e.kind == EntryKind::TransferOut)
        .filter_map(|e| Some(((e.lot.id, e.reference?.id(), e.created_date), *e)))
        .collect();
    let moved = |e: &LedgerEntry| Quantity::from_micros(e.delta_micros.saturating_abs(), e.unit());
    let mut events = Vec::new();
    for (operation, group) in operations {
        let ledger_entries = {
            let mut uris: Vec<String> = group.iter().map(|e| base.ledger_entry(e.id)).collect();
            uris.sort();
            uris
        };
        let Some(first) = group.first() else { continue };
        let event = match operation {
            Operation::Import(_) => {
                let Some(epc_class) = lot_uri(first.lot.id) else {
                    continue;
                };
                Event {
                    quantity_list: vec![QuantityElement {
                        epc_class,
                        quantity: Some(moved(first)),
                    }],
                    action: Some(Action::Add),
                    read_point: location_uri(first.lot.id),
                    biz_location: location_uri(first.lot.id),
                    ..Event::new(
                        EventType::Object,
                        first.created_date,
                        BizStep::Commissioning,
                    )
                }
            }
            Operation::TransferOut(_) => {
                let Some(epc_class) = lot_uri(first.lot.id) else {
                    continue;
                };
                Event {
                    quantity_list: vec![QuantityElement {
                        epc_class,
                        quantity: Some(moved(first)),
                    }],
                    action: Some(Action::Observe),
                    read_point: location_uri(first.lot.id),
                    ..Event::new(EventType::Object, first.created_date, BizStep::Shipping)
                }
            }
            Operation::TransferIn(_) => {
                let Some(Reference::Lot(source)) = first.reference else {
                    continue;
                };
                let (Some(input), Some(output)) = (lot_uri(source.id), lot_uri(first.lot.id))
                else {
                    continue;
                };
                let out = outs.get(&(source.id, first.lot.id, first.created_date));
                // Without its pair (the two are never written apart): the weight received.
                let sent = out.map_or_else(|| moved(first), |o| moved(o));
                Event {
                    input_quantity_list: vec![QuantityElement {
                        epc_class: input,
                        quantity: Some(sent),
                    }],
                    output_quantity_list: vec![QuantityElement {
                        epc_class: output,
                        quantity: Some(moved(first)),
                    }],
                    read_point: location_uri(first.lot.id),
                    biz_location: location_uri(first.lot.id),
                    ..Event::new(
                        EventType::Transformation,
                        first.created_date,
                        BizStep::Receiving,
                    )
                }
            }
            Operation::Making(made_lot) => {
                let Some(output) = group
                    .iter()
                    .find(|e| matches!(e.kind, EntryKind::RoastOutput | EntryKind::BlendOutput))
                else {
                    continue;
                };
                let Some(output_uri) = lot_uri(made_lot) else {
                    continue;
                };
                // Used weights by input lot (one entry each; summed should a lot appear twice).
                let mut used: BTreeMap<String, Quantity> = BTreeMap::new();
                for e in group
                    .iter()
                    .filter(|e| matches!(e.kind, EntryKind::RoastInput | EntryKind::BlendInput))
                {
                    let Some(uri) = lot_uri(e.lot.id) else {
                        continue;
                    };
                    let q = moved(e);
                    used.entry(uri)
                        .and_modify(|sum| sum.millis = sum.millis.saturating_add(q.millis))
                        .or_insert(q);
                }
                let date = made.get(&made_lot).copied().unwrap_or(output.created_date);
                Event {
                    input_quantity_list: used
                        .into_iter()
                        .map(|(epc_class, q)| QuantityElement {
                            epc_class,
                            quantity: Some(q),
                        })
                        .collect(),
                    output_quantity_list: vec![QuantityElement {
                        epc_class: output_uri,
                        quantity: Some(moved(output)),
                    }],
                    read_point: location_uri(made_lot),
                    biz_location: location_uri(made_lot),
                    ..Event::new(EventType::Transformation, date, BizStep::Commissioning)
                }
            }
            Operation::Shipment { lot, order } => {
                let Some(epc_class) = lot_uri(lot) else {
                    continue;
                };
                let micros = group.iter().fold(0i64, |sum, e| {
                    sum.saturating_add(e.delta_micros.saturating_abs())
                });
                let date = shipped
                    .get(&(lot, order))
                    .copied()
                    .unwrap_or(first.created_date);
                Event {
                    quantity_list: vec![QuantityElement {
                        epc_class,
                        quantity: Some(Quantity::from_micros(micros, first.unit())),
                    }],
                    action: Some(Action::Observe),
                    in_transit: true,
                    read_point: location_uri(lot),
                    purchase_orders: vec![base.order(order)],
                    ..Event::new(EventType::Object, date, BizStep::Shipping)
                }
            }
        };
        events.push(Event {
            ledger_entries,
            ..event
        });
    }
    for (lot_id, due_diligence) in &history.due_diligence {
        if due_diligence.statements.is_empty() || !reached_ids.contains(lot_id) {
            continue;
        }
        let Some(epc_class) = lot_uri(*lot_id) else {
            continue;
        };
        let mut statements: Vec<EudrStatement> = (due_diligence.statements.iter())
            .map(|s| EudrStatement {
                reference_number: s.reference_number.clone(),
                verification_number: s.verification_number.clone(),
                kind: s.kind.as_str(),
                role: s.role.as_str(),
            })
            .collect();
        statements.sort_by(|a, b| a.reference_number.cmp(&b.reference_number));
        events.push(Event {
            quantity_list: vec![QuantityElement {
                epc_class,
                quantity: None,
            }],
            action: Some(Action::Observe),
            eudr_statements: statements,
            ..Event::new(
                EventType::Object,
                due_diligence.updated_date,
                BizStep::Notifying,
            )
        });
    }
    let mut keyed: Vec<(DateTime<Utc>, String, Event)> = events
        .into_iter()
        .map(|e| (e.event_time, e.id(), e))
        .collect();
    keyed.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    keyed.into_iter().map(|(_, _, e)| e).collect()
}

impl Event {
    fn new(event_type: EventType, at: DateTime<Utc>, biz_step: BizStep) -> Self {
        Self {
            event_type,
            event_time: to_millis(at),
            quantity_list: Vec::new(),
            input_quantity_list: Vec::new(),
            output_quantity_list: Vec::new(),
            action: None,
            biz_step,
            in_transit: false,
            read_point: None,
            biz_location: None,
            purchase_orders: Vec::new(),
            ledger_entries: Vec::new(),
            eudr_statements: Vec::new(),
        }
    }
}

/// The `EPCISDocument` carrying `events`, created at `creation_date`, as JSON text.
pub fn document(events: &[Event], creation_date: DateTime<Utc>) -> String {
    let document = DocumentJson {
        context: (
            GS1_CONTEXT,
            ContextJson {
                roastery: ROASTERY_NAMESPACE,
            },
        ),
        document_type: "EPCISDocument",
        schema_version: "2.0",
        creation_date: time_text(to_millis(creation_date)),
        epcis_body: BodyJson {
            event_list: events.iter().map(Event::json).collect(),
        },
    };
    // Plain structs of strings and numbers: serialising cannot fail.
    serde_json::to_string(&document).unwrap_or_default()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DocumentJson<'a> {
    #[serde(rename = "@context")]
    context: (&'static str, ContextJson),
    #[serde(rename = "type")]
    document_type: &'static str,
    schema_version: &'static str,
    creation_date: String,
    epcis_body: BodyJson<'a>,
}

#[derive(Serialize)]
struct ContextJson {
    roastery: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BodyJson<'a> {
    event_list: Vec<EventJson<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::due_diligence::{ProductionPeriod, Statement, StatementKind, StatementRole};
    use crate::geojson::Plots;
    use crate::stock::LotKind;
    use crate::weight::Weight;

    const INSTALLATION: u128 = 0x0190_0000_0000_7000_8000_0000_0000_0001;

    fn base() -> EpcisBase {
        EpcisBase::of_installation(Uuid::from_u128(INSTALLATION))
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn lot(n: u128, kind: LotKind) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(n),
            kind,
        }
    }

    fn location(n: u128) -> Option<Uuid> {
        Some(Uuid::from_u128(0x1000 + n))
    }

    fn entry(
        id: u128,
        lot: TypedLotRef,
        kind: EntryKind,
        delta_micros: i64,
        unit: WeightUnit,
        reference: Option<Reference>,
        created: &str,
    ) -> LedgerEntry {
        LedgerEntry {
            id: Uuid::from_u128(0x9000 + id),
            lot,
            kind,
            delta_micros,
            weight_after: Weight::from_micros(1_000_000, unit).unwrap(),
            reference,
            operation: "op".into(),
            client_id: "client".into(),
            created_date: at(created),
        }
    }

    fn edge(from: TypedLotRef, to: Reference, kind: EdgeKind, date: &str) -> Edge {
        Edge {
            from,
            to,
            kind,
            weight: Weight::from_micros(1, WeightUnit::Kg).unwrap(),
            date: at(date),
        }
    }

    /// An import of 60 KG at location 1 (PG-1), 20.5 KG transferred to location 2 (PG-2), a
    /// roast of 12.3456 KG of PG-2 and 10 LBS of PG-3 into 14.25 KG (PR-1), a blend of PR-1
    /// (PB-1), the blend shipped to an order in two allocations, and PG-1's statements.
    fn history() -> History {
        use EntryKind::*;
        use WeightUnit::{Kg, Lbs};
        let (pg1, pg2, pg3) = (
            lot(1, LotKind::Green),
            lot(2, LotKind::Green),
            lot(3, LotKind::Green),
        );
        let (pr1, pb1) = (lot(4, LotKind::Roasted), lot(5, LotKind::Blended));
        let order = Uuid::from_u128(0x5000);
        let t = "2026-03-01T08:00:00.123456Z";
        let edges = vec![
            edge(
                pg1,
                Reference::Lot(pg2),
                EdgeKind::Transfer,
                "2026-03-02T09:00:00Z",
            ),
            edge(
                pg2,
                Reference::Lot(pr1),
                EdgeKind::Roast,
                "2026-03-03T07:30:00Z",
            ),
            edge(
                pg3,
                Reference::Lot(pr1),
                EdgeKind::Roast,
                "2026-03-03T07:30:00Z",
            ),
            edge(
                pr1,
                Reference::Lot(pb1),
                EdgeKind::Blend,
                "2026-03-04T10:00:00Z",
            ),
            edge(
                pb1,
                Reference::Order(order),
                EdgeKind::Shipment,
                "2026-03-05T16:45:00Z",
            ),
        ];
        let entries = vec![
            entry(1, pg1, Import, 60_000_000, Kg, None, t),
            entry(
                2,
                pg1,
                TransferOut,
                -20_500_000,
                Kg,
                Some(Reference::Lot(pg2)),
                "2026-03-02T09:00:00Z",
            ),
            entry(
                3,
                pg2,
                TransferIn,
                20_500_000,
                Kg,
                Some(Reference::Lot(pg1)),
                "2026-03-02T09:00:00Z",
            ),
            entry(
                4,
                pg2,
                RoastInput,
                -12_345_600,
                Kg,
                Some(Reference::Lot(pr1)),
                "2026-03-03T12:00:00Z",
            ),
            entry(
                5,
                pg3,
                RoastInput,
                -10_000_000,
                Lbs,
                Some(Reference::Lot(pr1)),
                "2026-03-03T12:00:00Z",
            ),
            entry(
                6,
                pr1,
                RoastOutput,
                14_250_000,
                Kg,
                None,
                "2026-03-03T12:00:00Z",
            ),
            entry(
                7,
                pr1,
                BlendInput,
                -14_250_000,
                Kg,
                Some(Reference::Lot(pb1)),
                "2026-03-04T11:00:00Z",
            ),
            entry(
                8,
                pb1,
                BlendOutput,
                14_250_000,
                Kg,
                None,
                "2026-03-04T11:00:00Z",
            ),
            entry(
                9,
                pb1,
                Shipment,
                -2_500_000,
                Kg,
                Some(Reference::Order(order)),
                "2026-03-05T17:00:00Z",
            ),
            entry(
                10,
                pb1,
                Shipment,
                -1_000_000,
                Kg,
                Some(Reference::Order(order)),
                "2026-03-05T17:00:00Z",
            ),
            entry(
                11,
                pg1,
                SetWeight,
                -1_000_000,
                Kg,
                None,
                "2026-03-06T09:00:00Z",
            ),
            // A roast of PG-1 into a lot the genealogy does not reach.
            entry(
                12,
                pg1,
                RoastInput,
                -1_000_000,
                Kg,
                Some(Reference::Lot(lot(6, LotKind::Roasted))),
                t,
            ),
        ];
        let lots = [
            (pg1, 1, 1),
            (pg2, 2, 2),
            (pg3, 3, 1),
            (pr1, 1, 2),
            (pb1, 1, 2),
        ]
        .into_iter()
        .map(|(lot, lot_number, loc)| ExportLot {
            lot,
            lot_number,
            location_id: location(loc),
        })
        .collect();
        let plots = Plots::parse(
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-75.5,4.5]},"properties":{"Area":1}}]}"#,
            "plots",
        )
        .unwrap();
        let due_diligence = DueDiligence {
            hs_code: "090111".into(),
            country_of_production: "CO".into(),
            production_period: ProductionPeriod {
                from: chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap(),
                to: chrono::NaiveDate::from_ymd_opt(2025, 12, 31).unwrap(),
            },
            plots: crate::stored_plots::StoredPlots::written(&plots),
            suppliers: vec![],
            statements: vec![
                Statement {
                    reference_number: "25FRXVV3VOS991".into(),
                    verification_number: None,
                    kind: StatementKind::SimplifiedDeclaration,
                    role: StatementRole::Own,
                    verification: None,
                },
                Statement {
                    reference_number: "00123".into(),
                    verification_number: Some("1e5".into()),
                    kind: StatementKind::Dds,
                    role: StatementRole::Upstream,
                    verification: None,
                },
            ],
            updated_date: at("2026-03-06T10:00:00.999999Z"),
        };
        History {
            start: Some(pb1),
            edges,
            entries,
            lots,
            due_diligence: vec![(pg1.id, due_diligence)],
        }
    }

    /// Computed once by GS1's reference implementation (epcis-event-hash-generator 1.9.3) from
    /// the document of [`history`], `{B}` standing for the base URI.
    const VECTORS: [(&str, &str); 7] = [
        (
            "eventType=ObjectEventeventTime=2026-03-01T08:00:00.123ZeventTimeZoneOffset=+00:00quantityListquantityElementepcClass={B}/lot/PG-1quantity=60uom=KGMaction=ADDbizStep=https://ref.gs1.org/cbv/BizStep-commissioningreadPointid={B}/location/00000000-0000-0000-0000-000000001001bizLocationid={B}/location/00000000-0000-0000-0000-000000001001{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009001",
            "ni:///sha-256;952afb059661377e11c7b3eb462f70f52ebe02491d76c4f3fe497a8e260f7ea3?ver=CBV2.0",
        ),
        (
            "eventType=TransformationEventeventTime=2026-03-02T09:00:00.000ZeventTimeZoneOffset=+00:00inputQuantityListquantityElementepcClass={B}/lot/PG-1quantity=20.5uom=KGMoutputQuantityListquantityElementepcClass={B}/lot/PG-2quantity=20.5uom=KGMbizStep=https://ref.gs1.org/cbv/BizStep-receivingreadPointid={B}/location/00000000-0000-0000-0000-000000001002bizLocationid={B}/location/00000000-0000-0000-0000-000000001002{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009003",
            "ni:///sha-256;7c4cd6a2d1f6a2eda9fd86e71b76afef37e5c969d23997062419de3a13680835?ver=CBV2.0",
        ),
        (
            "eventType=ObjectEventeventTime=2026-03-02T09:00:00.000ZeventTimeZoneOffset=+00:00quantityListquantityElementepcClass={B}/lot/PG-1quantity=20.5uom=KGMaction=OBSERVEbizStep=https://ref.gs1.org/cbv/BizStep-shippingreadPointid={B}/location/00000000-0000-0000-0000-000000001001{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009002",
            "ni:///sha-256;ebad59bdd8a200a41d94ff9c0687b49f8a435f11cb7666b339e5a27230c81035?ver=CBV2.0",
        ),
        (
            "eventType=TransformationEventeventTime=2026-03-03T07:30:00.000ZeventTimeZoneOffset=+00:00inputQuantityListquantityElementepcClass={B}/lot/PG-2quantity=12.346uom=KGMquantityElementepcClass={B}/lot/PG-3quantity=10uom=LBRoutputQuantityListquantityElementepcClass={B}/lot/PR-1quantity=14.25uom=KGMbizStep=https://ref.gs1.org/cbv/BizStep-commissioningreadPointid={B}/location/00000000-0000-0000-0000-000000001002bizLocationid={B}/location/00000000-0000-0000-0000-000000001002{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009004{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009005{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009006",
            "ni:///sha-256;cbc72ef616d677fbbc341cbe23715e33b8500cd62828688b87557bd1cca71171?ver=CBV2.0",
        ),
        (
            "eventType=TransformationEventeventTime=2026-03-04T10:00:00.000ZeventTimeZoneOffset=+00:00inputQuantityListquantityElementepcClass={B}/lot/PR-1quantity=14.25uom=KGMoutputQuantityListquantityElementepcClass={B}/lot/PB-1quantity=14.25uom=KGMbizStep=https://ref.gs1.org/cbv/BizStep-commissioningreadPointid={B}/location/00000000-0000-0000-0000-000000001002bizLocationid={B}/location/00000000-0000-0000-0000-000000001002{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009007{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009008",
            "ni:///sha-256;3c2493c143fa3b5849999221b6db399d1d045664ce7526f3b8f386766da69ca1?ver=CBV2.0",
        ),
        (
            "eventType=ObjectEventeventTime=2026-03-05T16:45:00.000ZeventTimeZoneOffset=+00:00quantityListquantityElementepcClass={B}/lot/PB-1quantity=3.5uom=KGMaction=OBSERVEbizStep=https://ref.gs1.org/cbv/BizStep-shippingdisposition=https://ref.gs1.org/cbv/Disp-in_transitreadPointid={B}/location/00000000-0000-0000-0000-000000001002bizTransactionListtype=https://ref.gs1.org/cbv/BTT-pobizTransaction={B}/order/00000000-0000-0000-0000-000000005000{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-000000009009{urn:roastery:epcis:}ledgerEntries={B}/ledger/00000000-0000-0000-0000-00000000900a",
            "ni:///sha-256;37f4a8a253728c4f2f0d845c8bd498947ff8e27e7d86192b844774113d88b3fe?ver=CBV2.0",
        ),
        (
            "eventType=ObjectEventeventTime=2026-03-06T10:00:00.999ZeventTimeZoneOffset=+00:00quantityListquantityElementepcClass={B}/lot/PG-1action=OBSERVEbizStep=urn:roastery:epcis:notifying{urn:roastery:epcis:}eudrStatements{urn:roastery:epcis:}kind=DDS{urn:roastery:epcis:}referenceNumber=123{urn:roastery:epcis:}role=UPSTREAM{urn:roastery:epcis:}verificationNumber=100000{urn:roastery:epcis:}eudrStatements{urn:roastery:epcis:}kind=SIMPLIFIED_DECLARATION{urn:roastery:epcis:}referenceNumber=25FRXVV3VOS991{urn:roastery:epcis:}role=OWN",
            "ni:///sha-256;9f6252b22fcc4e99901545543c379af751b32f37c7dec1400561af407f822d9f?ver=CBV2.0",
        ),
    ];

    fn expected(prehash: &str) -> String {
        prehash.replace("{B}", base().as_str())
    }

    #[test]
    fn each_event_kind_hashes_as_the_reference_implementation_does() {
        let events = events(&base(), &history());
        assert_eq!(events.len(), VECTORS.len());
        for (event, (prehash, id)) in events.iter().zip(VECTORS) {
            assert_eq!(event.prehash(), expected(prehash));
            assert_eq!(event.id(), id);
        }
    }

    #[test]
    fn the_export_holds_one_event_per_operation_of_the_genealogy() {
        let events = events(&base(), &history());
        let kinds: Vec<_> = (events.iter())
            .map(|e| (e.event_type, e.action, e.biz_step, e.ledger_entries.len()))
            .collect();
        use {Action::*, BizStep::*, EventType::*};
        assert_eq!(
            kinds,
            vec![
                (Object, Some(Add), Commissioning, 1),
                // Same time: by event id.
                (Transformation, None, Receiving, 1),
                (Object, Some(Observe), Shipping, 1),
                (Transformation, None, Commissioning, 3),
                (Transformation, None, Commissioning, 2),
                (Object, Some(Observe), Shipping, 2),
                (Object, Some(Observe), Notifying, 0),
            ]
        );
        // Neither the weight correction nor the roast the genealogy does not reach.
        let entries: HashSet<&String> = events.iter().flat_map(|e| &e.ledger_entries).collect();
        assert!(!entries.contains(&base().ledger_entry(Uuid::from_u128(0x9000 + 11))));
        assert!(!entries.contains(&base().ledger_entry(Uuid::from_u128(0x9000 + 12))));
        assert_eq!(entries.len(), 10);
    }

    #[test]
    fn a_shipment_weighs_its_allocations_and_names_its_order() {
        let events = events(&base(), &history());
        let shipment = events.iter().find(|e| e.in_transit).unwrap();
        assert_eq!(shipment.quantity_list[0].quantity.unwrap().text(), "3.5");
        assert_eq!(
            shipment.purchase_orders,
            vec![base().order(Uuid::from_u128(0x5000))]
        );
        assert_eq!(shipment.event_time, at("2026-03-05T16:45:00Z"));
    }

    #[test]
    fn statements_are_sorted_by_reference_number_and_keep_their_text() {
        let events = events(&base(), &history());
        let notifying = events.last().unwrap();
        let numbers: Vec<&str> = (notifying.eudr_statements.iter())
            .map(|s| s.reference_number.as_str())
            .collect();
        assert_eq!(numbers, vec!["00123", "25FRXVV3VOS991"]);
        let json = document(&events, at("2026-11-25T10:00:00Z"));
        assert!(json.contains(r#"{"roastery:referenceNumber":"00123","roastery:verificationNumber":"1e5","roastery:kind":"DDS","roastery:role":"UPSTREAM"}"#));
        assert!(json.contains(r#"{"roastery:referenceNumber":"25FRXVV3VOS991","roastery:kind":"SIMPLIFIED_DECLARATION","roastery:role":"OWN"}"#));
    }

    /// What GS1's EPCIS 2.0 JSON schema requires of these events: the document's fields,
    /// `eventTime` and `eventTimeZoneOffset` on every event, an `action` and a non-empty
    /// `quantityList` on object events, no `action` but non-empty input and output lists on
    /// transformation events, `epcClass` on every quantity element, units of 2-3 capitals.
    #[test]
    fn the_document_has_what_the_epcis_schema_requires() {
        let text = document(&events(&base(), &history()), at("2026-11-25T10:00:00.5Z"));
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            doc["@context"],
            serde_json::json!([GS1_CONTEXT, {"roastery": "urn:roastery:epcis:"}])
        );
        assert_eq!(doc["type"], "EPCISDocument");
        assert_eq!(doc["schemaVersion"], "2.0");
        assert_eq!(doc["creationDate"], "2026-11-25T10:00:00.500Z");
        let list = doc["epcisBody"]["eventList"].as_array().unwrap();
        for event in list {
            let time = event["eventTime"].as_str().unwrap();
            assert!(DateTime::parse_from_rfc3339(time).is_ok() && time.len() == 24);
            assert_eq!(event["eventTimeZoneOffset"], "+00:00");
            assert!(
                event["eventID"]
                    .as_str()
                    .unwrap()
                    .starts_with("ni:///sha-256;")
            );
            let lists: &[&str] = match event["type"].as_str().unwrap() {
                "ObjectEvent" => {
                    assert!(["ADD", "OBSERVE"].contains(&event["action"].as_str().unwrap()));
                    &["quantityList"]
                }
                "TransformationEvent" => {
                    assert!(event.get("action").is_none());
                    &["inputQuantityList", "outputQuantityList"]
                }
                other => panic!("{other}"),
            };
            for name in lists {
                let elements = event[name].as_array().unwrap();
                assert!(!elements.is_empty());
                for q in elements {
                    assert!(q["epcClass"].as_str().unwrap().starts_with("urn:roastery:"));
                    if let Some(uom) = q.get("uom") {
                        assert!(["KGM", "LBR"].contains(&uom.as_str().unwrap()));
                        assert!(q["quantity"].is_number());
                    }
                }
            }
        }
    }

    #[test]
    fn quantities_have_at_most_three_decimals_rounded_half_even() {
        for (micros, text) in [
            (60_000_000, "60"),
            (50_400_000, "50.4"),
            (12_345_500, "12.346"),
            (12_344_500, "12.344"),
            (12_344_501, "12.345"),
            (1_000, "0.001"),
            (400, "0"),
        ] {
            assert_eq!(Quantity::from_micros(micros, WeightUnit::Kg).text(), text);
        }
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        let base = EpcisBase::parse("https://roastery.example/epcis").unwrap();
        assert_eq!(base.lot("PG-1"), "https://roastery.example/epcis/lot/PG-1");
        assert_eq!(percent_encode("a b/ü~"), "a%20b%2F%C3%BC~");
    }

    #[test]
    fn a_base_uri_is_absolute_without_a_trailing_slash() {
        assert!(EpcisBase::parse("urn:roastery:x").is_ok());
        assert_eq!(
            EpcisBase::parse("roastery/x"),
            Err(EpcisBaseError::NotAbsolute("roastery/x".into()))
        );
        assert!(matches!(
            EpcisBase::parse("https://x.example/"),
            Err(EpcisBaseError::TrailingSlash(_))
        ));
        assert!(matches!(
            EpcisBase::parse("roastery:x"),
            Err(EpcisBaseError::ReservedScheme(_))
        ));
    }
}
