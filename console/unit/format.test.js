// Unit tests of the formatting and encoding helpers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as f from '../../internal/console/ui/js/format.js';

test('durations: format, parse and exact round trip', () => {
  assert.equal(f.fmtDuration(0), '0s');
  assert.equal(f.fmtDuration(90_000_000), '1m 30s');
  assert.equal(f.fmtDuration(86400000000n + 3600000000n + 1n), '1d 1h 1µs');
  assert.equal(f.fmtDuration(86400000000n + 3600000000n + 60000000n + 1000000n), '1d 1h 1m');
  const us = 86400000000n * 3n + 3600000000n * 5n + 61000000n + 2000n + 7n;
  assert.equal(f.parseDuration(f.fmtDuration(us, Infinity)), us);
  assert.equal(f.parseDuration('7 days'), 7n * 86400000000n);
  assert.equal(f.parseDuration('1d 2h 30min'), 86400000000n + 2n * 3600000000n + 30n * 60000000n);
  assert.equal(f.parseDuration('90'), 90000000n);
  assert.equal(f.parseDuration('500ms'), 500000n);
  assert.equal(f.parseDuration(''), null);
  assert.equal(f.parseDuration('soon'), null);
  assert.equal(f.parseDuration('5 parsecs'), null);
  assert.equal(f.parseDuration('5d and more'), null);
});

test('expiry and max size sentinels', () => {
  assert.equal(f.fmtExpiry(18446744073709551615n), 'never');
  assert.equal(f.fmtExpiry(0), 'server default');
  assert.equal(f.fmtExpiry(3600000000), '1h');
  assert.equal(f.fmtMaxSize(18446744073709551615n), 'unlimited');
  assert.equal(f.fmtMaxSize(0), 'server default');
  assert.equal(f.fmtMaxSize(1073741824), '1 GiB');
});

test('sizes', () => {
  assert.equal(f.parseSize('1 GiB'), 1073741824n);
  assert.equal(f.parseSize('500MB'), 500000000n);
  assert.equal(f.parseSize('123'), 123n);
  assert.equal(f.parseSize('1.5 GiB'), null);
  assert.equal(f.parseSize('3 parsecs'), null);
  assert.equal(f.fmtBytes(0), '0 B');
  assert.equal(f.fmtBytes(1536), '1.5 KiB');
  assert.equal(f.fmtBytes(10 * 1024 * 1024), '10 MiB');
  assert.equal(f.sizeStringToBytes('3136.5 KiB'), 3136.5 * 1024);
  assert.equal(f.sizeStringToBytes('1.234 KB'), 1234);
  assert.equal(f.sizeStringToBytes('0 B'), 0);
  assert.ok(Number.isNaN(f.sizeStringToBytes('lots')));
});

test('integers with separators, never rounded', () => {
  assert.equal(f.fmtInt(1234567), '1,234,567');
  assert.equal(f.fmtInt(18446744073709551615n), '18,446,744,073,709,551,615');
  assert.equal(f.fmtInt('9007199254740993'), '9,007,199,254,740,993');
  assert.equal(f.fmtInt(-1000), '-1,000');
  assert.equal(f.fmtInt(null), '—');
});

test('times from microseconds', () => {
  const d = new Date(2026, 0, 2, 3, 4, 5, 678);
  assert.equal(f.fmtTime(BigInt(d.getTime()) * 1000n + 999n), '2026-01-02 03:04:05.678');
  assert.equal(f.fmtTime(0), '—');
});

test('base64 and UTF-8', () => {
  const bytes = new Uint8Array([0, 1, 2, 250, 255]);
  assert.deepEqual(f.b64ToBytes(f.bytesToB64(bytes)), bytes);
  assert.equal(f.bytesToB64(f.utf8('héllo')), 'aMOpbGxv');
  const big = new Uint8Array(200000).map((_, i) => i % 256);
  assert.deepEqual(f.b64ToBytes(f.bytesToB64(big)), big);
  assert.deepEqual(f.decodeUTF8(f.utf8('żółw 🐢')), { text: 'żółw 🐢', valid: true });
  const bad = f.decodeUTF8(new Uint8Array([0x61, 0xff, 0x62]));
  assert.equal(bad.valid, false);
  assert.equal(bad.text, 'a\uFFFDb');
  assert.equal(f.looksBinary(f.utf8('plain text\n')), false);
  assert.equal(f.looksBinary(new Uint8Array([0x61, 0, 0x62])), true);
});

test('hex dump', () => {
  const d = f.hexDump(f.utf8('Hello, world! 0123456789'));
  assert.equal(d.split('\n')[0], '00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 21 20 30 31  |Hello, world! 01|');
  assert.match(d.split('\n')[1], /^00000010  32 33 34 35 36 37 38 39 {2}\s+\|23456789\|$/);
  assert.match(f.hexDump(new Uint8Array(100), 32), /68 more bytes not shown$/);
  assert.equal(f.toHex(new Uint8Array([1, 171])), '01ab');
});

test('header values: every kind encodes and decodes back', () => {
  const cases = [
    ['string', 'trace-ü'], ['bool', 'true'], ['bool', 'false'], ['int8', '-128'], ['int16', '-2'], ['int32', '2147483647'],
    ['int64', '-9223372036854775808'], ['int128', '-170141183460469231731687303715884105728'], ['uint8', '255'],
    ['uint16', '65535'], ['uint32', '42'], ['uint64', '18446744073709551615'], ['uint128', '340282366920938463463374607431768211455'],
    ['float32', '1.5'], ['float64', '-0.1'], ['raw', '00ff10'],
  ];
  for (const [kind, text] of cases) {
    const bytes = f.encodeHeaderValue(kind, text);
    const back = f.decodeHeaderValue(kind, bytes);
    assert.equal(back.ok, true, kind);
    assert.equal(back.text, text, kind);
  }
  assert.deepEqual(f.encodeHeaderValue('uint32', '42'), new Uint8Array([42, 0, 0, 0]));
  assert.deepEqual(f.encodeHeaderValue('int16', '-2'), new Uint8Array([0xfe, 0xff]));
});

test('header values: bad input is rejected or flagged', () => {
  assert.throws(() => f.encodeHeaderValue('uint8', '256'), /out of range/);
  assert.throws(() => f.encodeHeaderValue('int8', '-129'), /out of range/);
  assert.throws(() => f.encodeHeaderValue('uint32', 'x'), /integer/);
  assert.throws(() => f.encodeHeaderValue('bool', 'yes'), /true or false/);
  assert.throws(() => f.encodeHeaderValue('raw', 'abc'), /hex/);
  assert.throws(() => f.encodeHeaderValue('float64', ''), /number/);
  assert.throws(() => f.encodeHeaderValue('nope', '1'), /unknown/);
  assert.deepEqual(f.decodeHeaderValue('uint32', new Uint8Array([1, 2])), { text: '0102', ok: false });
  assert.deepEqual(f.decodeHeaderValue('bool', new Uint8Array([7])), { text: '07', ok: false });
  assert.equal(f.decodeHeaderValue('string', new Uint8Array([0xff])).ok, false);
  assert.deepEqual(f.decodeHeaderValue('mystery', new Uint8Array([1])), { text: '01', ok: false });
});

test('ids, partitioning values and CSV', () => {
  assert.equal(f.u128ToUUID(0x0123456789abcdef0123456789abcdefn), '01234567-89ab-cdef-0123-456789abcdef');
  assert.equal(f.u128ToUUID(1), '00000000-0000-0000-0000-000000000001');
  assert.equal(f.partitionIdValue(0), 'AAAAAA==');
  assert.deepEqual(f.b64ToBytes(f.partitionIdValue(258)), new Uint8Array([2, 1, 0, 0]));
  assert.equal(f.csvField('plain'), 'plain');
  assert.equal(f.csvField('a,"b"\n'), '"a,""b""\n"');
  assert.equal(f.csvField(null), '');
});
