// Sample arena bot in C++17. Speaks arena.v1 (proto/arena/v1/bot.proto) over one BotService.Play stream:
// Join -> Welcome -> (HandStart, ActionRequest -> Action, ..., HandEnd)* -> MatchEnd.
// The protobuf and gRPC code is generated from ../../proto at build time (CMakeLists.txt).
//
// One connection plays up to --max-tables tables at once (default 64; Join.max_tables): it keeps what it needs per
// table_id and answers every ActionRequest with an Action echoing its ids. With batches (the default; Join.batches)
// the referee packs every message that is ready in one RefereeBatch; the bot handles them in order and sends all the
// answers back in one ActionBatch. Against a referee that gives it one table and no batches, it plays as before.
//
// With a league's API key instead of a match token (--key, ARENA_KEY) it plays a league (`arena host`): one stream
// carries match after match (Welcome ... MatchEnd, again and again) and is not closed at a MatchEnd; when the host
// goes away (the stream breaks or ends) the bot joins again with the same key after 0.5 s, then twice as long each
// time up to 30 s (+-20%; back to 0.5 s after a stream that got a Welcome). It stops on a fatal Error (a revoked or
// replaced key, a kick), but for a rate limit, after which it joins again later.
//
// A match's stream that breaks before its MatchEnd (the referee's keepalive closed it while the process was stopped,
// the connection was cut) is joined again with the same token and the same Join, and play goes on: after 0.25 s,
// then twice as long after each failed try up to 5 s (+-20%), for at most 60 s after the break (--reconnect-s). The
// referee's MatchEnd and its fatal Errors (a bad token, a newer stream with the token) are never retried.
//
// Usage: arena-cpp-bot [--address HOST:PORT | --address unix:/path/to.sock] [--token TOKEN | --key KEY]
//                      [--name NAME] [--bot-version VERSION] [--max-tables N] [--no-batches] [--verbose]
//                      [--no-reconnect] [--reconnect-s SECONDS] [--strategy sample|call|random] [--seed N]
//                      [--think-ms MS]
//        (or ARENA_ADDRESS / ARENA_TOKEN / ARENA_KEY / ARENA_BOT_NAME / ARENA_BOT_VERSION / ARENA_MAX_TABLES /
//        ARENA_BATCHES=0 / ARENA_VERBOSE=1 / ARENA_RECONNECT=0 / ARENA_RECONNECT_S / ARENA_BOT_STRATEGY /
//        ARENA_BOT_SEED in the environment; arguments win, and a token wins over a key)
// --strategy picks how it plays: `sample` (the default: strategy.cpp's plan), `call` (the calling station: check
// when free, else call) or `random` (a uniform legal kind, a uniform legal raise; reproducible with --seed N, which
// draws each answer from the seed and the request's ids, like sample_bots/python/random_bot.py --seed N).
// --think-ms MS waits that long before each message's answers go out (0, the default: at once): a bot that takes its
// time, to watch a match at a person's pace, try the clock, or keep a league from playing thousands of matches.
// Logs go to stderr: the match, errors and rejections; every hand and decision only with --verbose. The last line
// is "cpp-bot: decisions=N bot_us_per_decision=X.XX" (the bot's own time from receiving a message to having written
// its answer, per decision). Exit status: 0 after MatchEnd (reconnects or not); 1 if the referee cannot be reached,
// the stream ends before MatchEnd and cannot be joined again, or the referee sends a fatal Error (in a league: only a
// fatal Error); 2 for bad usage (missing address or token, bad argument).

#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "arena/v1/bot.grpc.pb.h"
#include "strategy.hpp"

namespace v1 = arena::v1;

namespace {

constexpr std::uint32_t kProtocolVersion = 1;
constexpr const char* kBotVersion = "1.0.0";
constexpr const char* kDefaultName = "cpp-bot";
constexpr std::uint32_t kDefaultMaxTables = 64;
constexpr unsigned long kMaxTablesLimit = 100000;
constexpr unsigned long kMaxThinkMs = 600000;  // --think-ms: at most ten minutes
constexpr auto kConnectTimeout = std::chrono::seconds(10);
// After MatchEnd we close our side and wait this long for the referee to close its side.
constexpr auto kLinger = std::chrono::seconds(2);
// A league bot's waits before joining again: the first, doubled after each failed try up to the last, each +-20%.
constexpr double kReconnectFirstS = 0.5;
constexpr double kReconnectMaxS = 30.0;
// A match's stream that broke: the first wait before joining again, doubled after each failed try up to the most,
// each +-20%, for kDefaultReconnectS seconds after the break unless told otherwise (--reconnect-s).
constexpr double kRetryFirstS = 0.25;
constexpr double kRetryMaxS = 5.0;
constexpr double kDefaultReconnectS = 60.0;
// A batch of many full ActionRequests can pass gRPC's default 4 MB limit on what a client receives.
constexpr int kMaxReceiveBytes = 64 * 1024 * 1024;

void log(const std::string& message) { std::cerr << "[cpp-bot] " << message << std::endl; }

// How the bot plays (--strategy): the sample strategy of strategy.cpp, the calling station or the random bot.
enum class Style { kSample, kCall, kRandom };

struct Config {
  std::string address;
  std::string token;  // a match's token, or with `league` a league's API key
  bool league = false;
  std::string name;
  std::string version = kBotVersion;
  std::uint32_t max_tables = kDefaultMaxTables;
  bool batches = true;
  bool verbose = false;
  bool reconnect = true;  // join a match's broken stream again
  double reconnect_s = kDefaultReconnectS;  // for at most this long after the break
  Style style = Style::kSample;  // --strategy
  std::uint64_t seed = 0;        // the random style's seed (--seed; drawn at start when not given)
  std::uint32_t think_ms = 0;    // --think-ms: the wait before each message's answers
};

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string lower(std::string value) {
  for (char& ch : value) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return value;
}

// "0", "false", "no", "off" (any case) are false; anything else is true.
bool truthy(const std::string& value) {
  const std::string v = lower(value);
  return !(v == "0" || v == "false" || v == "no" || v == "off");
}

// Whether the value is one of the words a switch takes: 0/1, false/true, no/yes, off/on (any case).
bool switch_word(const std::string& value) {
  const std::string v = lower(value);
  for (const char* word : {"0", "1", "false", "true", "no", "yes", "off", "on"}) {
    if (v == word) return true;
  }
  return false;
}

constexpr const char* kUsage =
    "usage: arena-cpp-bot --address HOST:PORT (--token TOKEN | --key KEY) [--name NAME] [--bot-version VERSION] "
    "[--max-tables N] [--no-batches] [--verbose] [--no-reconnect] [--reconnect-s SECONDS] "
    "[--strategy sample|call|random] [--seed N] [--think-ms MS]";

// Reads the arguments (--flag value and --flag=value), then the environment. Returns an error message on bad usage.
std::optional<std::string> parse_config(int argc, char** argv, Config& config) {
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--no-batches" || arg == "--batches" || arg == "--verbose" || arg == "-v" || arg == "--no-reconnect") {
      args[arg == "-v" ? "verbose" : arg.substr(2)] = "1";
      continue;
    }
    std::string value;
    const auto eq = arg.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg != "--address" && arg != "--token" && arg != "--key" && arg != "--name" && arg != "--bot-version" &&
        arg != "--max-tables" && arg != "--reconnect-s" && arg != "--strategy" && arg != "--seed" &&
        arg != "--think-ms") {
      return "unknown argument " + arg + " (" + kUsage + ")";
    }
    if (!inline_value) {
      if (i + 1 >= argc) return arg + " needs a value";
      value = argv[++i];
    }
    args[arg.substr(2)] = value;
  }
  auto pick = [&args](const std::string& key, const char* env) {
    auto it = args.find(key);
    return it != args.end() && !it->second.empty() ? it->second : env_or_empty(env);
  };
  config.address = pick("address", "ARENA_ADDRESS");
  config.token = pick("token", "ARENA_TOKEN");
  if (config.token.empty()) {  // a match's token wins over a league's key
    config.token = pick("key", "ARENA_KEY");
    config.league = !config.token.empty();
  }
  const std::string version = pick("bot-version", "ARENA_BOT_VERSION");
  if (!version.empty()) config.version = version;
  config.name = pick("name", "ARENA_BOT_NAME");
  if (config.name.empty()) config.name = kDefaultName;
  for (const char* scheme : {"grpc://", "http://"}) {
    if (config.address.rfind(scheme, 0) == 0) config.address = config.address.substr(std::string(scheme).size());
  }
  const std::string tables = pick("max-tables", "ARENA_MAX_TABLES");
  if (!tables.empty()) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(tables.c_str(), &end, 10);
    if (!std::isdigit(static_cast<unsigned char>(tables[0])) || *end != '\0' || n < 1 || n > kMaxTablesLimit) {
      return "bad max tables '" + tables + "': a whole number from 1 to " + std::to_string(kMaxTablesLimit);
    }
    config.max_tables = static_cast<std::uint32_t>(n);
  }
  if (args.count("no-batches") != 0) {
    config.batches = false;
  } else if (args.count("batches") == 0 && !env_or_empty("ARENA_BATCHES").empty()) {
    config.batches = truthy(env_or_empty("ARENA_BATCHES"));
  }
  config.verbose = args.count("verbose") != 0 ||
                   (!env_or_empty("ARENA_VERBOSE").empty() && truthy(env_or_empty("ARENA_VERBOSE")));
  const std::string reconnect = env_or_empty("ARENA_RECONNECT");
  if (!reconnect.empty() && !switch_word(reconnect)) {
    return "bad ARENA_RECONNECT '" + reconnect + "': 1 (join again after a broken stream) or 0";
  }
  config.reconnect = args.count("no-reconnect") == 0 && (reconnect.empty() || truthy(reconnect));
  const std::string seconds = pick("reconnect-s", "ARENA_RECONNECT_S");
  if (!seconds.empty()) {
    char* end = nullptr;
    const double s = std::strtod(seconds.c_str(), &end);
    if (*end != '\0' || !(s > 0) || s > 1e9) {
      return "bad reconnect time '" + seconds + "' (--reconnect-s / ARENA_RECONNECT_S): seconds, more than 0";
    }
    config.reconnect_s = s;
  }
  const std::string style = lower(pick("strategy", "ARENA_BOT_STRATEGY"));
  if (style == "call") {
    config.style = Style::kCall;
  } else if (style == "random") {
    config.style = Style::kRandom;
  } else if (!style.empty() && style != "sample") {
    return "bad strategy '" + style + "' (--strategy / ARENA_BOT_STRATEGY): sample, call or random";
  }
  const std::string seed = pick("seed", "ARENA_BOT_SEED");
  if (!seed.empty()) {
    char* end = nullptr;
    config.seed = std::strtoull(seed.c_str(), &end, 10);
    if (!std::isdigit(static_cast<unsigned char>(seed[0])) || *end != '\0') {
      return "bad seed '" + seed + "' (--seed / ARENA_BOT_SEED): a whole number";
    }
  } else {
    config.seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }
  const std::string think = pick("think-ms", "ARENA_BOT_THINK_MS");
  if (!think.empty()) {
    char* end = nullptr;
    const unsigned long ms = std::strtoul(think.c_str(), &end, 10);
    if (!std::isdigit(static_cast<unsigned char>(think[0])) || *end != '\0' || ms > kMaxThinkMs) {
      return "bad think time '" + think + "' (--think-ms / ARENA_BOT_THINK_MS): milliseconds, 0 to " +
             std::to_string(kMaxThinkMs);
    }
    config.think_ms = static_cast<std::uint32_t>(ms);
  }
  if (config.address.empty()) {
    return "no referee address: pass --address HOST:PORT (or unix:/path/to.sock) or set ARENA_ADDRESS";
  }
  if (config.token.empty()) {
    return "no token: pass --token TOKEN or set ARENA_TOKEN for a match (the runner gives each bot its own), or "
           "--key KEY / ARENA_KEY for a league (arena bots add prints it)";
  }
  return std::nullopt;
}

std::string join_cards(const google::protobuf::RepeatedPtrField<std::string>& cards) {
  std::string out;
  for (const auto& c : cards) out += (out.empty() ? "" : " ") + c;
  return out;
}

std::string street_name(v1::Street street) {
  std::string name = v1::Street_Name(street);
  if (name.rfind("STREET_", 0) == 0) name = name.substr(7);
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name;
}

// The open request of a table: what we need to answer it again after an ActionRejected. At most one per table.
struct Pending {
  bool open = false;
  std::string hand_id;
  std::uint64_t request_id = 0;
  v1::LegalActions legal;
  std::uint32_t refused = 0;  // bit per ActionKind already refused for this request
  v1::ActionKind last_kind = v1::ACTION_KIND_UNSPECIFIED;
};

// What the bot keeps per table_id.
struct Table {
  int seat = -1;
  Pending pending;
};

std::string code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    default: return "status " + std::to_string(static_cast<int>(code));
  }
}

// "CODE: message" of a status, for the log.
std::string describe(const grpc::Status& status) {
  return code_name(status.error_code()) + (status.error_message().empty() ? "" : ": " + status.error_message());
}

// Whether a stream that ended with `code` (and without MatchEnd or a fatal Error) may be replaced by a new one: any
// failure but the statuses a new stream cannot change, where the referee refused this bot, its Join or what it sent
// (it sends a fatal Error first, which ends the match by itself; these cover an Error that was lost).
bool worth_a_new_stream(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
    case grpc::StatusCode::UNAUTHENTICATED:  // an unknown token
    case grpc::StatusCode::ALREADY_EXISTS:  // a newer stream joined with the token: that one plays
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::FAILED_PRECONDITION:  // an unsupported protocol version, or no Join first
    case grpc::StatusCode::INVALID_ARGUMENT:  // a message the referee could not read
    case grpc::StatusCode::UNIMPLEMENTED:
    case grpc::StatusCode::NOT_FOUND:
      return false;
    default:
      return true;
  }
}

double seconds_since(std::chrono::steady_clock::time_point then) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - then).count();
}

std::uint32_t kind_bit(v1::ActionKind kind) { return 1u << (static_cast<unsigned>(kind) & 31u); }

// Cancels the call if the referee has not closed the stream kLinger after MatchEnd.
class Linger {
 public:
  explicit Linger(grpc::ClientContext& context) : context_(context) {}
  ~Linger() { stop(); }
  Linger(const Linger&) = delete;
  Linger& operator=(const Linger&) = delete;

  void start() {
    if (thread_.joinable()) return;
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!cv_.wait_for(lock, kLinger, [this] { return done_; })) context_.TryCancel();
    });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  grpc::ClientContext& context_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

class Session {
 public:
  explicit Session(const Config& config) : config_(config) {
    out_ = batch_.mutable_actions()->mutable_actions();
    single_.mutable_action();
  }

  // The exit status a match's last stream calls for, said in the log: 0 after MatchEnd, 1 otherwise.
  int outcome(const grpc::Status& status) const {
    if (match_ended_) {
      log("stream closed after match end");
      return 0;
    }
    if (status.ok()) {
      log("the referee ended the stream before MatchEnd");
    } else {
      log("stream failed before MatchEnd: " + describe(status));
    }
    return 1;
  }

  // Whether a match's stream that ended with `status` broke on the way, so that a new one may take the seat back:
  // no MatchEnd, no fatal Error (a rate limit's aside), and a status other than a refusal (worth_a_new_stream).
  bool broken(const grpc::Status& status) const {
    return !config_.league && !match_ended_ && fatal_.empty() && worth_a_new_stream(status.error_code());
  }

  // Plays one stream to its end and returns its final status: a match's (closed by us after its MatchEnd) or, with
  // a league's key, one that carries match after match until the host ends it (closed by us only after a fatal
  // Error). What was learnt of the stream stays readable until the next one: welcomed(), matches(), fatal().
  // `broke_at`: for a stream that takes a match's seat back, when the one before broke.
  grpc::Status stream(v1::BotService::Stub& stub,
                      std::optional<std::chrono::steady_clock::time_point> broke_at = std::nullopt) {
    begin_stream();
    broke_at_ = broke_at;
    grpc::ClientContext context;
    auto stream = stub.Play(&context);
    Linger linger(context);
    stream_ = stream.get();

    v1::BotMessage join;
    auto* j = join.mutable_join();
    j->set_token(config_.token);
    j->set_bot_name(config_.name);
    j->set_bot_version(config_.version);
    j->set_protocol_version(kProtocolVersion);
    j->set_language("cpp");
    j->set_max_tables(config_.max_tables);
    j->set_batches(config_.batches);
    if (!stream->Write(join)) log("could not send Join: the stream is already closed");

    v1::RefereeMessage message;  // reused: the messages inside keep their allocations where protobuf allows
    bool half_closed = false;
    while (stream->Read(&message)) {
      const auto received = std::chrono::steady_clock::now();
      ++messages_in_;
      if (message.msg_case() == v1::RefereeMessage::kBatch) {
        inner_in_ += static_cast<std::uint64_t>(message.batch().messages_size());
        for (const auto& m : message.batch().messages()) handle(m);
      } else {
        handle(message);
      }
      if (out_->size() > 0) {
        flush();
        busy_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - received)
                        .count();
      }
      // A match's stream is over at its MatchEnd; a league's stays open for the next match, unless the host
      // said it ends it (then it closes the stream itself, or we do after kLinger).
      if (!half_closed && (config_.league ? !fatal_.empty() : match_ended_)) {
        stream->WritesDone();  // we have nothing more to say
        half_closed = true;
        linger.start();
      }
    }
    linger.stop();
    const grpc::Status status = stream->Finish();
    stream_ = nullptr;
    log("received " + std::to_string(messages_in_) + " messages (" + std::to_string(inner_in_) +
        " inside batches), sent " + std::to_string(messages_out_) + " answering " +
        std::to_string(decisions_ - decisions_before_) + " requests");
    return status;
  }

  bool welcomed() const { return welcomed_; }
  bool asked() const { return decisions_ > decisions_before_; }  // an ActionRequest came on this stream
  std::uint64_t matches() const { return matches_; }
  const std::string& fatal() const { return fatal_; }

  // "cpp-bot: decisions=N bot_us_per_decision=X.XX", for benchmarks.
  std::string summary() const {
    char line[128];
    const double us = decisions_ == 0 ? 0.0 : static_cast<double>(busy_ns_) / 1000.0 / static_cast<double>(decisions_);
    std::snprintf(line, sizeof line, "cpp-bot: decisions=%llu bot_us_per_decision=%.2f",
                  static_cast<unsigned long long>(decisions_), us);
    return line;
  }

 private:
  // A new stream starts with nothing known; decisions_ and busy_ns_ add up over streams, for summary().
  void begin_stream() {
    tables_.clear();
    batches_ = false;
    match_ended_ = false;
    welcomed_ = false;
    fatal_.clear();
    playing_.clear();
    matches_ = 0;
    messages_in_ = inner_in_ = messages_out_ = 0;
    decisions_before_ = match_decisions_from_ = decisions_;
  }

  Table& table(const std::string& table_id) { return tables_[table_id]; }

  // Queues an action; flush() sends what is queued once the referee's message has been handled.
  void queue(const std::string& table_id, const Pending& pending, const arena_bot::Decision& decision) {
    v1::Action* a = out_->Add();  // reuses a cleared Action (and its strings' buffers) when there is one
    a->set_table_id(table_id);
    a->set_hand_id(pending.hand_id);
    a->set_request_id(pending.request_id);
    a->set_kind(decision.kind);
    a->set_amount(decision.kind == v1::ACTION_KIND_RAISE ? decision.amount : 0);
    if (decision.comment != nullptr) a->set_comment(decision.comment);  // why, for the records only
  }

  // With batches, every queued action in one ActionBatch; without, one Action per message. --think-ms first.
  void flush() {
    if (config_.think_ms > 0 && !out_->empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(config_.think_ms));
    }
    if (batches_) {
      ++messages_out_;
      if (!stream_->Write(batch_)) log("could not send the actions: the stream is closed");
    } else {
      for (auto& action : *out_) {
        ++messages_out_;
        single_.mutable_action()->Swap(&action);
        if (!stream_->Write(single_)) log("could not send the action: the stream is closed");
      }
    }
    out_->Clear();  // keeps the Action objects for the next message
  }

  void on_action_request(const v1::ActionRequest& request) {
    const arena_bot::Decision decision = config_.style == Style::kCall     ? arena_bot::decide_call(request.legal())
                                         : config_.style == Style::kRandom ? arena_bot::decide_random(request, config_.seed)
                                                                           : arena_bot::decide(request);
    Table& t = table(request.table_id());
    Pending& pending = t.pending;
    pending.open = true;
    pending.hand_id.assign(request.hand_id());
    pending.request_id = request.request_id();
    pending.legal.CopyFrom(request.legal());
    pending.refused = 0;
    pending.last_kind = decision.kind;
    ++decisions_;
    if (config_.verbose) {
      log("table " + request.table_id() + " hand " + request.hand_id() + " " + street_name(request.street()) + " [" +
          join_cards(request.hole_cards()) + "] board [" + join_cards(request.board()) + "] -> " +
          arena_bot::describe(decision));
    }
    queue(request.table_id(), pending, decision);
  }

  void on_action_rejected(const v1::ActionRejected& rejected) {
    log("action rejected on table " + rejected.table_id() + " (" + rejected.rule() + "): " + rejected.message() +
        "; " + std::to_string(rejected.retries_left()) + " retries left");
    auto it = tables_.find(rejected.table_id());
    if (it == tables_.end() || !it->second.pending.open || it->second.pending.request_id != rejected.request_id() ||
        it->second.pending.hand_id != rejected.hand_id()) {
      log("rejection for a request we do not know; ignored");
      return;
    }
    Pending& pending = it->second.pending;
    pending.refused |= kind_bit(pending.last_kind);
    std::set<v1::ActionKind> refused;
    for (int k = v1::ActionKind_MIN; k <= v1::ActionKind_MAX; ++k) {
      if (v1::ActionKind_IsValid(k) && (pending.refused & kind_bit(static_cast<v1::ActionKind>(k))) != 0) {
        refused.insert(static_cast<v1::ActionKind>(k));
      }
    }
    const auto retry = arena_bot::retry_action(pending.legal, refused);
    if (!retry) {
      log("nothing left to try; the referee will act for us");
      pending.open = false;
      return;
    }
    pending.last_kind = retry->kind;
    log("retrying with " + arena_bot::describe(*retry));
    queue(it->first, pending, *retry);
  }

  void handle(const v1::RefereeMessage& message) {
    switch (message.msg_case()) {
      case v1::RefereeMessage::kWelcome: {
        const auto& w = message.welcome();
        if (config_.league) {
          // A league's next match: forget the last one's tables (unless another match is still being played).
          if (playing_.empty()) {
            tables_.clear();
            match_decisions_from_ = decisions_;
          }
          playing_.insert(w.match_id());
          match_ended_ = false;
        }
        welcomed_ = true;
        table(w.table_id()).seat = w.seat();
        batches_ = config_.batches && w.batches();
        if (broke_at_) {
          char after[32];
          std::snprintf(after, sizeof after, "%.1f", seconds_since(*broke_at_));
          log("reconnected: rejoined match " + w.match_id() + " table " + w.table_id() + " as seat " +
              std::to_string(w.seat()) + " " + after + " s after the stream broke");
          break;
        }
        const auto& c = w.config();
        std::ostringstream line;
        line << "joined match " << w.match_id() << " table " << w.table_id() << " as seat " << w.seat() << ": "
             << c.num_seats() << " seats, " << v1::Structure_Name(c.structure()) << ", blinds " << c.small_blind()
             << "/" << c.big_blind() << ", stack " << c.starting_stack() << ", " << w.hands_total() << " hands, "
             << std::max<std::uint32_t>(w.tables(), 1) << " tables at once (asked " << config_.max_tables << "), "
             << (batches_ ? "batches" : "no batches");
        log(line.str());
        break;
      }
      case v1::RefereeMessage::kHandStart: {
        const auto& h = message.hand_start();
        table(h.table_id()).seat = h.seat();
        if (config_.verbose) {
          log("table " + h.table_id() + " hand " + h.hand_id() + " (#" + std::to_string(h.hand_number()) + ") seat " +
              std::to_string(h.seat()) + " button " + std::to_string(h.button()) + " cards [" +
              join_cards(h.hole_cards()) + "]");
        }
        break;
      }
      case v1::RefereeMessage::kActionRequest:
        on_action_request(message.action_request());
        break;
      case v1::RefereeMessage::kActionRejected:
        on_action_rejected(message.action_rejected());
        break;
      case v1::RefereeMessage::kHandEnd: {
        const auto& h = message.hand_end();
        Table& t = table(h.table_id());
        if (t.pending.open && t.pending.hand_id == h.hand_id()) t.pending.open = false;
        if (config_.verbose) {
          std::string net = "?";
          for (const auto& p : h.payoffs()) {
            if (p.seat() == t.seat) net = std::to_string(p.net());
          }
          log("table " + h.table_id() + " hand " + h.hand_id() + " over: board [" + join_cards(h.board()) + "], net " +
              net);
        }
        // A league's table ids are new in every match, and its matches may overlap on one stream (then no Welcome
        // finds it idle to clear them): drop a table once its hand is over, so that they do not pile up.
        if (config_.league && !t.pending.open) tables_.erase(h.table_id());
        break;
      }
      case v1::RefereeMessage::kMatchEnd: {
        const auto& m = message.match_end();
        match_ended_ = true;
        ++matches_;
        if (config_.league) {
          playing_.erase(m.match_id());
          std::string others;
          std::string mine = "no result of ours";
          for (const auto& r : m.results()) {
            if (r.is_you()) {
              mine = "net " + std::to_string(r.net_chips()) + " over " + std::to_string(r.hands_played()) +
                     " hands, " + std::to_string(r.violations()) + " violations" + (r.forfeited() ? ", forfeited" : "");
            } else {
              others += (others.empty() ? "" : ", ") + r.name();
            }
          }
          log("match " + m.match_id() + " against " + (others.empty() ? "?" : others) + " over (" +
              v1::MatchEndReason_Name(m.reason()) + ")" + (m.message().empty() ? "" : ": " + m.message()) + "; " +
              mine + "; answered " + std::to_string(decisions_ - match_decisions_from_) + " requests; " +
              std::to_string(matches_) + " match(es) on this stream; waiting for the next one");
          break;
        }
        log("match " + m.match_id() + " over (" + v1::MatchEndReason_Name(m.reason()) + ")" +
            (m.message().empty() ? "" : ": " + m.message()));
        for (const auto& r : m.results()) {
          log(std::string("  ") + (r.is_you() ? "*" : " ") + " seat " + std::to_string(r.seat()) + " " + r.name() +
              ": net " + std::to_string(r.net_chips()) + " over " + std::to_string(r.hands_played()) + " hands, " +
              std::to_string(r.violations()) + " violations" + (r.forfeited() ? ", forfeited" : ""));
        }
        break;
      }
      case v1::RefereeMessage::kError: {
        const auto& e = message.error();
        log("referee error " + v1::ErrorCode_Name(e.code()) + (e.rule().empty() ? "" : " (" + e.rule() + ")") + ": " +
            e.message() + (e.table_id().empty() ? "" : " [table " + e.table_id() + "]") +
            (e.fatal() ? " [fatal]" : ""));
        // A rate limit only ends this stream: a league bot joins again later (proto/README.md).
        if (e.fatal() && e.code() != v1::ERROR_CODE_RATE_LIMITED) {
          fatal_ = v1::ErrorCode_Name(e.code()) + ": " + e.message();
        }
        if (e.request_id() != 0) {
          auto it = tables_.find(e.table_id());
          if (it != tables_.end() && it->second.pending.request_id == e.request_id()) it->second.pending.open = false;
        }
        break;
      }
      case v1::RefereeMessage::kBatch:  // never nested
        for (const auto& m : message.batch().messages()) handle(m);
        break;
      default:
        log("ignoring a message of a kind this bot does not know");
    }
  }

  const Config& config_;
  std::optional<std::chrono::steady_clock::time_point> broke_at_;  // see stream()
  grpc::ClientReaderWriter<v1::BotMessage, v1::RefereeMessage>* stream_ = nullptr;
  std::unordered_map<std::string, Table> tables_;
  bool batches_ = false;  // what the Welcome granted
  bool match_ended_ = false;  // a MatchEnd came (in a league: and no Welcome since)
  bool welcomed_ = false;  // a Welcome came on this stream
  std::string fatal_;  // the fatal Error the referee sent on this stream ("CODE: message"), if any but a rate limit
  std::set<std::string> playing_;  // a league's matches welcomed and not ended yet on this stream
  std::uint64_t matches_ = 0;  // MatchEnds on this stream
  // The outgoing messages, reused for every answer.
  v1::BotMessage batch_;
  v1::BotMessage single_;
  google::protobuf::RepeatedPtrField<v1::Action>* out_ = nullptr;  // the actions queued, inside batch_
  std::uint64_t decisions_ = 0;  // over every stream
  std::uint64_t decisions_before_ = 0;  // decisions_ when this stream began
  std::uint64_t match_decisions_from_ = 0;  // decisions_ when this match began (a league's)
  std::int64_t busy_ns_ = 0;  // from receiving a message to having written its answers, summed
  std::uint64_t messages_in_ = 0;
  std::uint64_t inner_in_ = 0;
  std::uint64_t messages_out_ = 0;
};

std::shared_ptr<grpc::Channel> make_channel(const std::string& address) {
  grpc::ChannelArguments args;
  // Notice a dead connection while waiting for our turn; pings only while the Play call is open.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
  // Retry quickly while the referee is not up yet (it may start a moment after the bot).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// Plays a league with the API key in config.token: one stream after another, until the host ends one with a fatal
// Error (then 1). Between streams (and failed tries to reach the host) it waits kReconnectFirstS, twice as long
// each time up to kReconnectMaxS, +-20%; a stream that got a Welcome starts the waits afresh.
int play_league(const Config& config, Session& session) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.8, 1.2);  // the bots of a restarted host do not return at once
  double backoff = kReconnectFirstS;
  std::uint64_t matches = 0;
  for (;;) {
    log("joining the league at " + config.address + " as " + config.name);
    std::string why;
    auto channel = make_channel(config.address);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + kConnectTimeout)) {
      why = "cannot reach the league at " + config.address + " within 10 s";
    } else {
      auto stub = v1::BotService::NewStub(channel);
      const grpc::Status status = session.stream(*stub);
      matches += session.matches();
      if (!session.fatal().empty()) {
        log("the league ended this bot's stream: " + session.fatal() + " (" + std::to_string(matches) +
            " matches played); exiting");
        return 1;
      }
      if (session.welcomed()) backoff = kReconnectFirstS;  // it was playing: the host just went away
      why = status.ok() ? std::string("the host ended the stream")
                        : "the stream ended: " + code_name(status.error_code()) +
                              (status.error_message().empty() ? "" : ": " + status.error_message());
    }
    const double wait = backoff * jitter(rng);
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", wait);
    log(why + " (" + std::to_string(matches) + " matches played); joining again in " + seconds + " s");
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    backoff = std::min(kReconnectMaxS, backoff * 2);
  }
}

// Plays a match: one stream, and after each that breaks before MatchEnd (see Session::broken) new ones with the same
// Join, kRetryFirstS after the break, then twice as long after each failed try up to kRetryMaxS (+-20%), for at most
// config.reconnect_s seconds, until a stream plays on (welcomed and asked to act, or told MatchEnd; played to its end)
// or ends for good. A stream that breaks again before any request is one more failed try, so that a referee that
// welcomes and then fails every stream is not tried forever. No wait for the channel between tries: while the referee
// is away a new call fails at once (UNAVAILABLE), which is one more try. The exit status.
int play_match(const Config& config, Session& session) {
  auto channel = make_channel(config.address);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + kConnectTimeout)) {
    log("cannot reach the referee at " + config.address + " within 10 s");
    return 1;
  }
  auto stub = v1::BotService::NewStub(channel);
  grpc::Status status = session.stream(*stub);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g", config.reconnect_s);
  while (session.broken(status)) {
    std::string why = describe(status);
    if (!config.reconnect) {
      log("the stream broke before MatchEnd (" + why + "); not joining again: reconnecting is off (--no-reconnect, "
          "ARENA_RECONNECT=0)");
      return 1;
    }
    const auto broke_at = std::chrono::steady_clock::now();
    log("the stream broke before MatchEnd (" + why + "); reconnecting with the same token: first after 0.25 s, then "
        "twice as long each time up to 5 s, for at most " + bound + " s");
    double wait = kRetryFirstS;
    int tries = 0;
    bool done = false;
    for (;;) {
      double left = config.reconnect_s - seconds_since(broke_at);
      if (left <= 0) break;
      const double pause = wait * jitter(rng);
      // a try made at the end of the time allowed is the last one (a clock that read a hair short after the sleep
      // once let one more try in after it)
      const bool final = pause >= left;
      std::this_thread::sleep_for(std::chrono::duration<double>(final ? left : pause));
      wait = std::min(kRetryMaxS, wait * 2);
      ++tries;
      status = session.stream(*stub, broke_at);
      if (!session.broken(status) || (session.welcomed() && session.asked())) {
        done = true;
        break;
      }
      why = describe(status);
      log("reconnect try " + std::to_string(tries) + " failed (" + why + ")" +
          (session.welcomed() ? ": it broke again before any request" : ""));
      if (final) break;
    }
    if (!done) {
      log("the stream broke before MatchEnd and " + std::to_string(tries) + " tries to join again in " + bound +
          " s failed (last: " + why + "); exiting");
      return 1;
    }
  }
  return session.outcome(status);
}

}  // namespace

int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, so every lock of gRPC's mutexes walked Abseil's deadlock graph (a global
  // lock and a hash lookup each): off, as in a release build.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  Config config;
  if (auto error = parse_config(argc, argv, config)) {
    log(*error);
    return 2;
  }
  log("connecting to " + config.address + " as " + config.name +
      (config.league ? " to play a league with an API key" : ""));
  if (config.league) {
    Session session(config);
    const int status = play_league(config, session);
    std::cerr << session.summary() << std::endl;
    return status;
  }
  Session session(config);
  const int status = play_match(config, session);
  std::cerr << session.summary() << std::endl;
  return status;
}
