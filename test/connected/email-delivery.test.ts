/**
 * Notification emails end to end inside one process (docs/decisions.md §12): Add Notification writes, the stream
 * poller wakes the events worker, which plans the emails, the file queue feeds the delivery worker, which sends
 * through a fake SendGrid on 127.0.0.1 (`sendgrid` type) or into a local mailbox folder (`default` type). The retry
 * schedule runs compressed as in webhook-delivery.test.ts.
 *
 * The fake's address must be in SENDGRID_BASE_URL before the service's configuration loads, so the service is loaded
 * afresh in beforeAll, after the fake listens, and the grant check installed on that copy.
 *
 * @table-stream
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import type { StoredEmail } from '../../shared/db/email-log';
import type { Tenant } from '../support/fixtures';
import type { Credentials, Invocation } from '../support/invoke';
import type { Pipeline } from '../support/webhook-pipeline';
import { startFakeSendgrid, type FakeSendgrid } from '../support/fake-sendgrid';
import { eventually } from '../support/wait';

let fake: FakeSendgrid;
let pipeline: Pipeline;
let mailboxDir: string;
let call: (path: string, data: unknown, as?: Credentials) => Promise<Invocation>;
let newTenant: () => Promise<Tenant>;
let siblingKey: (tenant: Tenant) => Promise<Record<string, string>>;
let queryEmails: (apiKeyId: string) => Promise<StoredEmail[]>;
let tenant: Tenant;
let takeViolations: () => string[] = () => [];

beforeAll(async () => {
  fake = await startFakeSendgrid();
  process.env.SENDGRID_BASE_URL = fake.url;
  mailboxDir = String(process.env.EMAIL_MAILBOX_DIR);
  // The setup files loaded the service before SENDGRID_BASE_URL named the fake: load it afresh, under the grant check.
  jest.resetModules();
  const grantCheck = await import('../../local/grant-check');
  const { kmsClient } = await import('../../shared/crypto/encryption');
  const client = await import('../../shared/db/client');
  grantCheck.installGrantCheck({ dynamodb: client.dynamodb, kms: kmsClient(), table: client.TABLE_NAME });
  takeViolations = () => grantCheck.takeViolations().map(grantCheck.describeViolation);
  const fixtures = await import('../support/fixtures');
  const invoke = await import('../support/invoke');
  const emailLog = await import('../../shared/db/email-log');
  const { startPipeline } = await import('../support/webhook-pipeline');
  newTenant = () => fixtures.newTenant();
  siblingKey = fixtures.siblingKey;
  call = invoke.routeCaller(() => tenant);
  queryEmails = async (apiKeyId) => (await emailLog.queryEmails(apiKeyId, {}, { size: 100 })).items;
  pipeline = await startPipeline();
});
afterEach(() => {
  const violations = takeViolations();
  if (violations.length > 0) throw new Error([...new Set(violations)].join('\n'));
});
afterAll(async () => {
  await pipeline.stop();
  await fake.close();
});
beforeEach(async () => {
  tenant = await newTenant();
  fake.answer(() => 202);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ORG = 'acme';
const DOC = 'roadmap';
const requestsOf = (key: string) => fake.requests.filter((request) => request.apiKey === key);

async function ok(path: string, data: unknown, as?: Credentials): Promise<Invocation> {
  const response = await call(path, data, as);
  if (response.statusCode !== 200) throw new Error(`${path}: ${JSON.stringify(response.body)}`);
  return response;
}

/** Email on through SendGrid (or `type`), the organization with ann (the actor), bob, cy and dee, and a document. */
async function setUp(
  options: {
    type?: 'sendgrid' | 'default';
    key?: string;
    triggers?: Record<string, boolean>;
    fromEmail?: string | null;
  } = {},
): Promise<string> {
  const key = options.key ?? `SG.test-${tenant.apiKeyId}`;
  await ok('/v2/workspace/emailconfig/update', {
    useEmailService: true,
    emailServiceConfig: {
      type: options.type ?? 'sendgrid',
      apiKey: key,
      ...(options.fromEmail === null ? {} : { fromEmail: options.fromEmail ?? 'notify@acme.example' }),
      fromCompany: 'Acme',
      ...(options.triggers === undefined ? {} : { triggers: options.triggers }),
    },
  });
  await ok('/v2/users/add', {
    organizationId: ORG,
    createOrganization: true,
    users: [
      { userId: 'ann', name: 'Ann', email: 'ann@acme.example' },
      { userId: 'bob', name: 'Bob', email: 'bob@acme.example' },
      { userId: 'cy', name: 'Cy', email: 'cy@acme.example' },
      { userId: 'dee', name: 'Dee', email: 'dee@acme.example' },
    ],
  });
  await ok('/v2/organizations/documents/add', {
    organizationId: ORG,
    documents: [{ documentId: DOC, documentName: 'Roadmap' }],
  });
  await ok('/v2/notifications/config/set', { organizationId: ORG, userIds: ['bob'], config: { email: 'NONE' } });
  await ok('/v2/notifications/config/set', {
    organizationId: ORG,
    userIds: ['cy'],
    documentIds: [DOC],
    config: { email: 'MINE' },
  });
  return key;
}

const INJECTION = '<img src=x onerror="alert(1)">';

async function notify(extra: Record<string, unknown> = {}): Promise<string> {
  const added = await ok('/v2/notifications/add', {
    organizationId: ORG,
    documentId: DOC,
    actionUser: { userId: 'ann', name: 'Ann' },
    displayHeadlineMessageTemplate: '{{actionUser.name}} mentioned you in {{doc}}',
    displayHeadlineMessageTemplateData: { actionUser: { name: 'Ann' }, doc: `Roadmap ${INJECTION}` },
    displayBodyMessage: 'Please look at <b>Q3</b>.',
    notifyAll: true,
    ...extra,
  });
  return added.body.result?.data.notificationId as string;
}

const byUser = (emails: StoredEmail[]) => Object.fromEntries(emails.map((email) => [email.userId, email]));

describe('notification emails', () => {
  it('emails one of three recipients through SendGrid (NONE skipped, MINE reached only through notifyAll skipped, ALL sent), rendered and escaped', async () => {
    const key = await setUp();

    await notify();
    const emails = await eventually(
      () => queryEmails(tenant.apiKeyId),
      (list) => list.length === 3 && list.every((email) => email.status !== 'pending'),
    );

    const sent = requestsOf(key);
    expect(sent).toHaveLength(1);
    const body = sent[0].body;
    expect(body?.personalizations[0].to).toEqual([{ email: 'dee@acme.example' }]);
    expect(body?.from).toEqual({ email: 'notify@acme.example', name: 'Acme' });
    expect(body?.subject).toBe(`Ann mentioned you in Roadmap ${INJECTION}`);
    const html = String(body?.content.find((part) => part.type === 'text/html')?.value);
    expect(html).toContain('Roadmap &lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).not.toContain('<img');
    expect(html).toContain('Please look at &lt;b&gt;Q3&lt;/b&gt;.');
    expect(byUser(emails)).toEqual({
      bob: expect.objectContaining({
        status: 'skipped',
        reason: "The recipient's email level is NONE.",
        to: 'bob@acme.example',
      }),
      cy: expect.objectContaining({
        status: 'skipped',
        reason: expect.stringContaining('MINE'),
        to: 'cy@acme.example',
      }),
      dee: expect.objectContaining({
        status: 'sent',
        to: 'dee@acme.example',
        attempts: 1,
        transport: 'sendgrid',
        subject: `Ann mentioned you in Roadmap ${INJECTION}`,
      }),
    });
  });

  it('emails a MINE recipient named in notifyUsers, and never the acting user', async () => {
    const key = await setUp();

    await notify({ notifyAll: false, notifyUsers: [{ userId: 'cy' }, { userId: 'ann' }] });
    const emails = await eventually(
      () => queryEmails(tenant.apiKeyId),
      (list) => list.length === 2 && list.every((email) => email.status !== 'pending'),
    );

    expect(requestsOf(key).map((request) => request.body?.personalizations[0].to[0].email)).toEqual([
      'cy@acme.example',
    ]);
    expect(byUser(emails).ann).toMatchObject({ status: 'skipped', reason: 'The recipient is the acting user.' });
  });

  it('writes each email into the local mailbox as an .eml file a mail program reads, with the HTML escaped', async () => {
    await setUp({ type: 'default' });

    await notify();
    const emails = await eventually(
      () => queryEmails(tenant.apiKeyId),
      (list) => list.some((email) => email.status === 'sent'),
    );

    const sent = emails.find((email) => email.status === 'sent');
    expect(sent).toMatchObject({ userId: 'dee', transport: 'mailbox' });
    const files = readdirSync(mailboxDir).filter((name) => name.includes(String(sent?.id)));
    expect(files).toHaveLength(1);
    const parsed = await simpleParser(readFileSync(join(mailboxDir, files[0])));
    expect(parsed.subject).toBe(`Ann mentioned you in Roadmap ${INJECTION}`);
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.text : '').toBe('dee@acme.example');
    expect(parsed.from?.value).toEqual([{ name: 'Acme', address: 'notify@acme.example' }]);
    expect(String(parsed.html)).not.toContain('<img');
    expect(parsed.text).toContain('Please look at <b>Q3</b>.');
  });

  it("sends nothing when the trigger of the notification's eventType is off, and logs every recipient skipped with the reason", async () => {
    const key = await setUp({ triggers: { 'comment.add': false } });

    await notify({ eventType: 'comment.add' });
    const emails = await eventually(
      () => queryEmails(tenant.apiKeyId),
      (list) => list.length === 3,
    );
    await sleep(300);

    expect(requestsOf(key)).toEqual([]);
    expect(emails.map((email) => [email.status, email.reason])).toEqual(
      Array(3).fill(['skipped', 'The email trigger for comment.add is off.']),
    );
  });

  it('sends for an eventType whose trigger is on', async () => {
    const key = await setUp({ triggers: { 'comment.add': true } });

    await notify({ eventType: 'comment.add' });
    await eventually(
      async () => requestsOf(key),
      (list) => list.length === 1,
    );
  });

  it('queues and logs nothing while the email service is off', async () => {
    const key = await setUp();
    await ok('/v2/workspace/emailconfig/update', { useEmailService: false });

    await notify();
    await sleep(1500);

    expect(requestsOf(key)).toEqual([]);
    expect(await queryEmails(tenant.apiKeyId)).toEqual([]);
  });

  it('logs "no fromEmail" and sends nothing when the configuration has none', async () => {
    const key = await setUp({ fromEmail: null });

    await notify({ notifyAll: false, notifyUsers: [{ userId: 'dee' }] });
    const emails = await eventually(
      () => queryEmails(tenant.apiKeyId),
      (list) => list.length === 1,
    );

    expect(emails[0]).toMatchObject({ status: 'skipped', reason: 'The email configuration has no fromEmail.' });
    expect(requestsOf(key)).toEqual([]);
  });

  it('retries a 429 on the schedule: two attempts, one email', async () => {
    const key = await setUp();
    let answered = 0;
    fake.answer((request) => (request.apiKey === key && (answered += 1) === 1 ? 429 : 202));

    await notify({ notifyAll: false, notifyUsers: [{ userId: 'dee' }] });
    const emails = await eventually(
      () => queryEmails(tenant.apiKeyId),
      (list) => list[0]?.status === 'sent',
    );

    expect(requestsOf(key)).toHaveLength(2);
    expect(emails[0]).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it("fails a 400 at once with SendGrid's reason and without the key", async () => {
    const key = await setUp();
    fake.answer((request) =>
      request.apiKey === key
        ? { status: 400, errors: [`The from address does not match a verified Sender Identity (key ${key}).`] }
        : 202,
    );

    await notify({ notifyAll: false, notifyUsers: [{ userId: 'dee' }] });
    const emails = await eventually(
      () => queryEmails(tenant.apiKeyId),
      (list) => list[0]?.status === 'failed',
    );
    await sleep(1200);

    expect(requestsOf(key)).toHaveLength(1);
    expect(emails[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      reason: expect.stringContaining('does not match a verified Sender Identity'),
    });
    expect(emails[0].reason).not.toContain(key);
  });

  it('emails only the new recipients when a notification is re-added, and nothing on an update', async () => {
    const key = await setUp();
    const notificationId = await notify({ notifyAll: false, notifyUsers: [{ userId: 'dee' }] });
    await eventually(
      async () => requestsOf(key),
      (list) => list.length === 1,
    );

    await notify({ notificationId, notifyAll: false, notifyUsers: [{ userId: 'dee' }, { userId: 'cy' }] });
    await eventually(
      async () => requestsOf(key),
      (list) => list.length === 2,
    );
    await ok('/v2/notifications/update', {
      organizationId: ORG,
      documentId: DOC,
      notifications: [{ id: notificationId, readByUserIds: ['dee'] }],
    });
    await sleep(1000);

    expect(requestsOf(key).map((request) => request.body?.personalizations[0].to[0].email)).toEqual([
      'dee@acme.example',
      'cy@acme.example',
    ]);
  });

  it("keeps API keys apart: one key's emails are not in another's log, of the same workspace or another", async () => {
    const key = await setUp();
    await notify({ notifyAll: false, notifyUsers: [{ userId: 'dee' }] });
    await eventually(
      async () => requestsOf(key),
      (list) => list.length === 1,
    );
    const sibling = await siblingKey(tenant);
    const other = await newTenant();

    expect(await queryEmails(sibling['x-service-api-key'])).toEqual([]);
    expect(await queryEmails(other.apiKeyId)).toEqual([]);
    expect(await queryEmails(tenant.apiKeyId)).toHaveLength(1);
  });
});

describe('planning emails', () => {
  it('makes one email per notification and recipient however often the notification is seen', async () => {
    const key = await setUp();
    const { planEmails } = await import('../../shared/domain/email/plan');
    const { getEmailConfig } = await import('../../shared/db/email-config');
    const { getNotification } = await import('../../shared/db/notification');
    const notificationId = await notify({ notifyAll: false, notifyUsers: [{ userId: 'dee' }] });
    await eventually(
      async () => requestsOf(key),
      (list) => list.length === 1,
    );
    const notification = await getNotification(tenant.apiKeyId, ORG, notificationId);
    const stored = await getEmailConfig(tenant.apiKeyId);
    const queued: string[] = [];
    const capture = {
      send: async (jobs: ReadonlyArray<{ body: string }>) => void queued.push(...jobs.map((job) => job.body)),
    };
    if (notification === undefined || stored === undefined) throw new Error('set-up missing');

    await planEmails({ apiKeyId: tenant.apiKeyId, notification }, stored.config, capture);
    await planEmails({ apiKeyId: tenant.apiKeyId, notification }, stored.config, capture);

    expect(queued).toEqual([]);
    expect(await queryEmails(tenant.apiKeyId)).toHaveLength(1);
    expect(requestsOf(key)).toHaveLength(1);
  });
});

describe('sending an email', () => {
  it('sends once when one job is handed out twice at the same time', async () => {
    const key = await setUp();
    // A notification with no recipient (nothing planned), and its email written here, so no job of the pipeline's
    // own runs beside the two copies below.
    const notificationId = await notify({ notifyAll: false });
    const { createEmails } = await import('../../shared/db/email-log');
    const { runEmailJob } = await import('../../shared/domain/email/send');
    const { decryptSecret } = await import('../../shared/crypto/encryption');
    const emailId = `eml_TESTTWICE${tenant.apiKeyId.slice(-8).toUpperCase()}`;
    await createEmails(tenant.apiKeyId, [
      {
        id: emailId,
        notificationId,
        organizationId: ORG,
        userId: 'dee',
        to: 'dee@acme.example',
        subject: 'News',
        status: 'pending',
        transport: 'sendgrid',
        attempts: 0,
        timestamp: Date.now(),
      },
    ]);
    const job = { kind: 'email' as const, apiKeyId: tenant.apiKeyId, emailId, attempt: 1, dueAt: 0 };
    const deps = { queue: { send: async () => undefined }, decrypt: decryptSecret };

    await Promise.all([runEmailJob(job, deps), runEmailJob(job, deps)]);

    expect(requestsOf(key)).toHaveLength(1);
    expect((await queryEmails(tenant.apiKeyId))[0]).toMatchObject({ id: emailId, status: 'sent', attempts: 1 });
  });
});
