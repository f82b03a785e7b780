/**
 * The content of a notification email (shared/domain/email/render.ts): the headline template rendered into the
 * subject and the body, every value escaped in the HTML and left as written in the text, and nothing in the data
 * able to reach a header.
 */
import { simpleParser } from 'mailparser';
import { composeMessage } from '../../shared/adapters/email/email-message';
import {
  FALLBACK_SUBJECT,
  renderNotificationEmail,
  renderTemplate,
  SUBJECT_MAX_CHARS,
  type NotificationEmailInput,
} from '../../shared/domain/email/render';

const INPUT: NotificationEmailInput = {
  id: 'eml_01RENDERTEST',
  headlineTemplate: '{{actionUser.name}} mentioned you in {{document}}',
  templateData: { actionUser: { userId: 'ann', name: 'Ann Lee' }, document: 'Roadmap 2026' },
  bodyMessage: 'Can you review the Q3 milestones?',
  fromEmail: 'notify@acme.example',
  fromCompany: 'Acme',
  to: { address: 'bob@example.org', name: 'Bob' },
};

describe('renderTemplate', () => {
  it('fills plain and dotted placeholders, with spaces inside the braces allowed', () => {
    expect(
      renderTemplate('{{ actionUser.name }} / {{document}} / {{a.b.c}}', {
        actionUser: { name: 'Ann' },
        document: 'Doc',
        a: { b: { c: 'deep' } },
      }),
    ).toBe('Ann / Doc / deep');
  });

  it('renders a missing value, null, and a path through a non-object as empty', () => {
    expect(
      renderTemplate('[{{missing}}][{{gone.name}}][{{nothing}}][{{text.length}}]', { nothing: null, text: 'abc' }),
    ).toBe('[][][][]');
  });

  it('renders an object as its name (a user object), and as empty when it has none', () => {
    expect(
      renderTemplate('{{actionUser}} / {{document}}', {
        actionUser: { userId: 'ann', name: 'Ann Lee' },
        document: { id: 'd1' },
      }),
    ).toBe('Ann Lee / ');
  });

  it('renders numbers and booleans as text, and arrays and non-finite numbers as empty', () => {
    expect(
      renderTemplate('{{n}} {{b}} [{{list}}] [{{inf}}]', {
        n: 3,
        b: true,
        list: ['a', 'b'],
        inf: Number.POSITIVE_INFINITY,
      }),
    ).toBe('3 true [] []');
  });

  it('finds nothing among inherited properties', () => {
    expect(
      renderTemplate('[{{constructor}}][{{toString}}][{{__proto__}}][{{user.constructor.name}}]', { user: {} }),
    ).toBe('[][][][]');
  });

  it('leaves text that is not a placeholder as written', () => {
    expect(renderTemplate('{{}} {{ two words }} {single} {{a..b}}', { a: 'x' })).toBe(
      '{{}} {{ two words }} {single} {{a..b}}',
    );
  });

  it('does not render placeholders that a value brings in', () => {
    expect(renderTemplate('{{a}}', { a: '{{b}}', b: 'no' })).toBe('{{b}}');
  });
});

describe('renderNotificationEmail', () => {
  it('makes the subject from the headline template, From from the company and address, and both bodies', () => {
    const email = renderNotificationEmail(INPUT);

    expect(email.id).toBe('eml_01RENDERTEST');
    expect(email.subject).toBe('Ann Lee mentioned you in Roadmap 2026');
    expect(email.from).toEqual({ address: 'notify@acme.example', name: 'Acme' });
    expect(email.to).toEqual({ address: 'bob@example.org', name: 'Bob' });
    expect(email.text).toBe('Ann Lee mentioned you in Roadmap 2026\n\nCan you review the Q3 milestones?\n');
    expect(email.html).toContain('>Ann Lee mentioned you in Roadmap 2026</p>');
    expect(email.html).toContain('>Can you review the Q3 milestones?</p>');
  });

  it('sends from the bare address when no company is set', () => {
    expect(renderNotificationEmail({ ...INPUT, fromCompany: undefined }).from).toEqual({
      address: 'notify@acme.example',
    });
    expect(renderNotificationEmail({ ...INPUT, fromCompany: '  ' }).from).toEqual({ address: 'notify@acme.example' });
  });

  it('escapes markup from the data and the template in the HTML, and keeps it as written in the text', () => {
    const attack = {
      ...INPUT,
      headlineTemplate: '<b>{{actionUser.name}}</b> mentioned you',
      templateData: { actionUser: { name: `<script>alert("x")</script><img src=x onerror='alert(1)'>` } },
      bodyMessage: `Tom & Jerry's <a href="javascript:alert(1)">link</a>`,
    };

    const email = renderNotificationEmail(attack);

    expect(email.html).not.toMatch(/<script|<img|<a |<b>/);
    expect(email.html).toContain(
      '&lt;b&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;alert(1)&#39;&gt;&lt;/b&gt; mentioned you',
    );
    expect(email.html).toContain('Tom &amp; Jerry&#39;s &lt;a href=&quot;javascript:alert(1)&quot;&gt;link&lt;/a&gt;');
    expect(email.text).toBe(
      `<b><script>alert("x")</script><img src=x onerror='alert(1)'></b> mentioned you\n\nTom & Jerry's <a href="javascript:alert(1)">link</a>\n`,
    );
  });

  it('keeps line breaks in the data out of the subject, so it cannot add a header', async () => {
    const email = renderNotificationEmail({
      ...INPUT,
      templateData: { actionUser: { name: 'Ann\r\nBcc: victim@example.com\r\n' }, document: 'Doc\n\nbody' },
    });

    expect(email.subject).toBe('Ann Bcc: victim@example.com mentioned you in Doc body');
    const parsed = await simpleParser(await composeMessage(email));
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.subject).toBe(email.subject);
  });

  it('cuts a long subject with an ellipsis, and falls back when the headline renders empty', () => {
    const long = renderNotificationEmail({ ...INPUT, headlineTemplate: 'x'.repeat(500) });
    const empty = renderNotificationEmail({ ...INPUT, headlineTemplate: '{{missing}}' });

    expect([...long.subject]).toHaveLength(SUBJECT_MAX_CHARS);
    expect(long.subject.endsWith('…')).toBe(true);
    expect(empty.subject).toBe(FALLBACK_SUBJECT);
    expect(empty.text).toBe(`${FALLBACK_SUBJECT}\n\nCan you review the Q3 milestones?\n`);
  });

  it('keeps the body message on several lines: <br> in the HTML, line breaks in the text', () => {
    const email = renderNotificationEmail({ ...INPUT, bodyMessage: 'first\r\nsecond' });

    expect(email.html).toContain('first<br>\nsecond');
    expect(email.text).toBe('Ann Lee mentioned you in Roadmap 2026\n\nfirst\nsecond\n');
  });

  it('has only the headline when there is no body message', () => {
    const email = renderNotificationEmail({ ...INPUT, bodyMessage: undefined });

    expect(email.text).toBe('Ann Lee mentioned you in Roadmap 2026\n');
    expect(email.html.match(/<p /g)).toHaveLength(1);
  });
});
