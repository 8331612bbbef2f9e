-- What RTMS publishes of the parties and the contract, and the contract each row belongs
-- to (issue 28). Portable SQL (SQLite and PostgreSQL).
--
-- deal_type ('brokered', 'direct'), seller_type and buyer_type ('individual', 'company',
-- 'public_body', 'other'), land_use, broker_district and building_name as published;
-- for leases lease_kind ('new', 'renewal'), term_start and term_end ('YYYY-MM'),
-- renewal_right_used (1, 0 or NULL) and the previous lease's deposit and rent.
-- contract_id groups the unit rows of one bulk sale (svc_core.cohorts.contracts). None of them
-- enters natural_key. Rows stored before this migration keep NULLs, and count as a
-- contract of their own, until their file is loaded again (`svc ingest` / `svc sync
-- rtms` fill the columns of the records they find already stored).

ALTER TABLE transactions ADD COLUMN deal_type TEXT;
ALTER TABLE transactions ADD COLUMN seller_type TEXT;
ALTER TABLE transactions ADD COLUMN buyer_type TEXT;
ALTER TABLE transactions ADD COLUMN land_use TEXT;
ALTER TABLE transactions ADD COLUMN broker_district TEXT;
ALTER TABLE transactions ADD COLUMN building_name TEXT;
ALTER TABLE transactions ADD COLUMN lease_kind TEXT;
ALTER TABLE transactions ADD COLUMN term_start TEXT;
ALTER TABLE transactions ADD COLUMN term_end TEXT;
ALTER TABLE transactions ADD COLUMN renewal_right_used INTEGER;
ALTER TABLE transactions ADD COLUMN previous_deposit_krw BIGINT;
ALTER TABLE transactions ADD COLUMN previous_monthly_rent_krw BIGINT;
ALTER TABLE transactions ADD COLUMN contract_id TEXT;

ALTER TABLE excluded_transactions ADD COLUMN deal_type TEXT;
ALTER TABLE excluded_transactions ADD COLUMN seller_type TEXT;
ALTER TABLE excluded_transactions ADD COLUMN buyer_type TEXT;
ALTER TABLE excluded_transactions ADD COLUMN land_use TEXT;
ALTER TABLE excluded_transactions ADD COLUMN broker_district TEXT;
ALTER TABLE excluded_transactions ADD COLUMN building_name TEXT;
ALTER TABLE excluded_transactions ADD COLUMN lease_kind TEXT;
ALTER TABLE excluded_transactions ADD COLUMN term_start TEXT;
ALTER TABLE excluded_transactions ADD COLUMN term_end TEXT;
ALTER TABLE excluded_transactions ADD COLUMN renewal_right_used INTEGER;
ALTER TABLE excluded_transactions ADD COLUMN previous_deposit_krw BIGINT;
ALTER TABLE excluded_transactions ADD COLUMN previous_monthly_rent_krw BIGINT;
ALTER TABLE excluded_transactions ADD COLUMN contract_id TEXT;
