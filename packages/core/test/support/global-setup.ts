// Relative, not @outbox/testkit: the testkit depends on core, and a dependency back would be a cycle.
export { default } from '../../../testkit/src/global-setup.ts';
