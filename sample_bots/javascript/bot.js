#!/usr/bin/env node
'use strict';
// Sample arena bot in Node.js. Speaks arena.v1 (proto/arena/v1/bot.proto) over one BotService.Play stream:
// Join -> Welcome -> (HandStart, ActionRequest -> Action, ..., HandEnd)* -> MatchEnd, on up to --max-tables tables
// at once (each message names its table_id), optionally with messages packed in batches (--batches).
// With a league's API key instead of a match token (--key, ARENA_KEY), it plays a league (`arena host`): one stream
// carries match after match (Welcome ... MatchEnd, again and again), and when the host goes away the bot joins again.
// The .proto files are loaded at run time from ../../proto; nothing is generated.
//
// A match's stream that breaks before its MatchEnd (the referee's keepalive closed it while the process was stopped,
// the connection was cut) is joined again with the same token and the same Join, and play goes on: after 0.25 s,
// then twice as long after each failed try up to 5 s, for at most 60 s after the break (--reconnect-s). The referee's
// MatchEnd and its fatal Errors (a bad token, a newer stream with the token) are never retried.
//
// Usage: node bot.js [--address HOST:PORT] [--token TOKEN | --key KEY] [--name NAME] [--bot-version V]
//                    [--max-tables N] [--batches] [--no-reconnect] [--reconnect-s S]
//        (or ARENA_ADDRESS / ARENA_TOKEN / ARENA_KEY / ARENA_BOT_VERSION / ARENA_MAX_TABLES / ARENA_BATCHES=1 /
//        ARENA_RECONNECT=0 / ARENA_RECONNECT_S in the environment; arguments win, and a token wins over a key)
// Logs go to stderr. Exit status: 0 after MatchEnd (reconnects or not) or when the referee ends the stream, 1 on
// errors (a fatal Error, a broken stream that could not be joined again); a league bot plays until the host ends its
// stream with a fatal Error (a revoked or replaced key, a kick): then 1.

const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const strategy = require('./strategy');

const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const PROTOCOL_VERSION = 1;
const BOT_VERSION = require('./package.json').version;
const COMMENT_MAX = 280; // characters of a decision comment (Action.comment); the referee keeps no more
const CONNECT_TIMEOUT_MS = 10000;
// After MatchEnd we close our side and wait this long for the referee to close its side.
const LINGER_MS = 2000;
// How many tables the bot offers to play at once unless told otherwise (Join.max_tables; the referee may give fewer).
const DEFAULT_MAX_TABLES = 64;
// A league bot whose stream ended waits this long before joining again, twice as long after each failed try, at most
// RECONNECT_MAX_MS, each wait varied by +-20% (so that the bots of a restarted host do not all come back at once);
// back to the first wait after a stream on which it was welcomed to a match.
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 30000;
// A match's stream that broke is joined again after MATCH_RETRY_FIRST_MS, twice as long after each failed try up to
// MATCH_RETRY_MAX_MS (+-20%), until DEFAULT_RECONNECT_S seconds after the break (--reconnect-s, ARENA_RECONNECT_S).
const MATCH_RETRY_FIRST_MS = 250;
const MATCH_RETRY_MAX_MS = 5000;
const DEFAULT_RECONNECT_S = 60;
// Statuses a new stream cannot change: the referee refused this bot, its Join or what it sent (it sends a fatal Error
// first, which ends the match by itself; these cover an Error that was lost). Any other failure is a broken stream.
const FINAL_STATUSES = new Set([
  grpc.status.UNAUTHENTICATED, // an unknown token
  grpc.status.ALREADY_EXISTS, // a newer stream joined with the token: that one plays
  grpc.status.PERMISSION_DENIED,
  grpc.status.FAILED_PRECONDITION, // an unsupported protocol version, or no Join first
  grpc.status.INVALID_ARGUMENT, // a message the referee could not read
  grpc.status.UNIMPLEMENTED,
  grpc.status.NOT_FOUND,
]);
// A league bot's channel: try to connect again quickly while the host is down, and ping a stream that may stay
// open for hours so that a dead connection is noticed (the host accepts pings 5 s apart or more).
const LEAGUE_CHANNEL_OPTIONS = Object.freeze({
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.keepalive_time_ms': 10000,
  'grpc.keepalive_timeout_ms': 5000,
});

// Loader options: snake_case field names as in the .proto, enums as their names, 64-bit integers as decimal
// strings (so a request_id is echoed exactly), unset scalars filled with defaults, and `msg` naming the oneof set.
const LOADER_OPTIONS = Object.freeze({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
});

/** Loads arena.v1 from the .proto files; returns the grpc package object (pkg.arena.v1.BotService, ...). */
function loadArenaPackage() {
  const definition = protoLoader.loadSync(['arena/v1/bot.proto'], LOADER_OPTIONS);
  return grpc.loadPackageDefinition(definition);
}

function log(message) {
  process.stderr.write(`[js-bot] ${message}\n`);
}

/**
 * Reads --address/--token/--key/--name/--bot-version/--max-tables/--batches (arguments win) and ARENA_ADDRESS/
 * ARENA_TOKEN/ARENA_KEY/ARENA_BOT_VERSION/ARENA_MAX_TABLES/ARENA_BATCHES. Throws on missing or bad values.
 * With a key and no token the result has `league: true` and the key as its `token` (it goes in Join.token); a
 * version given has `version` (otherwise package.json's is used).
 */
function parseConfig(argv, env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      address: { type: 'string' },
      token: { type: 'string' },
      key: { type: 'string' },
      name: { type: 'string' },
      'bot-version': { type: 'string' },
      'max-tables': { type: 'string' },
      batches: { type: 'boolean' },
      'no-reconnect': { type: 'boolean' },
      'reconnect-s': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const address = (values.address || env.ARENA_ADDRESS || '').replace(/^(grpc|http):\/\//, '');
  const token = values.token || env.ARENA_TOKEN || '';
  const key = token ? '' : values.key || env.ARENA_KEY || ''; // a match's token wins over a league's key
  const version = values['bot-version'] || env.ARENA_BOT_VERSION || '';
  const name = values.name || 'js-caller';
  const tablesText = values['max-tables'] ?? (env.ARENA_MAX_TABLES || String(DEFAULT_MAX_TABLES));
  const maxTables = Number(tablesText);
  const batches = values.batches ?? /^(1|true|yes|on)$/i.test(env.ARENA_BATCHES || '');
  if (!address) throw new Error('no referee address: pass --address HOST:PORT or set ARENA_ADDRESS');
  if (!token && !key) {
    throw new Error(
      'no token: pass --token TOKEN or set ARENA_TOKEN for a match (the runner gives each bot its own), ' +
        'or --key KEY / ARENA_KEY for a league (arena bots add prints it)',
    );
  }
  if (!/^\d+$/.test(tablesText.trim()) || maxTables < 1 || maxTables > 0xffffffff) {
    throw new Error(`--max-tables / ARENA_MAX_TABLES must be a whole number from 1, not ${JSON.stringify(tablesText)}`);
  }
  const reconnectText = (env.ARENA_RECONNECT || '').trim();
  if (reconnectText && !/^(1|true|yes|on|0|false|no|off)$/i.test(reconnectText)) {
    throw new Error(
      `ARENA_RECONNECT must be 1 (join again after a broken stream) or 0, not ${JSON.stringify(reconnectText)}`,
    );
  }
  const reconnect = !values['no-reconnect'] && !/^(0|false|no|off)$/i.test(reconnectText);
  const secondsText = values['reconnect-s'] ?? (env.ARENA_RECONNECT_S || String(DEFAULT_RECONNECT_S));
  const reconnectS = Number(secondsText);
  if (!/^\s*\d*\.?\d+\s*$/.test(secondsText) || !(reconnectS > 0)) {
    throw new Error(
      `--reconnect-s / ARENA_RECONNECT_S must be seconds, more than 0, not ${JSON.stringify(secondsText)}`,
    );
  }
  const config = { address, token: token || key, name, maxTables, batches, reconnect, reconnectS };
  if (key) config.league = true;
  if (version) config.version = version;
  return config;
}

/** 64-bit integers arrive as strings (longs: String); chip counts fit in a double, so convert them. */
function num(value) {
  if (value === null || value === undefined || value === '') return 0;
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

/** Turns a decoded ActionRequest into the view strategy.js expects: the same fields, chips as numbers. */
function toView(req) {
  const legal = req.legal || {};
  return {
    table_id: req.table_id,
    hand_id: req.hand_id,
    request_id: req.request_id,
    seat: req.seat,
    hole_cards: req.hole_cards || [],
    board: req.board || [],
    button: req.button,
    street: req.street,
    seats: (req.seats || []).map((s) => ({
      seat: s.seat,
      name: s.name,
      stack: num(s.stack),
      bet: num(s.bet),
      committed: num(s.committed),
      status: s.status,
    })),
    pots: (req.pots || []).map((p) => ({ amount: num(p.amount), eligible_seats: p.eligible_seats || [] })),
    legal: {
      can_fold: Boolean(legal.can_fold),
      can_check: Boolean(legal.can_check),
      can_call: Boolean(legal.can_call),
      call_amount: num(legal.call_amount),
      can_raise: Boolean(legal.can_raise),
      min_raise_to: num(legal.min_raise_to),
      max_raise_to: num(legal.max_raise_to),
    },
    clock: req.clock
      ? { action_ms_left: num(req.clock.action_ms_left), bank_ms_left: num(req.clock.bank_ms_left) }
      : null,
    history: (req.history || []).map((e) => ({
      kind: e.kind,
      seat: e.seat,
      street: e.street,
      amount: num(e.amount),
      cards: e.cards || [],
      by_timeout: Boolean(e.by_timeout),
      pot_index: e.pot_index,
    })),
    config: req.config,
  };
}

function describe(action) {
  const kind = action.kind.replace('ACTION_KIND_', '');
  return action.kind === strategy.ActionKind.RAISE ? `${kind} to ${action.amount}` : kind;
}

/** The strategy's action for a view, made legal; a safe one if the strategy throws. */
function decideSafely(view) {
  try {
    return strategy.ensureLegal(strategy.decide(view), view.legal);
  } catch (err) {
    log(`strategy failed (${err.message}); playing safe`);
    return strategy.safeAction(view.legal);
  }
}

/** Packs the Actions answering one RefereeMessage into what to send: nothing, one Action, or one ActionBatch. */
function pack(actions) {
  if (actions.length === 0) return [];
  if (actions.length === 1) return [{ action: actions[0] }];
  return [{ actions: { actions } }];
}

/**
 * The bot's side of one stream, without I/O: give `handle()` every RefereeMessage as it comes and send the
 * BotMessages it returns. It keeps, per table_id, the hand being played, our seat in it and the request that is
 * open there (to answer again after an ActionRejected). A RefereeBatch is handled message by message, in order,
 * and all the Actions it calls for go back together in one ActionBatch.
 *
 * A match's stream carries one match. A league's (`league: true`) carries one match after another, each from its
 * Welcome to its MatchEnd: a Welcome that comes while no other match is being played starts afresh (the last
 * match's tables and counts are dropped), and each match's end is one line of the log.
 */
class Session {
  constructor({ decide = decideSafely, logger = log, league = false, brokeAt = null } = {}) {
    this.decide = decide;
    this.log = logger;
    this.league = league;
    this.brokeAt = brokeAt; // a stream that takes the seat back: when the last one broke (Date.now())
    this.tables = new Map(); // table_id -> { handId, seat, open: { view, tries } | null }
    this.seat = null; // Welcome.seat, for tables we have no HandStart from
    this.ended = false; // MatchEnd came (in a league: and no Welcome since)
    this.fatal = false; // a fatal Error came
    this.fatalError = ''; // what it said, which stops a league bot ('' for a rate limit: it joins again later)
    this.welcomed = false; // a Welcome came
    this.matches = 0; // MatchEnds heard
    this.playing = new Set(); // match_ids welcomed and not ended yet
    this.answered = 0; // ActionRequests answered
    this.batches = 0; // RefereeBatches received
    this.actionBatches = 0; // ActionBatches sent
  }

  /** Forgets the last match: its tables and counts (a league's next match begins). */
  resetMatch() {
    this.tables.clear();
    this.seat = null;
    this.answered = 0;
    this.batches = 0;
    this.actionBatches = 0;
  }

  /** The BotMessages answering one RefereeMessage (a RefereeBatch included). */
  handle(message) {
    const replies = pack(this.actionsFor(message));
    if (message.msg === 'batch') this.batches += 1;
    if (replies.length && replies[0].actions) this.actionBatches += 1;
    return replies;
  }

  table(tableId) {
    let t = this.tables.get(tableId);
    if (!t) {
      t = { handId: '', seat: this.seat, open: null };
      this.tables.set(tableId, t);
    }
    return t;
  }

  /** The Actions one message calls for: one for an ActionRequest or an ActionRejected, all of a batch's. */
  actionsFor(message) {
    switch (message.msg) {
      case 'batch':
        return (message.batch.messages || []).flatMap((m) => this.actionsFor(m));
      case 'welcome':
        this.onWelcome(message.welcome);
        return [];
      case 'hand_start': {
        const h = message.hand_start;
        Object.assign(this.table(h.table_id), { handId: h.hand_id, seat: h.seat, open: null });
        this.log(
          `${h.table_id} hand ${h.hand_id} (#${h.hand_number}) seat ${h.seat} button ${h.button} ` +
            `cards [${h.hole_cards.join(' ')}]`,
        );
        return [];
      }
      case 'action_request':
        return [this.onActionRequest(message.action_request)];
      case 'action_rejected':
        return this.onActionRejected(message.action_rejected);
      case 'hand_end': {
        const h = message.hand_end;
        const t = this.tables.get(h.table_id);
        this.tables.delete(h.table_id);
        const mine = (h.payoffs || []).find((p) => p.seat === (t ? t.seat : this.seat));
        this.log(`${h.table_id} hand ${h.hand_id} over: board [${h.board.join(' ')}], net ${mine ? mine.net : '?'}`);
        return [];
      }
      case 'match_end':
        this.onMatchEnd(message.match_end);
        return [];
      case 'error':
        this.onError(message.error);
        return [];
      default:
        this.log(`ignoring unknown message ${JSON.stringify(message).slice(0, 200)}`);
        return [];
    }
  }

  onWelcome(w) {
    if (this.league) {
      if (this.playing.size === 0) this.resetMatch();
      this.playing.add(w.match_id);
      this.ended = false;
    }
    this.welcomed = true;
    this.seat = w.seat;
    if (this.brokeAt !== null) {
      const after = ((Date.now() - this.brokeAt) / 1000).toFixed(1);
      this.log(`reconnected: rejoined match ${w.match_id} table ${w.table_id} as seat ${w.seat} ${after} s after the ` +
        'stream broke');
      return;
    }
    const c = w.config || {};
    this.log(
      `joined match ${w.match_id} table ${w.table_id} as seat ${w.seat}: ` +
        `${c.num_seats} seats, ${c.structure}, blinds ${c.small_blind}/${c.big_blind}, stack ${c.starting_stack}; ` +
        `${w.tables || 1} table(s) at once${w.batches ? ', batched' : ''}`,
    );
  }

  onActionRequest(req) {
    const view = toView(req);
    const action = this.decide(view);
    Object.assign(this.table(view.table_id), { handId: view.hand_id, open: { view, tries: 0 } });
    this.answered += 1;
    this.log(
      `${view.table_id} hand ${view.hand_id} ${view.street.replace('STREET_', '').toLowerCase()} ` +
        `[${view.hole_cards.join(' ')}] board [${view.board.join(' ')}] -> ${describe(action)}`,
    );
    return toAction(view, action);
  }

  /** After a rejection: check if free, else call, else fold; then fold (or all-in); then let the referee act. */
  onActionRejected(rej) {
    this.log(`${rej.table_id} action rejected (${rej.rule}): ${rej.message}; ${rej.retries_left} retries left`);
    const t = this.tables.get(rej.table_id);
    const open = t && t.open;
    if (!open || open.view.hand_id !== rej.hand_id || open.view.request_id !== String(rej.request_id)) {
      this.log(`rejection for unknown request ${rej.table_id}/${rej.hand_id}/${rej.request_id}; ignored`);
      return [];
    }
    open.tries += 1;
    const { legal } = open.view;
    let action;
    if (open.tries === 1) {
      action = strategy.safeAction(legal);
    } else if (open.tries === 2) {
      action = { kind: legal.can_fold ? strategy.ActionKind.FOLD : strategy.ActionKind.ALL_IN, amount: 0 };
    } else {
      this.log('giving up on this request; the referee will act for us');
      t.open = null;
      return [];
    }
    this.log(`retrying with ${describe(action)}`);
    return [toAction(open.view, action)];
  }

  onMatchEnd(m) {
    this.ended = true;
    this.matches += 1;
    if (this.league) {
      this.playing.delete(m.match_id);
      const results = m.results || [];
      const me = results.find((r) => r.is_you);
      const others = results.filter((r) => !r.is_you).map((r) => r.name);
      this.log(
        `match ${m.match_id} against ${others.join(', ') || '?'} over (${m.reason})` +
          `${m.message ? `: ${m.message}` : ''}; ` +
          (me
            ? `net ${me.net_chips} over ${me.hands_played} hands, ${me.violations} violations` +
              `${me.forfeited ? ', forfeited' : ''}`
            : 'no result of ours') +
          `; answered ${this.answered} requests; ${this.matches} match(es) on this stream; waiting for the next one`,
      );
      return;
    }
    this.log(
      `match ${m.match_id} over (${m.reason})${m.message ? `: ${m.message}` : ''}; answered ${this.answered} ` +
        `requests; ${this.batches} batches in, ${this.actionBatches} action batches out`,
    );
    for (const r of m.results || []) {
      this.log(
        `  ${r.is_you ? '*' : ' '} seat ${r.seat} ${r.name}: net ${r.net_chips} over ${r.hands_played} hands, ` +
          `${r.violations} violations${r.forfeited ? ', forfeited' : ''}`,
      );
    }
  }

  onError(e) {
    this.log(
      `referee error ${e.code}${e.table_id ? ` on ${e.table_id}` : ''}${e.rule ? ` (${e.rule})` : ''}: ` +
        `${e.message}${e.fatal ? ' [fatal]' : ''}`,
    );
    if (e.fatal) {
      this.fatal = true;
      // A rate limit only ends this stream: a league bot joins again later (proto/README.md).
      if (e.code !== 'ERROR_CODE_RATE_LIMITED') this.fatalError = `${e.code}: ${e.message}`;
    }
    // The referee answered this request for us (a timeout): it is no longer open.
    const t = this.tables.get(e.table_id);
    if (t && t.open && t.open.view.request_id === String(e.request_id)) t.open = null;
  }
}

/** The Action message answering `view` with `action`, echoing its table_id, hand_id and request_id. */
function toAction(view, action) {
  return {
    table_id: view.table_id,
    hand_id: view.hand_id,
    request_id: view.request_id, // decimal string, echoed exactly
    kind: action.kind,
    amount: action.kind === strategy.ActionKind.RAISE ? String(action.amount) : '0',
    // Why the bot acted: recorded with the action and shown with the finished hand, never sent to another bot
    ...(typeof action.comment === 'string' && action.comment ? { comment: action.comment.slice(0, COMMENT_MAX) } : {}),
  };
}

/** The Join that opens every stream. */
function joinMessage({ token, name, maxTables, batches, version }) {
  return {
    join: {
      token,
      bot_name: name,
      bot_version: version || BOT_VERSION,
      protocol_version: PROTOCOL_VERSION,
      language: 'javascript',
      max_tables: maxTables,
      batches,
    },
  };
}

/** Whether a stream that ended with `code` (and without MatchEnd or a fatal Error) may be replaced by a new one. */
function worthANewStream(code) {
  return code !== grpc.status.OK && !FINAL_STATUSES.has(code);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with whether the client's channel connects within `ms` milliseconds. */
function ready(client, ms) {
  return new Promise((resolve) => client.waitForReady(new Date(Date.now() + Math.max(0, ms)), (err) => resolve(!err)));
}

/**
 * Plays one match, or with `league` a league's matches (see playLeague). Resolves with the process exit status:
 * 0 after MatchEnd or a clean end of the stream, 1 after a fatal Error or a broken stream that could not be joined
 * again. A stream that breaks before MatchEnd is followed by new ones with the same Join (see rejoin), unless
 * `reconnect` is false.
 */
async function play({ address, token, name, maxTables = DEFAULT_MAX_TABLES, batches = false, version = '',
  league = false, reconnect = true, reconnectS = DEFAULT_RECONNECT_S }) {
  const join = { token, name, maxTables, batches, version };
  if (league) return playLeague({ address, ...join });
  const pkg = loadArenaPackage();
  const client = new pkg.arena.v1.BotService(address, grpc.credentials.createInsecure());
  try {
    if (!(await ready(client, CONNECT_TIMEOUT_MS))) {
      log(`cannot reach the referee at ${address} within ${CONNECT_TIMEOUT_MS / 1000} s`);
      return 1;
    }
    let end = await matchStream(client, join, null);
    while (end.broken) {
      if (!reconnect) {
        log(`the stream broke before MatchEnd (${end.broken}); not joining again: reconnecting is off ` +
          '(--no-reconnect, ARENA_RECONNECT=0)');
        return 1;
      }
      end = await rejoin(client, join, end.broken, reconnectS);
    }
    return end.code;
  } finally {
    client.close();
  }
}

/**
 * After a match's stream broke: new streams with the same Join, MATCH_RETRY_FIRST_MS after the break, then twice as
 * long after each failed try up to MATCH_RETRY_MAX_MS (+-20%), for at most `reconnectS` seconds. Resolves with the
 * end of the first stream that played on (welcomed and asked to act, or told MatchEnd) or ended for good, played to
 * its end; or { code: 1 } after giving up. A stream that breaks again before any request is one more failed try, so
 * that a referee that welcomes and then fails every stream is not tried forever. No wait for the channel between
 * tries: while the referee is away a new call fails at once (UNAVAILABLE), which is one more try.
 */
async function rejoin(client, join, why, reconnectS) {
  const brokeAt = Date.now();
  const budgetMs = reconnectS * 1000;
  log(`the stream broke before MatchEnd (${why}); reconnecting with the same token: first after ` +
    `${MATCH_RETRY_FIRST_MS / 1000} s, then twice as long each time up to ${MATCH_RETRY_MAX_MS / 1000} s, ` +
    `for at most ${reconnectS} s`);
  let wait = MATCH_RETRY_FIRST_MS;
  let tries = 0;
  let last = why;
  for (;;) {
    const left = budgetMs - (Date.now() - brokeAt);
    if (left <= 0) break;
    // a try made at the end of the time allowed is the last one (a clock that read a millisecond short after the
    // sleep once let one more try in after it)
    const pause = wait * (0.8 + 0.4 * Math.random());
    const final = pause >= left;
    await sleep(final ? left : pause);
    wait = Math.min(MATCH_RETRY_MAX_MS, wait * 2);
    tries += 1;
    const end = await matchStream(client, join, brokeAt);
    if (!end.broken || (end.welcomed && end.asked)) return end;
    last = end.broken;
    log(`reconnect try ${tries} failed (${last})${end.welcomed ? ': it broke again before any request' : ''}`);
    if (final) break;
  }
  log(`the stream broke before MatchEnd and ${tries} tries to join again in ${reconnectS} s failed (last: ${last}); ` +
    'exiting');
  return { code: 1, broken: '', welcomed: false, asked: false };
}

/**
 * One stream of a match. Resolves when it is over with { code, broken, welcomed, asked }: the exit status it calls
 * for, why it broke if a new stream may take the seat back ('' otherwise: MatchEnd, a fatal Error, a clean end),
 * whether a Welcome came and whether a request did. `brokeAt`: when the stream it replaces broke (null for the first).
 */
function matchStream(client, join, brokeAt) {
  const call = client.Play();
  const session = new Session({ brokeAt });
  let closing = false;
  return new Promise((resolve) => {
    let finished = false;
    const finish = (code, broken = '') => {
      if (finished) return;
      finished = true;
      resolve({ code, broken, welcomed: session.welcomed, asked: session.answered > 0 });
    };

    call.on('data', (message) => {
      for (const reply of session.handle(message)) call.write(reply);
      if (session.ended && !closing) {
        // MatchEnd came (alone or at the end of a batch): close our side.
        closing = true;
        call.end();
        // If the referee does not close its side promptly, stop waiting.
        setTimeout(() => {
          call.cancel();
          finish(0);
        }, LINGER_MS).unref();
      }
    });

    // The call's final status decides the exit code ('status' comes once, after 'end' or 'error').
    call.on('status', (status) => {
      if (session.ended) {
        log('stream closed after match end');
        finish(0);
      } else if (status.code === grpc.status.OK) {
        log('the referee ended the stream');
        finish(session.fatal ? 1 : 0);
      } else if (!session.fatalError && worthANewStream(status.code)) {
        finish(1, `${grpc.status[status.code]}: ${status.details}`.replace(/: $/, ''));
      } else {
        log(`stream failed: ${grpc.status[status.code]} ${status.details}`);
        finish(1);
      }
    });

    // Errors also arrive as a non-OK 'status'; listening here keeps them from being thrown.
    call.on('error', (err) => {
      if (!session.ended) log(`stream error: ${err.details || err.message}`);
    });

    call.write(joinMessage(join));
  });
}

/**
 * Plays a league (`arena host`) with an API key: one stream carries match after match and stays open at each
 * MatchEnd. When the stream ends (the host went away or restarted: UNAVAILABLE, CANCELLED, or just the end of the
 * stream) or the host cannot be reached, the bot waits and joins again with the same key, RECONNECT_FIRST_MS at
 * first, twice as long each time up to RECONNECT_MAX_MS, +-20%; a stream that got a Welcome starts the waits
 * afresh. It stops only on a fatal Error (a revoked or replaced key, a kick; a rate limit only makes it wait):
 * resolves with 1.
 */
async function playLeague(config) {
  const pkg = loadArenaPackage();
  let backoff = RECONNECT_FIRST_MS;
  let matches = 0;
  for (;;) {
    log(`joining the league at ${config.address} as ${config.name}`);
    const end = await leagueStream(pkg, config);
    matches += end.matches;
    if (end.fatal) {
      log(`the league ended this bot's stream: ${end.fatal} (${matches} matches played); exiting`);
      return 1;
    }
    if (end.welcomed) backoff = RECONNECT_FIRST_MS; // it was playing: the host just went away
    const wait = Math.round(backoff * (0.8 + 0.4 * Math.random()));
    log(`${end.why} (${matches} matches played); joining again in ${(wait / 1000).toFixed(1)} s`);
    await new Promise((resolve) => setTimeout(resolve, wait));
    backoff = Math.min(RECONNECT_MAX_MS, backoff * 2);
  }
}

/**
 * One league stream, on a channel of its own. Resolves when it is over with { why, welcomed, matches, fatal }:
 * why it ended, whether a Welcome came, the matches that ended on it, and the fatal Error's text ('' if none).
 */
function leagueStream(pkg, { address, token, name, maxTables, batches, version }) {
  const client = new pkg.arena.v1.BotService(address, grpc.credentials.createInsecure(), LEAGUE_CHANNEL_OPTIONS);
  const session = new Session({ league: true });
  return new Promise((resolve) => {
    let finished = false;
    let linger = null;
    const finish = (why) => {
      if (finished) return;
      finished = true;
      if (linger) clearTimeout(linger);
      client.close();
      resolve({ why, welcomed: session.welcomed, matches: session.matches, fatal: session.fatalError });
    };

    client.waitForReady(new Date(Date.now() + CONNECT_TIMEOUT_MS), (err) => {
      if (err) {
        finish(`cannot reach the league at ${address}: ${err.message}`);
        return;
      }
      const call = client.Play();
      call.on('data', (message) => {
        for (const reply of session.handle(message)) call.write(reply);
        if (session.fatal && !linger) {
          // The host ends the stream after a fatal Error; if it does not promptly, end it ourselves.
          call.end();
          linger = setTimeout(() => call.cancel(), LINGER_MS);
        }
      });
      // 'status' comes once, after 'end' or 'error'.
      call.on('status', (status) =>
        finish(
          status.code === grpc.status.OK
            ? 'the host ended the stream'
            : `the stream ended: ${grpc.status[status.code]} ${status.details}`.trimEnd(),
        ),
      );
      // Errors also arrive as a non-OK 'status'; listening here keeps them from being thrown.
      call.on('error', () => {});
      call.write(joinMessage({ token, name, maxTables, batches, version }));
    });
  });
}

async function main() {
  let config;
  try {
    config = parseConfig(process.argv.slice(2), process.env);
  } catch (err) {
    log(err.message);
    process.exit(2);
  }
  log(
    `connecting to ${config.address} as ${config.name}, up to ${config.maxTables} table(s) at once` +
      `${config.batches ? ', batched' : ''}${config.league ? ', to play a league with an API key' : ''}`,
  );
  const code = await play(config);
  process.exit(code);
}

if (require.main === module) {
  main().catch((err) => {
    log(`crashed: ${err.stack || err}`);
    process.exit(1);
  });
}

module.exports = {
  loadArenaPackage, parseConfig, toView, Session, play, playLeague, worthANewStream, PROTO_ROOT, LOADER_OPTIONS,
};
