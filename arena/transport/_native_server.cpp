// The bots' gRPC service (BotService.Play) served by gRPC's C++ library (libgrpc++) from its own threads, inside
// the referee's Python process (beside grpcio, which keeps every other service).
//
// Why: grpc.aio hands every message through its polling thread and the asyncio loop, one at a time. Here the C++
// threads read and write the streams, never touching Python: what they read is queued as events, and the
// referee's loop is woken through an eventfd, once for however many events are queued, to take them all in one call
// (``take``). Writes are queued per stream and started at once from the calling thread. Where this stands
// (measured figures): arena/transport/native_server.py.
//
// The module knows nothing of the protocol: a stream is an id, its messages bytes. Who may join, what a message
// means, every limit and refusal stay in Python (arena/transport/native_server.py, bot_service.py).

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <grpcpp/generic/async_generic_service.h>
#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/support/byte_buffer.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

enum EventKind { OPENED = 0, MESSAGE = 1, READS_ENDED = 2, DONE = 3 };

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

// One BotService.Play call. Its state is guarded by ``mu``, and gRPC is never called with ``mu`` held. The call is
// finished (``Finish``) only when no write is in flight (``write_busy_``) and no operation Python's thread started is
// under way (``busy_``: a read resumed, a cancellation): gRPC ends the call once Finish is done, and an operation
// started on an ended call would touch freed memory. The reactor itself is deleted when gRPC is done with it
// (``OnDone``) and no Python call holds it (``holds``).
class Stream final : public grpc::ServerGenericBidiReactor {
public:
    Stream(NativeServer* server, grpc::GenericCallbackServerContext* context) : server_(server), context_(context) {}
    void begin(uint64_t id, const std::string& peer);  // tells Python of the stream and reads its first message

    void OnReadDone(bool ok) override;
    void OnWriteDone(bool ok) override;
    void OnCancel() override;
    void OnDone() override;

    // Python's side (each with the stream held: ``NativeServer::hold``)
    size_t write(const char* data, size_t size);
    void finish(grpc::Status status);
    void cancel();
    void taken(int count);
    bool release();  // true if the stream is to be deleted now

    std::mutex mu;
    int holds = 0;

private:
    void start_next_write_locked(std::unique_lock<std::mutex>& lock);
    void finish_when_free_locked(std::unique_lock<std::mutex>& lock);
    bool finishing() const { return finish_called_ || finish_wanted_; }

    NativeServer* server_;
    grpc::GenericCallbackServerContext* context_;  // gRPC's, alive until OnDone (which follows Finish)
    uint64_t id_ = 0;
    grpc::ByteBuffer reading_;
    grpc::ByteBuffer writing_;
    std::deque<grpc::ByteBuffer> queued_;
    bool write_busy_ = false;
    int busy_ = 0;
    bool reads_over_ = false;
    bool read_paused_ = false;
    int untaken_ = 0;
    bool finish_called_ = false;
    bool finish_wanted_ = false;
    grpc::Status finish_status_;
    bool done_ = false;
};

class Service final : public grpc::CallbackGenericService {
public:
    explicit Service(NativeServer* server) : server_(server) {}
    grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override;

private:
    NativeServer* server_;
};

class NativeServer {
public:
    NativeServer() : service_(this) {}

    std::string method;  // the one method served: "/arena.v1.BotService/Play"
    std::atomic<bool> shutting{false};  // a shutdown has begun (``shut_down``: once)
    std::atomic<bool> stopped{false};   // and returned
    int event_fd = -1;
    int port = 0;
    std::unique_ptr<grpc::Server> server;
    Service service_;

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
    // raised under ``streams_mu_``: OnDone forgets the stream under it first, so it never deletes one being held.
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

void Stream::begin(uint64_t id, const std::string& peer) {
    id_ = id;
    server_->push(Event{OPENED, id_, {}, peer});
    StartRead(&reading_);
}

void Stream::OnReadDone(bool ok) {
    if (!ok) {  // the bot ended its side, or the call is over
        {
            std::lock_guard<std::mutex> lock(mu);
            reads_over_ = true;
        }
        server_->push(Event{READS_ENDED, id_, {}, {}});
        return;
    }
    Event event{MESSAGE, id_, {}, {}};
    event.message.Swap(&reading_);
    server_->push(std::move(event));
    bool again;
    {
        std::lock_guard<std::mutex> lock(mu);
        ++untaken_;
        again = !finishing() && untaken_ < UNTAKEN_MOST;  // a call being finished is read no more
        read_paused_ = !again && !finishing();
    }
    if (again) StartRead(&reading_);  // the read just done holds the call: it cannot have ended
}

void Stream::taken(int count) {
    std::unique_lock<std::mutex> lock(mu);
    untaken_ -= count;
    if (!read_paused_ || untaken_ >= UNTAKEN_MOST || reads_over_ || finishing()) return;
    read_paused_ = false;
    ++busy_;  // no Finish until the read is started
    lock.unlock();
    StartRead(&reading_);
    lock.lock();
    --busy_;
    finish_when_free_locked(lock);
}

size_t Stream::write(const char* data, size_t size) {
    std::unique_lock<std::mutex> lock(mu);
    if (finishing()) return 0;
    grpc::Slice slice(data, size);
    queued_.emplace_back(&slice, 1);
    size_t queued = queued_.size();
    if (!write_busy_) start_next_write_locked(lock);
    return queued;
}

void Stream::start_next_write_locked(std::unique_lock<std::mutex>& lock) {
    writing_.Swap(&queued_.front());
    queued_.pop_front();
    write_busy_ = true;  // no Finish until it is done
    lock.unlock();
    StartWrite(&writing_);
}

void Stream::OnWriteDone(bool ok) {
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
    finish_wanted_ = true;  // once what is queued is written (OnWriteDone)
    finish_status_ = std::move(status);
    finish_when_free_locked(lock);
}

void Stream::finish_when_free_locked(std::unique_lock<std::mutex>& lock) {
    if (!finish_wanted_ || finish_called_ || write_busy_ || busy_ > 0 || !queued_.empty()) return;
    finish_called_ = true;
    grpc::Status status = finish_status_;
    lock.unlock();
    Finish(std::move(status));
}

void Stream::cancel() {
    // a bot that does not read what it is sent: its last writes would wait for it for ever, and the call with them
    std::unique_lock<std::mutex> lock(mu);
    if (finish_called_) return;  // Finish is done or under way: the call ends without help
    ++busy_;  // the context lives until OnDone, which cannot come before Finish, held back meanwhile
    lock.unlock();
    context_->TryCancel();
    lock.lock();
    --busy_;
    finish_when_free_locked(lock);
}

void Stream::OnCancel() {
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

void Stream::OnDone() {
    server_->forget(id_);
    server_->push(Event{DONE, id_, {}, {}});
    bool now;
    {
        std::lock_guard<std::mutex> lock(mu);
        done_ = true;
        now = holds == 0;
    }
    if (now) delete this;
}

bool Stream::release() {
    std::lock_guard<std::mutex> lock(mu);
    --holds;
    return done_ && holds == 0;
}

// A call to another method: ended at once, as grpcio ends a call to a method it does not serve.
class Unimplemented final : public grpc::ServerGenericBidiReactor {
public:
    explicit Unimplemented(const std::string& method) {
        Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "Method not found: " + method));
    }
    void OnDone() override { delete this; }
};

grpc::ServerGenericBidiReactor* Service::CreateReactor(grpc::GenericCallbackServerContext* context) {
    if (context->method() != server_->method) return new Unimplemented(context->method());
    Stream* stream = new Stream(server_, context);
    stream->begin(server_->add(stream), context->peer());
    return stream;
}

// ------------------------------------------------------------------ Python

struct ServerObject {
    PyObject_HEAD
    NativeServer* native;
};

// Once per server, whoever calls first; the others return at once (while it may still be under way).
void shut_down(NativeServer* native, double grace_s) {
    if (native->shutting.exchange(true)) return;
    auto deadline = std::chrono::system_clock::now() +
                    std::chrono::microseconds(static_cast<int64_t>(grace_s * 1e6));
    native->server->Shutdown(deadline);  // cancels the calls still open at the deadline; returns when all are done
    native->server->Wait();
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
    builder.RegisterCallbackGenericService(&native->service_);
    grpc::ResourceQuota quota("arena-bots");
    quota.Resize(MEMORY_MOST);
    builder.SetResourceQuota(quota);
    Py_BEGIN_ALLOW_THREADS
    native->server = builder.BuildAndStart();
    Py_END_ALLOW_THREADS
    if (!native->server) {
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
            if (self->native->event_fd >= 0) ::close(self->native->event_fd);
            delete self->native;
        }  // else a shutdown begun elsewhere never returned (a frozen peer): its server is left as it is
    }
    Py_TYPE(self)->tp_free(reinterpret_cast<PyObject*>(self));
}

PyObject* server_take(ServerObject* self, PyObject*) {
    std::vector<Event> events = self->native->take();
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(events.size()));
    if (list == nullptr) return nullptr;
    // the messages taken, per stream: their reading goes on if it waited for Python (UNTAKEN_MOST)
    uint64_t last = 0;
    int run = 0;
    auto taken = [&](uint64_t stream, int count) {
        if (count == 0) return;
        Stream* held = self->native->hold(stream);
        if (held == nullptr) return;
        held->taken(count);
        NativeServer::let_go(held);
    };
    Py_ssize_t i = 0;
    for (Event& event : events) {
        PyObject* payload;
        if (event.kind == MESSAGE) {
            if (event.stream != last) {
                taken(last, run);
                last = event.stream;
                run = 0;
            }
            ++run;
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
                if (&rest > &event && rest.kind == MESSAGE) taken(rest.stream, 1);
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
    Stream* stream = self->native->hold(id);
    if (stream == nullptr) return PyLong_FromLong(0);
    size_t queued = stream->write(PyBytes_AS_STRING(args[1]), static_cast<size_t>(PyBytes_GET_SIZE(args[1])));
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

PyObject* server_shutdown(ServerObject* self, PyObject* args) {
    double grace_s;
    if (!PyArg_ParseTuple(args, "d", &grace_s)) return nullptr;
    Py_BEGIN_ALLOW_THREADS
    shut_down(self->native, grace_s);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

PyObject* server_fd(ServerObject* self, void*) { return PyLong_FromLong(self->native->event_fd); }
PyObject* server_port(ServerObject* self, void*) { return PyLong_FromLong(self->native->port); }

PyMethodDef server_methods[] = {
    {"take", reinterpret_cast<PyCFunction>(server_take), METH_NOARGS,
     "take() -> list of (kind, stream, payload): the events queued since the last take (kind OPENED: the peer; "
     "MESSAGE: its bytes; READS_ENDED, DONE: None)."},
    {"write", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(server_write)), METH_FASTCALL,
     "write(stream, data) -> the writes queued on the stream with this one (0: the stream is gone or finishing)."},
    {"finish", reinterpret_cast<PyCFunction>(server_finish), METH_VARARGS,
     "finish(stream, code, details): end the call with that status once its queued writes are sent."},
    {"cancel", reinterpret_cast<PyCFunction>(server_cancel), METH_O,
     "cancel(stream): end the call at once, unsent writes dropped (a bot that does not read its last messages)."},
    {"shutdown", reinterpret_cast<PyCFunction>(server_shutdown), METH_VARARGS,
     "shutdown(grace_s): stop listening; calls still open after grace_s are cancelled; returns when all are done."},
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
                      "One gRPC method served by gRPC's C++ library from its own threads (see the .cpp).", -1,
                      nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__native_server(void) {
    // gRPC's library stays initialized for the process's life: destroying its last server would otherwise shut
    // the whole library down, which joins its executor's threads and took 10 s now and then (the module is
    // imported only by a referee that serves with it: arena/transport/native_server.py)
    grpc_init();
    ServerType.tp_name = "arena.transport._native_server.Server";
    ServerType.tp_basicsize = sizeof(ServerObject);
    ServerType.tp_flags = Py_TPFLAGS_DEFAULT;
    ServerType.tp_doc = "Server(address, method, options): serves ``method`` on ``address`` from libgrpc++'s threads.";
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
    const char* names[] = {"OPENED", "MESSAGE", "READS_ENDED", "DONE"};
    for (int kind = OPENED; kind <= DONE; ++kind) PyModule_AddIntConstant(m, names[kind], kind);
    PyModule_AddIntConstant(m, "UNTAKEN_MOST", UNTAKEN_MOST);
    return m;
}
