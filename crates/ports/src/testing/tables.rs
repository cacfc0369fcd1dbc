//! The tables of the in-memory store: what each repository keeps, one struct per subject.
//! The repositories of the sibling modules read and write their fields.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use roastery_domain::account::AccessGrant;
use roastery_domain::blended_lot::BlendedLot;
use roastery_domain::cupping::Cupping;
use roastery_domain::cupping_result::CuppingResult;
use roastery_domain::event::Event;
use roastery_domain::green_lot::GreenLot;
use roastery_domain::order::Order;
use roastery_domain::physical_analysis::PhysicalAnalysis;
use roastery_domain::planning::{ProfilePlanning, Recipe};
use roastery_domain::product::Product;
use roastery_domain::profile::Profile;
use roastery_domain::roast_curve::RoastCurve;
use roastery_domain::roast_details::RoastDetails;
use roastery_domain::roasted_lot::RoastedLot;
use roastery_domain::stock::LotKind;
use roastery_domain::submission::Submission;
use roastery_domain::webhook::Webhook;
use uuid::Uuid;

use crate::repo::{Credentials, Delivery};

#[derive(Debug, Clone, Default)]
pub struct AccountData {
    pub(super) accounts: BTreeMap<String, Credentials>,
    pub(super) tokens: BTreeMap<String, AccessGrant>,
}

#[derive(Debug, Clone, Default)]
pub struct BlendData {
    pub(super) lots: Vec<BlendedLot>,
}

#[derive(Debug, Clone, Default)]
pub struct CuppingData {
    /// Lots registered by tests: (kind, id).
    pub(super) lots: HashSet<(LotKind, Uuid)>,
    pub(super) cuppings: Vec<Cupping>,
    pub(super) results: Vec<CuppingResult>,
}

/// A delivery, its claim (lease, until) and when it is due.
pub(super) type StoredDelivery = (Delivery, Option<(Uuid, DateTime<Utc>)>, DateTime<Utc>);
#[derive(Debug, Clone, Default)]
pub struct EventData {
    pub(super) events: Vec<Event>,
    pub(super) last_sequence: i64,
    /// Each webhook with the last sequence it was given.
    pub(super) webhooks: Vec<(Webhook, i64)>,
    /// Each delivery with its claim (lease, until) and next attempt time.
    pub(super) deliveries: Vec<StoredDelivery>,
}

#[derive(Debug, Clone, Default)]
pub struct GreenData {
    pub(super) lots: Vec<GreenLot>,
}

/// The stored item of each lot that has one.
#[derive(Debug, Clone, Default)]
pub struct ListingData {
    pub(super) items: HashMap<(LotKind, Uuid), String>,
}

#[derive(Debug, Clone, Default)]
pub struct OrderData {
    pub(super) orders: Vec<Order>,
}

#[derive(Debug, Clone, Default)]
pub struct PhysicalData {
    pub(super) analyses: Vec<PhysicalAnalysis>,
}

#[derive(Debug, Clone, Default)]
pub struct PlanData {
    pub(super) plannings: BTreeMap<Uuid, ProfilePlanning>,
    pub(super) recipes: BTreeMap<Uuid, Recipe>,
}

#[derive(Debug, Clone, Default)]
pub struct ProductData {
    pub(super) products: Vec<Product>,
}

#[derive(Debug, Clone, Default)]
pub struct RoastData {
    pub(super) lots: Vec<RoastedLot>,
    pub(super) details: BTreeMap<Uuid, RoastDetails>,
    pub(super) curves: BTreeMap<Uuid, Vec<RoastCurve>>,
    pub(super) profiles: Vec<Profile>,
}

/// A claim on a submission: the lease and until when it holds.
pub(super) type Claim = Option<(Uuid, DateTime<Utc>)>;
#[derive(Debug, Clone, Default)]
pub struct SubmissionData {
    /// Each submission with the claim on it (lease, until).
    pub(super) rows: Vec<(Submission, Claim)>,
    pub(super) verification_claims: Vec<(Uuid, Uuid, DateTime<Utc>)>,
}

#[derive(Debug, Clone, Default)]
pub struct SystemData {
    pub(super) settings: BTreeMap<String, String>,
    pub(super) sequences: BTreeMap<String, i64>,
}
