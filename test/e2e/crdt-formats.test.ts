/**
 * Content in readable formats over HTTP against the local stack (decisions §15): the functions load the formats
 * chunk behind their dynamic import, write Markdown, update from HTML, and read back in each format.
 */
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('CRDT content in readable formats over HTTP', () => {
  it('adds from Markdown, updates from HTML, reads each format back, with the documented errors', async () => {
    const headers = await newApiKeyHeaders();
    const ids = { organizationId: uniqueId('org'), documentId: 'doc#1', editorId: 'body' };

    const added = await post(
      '/v2/crdt/add',
      { ...ids, type: 'xml', format: 'markdown', content: '# Plan\n\nShip **formats**.\n\n- one\n- two' },
      headers,
    );
    const markdown = await post('/v2/crdt/get', { ...ids, format: 'markdown' }, headers);
    const updated = await post(
      '/v2/crdt/update',
      { ...ids, format: 'html', content: '<h1>Plan</h1><p>Ship <strong>formats</strong> in Q3.</p>' },
      headers,
    );
    const html = await post('/v2/crdt/get', { ...ids, format: 'html' }, headers);
    const text = await post('/v2/crdt/get', { ...ids, format: 'text' }, headers);
    const json = await post('/v2/crdt/get', { ...ids, format: 'prosemirror-json' }, headers);
    const unknownNode = await post(
      '/v2/crdt/update',
      { ...ids, format: 'prosemirror-json', content: { type: 'doc', content: [{ type: 'mention' }] } },
      headers,
    );
    const wrongType = await post('/v2/crdt/add', { ...ids, editorId: 't', type: 'text', data: 'x' }, headers).then(() =>
      post('/v2/crdt/get', { ...ids, editorId: 't', format: 'html' }, headers),
    );
    const after = await post('/v2/crdt/get', { ...ids, format: 'html' }, headers);

    expect(added.status).toBe(200);
    expect(markdown.body.result.data[0].data).toBe('# Plan\n\nShip **formats**.\n\n- one\n- two');
    expect(updated.status).toBe(200);
    expect(html.body.result.data[0].data).toBe('<h1>Plan</h1><p>Ship <strong>formats</strong> in Q3.</p>');
    expect(text.body.result.data[0].data).toBe('Plan\n\nShip formats in Q3.');
    expect(json.body.result.data[0].data).toEqual({
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'Plan' }] },
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Ship ' },
            { type: 'text', marks: [{ type: 'bold' }], text: 'formats' },
            { type: 'text', text: ' in Q3.' },
          ],
        },
      ],
    });
    expect(unknownNode.status).toBe(400);
    expect(unknownNode.body.error).toEqual({
      status: 'INVALID_ARGUMENT',
      message: 'Content is not valid ProseMirror JSON: Unknown node type: mention',
    });
    expect(wrongType.body.error).toEqual({
      status: 'INVALID_ARGUMENT',
      message: 'Format html is not available for type text.',
    });
    expect(after.body.result.data[0].data).toBe(html.body.result.data[0].data);
  });
});
