'use strict';
// Tests for the sample bot: the pure strategy (strategy.js) and the real bot process (bot.js) driven by an
// in-process fake referee that implements arena.v1.BotService with @grpc/grpc-js.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const grpc = require('@grpc/grpc-js');

const strategy = require('../strategy');
const { loadArenaPackage, parseConfig, toView, worthANewStream } = require('../bot');

const { ActionKind } = strategy;
const BOT_JS = path.resolve(__dirname, '..', 'bot.js');

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** Small seeded PRNG (mulberry32) so random tests are reproducible. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RANKS = '23456789TJQKA';
const SUITS = 'shdc';
const DECK = [...RANKS].flatMap((r) => [...SUITS].map((s) => r + s));

function deal(rand, n) {
  const deck = [...DECK];
  const out = [];
  for (let i = 0; i < n; i += 1) {
    const j = Math.floor(rand() * deck.length);
    out.push(deck.splice(j, 1)[0]);
  }
  return out;
}

/** A random LegalActions as a well-behaved referee would send it (R6, R7): FOLD allowed, CHECK xor CALL. */
function randomLegal(rand) {
  const stack = 1 + Math.floor(rand() * 20000);
  const owed = rand() < 0.4 ? 0 : 1 + Math.floor(rand() * 25000);
  const legal = {
    can_fold: true,
    can_check: owed === 0,
    can_call: owed > 0,
    call_amount: owed > 0 ? Math.min(owed, stack) : 0,
    can_raise: false,
    min_raise_to: 0,
    max_raise_to: 0,
  };
  if (owed < stack && rand() < 0.8) {
    const currentBet = Math.floor(rand() * 2000);
    const myBet = Math.max(0, currentBet - owed);
    const maxTo = myBet + stack;
    const minTo = Math.min(maxTo, currentBet + 1 + Math.floor(rand() * 3000));
    legal.can_raise = true;
    legal.min_raise_to = minTo;
    legal.max_raise_to = rand() < 0.3 ? minTo : minTo + Math.floor(rand() * (maxTo - minTo + 1));
  }
  return legal;
}

/** A random LegalActions with no guarantees at all (defensive paths). */
function chaoticLegal(rand) {
  const lo = Math.floor(rand() * 1000);
  return {
    can_fold: rand() < 0.5,
    can_check: rand() < 0.5,
    can_call: rand() < 0.5,
    call_amount: Math.floor(rand() * 1000),
    can_raise: rand() < 0.5,
    min_raise_to: lo,
    max_raise_to: rand() < 0.2 ? lo - 1 : lo + Math.floor(rand() * 1000),
  };
}

function assertLegal(action, legal, context) {
  const where = `${JSON.stringify(action)} for ${JSON.stringify(legal)} ${context || ''}`;
  assert.ok(strategy.isLegal(action, legal), `illegal action ${where}`);
  if (action.kind === ActionKind.RAISE) {
    assert.ok(Number.isSafeInteger(action.amount), `non-integer raise ${where}`);
    assert.ok(action.amount >= legal.min_raise_to && action.amount <= legal.max_raise_to, `raise out of range ${where}`);
  }
}

function view(hole, board, legal, extra) {
  const street = ['STREET_PREFLOP', null, null, 'STREET_FLOP', 'STREET_TURN', 'STREET_RIVER'][board.length];
  return { seat: 0, hole_cards: hole, board, street, legal, history: [], ...extra };
}

const OPEN_LEGAL = {
  can_fold: true,
  can_check: false,
  can_call: true,
  call_amount: 50,
  can_raise: true,
  min_raise_to: 200,
  max_raise_to: 10000,
};

// ---------------------------------------------------------------------------------------------------------------
// Strategy

test('always picks a legal action for many random LegalActions', () => {
  const rand = rng(20240601);
  for (let i = 0; i < 20000; i += 1) {
    const legal = randomLegal(rand);
    const boardSize = [0, 3, 4, 5][Math.floor(rand() * 4)];
    const cards = deal(rand, 2 + boardSize);
    const v = view(cards.slice(0, 2), cards.slice(2), legal);
    const action = strategy.decide(v);
    assertLegal(action, legal, `cards ${cards.join(' ')}`);
    assert.notEqual(action.kind, ActionKind.FOLD, 'a calling station never folds when it can check or call');
    assert.notEqual(action.kind, ActionKind.ALL_IN);
  }
});

test('stays legal even for malformed LegalActions', () => {
  const rand = rng(7);
  for (let i = 0; i < 5000; i += 1) {
    const legal = chaoticLegal(rand);
    const cards = deal(rand, 5);
    assertLegal(strategy.decide(view(cards.slice(0, 2), cards.slice(2), legal)), legal);
    assertLegal(strategy.safeAction(legal), legal);
  }
  assertLegal(strategy.decide({}), {});
  assertLegal(strategy.decide({ legal: { can_raise: true, min_raise_to: 500, max_raise_to: 100 } }), {
    can_raise: true,
    min_raise_to: 500,
    max_raise_to: 100,
  });
});

test('raises premium hands pre-flop to the minimum raise-to', () => {
  const premium = [['As', 'Ad'], ['Kc', 'Kh'], ['Qs', 'Qd'], ['Jh', 'Jc'], ['Ts', 'Td'], ['As', 'Kd'], ['Kh', 'Ah'],
    ['Ac', 'Qc'], ['Qd', 'Ad'], ['10s', '10h']];
  for (const hole of premium) {
    assert.ok(strategy.isPremium(hole), `${hole} is premium`);
    assert.deepEqual(strategy.decide(view(hole, [], OPEN_LEGAL)), { kind: ActionKind.RAISE, amount: 200, comment: 'premium hand: raise' },
      `${hole}`);
  }
});

test('does not raise other hands pre-flop: calls, or checks when free', () => {
  for (const hole of [['9s', '9d'], ['Ac', 'Qd'], ['Ks', 'Qs'], ['7h', '2c'], ['Ah', 'Jh']]) {
    assert.ok(!strategy.isPremium(hole), `${hole} is not premium`);
    assert.equal(strategy.decide(view(hole, [], OPEN_LEGAL)).kind, ActionKind.CALL);
    const free = { ...OPEN_LEGAL, can_call: false, call_amount: 0, can_check: true, min_raise_to: 100 };
    assert.equal(strategy.decide(view(hole, [], free)).kind, ActionKind.CHECK);
  }
});

test('raise amounts stay within [min_raise_to, max_raise_to]', () => {
  // Short stack: the minimum is above what we have, so the referee offers min == max == all-in (R7.3).
  const short = { ...OPEN_LEGAL, min_raise_to: 180, max_raise_to: 180 };
  assert.deepEqual(strategy.decide(view(['As', 'Ah'], [], short)), {
    kind: ActionKind.RAISE, amount: 180, comment: 'premium hand: raise',
  });
  // A malformed range (min above max) is clamped to the max, which the strategy treats as not raisable.
  const inverted = { ...OPEN_LEGAL, min_raise_to: 400, max_raise_to: 300 };
  const action = strategy.decide(view(['As', 'Ah'], [], inverted));
  assert.equal(action.kind, ActionKind.CALL);
  // No raise allowed (e.g. R7.4): call instead.
  const noRaise = { ...OPEN_LEGAL, can_raise: false, min_raise_to: 0, max_raise_to: 0 };
  assert.equal(strategy.decide(view(['As', 'Ah'], [], noRaise)).kind, ActionKind.CALL);
});

test('raises at most once per street', () => {
  const history = [{ kind: 'EVENT_KIND_RAISE', seat: 0, street: 'STREET_PREFLOP', amount: 300 }];
  const reraised = { ...OPEN_LEGAL, call_amount: 600, min_raise_to: 1500 };
  assert.equal(strategy.decide(view(['As', 'Ah'], [], reraised, { history })).kind, ActionKind.CALL);
  const otherSeat = [{ kind: 'EVENT_KIND_RAISE', seat: 1, street: 'STREET_PREFLOP', amount: 300 }];
  assert.equal(strategy.decide(view(['As', 'Ah'], [], reraised, { history: otherSeat })).kind, ActionKind.RAISE);
});

test('post-flop: raises small with a made hand that uses the hole cards, else checks or calls', () => {
  const checkable = {
    can_fold: true, can_check: true, can_call: false, call_amount: 0,
    can_raise: true, min_raise_to: 100, max_raise_to: 9800,
  };
  // Top pair.
  assert.deepEqual(strategy.decide(view(['Ks', '7d'], ['Kh', '9c', '2s'], checkable)), {
    kind: ActionKind.RAISE, amount: 100, comment: 'made hand: raise',
  });
  // Pocket pair, two pair, trips, straight, flush.
  for (const [hole, board] of [
    [['5s', '5d'], ['Kh', '9c', '2s']],
    [['Ks', '9d'], ['Kh', '9c', '2s']],
    [['9s', '9d'], ['Kh', '9c', '2s']],
    [['Js', 'Td'], ['Qh', '9c', '8s']],
    [['Ah', '3h'], ['Kh', '9h', '2h']],
  ]) {
    assert.ok(strategy.hasMadeHand(hole, board), `${hole} on ${board}`);
    assert.equal(strategy.decide(view(hole, board, checkable)).kind, ActionKind.RAISE, `${hole} on ${board}`);
  }
  // Nothing: ace high; a pair only on the board.
  assert.equal(strategy.decide(view(['As', '7d'], ['Kh', '9c', '2s'], checkable)).kind, ActionKind.CHECK);
  assert.ok(!strategy.hasMadeHand(['As', '7d'], ['Kh', 'Kc', '2s']));
  assert.equal(strategy.decide(view(['As', '7d'], ['Kh', 'Kc', '2s'], checkable)).kind, ActionKind.CHECK);
  const facingBet = { ...checkable, can_check: false, can_call: true, call_amount: 400, min_raise_to: 800 };
  assert.equal(strategy.decide(view(['As', '7d'], ['Kh', '9c', '2s', '3d'], facingBet)).kind, ActionKind.CALL);
});

test('hand categories', () => {
  const C = strategy.Category;
  assert.equal(strategy.handCategory(['As', 'Ks', 'Qs', 'Js', 'Ts', '2d', '3c']), C.STRAIGHT_FLUSH);
  assert.equal(strategy.handCategory(['Ah', '2d', '3c', '4s', '5h']), C.STRAIGHT); // wheel, R9.1
  assert.equal(strategy.handCategory(['9h', '9d', '9c', '4s', '4h']), C.FULL_HOUSE);
  assert.equal(strategy.handCategory(['9h', '9d', '9c', '9s', '4h']), C.FOUR_OF_A_KIND);
  assert.equal(strategy.handCategory(['9h', '9d', '4c', '4s', '2h', '2c']), C.TWO_PAIR);
  assert.equal(strategy.handCategory(['Ah', 'Kd', '9c', '4s', '2h']), C.HIGH_CARD);
});

test('safe fallback after a rejection: check, else call, else fold', () => {
  assert.equal(strategy.safeAction({ can_fold: true, can_check: true }).kind, ActionKind.CHECK);
  assert.equal(strategy.safeAction({ can_fold: true, can_call: true }).kind, ActionKind.CALL);
  assert.equal(strategy.safeAction({ can_fold: true }).kind, ActionKind.FOLD);
});

// ---------------------------------------------------------------------------------------------------------------
// Configuration and wire conversion

test('address and token come from arguments or the environment; arguments win', () => {
  assert.deepEqual(parseConfig([], { ARENA_ADDRESS: 'h:1', ARENA_TOKEN: 't' }), {
    address: 'h:1', token: 't', name: 'js-caller', maxTables: 64, batches: false, reconnect: true, reconnectS: 60,
  });
  assert.deepEqual(
    parseConfig(['--address', 'x:2', '--token', 'u', '--name', 'me'], { ARENA_ADDRESS: 'h:1', ARENA_TOKEN: 't' }),
    { address: 'x:2', token: 'u', name: 'me', maxTables: 64, batches: false, reconnect: true, reconnectS: 60 },
  );
  assert.throws(() => parseConfig([], {}), /address/);
  assert.throws(() => parseConfig(['--address', 'h:1'], {}), /token/);
});

test('--max-tables / ARENA_MAX_TABLES and --batches / ARENA_BATCHES; arguments win', () => {
  const env = { ARENA_ADDRESS: 'h:1', ARENA_TOKEN: 't' };
  const pick = ({ maxTables, batches }) => ({ maxTables, batches });
  assert.deepEqual(pick(parseConfig(['--max-tables', '8', '--batches'], env)), { maxTables: 8, batches: true });
  assert.deepEqual(pick(parseConfig([], { ...env, ARENA_MAX_TABLES: '4', ARENA_BATCHES: '1' })), {
    maxTables: 4, batches: true,
  });
  assert.deepEqual(pick(parseConfig(['--max-tables', '1'], { ...env, ARENA_MAX_TABLES: '4', ARENA_BATCHES: '0' })), {
    maxTables: 1, batches: false,
  });
  for (const bad of ['0', '-3', '2.5', 'many', '']) {
    assert.throws(() => parseConfig(['--max-tables', bad], env), /max-tables/, bad);
  }
  assert.throws(() => parseConfig([], { ...env, ARENA_MAX_TABLES: 'x' }), /ARENA_MAX_TABLES/);
});

test('--no-reconnect / ARENA_RECONNECT=0 and --reconnect-s / ARENA_RECONNECT_S; arguments win', () => {
  const env = { ARENA_ADDRESS: 'h:1', ARENA_TOKEN: 't' };
  const pick = ({ reconnect, reconnectS }) => ({ reconnect, reconnectS });
  assert.deepEqual(pick(parseConfig(['--no-reconnect'], env)), { reconnect: false, reconnectS: 60 });
  assert.deepEqual(pick(parseConfig([], { ...env, ARENA_RECONNECT: '0', ARENA_RECONNECT_S: '2.5' })), {
    reconnect: false, reconnectS: 2.5,
  });
  const both = { ...env, ARENA_RECONNECT: '1', ARENA_RECONNECT_S: '3' };
  assert.deepEqual(pick(parseConfig(['--reconnect-s', '9'], both)), { reconnect: true, reconnectS: 9 });
  assert.throws(() => parseConfig([], { ...env, ARENA_RECONNECT: 'maybe' }), /ARENA_RECONNECT/);
  for (const bad of ['0', '-1', 'soon', '']) {
    assert.throws(() => parseConfig(['--reconnect-s', bad], env), /reconnect-s/, bad);
  }
});

test('a broken stream is worth a new one; a refusal is not', () => {
  for (const code of ['UNAVAILABLE', 'CANCELLED', 'INTERNAL', 'RESOURCE_EXHAUSTED']) {
    assert.equal(worthANewStream(grpc.status[code]), true, code);
  }
  for (const code of ['OK', 'UNAUTHENTICATED', 'ALREADY_EXISTS', 'FAILED_PRECONDITION', 'INVALID_ARGUMENT']) {
    assert.equal(worthANewStream(grpc.status[code]), false, code);
  }
});

test('toView turns 64-bit strings into numbers and keeps request_id exact', () => {
  const v = toView({
    table_id: 't0', hand_id: 'h', request_id: '18446744073709551615', seat: 1, hole_cards: ['As', 'Kd'], board: [],
    street: 'STREET_PREFLOP', seats: [{ seat: 1, stack: '9950', bet: '50', committed: '50' }], pots: [],
    legal: { can_call: true, call_amount: '50', can_raise: true, min_raise_to: '200', max_raise_to: '10000' },
    history: [{ kind: 'EVENT_KIND_POST_SMALL_BLIND', seat: 1, amount: '50' }],
  });
  assert.equal(v.request_id, '18446744073709551615');
  assert.equal(v.legal.min_raise_to, 200);
  assert.equal(v.seats[0].stack, 9950);
  assert.equal(v.history[0].amount, 50);
});

// ---------------------------------------------------------------------------------------------------------------
// The real bot process against a fake referee

const TABLE_CONFIG = {
  num_seats: 2,
  structure: 'STRUCTURE_NO_LIMIT',
  small_blind: 50,
  big_blind: 100,
  starting_stack: 10000,
  reveal_all_at_showdown: true,
};

function seats(s0, s1) {
  return [
    { seat: 0, name: 'js-caller', status: 'SEAT_STATUS_ACTIVE', ...s0 },
    { seat: 1, name: 'fake', status: 'SEAT_STATUS_ACTIVE', ...s1 },
  ];
}

const PREFLOP_REQUEST = {
  table_id: 't0',
  hand_id: 'm1-t0-h1',
  request_id: 1,
  seat: 0,
  hole_cards: ['As', 'Ad'],
  button: 0,
  street: 'STREET_PREFLOP',
  seats: seats({ stack: 9950, bet: 50, committed: 50 }, { stack: 9900, bet: 100, committed: 100 }),
  pots: [{ amount: 150, eligible_seats: [0, 1] }],
  legal: OPEN_LEGAL,
  clock: { action_ms_left: 1000, bank_ms_left: 30000 },
  history: [
    { kind: 'EVENT_KIND_POST_SMALL_BLIND', seat: 0, street: 'STREET_PREFLOP', amount: 50 },
    { kind: 'EVENT_KIND_POST_BIG_BLIND', seat: 1, street: 'STREET_PREFLOP', amount: 100 },
    { kind: 'EVENT_KIND_DEAL_HOLE', seat: 1, street: 'STREET_PREFLOP' },
    { kind: 'EVENT_KIND_DEAL_HOLE', seat: 0, street: 'STREET_PREFLOP', cards: ['As', 'Ad'] },
  ],
  config: TABLE_CONFIG,
};

const FLOP_REQUEST = {
  table_id: 't0',
  hand_id: 'm1-t0-h2',
  request_id: '9007199254740993', // above 2^53: must be echoed exactly
  seat: 1,
  hole_cards: ['7h', '2c'],
  board: ['Kd', '9s', '4c'],
  button: 0,
  street: 'STREET_FLOP',
  seats: seats({ stack: 9800, bet: 0, committed: 200 }, { stack: 9800, bet: 0, committed: 200 }),
  pots: [{ amount: 400, eligible_seats: [0, 1] }],
  legal: { can_fold: true, can_check: true, can_raise: true, min_raise_to: 100, max_raise_to: 9800 },
  clock: { action_ms_left: 1000, bank_ms_left: 29000 },
  history: [],
  config: TABLE_CONFIG,
};

const MATCH_END = {
  match_id: 'm1',
  reason: 'MATCH_END_REASON_COMPLETED',
  results: [
    { seat: 0, name: 'js-caller', net_chips: 0, hands_played: 2, is_you: true },
    { seat: 1, name: 'fake', net_chips: 0, hands_played: 2 },
  ],
};

/**
 * Starts a fake referee on 127.0.0.1:0. `script(call, received)` is called with the server side of each Play
 * stream; it receives every BotMessage through `next()` (a promise of the next message).
 */
async function startFakeReferee(script) {
  const pkg = loadArenaPackage();
  const server = new grpc.Server();
  const done = [];
  server.addService(pkg.arena.v1.BotService.service, {
    Play(call) {
      const queue = [];
      const waiters = [];
      call.on('data', (m) => (waiters.length ? waiters.shift()(m) : queue.push(m)));
      call.on('error', () => {});
      const next = (ms = 5000) =>
        new Promise((resolve, reject) => {
          if (queue.length) return resolve(queue.shift());
          const timer = setTimeout(() => reject(new Error('timed out waiting for the bot')), ms);
          waiters.push((m) => {
            clearTimeout(timer);
            resolve(m);
          });
          return undefined;
        });
      done.push(script(call, next));
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port, server, done };
}

/** Runs bot.js as a child process; resolves with { code, stderr }. */
function runBot(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BOT_JS, ...args], {
      env: { ...process.env, ARENA_ADDRESS: '', ARENA_TOKEN: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bot did not exit; stderr:\n${stderr}`));
    }, 20000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

test('bot.js plays a match against a fake referee: Join, two Actions, exit 0 on MatchEnd', async () => {
  const received = [];
  const ref = await startFakeReferee(async (call, next) => {
    received.push(await next());
    call.write({
      welcome: {
        match_id: 'm1', seat: 0, table_id: 't0', config: TABLE_CONFIG, protocol_version: 1, hands_total: 2,
        clock_policy: { per_action_ms: 1000, time_bank_ms: 30000, max_retries: 2, max_violations: 3 },
      },
    });
    call.write({
      hand_start: {
        table_id: 't0', hand_id: 'm1-t0-h1', hand_number: 1, button: 0, seat: 0, hole_cards: ['As', 'Ad'],
        seats: PREFLOP_REQUEST.seats,
      },
    });
    call.write({ action_request: PREFLOP_REQUEST });
    received.push(await next());
    call.write({ hand_end: { table_id: 't0', hand_id: 'm1-t0-h1', board: [], payoffs: [{ seat: 0, net: 100 }] } });
    call.write({ action_request: FLOP_REQUEST });
    received.push(await next());
    call.write({ match_end: MATCH_END });
    call.end();
  });
  try {
    const { code, stderr } = await runBot(['--address', `127.0.0.1:${ref.port}`, '--token', 'tok-1', '--name', 'tester']);
    await Promise.all(ref.done);
    assert.equal(code, 0, stderr);

    const [join, first, second] = received;
    assert.equal(join.msg, 'join');
    assert.equal(join.join.token, 'tok-1');
    assert.equal(join.join.bot_name, 'tester');
    assert.equal(join.join.protocol_version, 1);
    assert.equal(join.join.language, 'javascript');
    assert.equal(join.join.max_tables, 64);
    assert.equal(join.join.batches, false);

    assert.equal(first.msg, 'action');
    assert.deepEqual(first.action, {
      table_id: 't0', hand_id: 'm1-t0-h1', request_id: '1', kind: 'ACTION_KIND_RAISE', amount: '200',
      policy: [], // the bot plays its own actions: no mixed action (Action.policy)
      comment: 'premium hand: raise', // why, for the records (Action.comment)
    });
    assert.equal(second.msg, 'action');
    assert.deepEqual(second.action, {
      table_id: 't0', hand_id: 'm1-t0-h2', request_id: '9007199254740993', kind: 'ACTION_KIND_CHECK', amount: '0',
      policy: [], comment: 'no made hand: check',
    });
    assert.match(stderr, /match m1 over/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('bot.js falls back to a safe action after ActionRejected and reads ARENA_* from the environment', async () => {
  const received = [];
  const ref = await startFakeReferee(async (call, next) => {
    received.push(await next());
    call.write({ welcome: { match_id: 'm2', seat: 0, table_id: 't0', config: TABLE_CONFIG } });
    call.write({ action_request: PREFLOP_REQUEST });
    received.push(await next());
    call.write({
      action_rejected: {
        table_id: 't0', hand_id: 'm1-t0-h1', request_id: 1, rule: 'R7.2', message: 'test rejection', retries_left: 1,
      },
    });
    received.push(await next());
    call.end(); // the referee ends the stream without MatchEnd: still a clean exit
  });
  try {
    const { code, stderr } = await runBot([], { ARENA_ADDRESS: `127.0.0.1:${ref.port}`, ARENA_TOKEN: 'tok-env' });
    await Promise.all(ref.done);
    assert.equal(code, 0, stderr);
    assert.equal(received[0].join.token, 'tok-env');
    assert.equal(received[0].join.bot_name, 'js-caller');
    assert.equal(received[1].action.kind, 'ACTION_KIND_RAISE');
    assert.deepEqual(received[2].action, {
      table_id: 't0', hand_id: 'm1-t0-h1', request_id: '1', kind: 'ACTION_KIND_CALL', amount: '0', policy: [],
      comment: '', // the safe action after a rejection says nothing
    });
    assert.match(stderr, /R7\.2/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('bot.js with --max-tables 3 --batches answers a RefereeBatch of three tables with one ActionBatch', async () => {
  const received = [];
  const onTable = (table, id) => ({ ...FLOP_REQUEST, table_id: table, hand_id: `m3-${table}-h1`, request_id: id });
  const ref = await startFakeReferee(async (call, next) => {
    received.push(await next());
    call.write({
      welcome: { match_id: 'm3', seat: 1, table_id: 't0', config: TABLE_CONFIG, tables: 3, batches: true },
    });
    const requests = [onTable('t2', 7), onTable('t0', 5), onTable('t1', 6)];
    call.write({ batch: { messages: requests.map((r) => ({ action_request: r })) } });
    received.push(await next());
    call.write({ batch: { messages: [{ action_request: onTable('t1', 8) }] } });
    received.push(await next());
    call.write({
      batch: {
        messages: ['t0', 't1', 't2'].map((t) => ({ hand_end: { table_id: t, hand_id: `m3-${t}-h1`, board: [] } }))
          .concat([{ match_end: MATCH_END }]),
      },
    });
    call.end();
  });
  try {
    const args = ['--address', `127.0.0.1:${ref.port}`, '--token', 'tok', '--max-tables', '3'];
    const { code, stderr } = await runBot(args, { ARENA_BATCHES: '1' });
    await Promise.all(ref.done);
    assert.equal(code, 0, stderr);
    const [join, batch, single] = received;
    assert.equal(join.join.max_tables, 3);
    assert.equal(join.join.batches, true);
    assert.equal(batch.msg, 'actions');
    assert.deepEqual(
      batch.actions.actions.map((a) => [a.table_id, a.hand_id, a.request_id, a.kind]),
      [
        ['t2', 'm3-t2-h1', '7', 'ACTION_KIND_CHECK'],
        ['t0', 'm3-t0-h1', '5', 'ACTION_KIND_CHECK'],
        ['t1', 'm3-t1-h1', '6', 'ACTION_KIND_CHECK'],
      ],
    );
    assert.equal(single.msg, 'action', 'one answer goes as a plain Action');
    assert.equal(single.action.request_id, '8');
    assert.match(stderr, /3 table\(s\) at once, batched/);
    assert.match(stderr, /match m1 over/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('bot.js exits non-zero when it has no address or token', async () => {
  const { code, stderr } = await runBot([], {});
  assert.notEqual(code, 0);
  assert.match(stderr, /ARENA_ADDRESS/);
});

// ---------------------------------------------------------------------------------------------------------------
// After a broken stream

const WELCOME = {
  match_id: 'm1', seat: 0, table_id: 't0', config: TABLE_CONFIG, protocol_version: 1, hands_total: 1,
  clock_policy: { per_action_ms: 1000, time_bank_ms: 0, max_retries: 2, max_violations: 0 },
};

/**
 * A fake referee whose first `breaks` streams break after the Welcome and one answered request (UNAVAILABLE: what a
 * connection closed by the referee's keepalive looks like); the next plays a request and MatchEnd. `joins` gets every
 * stream's first message.
 */
function breakingReferee(breaks, joins) {
  let streams = 0;
  return startFakeReferee(async (call, next) => {
    streams += 1;
    joins.push(await next());
    call.write({ welcome: WELCOME });
    call.write({ action_request: PREFLOP_REQUEST });
    await next();
    if (streams <= breaks) {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'keepalive watchdog timeout' });
      return;
    }
    call.write({ match_end: MATCH_END });
    call.end();
  });
}

test('bot.js joins again with the same Join after a broken stream and plays on to MatchEnd: exit 0', async () => {
  const joins = [];
  const ref = await breakingReferee(2, joins);
  try {
    const args = ['--address', `127.0.0.1:${ref.port}`, '--token', 'tok-9', '--max-tables', '2', '--batches'];
    const { code, stderr } = await runBot(args, {});
    assert.equal(code, 0, stderr);
    assert.equal(joins.length, 3);
    assert.equal(joins[0].join.token, 'tok-9');
    assert.equal(joins[0].join.max_tables, 2);
    assert.equal(joins[0].join.batches, true);
    assert.deepEqual(joins[1], joins[0]);
    assert.deepEqual(joins[2], joins[0]);
    const broke = stderr.match(/broke before MatchEnd \(UNAVAILABLE: keepalive watchdog timeout\); reconnecting/g);
    assert.equal(broke && broke.length, 2, stderr);
    const rejoined = stderr.match(/reconnected: rejoined match m1 table t0 as seat 0 [\d.]+ s after the stream broke/g);
    assert.equal(rejoined && rejoined.length, 2, stderr);
    assert.match(stderr, /match m1 over/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('bot.js with reconnecting off (ARENA_RECONNECT=0, --no-reconnect) leaves at a broken stream: exit 1', async () => {
  const joins = [];
  const ref = await breakingReferee(2, joins);
  try {
    const address = `127.0.0.1:${ref.port}`;
    const byEnv = await runBot(['--address', address, '--token', 't'], { ARENA_RECONNECT: '0' });
    const byArg = await runBot(['--address', address, '--token', 't', '--no-reconnect'], {});
    for (const { code, stderr } of [byEnv, byArg]) {
      assert.equal(code, 1, stderr);
      assert.match(stderr, /broke before MatchEnd \(UNAVAILABLE: keepalive watchdog timeout\); not joining again/);
    }
    assert.equal(joins.length, 2); // one stream each
  } finally {
    ref.server.forceShutdown();
  }
});

test('bot.js does not try forever a referee that welcomes and fails every stream before any request', async () => {
  let streams = 0;
  const ref = await startFakeReferee(async (call, next) => {
    streams += 1;
    await next();
    call.write({ welcome: WELCOME });
    call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'keepalive watchdog timeout' });
  });
  try {
    const args = ['--address', `127.0.0.1:${ref.port}`, '--token', 't', '--reconnect-s', '1.5'];
    const { code, stderr } = await runBot(args, {});
    assert.equal(code, 1, stderr);
    assert.match(stderr, /tries to join again in 1.5 s failed \(last: UNAVAILABLE: keepalive watchdog timeout\)/);
    assert.match(stderr, /reconnect try 1 failed \(UNAVAILABLE: keepalive watchdog timeout\): it broke again before/);
    // tries at about 0.25 s, 0.75 s and 1.55 s after the break (+-20% each), the last one at the end of the 1.5 s
    // if it has not passed; when the waits all come out short (about 1 in 100), the third lands before 1.5 s and a
    // fourth follows at the end of the time allowed
    const tries = Number((stderr.match(/and (\d+) tries to join again/) || [])[1]);
    assert.ok(tries >= 2 && tries <= 4, `${tries} tries\n${stderr}`);
    assert.equal(streams, tries + 1, `${streams} streams for ${tries} tries\n${stderr}`); // the first, then one a try
  } finally {
    ref.server.forceShutdown();
  }
});

test('bot.js with a bad token exits with 1 at once, with the reason, and never joins again', async () => {
  const joins = [];
  const ref = await startFakeReferee(async (call, next) => {
    joins.push(await next());
    call.write({ error: { code: 'ERROR_CODE_BAD_TOKEN', message: 'unknown token: no seat has it', fatal: true } });
    call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'unknown token' });
  });
  try {
    const { code, stderr } = await runBot(['--address', `127.0.0.1:${ref.port}`, '--token', 'bad'], {});
    assert.equal(code, 1, stderr);
    assert.match(stderr, /referee error ERROR_CODE_BAD_TOKEN: unknown token: no seat has it \[fatal\]/);
    assert.doesNotMatch(stderr, /reconnect/);
    assert.equal(joins.length, 1);
  } finally {
    ref.server.forceShutdown();
  }
});
