DROP TABLE eudr_verification_claims;
DROP TABLE eudr_submission_lots;
DROP TABLE eudr_submissions;
