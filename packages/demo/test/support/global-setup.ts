// The real PostgreSQL and Kafka, brought up (or reused) once before the systems start.
export { default } from '@outbox/testkit/global-setup';
