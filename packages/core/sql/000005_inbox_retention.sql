-- Retention of the inbox (npm run ops -- cleanup): markers older than the retention are
-- deleted oldest first in bounded batches. Without an index on processed_at every batch
-- would scan the whole inbox. A btree rather than BRIN: the deletes free pages at the
-- start of the table that new markers then reuse, which would widen every BRIN range
-- until it excludes nothing. The cost is one more index entry per event consumed.
CREATE INDEX inbox_processed_at_idx ON inbox (processed_at);
