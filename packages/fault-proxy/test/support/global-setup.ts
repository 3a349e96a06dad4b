export { default } from '@outbox/testkit/global-setup';
