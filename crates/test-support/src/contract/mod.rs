//! The repository contract: what every [`Store`] answers, written once.
//!
//! Each function takes a fresh, empty store and checks results, ordering, paging and errors of
//! the repository methods one concern uses. [`store_contract!`](crate::store_contract) turns the
//! whole list into one `#[test]` per function for a store, so the in-memory store the use cases
//! are tested with cannot drift from the Diesel store on SQLite and PostgreSQL.

pub mod blend;
pub mod changes;
pub mod core;
pub mod cupping;
pub mod due_diligence;
pub mod event;
pub mod feed;
mod fixtures;
pub mod green_lot;
pub mod ledger;
pub mod listing;
pub mod order;
pub mod plan;
pub mod roast;
pub mod submission;
pub mod webhook;

/// One `#[test]` per contract function, each on a store made by `$open`, an expression of type
/// `Option<(S, G)>`: the store and a guard kept alive for the test (a temporary database), or
/// `None` to skip (a database that is not configured says so itself).
#[macro_export]
macro_rules! store_contract {
    ($open:expr) => {
        $crate::store_contract!(@each $open;
            core::sequences_count_from_one_and_roll_back_with_the_transaction,
            core::a_setting_keeps_its_first_value,
            core::accounts_tokens_and_revocation,
            core::locations_by_id_external_id_and_newest_first_pages,
            core::projects_by_name_and_newest_first_pages,
            green_lot::green_lots_load_as_stored_in_the_asked_order,
            green_lot::green_lot_listing_filters_on_modification_and_pages,
            green_lot::loaders_for_update_load_what_plain_loaders_load,
            green_lot::a_transfer_reads_its_lots_as_written_after_a_write,
            green_lot::a_written_back_green_lot_keeps_its_fixed_fields,
            green_lot::one_active_green_lot_per_origin_and_location,
            green_lot::a_unit_of_work_reads_back_what_it_wrote,
            roast::roasted_lots_stock_write_back_and_listing,
            roast::profiles_by_id_external_id_and_ids,
            roast::curves_keep_their_order,
            roast::roast_details_by_ids_answer_each_stored_lot_once,
            roast::long_curves_store_whole,
            blend::blended_lots_stock_write_back_and_listing,
            blend::a_blend_takes_roasted_weight_and_keeps_its_lineage,
            order::orders_and_products_by_external_ids_and_updates,
            cupping::cuppings_load_list_and_page_newest_first,
            cupping::a_cupping_state_is_written_alone,
            cupping::cupping_results_by_cupped_coffee_oldest_first,
            cupping::physical_analyses_filter_and_page_newest_first,
            ledger::ledger_entries_filter_and_page_newest_first,
            ledger::traces_reach_every_edge_once_oldest_first,
            ledger::traced_lots_orders_and_cuppings,
            ledger::traces_show_lots_locations_orders_and_cuppings_both_ways,
            ledger::the_audit_sums_each_lots_entries,
            ledger::ledger_entries_touching_a_lot_or_naming_it,
            due_diligence::due_diligence_is_replaced_whole_and_read_back_per_lot,
            due_diligence::source_lots_are_imported_or_opened,
            due_diligence::upstream_sources_are_the_source_lots_behind_the_starts,
            event::events_are_numbered_in_commit_order_and_listed_oldest_first,
            event::events_waiting_beyond_a_batch_are_all_numbered_in_order,
            event::events_are_kept_until_every_webhook_is_done_with_them,
            webhook::webhooks_by_id_newest_first_pages_health_and_deletion,
            webhook::deliveries_are_queued_claimed_and_recorded,
            webhook::a_webhook_holds_at_most_its_share_of_claims,
            changes::every_write_notes_what_it_created_or_changed,
            changes::ledger_entries_note_nothing,
            listing::a_written_lot_loses_its_item_and_is_handed_back_in_its_last_state,
            listing::items_are_paged_filtered_and_listed_for_rendering_in_id_order,
            listing::a_lot_written_with_its_item_keeps_it,
            listing::a_lot_inserted_with_its_item_keeps_it,
            listing::roasted_and_blended_lots_inserted_with_their_items_keep_them,
            plan::planning_data_and_recipes_are_replaced_and_read_back,
            plan::recent_roasts_are_the_last_of_each_profile_and_on_hand_the_unconsumed,
            plan::open_demand_sums_the_bags_of_open_orders_up_to_a_date,
            plan::green_lot_use_sums_roasts_and_shipments_since_an_instant,
            plan::cost_lots_answer_prices_and_weights_at_creation,
            submission::submissions_are_stored_listed_newest_first_and_filtered,
            submission::due_submissions_are_claimed_by_one_lease_at_a_time,
            submission::imported_weights_and_verification_claims,
        );
    };
    (@each $open:expr; $($module:ident :: $name:ident),+ $(,)?) => {
        $(
            #[test]
            fn $name() {
                let Some((store, _guard)) = $open else { return };
                $crate::contract::$module::$name(store);
            }
        )+
    };
}
