-- outbox_append(): append an event from SQL, so that any language, a migration, a
-- stored procedure or a trigger on a business table can write to the outbox in the
-- transaction it runs in (graphile-worker's add_job, for the outbox). It checks what
-- OutboxWriter.append checks, so a bad event fails the caller's statement instead of
-- becoming a poison row: non-empty names, a positive version, headers a flat object of
-- strings (they become Kafka headers), the payload within Kafka's default 1 MiB
-- message.max.bytes. Errors are SQLSTATE 22023 (invalid_parameter_value), each naming
-- the argument. The wake-up trigger on outbox fires as for any INSERT.
CREATE FUNCTION outbox_append(
    aggregate_type TEXT,
    aggregate_id   TEXT,
    event_type     TEXT,
    payload        JSONB,
    headers        JSONB DEFAULT '{}'::jsonb,
    event_version  INT   DEFAULT 1
) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    appended BIGINT;
BEGIN
    IF coalesce(btrim(aggregate_type), '') = '' THEN
        RAISE EXCEPTION 'outbox_append: aggregate_type must be a non-empty string' USING ERRCODE = '22023';
    END IF;
    IF coalesce(btrim(aggregate_id), '') = '' THEN
        RAISE EXCEPTION 'outbox_append: aggregate_id must be a non-empty string' USING ERRCODE = '22023';
    END IF;
    IF coalesce(btrim(event_type), '') = '' THEN
        RAISE EXCEPTION 'outbox_append: event_type must be a non-empty string' USING ERRCODE = '22023';
    END IF;
    IF payload IS NULL THEN
        RAISE EXCEPTION 'outbox_append: payload must not be NULL (use ''null''::jsonb for a JSON null)' USING ERRCODE = '22023';
    END IF;
    IF event_version IS NULL OR event_version < 1 THEN
        RAISE EXCEPTION 'outbox_append: event_version must be a positive integer' USING ERRCODE = '22023';
    END IF;
    IF headers IS NULL OR jsonb_typeof(headers) <> 'object' THEN
        RAISE EXCEPTION 'outbox_append: headers must be a JSON object' USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_each(headers) h WHERE jsonb_typeof(h.value) <> 'string') THEN
        RAISE EXCEPTION 'outbox_append: every header value must be a string' USING ERRCODE = '22023';
    END IF;
    IF octet_length(payload::text) > 1048576 THEN
        RAISE EXCEPTION 'outbox_append: payload is % bytes, over the 1 MiB limit', octet_length(payload::text)
            USING ERRCODE = '22023';
    END IF;
    INSERT INTO outbox (aggregate_type, aggregate_id, event_type, event_version, payload, headers)
    VALUES (aggregate_type, aggregate_id, event_type, event_version, payload, headers)
    RETURNING id INTO appended;
    RETURN appended;
END;
$$;
