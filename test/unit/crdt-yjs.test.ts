import * as Y from 'yjs';
import type { CrdtType } from '../../shared/db/crdt';
import { checkContent, checkEditorId } from '../../shared/domain/crdt/input-rules';
import { MAX_DEPTH, type JsonValue } from '../../shared/domain/crdt/json-value';
import { parseXml, serializeXml } from '../../shared/domain/crdt/xml';
import {
  buildState,
  editorState,
  mergeUpdate,
  readValue,
  replaceContent,
  replacementOf,
  textChange,
} from '../../shared/domain/crdt/yjs-state';
import { InvalidArgumentError } from '../../shared/core/errors';

const KEY = 'content';

/** A client editor: a Y.Doc that loaded `state`. */
function clientDoc(state: Uint8Array): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, state);
  return doc;
}

function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the action to throw');
}

const invalidArgument = (action: () => unknown) => {
  const error = thrownBy(action);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  return (error as InvalidArgumentError).message;
};

describe('building and reading Yjs states', () => {
  it('round-trips text, with characters outside the BMP, as a Y.Text under the content key', () => {
    const text = 'Hello, wörld 😀 — 漢字\nline two';

    const state = buildState('text', 'body', text);

    expect(readValue(state, 'text', 'body')).toBe(text);
    expect(clientDoc(state).getText('body').toString()).toBe(text);
  });

  it('round-trips a nested map, storing nested objects as Y.Map and arrays as Y.Array', () => {
    const value = {
      title: 'T',
      count: 3,
      ratio: 0.5,
      done: false,
      none: null,
      nested: { deep: { list: [1, { a: 'b' }] } },
      tags: ['x', 'y'],
    };

    const state = buildState('map', KEY, value);

    expect(readValue(state, 'map', KEY)).toEqual(value);
    const root = clientDoc(state).getMap(KEY);
    expect(root.get('nested')).toBeInstanceOf(Y.Map);
    expect(root.get('tags')).toBeInstanceOf(Y.Array);
    expect((root.toJSON() as { nested: unknown }).nested).toEqual(value.nested);
  });

  it('keeps a __proto__ key as data', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "plain": 1}') as JsonValue;

    const read = readValue(buildState('map', KEY, value), 'map', KEY);

    expect(JSON.stringify(read)).toBe('{"__proto__":{"polluted":true},"plain":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('round-trips an array of mixed values', () => {
    const value = ['s', 1, -2.5, true, null, { k: [1, 2] }, [['deep']], ''];

    const state = buildState('array', KEY, value);

    expect(readValue(state, 'array', KEY)).toEqual(value);
    expect(clientDoc(state).getArray(KEY).get(5)).toBeInstanceOf(Y.Map);
  });

  it('round-trips XML with nested elements, attributes and text as a Y.XmlFragment', () => {
    const xml =
      '<paragraph align="left" id="p1">Hello <bold>big <italic>world</italic></bold>!</paragraph><image src="a.png"></image>tail';

    const state = buildState('xml', 'default', xml);

    expect(readValue(state, 'xml', 'default')).toBe(xml);
    const fragment = clientDoc(state).getXmlFragment('default');
    const paragraph = fragment.get(0) as Y.XmlElement;
    expect(paragraph).toBeInstanceOf(Y.XmlElement);
    expect(paragraph.nodeName).toBe('paragraph');
    expect(paragraph.getAttributes()).toEqual({ align: 'left', id: 'p1' });
    expect((paragraph.get(1) as Y.XmlElement).nodeName).toBe('bold');
    expect(fragment.get(2)).toBeInstanceOf(Y.XmlText);
  });

  it('gives XML its canonical form: sorted attributes, empty elements closed, entities decoded and text escaped', () => {
    const xml = `<?xml version="1.0"?><p z='1' a="x &amp; &quot;y&quot;">a &lt; b &#x1F600; &#65;<br/><!-- dropped --><![CDATA[<raw> & ]]></p>`;

    const read = readValue(buildState('xml', KEY, xml), 'xml', KEY);

    expect(read).toBe('<p a="x &amp; &quot;y&quot;" z="1">a &lt; b 😀 A<br></br>&lt;raw&gt; &amp; </p>');
    expect(readValue(buildState('xml', KEY, read as string), 'xml', KEY)).toBe(read);
  });

  it('keeps element names in their case and whitespace text as it is', () => {
    const xml = '<List>\n  <Item key="1"></Item>\n</List>';

    expect(readValue(buildState('xml', KEY, xml), 'xml', KEY)).toBe(xml);
  });

  it('stores empty values', () => {
    const cases: Array<[CrdtType, JsonValue]> = [
      ['text', ''],
      ['map', {}],
      ['array', []],
      ['xml', ''],
    ];

    for (const [type, value] of cases) expect(readValue(buildState(type, KEY, value), type, KEY)).toEqual(value);
  });
});

describe('the XML parser', () => {
  it.each([
    ['an unclosed element', '<a><b></b>', '<a> is not closed'],
    ['a mismatched end tag', '<a></b>', '</b> does not close <a>'],
    ['an end tag without element', 'text</a>', '</a> closes no element'],
    ['an unknown entity', '<a>&nbsp;</a>', 'unknown entity &nbsp;'],
    ['a bare ampersand', '<a>fish & chips</a>', '"&" must start an entity'],
    ['"<" in an attribute value', '<a b="<"></a>', '"<" in an attribute value'],
    ['an unquoted attribute', '<a b=1></a>', 'expected a quoted value for attribute b'],
    ['a duplicate attribute', '<a b="1" b="2"></a>', 'duplicate attribute b'],
    ['attributes without whitespace between them', '<a b="1"c="2"></a>', 'expected whitespace'],
    ['a DOCTYPE', '<!DOCTYPE a [<!ENTITY x "y">]><a></a>', 'DOCTYPE are not supported'],
    ['an unterminated comment', '<a><!-- no end</a>', 'unterminated comment'],
    ['a lone "<"', 'a < b', 'expected a name'],
    ['a surrogate code point', '<a>&#xD800;</a>', 'unknown entity'],
  ])('refuses %s', (_label, xml, reason) => {
    const message = invalidArgument(() => parseXml(xml));

    expect(message).toContain('Data is not valid XML: ');
    expect(message).toContain(reason);
  });

  it('parses a fragment with several roots and top-level text into nodes', () => {
    expect(parseXml('a<x k="v"/>b<y>c</y>')).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'element', name: 'x', attributes: [['k', 'v']], children: [] },
      { kind: 'text', text: 'b' },
      { kind: 'element', name: 'y', attributes: [], children: [{ kind: 'text', text: 'c' }] },
    ]);
  });

  it('refuses nesting beyond the limit without exhausting the stack', () => {
    const deep = '<a>'.repeat(50_000) + '</a>'.repeat(50_000);

    expect(invalidArgument(() => parseXml(deep))).toBe(`Data must not nest deeper than ${MAX_DEPTH} levels.`);
    expect(parseXml('<a>'.repeat(MAX_DEPTH) + '</a>'.repeat(MAX_DEPTH))).toHaveLength(1);
  });

  it('serializes parsed nodes in the same form as the Yjs types they build', () => {
    const xml = '<a y="2" x="1">t<b/></a>';

    expect(serializeXml(parseXml(xml))).toBe(readValue(buildState('xml', KEY, xml), 'xml', KEY));
  });
});

describe('input rules', () => {
  it('requires the editor id with the contract message', () => {
    expect(invalidArgument(() => checkEditorId(undefined))).toBe('Editor ID is required.');
    expect(invalidArgument(() => checkEditorId(''))).toBe('Editor ID is required.');
    expect(checkEditorId('e1')).toBe('e1');
  });

  it.each([
    ['text', 42, 'Data must be a string for type text.'],
    ['text', { a: 1 }, 'Data must be a string for type text.'],
    ['map', 'x', 'Data must be an object for type map.'],
    ['map', [1], 'Data must be an object for type map.'],
    ['map', null, 'Data must be an object for type map.'],
    ['array', { 0: 'a' }, 'Data must be an array for type array.'],
    ['xml', ['<a/>'], 'Data must be a string for type xml.'],
  ] as Array<[CrdtType, unknown, string]>)('refuses %s data %j with the exact message', (type, data, message) => {
    expect(invalidArgument(() => checkContent(type, data))).toBe(message);
  });

  it('requires type and data', () => {
    expect(invalidArgument(() => checkContent(undefined, 'x'))).toBe('Type is required.');
    expect(invalidArgument(() => checkContent('text', undefined))).toBe('Data is required.');
  });

  it('refuses data nested beyond the limit and XML that does not parse', () => {
    let deep: JsonValue = 'leaf';
    for (let i = 0; i <= MAX_DEPTH; i += 1) deep = [deep];

    expect(invalidArgument(() => checkContent('array', deep))).toBe(
      `Data must not nest deeper than ${MAX_DEPTH} levels.`,
    );
    expect(invalidArgument(() => checkContent('xml', '<a>'))).toContain('Data is not valid XML');
    expect(checkContent('map', { a: 1 })).toEqual({ type: 'map', data: { a: 1 } });
  });
});

describe('textChange', () => {
  it.each([
    ['hello world', 'hello brave world', { index: 6, remove: 0, insert: 'brave ' }],
    ['hello brave world', 'hello world', { index: 6, remove: 6, insert: '' }],
    ['abc', 'abc', { index: 3, remove: 0, insert: '' }],
    ['', 'new', { index: 0, remove: 0, insert: 'new' }],
    ['aXc', 'aYc', { index: 1, remove: 1, insert: 'Y' }],
  ])('turns %j into %j with one delete and one insert', (previous, next, change) => {
    expect(textChange(previous, next)).toEqual(change);
  });

  it('never cuts a surrogate pair', () => {
    // 😀 is \uD83D\uDE00 and 😁 \uD83D\uDE01: they share the high surrogate; 😀 and 🙀 (\uD83D\uDE40) too.
    expect(textChange('a😀b', 'a😁b')).toEqual({ index: 1, remove: 2, insert: '😁' });
    expect(textChange('x\uD83D\uDE00', 'x\uD83C\uDE00')).toEqual({ index: 1, remove: 2, insert: '\uD83C\uDE00' });
  });
});

describe('replacing content through Yjs operations', () => {
  const cases: Array<[CrdtType, JsonValue, JsonValue]> = [
    ['text', 'The quick brown fox', 'The quick red fox jumps'],
    ['text', 'emoji 😀 here', 'emoji 😁 here'],
    [
      'map',
      { a: 1, nested: { keep: true, change: 'x' }, gone: 'y', list: [1, 2, 3] },
      { a: 1, nested: { keep: true, change: 'z' }, list: [1, 3], added: { n: null } },
    ],
    ['array', [1, 'two', { three: 3 }, [4]], [0, 1, 'two', { three: 33 }, [4], 5]],
    ['xml', '<p>one</p><p class="x">two</p><p>three</p>', '<p>one</p><h1>new</h1><p>three</p>'],
  ];

  it.each(cases)(
    'with %s content, a client that loaded the state before the update converges by applying the new state',
    (type, before, after) => {
      const state = buildState(type, KEY, before);
      const client = clientDoc(state);

      const next = replaceContent(state, type, KEY, after);
      Y.applyUpdate(client, next);

      expect(readValue(next, type, KEY)).toEqual(after);
      expect(readValue(Y.encodeStateAsUpdate(client), type, KEY)).toEqual(after);
    },
  );

  it.each(cases)(
    'with %s content, a client converges by applying only the diff from its state vector',
    (type, before, after) => {
      const state = buildState(type, KEY, before);
      const client = clientDoc(state);

      const next = replaceContent(state, type, KEY, after);
      Y.applyUpdate(client, Y.diffUpdate(next, Y.encodeStateVector(client)));

      expect(readValue(Y.encodeStateAsUpdate(client), type, KEY)).toEqual(after);
    },
  );

  it('keeps a concurrent text edit made outside the replaced range', () => {
    const state = buildState('text', KEY, 'Hello world. Bye.');
    const client = clientDoc(state);
    client.getText(KEY).insert(0, '>> ');

    const next = replaceContent(state, 'text', KEY, 'Hello there. Bye.');
    Y.applyUpdate(client, next);

    expect(client.getText(KEY).toString()).toBe('>> Hello there. Bye.');
  });

  it('keeps a concurrent edit inside a nested map the replacement leaves alone', () => {
    const state = buildState('map', KEY, { settings: { theme: 'dark' }, title: 'a' });
    const client = clientDoc(state);
    (client.getMap(KEY).get('settings') as Y.Map<unknown>).set('font', 'serif');

    const next = replaceContent(state, 'map', KEY, { settings: { theme: 'dark' }, title: 'b' });
    Y.applyUpdate(client, next);

    expect(client.getMap(KEY).toJSON()).toEqual({ settings: { theme: 'dark', font: 'serif' }, title: 'b' });
  });

  it('keeps a concurrent array insert and a concurrent edit inside an unchanged XML element', () => {
    const arrayState = buildState('array', KEY, ['a', 'b', 'c']);
    const arrayClient = clientDoc(arrayState);
    arrayClient.getArray(KEY).push(['client']);
    const xmlState = buildState('xml', KEY, '<p>keep</p><p>old</p>');
    const xmlClient = clientDoc(xmlState);
    (xmlClient.getXmlFragment(KEY).get(0) as Y.XmlElement).setAttribute('data-client', '1');

    Y.applyUpdate(arrayClient, replaceContent(arrayState, 'array', KEY, ['a', 'B', 'c']));
    Y.applyUpdate(xmlClient, replaceContent(xmlState, 'xml', KEY, '<p>keep</p><p>new</p>'));

    expect(arrayClient.getArray(KEY).toJSON()).toEqual(['a', 'B', 'c', 'client']);
    expect(readValue(Y.encodeStateAsUpdate(xmlClient), 'xml', KEY)).toBe('<p data-client="1">keep</p><p>new</p>');
  });

  it('adds no Yjs items when the content is unchanged', () => {
    const state = buildState('map', KEY, { a: [1, 2], b: { c: 'd' } });

    const next = replaceContent(state, 'map', KEY, { a: [1, 2], b: { c: 'd' } });

    expect(Y.decodeUpdate(next).structs.length).toBe(Y.decodeUpdate(state).structs.length);
  });
});

describe('merging a client update', () => {
  it('merges a client’s edits, made from the stored state, into it', () => {
    const state = buildState('text', KEY, 'shared');
    const client = clientDoc(state);
    const before = Y.encodeStateVector(client);
    client.getText(KEY).insert(6, ' text');

    const merged = mergeUpdate(state, Y.encodeStateAsUpdate(client, before), 'text', KEY);

    expect(readValue(merged, 'text', KEY)).toBe('shared text');
  });

  it('merges two concurrent client updates without losing either', () => {
    const state = buildState('array', KEY, ['base']);
    const one = clientDoc(state);
    const two = clientDoc(state);
    one.getArray(KEY).push(['one']);
    two.getArray(KEY).push(['two']);

    const merged = mergeUpdate(
      mergeUpdate(state, Y.encodeStateAsUpdate(one), 'array', KEY),
      Y.encodeStateAsUpdate(two),
      'array',
      KEY,
    );

    expect((readValue(merged, 'array', KEY) as string[]).sort()).toEqual(['base', 'one', 'two']);
  });

  it('refuses bytes that are not a Yjs update', () => {
    const state = buildState('text', KEY, 'x');

    expect(invalidArgument(() => mergeUpdate(state, new Uint8Array([1, 200, 3, 4, 5]), 'text', KEY))).toBe(
      'yjsUpdate is not a valid Yjs update.',
    );
  });

  it('refuses an update whose content nests beyond the limit', () => {
    const state = buildState('map', KEY, {});
    const client = clientDoc(state);
    client.transact(() => {
      let map = client.getMap(KEY);
      for (let i = 0; i <= MAX_DEPTH + 1; i += 1) {
        const child = new Y.Map<unknown>();
        map.set('k', child);
        map = child;
      }
    });

    expect(invalidArgument(() => mergeUpdate(state, Y.encodeStateAsUpdate(client), 'map', KEY))).toContain(
      'nest deeper',
    );
  });
});

describe('changes appended as deltas', () => {
  it('gives a replacement as an update of its own, which turns any state that has the original into the data', () => {
    const state = buildState('text', KEY, 'The quick brown fox');
    const client = clientDoc(state);
    const known = Y.encodeStateVector(client);
    client.getText(KEY).insert(0, '[client] ');

    const { state: replaced, delta } = replacementOf(state, 'text', KEY, 'The quick red fox');
    Y.applyUpdate(client, delta);

    expect(readValue(replaced, 'text', KEY)).toBe('The quick red fox');
    expect(client.getText(KEY).toString()).toBe('[client] The quick red fox');
    expect(readValue(mergeUpdate(replaced, Y.encodeStateAsUpdate(client, known), 'text', KEY), 'text', KEY)).toBe(
      '[client] The quick red fox',
    );
  });

  it('reads the same content whatever order the deltas were appended in, and a delta merged twice changes nothing', () => {
    const state = buildState('map', KEY, {});
    const deltas = [0, 1, 2].map((i) => {
      const client = clientDoc(state);
      const known = Y.encodeStateVector(client);
      client.getMap(KEY).set(`client${i}`, i);
      return Y.encodeStateAsUpdate(client, known);
    });
    const asDeltas = (updates: Uint8Array[]) => ({
      state,
      deltas: updates.map((update) => ({ key: { pk: 'p', sk: 's' }, update })),
    });

    const forward = readValue(editorState(asDeltas(deltas)), 'map', KEY);
    const backward = readValue(editorState(asDeltas([...deltas].reverse())), 'map', KEY);
    const repeated = readValue(editorState({ ...asDeltas(deltas), state: editorState(asDeltas(deltas)) }), 'map', KEY);

    expect(forward).toEqual({ client0: 0, client1: 1, client2: 2 });
    expect(backward).toEqual(forward);
    expect(repeated).toEqual(forward);
    expect(editorState({ state, deltas: [] })).toBe(state);
  });
});
