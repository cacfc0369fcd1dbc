//! Processing profiles: the recipe of a roast, as shares of green lots.
//!
//! A profile has one or more components, each a percentage of the batch drawn from one or more
//! green lots. Its type is derived, never stored: one component is a single origin, two or more a
//! pre-roast blend. Percentages are exact and must sum to exactly 100.
//!
//! Importing one takes the three steps of every write, so errors rank as the contract says:
//! [`ProfileDraft::parse`] checks every shape rule (400) before any lookup; the caller then loads
//! the green lots, the reference roast and the projects the draft names, reporting what is
//! missing (422 `resource_not_found`); last, [`ProfileDraft::decide`] applies the sum (422
//! `invalid_request`) and then the conflict of a taken `externalId` (422 `resource_conflict`).

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

use crate::decimal::SCALE;
use crate::field::FieldPath;
use crate::project::{self, ProjectError, ProjectRef};
use crate::roast_details::name_reference;
use crate::text::{self, TextError};
use crate::violation::{BrokenRule, Violation};

/// Most components in one profile.
pub const MAX_COMPONENTS: usize = 100;
/// Most green lots in one component.
pub const MAX_GREEN_LOTS_PER_COMPONENT: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error("components must list at least one component")]
    NoComponents,
    #[error("components lists {0} components; at most {MAX_COMPONENTS} are accepted")]
    TooManyComponents(usize),
    #[error("component {index} has percentage {percentage}; a percentage must be above zero")]
    PercentageNotPositive { index: usize, percentage: Decimal },
    #[error("component {index} must list at least one green lot in greenLotIds")]
    NoGreenLots { index: usize },
    #[error(
        "component {index} lists {count} green lots; at most {MAX_GREEN_LOTS_PER_COMPONENT} are accepted"
    )]
    TooManyGreenLots { index: usize, count: usize },
    #[error("component {index} lists green lot {id} more than once")]
    DuplicateGreenLot { index: usize, id: Uuid },
    #[error("the component percentages sum to {0}; they must sum to exactly 100")]
    PercentagesNotHundred(Decimal),
    #[error("green lot {0} does not exist")]
    GreenLotNotFound(Uuid),
    #[error("reference roast {0} does not exist")]
    ReferenceRoastNotFound(Uuid),
    #[error("profile {0} does not exist")]
    NotFound(Uuid),
    #[error("a profile with external id `{0}` already exists")]
    DuplicateExternalId(String),
}

impl BrokenRule for ProfileError {
    fn violation(&self) -> Violation {
        match self {
            Self::Text(e) => e.violation(),
            Self::Project(e) => e.violation(),
            Self::NoComponents
            | Self::TooManyComponents(_)
            | Self::PercentageNotPositive { .. }
            | Self::NoGreenLots { .. }
            | Self::TooManyGreenLots { .. }
            | Self::DuplicateGreenLot { .. } => Violation::InvalidParameter,
            Self::PercentagesNotHundred(_) => Violation::BusinessRule,
            Self::GreenLotNotFound(_) | Self::ReferenceRoastNotFound(_) | Self::NotFound(_) => {
                Violation::NotFound
            }
            Self::DuplicateExternalId(_) => Violation::Conflict,
        }
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::Text(e) => e.rebase(base),
            Self::Project(e) => e.rebase(base),
            _ => {}
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileType {
    SingleOrigin,
    PreRoastBlend,
}

impl ProfileType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SingleOrigin => "SINGLE_ORIGIN",
            Self::PreRoastBlend => "PRE_ROAST_BLEND",
        }
    }
}

/// A component as the client sends it: a percentage and green lot ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentDraft {
    pub percentage: Decimal,
    pub green_lot_ids: Vec<Uuid>,
}

/// A green lot of a component (`{"id", "name"}` on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenLotRef {
    pub id: Uuid,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// Share of the batch, exact, above zero, rounded half-even to six decimals.
    pub percentage: Decimal,
    pub green_lots: Vec<GreenLotRef>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub id: Uuid,
    pub name: String,
    pub external_id: Option<String>,
    /// Name of the group (`profileGroup` NameReference).
    pub profile_group: Option<String>,
    pub components: Vec<Component>,
    pub reference_roast_id: Option<Uuid>,
    pub projects: Vec<ProjectRef>,
    pub created_at: DateTime<Utc>,
}

/// The profile as the client describes it, with green lot names and projects already resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProfile {
    pub name: String,
    pub external_id: Option<String>,
    pub profile_group: Option<String>,
    pub components: Vec<Component>,
    pub reference_roast_id: Option<Uuid>,
    pub projects: Vec<ProjectRef>,
}

fn percentage(value: Decimal) -> Decimal {
    value
        .round_dp_with_strategy(SCALE, RoundingStrategy::MidpointNearestEven)
        .normalize()
}

/// The 400 rules of a component list: at least one and at most [`MAX_COMPONENTS`] components, each
/// with a percentage above zero and one to [`MAX_GREEN_LOTS_PER_COMPONENT`] distinct green lots.
fn check_shape<'a>(
    components: impl ExactSizeIterator<Item = (Decimal, &'a [Uuid])>,
) -> Result<(), ProfileError> {
    match components.len() {
        0 => return Err(ProfileError::NoComponents),
        n if n > MAX_COMPONENTS => return Err(ProfileError::TooManyComponents(n)),
        _ => {}
    }
    for (index, (share, ids)) in components.enumerate() {
        if percentage(share) <= Decimal::ZERO {
            return Err(ProfileError::PercentageNotPositive {
                index,
                percentage: share,
            });
        }
        if ids.is_empty() {
            return Err(ProfileError::NoGreenLots { index });
        }
        if ids.len() > MAX_GREEN_LOTS_PER_COMPONENT {
            return Err(ProfileError::TooManyGreenLots {
                index,
                count: ids.len(),
            });
        }
        let mut seen = HashSet::with_capacity(ids.len());
        if let Some(id) = ids.iter().find(|id| !seen.insert(**id)) {
            return Err(ProfileError::DuplicateGreenLot { index, id: *id });
        }
    }
    Ok(())
}

/// Percentages must sum to exactly 100: a rule of the business, judged after the shape.
fn check_sum(components: &[Component]) -> Result<(), ProfileError> {
    let sum = components
        .iter()
        .try_fold(Decimal::ZERO, |sum, c| sum.checked_add(c.percentage));
    match sum {
        Some(sum) if sum == Decimal::ONE_HUNDRED => Ok(()),
        Some(sum) => Err(ProfileError::PercentagesNotHundred(sum.normalize())),
        // Only absurd percentages overflow; they cannot sum to 100 either.
        None => Err(ProfileError::PercentagesNotHundred(Decimal::MAX)),
    }
}

/// A profile parsed from the request ([`ProfileDraft::parse`]): texts bounded, project names
/// and components well-formed, percentages rounded; nothing looked up yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileDraft {
    name: String,
    external_id: Option<String>,
    profile_group: Option<String>,
    projects: Vec<String>,
    components: Vec<ComponentDraft>,
    reference_roast_id: Option<Uuid>,
}

/// What a profile refers to, as the store found it: every green lot the draft names (a missing
/// one is reported while loading), the projects resolved, and whether its external id is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileReferences {
    pub green_lots: Vec<GreenLotRef>,
    pub projects: Vec<ProjectRef>,
    pub external_id_taken: bool,
}

impl ProfileDraft {
    /// Step one of importing a profile: every shape rule (400), in field order: `name`,
    /// `externalId`, `profileGroup`, the project names, then the components.
    pub fn parse(
        name: &str,
        external_id: Option<&str>,
        profile_group: Option<&str>,
        projects: &[String],
        components: Vec<ComponentDraft>,
        reference_roast_id: Option<Uuid>,
    ) -> Result<Self, ProfileError> {
        let name = text::required("name", name, text::NAME_MAX)?;
        let external_id = text::optional("externalId", external_id, text::EXTERNAL_ID_MAX)?;
        let profile_group = name_reference("profileGroup", profile_group)?;
        project::check_references(projects)?;
        check_shape(
            components
                .iter()
                .map(|c| (c.percentage, c.green_lot_ids.as_slice())),
        )?;
        Ok(Self {
            name,
            external_id,
            profile_group,
            projects: projects.to_vec(),
            components: components
                .into_iter()
                .map(|c| ComponentDraft {
                    percentage: percentage(c.percentage),
                    ..c
                })
                .collect(),
            reference_roast_id,
        })
    }

    /// Every green lot the components name, once each, in the order they first appear.
    pub fn green_lot_ids(&self) -> Vec<Uuid> {
        let mut seen = HashSet::new();
        self.components
            .iter()
            .flat_map(|c| &c.green_lot_ids)
            .filter(|id| seen.insert(**id))
            .copied()
            .collect()
    }

    pub fn reference_roast_id(&self) -> Option<Uuid> {
        self.reference_roast_id
    }

    /// The project names, as given.
    pub fn projects(&self) -> &[String] {
        &self.projects
    }

    pub fn external_id(&self) -> Option<&str> {
        self.external_id.as_deref()
    }

    /// Step three, with what the draft refers to loaded: percentages summing to exactly 100
    /// (422 `invalid_request`), then an external id no other profile has (422
    /// `resource_conflict`). A green lot missing from `references` is not found.
    pub fn decide(
        self,
        references: ProfileReferences,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Profile, ProfileError> {
        let components = self
            .components
            .into_iter()
            .map(|c| {
                let green_lots = c
                    .green_lot_ids
                    .iter()
                    .map(|id| {
                        references
                            .green_lots
                            .iter()
                            .find(|l| l.id == *id)
                            .cloned()
                            .ok_or(ProfileError::GreenLotNotFound(*id))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Component {
                    percentage: c.percentage,
                    green_lots,
                })
            })
            .collect::<Result<Vec<_>, ProfileError>>()?;
        check_sum(&components)?;
        if references.external_id_taken
            && let Some(external_id) = self.external_id
        {
            return Err(ProfileError::DuplicateExternalId(external_id));
        }
        Ok(Profile {
            id,
            name: self.name,
            external_id: self.external_id,
            profile_group: self.profile_group,
            components,
            reference_roast_id: self.reference_roast_id,
            projects: references.projects,
            created_at: now,
        })
    }
}

impl Profile {
    /// A profile from a description whose green lots and projects are resolved already (no
    /// external id is taken): the rules of [`ProfileDraft::parse`] and [`ProfileDraft::decide`].
    pub fn new(profile: NewProfile, id: Uuid, now: DateTime<Utc>) -> Result<Self, ProfileError> {
        let green_lots = profile
            .components
            .iter()
            .flat_map(|c| c.green_lots.iter().cloned())
            .collect();
        let components = profile
            .components
            .into_iter()
            .map(|c| ComponentDraft {
                percentage: c.percentage,
                green_lot_ids: c.green_lots.into_iter().map(|l| l.id).collect(),
            })
            .collect();
        ProfileDraft::parse(
            &profile.name,
            profile.external_id.as_deref(),
            profile.profile_group.as_deref(),
            &[],
            components,
            profile.reference_roast_id,
        )?
        .decide(
            ProfileReferences {
                green_lots,
                projects: profile.projects,
                external_id_taken: false,
            },
            id,
            now,
        )
    }

    /// `SINGLE_ORIGIN` for one component, `PRE_ROAST_BLEND` for two or more.
    pub fn profile_type(&self) -> ProfileType {
        if self.components.len() > 1 {
            ProfileType::PreRoastBlend
        } else {
            ProfileType::SingleOrigin
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::{d, now};
    use proptest::prelude::*;

    fn green_refs(lots: &[u128]) -> Vec<GreenLotRef> {
        lots.iter()
            .map(|n| GreenLotRef {
                id: Uuid::from_u128(*n),
                name: format!("Green {n}"),
            })
            .collect()
    }

    fn component(share: &str, lots: &[u128]) -> Component {
        Component {
            percentage: d(share),
            green_lots: green_refs(lots),
        }
    }

    fn new_profile(components: Vec<Component>) -> NewProfile {
        NewProfile {
            name: "Espresso base".into(),
            external_id: Some("P-1".into()),
            profile_group: Some(" Espresso ".into()),
            components,
            reference_roast_id: None,
            projects: vec![],
        }
    }

    fn draft(share: &str, lots: &[u128]) -> ComponentDraft {
        ComponentDraft {
            percentage: d(share),
            green_lot_ids: lots.iter().map(|n| Uuid::from_u128(*n)).collect(),
        }
    }

    #[test]
    fn one_component_is_a_single_origin_two_are_a_pre_roast_blend() {
        let single = Profile::new(
            new_profile(vec![component("100", &[1])]),
            Uuid::nil(),
            now(),
        )
        .unwrap();
        assert_eq!(single.profile_type().as_str(), "SINGLE_ORIGIN");
        assert_eq!(single.profile_group.as_deref(), Some("Espresso"));
        let blend = Profile::new(
            new_profile(vec![component("60", &[1, 2]), component("40", &[3])]),
            Uuid::nil(),
            now(),
        )
        .unwrap();
        assert_eq!(blend.profile_type(), ProfileType::PreRoastBlend);
    }

    #[test]
    fn percentages_must_sum_to_exactly_100_as_a_business_rule() {
        let err = Profile::new(
            new_profile(vec![component("33.33", &[1]), component("66.66", &[2])]),
            Uuid::nil(),
            now(),
        )
        .unwrap_err();
        assert_eq!(err, ProfileError::PercentagesNotHundred(d("99.99")));
        assert_eq!(err.violation(), Violation::BusinessRule);
        assert!(
            Profile::new(
                new_profile(vec![
                    component("33.33", &[1]),
                    component("33.33", &[2]),
                    component("33.34", &[3]),
                ]),
                Uuid::nil(),
                now()
            )
            .is_ok()
        );
    }

    fn parse(components: Vec<ComponentDraft>) -> Result<ProfileDraft, ProfileError> {
        ProfileDraft::parse(
            "Espresso base",
            Some("P-1"),
            Some(" Espresso "),
            &["Direct trade".to_owned()],
            components,
            None,
        )
    }

    fn check_component_shape(components: &[ComponentDraft]) -> Result<(), ProfileError> {
        parse(components.to_vec()).map(|_| ())
    }

    fn references(lots: &[u128], external_id_taken: bool) -> ProfileReferences {
        ProfileReferences {
            green_lots: green_refs(lots),
            projects: vec![],
            external_id_taken,
        }
    }

    #[test]
    fn a_parsed_draft_names_its_references_once_each() {
        let draft = parse(vec![draft("60", &[3, 1]), draft("40", &[1, 2])]).unwrap();
        let ids: Vec<u128> = draft
            .green_lot_ids()
            .iter()
            .map(|id| id.as_u128())
            .collect();
        assert_eq!(ids, [3, 1, 2]);
        assert_eq!(draft.projects(), ["Direct trade"]);
        assert_eq!(draft.external_id(), Some("P-1"));
        assert_eq!(draft.reference_roast_id(), None);
        let profile = draft
            .decide(references(&[1, 2, 3], false), Uuid::nil(), now())
            .unwrap();
        assert_eq!(profile.components[0].green_lots[0].name, "Green 3");
        assert_eq!(profile.profile_group.as_deref(), Some("Espresso"));
        assert_eq!(profile.created_at, now());
    }

    #[test]
    fn parsing_checks_texts_then_projects_then_components() {
        let long = "x".repeat(text::EXTERNAL_ID_MAX + 1);
        let err = ProfileDraft::parse("House", Some(&long), None, &[], vec![], None).unwrap_err();
        assert!(matches!(
            err,
            ProfileError::Text(TextError::TooLong { ref field, .. })
                if *field == FieldPath::from("externalId")
        ));
        let err =
            ProfileDraft::parse("House", None, None, &[" ".to_owned()], vec![], None).unwrap_err();
        assert!(matches!(
            err,
            ProfileError::Project(ProjectError::Text(TextError::Empty { .. }))
        ));
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let err = ProfileDraft::parse("House", None, None, &[], vec![], None).unwrap_err();
        assert_eq!(err, ProfileError::NoComponents);
    }

    #[test]
    fn deciding_judges_the_sum_before_a_taken_external_id() {
        let uneven = || parse(vec![draft("50", &[1]), draft("40", &[2])]).unwrap();
        let err = uneven()
            .decide(references(&[1, 2], true), Uuid::nil(), now())
            .unwrap_err();
        assert_eq!(err, ProfileError::PercentagesNotHundred(d("90")));
        let even = parse(vec![draft("50", &[1]), draft("50", &[2])]).unwrap();
        let err = even
            .clone()
            .decide(references(&[1, 2], true), Uuid::nil(), now())
            .unwrap_err();
        assert_eq!(err, ProfileError::DuplicateExternalId("P-1".into()));
        assert_eq!(err.violation(), Violation::Conflict);
        let err = even
            .decide(references(&[1], false), Uuid::nil(), now())
            .unwrap_err();
        assert_eq!(err, ProfileError::GreenLotNotFound(Uuid::from_u128(2)));
        // Without an external id nothing can be taken.
        let anonymous =
            ProfileDraft::parse("House", None, None, &[], vec![draft("100", &[1])], None)
                .unwrap()
                .decide(references(&[1], true), Uuid::nil(), now())
                .unwrap();
        assert_eq!(anonymous.external_id, None);
    }

    #[test]
    fn empty_components_are_an_invalid_parameter() {
        let err = check_component_shape(&[]).unwrap_err();
        assert_eq!(err, ProfileError::NoComponents);
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let err = Profile::new(new_profile(vec![]), Uuid::nil(), now()).unwrap_err();
        assert_eq!(err, ProfileError::NoComponents);
    }

    #[test]
    fn a_percentage_of_zero_or_below_is_an_invalid_parameter() {
        for share in ["0", "-5", "0.0000001"] {
            let err = check_component_shape(&[draft("100", &[1]), draft(share, &[2])]).unwrap_err();
            assert!(matches!(
                err,
                ProfileError::PercentageNotPositive { index: 1, .. }
            ));
            assert_eq!(err.violation(), Violation::InvalidParameter);
        }
    }

    #[test]
    fn a_component_without_green_lots_is_an_invalid_parameter() {
        let err = check_component_shape(&[draft("100", &[])]).unwrap_err();
        assert_eq!(err, ProfileError::NoGreenLots { index: 0 });
        assert_eq!(err.violation(), Violation::InvalidParameter);
        let err = check_component_shape(&[draft("100", &[4, 4])]).unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn shape_errors_come_before_the_sum() {
        let err = Profile::new(
            new_profile(vec![component("50", &[1]), component("0", &[2])]),
            Uuid::nil(),
            now(),
        )
        .unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    #[test]
    fn lookups_and_duplicates_have_their_categories() {
        assert_eq!(
            ProfileError::DuplicateExternalId("P-1".into()).violation(),
            Violation::Conflict
        );
        assert_eq!(
            ProfileError::GreenLotNotFound(Uuid::nil()).violation(),
            Violation::NotFound
        );
        let err = Profile::new(
            NewProfile {
                name: " ".into(),
                ..new_profile(vec![component("100", &[1])])
            },
            Uuid::nil(),
            now(),
        )
        .unwrap_err();
        assert_eq!(err.violation(), Violation::InvalidParameter);
    }

    proptest! {
        #[test]
        fn positive_hundredths_summing_to_100_always_make_a_profile(
            cuts in proptest::collection::btree_set(1u32..10_000, 0..8),
        ) {
            // Cut 100.00 into pieces at distinct points: every piece is positive.
            let mut bounds: Vec<u32> = cuts.into_iter().collect();
            bounds.push(10_000);
            let mut last = 0;
            let components: Vec<Component> = bounds
                .into_iter()
                .enumerate()
                .map(|(i, b)| {
                    let piece = Component {
                        percentage: Decimal::new(i64::from(b - last), 2),
                        green_lots: vec![GreenLotRef { id: Uuid::from_u128(i as u128), name: "g".into() }],
                    };
                    last = b;
                    piece
                })
                .collect();
            let count = components.len();
            let profile = Profile::new(new_profile(components), Uuid::nil(), now()).unwrap();
            prop_assert_eq!(profile.profile_type() == ProfileType::SingleOrigin, count == 1);
        }
    }
}
