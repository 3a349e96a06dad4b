-- Each relay member states how long its heartbeat lasts (issue 10, defect 4). The shard
-- split took a member for dead after a TTL fixed in the code (5 s, the poll interval,
-- so an idle replica could look dead once a cycle, and one backing off up to 12 s after
-- failed ticks did: test/relay-timings.test.ts), the wake-up trigger after 30 s fixed
-- in 000003 (so with a poll over 30 s, writers stopped notifying). Now a relay derives
-- its TTL from its poll and its failure backoff (src/relay/timings.ts:
-- TTL >= max(poll, backoff cap x 1.2) + 2 s, checked at start-up) and writes it into
-- its row; whoever asks "is this member alive?" reads the view below. A row written
-- without it (a relay of an older version, a hand-made row) gets the default TTL, 10 s.
ALTER TABLE outbox_relay_members
    ADD COLUMN ttl_ms INT NOT NULL DEFAULT 10000 CONSTRAINT outbox_relay_members_ttl_positive CHECK (ttl_ms > 0);

CREATE VIEW outbox_relay_live_members AS
    SELECT * FROM outbox_relay_members
    WHERE heartbeat_at > now() - ttl_ms * interval '1 millisecond';

-- 000006's function; only the liveness test changed (the view instead of 30 s).
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('outbox.notify_decided', true) = TG_TABLE_SCHEMA THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('outbox.notify_decided', TG_TABLE_SCHEMA, true);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM pg_notify('outbox_pending.' || TG_TABLE_SCHEMA, '');
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(hashtext('outbox_wakeup.' || TG_TABLE_SCHEMA));
    IF EXISTS (SELECT 1 FROM outbox_relay_live_members WHERE sleeping) THEN
        PERFORM pg_notify('outbox_pending.' || TG_TABLE_SCHEMA, '');
    END IF;
    RETURN NULL;
END;
$$;
