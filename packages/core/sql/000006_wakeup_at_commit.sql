-- The wake-up decided at COMMIT (issue 10, defect 2). 000003's statement trigger looked
-- for a sleeping relay when the INSERT ran: a row inserted while the relay was awake and
-- committed after its last look was neither seen by that look nor notified, and waited
-- for the fallback poll (test/wakeup-window.test.ts: 28.9 s of a 30 s poll, 3 of 3).
--
-- Now a deferred constraint trigger decides at COMMIT, and an advisory lock K (per
-- schema) orders the two sides:
--   writer, at COMMIT: takes K shared, then reads the sleeping flag; K is held until
--     its commit is visible.
--   relay: sets sleeping = true (committed), takes and releases K exclusively, then
--     takes its last look. The exclusive lock waits for every writer that may have read
--     the flag as "awake" until it has committed, so the last look sees its row; a
--     writer that asks for K later reads sleeping = true and notifies. (A writer's shared
--     request queues behind the relay's waiting exclusive one, so only writers that
--     commit at that instant wait, for one commit's time.)
-- Constraint triggers run per row: the first row of a transaction decides, the others
-- return at once (a transaction-local setting). The flag is read with a fresh snapshot
-- only under READ COMMITTED; a REPEATABLE READ or SERIALIZABLE writer's snapshot may
-- predate the relay's flag, so such a writer always notifies. A writer that runs
-- SET CONSTRAINTS ALL IMMEDIATE brings back 000003's window (the fallback poll covers it).
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
    IF EXISTS (SELECT 1 FROM outbox_relay_members WHERE sleeping AND heartbeat_at > now() - interval '30 seconds') THEN
        PERFORM pg_notify('outbox_pending.' || TG_TABLE_SCHEMA, '');
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER outbox_notify_trigger ON outbox;
CREATE CONSTRAINT TRIGGER outbox_notify_trigger
    AFTER INSERT ON outbox
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION outbox_notify();
