// Relative, not @outbox/testkit: the testkit depends on the lab, and a dependency back would be a cycle.
export { default } from '../../../testkit/src/global-setup.ts';
