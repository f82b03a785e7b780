/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy -c stage=<name>` (infra/app.ts lists the context it reads). No
 * `env` on the stack, so it synthesizes without AWS credentials (environment-agnostic) and deploys to whatever
 * account and region the CLI is pointed at.
 */
import { App } from 'aws-cdk-lib';
import { addNagChecks, buildApp } from '../infra/app';

const app = new App();
buildApp(app);
addNagChecks(app);
app.synth();
