// Unit tests of the big-number-safe JSON parser and writer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, stringify, toBig, toWireInt, JSONSyntaxError } from '../../internal/console/ui/js/bigjson.js';

test('integers beyond 2^53 stay exact as BigInt', () => {
  const v = parse('{"offset":18446744073709551615,"id":340282366920938463463374607431768211455,"small":42}');
  assert.equal(v.offset, 18446744073709551615n);
  assert.equal(v.id, 340282366920938463463374607431768211455n);
  assert.equal(v.small, 42);
  assert.equal(typeof v.small, 'number');
});

test('the boundary: 2^53-1 is a Number, 2^53 and -2^53 are BigInt', () => {
  assert.equal(parse('9007199254740991'), 9007199254740991);
  assert.equal(parse('9007199254740992'), 9007199254740992n);
  assert.equal(parse('9007199254740993'), 9007199254740993n);
  assert.equal(parse('-9007199254740993'), -9007199254740993n);
  assert.equal(parse('-9007199254740991'), -9007199254740991);
});

test('fractions and exponents stay Numbers', () => {
  assert.deepEqual(parse('[1.5,-0.25,1e3,2E-2,0]'), [1.5, -0.25, 1000, 0.02, 0]);
});

test('strings, escapes, literals and nesting', () => {
  const v = parse(' {"a":"x\\"y\\\\z\\/\\n\\u00e9\\ud83d\\ude00","b":[true,false,null,{}],"c":[]} ');
  assert.equal(v.a, 'x"y\\z/\né😀');
  assert.deepEqual(v.b, [true, false, null, {}]);
  assert.deepEqual(v.c, []);
});

test('agrees with JSON.parse on ordinary documents', () => {
  const doc = '{"streams":[{"id":1,"name":"<img src=x onerror=alert(1)>","size":"1.5 KiB","messages_count":3,"created_at":1733097600000000}],"ok":true,"f":-12.5e-1}';
  assert.deepEqual(parse(doc), JSON.parse(doc));
});

test('__proto__ is an ordinary key, not a prototype', () => {
  const v = parse('{"__proto__":{"polluted":true}}');
  assert.equal(({}).polluted, undefined);
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.deepEqual(Object.keys(v), ['__proto__']);
  assert.equal(v.__proto__.polluted, true);
});

test('malformed input throws JSONSyntaxError with a position', () => {
  for (const bad of ['', '{', '[1,]', '{"a":1,}', '01', '1.', '.5', '-', '"abc', '"\\x"', 'tru', '{"a" 1}', '[1] 2', '"a\u0001"', 'NaN', '1e', '"\\u12"']) {
    assert.throws(() => parse(bad), JSONSyntaxError, `input ${JSON.stringify(bad)}`);
  }
  try {
    parse('[1, x]');
  } catch (e) {
    assert.equal(e.pos, 4);
  }
});

test('deep nesting is bounded', () => {
  assert.throws(() => parse('['.repeat(10000) + ']'.repeat(10000)), /too deep/);
  assert.deepEqual(parse('['.repeat(100) + ']'.repeat(100)).length, 1);
});

test('stringify writes BigInt as bare digits and round-trips', () => {
  const v = { offset: 18446744073709551615n, n: 1, s: 'a"b', arr: [1n, null, true], nested: { x: undefined, y: 2 } };
  const text = stringify(v);
  assert.equal(text, '{"offset":18446744073709551615,"n":1,"s":"a\\"b","arr":[1,null,true],"nested":{"y":2}}');
  assert.deepEqual(parse(text), { offset: 18446744073709551615n, n: 1, s: 'a"b', arr: [1, null, true], nested: { y: 2 } });
  assert.equal(stringify([1, { a: [] }], 2), '[\n  1,\n  {\n    "a": []\n  }\n]');
  assert.equal(stringify(NaN), 'null');
});

test('toBig and toWireInt', () => {
  assert.equal(toBig(5), 5n);
  assert.equal(toBig('18446744073709551615'), 18446744073709551615n);
  assert.equal(toBig(' 7 '), 7n);
  assert.equal(toBig(1.5), null);
  assert.equal(toBig('1e3'), null);
  assert.equal(toBig(null), null);
  assert.equal(toWireInt(10n), 10);
  assert.equal(toWireInt('18446744073709551615'), 18446744073709551615n);
  assert.throws(() => toWireInt('x'));
});
