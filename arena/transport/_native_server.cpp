// The bots' gRPC service (BotService.Play) served by gRPC's C++ library (libgrpc++) inside the referee's Python
// process (beside grpcio, which keeps every other service), on gRPC's asynchronous API: one thread of ours polls the
// server's completion queue (``NativeServer::poll``) and every call's reads, writes and ends complete there.
//
// Why: grpc.aio hands every message through its polling thread and the asyncio loop, one at a time. Here the C++
// thread reads and writes the streams, never touching Python: what it reads is queued as events, and the
// referee's loop is woken through an eventfd, once for however many events are queued, to take them all in one call
// (``take``). Writes are queued per stream and started at once from the calling thread. One polling thread, not
// gRPC's callback API: that ran at least two threads that took turns at polling and woke each other for every
// message (at one table 7.2 context switches of the referee's process a decision, 44% of its samples; 2.1 now).
// Where this stands (measured figures): arena/transport/native_server.py.
//
// The module knows nothing of the protocol: a stream is an id, its messages bytes. Who may join, what a message
// means, every limit and refusal stay in Python (arena/transport/native_server.py, bot_service.py).

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <absl/synchronization/mutex.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/support/byte_buffer.h>
#include <sys/eventfd.h>

#include "core_api.h"
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace {

enum EventKind { OPENED = 0, MESSAGE = 1, READS_ENDED = 2, DONE = 3, LANE_ENDED = 4,
                 PLAYED = 5,  // PLAYED: a message a lane took at Python's turn (``play_loop``), never handed over
                 HAND_DONE = 6 };  // a lane finished a hand and went on to the next (``lane_done`` takes it)

// Messages read and not yet taken by Python, per stream, past which the stream is not read until they are: a bot
// that floods is held back by its own HTTP/2 window, not by the referee's memory.
constexpr int UNTAKEN_MOST = 64;

// What the server's connections may hold in memory together (gRPC's resource quota: read buffers and the like).
constexpr size_t MEMORY_MOST = 256u << 20;

struct Event {
    EventKind kind;
    uint64_t stream;
    grpc::ByteBuffer message;  // MESSAGE
    std::string text;          // OPENED: the peer
};

class NativeServer;

// ------------------------------------------------------------------ hand lanes: decisions played on the polling thread
//
// A lane plays one hand's common decisions where the Actions are read: a message that is one plain Action (ids,
// kind, amount and a comment or not, each once: ``lane_action``) answering the lane's open request on its stream is
// applied to the hand with the compiled engine's C API (core_api.h), recorded, the bot's clock charged, and the next
// seat's request encoded and written, all on the polling thread that read it, without Python. Anything else ends the
// lane first (``end_lane_locked``): any other message on the stream of its open request (another request, ids that
// differ, a mixed action, an illegal action, a stray, one Python's parser might read otherwise, one that comes while
// Python has not handled what that stream sent before), that stream's end, a seat the lane does not ask (the hand
// over, or a seat Python asks); and Python can end it at any moment (``lane_take``: a clock run out, a forfeit, a
// stream replaced, the table stopped). Python then takes the lane's decisions and its open request, if any, and
// goes on exactly as if it had played them itself (arena/transport/lanes.py); the message that ended it reaches
// Python after that, in order.
//
// A lane of bots of several tables (``loop``) is played the same way but on Python's thread, at the loop's turn: the
// streams of its seats are offered to the lanes when Python takes what was read (``play_loop``), each Action of an
// ActionBatch in turn up to the first a lane cannot take (``offer_loop``), that one and the rest going to Python as an
// ActionBatch of their own; the requests the answers make wait in Python's cork with everything else the loop writes
// until Python lets it go (two turns later: ``NativeBotServer.uncork_soon``), one message per stream.

// How an Action is read off the wire: field numbers from the protocol's descriptors (set_action_format), so this
// file names none of its own.
struct ActionFormat {
    bool ready = false;
    uint32_t message_action = 0, message_batch = 0, batch_actions = 0;  // BotMessage.action, .actions; ActionBatch
    uint32_t table_id = 0, hand_id = 0, request_id = 0, kind = 0, amount = 0, comment = 0;  // Action's fields
    std::unordered_map<int64_t, int> kinds;  // ActionKind's wire values -> the engine's (ARENA_FOLD ..)
    size_t max_queued = 0;                   // session.MAX_QUEUED: writes waiting for a bot that is not reading
    uint32_t batch = 0, batch_messages = 0;  // RefereeMessage.batch, RefereeBatch.messages
    size_t batch_bytes = 0;                  // wire.BATCH_BYTES: the most a RefereeBatch holds
};
ActionFormat action_format;
const ArenaCoreApi* core = nullptr;

// A protobuf reader over one contiguous message: only what BotMessage, ActionBatch and Action use.
struct Reader {
    const uint8_t* at;
    const uint8_t* end;
    bool bad = false;

    bool varint(uint64_t* out) {
        uint64_t v = 0;
        for (int shift = 0; at < end && shift < 64; shift += 7) {
            uint8_t b = *at++;
            v |= uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) {
                *out = v;
                return true;
            }
        }
        return false;
    }

    // The next field (its number, wire type, and its varint or its bytes); false at the end, or with ``bad`` set
    // on input this reader does not take (a malformed field, a group).
    bool field(uint32_t* number, int* type, uint64_t* value, const uint8_t** data, size_t* size) {
        if (at >= end) return false;
        uint64_t key;
        const uint8_t* key_at = at;
        if (!varint(&key) || at - key_at > 5 || (key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF) return fail();
        *number = uint32_t(key >> 3);
        *type = int(key & 7);
        if (*type == 0) return varint(value) || fail();
        if (*type == 1 || *type == 5) {  // fixed64, fixed32: skipped (no field read here has them)
            size_t width = *type == 1 ? 8 : 4;
            if (size_t(end - at) < width) return fail();
            at += width;
            *size = 0;
            return true;
        }
        if (*type != 2) return fail();
        uint64_t len;
        if (!varint(&len) || len > uint64_t(end - at)) return fail();
        *data = at;
        *size = size_t(len);
        at += len;
        return true;
    }

    bool fail() {
        bad = true;
        return false;
    }
};

// Whether ``text`` is UTF-8 as protobuf takes a string field: no overlong form, no surrogate, nothing past U+10FFFF
// (a message with a string that is not is refused whole by Python's parser: the stream is closed).
bool utf8(std::string_view text) {
    const auto* at = reinterpret_cast<const uint8_t*>(text.data());
    const uint8_t* end = at + text.size();
    while (at < end) {
        uint8_t b = *at++;
        if (b < 0x80) continue;
        int more;
        uint32_t code;
        if (b >= 0xC2 && b <= 0xDF) more = 1, code = b & 0x1F;
        else if (b >= 0xE0 && b <= 0xEF) more = 2, code = b & 0x0F;
        else if (b >= 0xF0 && b <= 0xF4) more = 3, code = b & 0x07;
        else return false;
        if (end - at < more) return false;
        for (int i = 0; i < more; ++i) {
            if ((at[i] & 0xC0) != 0x80) return false;
            code = code << 6 | (at[i] & 0x3F);
        }
        at += more;
        if ((more == 2 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) || (more == 3 && (code < 0x10000 || code > 0x10FFFF)))
            return false;
    }
    return true;
}

struct PlainAction {
    std::string_view table_id, hand_id, comment;
    uint64_t request_id = 0;
    int kind = 0;
    int64_t amount = 0;
};

// Read an Action the lanes may take: its ids, kind and amount, and a comment or not, each field once with its wire
// type, its strings UTF-8, its kind known, and nothing else (no policy, no unknown field). False for anything else,
// which Python reads: within these bounds Python's parser reads exactly this (no field to merge, no oneof, nothing
// it would refuse), outside them it may not.
bool read_action(const uint8_t* data, size_t size, PlainAction* out) {
    const ActionFormat& f = action_format;
    Reader r{data, data + size};
    uint32_t number;
    int type;
    uint64_t value = 0;
    const uint8_t* bytes = nullptr;
    size_t len = 0;
    int64_t kind = 0;
    unsigned seen = 0;  // a bit per field read
    while (r.field(&number, &type, &value, &bytes, &len)) {
        unsigned bit;
        std::string_view text(reinterpret_cast<const char*>(bytes), type == 2 ? len : 0);
        if (number == f.table_id && type == 2) bit = 1, out->table_id = text;
        else if (number == f.hand_id && type == 2) bit = 2, out->hand_id = text;
        else if (number == f.request_id && type == 0) bit = 4, out->request_id = value;
        else if (number == f.kind && type == 0) bit = 8, kind = int64_t(value);
        else if (number == f.amount && type == 0) bit = 16, out->amount = int64_t(value);
        else if (number == f.comment && type == 2) bit = 32, out->comment = text;
        else return false;
        if (seen & bit) return false;
        seen |= bit;
        if (type == 2 && !utf8(text)) return false;
    }
    if (r.bad) return false;
    auto found = f.kinds.find(kind);
    if (found == f.kinds.end()) return false;
    out->kind = found->second;
    if (out->kind != ARENA_RAISE) out->amount = 0;  // ignored for other kinds (convert.action_from_pb)
    return true;
}

// A seat of a lane's hand: the stream its requests go to (0: the lane does not ask it), its name, its request's
// config field (``tail``, which holds its starting stack) and its clock (ClockPolicy.per_action_ms, BotClock.bank_ms).
struct LaneSeat {
    uint64_t stream = 0;
    std::string name;
    std::string tail;
    double per_action_ms = 0;
    double bank_ms = 0;
};

struct LaneRecord {
    int seat;
    int64_t request_id;
    int kind;
    int64_t amount;
    double elapsed_s;
    int64_t event_index;
    std::string comment;  // as the bot sent it (Python cleans it: arena.text.comment)
};

// The next hand of a lane's table, armed by Python (``lane_arm``): the lane goes on to it when its hand ends
// (``chain_locked``), its seats' HandStarts written with the HandEnds.
struct LaneNext {
    PyObject* hand = nullptr;  // held until the lane goes on to it, or is taken
    void* state = nullptr;
    std::string hand_id, head;
    std::vector<std::string> tails, starts;  // per seat: its requests' config field, its HandStart message
    std::vector<size_t> from;                // per seat: the seat of this hand its bot holds now (seats rotate)
    int64_t first_request_id = 0;
};

// A hand a lane finished and went on from: what Python takes (``lane_done``) to record it.
struct LaneDone {
    PyObject* hand = nullptr;  // held until taken
    std::vector<LaneRecord> records;
    std::vector<double> banks;
    int64_t next_request_id = 0;
};

struct Lane {
    uint64_t id = 0;
    std::string table_id, hand_id, head;  // head: ActionRequest's table_id and hand_id fields, encoded
    PyObject* hand = nullptr;             // held until ``lane_take`` (which has the GIL)
    void* state = nullptr;
    std::vector<LaneSeat> seats;
    std::vector<ArenaText> names;         // into ``seats``' names
    std::vector<uint8_t> timeouts;        // flags by event index: the actions the referee made for a seat
    int64_t next_request_id = 0;
    bool running = true;
    int open_seat = -1;                   // the open request: its seat, id, when it was written (monotonic
    int64_t open_request = 0;             // seconds, as time.monotonic), its allowance and the clock it told
    double sent = 0, allowance_s = 0;
    int64_t action_ms_left = 0, bank_ms_left = 0;
    uint64_t unread = 0;                  // the stream that held more than MAX_QUEUED writes with its request
    std::vector<LaneRecord> records;
    std::string buffer;                   // the request being encoded
    std::unique_ptr<LaneNext> next;       // the hand to go on to, if armed
    std::vector<LaneDone> done;           // hands finished and not yet taken
    uint64_t finished = 0;                // hands it finished and went on from
};

// Every Python object a lane holds, let go (the GIL held).
void release_lane(Lane& lane) {
    Py_CLEAR(lane.hand);
    if (lane.next) Py_CLEAR(lane.next->hand);
    for (LaneDone& done : lane.done) Py_CLEAR(done.hand);
    lane.done.clear();
}

// What became of a message offered to the lanes (``NativeServer::offer``).
enum Offer { PASS = 0, CONSUMED = 1, REPLACED = 2 };  // REPLACED: what is left of it goes to Python

double monotonic_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One BotService.Play call, on gRPC's asynchronous API: its operations complete on the server's completion queue,
// which one thread of ours polls (``NativeServer::poll``), so a bot's Action is read, played by a lane and the next
// request written on one thread, with no hand-over between threads (gRPC's callback API ran at least two threads
// that took turns at polling: at one table, waking each other was 44% of the referee's samples).
//
// Its state is guarded by ``mu``, and gRPC is never called with ``mu`` held. The call is finished (``Finish``) only
// when no write is in flight (``write_busy_``) and no operation Python's thread started is under way (``busy_``: a
// read resumed, a cancellation). gRPC's parts of the call (``parts_``: the context and the reader-writer) are let go
// once every operation started on them is back and gRPC says the call is over (``call_over``); the Stream itself is
// deleted then, or when the last Python call holding it lets it go (``holds``).
class Stream final {
public:
    enum Op : uint8_t { CALL = 0, READ = 1, WRITE = 2, FINISH = 3, OVER = 4 };
    struct Tag {
        Stream* stream;
        Op op;
    };

    explicit Stream(NativeServer* server) : server_(server), parts_(std::make_unique<Parts>()) {
        for (int op = CALL; op <= OVER; ++op) tags_[op] = Tag{this, Op(op)};
    }
    // Wait for the next call (``CALL``), on ``cq``.
    void request(grpc::AsyncGenericService& service, grpc::ServerCompletionQueue* cq);
    // An operation of this stream completed (on the polling thread); may delete the stream.
    void completed(Op op, bool ok);

    // Python's side (each with the stream held: ``NativeServer::hold``)
    size_t write(const char* data, size_t size, bool start = true);  // start: unless the writer is corked
    void kick();  // start writing what was queued while corked
    void finish(grpc::Status status);
    void cancel();
    void taken(int count);
    bool release();  // true if the stream is to be deleted now
    uint64_t id() const { return id_; }

    std::mutex mu;
    int holds = 0;

private:
    struct Parts {
        grpc::GenericServerContext context;
        grpc::GenericServerAsyncReaderWriter rw{&context};
    };

    void begin();  // the call came: tells Python of the stream and reads its first message (or refuses the call)
    void read_done(bool ok);
    void write_done(bool ok);
    void cancelled();
    void start_read_locked(std::unique_lock<std::mutex>& lock);
    void start_next_write_locked(std::unique_lock<std::mutex>& lock);
    void finish_when_free_locked(std::unique_lock<std::mutex>& lock);
    bool over_locked(std::unique_lock<std::mutex>& lock);  // every operation back and the call over: its end
    bool finishing() const { return finish_called_ || finish_wanted_; }

    NativeServer* server_;
    std::unique_ptr<Parts> parts_;  // gRPC's, let go at the call's end (``over_locked``)
    Tag tags_[OVER + 1];
    uint64_t id_ = 0;
    bool refused_ = false;  // a call to another method: finished at once, never told to Python
    grpc::ByteBuffer reading_;
    grpc::ByteBuffer writing_;
    std::deque<grpc::ByteBuffer> queued_;
    bool read_busy_ = false;
    bool write_busy_ = false;
    bool finish_back_ = false;  // the Finish tag is back
    bool call_over_ = false;    // gRPC said the call is over (AsyncNotifyWhenDone)
    int busy_ = 0;
    bool reads_over_ = false;
    bool read_paused_ = false;
    int untaken_ = 0;
    bool finish_called_ = false;
    bool finish_wanted_ = false;
    grpc::Status finish_status_;
    bool ending_ = false;  // its end is under way (``over_locked``)
    bool done_ = false;    // and done: the stream is deleted when no Python call holds it
    bool batches_ = false;  // its bot takes RefereeBatches (Join.batches): writes that queue go out as one
    bool wrote_ = false;    // a write was started (the first, the Welcome, always goes alone)

public:
    void set_batches(bool on) {
        std::lock_guard<std::mutex> lock(mu);
        batches_ = on;
    }
};

class NativeServer {
public:
    std::string method;  // the one method served: "/arena.v1.BotService/Play"
    bool shutting = false;  // a shutdown has begun (``shut_down``: once); no call is asked for after (``request_mu``)
    std::atomic<bool> stopped{false};   // and returned
    int event_fd = -1;
    int port = 0;
    std::unique_ptr<grpc::Server> server;
    grpc::AsyncGenericService service;
    std::unique_ptr<grpc::ServerCompletionQueue> cq;  // every call's operations complete here
    std::thread poller;                                // the one thread that polls it (``poll``)
    std::mutex request_mu;  // guards ``shutting``: a new call is asked for only before the shutdown begins

    // Ask gRPC for the next call (one waits at a time: calls that come meanwhile wait in gRPC).
    void request_call() {
        std::lock_guard<std::mutex> lock(request_mu);
        if (shutting) return;  // the queue is shut down after the server: nothing may be started on it then
        {
            std::lock_guard<std::mutex> counted(live_mu);
            ++live;
        }
        (new Stream(this))->request(service, cq.get());
    }

    // Calls whose gRPC parts are alive (a call asked for, or one not yet over): the queue is shut down only when
    // none is, for an operation started on a queue shut down is a crash, and gRPC's server may say it has shut down
    // before the calls it cancelled have come back to us.
    std::mutex live_mu;
    std::condition_variable live_cv;
    size_t live = 0;

    void let_go_call() {
        std::lock_guard<std::mutex> lock(live_mu);
        if (--live == 0) live_cv.notify_all();
    }

    void wait_calls_over() {
        std::unique_lock<std::mutex> lock(live_mu);
        live_cv.wait(lock, [this] { return live == 0; });
    }

    // The polling thread: every operation's completion, on this thread, until the queue is shut down and drained.
    void poll() {
        void* tag;
        bool ok;
        while (cq->Next(&tag, &ok)) {
            Stream::Tag* done = static_cast<Stream::Tag*>(tag);
            done->stream->completed(done->op, ok);
        }
    }

    uint64_t add(Stream* stream) {
        std::lock_guard<std::mutex> lock(streams_mu_);
        uint64_t id = ++last_id_;
        streams_[id] = stream;
        return id;
    }

    void forget(uint64_t id) {
        std::lock_guard<std::mutex> lock(streams_mu_);
        streams_.erase(id);
    }

    // The stream ``id`` held for a call from Python (released with ``let_go``), or null if it is gone. ``holds`` is
    // raised under ``streams_mu_``: a stream's end (``over_locked``) forgets it under it first, so it never deletes
    // one being held.
    Stream* hold(uint64_t id) {
        std::lock_guard<std::mutex> lock(streams_mu_);
        auto found = streams_.find(id);
        if (found == streams_.end()) return nullptr;
        Stream* stream = found->second;
        std::lock_guard<std::mutex> held(stream->mu);
        ++stream->holds;
        return stream;
    }

    static void let_go(Stream* stream) {
        if (stream->release()) delete stream;
    }

    void push(Event&& event) {
        bool wake;
        {
            std::lock_guard<std::mutex> lock(events_mu_);
            wake = events_.empty();
            events_.push_back(std::move(event));
        }
        if (wake) {
            uint64_t one = 1;
            ssize_t written = ::write(event_fd, &one, sizeof one);
            (void)written;  // a full counter (2^64 - 2 wakes unread) still wakes the reader
        }
    }

    // ---------------------------------------------------------------- corks
    //
    // A writer that writes several messages to a stream at once (the referee's loop: a hand's end, the next one's
    // start and the lane's first request; a lane playing a batch of answers) corks them: what it writes queues, and
    // goes out when it is done (``uncork``), as one RefereeBatch where the stream takes batches (``pack_queued``).

    struct Cork {
        std::vector<Stream*> streams;  // held (``hold``) until uncorked
    };

    // Write ``data`` to ``stream`` (held by the caller), at once or, with ``cork``, when it is uncorked.
    size_t write_to(Stream* stream, const char* data, size_t size, Cork* cork) {
        if (cork == nullptr) return stream->write(data, size);
        size_t queued = stream->write(data, size, false);
        if (queued > 0 && std::find(cork->streams.begin(), cork->streams.end(), stream) == cork->streams.end()) {
            std::lock_guard<std::mutex> lock(stream->mu);
            ++stream->holds;
            cork->streams.push_back(stream);
        }
        return queued;
    }

    static void uncork(Cork& cork) {
        for (Stream* stream : cork.streams) {
            stream->kick();
            let_go(stream);
        }
        cork.streams.clear();
    }

    // What a cork held, written by the kicker thread instead of the caller's: at many tables the loop's turn ends
    // with writes to every bot, each started by gRPC on the thread that starts it (its framing and its system call):
    // a seventh of the referee's thread at 64 tables of C++ bots. Paired, 64 tables with and without it: 0.995 of the
    // wall time with C++ bots (0.97-1.09), 0.978 with Python bots (0.975-0.980), three pairs each.
    std::mutex kick_mu;
    std::condition_variable kick_cv;
    std::vector<Stream*> kick_pending;  // held (``hold``) until kicked
    bool kick_stop = false;
    std::thread kicker;

    void uncork_later(Cork& cork) {
        if (cork.streams.empty()) return;
        {
            std::lock_guard<std::mutex> lock(kick_mu);
            if (!kicker.joinable()) kicker = std::thread([this] { kick_all(); });
            kick_pending.insert(kick_pending.end(), cork.streams.begin(), cork.streams.end());
        }
        cork.streams.clear();
        kick_cv.notify_one();
    }

    void kick_all() {
        std::unique_lock<std::mutex> lock(kick_mu);
        for (;;) {
            kick_cv.wait(lock, [this] { return kick_stop || !kick_pending.empty(); });
            if (kick_pending.empty()) return;  // stopped, and nothing is left
            std::vector<Stream*> streams;
            streams.swap(kick_pending);
            lock.unlock();
            for (Stream* stream : streams) {
                stream->kick();
                let_go(stream);
            }
            lock.lock();
        }
    }

    // The kicker writes what it holds and ends (before the server is deleted).
    void stop_kicker() {
        {
            std::lock_guard<std::mutex> lock(kick_mu);
            kick_stop = true;
        }
        kick_cv.notify_one();
        if (kicker.joinable()) kicker.join();
    }

    // ``cork`` written: by the kicker when bots of several tables are served (``loop_streams``: the loop's turn
    // writes to many), else at once by the caller (one table's hand: the bots wait for nothing else).
    void uncork_any(Cork& cork) {
        if (loop_count.load(std::memory_order_relaxed) > 0) uncork_later(cork);
        else uncork(cork);
    }

    Cork python_cork;  // the referee's loop's (``cork``, ``uncork``: only with the GIL)
    std::vector<std::pair<uint64_t, int>> handling;  // messages taken by Python, per stream, until ``handled``
    bool python_corked = false;

    // ---------------------------------------------------------------- lanes (see "hand lanes" above)

    std::mutex lanes_mu;  // taken before a stream's own locks, never after
    std::unordered_map<std::string, Lane*> lanes_by_table;  // the running lane of each table
    std::unordered_map<uint64_t, std::unique_ptr<Lane>> lanes;  // until taken
    std::atomic<int> lanes_running{0};
    // streams of bots of several tables (``lane_open``'s ``loop``): their messages are offered to the lanes on
    // Python's thread, at the loop's turn (``play_loop``), not as they are read, so that what their tables ask goes
    // out as Python's writer sends it, one batch per stream a turn, not one message per decision
    std::unordered_set<uint64_t> loop_streams;
    std::atomic<size_t> loop_count{0};
    std::vector<Event>* diverted = nullptr;  // while ``play_loop`` runs: where the lanes' ends go, in order
    uint64_t last_lane = 0;

    // End ``lane``: nothing more is played on it; Python is told (LANE_ENDED) and takes it (``lane_take``).
    void end_lane_locked(Lane& lane) {
        if (!lane.running) return;
        lane.running = false;
        --lanes_running;
        lanes_by_table.erase(lane.table_id);
        Event ended{LANE_ENDED, lane.id, {}, {}};
        if (diverted != nullptr) diverted->push_back(std::move(ended));
        else push(std::move(ended));
    }

    // The hand is over and the next is armed: every seat's HandEnd (``end_wire``) and next HandStart written through
    // ``cork``, the lane switched to the next hand, and Python told (HAND_DONE) to record this one (true); false when
    // the lane cannot go on (nothing armed, a seat it does not ask, a bot not reading, a HandEnd not encoded).
    bool chain_locked(Lane& lane, Cork* cork) {
        if (!lane.next || lane.unread != 0) return false;
        size_t n = lane.seats.size();
        for (const LaneSeat& seat : lane.seats)
            if (seat.stream == 0) return false;
        std::vector<std::string> ends(n);
        ArenaText table{lane.table_id.data(), lane.table_id.size()}, hand_id{lane.hand_id.data(), lane.hand_id.size()};
        for (size_t seat = 0; seat < n; ++seat) {
            std::string& end = ends[seat];
            end.resize(lane.buffer.size());
            size_t size = core->end_wire(lane.state, int(seat), lane.timeouts.data(), lane.timeouts.size(), table,
                                         hand_id, end.data(), end.size());
            if (size > end.size()) {
                end.resize(size);
                size = core->end_wire(lane.state, int(seat), lane.timeouts.data(), lane.timeouts.size(), table,
                                      hand_id, end.data(), end.size());
            }
            if (size == 0 || size > end.size()) return false;
            end.resize(size);
        }
        LaneNext& next = *lane.next;
        std::vector<LaneSeat> seats(n);  // the next hand's: each bot's stream, name and clock where it sits then
        for (size_t seat = 0; seat < n; ++seat) {
            seats[seat] = lane.seats[next.from[seat]];
            seats[seat].tail = std::move(next.tails[seat]);
        }
        for (size_t seat = 0; seat < n; ++seat) {  // a stream gone by now: the next hand's request finds it so
            if (Stream* stream = hold(lane.seats[seat].stream)) {
                write_to(stream, ends[seat].data(), ends[seat].size(), cork);
                let_go(stream);
            }
        }
        for (size_t seat = 0; seat < n; ++seat) {
            if (Stream* stream = hold(seats[seat].stream)) {
                write_to(stream, next.starts[seat].data(), next.starts[seat].size(), cork);
                let_go(stream);
            }
        }
        LaneDone done;
        done.hand = lane.hand;
        done.records = std::move(lane.records);
        done.next_request_id = lane.next_request_id;
        for (const LaneSeat& seat : lane.seats) done.banks.push_back(seat.bank_ms);
        lane.done.push_back(std::move(done));
        lane.records.clear();
        lane.hand = next.hand;
        lane.state = next.state;
        lane.hand_id = std::move(next.hand_id);
        lane.head = std::move(next.head);
        lane.seats = std::move(seats);
        lane.names.clear();
        for (LaneSeat& seat : lane.seats) lane.names.push_back(ArenaText{seat.name.data(), seat.name.size()});
        lane.timeouts.clear();
        lane.next_request_id = next.first_request_id;
        lane.next.reset();
        ++lane.finished;
        Event finished{HAND_DONE, lane.id, {}, {}};
        if (diverted != nullptr) diverted->push_back(std::move(finished));
        else push(std::move(finished));
        return true;
    }

    // Ask the seat to act, if the lane asks it (its request written through ``cork``); else the lane ends, or, when
    // its hand is over and the next one armed, goes on to it (``chain_locked``).
    void ask_next_locked(Lane& lane, Cork* cork) {
        lane.open_seat = -1;
        int seat = core->to_act(lane.state);
        if (seat < 0 && chain_locked(lane, cork)) seat = core->to_act(lane.state);
        if (seat < 0 || seat >= int(lane.seats.size()) || lane.seats[size_t(seat)].stream == 0) {
            end_lane_locked(lane);
            return;
        }
        LaneSeat& asked = lane.seats[size_t(seat)];
        double allowance_s = (asked.per_action_ms + asked.bank_ms) / 1000.0;  // BotClock.allowance_s
        int64_t action_ms = int64_t(std::min(allowance_s * 1000.0, asked.per_action_ms));
        int64_t bank_ms = int64_t(asked.bank_ms);
        ArenaText head{lane.head.data(), lane.head.size()}, tail{asked.tail.data(), asked.tail.size()};
        size_t size = 0;
        for (int tries = 0; tries < 2; ++tries) {
            size = core->request_wire(lane.state, seat, lane.names.data(), lane.timeouts.data(), lane.timeouts.size(),
                                      action_ms, bank_ms, head, lane.next_request_id, tail, lane.buffer.data(),
                                      lane.buffer.size());
            if (size <= lane.buffer.size()) break;
            lane.buffer.resize(size + 1024);
        }
        if (size == 0 || size > lane.buffer.size()) {  // no request was made (cannot happen): Python asks
            end_lane_locked(lane);
            return;
        }
        lane.open_seat = seat;
        lane.open_request = lane.next_request_id++;
        lane.allowance_s = allowance_s;
        lane.action_ms_left = action_ms;
        lane.bank_ms_left = bank_ms;
        lane.sent = monotonic_s();  // the bot's time starts as the request is handed to gRPC (TurnTimer.sent)
        size_t queued = 0;
        if (Stream* stream = hold(asked.stream)) {
            queued = write_to(stream, lane.buffer.data(), size, cork);
            let_go(stream);
        }
        if (queued == 0 || queued > action_format.max_queued) {  // gone, or not reading: Python's to deal with
            if (queued > action_format.max_queued) lane.unread = asked.stream;
            end_lane_locked(lane);
        }
    }

    // ``action`` answers ``lane``'s open request: applied, recorded and the next request written (true); or
    // refused by the engine (false): the lane ends with the request open, for Python to refuse it with its rule.
    bool play_locked(Lane& lane, const PlainAction& action, double now, Cork* cork) {
        int seat = lane.open_seat;
        int64_t event_index = int64_t(core->event_count(lane.state));
        if (core->act(lane.state, seat, action.kind, action.amount) != ARENA_ACTED) {
            end_lane_locked(lane);
            return false;
        }
        double elapsed = std::max(0.0, now - lane.sent);
        lane.records.push_back(
            {seat, lane.open_request, action.kind, action.amount, elapsed, event_index, std::string(action.comment)});
        LaneSeat& asked = lane.seats[size_t(seat)];
        double over = elapsed * 1000.0 - asked.per_action_ms;  // BotClock.charge
        if (over > 0) asked.bank_ms = std::max(0.0, asked.bank_ms - over);
        ask_next_locked(lane, cork);
        return true;
    }

    // Every running lane whose open request is on ``stream`` ends (Python is to see that stream's next message,
    // or its end, with all its open requests).
    void recall_stream_locked(uint64_t stream) {
        for (auto& entry : lanes) {
            Lane& lane = *entry.second;
            if (lane.running && lane.open_seat >= 0 && lane.seats[size_t(lane.open_seat)].stream == stream)
                end_lane_locked(lane);
        }
    }

    void recall_stream(uint64_t stream) {
        if (lanes_running.load() == 0) return;
        std::lock_guard<std::mutex> lock(lanes_mu);
        if (loop_streams.count(stream)) return;  // ``play_loop`` recalls them when it comes to this, in order
        recall_stream_locked(stream);
    }

    // A message read on ``stream``, offered to the lanes (``behind``: Python has not yet handled every message that
    // stream sent before it): CONSUMED when it is one Action, alone or in a batch of one, that the lanes may take
    // (``read_action``), answering a running lane's open request on that stream, and the engine takes it; then it
    // is played. Anything else is Python's, as it is (PASS), after the lanes whose open request is on that stream
    // have ended (at one table a stream has one lane at most): Python sees every message in the order sent, with
    // the stream's open requests its own.
    Offer offer(uint64_t stream, const grpc::ByteBuffer& message, bool behind) {
        if (lanes_running.load(std::memory_order_relaxed) == 0 || !action_format.ready) return PASS;
        if (loop_count.load(std::memory_order_relaxed) > 0) {
            std::lock_guard<std::mutex> lock(lanes_mu);
            if (loop_streams.count(stream)) return PASS;  // offered at Python's turn (``play_loop``), in order
        }
        PlainAction action;
        std::vector<grpc::Slice> slices;  // what ``action``'s strings point into, kept until it is played
        std::string joined;
        bool taken = !behind && lane_action(message, &slices, &joined, &action);
        Cork cork;  // the next request, with what else goes to that stream now
        Offer offered = PASS;
        {
            std::lock_guard<std::mutex> lock(lanes_mu);
            Lane* lane = taken ? running_lane(action.table_id) : nullptr;
            if (lane != nullptr && lane->open_seat >= 0 && lane->seats[size_t(lane->open_seat)].stream == stream &&
                action.hand_id == lane->hand_id && action.request_id == uint64_t(lane->open_request) &&
                play_locked(*lane, action, monotonic_s(), &cork))
                offered = CONSUMED;
            else
                recall_stream_locked(stream);
        }
        uncork(cork);
        return offered;
    }

    // The one Action of ``message`` if the lanes may take it: the message holds nothing but it (BotMessage.action,
    // or an ActionBatch of that one Action). Its strings point into ``slices`` (the message's, held), or into
    // ``joined`` when the message came in several: both the caller's, alive as long as it uses them.
    static bool lane_action(const grpc::ByteBuffer& message, std::vector<grpc::Slice>* slices, std::string* joined,
                            PlainAction* action) {
        const uint8_t* data;
        size_t size;
        std::vector<std::pair<PlainAction, std::string_view>> actions;
        if (!contiguous(message, slices, joined, &data, &size) || !lane_actions(data, size, &actions) ||
            actions.size() != 1)
            return false;
        *action = actions[0].first;
        return true;
    }

    // The Actions of a message of a bot of several tables (BotMessage.action, or an ActionBatch of any number of
    // them, nothing else), each read as ``read_action`` reads one (the bytes it was read from kept beside it);
    // false for anything else, which Python reads whole.
    static bool lane_actions(const uint8_t* data, size_t size, std::vector<std::pair<PlainAction, std::string_view>>* out) {
        const ActionFormat& f = action_format;
        Reader top{data, data + size};
        uint32_t number;
        int type;
        uint64_t value = 0;
        const uint8_t* bytes = nullptr;
        size_t len = 0;
        if (!top.field(&number, &type, &value, &bytes, &len) || type != 2 || top.at != top.end) return false;
        auto one = [out](const uint8_t* at, size_t n) {
            PlainAction action;
            if (!read_action(at, n, &action)) return false;
            out->emplace_back(action, std::string_view(reinterpret_cast<const char*>(at), n));
            return true;
        };
        if (number == f.message_action) return one(bytes, len);
        if (number != f.message_batch) return false;
        Reader batch{bytes, bytes + len};
        while (batch.field(&number, &type, &value, &bytes, &len)) {
            if (number != f.batch_actions || type != 2 || !one(bytes, len)) return false;
        }
        return !batch.bad && !out->empty();
    }

    // A message of a stream in ``loop_streams``, offered to the lanes on Python's thread in the order read
    // (``behind``: an earlier one of its stream went to Python in this turn, and Python reads it first). Its Actions
    // are played in order, each answering a running lane's open request on that stream and taken by the engine (its
    // next request written through ``cork``), up to the first that is not: that one and every one after it are
    // Python's, read in order after the lanes whose open request on that stream they name have ended (an Action
    // Python reads can end the stream, a stray past the rate limit, or the bot's match, its last violation: what
    // follows it is then never read, so nothing after it is played here). CONSUMED: every Action played; PASS: none
    // (the message is Python's as it is; with ``behind``, a batch naming a request twice, or one the lanes do not
    // read, after every lane whose open request is on that stream has ended); REPLACED: ``message`` is now an
    // ActionBatch of the Actions left, as they were sent.
    Offer offer_loop(uint64_t stream, grpc::ByteBuffer* message, bool behind, Cork* cork) {
        std::vector<grpc::Slice> slices;
        std::string joined;
        std::vector<std::pair<PlainAction, std::string_view>> actions;
        const uint8_t* data = nullptr;
        size_t size = 0;
        if (behind || lanes_running.load() == 0 || !contiguous(*message, &slices, &joined, &data, &size) ||
            !lane_actions(data, size, &actions) || answers_twice(actions)) {  // (Python says the second is answered
            recall_stream_locked(stream);                                    // already, the request its own)
            return PASS;
        }
        size_t played = 0;
        double now = monotonic_s();
        for (; played < actions.size(); ++played) {
            const PlainAction& action = actions[played].first;
            Lane* lane = running_lane(action.table_id);
            if (lane == nullptr || lane->open_seat < 0 || lane->seats[size_t(lane->open_seat)].stream != stream ||
                action.hand_id != lane->hand_id || action.request_id != uint64_t(lane->open_request) ||
                !play_locked(*lane, action, now, cork))  // (a refused action has ended its lane)
                break;
        }
        if (played == actions.size()) return CONSUMED;
        const ActionFormat& f = action_format;
        std::string rest;  // the ActionBatch's field of each Action left
        for (size_t i = played; i < actions.size(); ++i) {
            auto& [action, bytes] = actions[i];
            Lane* lane = running_lane(action.table_id);
            if (lane != nullptr && lane->open_seat >= 0 && lane->seats[size_t(lane->open_seat)].stream == stream)
                end_lane_locked(*lane);
            put_key(rest, f.batch_actions);
            put_varint(rest, bytes.size());
            rest.append(bytes);
        }
        if (played == 0) return PASS;
        std::string out;
        put_key(out, f.message_batch);
        put_varint(out, rest.size());
        out.append(rest);
        grpc::Slice slice(out.data(), out.size());
        *message = grpc::ByteBuffer(&slice, 1);
        return REPLACED;
    }

    // Whether two of a batch's Actions name the same table and request.
    static bool answers_twice(const std::vector<std::pair<PlainAction, std::string_view>>& actions) {
        if (actions.size() < 2) return false;
        std::vector<std::pair<uint64_t, std::string_view>> keys;
        keys.reserve(actions.size());
        for (const auto& entry : actions) keys.emplace_back(entry.first.request_id, entry.first.table_id);
        std::sort(keys.begin(), keys.end());
        return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
    }

    // ``play_loop``: the events ``take`` took, with the messages of ``loop_streams`` offered to the lanes in the
    // order read (``offer_loop``): one a lane played whole becomes PLAYED (counted as handled, never handed over);
    // the lanes' ends go in before the message that ended them; a stream's end recalls its lanes at its place.
    std::vector<Event> play_loop(std::vector<Event> events) {
        std::vector<Event> out;
        out.reserve(events.size() + 8);
        Cork own;
        Cork* cork = python_corked ? &python_cork : &own;
        {
            std::lock_guard<std::mutex> lock(lanes_mu);
            diverted = &out;
            std::vector<uint64_t> passed;  // streams with a message for Python in this turn
            for (Event& event : events) {
                bool looped = (event.kind == MESSAGE || event.kind == READS_ENDED || event.kind == DONE) &&
                              loop_streams.count(event.stream) > 0;
                if (looped && event.kind == MESSAGE) {
                    bool behind = std::find(passed.begin(), passed.end(), event.stream) != passed.end();
                    Offer offered = offer_loop(event.stream, &event.message, behind, cork);
                    if (offered == CONSUMED) event.kind = PLAYED;
                    else if (!behind) passed.push_back(event.stream);
                } else if (looped) {
                    recall_stream_locked(event.stream);  // as ``recall_stream`` does for the others, when read
                    if (event.kind == DONE) {
                        loop_streams.erase(event.stream);
                        loop_count = loop_streams.size();
                    }
                }
                out.push_back(std::move(event));
            }
            diverted = nullptr;
        }
        uncork_any(own);
        return out;
    }

    // ``message`` in one piece: in ``slices`` (held) when it came in one, else copied into ``joined``.
    static bool contiguous(const grpc::ByteBuffer& message, std::vector<grpc::Slice>* slices, std::string* joined,
                           const uint8_t** data, size_t* size) {
        if (!message.Dump(slices).ok()) return false;
        if (slices->size() == 1) {
            *data = (*slices)[0].begin();
            *size = (*slices)[0].size();
            return true;
        }
        for (auto& slice : *slices) joined->append(reinterpret_cast<const char*>(slice.begin()), slice.size());
        *data = reinterpret_cast<const uint8_t*>(joined->data());
        *size = joined->size();
        return true;
    }

    Lane* running_lane(std::string_view table_id) {
        auto found = lanes_by_table.find(std::string(table_id));
        return found == lanes_by_table.end() ? nullptr : found->second;
    }

    static void put_varint(std::string& out, uint64_t v) {
        while (v > 0x7F) {
            out.push_back(char((v & 0x7F) | 0x80));
            v >>= 7;
        }
        out.push_back(char(v));
    }

    static void put_key(std::string& out, uint32_t number) { put_varint(out, uint64_t(number) << 3 | 2); }

    std::vector<Event> take() {
        std::vector<Event> events;
        std::lock_guard<std::mutex> lock(events_mu_);
        uint64_t count;
        ssize_t got = ::read(event_fd, &count, sizeof count);  // nonblocking: clears the wake, if any
        (void)got;
        events.swap(events_);
        return events;
    }

private:
    std::mutex streams_mu_;
    std::unordered_map<uint64_t, Stream*> streams_;
    uint64_t last_id_ = 0;
    std::mutex events_mu_;
    std::vector<Event> events_;
};

void Stream::request(grpc::AsyncGenericService& service, grpc::ServerCompletionQueue* cq) {
    parts_->context.AsyncNotifyWhenDone(&tags_[OVER]);  // (it comes only for a call that came)
    service.RequestCall(&parts_->context, &parts_->rw, cq, cq, &tags_[CALL]);
}

void Stream::completed(Op op, bool ok) {
    switch (op) {
    case CALL:
        if (!ok) {  // the server is shutting down: no call came, nothing else will
            parts_.reset();
            server_->let_go_call();
            delete this;
            return;
        }
        server_->request_call();
        begin();
        return;
    case READ:
        read_done(ok);
        break;
    case WRITE:
        write_done(ok);
        break;
    case FINISH: {
        std::lock_guard<std::mutex> lock(mu);
        finish_back_ = true;
        break;
    }
    case OVER:
        {
            std::lock_guard<std::mutex> lock(mu);
            call_over_ = true;
        }
        if (parts_->context.IsCancelled()) cancelled();
        break;
    }
    std::unique_lock<std::mutex> lock(mu);
    if (!over_locked(lock)) return;
    bool now = holds == 0;
    lock.unlock();
    if (now) delete this;
}

void Stream::begin() {
    const std::string& method = parts_->context.method();
    if (method != server_->method) {  // as grpcio ends a call to a method it does not serve
        refused_ = true;
        finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "Method not found: " + method));
        return;
    }
    id_ = server_->add(this);
    server_->push(Event{OPENED, id_, {}, parts_->context.peer()});
    std::unique_lock<std::mutex> lock(mu);
    if (!finishing()) start_read_locked(lock);  // (Python may have finished it already, on the OPENED)
}

// Read the next message (never once the call is finishing: callers check): ``busy_`` keeps Finish back until the
// read is started.
void Stream::start_read_locked(std::unique_lock<std::mutex>& lock) {
    read_busy_ = true;
    ++busy_;
    lock.unlock();
    parts_->rw.Read(&reading_, &tags_[READ]);
    lock.lock();
    --busy_;
    finish_when_free_locked(lock);
}

void Stream::read_done(bool ok) {
    if (!ok) {  // the bot ended its side, or the call is over
        {
            std::lock_guard<std::mutex> lock(mu);
            read_busy_ = false;
            reads_over_ = true;
        }
        server_->recall_stream(id_);  // Python is to see the end with the stream's open requests its own
        server_->push(Event{READS_ENDED, id_, {}, {}});
        return;
    }
    bool behind;
    {
        std::lock_guard<std::mutex> lock(mu);
        behind = untaken_ > 0;  // messages given to Python and not yet handled there: this one follows them
    }
    Offer offered = server_->offer(id_, reading_, behind);
    if (offered == CONSUMED) {
        reading_.Clear();
    } else {
        Event event{MESSAGE, id_, {}, {}};
        event.message.Swap(&reading_);
        server_->push(std::move(event));
    }
    std::unique_lock<std::mutex> lock(mu);
    read_busy_ = false;
    if (offered != CONSUMED) ++untaken_;
    bool again = !finishing() && untaken_ < UNTAKEN_MOST;  // a call being finished is read no more
    read_paused_ = !again && !finishing();
    if (again) start_read_locked(lock);
}

void Stream::taken(int count) {
    std::unique_lock<std::mutex> lock(mu);
    untaken_ -= count;
    if (!read_paused_ || untaken_ >= UNTAKEN_MOST || reads_over_ || finishing()) return;
    read_paused_ = false;
    start_read_locked(lock);
}

size_t Stream::write(const char* data, size_t size, bool start) {
    std::unique_lock<std::mutex> lock(mu);
    if (finishing()) return 0;
    grpc::Slice slice(data, size);
    queued_.emplace_back(&slice, 1);
    size_t queued = queued_.size();
    if (!write_busy_ && start) start_next_write_locked(lock);
    return queued;
}

void Stream::kick() {
    std::unique_lock<std::mutex> lock(mu);
    if (!write_busy_ && !queued_.empty() && !finish_called_) start_next_write_locked(lock);
}

// The bytes of one queued message, in one piece.
std::string joined_bytes(const grpc::ByteBuffer& buffer) {
    std::vector<grpc::Slice> slices;
    std::string out;
    if (!buffer.Dump(&slices).ok()) return out;
    for (auto& slice : slices) out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    return out;
}

// Up to ``wire.BATCH_BYTES`` of the messages queued, packed into one RefereeMessage holding a RefereeBatch (a batch
// queued is unpacked into it: a batch holds no batch), and how many of them it holds.
size_t pack_queued(std::deque<grpc::ByteBuffer>& queued, grpc::ByteBuffer* out) {
    const ActionFormat& f = action_format;
    std::string body;
    size_t taken = 0;
    uint8_t batch_key = uint8_t(f.batch << 3 | 2);
    for (const grpc::ByteBuffer& item : queued) {
        std::string data = joined_bytes(item);
        if (taken > 0 && body.size() + data.size() > f.batch_bytes) break;
        Reader r{reinterpret_cast<const uint8_t*>(data.data()), reinterpret_cast<const uint8_t*>(data.data()) + data.size()};
        uint32_t number;
        int type;
        uint64_t value = 0;
        const uint8_t* inner = nullptr;
        size_t inner_len = 0;
        if (!data.empty() && uint8_t(data[0]) == batch_key && r.field(&number, &type, &value, &inner, &inner_len) &&
            r.at == r.end) {
            body.append(reinterpret_cast<const char*>(inner), inner_len);  // its messages, as they are
        } else {
            NativeServer::put_key(body, f.batch_messages);
            NativeServer::put_varint(body, data.size());
            body.append(data);
        }
        ++taken;
    }
    std::string message;
    NativeServer::put_key(message, f.batch);
    NativeServer::put_varint(message, body.size());
    message.append(body);
    grpc::Slice slice(message.data(), message.size());
    *out = grpc::ByteBuffer(&slice, 1);
    return taken;
}

void Stream::start_next_write_locked(std::unique_lock<std::mutex>& lock) {
    size_t packed = 0;
    if (batches_ && wrote_ && queued_.size() > 1 && action_format.batch != 0) {  // what queued while a write was
        packed = pack_queued(queued_, &writing_);                                 // out goes out as one
        if (packed < 2) writing_.Clear();
        else queued_.erase(queued_.begin(), queued_.begin() + long(packed));
    }
    if (packed < 2) {
        writing_.Swap(&queued_.front());
        queued_.pop_front();
    }
    wrote_ = true;
    write_busy_ = true;  // no Finish until it is done
    lock.unlock();
    parts_->rw.Write(writing_, &tags_[WRITE]);
}

void Stream::write_done(bool ok) {
    std::unique_lock<std::mutex> lock(mu);
    write_busy_ = false;
    writing_.Clear();
    if (!ok) queued_.clear();  // the call is over: nothing more goes out
    if (!queued_.empty()) {
        start_next_write_locked(lock);
        return;
    }
    finish_when_free_locked(lock);
}

void Stream::finish(grpc::Status status) {
    std::unique_lock<std::mutex> lock(mu);
    if (finishing()) return;
    finish_wanted_ = true;  // once what is queued is written (write_done)
    finish_status_ = std::move(status);
    finish_when_free_locked(lock);
}

void Stream::finish_when_free_locked(std::unique_lock<std::mutex>& lock) {
    if (!finish_wanted_ || finish_called_ || write_busy_ || busy_ > 0 || !queued_.empty()) return;
    finish_called_ = true;
    grpc::Status status = finish_status_;
    lock.unlock();
    parts_->rw.Finish(status, &tags_[FINISH]);
    lock.lock();
}

void Stream::cancel() {
    // a bot that does not read what it is sent: its last writes would wait for it for ever, and the call with them
    std::unique_lock<std::mutex> lock(mu);
    if (finish_called_) return;  // Finish is done or under way: the call ends without help
    // the context lives until the call's end, which cannot come before Finish, held back meanwhile. (``busy_`` is
    // never raised once Finish is called: only the polling thread checks for the call's end, on the FINISH tag, so a
    // ``busy_`` let go after that tag came back would leave the call unended and the shutdown waiting for it)
    ++busy_;
    lock.unlock();
    parts_->context.TryCancel();
    lock.lock();
    --busy_;
    finish_when_free_locked(lock);
}

void Stream::cancelled() {
    // the bot cancelled, its connection broke, the server is shutting down, or Python cancelled: the call ends (its
    // writes fail, and nothing more is sent)
    std::unique_lock<std::mutex> lock(mu);
    queued_.clear();
    if (!finishing()) {
        finish_wanted_ = true;
        finish_status_ = grpc::Status::CANCELLED;
    }
    finish_when_free_locked(lock);
}

// The call's end, once: every operation started is back and gRPC said the call is over. Python is told (DONE) and
// gRPC's parts are let go (which ends the call in gRPC: a server's shutdown waits for it).
bool Stream::over_locked(std::unique_lock<std::mutex>& lock) {
    if (ending_ || !call_over_ || !finish_back_ || read_busy_ || write_busy_ || busy_ > 0) return false;
    ending_ = true;
    lock.unlock();
    if (!refused_) {
        server_->forget(id_);
        server_->recall_stream(id_);
        server_->push(Event{DONE, id_, {}, {}});
    }
    parts_.reset();
    server_->let_go_call();
    lock.lock();
    done_ = true;  // only now: a Python call that let go of the stream before would otherwise delete it under us
    return true;
}

bool Stream::release() {
    std::lock_guard<std::mutex> lock(mu);
    --holds;
    return done_ && holds == 0;
}

// ------------------------------------------------------------------ Python

struct ServerObject {
    PyObject_HEAD
    NativeServer* native;
};

// Once per server, whoever calls first; the others return at once (while it may still be under way).
void shut_down(NativeServer* native, double grace_s) {
    {
        std::lock_guard<std::mutex> lock(native->request_mu);  // no call is asked for from now on
        if (native->shutting) return;
        native->shutting = true;
    }
    auto deadline = std::chrono::system_clock::now() +
                    std::chrono::microseconds(static_cast<int64_t>(grace_s * 1e6));
    if (native->server) {
        // cancels the calls still open at the deadline; returns when gRPC's own shutdown is done, which can be
        // before those calls have come back to us (``wait_calls_over``; the polling thread runs on meanwhile)
        native->server->Shutdown(deadline);
        native->server->Wait();
    }
    native->wait_calls_over();  // every call cancelled by now comes back (to the poller) and ends
    native->cq->Shutdown();  // after the server's, as gRPC asks; the poller drains it and ends
    if (native->poller.joinable()) {
        native->poller.join();
    } else {  // never started (the server did not start): drained here
        native->poll();
    }
    native->server.reset();
    native->stopped = true;
}

PyObject* server_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static const char* names[] = {"address", "method", "options", nullptr};
    const char* address;
    const char* method;
    PyObject* options;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ssO", const_cast<char**>(names), &address, &method, &options))
        return nullptr;
    PyObject* items = PySequence_Fast(options, "options must be a sequence of (name, value) pairs");
    if (items == nullptr) return nullptr;
    auto native = std::make_unique<NativeServer>();
    native->method = method;
    grpc::ServerBuilder builder;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* pair = PySequence_Fast_GET_ITEM(items, i);
        const char* name;
        PyObject* value;
        if (!PyArg_ParseTuple(pair, "sO", &name, &value)) {
            Py_DECREF(items);
            return nullptr;
        }
        if (PyLong_Check(value)) {
            long number = PyLong_AsLong(value);
            if (number == -1 && PyErr_Occurred()) {
                Py_DECREF(items);
                return nullptr;
            }
            builder.AddChannelArgument(name, static_cast<int>(number));
        } else if (PyUnicode_Check(value)) {
            const char* text = PyUnicode_AsUTF8(value);
            if (text == nullptr) {
                Py_DECREF(items);
                return nullptr;
            }
            builder.AddChannelArgument(name, std::string(text));
        } else {
            Py_DECREF(items);
            PyErr_Format(PyExc_TypeError, "option %s must be an int or a str", name);
            return nullptr;
        }
    }
    Py_DECREF(items);
    native->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (native->event_fd < 0) return PyErr_SetFromErrno(PyExc_OSError);
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &native->port);
    builder.RegisterAsyncGenericService(&native->service);
    native->cq = builder.AddCompletionQueue();
    grpc::ResourceQuota quota("arena-bots");
    quota.Resize(MEMORY_MOST);
    builder.SetResourceQuota(quota);
    Py_BEGIN_ALLOW_THREADS
    native->server = builder.BuildAndStart();
    Py_END_ALLOW_THREADS
    if (native->server) {
        native->request_call();
        NativeServer* polled = native.get();
        native->poller = std::thread([polled] { polled->poll(); });
    } else {
        shut_down(native.get(), 0);  // its queue shut down and drained
        ::close(native->event_fd);
        PyErr_Format(PyExc_RuntimeError, "gRPC's C++ server could not listen on %s", address);
        return nullptr;
    }
    ServerObject* self = reinterpret_cast<ServerObject*>(type->tp_alloc(type, 0));
    if (self == nullptr) {
        shut_down(native.get(), 0);
        ::close(native->event_fd);
        return nullptr;
    }
    self->native = native.release();
    return reinterpret_cast<PyObject*>(self);
}

void server_dealloc(ServerObject* self) {
    if (self->native != nullptr) {
        Py_BEGIN_ALLOW_THREADS
        shut_down(self->native, 0);
        Py_END_ALLOW_THREADS
        if (self->native->stopped) {
            Py_BEGIN_ALLOW_THREADS
            self->native->stop_kicker();
            Py_END_ALLOW_THREADS
            for (auto& entry : self->native->lanes) release_lane(*entry.second);  // untaken lanes' hands
            for (Stream* stream : self->native->python_cork.streams) NativeServer::let_go(stream);
            if (self->native->event_fd >= 0) ::close(self->native->event_fd);
            delete self->native;
        }  // else a shutdown begun elsewhere never returned (a frozen peer): its server is left as it is
    }
    Py_TYPE(self)->tp_free(reinterpret_cast<PyObject*>(self));
}

// The messages Python took are handled: their streams' lanes may take what they send next, and their reading goes
// on if it waited for Python (UNTAKEN_MOST).
void handled(NativeServer* native) {
    for (auto& [stream, count] : native->handling) {
        Stream* held = native->hold(stream);
        if (held == nullptr) continue;
        held->taken(count);
        NativeServer::let_go(held);
    }
    native->handling.clear();
}

PyObject* server_handled(ServerObject* self, PyObject*) {
    handled(self->native);
    Py_RETURN_NONE;
}

PyObject* server_take(ServerObject* self, PyObject*) {
    std::vector<Event> events = self->native->take();
    if (self->native->loop_count.load() > 0) events = self->native->play_loop(std::move(events));
    Py_ssize_t handed = 0;
    for (const Event& event : events) handed += event.kind != PLAYED;
    PyObject* list = PyList_New(handed);
    if (list == nullptr) return nullptr;
    // the messages taken, per stream, counted as handled once Python says so (``handled``): until then a lane takes
    // nothing more from that stream, and past UNTAKEN_MOST it is not read
    uint64_t last = 0;
    int run = 0;
    auto taken = [&](uint64_t stream, int count) {
        if (count > 0) self->native->handling.emplace_back(stream, count);
    };
    Py_ssize_t i = 0;
    for (Event& event : events) {
        PyObject* payload;
        if (event.kind == MESSAGE || event.kind == PLAYED) {
            if (event.stream != last) {
                taken(last, run);
                last = event.stream;
                run = 0;
            }
            ++run;
            if (event.kind == PLAYED) continue;
            std::vector<grpc::Slice> slices;
            event.message.Dump(&slices);
            size_t size = 0;
            for (auto& slice : slices) size += slice.size();
            payload = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
            if (payload != nullptr) {
                char* into = PyBytes_AS_STRING(payload);
                for (auto& slice : slices) {
                    memcpy(into, slice.begin(), slice.size());
                    into += slice.size();
                }
            }
        } else if (event.kind == OPENED) {
            payload = PyUnicode_DecodeUTF8(event.text.data(), static_cast<Py_ssize_t>(event.text.size()), "replace");
        } else {
            payload = Py_NewRef(Py_None);
        }
        PyObject* item = payload == nullptr ? nullptr
                                            : Py_BuildValue("(iKN)", static_cast<int>(event.kind),
                                                            static_cast<unsigned long long>(event.stream), payload);
        if (item == nullptr) {  // out of memory: the events not handed over are lost, their streams read on
            Py_DECREF(list);
            taken(last, run);
            for (Event& rest : events)
                if (&rest > &event && (rest.kind == MESSAGE || rest.kind == PLAYED)) taken(rest.stream, 1);
            handled(self->native);
            return nullptr;
        }
        PyList_SET_ITEM(list, i++, item);
    }
    taken(last, run);
    return list;
}

PyObject* server_write(ServerObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "write(stream: int, data: bytes)");
        return nullptr;
    }
    unsigned long long id = PyLong_AsUnsignedLongLong(args[0]);
    if (id == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
    NativeServer* native = self->native;
    Stream* stream = native->hold(id);
    if (stream == nullptr) return PyLong_FromLong(0);
    size_t queued = native->write_to(stream, PyBytes_AS_STRING(args[1]), static_cast<size_t>(PyBytes_GET_SIZE(args[1])),
                                     native->python_corked ? &native->python_cork : nullptr);
    NativeServer::let_go(stream);
    return PyLong_FromSize_t(queued);
}

PyObject* server_finish(ServerObject* self, PyObject* args) {
    unsigned long long id;
    int code;
    const char* details;
    if (!PyArg_ParseTuple(args, "Kis", &id, &code, &details)) return nullptr;
    if (code < 0 || code > 16) {
        PyErr_Format(PyExc_ValueError, "%d is not a gRPC status code", code);
        return nullptr;
    }
    Stream* stream = self->native->hold(id);
    if (stream != nullptr) {
        stream->finish(grpc::Status(static_cast<grpc::StatusCode>(code), details));
        NativeServer::let_go(stream);
    }
    Py_RETURN_NONE;
}

PyObject* server_cancel(ServerObject* self, PyObject* arg) {
    unsigned long long id = PyLong_AsUnsignedLongLong(arg);
    if (id == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
    Stream* stream = self->native->hold(id);
    if (stream != nullptr) {
        stream->cancel();
        NativeServer::let_go(stream);
    }
    Py_RETURN_NONE;
}

PyObject* server_cork(ServerObject* self, PyObject*) {
    self->native->python_corked = true;
    Py_RETURN_NONE;
}

PyObject* server_uncork(ServerObject* self, PyObject*) {
    NativeServer* native = self->native;
    native->python_corked = false;
    native->uncork_any(native->python_cork);
    Py_RETURN_NONE;
}

PyObject* server_set_batches(ServerObject* self, PyObject* args) {
    unsigned long long id;
    int on;
    if (!PyArg_ParseTuple(args, "Kp", &id, &on)) return nullptr;
    Stream* stream = self->native->hold(id);
    if (stream != nullptr) {
        stream->set_batches(on != 0);
        NativeServer::let_go(stream);
    }
    Py_RETURN_NONE;
}

PyObject* server_shutdown(ServerObject* self, PyObject* args) {
    double grace_s;
    if (!PyArg_ParseTuple(args, "d", &grace_s)) return nullptr;
    Py_BEGIN_ALLOW_THREADS
    shut_down(self->native, grace_s);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

// lane_open(table_id, hand_id, hand, head, seats, timeouts, first_request_id) -> lane id: a lane for ``hand`` (an
// arena.engine._core.Hand, left alone by Python until ``lane_take``), whose first request it writes now. ``seats``:
// one (stream, name, tail, per_action_ms, bank_ms) per seat, stream 0 for a seat the lane does not ask;
// ``timeouts``: one byte per event so far, 1 for an action the referee made for a seat; ``loop``: its seats' bots
// play several tables, their messages are offered to the lanes at Python's turn (``play_loop``) from now on. 0: the
// table has a lane running already.
PyObject* server_lane_open(ServerObject* self, PyObject* args) {
    const char *table_id, *hand_id;
    Py_ssize_t table_len, hand_len, head_len, timeouts_len;
    PyObject *hand, *seats;
    const char *head, *timeouts;
    long long first;
    int loop = 0;
    if (!PyArg_ParseTuple(args, "s#s#Oy#Oy#L|p", &table_id, &table_len, &hand_id, &hand_len, &hand, &head, &head_len,
                          &seats, &timeouts, &timeouts_len, &first, &loop))
        return nullptr;
    if (core == nullptr || !action_format.ready) {
        PyErr_SetString(PyExc_RuntimeError, "lane_open(): set_action_format was not called");
        return nullptr;
    }
    void* state = core->state_of(hand);
    if (state == nullptr) return nullptr;
    auto lane = std::make_unique<Lane>();
    lane->table_id.assign(table_id, size_t(table_len));
    lane->hand_id.assign(hand_id, size_t(hand_len));
    lane->head.assign(head, size_t(head_len));
    lane->timeouts.assign(timeouts, timeouts + timeouts_len);
    lane->next_request_id = first;
    lane->buffer.resize(2048);
    PyObject* items = PySequence_Fast(seats, "seats must be a sequence");
    if (items == nullptr) return nullptr;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    lane->seats.resize(size_t(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
        unsigned long long stream;
        const char *name, *tail;
        Py_ssize_t name_len, tail_len;
        double per_action_ms, bank_ms;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(items, i), "Ks#y#dd", &stream, &name, &name_len, &tail,
                              &tail_len, &per_action_ms, &bank_ms)) {
            Py_DECREF(items);
            return nullptr;
        }
        LaneSeat& seat = lane->seats[size_t(i)];
        seat.stream = stream;
        seat.name.assign(name, size_t(name_len));
        seat.tail.assign(tail, size_t(tail_len));
        seat.per_action_ms = per_action_ms;
        seat.bank_ms = bank_ms;
    }
    Py_DECREF(items);
    for (LaneSeat& seat : lane->seats) lane->names.push_back(ArenaText{seat.name.data(), seat.name.size()});
    NativeServer* native = self->native;
    std::lock_guard<std::mutex> lock(native->lanes_mu);
    if (native->lanes_by_table.count(lane->table_id)) return PyLong_FromLong(0);
    Py_INCREF(hand);
    lane->hand = hand;
    lane->state = state;
    lane->id = ++native->last_lane;
    Lane& opened = *lane;
    native->lanes_by_table[opened.table_id] = &opened;
    native->lanes[opened.id] = std::move(lane);
    ++native->lanes_running;
    if (loop) {  // its seats' streams are offered to the lanes at Python's turn from now on (``play_loop``)
        for (const LaneSeat& seat : opened.seats)
            if (seat.stream != 0) native->loop_streams.insert(seat.stream);
        native->loop_count = native->loop_streams.size();
    }
    native->ask_next_locked(opened, native->python_corked ? &native->python_cork : nullptr);
    return PyLong_FromUnsignedLongLong(opened.id);
}

// A lane's records as Python takes them: (seat, request_id, kind, amount, elapsed_s, event_index, comment) each.
PyObject* records_list(const std::vector<LaneRecord>& lane_records) {
    PyObject* records = PyList_New(Py_ssize_t(lane_records.size()));
    if (records == nullptr) return nullptr;
    for (size_t i = 0; i < lane_records.size(); ++i) {
        const LaneRecord& r = lane_records[i];
        PyObject* item = Py_BuildValue("(iLiLdLs#)", r.seat, static_cast<long long>(r.request_id), r.kind,
                                       static_cast<long long>(r.amount), r.elapsed_s,
                                       static_cast<long long>(r.event_index), r.comment.data(),
                                       static_cast<Py_ssize_t>(r.comment.size()));
        if (item == nullptr) {
            Py_DECREF(records);
            return nullptr;
        }
        PyList_SET_ITEM(records, Py_ssize_t(i), item);
    }
    return records;
}

PyObject* banks_list(const std::vector<double>& values) {
    PyObject* banks = PyList_New(Py_ssize_t(values.size()));
    if (banks == nullptr) return nullptr;
    for (size_t i = 0; i < values.size(); ++i) {
        PyObject* bank = PyFloat_FromDouble(values[i]);
        if (bank == nullptr) {
            Py_DECREF(banks);
            return nullptr;
        }
        PyList_SET_ITEM(banks, Py_ssize_t(i), bank);
    }
    return banks;
}

// The hands ``done`` holds, as (records, banks, next_request_id) each, in the order finished; their hands let go.
PyObject* done_list(std::vector<LaneDone>& done) {
    PyObject* out = PyList_New(0);
    for (LaneDone& hand : done) {
        Py_CLEAR(hand.hand);
        if (out == nullptr) continue;
        PyObject* item = Py_BuildValue("(NNL)", records_list(hand.records), banks_list(hand.banks),
                                       static_cast<long long>(hand.next_request_id));
        if (item == nullptr || PyList_Append(out, item) < 0) Py_CLEAR(out);
        Py_XDECREF(item);
    }
    done.clear();
    return out;
}

// lane_arm(lane, hand, hand_id, head, tails, starts, from_seats, first_request_id) -> True if armed: the running lane goes on
// to ``hand`` (an arena.engine._core.Hand, left alone by Python until the lane is taken, or HAND_DONE says it went
// on from it) when its own hand ends, if it asks every seat: each seat's HandEnd and ``starts`` (its HandStart) are
// written, and the next hand asked from ``first_request_id``, its requests' config fields ``tails``; ``from_seats``:
// for each seat of the next hand, the seat its bot holds in this one. False: the
// lane has ended, or has a hand armed already.
PyObject* server_lane_arm(ServerObject* self, PyObject* args) {
    unsigned long long id;
    const char *hand_id, *head;
    Py_ssize_t hand_len, head_len;
    PyObject *hand, *tails, *starts, *from;
    long long first;
    if (!PyArg_ParseTuple(args, "KOs#y#OOOL", &id, &hand, &hand_id, &hand_len, &head, &head_len, &tails, &starts,
                          &from, &first))
        return nullptr;
    void* state = core->state_of(hand);
    if (state == nullptr) return nullptr;
    auto next = std::make_unique<LaneNext>();
    next->state = state;
    next->hand_id.assign(hand_id, size_t(hand_len));
    next->head.assign(head, size_t(head_len));
    next->first_request_id = first;
    for (auto [list, out] : {std::pair{tails, &next->tails}, std::pair{starts, &next->starts}}) {
        PyObject* items = PySequence_Fast(list, "tails and starts must be sequences of bytes");
        if (items == nullptr) return nullptr;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); ++i) {
            char* data;
            Py_ssize_t size;
            if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(items, i), &data, &size) < 0) {
                Py_DECREF(items);
                return nullptr;
            }
            out->emplace_back(data, size_t(size));
        }
        Py_DECREF(items);
    }
    PyObject* seats_from = PySequence_Fast(from, "from_seats must be a sequence of ints");
    if (seats_from == nullptr) return nullptr;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seats_from); ++i) {
        size_t seat = PyLong_AsSize_t(PySequence_Fast_GET_ITEM(seats_from, i));
        if (seat == size_t(-1) && PyErr_Occurred()) {
            Py_DECREF(seats_from);
            return nullptr;
        }
        next->from.push_back(seat);
    }
    Py_DECREF(seats_from);
    NativeServer* native = self->native;
    std::lock_guard<std::mutex> lock(native->lanes_mu);
    auto found = native->lanes.find(id);
    if (found == native->lanes.end() || !found->second->running || found->second->next) Py_RETURN_FALSE;
    Lane& lane = *found->second;
    size_t n = lane.seats.size();
    std::vector<bool> seen(n, false);
    bool ok = next->tails.size() == n && next->starts.size() == n && next->from.size() == n;
    for (size_t k = 0; ok && k < n; ++k) {
        ok = next->from[k] < n && !seen[next->from[k]];
        if (ok) seen[next->from[k]] = true;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "lane_arm(): one tail, one start and one seat of this hand per seat");
        return nullptr;
    }
    Py_INCREF(hand);
    next->hand = hand;
    lane.next = std::move(next);
    Py_RETURN_TRUE;
}

// lane_done(lane) -> the hands the lane finished and went on from since last asked (HAND_DONE), in order: one
// (records, banks, next_request_id) each (records as lane_take's); [] once taken.
PyObject* server_lane_done(ServerObject* self, PyObject* arg) {
    unsigned long long id = PyLong_AsUnsignedLongLong(arg);
    if (id == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
    NativeServer* native = self->native;
    std::vector<LaneDone> done;
    {
        std::lock_guard<std::mutex> lock(native->lanes_mu);
        auto found = native->lanes.find(id);
        if (found != native->lanes.end()) done.swap(found->second->done);
    }
    return done_list(done);
}

// lane_take(lane) -> None, or (records, open, banks, unread, next_request_id, done), once: the lane ended now if it was
// running. records: (seat, request_id, kind, amount, elapsed_s, event_index, comment) per decision played, the
// comment as the bot sent it; open: (seat, request_id, sent, allowance_s, action_ms_left, bank_ms_left) of the
// request written and not answered, or None;
// banks: each seat's BotClock.bank_ms; unread: the stream that held more than MAX_QUEUED writes with the open
// request (its bot is not reading), or 0.
PyObject* server_lane_take(ServerObject* self, PyObject* arg) {
    unsigned long long id = PyLong_AsUnsignedLongLong(arg);
    if (id == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
    NativeServer* native = self->native;
    std::unique_ptr<Lane> lane;
    {
        std::lock_guard<std::mutex> lock(native->lanes_mu);
        auto found = native->lanes.find(id);
        if (found == native->lanes.end()) Py_RETURN_NONE;
        native->end_lane_locked(*found->second);
        lane = std::move(found->second);
        native->lanes.erase(found);
    }
    std::vector<double> bank_values;
    for (const LaneSeat& seat : lane->seats) bank_values.push_back(seat.bank_ms);
    PyObject* open = Py_None;
    if (lane->open_seat >= 0)
        open = Py_BuildValue("(iLddLL)", lane->open_seat, static_cast<long long>(lane->open_request), lane->sent,
                             lane->allowance_s, static_cast<long long>(lane->action_ms_left),
                             static_cast<long long>(lane->bank_ms_left));
    else
        Py_INCREF(open);
    PyObject* result = Py_BuildValue("(NNNKLN)", records_list(lane->records), open, banks_list(bank_values),
                                     static_cast<unsigned long long>(lane->unread),
                                     static_cast<long long>(lane->next_request_id), done_list(lane->done));
    release_lane(*lane);
    return result;
}

// lane_remaining(lane) -> seconds left on the lane's open request (negative once over), or None when it has none.
PyObject* server_lane_remaining(ServerObject* self, PyObject* arg) {
    unsigned long long id = PyLong_AsUnsignedLongLong(arg);
    if (id == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
    NativeServer* native = self->native;
    std::lock_guard<std::mutex> lock(native->lanes_mu);
    auto found = native->lanes.find(id);
    if (found == native->lanes.end() || !found->second->running || found->second->open_seat < 0) Py_RETURN_NONE;
    const Lane& lane = *found->second;
    return PyFloat_FromDouble(lane.allowance_s - (monotonic_s() - lane.sent));
}

// set_action_format(message_action, message_batch, batch_actions, table_id, hand_id, request_id, kind, amount,
// comment, kinds, max_queued, batch, batch_messages, batch_bytes): how Actions are read (field numbers; ``kinds`` maps
// ActionKind's wire values to the engine's) and RefereeBatches packed (``set_batches``), and the compiled engine's C
// API loaded. Before any lane; once per process.
PyObject* set_action_format(PyObject*, PyObject* args) {
    ActionFormat f;
    PyObject* kinds;
    unsigned long long max_queued;
    unsigned long long batch_bytes;
    if (!PyArg_ParseTuple(args, "IIIIIIIIIOKIIK", &f.message_action, &f.message_batch, &f.batch_actions, &f.table_id,
                          &f.hand_id, &f.request_id, &f.kind, &f.amount, &f.comment, &kinds, &max_queued, &f.batch,
                          &f.batch_messages, &batch_bytes))
        return nullptr;
    if (!PyDict_Check(kinds)) {
        PyErr_SetString(PyExc_TypeError, "kinds must be a dict");
        return nullptr;
    }
    PyObject *key, *value;
    Py_ssize_t at = 0;
    while (PyDict_Next(kinds, &at, &key, &value)) {
        long long wire = PyLong_AsLongLong(key);
        long engine = PyLong_AsLong(value);
        if (PyErr_Occurred()) return nullptr;
        f.kinds[wire] = int(engine);
    }
    f.max_queued = size_t(max_queued);
    f.batch_bytes = size_t(batch_bytes);
    f.ready = true;
    if (core == nullptr) {
        auto* api = static_cast<const ArenaCoreApi*>(PyCapsule_Import(ARENA_CORE_API_CAPSULE, 0));
        if (api == nullptr) return nullptr;
        if (api->version != ARENA_CORE_API_VERSION) {
            PyErr_Format(PyExc_ImportError, "arena.engine._core's C API is version %d, not %d", api->version,
                         ARENA_CORE_API_VERSION);
            return nullptr;
        }
        core = api;
    }
    if (!action_format.ready) action_format = std::move(f);  // once: the polling thread reads it without a lock
    Py_RETURN_NONE;
}

PyObject* server_fd(ServerObject* self, void*) { return PyLong_FromLong(self->native->event_fd); }
PyObject* server_port(ServerObject* self, void*) { return PyLong_FromLong(self->native->port); }

PyMethodDef server_methods[] = {
    {"take", reinterpret_cast<PyCFunction>(server_take), METH_NOARGS,
     "take() -> list of (kind, stream, payload): the events queued since the last take (kind OPENED: the peer; "
     "MESSAGE: its bytes; READS_ENDED, DONE, LANE_ENDED: None); call handled() once they are."},
    {"write", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(server_write)), METH_FASTCALL,
     "write(stream, data) -> the writes queued on the stream with this one (0: the stream is gone or finishing)."},
    {"finish", reinterpret_cast<PyCFunction>(server_finish), METH_VARARGS,
     "finish(stream, code, details): end the call with that status once its queued writes are sent."},
    {"cancel", reinterpret_cast<PyCFunction>(server_cancel), METH_O,
     "cancel(stream): end the call at once, unsent writes dropped (a bot that does not read its last messages)."},
    {"shutdown", reinterpret_cast<PyCFunction>(server_shutdown), METH_VARARGS,
     "shutdown(grace_s): stop listening; calls still open after grace_s are cancelled; returns when all are done."},
    {"handled", reinterpret_cast<PyCFunction>(server_handled), METH_NOARGS,
     "handled(): the messages taken are handled (their streams are read on, and their lanes may take more)."},
    {"cork", reinterpret_cast<PyCFunction>(server_cork), METH_NOARGS,
     "cork(): what this thread writes (write, lane_open) queues until uncork(), one write per stream then."},
    {"uncork", reinterpret_cast<PyCFunction>(server_uncork), METH_NOARGS,
     "uncork(): start writing what queued since cork()."},
    {"set_batches", reinterpret_cast<PyCFunction>(server_set_batches), METH_VARARGS,
     "set_batches(stream, on): its bot takes RefereeBatches: messages queued behind a write go out as one."},
    {"lane_open", reinterpret_cast<PyCFunction>(server_lane_open), METH_VARARGS,
     "lane_open(table_id, hand_id, hand, head, seats, timeouts, first_request_id, loop=False) -> a lane playing the "
     "hand's decisions on the polling thread, or with loop at take() (0: the table has one running)."},
    {"lane_arm", reinterpret_cast<PyCFunction>(server_lane_arm), METH_VARARGS,
     "lane_arm(lane, hand, hand_id, head, tails, starts, from_seats, first_request_id) -> whether the lane goes on "
     "to that hand "
     "when its own ends."},
    {"lane_done", reinterpret_cast<PyCFunction>(server_lane_done), METH_O,
     "lane_done(lane) -> [(records, banks, next_request_id)] of the hands it finished and went on from."},
    {"lane_take", reinterpret_cast<PyCFunction>(server_lane_take), METH_O,
     "lane_take(lane) -> (records, open, banks, unread, next_request_id, done), ending it if it runs; None if "
     "taken."},
    {"lane_remaining", reinterpret_cast<PyCFunction>(server_lane_remaining), METH_O,
     "lane_remaining(lane) -> seconds left on its open request, or None."},
    {nullptr, nullptr, 0, nullptr},
};

PyMethodDef module_methods[] = {
    {"set_action_format", reinterpret_cast<PyCFunction>(set_action_format), METH_VARARGS,
     "set_action_format(message_action, message_batch, batch_actions, table_id, hand_id, request_id, kind, amount, "
     "comment, kinds, max_queued, batch, batch_messages, batch_bytes): how the lanes read Actions and writes are "
     "packed; loads the engine's C API."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef server_getset[] = {
    {"fd", reinterpret_cast<getter>(server_fd), nullptr, "the eventfd that is readable when events are queued",
     nullptr},
    {"port", reinterpret_cast<getter>(server_port), nullptr, "the TCP port bound (0 for a Unix-domain socket)",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject ServerType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native_server",
                      "One gRPC method served by gRPC's C++ library from a thread of its own (see the .cpp).", -1,
                      module_methods};

}  // namespace

PyMODINIT_FUNC PyInit__native_server(void) {
    // gRPC's library stays initialized for the process's life: destroying its last server would otherwise shut
    // the whole library down, which joins its executor's threads and took 10 s now and then (the module is
    // imported only by a referee that serves with it: arena/transport/native_server.py)
    // Debian builds Abseil without NDEBUG, so every lock of libgrpc's mutexes walked Abseil's deadlock graph (a
    // global lock and a hash lookup each, on gRPC's threads): off, as in a release build (this Abseil is the
    // system's, libgrpc++'s; grpcio carries its own)
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    grpc_init();
    ServerType.tp_name = "arena.transport._native_server.Server";
    ServerType.tp_basicsize = sizeof(ServerObject);
    ServerType.tp_flags = Py_TPFLAGS_DEFAULT;
    ServerType.tp_doc =
        "Server(address, method, options): serves ``method`` on ``address`` from libgrpc++ on a polling thread of its "
        "own.";
    ServerType.tp_new = server_new;
    ServerType.tp_dealloc = reinterpret_cast<destructor>(server_dealloc);
    ServerType.tp_methods = server_methods;
    ServerType.tp_getset = server_getset;
    if (PyType_Ready(&ServerType) < 0) return nullptr;
    PyObject* m = PyModule_Create(&module);
    if (m == nullptr) return nullptr;
    Py_INCREF(&ServerType);
    if (PyModule_AddObject(m, "Server", reinterpret_cast<PyObject*>(&ServerType)) < 0) {
        Py_DECREF(&ServerType);
        Py_DECREF(m);
        return nullptr;
    }
    const char* names[] = {"OPENED", "MESSAGE", "READS_ENDED", "DONE", "LANE_ENDED"};
    for (int kind = OPENED; kind <= LANE_ENDED; ++kind) PyModule_AddIntConstant(m, names[kind], kind);
    PyModule_AddIntConstant(m, "HAND_DONE", HAND_DONE);
    PyModule_AddIntConstant(m, "UNTAKEN_MOST", UNTAKEN_MOST);
    return m;
}
