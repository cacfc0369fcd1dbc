//! inventory.roast profiles: importing a processing profile and reading profiles by id. A
//! profile is its own aggregate in the domain (`roastery_domain::profile`); roasts refer to it.

use roastery_domain::operation::Operation;
use roastery_domain::page::{self, Page, PageRequest};
use std::collections::HashMap;

use roastery_domain::planning::{LOSS_ROASTS, Planning, ProfilePlanning, RoastYield};
use roastery_domain::profile::{
    ComponentDraft, GreenLotRef, Profile, ProfileDraft, ProfileError, ProfileReferences,
};
use uuid::Uuid;

use crate::project::resolve_projects;
use crate::reference::{NamedLotRef, found_in_asked_order};
use crate::{Repos, Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::repo::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileView {
    pub profile: Profile,
    pub reference_roast: Option<NamedLotRef>,
    /// Expected loss (set or derived from the last roasts) and batch size.
    pub planning: Planning,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportProfile {
    pub name: String,
    pub external_id: Option<String>,
    pub profile_group: Option<String>,
    pub components: Vec<ComponentDraft>,
    pub reference_roast_id: Option<Uuid>,
    pub projects: Vec<String>,
}

/// The views of these profiles, in their order: reference roasts, and the planning of all of
/// them read at once.
pub(crate) fn profile_views(
    tx: &mut impl Repos,
    profiles: Vec<Profile>,
) -> Result<Vec<ProfileView>, AppError> {
    let ids: Vec<Uuid> = profiles.iter().map(|p| p.id).collect();
    let plannings = plannings(tx, &ids)?;
    profiles
        .into_iter()
        .map(|profile| {
            let reference_roast = match profile.reference_roast_id {
                None => None,
                Some(id) => tx.roasted_lot(id)?.map(|l| NamedLotRef {
                    id: l.id,
                    name: l.name,
                }),
            };
            Ok(ProfileView {
                planning: plannings.get(&profile.id).copied().unwrap_or_default(),
                profile,
                reference_roast,
            })
        })
        .collect()
}

impl ProfileView {
    fn with_reference(mut self, tx: &mut impl Repos) -> Result<Self, AppError> {
        if let Some(id) = self.profile.reference_roast_id {
            self.reference_roast = tx.roasted_lot(id)?.map(|l| NamedLotRef {
                id: l.id,
                name: l.name,
            });
        }
        Ok(self)
    }
}

/// Planning data answered with the profiles: stored data and the last roasts of each, read in
/// two statements for any number of profiles.
pub(crate) fn plannings(
    tx: &mut impl Repos,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, Planning>, AppError> {
    let stored: HashMap<Uuid, ProfilePlanning> = tx.profile_plannings(ids)?.into_iter().collect();
    let mut roasts: HashMap<Uuid, Vec<RoastYield>> = HashMap::new();
    for (id, roast) in tx.recent_roasts(ids, LOSS_ROASTS)? {
        roasts.entry(id).or_default().push(roast);
    }
    Ok(ids
        .iter()
        .map(|id| {
            let roasts = roasts.get(id).map(Vec::as_slice).unwrap_or_default();
            (*id, Planning::of(stored.get(id), roasts))
        })
        .collect())
}

impl<S: Store> Roastery<S> {
    pub fn profiles_by_ids(
        &self,
        ids: Vec<Uuid>,
        page: PageRequest,
    ) -> Result<Page<ProfileView>, AppError> {
        const FIELD: &str = "filter.profileIds";
        page::check_by_ids(FIELD, &ids, &page)?;
        self.store.read_replica(|tx| {
            let found = tx.profiles_by_ids(&ids)?;
            let page = found_in_asked_order(&ids, found, |p| p.id, &page)?;
            let next = page.next;
            let items = profile_views(tx, page.items)?;
            Ok(Page { items, next })
        })
    }

    /// Imports a processing profile in the three steps of every write: parse the request
    /// (400), load its green lots, reference roast and projects (422 `resource_not_found`),
    /// then let the domain decide (the percentages' sum, then a taken external id).
    pub fn import_profile(&self, cmd: ImportProfile) -> Result<ProfileView, AppError> {
        // 1. Parse.
        let draft = ProfileDraft::parse(
            &cmd.name,
            cmd.external_id.as_deref(),
            cmd.profile_group.as_deref(),
            &cmd.projects,
            cmd.components,
            cmd.reference_roast_id,
        )?;
        let id = self.ids.new_id();
        let now = self.clock.now();
        self.write(Operation::ImportProfile, |tx| {
            // 2. Load: the green lots (the first unknown in component order), the reference
            //    roast, the projects, and whether the external id is taken.
            let ids = draft.green_lot_ids();
            let found = tx.green_lots_by_ids(&ids)?;
            if let Some(missing) = ids.iter().find(|id| !found.iter().any(|l| l.id == **id)) {
                return Err(ProfileError::GreenLotNotFound(*missing).into());
            }
            if let Some(roast_id) = draft.reference_roast_id()
                && tx.roasted_lot(roast_id)?.is_none()
            {
                return Err(ProfileError::ReferenceRoastNotFound(roast_id).into());
            }
            let references = ProfileReferences {
                green_lots: found
                    .into_iter()
                    .map(|l| GreenLotRef {
                        id: l.id,
                        name: l.name,
                    })
                    .collect(),
                projects: resolve_projects(tx, draft.projects())?,
                external_id_taken: match draft.external_id() {
                    Some(external_id) => tx.profile_by_external_id(external_id)?.is_some(),
                    None => false,
                },
            };
            // 3. Decide.
            let profile = draft.clone().decide(references, id, now)?;
            tx.insert_profile(&profile)?;
            ProfileView {
                profile,
                reference_roast: None,
                planning: Planning::default(),
            }
            .with_reference(tx)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use roastery_domain::Violation;
    use roastery_domain::profile::{ComponentDraft, ProfileError};
    use rust_decimal::Decimal;

    use super::*;
    use crate::roast::tests::{Setup, roast, setup, violation};

    fn profile_cmd(s: &Setup, shares: &[(&str, usize)]) -> ImportProfile {
        ImportProfile {
            name: "House".into(),
            external_id: Some("PRF-1".into()),
            profile_group: Some("Espresso".into()),
            components: shares
                .iter()
                .map(|(p, i)| ComponentDraft {
                    percentage: Decimal::from_str(p).unwrap(),
                    green_lot_ids: vec![s.green[*i]],
                })
                .collect(),
            reference_roast_id: None,
            projects: vec![],
        }
    }

    #[test]
    fn profiles_resolve_green_lots_and_derive_their_type() {
        let s = setup();
        let reference = s
            .app
            .record_roast(roast(&s, "Ref", "1", &[(0, "1")]))
            .unwrap()
            .roasted_lot
            .lot
            .id;
        let mut cmd = profile_cmd(&s, &[("60.5", 0), ("39.5", 1)]);
        cmd.reference_roast_id = Some(reference);
        let view = s.app.import_profile(cmd).unwrap();
        assert_eq!(view.profile.profile_type().as_str(), "PRE_ROAST_BLEND");
        assert_eq!(view.profile.components[1].green_lots[0].name, "Huila");
        assert_eq!(
            view.reference_roast.as_ref().map(|r| r.name.as_str()),
            Some("Ref")
        );
        let mut single = profile_cmd(&s, &[("100", 0)]);
        single.external_id = None;
        let single = s.app.import_profile(single).unwrap();
        assert_eq!(single.profile.profile_type().as_str(), "SINGLE_ORIGIN");
        let found = s
            .app
            .profiles_by_ids(
                vec![single.profile.id, view.profile.id],
                PageRequest::default(),
            )
            .unwrap();
        assert_eq!(found.items, vec![single, view]);
    }

    #[test]
    fn profile_errors_rank_not_found_then_sum_then_conflict() {
        let s = setup();
        s.app
            .import_profile(profile_cmd(&s, &[("100", 0)]))
            .unwrap();
        let mut cmd = profile_cmd(&s, &[("50", 0), ("40", 1)]);
        cmd.components[1].green_lot_ids.push(Uuid::from_u128(7));
        assert_eq!(
            violation(s.app.import_profile(cmd).unwrap_err()),
            Violation::NotFound
        );
        let cmd = profile_cmd(&s, &[("50", 0), ("40", 1)]);
        assert_eq!(
            violation(s.app.import_profile(cmd).unwrap_err()),
            Violation::BusinessRule
        );
        let cmd = profile_cmd(&s, &[("50", 0), ("50", 1)]);
        assert_eq!(
            violation(s.app.import_profile(cmd).unwrap_err()),
            Violation::Conflict
        );
        let mut cmd = profile_cmd(&s, &[("100", 0)]);
        cmd.reference_roast_id = Some(Uuid::from_u128(8));
        cmd.external_id = None;
        assert_eq!(
            violation(s.app.import_profile(cmd).unwrap_err()),
            Violation::NotFound
        );
        let cmd = profile_cmd(&s, &[("0", 0), ("100", 1)]);
        assert_eq!(
            violation(s.app.import_profile(cmd).unwrap_err()),
            Violation::InvalidParameter
        );
        // Among the lookups, the green lots come first, then the reference roast.
        let mut cmd = profile_cmd(&s, &[("50", 0), ("50", 1)]);
        cmd.components[1]
            .green_lot_ids
            .insert(0, Uuid::from_u128(7));
        cmd.reference_roast_id = Some(Uuid::from_u128(8));
        cmd.projects = vec!["Nope".into()];
        let err = s.app.import_profile(cmd).unwrap_err();
        assert_eq!(
            err,
            AppError::from(ProfileError::GreenLotNotFound(Uuid::from_u128(7)))
        );
    }
}
