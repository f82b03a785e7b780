/**
 * The infra tier's tests of the synthesized deployment, one module per concern in `synthesized/`, run as one test
 * file (issue 31 item 6): each test file loads aws-cdk-lib and the stack's modules into a module registry of its own,
 * and the first synthesis in a fresh registry is slow (the library's lazy modules, compiled cold), about 9 s of each
 * file's time. Run as one file, the twelve pay it once: 150 s of test time became 47 s. Each module synthesizes what
 * it needs (bundling skipped, templates.ts) and names its describe blocks for what it checks.
 */
import './synthesized/app';
import './synthesized/crdt-versions';
import './synthesized/growth';
import './synthesized/limits-and-alarms';
import './synthesized/live';
import './synthesized/live-revocation';
import './synthesized/live-throttle';
import './synthesized/nag';
import './synthesized/ses';
import './synthesized/stack';
import './synthesized/stream';
import './synthesized/webhooks';
