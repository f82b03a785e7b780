/**
 * The operator's replay of the stream's dead letters (`npm run admin -- replay-dead-letters`) against the running
 * local stack's data: a change the events consumer gave up on, kept as the reader keeps it, is listed by a dry run,
 * then replayed, and the webhook it stands for is delivered by the stack.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { marshall } from '@aws-sdk/util-dynamodb';
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { waitFor } from '../support/wait';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

async function admin(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR };
  for (const name of ['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'LOCAL_KEYS_FILE', 'DELIVERY_QUEUE_DIR']) delete env[name];
  return run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'bin', 'admin.ts'), ...args], { cwd: ROOT, env });
}

/** The table modules, pointed at the running stack's table (they read their configuration when loaded). */
async function stackTable() {
  const state = JSON.parse(readFileSync(join(String(process.env.E2E_DATA_DIR), 'local-stack.json'), 'utf8')) as {
    tableName: string;
    dynamodbEndpoint: string;
  };
  process.env.TABLE_NAME = state.tableName;
  process.env.DYNAMODB_ENDPOINT = state.dynamodbEndpoint;
  process.env.AWS_REGION ??= 'local';
  const [deadLetters, activity] = await Promise.all([
    import('../../shared/db/dead-letter'),
    import('../../shared/db/activity'),
  ]);
  return { ...deadLetters, ...activity };
}

let receiver: Receiver | undefined;
afterAll(async () => {
  await receiver?.close();
});

describe('replay-dead-letters against the local stack', () => {
  it('lists a kept change, replays it into its consumer, and the stack delivers the webhook', async () => {
    receiver = await startReceiver();
    const headers = await newApiKeyHeaders();
    const apiKeyId = headers['x-service-api-key'];
    expect((await post('/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, headers)).status).toBe(200);
    expect((await post('/v2/workspace/advancedwebhook/endpoints/create', { url: receiver.url }, headers)).status).toBe(
      200,
    );
    const table = await stackTable();
    const organizationId = uniqueId('org');
    const targetEntityId = uniqueId('thread');
    const item = table.activityItem(apiKeyId, {
      organizationId,
      documentId: 'doc-1',
      content: {
        id: uniqueId('act'),
        featureType: 'comment',
        actionType: 'comment.add',
        actionUser: { userId: 'ann' },
        targetEntityId,
      },
      timestamp: Date.now(),
      seq: 0,
    });
    const eventId = uniqueId('event');
    await table.putDeadLetters(
      'StreamChangesWorker',
      'WebhookEvents',
      [
        {
          eventID: eventId,
          eventName: 'INSERT',
          dynamodb: {
            SequenceNumber: '1',
            Keys: marshall({ pk: item.pk, sk: item.sk }) as never,
            NewImage: marshall(item, { removeUndefinedValues: true }) as never,
          },
        },
      ],
      'Error: injected',
    );

    const listed = await admin('replay-dead-letters', '--dry-run', '--consumer', 'WebhookEvents');
    const replayed = await admin('replay-dead-letters', '--consumer', 'WebhookEvents');
    const [delivered] = await receiver.waitFor(1);

    expect(listed.stdout).toMatch(new RegExp(`^listed\\tStreamChangesWorker\\tWebhookEvents\\t${eventId}\\t`, 'm'));
    expect(replayed.stdout).toMatch(new RegExp(`^replayed\\tStreamChangesWorker\\tWebhookEvents\\t${eventId}\\t`, 'm'));
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'comment.add', data: { targetEntityId } });
    await waitFor(async () => !(await admin('replay-dead-letters', '--dry-run')).stdout.includes(eventId), {
      what: 'the dead letter to be gone',
    });
  });
});
