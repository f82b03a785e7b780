/**
 * Issue 15: notification emails on the local stack (stream poller → events worker plans → file queue → delivery
 * worker → the local mailbox). One notification with `notifyAll` to an organization of 1,000 members, each with an
 * address and the default level: the time from Add Notification's answer until the last of the 1,000 `.eml` files is
 * in the mailbox, and the capacity the pipeline consumed per email (the request's own feed writes left out).
 */
import { readdirSync } from 'node:fs';
import { startBenchStack } from './harness';

const MEMBERS = 1000;
const USERS_PER_REQUEST = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function run(): Promise<void> {
  // Set by bench/run.ts before any suite loads the service's configuration.
  const mailbox = String(process.env.EMAIL_MAILBOX_DIR);
  const bench = await startBenchStack();
  try {
    const { headers } = await bench.newApiKey();
    const ok = async (path: string, data: unknown) => {
      const response = await bench.post(path, data, headers);
      if (response.status !== 200) throw new Error(`${path}: ${JSON.stringify(response.body)}`);
      return response.body;
    };
    await ok('/v2/workspace/emailconfig/update', {
      useEmailService: true,
      emailServiceConfig: { type: 'default', fromEmail: 'notify@bench.example', fromCompany: 'Bench' },
    });
    for (let first = 0; first < MEMBERS; first += USERS_PER_REQUEST) {
      const users = Array.from({ length: USERS_PER_REQUEST }, (_, i) => ({
        userId: `u${first + i}`,
        name: `User ${first + i}`,
        email: `u${first + i}@bench.example`,
      }));
      await ok('/v2/users/add', { organizationId: 'bench-org', createOrganization: true, users });
    }
    await ok('/v2/organizations/documents/add', { organizationId: 'bench-org', documents: [{ documentId: 'doc' }] });
    await sleep(2000);

    const emails = () => readdirSync(mailbox).filter((name) => name.endsWith('.eml')).length;
    let answered = 0;
    const { capacity: requestOnly } = await bench.meter.measure(async () => {
      await ok('/v2/notifications/add', {
        organizationId: 'bench-org',
        documentId: 'doc',
        actionUser: { userId: 'author', name: 'Author' },
        displayHeadlineMessageTemplate: '{{actionUser.name}} posted in {{doc}}',
        displayHeadlineMessageTemplateData: { actionUser: { name: 'Author' }, doc: 'the roadmap' },
        displayBodyMessage: 'A new milestone was added.',
        notifyAll: true,
      });
      answered = Date.now();
    });
    const { capacity: pipeline } = await bench.meter.measure(async () => {
      while (emails() < MEMBERS) {
        if (Date.now() - answered > 300_000) throw new Error(`Only ${emails()} of ${MEMBERS} emails after 5 minutes.`);
        await sleep(20);
      }
    });
    const lastAt = Date.now();
    // The last outcomes are recorded just after their files are written.
    const { capacity: tail } = await bench.meter.measure(() => sleep(1500));

    const seconds = (lastAt - answered) / 1000;
    const rows: Array<[string, string, string]> = [
      [
        `notifyAll to ${MEMBERS} members: Add Notification's answer to the last email in the mailbox`,
        `${seconds.toFixed(1)} s`,
        '',
      ],
      ['emails per second', (MEMBERS / seconds).toFixed(0), ''],
      ['read capacity per email (planning and sending)', ((pipeline.read + tail.read) / MEMBERS).toFixed(2), ''],
      [
        'write capacity per email (log item with its 3 index entries, claim, outcome)',
        ((pipeline.write + tail.write) / MEMBERS).toFixed(2),
        '',
      ],
      [`Add Notification itself (1,000 feed entries, the notification)`, `${requestOnly.write.toFixed(0)} WCU`, ''],
    ];
    console.log(
      `\nNotification emails on the local stack (DynamoDB Local; time on this machine, capacity as DynamoDB bills it)\n`,
    );
    console.log('| measure | value | target |');
    console.log('|---|---:|---:|');
    for (const [name, value, target] of rows) console.log(`| ${name} | ${value} | ${target} |`);
  } finally {
    await bench.stack.stop();
  }
}
