//! quality.physical: recording and listing the physical analyses of lots.

use chrono::{DateTime, Utc};
use roastery_domain::operation::Operation;
use roastery_domain::page::{self, MAX_IDS, Page, PageRequest};
use roastery_domain::physical_analysis::{
    ANALYSIS_PREFIX, NewPhysicalAnalysis, PhysicalAnalysis, PhysicalAnalysisError,
};
use uuid::Uuid;

use crate::{Roastery, Store};
use roastery_ports::error::AppError;
use roastery_ports::repo::*;

/// Which analyses to list: `analysisDate` from (inclusive) / to (exclusive), and the analysed
/// lots (`analysedLotIds`, at most 100, when given).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListPhysicalAnalyses {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub analysed_lot_ids: Option<Vec<Uuid>>,
}

impl<S: Store> Roastery<S> {
    /// Records an analysis in the three steps of every write: parse its figures (400), load
    /// its lot (422 `resource_not_found`), then let the domain decide (the screen sizes' sum,
    /// 422 `invalid_request`).
    pub fn record_physical_analysis(
        &self,
        new: NewPhysicalAnalysis,
    ) -> Result<PhysicalAnalysis, AppError> {
        // 1. Parse.
        let draft = new.parse()?;
        let id = self.ids.new_id();
        self.write(Operation::RecordPhysicalAnalysis, |tx| {
            // 2. Load.
            let lot = draft.analysed_lot();
            if !tx.lot_exists(lot.kind, lot.id)? {
                return Err(PhysicalAnalysisError::LotNotFound(lot).into());
            }
            // 3. Decide; the number drawn is returned by the rollback when the domain refuses.
            let number = tx.next_number(ANALYSIS_PREFIX)?;
            let analysis = draft.clone().record(id, number)?;
            tx.insert_physical_analysis(&analysis)?;
            Ok(analysis)
        })
    }

    pub fn list_physical_analyses(
        &self,
        cmd: ListPhysicalAnalyses,
        page: PageRequest,
    ) -> Result<Page<PhysicalAnalysis>, AppError> {
        // The filter before the cursor, as the request lists them.
        if let Some(ids) = &cmd.analysed_lot_ids {
            page::unique_ids("filter.analysedLotIds", ids, MAX_IDS)?;
        }
        page.keyset()?;
        let filter = PhysicalFilter {
            from: cmd.from,
            to: cmd.to,
            lot_ids: cmd.analysed_lot_ids.unwrap_or_default(),
        };
        self.store
            .read_replica(|tx| Ok(tx.list_physical_analyses(&filter, &page)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::memory_roastery;
    use roastery_domain::FieldPath;
    use roastery_domain::Violation;
    use roastery_domain::physical_analysis::{NewDefect, NewScreenSize};
    use roastery_domain::stock::LotKind;
    use roastery_domain::stock::TypedLotRef;
    use roastery_ports::testing::register_lot;
    use rust_decimal::Decimal;
    use std::str::FromStr;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn new(date: i64, lot: TypedLotRef) -> NewPhysicalAnalysis {
        NewPhysicalAnalysis {
            analysis_date: at(date),
            analysed_lot: lot,
            moisture: Some(d("10.5")),
            water_activity: Some(d("0.55")),
            density: Some(d("690")),
            screen_sizes: vec![NewScreenSize {
                size: "18".into(),
                percentage: Some(d("60")),
            }],
            defects: vec![NewDefect {
                name: "Quakers".into(),
                count: Some(2),
            }],
            note: Some("clean".into()),
            evaluator: Some("Lab".into()),
        }
    }

    fn green(n: u128) -> TypedLotRef {
        TypedLotRef {
            id: Uuid::from_u128(0xCD00 + n),
            kind: LotKind::Green,
        }
    }

    #[test]
    fn an_analysis_of_an_existing_lot_is_numbered_and_listed() {
        let (app, _) = memory_roastery();
        register_lot(app.store(), LotKind::Green, green(1).id);
        let a = app.record_physical_analysis(new(0, green(1))).unwrap();
        assert_eq!(a.display_number(), "QC-1");
        assert_eq!(a.moisture, Some(d("10.5")));
        let b = app.record_physical_analysis(new(5, green(1))).unwrap();
        assert_eq!(b.display_number(), "QC-2");
        let page = app
            .list_physical_analyses(ListPhysicalAnalyses::default(), PageRequest::default())
            .unwrap();
        assert_eq!(page.items, [b, a]);
    }

    #[test]
    fn an_unknown_lot_is_not_found_but_bad_figures_are_400_first() {
        let (app, _) = memory_roastery();
        let not_found = PhysicalAnalysisError::LotNotFound(green(9));
        let err = app.record_physical_analysis(new(0, green(9))).unwrap_err();
        assert_eq!(err.rule(), Some(&not_found));
        let mut bad = new(0, green(9));
        bad.moisture = Some(d("101"));
        let err = app.record_physical_analysis(bad).unwrap_err();
        assert!(
            matches!(
                err.rule(),
                Some(PhysicalAnalysisError::OutOfRange { field, .. })
                    if *field == FieldPath::from("moisture")
            ),
            "{err:?}"
        );
        // Screen sizes over 100 % together break a business rule, judged after existence.
        let mut over = new(0, green(9));
        over.screen_sizes.push(NewScreenSize {
            size: "17".into(),
            percentage: Some(d("50")),
        });
        let err = app.record_physical_analysis(over.clone()).unwrap_err();
        assert_eq!(err.rule(), Some(&not_found));
        register_lot(app.store(), LotKind::Green, green(9).id);
        let err = app.record_physical_analysis(over).unwrap_err();
        assert!(
            matches!(
                err.rule(),
                Some(PhysicalAnalysisError::ScreenSizesOver100 { .. })
            ),
            "{err:?}"
        );
        let page = app
            .list_physical_analyses(ListPhysicalAnalyses::default(), PageRequest::default())
            .unwrap();
        assert!(page.items.is_empty());
    }

    #[test]
    fn listings_filter_by_date_range_and_lots() {
        let (app, _) = memory_roastery();
        for n in 1..=2 {
            register_lot(app.store(), LotKind::Green, green(n).id);
        }
        let a = app.record_physical_analysis(new(0, green(1))).unwrap();
        let b = app.record_physical_analysis(new(10, green(2))).unwrap();
        let c = app.record_physical_analysis(new(20, green(1))).unwrap();
        let list = |cmd| {
            app.list_physical_analyses(cmd, PageRequest::default())
                .unwrap()
                .items
        };
        assert_eq!(
            list(ListPhysicalAnalyses {
                from: Some(at(0)),
                to: Some(at(20)),
                analysed_lot_ids: None,
            }),
            [b.clone(), a.clone()]
        );
        assert_eq!(
            list(ListPhysicalAnalyses {
                analysed_lot_ids: Some(vec![green(1).id]),
                ..Default::default()
            }),
            [c, a]
        );
        let many: Vec<Uuid> = (0..101).map(Uuid::from_u128).collect();
        for ids in [many, vec![]] {
            let err = app
                .list_physical_analyses(
                    ListPhysicalAnalyses {
                        analysed_lot_ids: Some(ids),
                        ..Default::default()
                    },
                    PageRequest::default(),
                )
                .unwrap_err();
            assert_eq!(err.violation(), Some(Violation::InvalidParameter));
        }
    }
}
