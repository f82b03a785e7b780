/**
 * Nothing is lost when the local stack dies (docs/decisions.md §11 "Delivery", §12): 1,000 webhook messages are
 * caused while their receiver is down, and a notification to 100 members is emailed while the email provider (a fake
 * SendGrid) answers 503; once every message and email has failed its first attempt, the stack's whole process group
 * (Node and DynamoDB Local) is killed with SIGKILL while they wait for their retry, and after `npm start` on the same
 * data folder every message arrives and every email is sent exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { pickFreePort } from '../../local/dynamodb-local';
import { uniqueEmail } from '../support/ids';
import { dynamoDbLocalPids, PROJECT_ROOT } from '../support/local-stack-process';
import { startFakeSendgrid } from '../support/fake-sendgrid';
import { startReceiver, type ReceivedRequest } from '../support/webhook-receiver';
import { WAIT_CEILING_MS } from '../support/wait';

const MESSAGES = 1000;
const MEMBERS = 100;
const PER_REQUEST = 100;
const READY_LINE = /Local stack ready at (http:\/\/127\.0\.0\.1:\d+)/;

interface Stack {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
}

/** `npm start` as its own process group (node runs tsx in-process), so SIGKILL reaches every process of it. */
async function start(dataDir: string, dynamodbPort: number, sendgridUrl: string): Promise<Stack> {
  // The schedule runs 300 times faster (5 min → 1 s, 2 h → 24 s, 10 h → 2 min; a delivery fails for good after
  // about 5 minutes of failures, longer than the receiver is down), so a delivery that failed a few times before the
  // kill is not still waiting for its next attempt when the test ends.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    DYNAMODB_PORT: String(dynamodbPort),
    DATA_DIR: dataDir,
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    WEBHOOK_SCHEDULE_DIVISOR: '300',
    SENDGRID_BASE_URL: sendgridUrl,
  };
  for (const name of ['DYNAMODB_ENDPOINT', 'LOCAL_KEYS_FILE', 'TABLE_NAME', 'DELIVERY_QUEUE_DIR']) delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: PROJECT_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const append = (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-8000));
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`No readiness line:\n${tail}`)), WAIT_CEILING_MS);
    child.stdout?.on('data', () => {
      const match = READY_LINE.exec(tail);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', () => reject(new Error(`Exited before ready:\n${tail}`)));
  });
  return { child, baseUrl, output: () => tail };
}

async function killHard(stack: Stack, dynamodbPort: number): Promise<void> {
  const exited = new Promise((resolve) => stack.child.once('exit', resolve));
  process.kill(-(stack.child.pid as number), 'SIGKILL');
  await exited;
  // DynamoDB Local runs in its own process group when the platform gives it one: it dies too, as in a crash.
  for (const pid of dynamoDbLocalPids(dynamodbPort)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && dynamoDbLocalPids(dynamodbPort).length > 0; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

async function post(
  base: string,
  path: string,
  data: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ data }),
  });
  return { status: response.status, body: await response.json() };
}

describe('webhook delivery and email across a kill -9 of the local stack', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'webhook-restart-'));
  let stack: Stack | undefined;
  afterAll(async () => {
    if (stack !== undefined && stack.child.exitCode === null && stack.child.signalCode === null) {
      const exited = new Promise((resolve) => stack?.child.once('exit', resolve));
      process.kill(-(stack.child.pid as number), 'SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`delivers every one of ${MESSAGES} messages and sends each of ${MEMBERS} emails exactly once, all pending at the kill, after npm start`, async () => {
    let up = false;
    let receiverToClose: { close(): Promise<void> } | undefined;
    const accepted = new Map<string, ReceivedRequest>();
    const receiver = await startReceiver((_, request) => {
      if (!up) return 503;
      accepted.set(String(request.headers['webhook-id']), request);
      return 200;
    });
    receiverToClose = receiver;
    // Emails are sent (202) only once the provider is up; every 202 is one email that reached a recipient.
    const answers: number[] = [];
    const sendgrid = await startFakeSendgrid((_, index) => (answers[index] = up ? 202 : 503));
    const recipientOf = (request: (typeof sendgrid.requests)[number]) =>
      String(request.body?.personalizations[0]?.to[0]?.email);
    const emailed = () => sendgrid.requests.filter((_, i) => answers[i] === 202).map(recipientOf);
    try {
      const dynamodbPort = await pickFreePort();
      stack = await start(dataDir, dynamodbPort, sendgrid.url);
      const base = stack.baseUrl;

      const workspace = await post(base, '/v2/workspace/create', { ownerEmail: uniqueEmail('restart') });
      const { id, authToken, apiKeyList } = workspace.body.result.data;
      const apiKey = Object.keys(apiKeyList)[0];
      const tokens = await post(
        base,
        '/v2/workspace/authtokens/get',
        { apiKey },
        { 'x-service-workspace-id': id, 'x-service-workspace-auth-token': authToken },
      );
      const headers = {
        'x-service-api-key': apiKey,
        'x-service-auth-token': tokens.body.result.data.authTokens[0].token,
      };
      await post(base, '/v2/workspace/activityconfig/update', { activityServiceConfig: { isEnabled: true } }, headers);
      await post(base, '/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, headers);
      const endpoint = await post(
        base,
        '/v2/workspace/advancedwebhook/endpoints/create',
        { url: receiver.url, filterTypes: ['comment.add'] },
        headers,
      );
      const endpointId = endpoint.body.result.data.id as string;
      const secret = (await post(base, '/v2/workspace/advancedwebhook/endpoints/secret/get', { endpointId }, headers))
        .body.result.data.secret as string;

      for (let first = 0; first < MESSAGES; first += PER_REQUEST) {
        const activities = Array.from({ length: PER_REQUEST }, (_, i) => ({
          id: `a-${first + i}`,
          featureType: 'comment',
          actionType: 'comment.add',
          targetEntityId: `t-${first + i}`,
        }));
        const added = await post(
          base,
          '/v2/activities/add',
          { organizationId: 'org', documentId: 'doc', activities },
          headers,
        );
        expect(added.status).toBe(200);
      }
      // The emails last, so that they have failed once or twice, not for minutes, when the stack is killed.
      await post(
        base,
        '/v2/workspace/emailconfig/update',
        {
          useEmailService: true,
          emailServiceConfig: { type: 'sendgrid', apiKey: 'SG.restart-test', fromEmail: 'notify@restart.example' },
        },
        headers,
      );
      const members = Array.from({ length: MEMBERS }, (_, i) => ({ userId: `m${i}`, email: `m${i}@restart.example` }));
      expect(
        (
          await post(
            base,
            '/v2/users/add',
            { organizationId: 'org', createOrganization: true, users: members },
            headers,
          )
        ).status,
      ).toBe(200);
      expect(
        (
          await post(
            base,
            '/v2/organizations/documents/add',
            { organizationId: 'org', documents: [{ documentId: 'doc' }] },
            headers,
          )
        ).status,
      ).toBe(200);
      const notified = await post(
        base,
        '/v2/notifications/add',
        {
          organizationId: 'org',
          documentId: 'doc',
          actionUser: { userId: 'author' },
          displayHeadlineMessageTemplate: 'News',
          notifyAll: true,
        },
        headers,
      );
      expect(notified.status).toBe(200);
      // Every message made and its first attempt failed: 1,000 deliveries pending, waiting for their next attempt.
      // (Killing DynamoDB Local within moments of a write can lose that write: its own durability, measured and
      // documented in docs/architecture.md. The pipeline must lose nothing DynamoDB Local kept.)
      const deadline0 = Date.now() + 180_000;
      const attemptedEverything = () =>
        new Set(receiver.requests.map((request) => request.headers['webhook-id'])).size >= MESSAGES &&
        new Set(sendgrid.requests.map(recipientOf)).size >= MEMBERS;
      while (!attemptedEverything() && Date.now() < deadline0) await new Promise((resolve) => setTimeout(resolve, 100));
      const firstOutput = stack.output();
      await killHard(stack, dynamodbPort);
      const beforeRestart = new Set(receiver.requests.map((request) => String(request.headers['webhook-id'])));

      const emailedBeforeRestart = emailed().length;

      up = true;
      stack = await start(dataDir, dynamodbPort, sendgrid.url);
      const deadline = Date.now() + 240_000;
      while ((accepted.size < MESSAGES || new Set(emailed()).size < MEMBERS) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 250));
      // Anything sent twice would arrive moments after the first copy.
      await new Promise((resolve) => setTimeout(resolve, 2000));

      if (accepted.size < MESSAGES) {
        const listed = await post(
          stack.baseUrl,
          '/v2/workspace/advancedwebhook/messages/get',
          { pageSize: 250 },
          headers,
        );
        const queued = readdirSync(join(dataDir, 'queue'));
        const dead = existsSync(join(dataDir, 'queue', 'dead-letter'))
          ? readdirSync(join(dataDir, 'queue', 'dead-letter')).length
          : 0;
        const pending = (listed.body.result?.data ?? []).filter((m: { id: string }) => !accepted.has(m.id));
        const activities = await post(
          stack.baseUrl,
          '/v2/activities/get',
          { organizationId: 'org', pageSize: 1000 },
          headers,
        );
        console.log(
          JSON.stringify(
            {
              activities: activities.body.result?.data?.length,
              listed: listed.body.result?.data?.length,
              queued: queued.length,
              dead,
              pending: pending.slice(0, 3),
            },
            null,
            1,
          ),
          firstOutput,
          stack.output(),
        );
      }
      expect(beforeRestart.size).toBeGreaterThan(0);
      expect(accepted.size).toBe(MESSAGES);
      const sample = [...accepted.values()].slice(-1)[0];
      expect(new Webhook(secret).verify(sample.body, sample.headers as Record<string, string>)).toMatchObject({
        type: 'comment.add',
      });
      expect(emailedBeforeRestart).toBe(0);
      expect(emailed().sort()).toEqual(members.map((member) => member.email).sort());
    } finally {
      await receiverToClose?.close();
      await sendgrid.close();
    }
  }, 420_000);
});
