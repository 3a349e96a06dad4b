-- The demo's business tables (order-api, inventory-consumer) and the failure points.
-- They live in core's migrations so that every service, the auditor and the tests
-- agree on one schema, migrated once.

CREATE TABLE orders (
    id          UUID        PRIMARY KEY,
    user_id     INT         NOT NULL CHECK (user_id > 0),
    sku         TEXT        NOT NULL,
    quantity    INT         NOT NULL CHECK (quantity > 0),
    status      TEXT        NOT NULL CHECK (status IN ('created', 'paid', 'cancelled')),
    -- Sequence number of the aggregate's latest event (1 = OrderCreated).
    seq         INT         NOT NULL DEFAULT 1,
    -- 'outbox' or 'naive': how its events were (or were not) delivered.
    mode        TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX orders_created_at_idx ON orders (created_at);

CREATE TABLE inventory (
    sku        TEXT PRIMARY KEY,
    available  INT  NOT NULL,
    reserved   INT  NOT NULL DEFAULT 0
);

-- One row per reservation made by the consumer. Deliberately not unique per order:
-- with the inbox switched off a duplicate really reserves twice, and this shows it.
CREATE TABLE reservations (
    id          BIGSERIAL   PRIMARY KEY,
    order_id    UUID        NOT NULL,
    sku         TEXT        NOT NULL,
    quantity    INT         NOT NULL,
    event_id    TEXT        NOT NULL,
    released_at TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX reservations_order_idx ON reservations (order_id);

-- What the consumer saw, one row per delivery: the auditor's view of Kafka.
CREATE TABLE consumer_deliveries (
    id           BIGSERIAL   PRIMARY KEY,
    consumer     TEXT        NOT NULL,
    event_id     TEXT        NOT NULL,
    event_type   TEXT        NOT NULL,
    aggregate_id TEXT        NOT NULL,
    seq          INT,
    topic        TEXT        NOT NULL,
    kafka_partition INT      NOT NULL,
    kafka_offset BIGINT      NOT NULL,
    -- processed | duplicate (caught by the inbox) | reprocessed (inbox off, applied again)
    outcome      TEXT        NOT NULL,
    -- Set on the delivery that broke FIFO for its aggregate (seq behind the last applied).
    fifo_violation BOOLEAN   NOT NULL DEFAULT false,
    received_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX consumer_deliveries_event_idx ON consumer_deliveries (event_id);
CREATE INDEX consumer_deliveries_aggregate_idx ON consumer_deliveries (aggregate_id);

-- Last sequence applied per aggregate, for the FIFO check at the consumer.
CREATE TABLE consumer_aggregate_seq (
    consumer     TEXT NOT NULL,
    aggregate_id TEXT NOT NULL,
    last_seq     INT  NOT NULL,
    PRIMARY KEY (consumer, aggregate_id)
);

-- Messages the consumer could not handle, also sent to the dead-letter topic.
CREATE TABLE consumer_dead_letters (
    id          BIGSERIAL   PRIMARY KEY,
    consumer    TEXT        NOT NULL,
    topic       TEXT        NOT NULL,
    kafka_partition INT     NOT NULL,
    kafka_offset BIGINT     NOT NULL,
    reason      TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Idempotency-Key: the first response to a POST, replayed for a retry.
CREATE TABLE idempotency_keys (
    key          TEXT        PRIMARY KEY,
    request_hash TEXT        NOT NULL,
    status_code  INT         NOT NULL,
    response     JSONB       NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Failure points, shared by every replica. mode: off | once | times | on.
-- "once" and "times" are consumed atomically (UPDATE … RETURNING), so a fault fires
-- exactly as often as asked, whichever replica reaches it first.
CREATE TABLE failure_points (
    name       TEXT        PRIMARY KEY,
    mode       TEXT        NOT NULL DEFAULT 'off' CHECK (mode IN ('off', 'once', 'times', 'on')),
    remaining  INT         NOT NULL DEFAULT 0,
    params     JSONB       NOT NULL DEFAULT '{}'::jsonb,
    fired      INT         NOT NULL DEFAULT 0,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Settings the dashboard switches at run time (default order mode, traffic rate, …).
CREATE TABLE demo_settings (
    key        TEXT PRIMARY KEY,
    value      JSONB NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE FUNCTION failure_points_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('failure_points.' || TG_TABLE_SCHEMA, '');
    RETURN NULL;
END;
$$;
CREATE TRIGGER failure_points_notify_trigger
    AFTER INSERT OR UPDATE OR DELETE ON failure_points
    FOR EACH STATEMENT EXECUTE FUNCTION failure_points_notify();
CREATE TRIGGER demo_settings_notify_trigger
    AFTER INSERT OR UPDATE OR DELETE ON demo_settings
    FOR EACH STATEMENT EXECUTE FUNCTION failure_points_notify();
