'use strict';
// Tests of the bot's many-tables logic (bot.js Session), without a network: messages for several tables, alone
// and in RefereeBatches, go in as @grpc/proto-loader decodes them; the BotMessages that come out must answer every
// request with its own table_id, hand_id and request_id.

const test = require('node:test');
const assert = require('node:assert/strict');

const { loadArenaPackage, Session } = require('../bot');

const CHECK_OR_RAISE = {
  can_fold: true, can_check: true, can_call: false, call_amount: '0', can_raise: true, min_raise_to: '100',
  max_raise_to: '9800',
};
const CALL_OR_RAISE = { ...CHECK_OR_RAISE, can_check: false, can_call: true, call_amount: '50', min_raise_to: '200' };

const handId = (table, n = 1) => `m-${table}-h${n}`;

/** A RefereeMessage as proto-loader decodes it (oneofs: true): `msg` names the member that is set. */
const msg = (kind, body) => ({ msg: kind, [kind]: body });

function handStart(table, n = 1, seat = 0) {
  return msg('hand_start', {
    table_id: table, hand_id: handId(table, n), hand_number: n, seat, button: 0, hole_cards: ['7h', '2c'],
  });
}

/** An ActionRequest on `table` (7-2 off-suit on the flop: the strategy checks when free, else calls). */
function request(table, requestId, { n = 1, legal = CHECK_OR_RAISE } = {}) {
  return msg('action_request', {
    table_id: table, hand_id: handId(table, n), request_id: String(requestId), seat: 0, hole_cards: ['7h', '2c'],
    board: ['Kd', '9s', '4c'], button: 0, street: 'STREET_FLOP', seats: [], pots: [], legal, history: [],
  });
}

function rejected(table, requestId, n = 1) {
  return msg('action_rejected', {
    table_id: table, hand_id: handId(table, n), request_id: String(requestId), rule: 'R6.1', message: 'test',
    retries_left: 1,
  });
}

function handEnd(table, n = 1) {
  return msg('hand_end', { table_id: table, hand_id: handId(table, n), board: [], payoffs: [{ seat: 0, net: '10' }] });
}

const batch = (...messages) => msg('batch', { messages });

/** [table_id, hand_id, request_id, kind] of each Action in a list of BotMessages. */
function ids(replies) {
  return replies
    .flatMap((m) => (m.action ? [m.action] : m.actions.actions))
    .map((a) => [a.table_id, a.hand_id, a.request_id, a.kind.replace('ACTION_KIND_', '')]);
}

function session() {
  const lines = [];
  const s = new Session({ logger: (line) => lines.push(line) });
  s.handle(msg('welcome', { match_id: 'm', seat: 0, table_id: 't0', config: {}, tables: 3, batches: true }));
  return { s, lines };
}

test('three tables interleaved, one message at a time: each request gets one Action with its own ids', () => {
  const { s } = session();
  for (const t of ['t0', 't1', 't2']) assert.deepEqual(s.handle(handStart(t)), []);
  const replies = [request('t1', 11), request('t0', 10), request('t2', 12, { legal: CALL_OR_RAISE })].map((m) => {
    const out = s.handle(m);
    assert.equal(out.length, 1);
    assert.ok(out[0].action, 'a lone request is answered with a plain Action');
    return out[0];
  });
  assert.deepEqual(ids(replies), [
    ['t1', handId('t1'), '11', 'CHECK'],
    ['t0', handId('t0'), '10', 'CHECK'],
    ['t2', handId('t2'), '12', 'CALL'],
  ]);
  // All three are open at once, each on its own table.
  assert.deepEqual([...s.tables.keys()].sort(), ['t0', 't1', 't2']);
  assert.deepEqual(['t0', 't1', 't2'].map((t) => s.tables.get(t).open.view.request_id), ['10', '11', '12']);
});

test('a rejection is retried on its own table, with that table\'s request and legal actions', () => {
  const { s } = session();
  s.handle(request('t0', 1, { legal: CALL_OR_RAISE }));
  s.handle(request('t1', 2));
  // t0's request faces a bet: the safe retry is a call, not t1's check.
  assert.deepEqual(ids(s.handle(rejected('t0', 1))), [['t0', handId('t0'), '1', 'CALL']]);
  assert.deepEqual(ids(s.handle(rejected('t1', 2))), [['t1', handId('t1'), '2', 'CHECK']]);
  assert.deepEqual(ids(s.handle(rejected('t0', 1))), [['t0', handId('t0'), '1', 'FOLD']]);
  assert.deepEqual(s.handle(rejected('t0', 1)), [], 'after two retries the referee acts for us');
  // Rejections that match no open request are ignored: wrong request, wrong hand, unknown table.
  assert.deepEqual(s.handle(rejected('t1', 99)), []);
  assert.deepEqual(s.handle(rejected('t1', 2, 7)), []);
  assert.deepEqual(s.handle(rejected('t9', 2)), []);
});

test('HandEnd and a timeout close a table\'s open request, and only that table\'s', () => {
  const { s } = session();
  s.handle(request('t0', 1));
  s.handle(request('t1', 2));
  s.handle(request('t2', 3));
  s.handle(handEnd('t0'));
  s.handle(msg('error', { code: 'ERROR_CODE_TIMEOUT', table_id: 't1', hand_id: handId('t1'), request_id: '2' }));
  assert.deepEqual(s.handle(rejected('t0', 1)), []);
  assert.deepEqual(s.handle(rejected('t1', 2)), []);
  assert.deepEqual(ids(s.handle(rejected('t2', 3))), [['t2', handId('t2'), '3', 'CHECK']]);
  assert.equal(s.fatal, false);
});

test('a RefereeBatch is handled in order and answered with ONE ActionBatch', () => {
  const { s } = session();
  s.handle(batch(handStart('t0'), handStart('t1'), handStart('t2'), request('t0', 1)));
  s.handle(request('t2', 2)); // a plain message between batches
  const out = s.handle(
    batch(
      handEnd('t0'), // t0's hand ends and its next one starts in the same batch...
      handStart('t0', 2),
      request('t0', 3, { n: 2, legal: CALL_OR_RAISE }), // ...with its first request
      request('t1', 4),
      rejected('t2', 2), // and the retry for t2 goes in the same reply
    ),
  );
  assert.equal(out.length, 1, 'one BotMessage for the whole batch');
  assert.ok(out[0].actions && !out[0].action);
  assert.deepEqual(ids(out), [
    ['t0', handId('t0', 2), '3', 'CALL'],
    ['t1', handId('t1'), '4', 'CHECK'],
    ['t2', handId('t2'), '2', 'CHECK'],
  ]);
  assert.equal(s.tables.get('t0').handId, handId('t0', 2));
  assert.deepEqual([s.batches, s.actionBatches], [2, 1]);
  // A batch with one request is answered with a plain Action; one with none, with nothing.
  const one = s.handle(batch(handEnd('t1'), handStart('t1', 2), request('t1', 5, { n: 2 })));
  assert.deepEqual(ids(one), [['t1', handId('t1', 2), '5', 'CHECK']]);
  assert.ok(one[0].action);
  assert.deepEqual(s.handle(batch(handEnd('t0', 2), handEnd('t1', 2))), []);
  // MatchEnd may close a batch.
  assert.equal(s.ended, false);
  assert.deepEqual(s.handle(batch(handEnd('t2'), msg('match_end', { match_id: 'm', results: [] }))), []);
  assert.equal(s.ended, true);
  assert.deepEqual([s.answered, s.batches, s.actionBatches], [5, 5, 1]);
});

test('the ActionBatch a RefereeBatch gets survives the wire exactly', () => {
  const { s } = session();
  const out = s.handle(batch(request('t0', '18446744073709551615'), request('t1', 2, { legal: CALL_OR_RAISE })));
  const play = loadArenaPackage().arena.v1.BotService.service.Play;
  const decoded = play.requestDeserialize(play.requestSerialize(out[0]));
  assert.equal(decoded.msg, 'actions');
  assert.deepEqual(ids([decoded]), [
    ['t0', handId('t0'), '18446744073709551615', 'CHECK'],
    ['t1', handId('t1'), '2', 'CALL'],
  ]);
  // And a RefereeBatch as the referee encodes it decodes into what Session.handle() expects.
  const wire = batch(handStart('t0'), request('t0', 1));
  const back = play.responseDeserialize(play.responseSerialize(wire));
  assert.equal(back.msg, 'batch');
  assert.deepEqual(ids(new Session({ logger: () => {} }).handle(back)), [['t0', handId('t0'), '1', 'CHECK']]);
});

test('one table, no batches: the same Session plays an ordinary match', () => {
  const { s } = session();
  const answers = [];
  for (let n = 1; n <= 3; n += 1) {
    s.handle(handStart('t0', n));
    answers.push(...s.handle(request('t0', n * 2 - 1, { n })), ...s.handle(request('t0', n * 2, { n })));
    s.handle(handEnd('t0', n));
  }
  assert.deepEqual(
    ids(answers).map(([t, h, r]) => `${t}/${h}/${r}`),
    ['m-t0-h1/1', 'm-t0-h1/2', 'm-t0-h2/3', 'm-t0-h2/4', 'm-t0-h3/5', 'm-t0-h3/6'].map((x) => `t0/${x}`),
  );
  assert.equal(s.tables.size, 0, 'a finished hand leaves no state behind');
});
