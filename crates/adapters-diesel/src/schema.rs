//! The database schema: every table once, with the foreign keys as `joinable!` so queries may
//! join any of them. It mirrors `migrations/{sqlite,postgres}`; a column added there is added here.

diesel::table! {
    settings (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    sequences (name) {
        name -> Text,
        last_value -> BigInt,
    }
}

diesel::table! {
    accounts (client_id) {
        client_id -> Text,
        name -> Text,
        scopes -> Text,
        secret_hash -> Text,
        created_at -> Timestamp,
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    access_tokens (token_hash) {
        token_hash -> Text,
        client_id -> Text,
        scopes -> Text,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    locations (id) {
        id -> Text,
        name -> Text,
        external_id -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    projects (id) {
        id -> Text,
        name -> Text,
        description -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    green_lots (id) {
        id -> Text,
        origin_id -> Text,
        lot_number -> BigInt,
        name -> Text,
        ico_number -> Nullable<Text>,
        external_id -> Nullable<Text>,
        weight_micros -> BigInt,
        weight_unit -> Text,
        consumed_at -> Nullable<Timestamp>,
        price_micros -> Nullable<BigInt>,
        price_currency -> Nullable<Text>,
        location_id -> Nullable<Text>,
        projects -> Text,
        details -> Text,
        registration_date -> Timestamp,
        last_modified_date -> Timestamp,
        listing_item -> Nullable<Text>,
    }
}

diesel::table! {
    profiles (id) {
        id -> Text,
        name -> Text,
        external_id -> Nullable<Text>,
        profile_group -> Nullable<Text>,
        components -> Text,
        reference_roast_id -> Nullable<Text>,
        projects -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    roasted_lots (id) {
        id -> Text,
        lot_number -> BigInt,
        name -> Text,
        weight_micros -> BigInt,
        weight_unit -> Text,
        roasted_micros -> BigInt,
        consumed_at -> Nullable<Timestamp>,
        profile_id -> Nullable<Text>,
        location_id -> Text,
        roasted_date -> Timestamp,
        projects -> Text,
        created_at -> Timestamp,
        last_modified_at -> Timestamp,
        external_id -> Nullable<Text>,
        listing_item -> Nullable<Text>,
    }
}

diesel::table! {
    roast_sources (roasted_lot_id, position) {
        roasted_lot_id -> Text,
        position -> Integer,
        green_lot_id -> Text,
        name -> Text,
        external_id -> Nullable<Text>,
        used_micros -> BigInt,
        used_unit -> Text,
    }
}

diesel::table! {
    roast_details (roasted_lot_id) {
        roasted_lot_id -> Text,
        roast_technician -> Nullable<Text>,
        note -> Nullable<Text>,
        start_temperature_micros -> Nullable<BigInt>,
        start_temperature_unit -> Nullable<Text>,
        end_temperature_micros -> Nullable<BigInt>,
        end_temperature_unit -> Nullable<Text>,
        roast_value_micros -> Nullable<BigInt>,
        roast_value_unit -> Nullable<Text>,
        roast_value2_micros -> Nullable<BigInt>,
        roast_value2_unit -> Nullable<Text>,
        roast_duration_micros -> Nullable<BigInt>,
        roast_duration_unit -> Nullable<Text>,
        first_crack_time_micros -> Nullable<BigInt>,
        first_crack_time_unit -> Nullable<Text>,
        color_change_time_micros -> Nullable<BigInt>,
        color_change_time_unit -> Nullable<Text>,
        machine -> Nullable<Text>,
    }
}

diesel::table! {
    roast_curves (roasted_lot_id, position) {
        roasted_lot_id -> Text,
        position -> Integer,
        name -> Text,
        unit -> Text,
        data_points -> Text,
    }
}

diesel::table! {
    blended_lots (id) {
        id -> Text,
        lot_number -> BigInt,
        name -> Text,
        weight_micros -> BigInt,
        weight_unit -> Text,
        consumed_at -> Nullable<Timestamp>,
        location_id -> Text,
        blended_date -> Timestamp,
        projects -> Text,
        created_at -> Timestamp,
        last_modified_at -> Timestamp,
        listing_item -> Nullable<Text>,
    }
}

diesel::table! {
    blend_sources (blended_lot_id, position) {
        blended_lot_id -> Text,
        position -> Integer,
        roasted_lot_id -> Text,
        name -> Text,
        external_id -> Nullable<Text>,
        used_micros -> BigInt,
        used_unit -> Text,
    }
}

diesel::table! {
    cuppings (id) {
        id -> Text,
        cupping_number -> BigInt,
        start_date -> Timestamp,
        state -> Text,
        cupping_sheet -> Text,
    }
}

diesel::table! {
    cupped_coffees (id) {
        id -> Text,
        cupping_id -> Text,
        position -> Integer,
        coffee_number -> BigInt,
        lot_id -> Text,
        lot_type -> Text,
    }
}

diesel::table! {
    cupping_results (id) {
        id -> Text,
        cupped_coffee_id -> Text,
        final_score -> BigInt,
        scoring_state -> Text,
        evaluator -> Nullable<Text>,
        note -> Nullable<Text>,
        sensorial_attributes -> Text,
        recorded_at -> Timestamp,
    }
}

diesel::table! {
    physical_analyses (id) {
        id -> Text,
        analysis_number -> BigInt,
        analysis_date -> Timestamp,
        lot_id -> Text,
        lot_type -> Text,
        moisture -> Nullable<BigInt>,
        water_activity -> Nullable<BigInt>,
        density -> Nullable<BigInt>,
        screen_sizes -> Text,
        defects -> Text,
        note -> Nullable<Text>,
        evaluator -> Nullable<Text>,
    }
}

diesel::table! {
    products (id) {
        id -> Text,
        external_id -> Text,
        name -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    shipments (order_id, position) {
        order_id -> Text,
        position -> Integer,
        sku -> Text,
        lot_id -> Text,
        lot_type -> Text,
        lot_number -> BigInt,
        quantity -> Integer,
        weight_micros -> BigInt,
        weight_unit -> Text,
        shipped_date -> Timestamp,
    }
}

diesel::table! {
    green_lot_due_diligence (green_lot_id) {
        green_lot_id -> Text,
        document -> Text,
        statement_count -> Integer,
        updated_date -> Timestamp,
    }
}

diesel::table! {
    ledger_entries (id) {
        id -> Text,
        lot_id -> Text,
        lot_type -> Text,
        kind -> Text,
        delta_micros -> BigInt,
        weight_after_micros -> BigInt,
        unit -> Text,
        reference_id -> Nullable<Text>,
        reference_type -> Nullable<Text>,
        operation -> Text,
        client_id -> Text,
        created_date -> Timestamp,
    }
}

diesel::table! {
    product_variants (sku) {
        sku -> Text,
        product_id -> Text,
        position -> Integer,
        package_size_ug -> BigInt,
    }
}

diesel::table! {
    orders (id) {
        id -> Text,
        external_id -> Text,
        order_date -> Timestamp,
        customer -> Nullable<Text>,
        customer_type -> Nullable<Text>,
        status -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        shipped_date -> Nullable<Timestamp>,
    }
}

diesel::table! {
    order_items (order_id, position) {
        order_id -> Text,
        position -> Integer,
        sku -> Text,
        quantity -> Integer,
    }
}

diesel::joinable!(access_tokens -> accounts (client_id));
diesel::joinable!(green_lots -> locations (location_id));
diesel::joinable!(roasted_lots -> locations (location_id));
diesel::joinable!(roasted_lots -> profiles (profile_id));
diesel::joinable!(roast_sources -> roasted_lots (roasted_lot_id));
diesel::joinable!(roast_sources -> green_lots (green_lot_id));
diesel::joinable!(roast_details -> roasted_lots (roasted_lot_id));
diesel::joinable!(roast_curves -> roasted_lots (roasted_lot_id));
diesel::joinable!(blended_lots -> locations (location_id));
diesel::joinable!(blend_sources -> blended_lots (blended_lot_id));
diesel::joinable!(blend_sources -> roasted_lots (roasted_lot_id));
diesel::joinable!(cupped_coffees -> cuppings (cupping_id));
diesel::joinable!(cupping_results -> cupped_coffees (cupped_coffee_id));
diesel::joinable!(product_variants -> products (product_id));
diesel::joinable!(order_items -> orders (order_id));
diesel::joinable!(shipments -> orders (order_id));

diesel::table! {
    events (id) {
        id -> Text,
        sequence -> Nullable<BigInt>,
        writer_xid -> Nullable<BigInt>,
        event_type -> Text,
        subject_id -> Text,
        subject_type -> Text,
        operation -> Text,
        client_id -> Text,
        created_date -> Timestamp,
    }
}

diesel::table! {
    webhooks (id) {
        id -> Text,
        url -> Text,
        types -> Text,
        description -> Nullable<Text>,
        status -> Text,
        secret -> Text,
        consecutive_failures -> Integer,
        given_sequence -> BigInt,
        created_date -> Timestamp,
    }
}

diesel::table! {
    deliveries (id) {
        id -> Text,
        webhook_id -> Text,
        event_id -> Text,
        attempt -> Integer,
        status -> Text,
        http_status -> Nullable<Integer>,
        error -> Nullable<Text>,
        next_attempt_at -> Timestamp,
        lease -> Nullable<Text>,
        lease_until -> Nullable<Timestamp>,
        created_date -> Timestamp,
    }
}

diesel::table! {
    eudr_submissions (id) {
        id -> Text,
        eu_uuid -> Nullable<Text>,
        status -> Text,
        internal_reference_number -> Text,
        activity_type -> Text,
        green_lot_ids -> Text,
        reference_number -> Nullable<Text>,
        verification_number -> Nullable<Text>,
        submitted_date -> Timestamp,
        updated_date -> Timestamp,
        history -> Text,
        statement -> Text,
        next_poll_at -> Nullable<Timestamp>,
        lease -> Nullable<Text>,
        lease_until -> Nullable<Timestamp>,
    }
}

diesel::table! {
    eudr_submission_lots (submission_id, green_lot_id) {
        submission_id -> Text,
        green_lot_id -> Text,
    }
}

diesel::table! {
    eudr_verification_claims (green_lot_id) {
        green_lot_id -> Text,
        lease -> Text,
        lease_until -> Timestamp,
    }
}

diesel::joinable!(deliveries -> webhooks (webhook_id));
diesel::joinable!(eudr_submission_lots -> eudr_submissions (submission_id));

diesel::table! {
    profile_planning (profile_id) {
        profile_id -> Text,
        expected_loss_micros -> Nullable<BigInt>,
        batch_min_micros -> Nullable<BigInt>,
        batch_min_unit -> Nullable<Text>,
        batch_max_micros -> Nullable<BigInt>,
        batch_max_unit -> Nullable<Text>,
        updated_at -> Timestamp,
    }
}
diesel::table! {
    product_recipes (product_id) {
        product_id -> Text,
        components -> Text,
        updated_at -> Timestamp,
    }
}
diesel::joinable!(profile_planning -> profiles (profile_id));
diesel::joinable!(product_recipes -> products (product_id));
diesel::allow_tables_to_appear_in_same_query!(
    settings,
    sequences,
    accounts,
    access_tokens,
    locations,
    projects,
    green_lots,
    profiles,
    roasted_lots,
    roast_sources,
    roast_details,
    roast_curves,
    blended_lots,
    blend_sources,
    cuppings,
    cupped_coffees,
    cupping_results,
    physical_analyses,
    products,
    product_variants,
    orders,
    order_items,
    shipments,
    ledger_entries,
    green_lot_due_diligence,
    events,
    webhooks,
    deliveries,
    profile_planning,
    product_recipes,
    eudr_submissions,
    eudr_submission_lots,
    eudr_verification_claims,
);

#[cfg(test)]
mod tests {
    use diesel::prelude::*;

    use super::*;

    #[test]
    fn lots_join_their_sources_and_locations() {
        let query = roast_sources::table
            .inner_join(green_lots::table)
            .inner_join(roasted_lots::table.inner_join(locations::table))
            .select((green_lots::name, roasted_lots::name, locations::name));
        let sql = diesel::debug_query::<diesel::sqlite::Sqlite, _>(&query).to_string();
        assert_eq!(sql.matches("INNER JOIN").count(), 3, "{sql}");
    }
}
