-- The cancellation date of a cancelled deal (RTMS cdealDay, 해제사유발생일; the CSV
-- export's 해제사유발생일), ISO YYYY-MM-DD, kept on its excluded record and shown by
-- GET /transactions?include_excluded=true. NULL when the source gives none, and on
-- records stored before this migration until their file or month is read again.
ALTER TABLE excluded_transactions ADD COLUMN cancellation_date TEXT;
