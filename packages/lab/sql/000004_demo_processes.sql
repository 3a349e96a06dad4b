-- The demo's processes as its supervisor sees them, so that the dashboard (another
-- process) can show up / down / restarting and the restart counts. Written by the demo
-- on every state change; readers are told through NOTIFY rather than polling.
CREATE TABLE demo_processes (
    name       TEXT        PRIMARY KEY,
    -- order-api | publisher-worker | inventory-consumer | dashboard-api
    kind       TEXT        NOT NULL,
    state      TEXT        NOT NULL CHECK (state IN ('up', 'down', 'restarting')),
    pid        INT,
    restarts   INT         NOT NULL DEFAULT 0,
    started_at TIMESTAMPTZ,
    url        TEXT,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE FUNCTION demo_processes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('demo_processes.' || TG_TABLE_SCHEMA, '');
    RETURN NULL;
END;
$$;
CREATE TRIGGER demo_processes_notify_trigger
    AFTER INSERT OR UPDATE OR DELETE ON demo_processes
    FOR EACH STATEMENT EXECUTE FUNCTION demo_processes_notify();
