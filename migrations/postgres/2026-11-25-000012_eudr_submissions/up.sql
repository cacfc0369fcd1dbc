-- Statements filed with the EU's EUDR information system (api-decisions §14). The history, the
-- lots and the statement sent are JSON; the lots are also rows of eudr_submission_lots, for
-- the greenLotId filter. next_poll_at is when the poller next asks the IS about a submission
-- (NULL once nothing is left to learn); lease / lease_until hold the claim of the instance
-- asking, until it expires.
CREATE TABLE eudr_submissions (
    id TEXT PRIMARY KEY NOT NULL,
    eu_uuid TEXT,
    status TEXT NOT NULL,
    internal_reference_number TEXT NOT NULL,
    activity_type TEXT NOT NULL,
    green_lot_ids TEXT NOT NULL,
    reference_number TEXT,
    verification_number TEXT,
    submitted_date TIMESTAMP NOT NULL,
    updated_date TIMESTAMP NOT NULL,
    history TEXT NOT NULL,
    statement TEXT NOT NULL,
    next_poll_at TIMESTAMP,
    lease TEXT,
    lease_until TIMESTAMP
);
CREATE INDEX eudr_submissions_newest ON eudr_submissions (submitted_date, id);
CREATE INDEX eudr_submissions_due ON eudr_submissions (next_poll_at) WHERE next_poll_at IS NOT NULL;
CREATE TABLE eudr_submission_lots (
    submission_id TEXT NOT NULL REFERENCES eudr_submissions (id) ON DELETE CASCADE,
    green_lot_id TEXT NOT NULL,
    PRIMARY KEY (submission_id, green_lot_id)
);
CREATE INDEX eudr_submission_lots_lot ON eudr_submission_lots (green_lot_id);
-- Re-verification of a lot's statements: one instance at a time per lot, by a claim with a
-- lease (the statements themselves, with their verification, stay in the due diligence
-- document).
CREATE TABLE eudr_verification_claims (
    green_lot_id TEXT PRIMARY KEY NOT NULL,
    lease TEXT NOT NULL,
    lease_until TIMESTAMP NOT NULL
);
