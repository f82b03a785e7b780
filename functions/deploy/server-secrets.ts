/**
 * Deploy task (a CloudFormation custom resource through the CDK Provider framework): creates the server secrets
 * (the page-token key) when the stack is created or updated, and leaves existing ones alone. On delete it does
 * nothing: the table is retained with the stack, and so is what it holds.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { SERVER_SECRETS, ensureServerSecret } from '../../shared/db/server-secret';

const PHYSICAL_ID = 'server-secrets';

export async function handler(
  event: CloudFormationCustomResourceEvent,
): Promise<{ PhysicalResourceId: string; Data: { created: string } }> {
  const created: string[] = [];
  if (event.RequestType !== 'Delete') {
    for (const name of SERVER_SECRETS) {
      if (await ensureServerSecret(name)) created.push(name);
    }
  }
  return { PhysicalResourceId: PHYSICAL_ID, Data: { created: created.join(',') } };
}
