#!/usr/bin/env node
'use strict';
// Sample arena bot in Node.js. Speaks arena.v1 (proto/arena/v1/bot.proto) over one BotService.Play stream:
// Join -> Welcome -> (HandStart, ActionRequest -> Action, ..., HandEnd)* -> MatchEnd.
// The .proto files are loaded at run time from ../../proto; nothing is generated.
//
// Usage: node bot.js [--address HOST:PORT] [--token TOKEN] [--name NAME]
//        (or ARENA_ADDRESS / ARENA_TOKEN in the environment; arguments win)
// Logs go to stderr. Exit status: 0 after MatchEnd or when the referee ends the stream, 1 on errors.

const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const strategy = require('./strategy');

const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const PROTOCOL_VERSION = 1;
const BOT_VERSION = require('./package.json').version;
const CONNECT_TIMEOUT_MS = 10000;
// After MatchEnd we close our side and wait this long for the referee to close its side.
const LINGER_MS = 2000;

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

/** Reads --address/--token/--name (arguments win) and ARENA_ADDRESS/ARENA_TOKEN. Throws on missing values. */
function parseConfig(argv, env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      address: { type: 'string' },
      token: { type: 'string' },
      name: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const address = (values.address || env.ARENA_ADDRESS || '').replace(/^(grpc|http):\/\//, '');
  const token = values.token || env.ARENA_TOKEN || '';
  const name = values.name || 'js-caller';
  if (!address) throw new Error('no referee address: pass --address HOST:PORT or set ARENA_ADDRESS');
  if (!token) throw new Error('no token: pass --token TOKEN or set ARENA_TOKEN');
  return { address, token, name };
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

function requestKey(tableId, handId, requestId) {
  return `${tableId}/${handId}/${requestId}`;
}

function describe(action) {
  const kind = action.kind.replace('ACTION_KIND_', '');
  return action.kind === strategy.ActionKind.RAISE ? `${kind} to ${action.amount}` : kind;
}

/**
 * Plays one match. Resolves with the process exit status: 0 after MatchEnd or a clean end of the stream,
 * 1 after a fatal Error or a broken connection.
 */
function play({ address, token, name }) {
  const pkg = loadArenaPackage();
  const client = new pkg.arena.v1.BotService(address, grpc.credentials.createInsecure());

  return new Promise((resolve) => {
    let finished = false;
    const finish = (code) => {
      if (finished) return;
      finished = true;
      client.close();
      resolve(code);
    };

    const deadline = new Date(Date.now() + CONNECT_TIMEOUT_MS);
    client.waitForReady(deadline, (err) => {
      if (err) {
        log(`cannot reach the referee at ${address}: ${err.message}`);
        finish(1);
        return;
      }
      runStream(client, { token, name }, finish);
    });
  });
}

function runStream(client, { token, name }, finish) {
  const call = client.Play();
  // Requests we answered and may have to answer again after an ActionRejected: key -> { view, tries }.
  const open = new Map();
  let matchEnded = false;
  let fatal = false;
  let seat = null;

  const send = (view, action) => {
    const message = {
      action: {
        table_id: view.table_id,
        hand_id: view.hand_id,
        request_id: view.request_id, // decimal string, echoed exactly
        kind: action.kind,
        amount: action.kind === strategy.ActionKind.RAISE ? String(action.amount) : '0',
      },
    };
    call.write(message);
  };

  const onActionRequest = (req) => {
    const view = toView(req);
    let action;
    try {
      action = strategy.ensureLegal(strategy.decide(view), view.legal);
    } catch (err) {
      log(`strategy failed (${err.message}); playing safe`);
      action = strategy.safeAction(view.legal);
    }
    open.set(requestKey(view.table_id, view.hand_id, view.request_id), { view, tries: 0 });
    log(
      `hand ${view.hand_id} ${view.street.replace('STREET_', '').toLowerCase()} ` +
        `[${view.hole_cards.join(' ')}] board [${view.board.join(' ')}] -> ${describe(action)}`,
    );
    send(view, action);
  };

  const onActionRejected = (rej) => {
    const key = requestKey(rej.table_id, rej.hand_id, rej.request_id);
    log(`action rejected (${rej.rule}): ${rej.message}; ${rej.retries_left} retries left`);
    const entry = open.get(key);
    if (!entry) {
      log(`rejection for unknown request ${key}; ignored`);
      return;
    }
    entry.tries += 1;
    let action;
    if (entry.tries === 1) {
      action = strategy.safeAction(entry.view.legal); // check if free, else call, else fold
    } else if (entry.tries === 2) {
      action = { kind: entry.view.legal.can_fold ? strategy.ActionKind.FOLD : strategy.ActionKind.ALL_IN, amount: 0 };
    } else {
      log('giving up on this request; the referee will act for us');
      open.delete(key);
      return;
    }
    log(`retrying with ${describe(action)}`);
    send(entry.view, action);
  };

  const forgetHand = (tableId, handId) => {
    const prefix = `${tableId}/${handId}/`;
    for (const key of open.keys()) if (key.startsWith(prefix)) open.delete(key);
  };

  call.on('data', (message) => {
    switch (message.msg) {
      case 'welcome': {
        const w = message.welcome;
        seat = w.seat;
        const c = w.config || {};
        log(
          `joined match ${w.match_id} table ${w.table_id} as seat ${seat}: ` +
            `${c.num_seats} seats, ${c.structure}, blinds ${c.small_blind}/${c.big_blind}, stack ${c.starting_stack}`,
        );
        break;
      }
      case 'hand_start': {
        const h = message.hand_start;
        seat = h.seat;
        log(`hand ${h.hand_id} (#${h.hand_number}) seat ${h.seat} button ${h.button} cards [${h.hole_cards.join(' ')}]`);
        break;
      }
      case 'action_request':
        onActionRequest(message.action_request);
        break;
      case 'action_rejected':
        onActionRejected(message.action_rejected);
        break;
      case 'hand_end': {
        const h = message.hand_end;
        forgetHand(h.table_id, h.hand_id);
        const mine = (h.payoffs || []).find((p) => p.seat === seat);
        log(`hand ${h.hand_id} over: board [${h.board.join(' ')}], net ${mine ? mine.net : '?'}`);
        break;
      }
      case 'match_end': {
        const m = message.match_end;
        matchEnded = true;
        log(`match ${m.match_id} over (${m.reason})${m.message ? `: ${m.message}` : ''}`);
        for (const r of m.results || []) {
          log(
            `  ${r.is_you ? '*' : ' '} seat ${r.seat} ${r.name}: net ${r.net_chips} over ${r.hands_played} hands, ` +
              `${r.violations} violations${r.forfeited ? ', forfeited' : ''}`,
          );
        }
        call.end();
        // If the referee does not close its side promptly, stop waiting.
        setTimeout(() => {
          call.cancel();
          finish(0);
        }, LINGER_MS).unref();
        break;
      }
      case 'error': {
        const e = message.error;
        log(`referee error ${e.code}${e.rule ? ` (${e.rule})` : ''}: ${e.message}${e.fatal ? ' [fatal]' : ''}`);
        if (e.fatal) fatal = true;
        if (e.request_id && e.request_id !== '0') open.delete(requestKey(e.table_id, e.hand_id, e.request_id));
        break;
      }
      default:
        log(`ignoring unknown message ${JSON.stringify(message).slice(0, 200)}`);
    }
  });

  // The call's final status decides the exit code ('status' comes once, after 'end' or 'error').
  call.on('status', (status) => {
    if (matchEnded) {
      log('stream closed after match end');
      finish(0);
    } else if (status.code === grpc.status.OK) {
      log('the referee ended the stream');
      finish(fatal ? 1 : 0);
    } else {
      log(`stream failed: ${grpc.status[status.code]} ${status.details}`);
      finish(1);
    }
  });

  // Errors also arrive as a non-OK 'status'; listening here keeps them from being thrown.
  call.on('error', (err) => {
    if (!matchEnded) log(`stream error: ${err.details || err.message}`);
  });

  call.write({
    join: {
      token,
      bot_name: name,
      bot_version: BOT_VERSION,
      protocol_version: PROTOCOL_VERSION,
      language: 'javascript',
    },
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
  log(`connecting to ${config.address} as ${config.name}`);
  const code = await play(config);
  process.exit(code);
}

if (require.main === module) {
  main().catch((err) => {
    log(`crashed: ${err.stack || err}`);
    process.exit(1);
  });
}

module.exports = { loadArenaPackage, parseConfig, toView, play, PROTO_ROOT, LOADER_OPTIONS };
