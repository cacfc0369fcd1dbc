//! inventory.roast roast log import (api-decisions §9): an Artisan log mapped by the domain
//! (`roastery_domain::roast_log`) and recorded through the roast recording path, once per
//! `roastUUID`.

use roastery_domain::FieldPath;
use roastery_domain::roast_log::{ContentRefused, LoggedRoast, RoastLog};
use uuid::Uuid;

use crate::green_lot::WeightInput;
use crate::roast::{CheckedRoast, RecordedRoast, check_request, imported_roast};
use crate::{Roastery, Store};
use roastery_ports::error::{AppError, StoreError};

/// A roast log to import: the parsed log and what the request adds to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRoastLog {
    pub log: RoastLog,
    pub location_id: Uuid,
    /// Each green lot used; the used weight may be left out when exactly one lot is given (the
    /// log's green weight is used).
    pub green_lots: Vec<(Uuid, Option<WeightInput>)>,
    /// The roasted lot's name; the log's title when absent.
    pub name: Option<String>,
    pub profile_id: Option<Uuid>,
    pub projects: Vec<String>,
}

/// What an import request lacks that the log cannot supply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoastLogImportError {
    #[error(
        "{field} is required when more than one green lot is given; the log's green weight is used only for a single lot"
    )]
    UsedWeightMissing { field: FieldPath },
    #[error("{field} is required when the roast log has no title")]
    NameMissing { field: FieldPath },
}

impl roastery_domain::BrokenRule for RoastLogImportError {
    fn violation(&self) -> roastery_domain::Violation {
        roastery_domain::Violation::MissingParameter
    }

    fn rebase(&mut self, base: &FieldPath) {
        match self {
            Self::UsedWeightMissing { field } | Self::NameMissing { field } => field.rebase(base),
        }
    }
}

impl<S: Store> Roastery<S> {
    /// Imports a roast log (api-decisions §9): records the roast it describes through the same
    /// path as [`Self::record_roast`], once per `roastUUID`. A log imported already answers the
    /// roasted lot it made and changes nothing, also when a concurrent import of the same log
    /// commits first.
    pub fn import_roast_log(&self, cmd: ImportRoastLog) -> Result<RecordedRoast, AppError> {
        let logged = LoggedRoast::from_log(&cmd.log).map_err(|error| ContentRefused {
            field: FieldPath::from("content"),
            error,
        })?;
        let green_lots = match cmd.green_lots.as_slice() {
            [(id, None)] => vec![(
                *id,
                WeightInput {
                    amount: logged.green_weight.amount,
                    unit: logged.green_weight.unit,
                },
            )],
            lots => lots
                .iter()
                .enumerate()
                .map(|(index, (id, used))| {
                    used.map(|w| (*id, w))
                        .ok_or_else(|| RoastLogImportError::UsedWeightMissing {
                            field: FieldPath::ROOT
                                .key("greenLots")
                                .index(index)
                                .key("usedWeight"),
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        let name = cmd
            .name
            .or(logged.title)
            .ok_or_else(|| RoastLogImportError::NameMissing {
                field: FieldPath::from("name"),
            })?;
        let ids = check_request(&name, &cmd.projects, &green_lots)?;
        let external_id = logged.external_id;
        let roast = CheckedRoast {
            name,
            location_id: cmd.location_id,
            roasted_date: logged.roasted_date,
            weight: WeightInput {
                amount: logged.roasted_weight.amount,
                unit: logged.roasted_weight.unit,
            },
            green_lots,
            profile_id: cmd.profile_id,
            details: Some(logged.details),
            curves: logged.curves,
            projects: cmd.projects,
            external_id: Some(external_id.clone()),
        };
        match self.record_checked_roast(roast, &ids) {
            // A concurrent import of the same log committed first: answer what it made.
            Err(AppError::Store(StoreError::Duplicate(cause))) => {
                tracing::info!(%external_id, "roast log imported concurrently; answering its roast");
                self.store
                    .read(|tx| imported_roast(tx, &external_id))?
                    .ok_or(AppError::Store(StoreError::Duplicate(cause)))
            }
            other => other,
        }
    }
}
