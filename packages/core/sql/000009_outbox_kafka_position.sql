-- Where Kafka wrote each event: the partition and offset the broker acknowledged when the
-- relay marked the row sent (issue 15). `topic` said where to; these say where in it, so
-- an operator can read the event back (kafka-console-consumer --partition P --offset O),
-- and an auditor can name the offsets of events a broker acknowledged and then lost
-- (acks = 1 and a leader that died before its followers copied the batch).
-- NULL when the relay could not know: a row sent before this migration, by a producer
-- built without relayPartitioner, or through CDC (Debezium writes to Kafka itself; the
-- confirmer knows the WAL position, not the offset). Nullable without a default, so the
-- ALTER is a catalogue change only: no table rewrite, no long lock on a big outbox.
ALTER TABLE outbox
    ADD COLUMN kafka_partition INT,
    ADD COLUMN kafka_offset    BIGINT;
