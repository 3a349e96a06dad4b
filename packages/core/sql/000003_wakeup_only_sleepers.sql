-- Wake-up that costs writers little. Measured (npm run bench, pgbench, 8 clients): a
-- NOTIFY per transaction costs the writer about a third of its throughput whatever the
-- payload, since every notifying commit takes the global notify-queue lock and signals
-- each listener. So writers notify only while a relay is asleep: a busy relay is
-- looping anyway and needs no signal; the check is a read of a tiny table.
-- A relay marks itself asleep *before* its last look at the outbox, so a row committed
-- in between is either seen by that look or notified (the fallback poll covers the
-- rest: notifications are best effort). A relay killed while asleep stops counting
-- after 30 s: a sleeping relay refreshes its row at every fallback poll (5 s).
ALTER TABLE outbox_relay_members ADD COLUMN sleeping BOOLEAN NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM outbox_relay_members WHERE sleeping AND heartbeat_at > now() - interval '30 seconds') THEN
        PERFORM pg_notify('outbox_pending.' || TG_TABLE_SCHEMA, '');
    END IF;
    RETURN NULL;
END;
$$;
