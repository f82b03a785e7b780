/**
 * Deploy tasks: functions that CloudFormation runs while the stack is created or updated (custom resources), to
 * put in place what the request paths only read. The CDK stack makes one function and one custom resource per
 * entry; the local stack and the connected tests run the same handler against their table before serving. Like
 * the route table, this module imports nothing at runtime so that `infra/` can read it.
 */
import type { AccessDeclaration } from './grants';

export interface DeployTask extends AccessDeclaration {
  /** Construct id in the stack. */
  readonly id: string;
  /** Handler file relative to the project root; it exports `handler` (a CloudFormation custom resource handler). */
  readonly entry: string;
  readonly summary: string;
}

/**
 * Creates the server secrets (the page-token signing key) when they do not exist yet. Read-only routes sign and
 * check page tokens but may not write the table, so the key must exist before the first request.
 */
export const serverSecretsTask = {
  id: 'ServerSecrets',
  entry: 'functions/deploy/server-secrets.ts',
  table: 'write',
  summary: 'Creates the server secrets (page-token key) at deployment when they do not exist yet.',
} as const satisfies DeployTask;

export const deployTasks: readonly DeployTask[] = [serverSecretsTask];
