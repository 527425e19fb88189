// Sample arena bot in C++17. Speaks arena.v1 (proto/arena/v1/bot.proto) over one BotService.Play stream:
// Join -> Welcome -> (HandStart, ActionRequest -> Action, ..., HandEnd)* -> MatchEnd.
// The protobuf and gRPC code is generated from ../../proto at build time (CMakeLists.txt).
//
// Usage: arena-cpp-bot [--address HOST:PORT | --address unix:/path/to.sock] [--token TOKEN] [--name NAME]
//        (or ARENA_ADDRESS / ARENA_TOKEN / ARENA_BOT_NAME in the environment; arguments win)
// Logs go to stderr. Exit status: 0 after MatchEnd; 1 if the referee cannot be reached, the stream ends before
// MatchEnd or the referee sends a fatal Error; 2 for bad usage (missing address or token).

#include <grpcpp/grpcpp.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "arena/v1/bot.grpc.pb.h"
#include "strategy.hpp"

namespace v1 = arena::v1;

namespace {

constexpr std::uint32_t kProtocolVersion = 1;
constexpr const char* kBotVersion = "1.0.0";
constexpr const char* kDefaultName = "cpp-bot";
constexpr auto kConnectTimeout = std::chrono::seconds(10);
// After MatchEnd we close our side and wait this long for the referee to close its side.
constexpr auto kLinger = std::chrono::seconds(2);

void log(const std::string& message) { std::cerr << "[cpp-bot] " << message << std::endl; }

struct Config {
  std::string address;
  std::string token;
  std::string name;
};

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// Reads --address/--token/--name (also --flag=value), then the environment. Returns an error message on bad usage.
std::optional<std::string> parse_config(int argc, char** argv, Config& config) {
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg == "--address" || arg == "--token" || arg == "--name") {
      if (i + 1 >= argc) return arg + " needs a value";
      value = argv[++i];
    }
    if (arg != "--address" && arg != "--token" && arg != "--name") {
      return "unknown argument " + arg + " (usage: arena-cpp-bot --address HOST:PORT --token TOKEN [--name NAME])";
    }
    args[arg.substr(2)] = value;
  }
  auto pick = [&args](const std::string& key, const char* env) {
    auto it = args.find(key);
    return it != args.end() && !it->second.empty() ? it->second : env_or_empty(env);
  };
  config.address = pick("address", "ARENA_ADDRESS");
  config.token = pick("token", "ARENA_TOKEN");
  config.name = pick("name", "ARENA_BOT_NAME");
  if (config.name.empty()) config.name = kDefaultName;
  for (const char* scheme : {"grpc://", "http://"}) {
    if (config.address.rfind(scheme, 0) == 0) config.address = config.address.substr(std::string(scheme).size());
  }
  if (config.address.empty()) {
    return "no referee address: pass --address HOST:PORT (or unix:/path/to.sock) or set ARENA_ADDRESS";
  }
  if (config.token.empty()) return "no token: pass --token TOKEN or set ARENA_TOKEN";
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

std::string request_key(const std::string& table_id, const std::string& hand_id, std::uint64_t request_id) {
  return table_id + "/" + hand_id + "/" + std::to_string(request_id);
}

// A request we answered and may have to answer again after an ActionRejected.
struct Pending {
  v1::ActionRequest request;
  std::set<v1::ActionKind> refused;
  v1::ActionKind last_kind = v1::ACTION_KIND_UNSPECIFIED;
};

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
  explicit Session(const Config& config) : config_(config) {}

  int run(v1::BotService::Stub& stub) {
    grpc::ClientContext context;
    auto stream = stub.Play(&context);
    Linger linger(context);
    stream_ = stream.get();

    v1::BotMessage join;
    auto* j = join.mutable_join();
    j->set_token(config_.token);
    j->set_bot_name(config_.name);
    j->set_bot_version(kBotVersion);
    j->set_protocol_version(kProtocolVersion);
    j->set_language("cpp");
    if (!stream->Write(join)) log("could not send Join: the stream is already closed");

    v1::RefereeMessage message;
    bool half_closed = false;
    while (stream->Read(&message)) {
      handle(message);
      if (match_ended_ && !half_closed) {
        stream->WritesDone();  // we have nothing more to say
        half_closed = true;
        linger.start();
      }
    }
    linger.stop();
    const grpc::Status status = stream->Finish();
    stream_ = nullptr;
    if (match_ended_) {
      log("stream closed after match end");
      return 0;
    }
    if (status.ok()) {
      log("the referee ended the stream before MatchEnd");
    } else {
      log("stream failed before MatchEnd: " + code_name(status.error_code()) +
          (status.error_message().empty() ? "" : ": " + status.error_message()));
    }
    return 1;
  }

 private:
  static std::string code_name(grpc::StatusCode code) {
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

  void send(const v1::ActionRequest& request, const arena_bot::Decision& decision) {
    v1::BotMessage out;
    auto* a = out.mutable_action();
    a->set_table_id(request.table_id());
    a->set_hand_id(request.hand_id());
    a->set_request_id(request.request_id());
    a->set_kind(decision.kind);
    a->set_amount(decision.kind == v1::ACTION_KIND_RAISE ? decision.amount : 0);
    if (!stream_->Write(out)) log("could not send the action: the stream is closed");
  }

  void on_action_request(const v1::ActionRequest& request) {
    const arena_bot::Decision decision = arena_bot::decide(request);
    Pending& pending = open_[request_key(request.table_id(), request.hand_id(), request.request_id())];
    pending.request = request;
    pending.refused.clear();
    pending.last_kind = decision.kind;
    log("hand " + request.hand_id() + " " + street_name(request.street()) + " [" + join_cards(request.hole_cards()) +
        "] board [" + join_cards(request.board()) + "] -> " + arena_bot::describe(decision));
    send(request, decision);
  }

  void on_action_rejected(const v1::ActionRejected& rejected) {
    log("action rejected (" + rejected.rule() + "): " + rejected.message() + "; " +
        std::to_string(rejected.retries_left()) + " retries left");
    auto it = open_.find(request_key(rejected.table_id(), rejected.hand_id(), rejected.request_id()));
    if (it == open_.end()) {
      log("rejection for a request we do not know; ignored");
      return;
    }
    Pending& pending = it->second;
    pending.refused.insert(pending.last_kind);
    const auto retry = arena_bot::retry_action(pending.request.legal(), pending.refused);
    if (!retry) {
      log("nothing left to try; the referee will act for us");
      open_.erase(it);
      return;
    }
    pending.last_kind = retry->kind;
    log("retrying with " + arena_bot::describe(*retry));
    send(pending.request, *retry);
  }

  void forget_hand(const std::string& table_id, const std::string& hand_id) {
    const std::string prefix = table_id + "/" + hand_id + "/";
    for (auto it = open_.begin(); it != open_.end();) {
      it = it->first.rfind(prefix, 0) == 0 ? open_.erase(it) : std::next(it);
    }
  }

  void handle(const v1::RefereeMessage& message) {
    switch (message.msg_case()) {
      case v1::RefereeMessage::kWelcome: {
        const auto& w = message.welcome();
        seat_ = w.seat();
        const auto& c = w.config();
        std::ostringstream line;
        line << "joined match " << w.match_id() << " table " << w.table_id() << " as seat " << seat_ << ": "
             << c.num_seats() << " seats, " << v1::Structure_Name(c.structure()) << ", blinds " << c.small_blind()
             << "/" << c.big_blind() << ", stack " << c.starting_stack() << ", " << w.hands_total() << " hands";
        log(line.str());
        break;
      }
      case v1::RefereeMessage::kHandStart: {
        const auto& h = message.hand_start();
        seat_ = h.seat();
        log("hand " + h.hand_id() + " (#" + std::to_string(h.hand_number()) + ") seat " + std::to_string(h.seat()) +
            " button " + std::to_string(h.button()) + " cards [" + join_cards(h.hole_cards()) + "]");
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
        forget_hand(h.table_id(), h.hand_id());
        std::string net = "?";
        for (const auto& p : h.payoffs()) {
          if (p.seat() == seat_) net = std::to_string(p.net());
        }
        log("hand " + h.hand_id() + " over: board [" + join_cards(h.board()) + "], net " + net);
        break;
      }
      case v1::RefereeMessage::kMatchEnd: {
        const auto& m = message.match_end();
        match_ended_ = true;
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
            e.message() + (e.fatal() ? " [fatal]" : ""));
        if (e.request_id() != 0) open_.erase(request_key(e.table_id(), e.hand_id(), e.request_id()));
        break;
      }
      default:
        log("ignoring a message of a kind this bot does not know");
    }
  }

  const Config& config_;
  grpc::ClientReaderWriter<v1::BotMessage, v1::RefereeMessage>* stream_ = nullptr;
  std::map<std::string, Pending> open_;
  int seat_ = -1;
  bool match_ended_ = false;
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
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (auto error = parse_config(argc, argv, config)) {
    log(*error);
    return 2;
  }
  log("connecting to " + config.address + " as " + config.name);
  auto channel = make_channel(config.address);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + kConnectTimeout)) {
    log("cannot reach the referee at " + config.address + " within 10 s");
    return 1;
  }
  auto stub = v1::BotService::NewStub(channel);
  Session session(config);
  return session.run(*stub);
}
