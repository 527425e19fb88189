/* The compiled engine's state machine as a C API for other extensions (the bots' C++ server plays a hand's
 * decisions on gRPC's threads with it: arena/transport/_native_server.cpp), published by arena.engine._core as a
 * capsule (PyCapsule_Import(ARENA_CORE_API_CAPSULE, 0)).
 *
 * ``state_of`` needs the GIL. Everything else never calls Python and needs no GIL: the caller guarantees that
 * nothing else (no Python code either) reads or changes the hand while it uses the state, and keeps a reference to
 * the hand object meanwhile. A refused action leaves the state as it was; Python's ``Hand.act`` refuses the same
 * action with the same rule (tests/engine/test_core_api.py). */

#ifndef ARENA_CORE_API_H
#define ARENA_CORE_API_H

#include <stddef.h>
#include <stdint.h>

#define ARENA_CORE_API_CAPSULE "arena.engine._core._C_API"
#define ARENA_CORE_API_VERSION 2

/* Action kinds: arena.engine.ActionKind's values. */
enum { ARENA_FOLD = 1, ARENA_CHECK = 2, ARENA_CALL = 3, ARENA_RAISE = 4, ARENA_ALL_IN = 5 };

/* ``act``'s results. */
enum { ARENA_ACTED = 0, ARENA_REFUSED = 1 };

typedef struct ArenaText {
    const char *data; /* UTF-8, not NUL-terminated */
    size_t size;
} ArenaText;

typedef struct ArenaCoreApi {
    int version; /* ARENA_CORE_API_VERSION */
    /* The state of ``hand`` (an arena.engine._core.Hand), or NULL with a TypeError set. GIL held. */
    void *(*state_of)(PyObject *hand);
    /* The seat to act, or -1 when nobody is (the hand is over). */
    int (*to_act)(const void *state);
    /* How many events the hand has so far (the next action's event index: DecisionRecord.event_index). */
    size_t (*event_count)(const void *state);
    /* Apply ``kind`` (and for ARENA_RAISE the raise-to ``amount``; ignored otherwise) for ``seat``: ARENA_ACTED,
     * or ARENA_REFUSED when Hand.act would raise (the state unchanged): the hand is over, ``seat`` is not to act,
     * ``kind`` is not one of the five, or the rules refuse it (the same check as Hand.act's, in _core.cpp's
     * ``judge``). ARENA_ALL_IN is the top raise, else a call, else a check. A showdown is evaluated in C (the SDK's
     * evaluator). */
    int (*act)(void *state, int seat, int kind, int64_t amount);
    /* Hand.request_wire(seat, names, timeouts, action_ms_left, bank_ms_left, head, request_id, tail)'s bytes:
     * ``names`` one per seat (Hand.num_seats of them); ``timeouts`` flags by event index (``timeouts_count`` of
     * them, 0 or 1; events past them are not flagged); ``head`` and ``tail`` as Hand.request_wire's bytes. Writes
     * them to ``out`` if they fit in ``capacity`` and returns their size either way (call again with room for that
     * many); 0 when ``seat`` is not the seat to act, ``request_id`` is negative or the wire format is not set
     * (arena.transport.wire sets it once, at its import: set_wire_format must not run while this does). */
    size_t (*request_wire)(const void *state, int seat, const ArenaText *names, const uint8_t *timeouts,
                           size_t timeouts_count, int64_t action_ms_left, int64_t bank_ms_left, ArenaText head,
                           int64_t request_id, ArenaText tail, char *out, size_t capacity);
    /* Hand.end_wire(timeouts, table_id, hand_id)[seat]'s bytes (``timeouts`` as for request_wire), written to
     * ``out`` if they fit in ``capacity``; their size either way; 0 when the hand is not over, ``seat`` is not one
     * of its seats, or the wire format or the hands' names are not set (arena.transport.wire sets both at its
     * import). Since version 2. */
    size_t (*end_wire)(const void *state, int seat, const uint8_t *timeouts, size_t timeouts_count,
                       ArenaText table_id, ArenaText hand_id, char *out, size_t capacity);
} ArenaCoreApi;

#endif
