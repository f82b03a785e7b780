/**
 * Content in readable formats (decisions §15) through the handlers and the real middleware against DynamoDB Local:
 * Get CRDT Data in prosemirror-json, html, markdown, text and delta; Add and Update with format + content, the
 * update as y-prosemirror's diff (unchanged blocks keep their Yjs items), relayed to live connections and raising
 * webhooks like any update; bad input and tenancy.
 *
 * @table-stream
 */
import MarkdownIt from 'markdown-it';
import * as Y from 'yjs';
import { handler as addCrdt } from '../../functions/crdt/add';
import { handler as getCrdt } from '../../functions/crdt/get';
import { handler as updateCrdt } from '../../functions/crdt/update';
import { handler as authorizeHandler } from '../../functions/crdt/live-authorize';
import { handler as addDocuments } from '../../functions/documents/add';
import { handler as addUsers } from '../../functions/users/add';
import { handler as createEndpoint } from '../../functions/workspace/advancedwebhook-endpoints-create';
import { handler as updateWebhookConfig } from '../../functions/workspace/advancedwebhookconfig-update';
import { getEditor } from '../../shared/db/crdt';
import { readMessage } from '../../shared/domain/live/protocol';
import { editorState } from '../../shared/domain/crdt/yjs-state';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { uniqueId } from '../support/ids';
import { endpoint, invoke } from '../support/invoke';
import { bytesTo, callSocket } from '../support/live-harness';
import { startPipeline, startReceiver } from '../support/webhook-pipeline';
import { waitFor } from '../support/wait';

type Headers = Record<string, string>;
const add = endpoint(addCrdt, '/v2/crdt/add');
const get = endpoint(getCrdt, '/v2/crdt/get');
const update = endpoint(updateCrdt, '/v2/crdt/update');

const paragraph = (text: string) => ({ type: 'paragraph', content: [{ type: 'text', text }] });
/** A document as ProseMirror's toJSON writes it (every attribute, defaults included): what a read gives back. */
const DOC = {
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Plan' }] },
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Ship ' },
        { type: 'text', marks: [{ type: 'bold' }], text: 'formats' },
        { type: 'text', text: ', see ' },
        {
          type: 'text',
          marks: [
            {
              type: 'link',
              attrs: {
                href: 'https://example.com/a',
                target: '_blank',
                rel: 'noopener noreferrer nofollow',
                class: null,
              },
            },
          ],
          text: 'notes',
        },
        { type: 'hardBreak' },
        { type: 'text', marks: [{ type: 'underline' }, { type: 'italic' }].reverse(), text: 'soon' },
      ],
    },
    {
      type: 'bulletList',
      content: [
        { type: 'listItem', content: [paragraph('one')] },
        { type: 'listItem', content: [paragraph('two')] },
      ],
    },
    { type: 'codeBlock', attrs: { language: 'ts' }, content: [{ type: 'text', text: 'const a = 1;' }] },
    {
      type: 'table',
      content: [
        {
          type: 'tableRow',
          content: [
            { type: 'tableHeader', attrs: { colspan: 1, rowspan: 1, colwidth: null }, content: [paragraph('k')] },
          ],
        },
        {
          type: 'tableRow',
          content: [
            { type: 'tableCell', attrs: { colspan: 1, rowspan: 1, colwidth: null }, content: [paragraph('v')] },
          ],
        },
      ],
    },
  ],
};

const MARKDOWN =
  '# Notes\n\nSome **bold**, *italic*, ~~struck~~ and `code`.\n\n- a\n- b\n\n1. first\n2. second\n\n> quoted\n\n```js\nlet x = 1;\n```\n\n---\n\n| name | value |\n| --- | --- |\n| a | 1 |\n';
/** In the serializer's own attribute order (linkedom writes an element's attributes last set first). */
const HTML =
  '<h1>Title</h1><p>Hello <strong>bold</strong> <em>it</em> <s>gone</s> <u>under</u> <code>c</code></p><ol start="3"><li><p>three</p></li></ol><blockquote><p>q</p></blockquote><hr><img alt="pic" src="https://example.com/i.png">';

const markdownIt = new MarkdownIt();

describe('CRDT content in readable formats', () => {
  let tenant: Tenant;
  let h: Headers;
  let organizationId: string;
  let documentId: string;

  beforeAll(async () => {
    tenant = await newTenant();
    h = tenant.apiKeyHeaders;
  });

  beforeEach(() => {
    organizationId = uniqueId('org');
    documentId = uniqueId('doc');
  });

  const ids = (editorId = 'body') => ({ organizationId, documentId, editorId });
  const read = async (format: string, editorId = 'body', who: Headers = h) => {
    const answer = await get(who, { ...ids(editorId), format });
    expect(answer.statusCode).toBe(200);
    return answer.body.result?.data[0]?.data;
  };
  const storedState = async () => {
    const editor = await getEditor(tenant.apiKeyId, ids());
    return editor === undefined ? undefined : Buffer.from(editorState(editor)).toString('base64');
  };

  describe('add and read back', () => {
    it('stores ProseMirror JSON as the XmlFragment y-prosemirror writes and reads it back the same', async () => {
      const added = await add(h, { ...ids(), type: 'xml', format: 'prosemirror-json', content: DOC });

      expect(added.body.result).toEqual({ status: 'success', message: 'CRDT data added successfully.' });
      expect(await read('prosemirror-json')).toEqual(DOC);
      expect(await read('json')).toContain('<heading level="2">Plan</heading>');
      expect(await read('text')).toBe('Plan\n\nShip formats, see notes\nsoon\n\none\n\ntwo\n\nconst a = 1;\n\nk\n\nv');
    });

    it('reads the document as HTML and Markdown with StarterKit elements', async () => {
      await add(h, { ...ids(), type: 'xml', format: 'prosemirror-json', content: DOC });

      const html = await read('html');
      const markdown = await read('markdown');

      expect(html).toContain('<h2>Plan</h2><p>Ship <strong>formats</strong>, see <a');
      expect(html).toContain('<br><em><u>soon</u></em></p><ul><li><p>one</p></li>');
      expect(html).toContain(
        '<pre><code class="language-ts">const a = 1;</code></pre><table><tbody><tr><th><p>k</p></th></tr>',
      );
      expect(markdown).toBe(
        '## Plan\n\nShip **formats**, see [notes](https://example.com/a)\\\n*soon*\n\n- one\n- two\n\n```ts\nconst a = 1;\n```\n\n| k |\n| --- |\n| v |\n',
      );
    });

    it('takes Markdown (GFM tables, strikethrough) and reads it back with the same CommonMark rendering', async () => {
      await add(h, { ...ids(), type: 'xml', format: 'markdown', content: MARKDOWN });

      const markdown = await read('markdown');

      expect(markdownIt.render(markdown)).toBe(markdownIt.render(MARKDOWN));
      expect(await read('html')).toContain('<s>struck</s>');
    });

    it('takes HTML and reads it back the same', async () => {
      await add(h, { ...ids(), type: 'xml', format: 'html', content: HTML });

      expect(await read('html')).toBe(HTML);
      expect(await read('prosemirror-json')).toMatchObject({
        content: expect.arrayContaining([{ type: 'orderedList', attrs: { start: 3 }, content: expect.any(Array) }]),
      });
    });

    it('keeps nodes and marks beyond StarterKit: HTML as elements of their name with data- attributes, Markdown and text their text', async () => {
      const client = new Y.Doc();
      const p = new Y.XmlElement('paragraph');
      const text = new Y.XmlText();
      text.insert(0, 'hi ', { highlight: { color: 'red' } });
      const mention = new Y.XmlElement('mention');
      mention.setAttribute('id', 'u1');
      mention.setAttribute('label', 'Ann');
      p.insert(0, [text, mention]);
      client.getXmlFragment('content').insert(0, [p]);
      await add(h, { ...ids(), type: 'xml', data: '' });
      await update(h, { ...ids(), yjsUpdate: Buffer.from(Y.encodeStateAsUpdate(client)).toString('base64') });

      expect(await read('html')).toBe(
        '<p><highlight data-color="red">hi </highlight><mention data-label="Ann" data-id="u1"></mention></p>',
      );
      expect(await read('markdown')).toBe('hi Ann');
      expect(await read('text')).toBe('hi Ann');
      expect(await read('prosemirror-json')).toEqual({
        type: 'doc',
        content: [
          {
            type: 'paragraph',
            content: [
              { type: 'text', marks: [{ type: 'highlight', attrs: { color: 'red' } }], text: 'hi ' },
              { type: 'mention', attrs: { id: 'u1', label: 'Ann' } },
            ],
          },
        ],
      });
    });

    it('reads a text editor as its delta with formatting attributes', async () => {
      await add(h, { ...ids(), type: 'text', data: '' });
      const client = new Y.Doc();
      client.getText('content').insert(0, 'plain ');
      client.getText('content').insert(6, 'bold', { bold: true });
      await update(h, { ...ids(), yjsUpdate: Buffer.from(Y.encodeStateAsUpdate(client)).toString('base64') });

      expect(await read('delta')).toEqual([{ insert: 'plain ' }, { insert: 'bold', attributes: { bold: true } }]);
      expect(await read('json')).toBe('plain bold');
    });

    it('keeps the json and yjs formats as they were', async () => {
      await add(h, { ...ids(), type: 'xml', format: 'markdown', content: 'Hello' });

      const yjs = await get(h, { ...ids(), format: 'yjs' });

      expect(yjs.body.result?.data[0]).toMatchObject({
        data: '<paragraph>Hello</paragraph>',
        type: 'xml',
        contentKey: 'content',
        state: expect.any(String),
      });
    });
  });

  describe('update', () => {
    it('changes only what differs: a caret in an unchanged paragraph stays where it was, a concurrent edit elsewhere survives', async () => {
      const first = { type: 'doc', content: [paragraph('alpha'), paragraph('beta'), paragraph('gamma')] };
      await add(h, { ...ids(), type: 'xml', format: 'prosemirror-json', content: first });
      // A client loads the document, puts a caret after "gam" in the third paragraph and types in the first.
      const client = new Y.Doc();
      Y.applyUpdate(
        client,
        Buffer.from((await get(h, { ...ids(), format: 'yjs' })).body.result?.data[0].state, 'base64'),
      );
      const fragment = client.getXmlFragment('content');
      const third = (fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText;
      const caret = Y.createRelativePositionFromTypeIndex(third, 3);
      ((fragment.get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(5, '!');
      const concurrent = Y.encodeStateAsUpdate(client, Y.encodeStateVector(new Y.Doc()));

      // The server changes the second paragraph, not knowing of the client's edit.
      const updated = await update(h, {
        ...ids(),
        format: 'prosemirror-json',
        content: { type: 'doc', content: [paragraph('alpha'), paragraph('BETA changed'), paragraph('gamma')] },
      });
      await update(h, { ...ids(), yjsUpdate: Buffer.from(concurrent).toString('base64') });
      Y.applyUpdate(client, Buffer.from((await storedState())!, 'base64'));

      expect(updated.body.result?.message).toBe('CRDT data updated successfully.');
      const absolute = Y.createAbsolutePositionFromRelativePosition(caret, client);
      expect(absolute?.type).toBe(third);
      expect(absolute?.index).toBe(3);
      expect(await read('markdown')).toBe('alpha!\n\nBETA changed\n\ngamma');
    });

    it('takes Markdown and HTML for an update and reads back what was sent', async () => {
      await add(h, { ...ids(), type: 'xml', format: 'markdown', content: '# A\n\nold' });

      await update(h, { ...ids(), format: 'markdown', content: '# A\n\nnew **text**' });
      expect(await read('markdown')).toBe('# A\n\nnew **text**');
      await update(h, { ...ids(), type: 'xml', format: 'html', content: '<h1>A</h1><p>html</p>' });
      expect(await read('html')).toBe('<h1>A</h1><p>html</p>');
    });

    it('sends the change to open live connections as a Yjs update', async () => {
      await invoke(
        addUsers,
        '/v2/users/add',
        { organizationId, createOrganization: true, users: [{ userId: 'bob', accessRole: 'editor' }] },
        { headers: h },
      );
      await invoke(
        addDocuments,
        '/v2/organizations/documents/add',
        { organizationId, documents: [{ documentId, documentName: 'Live' }] },
        { headers: h },
      );
      const session = await invoke(
        authorizeHandler,
        '/v2/crdt/live/authorize',
        { ...ids(), userId: 'bob', type: 'xml' },
        { headers: h },
      );
      const bob = uniqueId('conn');
      expect(
        await callSocket('$connect', bob, { query: { token: session.body.result?.data.token, encoding: 'base64' } }),
      ).toEqual({ statusCode: 200 });

      await update(h, { ...ids(), format: 'markdown', content: 'live **text**' });

      const relayed = bytesTo(bob)
        .map(readMessage)
        .filter((message) => message.kind === 'update') as Array<{ update: Uint8Array }>;
      const mirror = new Y.Doc();
      for (const message of relayed) Y.applyUpdate(mirror, message.update);
      expect(mirror.getXmlFragment('content').toString()).toBe('<paragraph>live <bold>text</bold></paragraph>');
    });

    it('raises crdt.update_data like an update with data', async () => {
      const pipeline = await startPipeline();
      const hook = await startReceiver();
      try {
        const owner = await newTenant();
        const headers = { headers: owner.apiKeyHeaders };
        await invoke(updateWebhookConfig, '/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, headers);
        await invoke(
          createEndpoint,
          '/v2/workspace/advancedwebhook/endpoints/create',
          { url: hook.url, filterTypes: ['crdt.update_data'] },
          headers,
        );
        await add(owner.apiKeyHeaders, { ...ids(), type: 'xml', format: 'markdown', content: 'first' });

        await update(owner.apiKeyHeaders, { ...ids(), format: 'markdown', content: 'second', userId: 'ann' });

        const records = () =>
          hook.requests.map(
            (request) => (JSON.parse(request.body) as { data: { data?: unknown; lastUpdatedBy?: unknown } }).data,
          );
        await waitFor(() => records().some((record) => record.data === '<paragraph>second</paragraph>'), {
          what: "the formatted update's crdt.update_data",
        });
        expect(records().find((record) => record.data === '<paragraph>second</paragraph>')).toMatchObject({
          id: 'body',
          lastUpdatedBy: 'ann',
        });
      } finally {
        await pipeline.stop();
        await hook.close();
      }
    });
  });

  describe('bad input: the documented error, nothing written', () => {
    const refuses = async (
      call: Promise<{ statusCode: number; body: { error?: { status: string; message: string } } }>,
      message: string | RegExp,
    ) => {
      const answer = await call;
      expect(answer.statusCode).toBe(400);
      expect(answer.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(answer.body.error?.message).toMatch(message);
    };

    it('refuses a read format that does not fit the type', async () => {
      await add(h, { ...ids('t'), type: 'text', data: 'x' });
      await add(h, { ...ids('m'), type: 'map', data: {} });
      await add(h, { ...ids('x'), type: 'xml', data: '' });

      await refuses(get(h, { ...ids('t'), format: 'html' }), /^Format html is not available for type text\.$/);
      await refuses(get(h, { ...ids('m'), format: 'markdown' }), /^Format markdown is not available for type map\.$/);
      await refuses(get(h, { ...ids('x'), format: 'delta' }), /^Format delta is not available for type xml\.$/);
      await refuses(get(h, { ...ids('x'), format: 'pdf' }), /format/);
    });

    it('refuses content that does not parse or names what the schema does not know, and writes nothing', async () => {
      await refuses(
        add(h, {
          ...ids(),
          type: 'xml',
          format: 'prosemirror-json',
          content: { type: 'doc', content: [{ type: 'mention' }] },
        }),
        /Unknown node type: mention/,
      );
      await refuses(
        add(h, {
          ...ids(),
          type: 'xml',
          format: 'prosemirror-json',
          content: { type: 'doc', content: [{ type: 'text', text: 'loose' }] },
        }),
        /Invalid content for node doc/,
      );
      await refuses(
        add(h, {
          ...ids(),
          type: 'xml',
          format: 'prosemirror-json',
          content: { type: 'doc', content: [{ type: 'heading', attrs: { level: 9 }, content: [] }] },
        }),
        /heading level/,
      );
      await refuses(
        add(h, {
          ...ids(),
          type: 'xml',
          format: 'prosemirror-json',
          content: {
            type: 'doc',
            content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'glow' }] }] }],
          },
        }),
        /glow/,
      );
      await refuses(
        add(h, { ...ids(), type: 'xml', format: 'prosemirror-json', content: '{"type":"doc"}' }),
        /must be an object/,
      );
      await refuses(
        add(h, { ...ids(), type: 'xml', format: 'markdown', content: { type: 'doc' } }),
        /must be a string for format markdown/,
      );
      await refuses(
        add(h, { ...ids(), type: 'text', format: 'markdown', content: 'x' }),
        /^Format markdown is not available for type text\.$/,
      );
      await refuses(add(h, { ...ids(), type: 'xml', format: 'markdown' }), /Content is required/);
      await refuses(
        add(h, { ...ids(), type: 'xml', format: 'markdown', content: 'x', data: '<p></p>' }),
        /either data or format/,
      );
      await refuses(add(h, { ...ids(), type: 'xml', content: 'x', data: '' }), /only taken with a format/);

      expect(await storedState()).toBeUndefined();
    });

    it('refuses an update with bad content or for an editor of another type, and leaves the content as it was', async () => {
      await add(h, { ...ids(), type: 'xml', format: 'markdown', content: 'kept' });
      await add(h, { ...ids('t'), type: 'text', data: 'kept' });
      const before = await storedState();

      await refuses(
        update(h, {
          ...ids(),
          format: 'prosemirror-json',
          content: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'image', attrs: { src: 'x' } }] }] },
        }),
        /Invalid content for node paragraph/,
      );
      await refuses(
        update(h, { ...ids('t'), format: 'html', content: '<p>x</p>' }),
        /^Format html is not available for type text\.$/,
      );
      await refuses(
        update(h, { ...ids(), format: 'html', content: '<p>x</p>', yjsUpdate: 'AAA=' }),
        /either yjsUpdate/,
      );

      expect(await storedState()).toBe(before);
      expect(await read('json', 't')).toBe('kept');
    });

    it('answers NOT_FOUND for an update of an editor that has no data', async () => {
      const answer = await update(h, { ...ids(), format: 'markdown', content: 'x' });

      expect(answer.body.error?.status).toBe('NOT_FOUND');
    });
  });

  describe('tenancy', () => {
    it('gives another API key of the same workspace and one of another workspace nothing to read or change', async () => {
      await add(h, { ...ids(), type: 'xml', format: 'markdown', content: 'mine' });
      const sibling = await siblingKey(tenant);
      const stranger = (await newTenant()).apiKeyHeaders;

      for (const other of [sibling, stranger]) {
        expect((await get(other, { ...ids(), format: 'html' })).body.result?.data).toEqual([]);
        expect((await update(other, { ...ids(), format: 'markdown', content: 'theirs' })).body.error?.status).toBe(
          'NOT_FOUND',
        );
      }
      expect(await read('markdown')).toBe('mine');
    });
  });
});
