// The transport's ceiling for bench_transport.py: a C++ gRPC BotService (the synchronous API, libgrpc++) that does
// nothing but ask. It welcomes each bot that joins, waits for all of them, then sends N ActionRequests to the bots in
// turn, one at a time (the next only once the last was answered, as at one heads-up table), and prints the requests
// and the seconds they took. Usage: transport_server PORT N (one|two).
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "arena/v1/bot.grpc.pb.h"

namespace v1 = arena::v1;

static long total = 0;
static int players = 1;
static std::mutex mu;
static std::condition_variable changed;
static std::vector<grpc::ServerReaderWriter<v1::RefereeMessage, v1::BotMessage>*> streams;
static bool over = false;

// The last bot to join drives every stream from its own handler's thread (the others' handlers wait for the end):
// a request, its answer, the next bot's request, its answer..., so nothing but the two bots' round trips is timed.
static void drive() {
  v1::RefereeMessage message;
  auto* request = message.mutable_action_request();
  request->set_table_id("t");
  request->set_hand_id("h");
  request->add_hole_cards("As");
  request->add_hole_cards("Kd");
  request->mutable_legal()->set_can_fold(true);
  request->mutable_legal()->set_can_call(true);
  request->mutable_legal()->set_call_amount(50);
  v1::BotMessage in;
  auto started = std::chrono::steady_clock::now();
  long asked = 0;
  while (asked < total) {
    auto* stream = streams[asked % players];
    request->set_seat(static_cast<int>(asked % players));
    request->set_request_id(++asked);
    if (!stream->Write(message) || !stream->Read(&in)) break;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%ld %.6f\n", asked, seconds);
  std::fflush(stdout);
}

class Asker final : public v1::BotService::Service {
  grpc::Status Play(grpc::ServerContext*, grpc::ServerReaderWriter<v1::RefereeMessage, v1::BotMessage>* stream) override {
    v1::BotMessage in;
    if (!stream->Read(&in)) return grpc::Status::OK;  // the Join
    v1::RefereeMessage welcome;
    auto* w = welcome.mutable_welcome();
    w->set_match_id("ceiling");
    w->set_table_id("t");
    w->set_protocol_version(1);
    w->set_tables(1);
    w->set_hands_total(1000000);
    std::unique_lock<std::mutex> lock(mu);
    w->set_seat(static_cast<int>(streams.size()));
    stream->Write(welcome);
    streams.push_back(stream);
    if (static_cast<int>(streams.size()) == players) {
      lock.unlock();
      drive();
      lock.lock();
      over = true;
      changed.notify_all();
    } else {
      changed.wait(lock, [] { return over; });
    }
    return grpc::Status::OK;
  }
};

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: transport_server PORT N (one|two)\n");
    return 2;
  }
  total = std::atol(argv[2]);
  players = std::string(argv[3]) == "two" ? 2 : 1;
  Asker asker;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(std::string("127.0.0.1:") + argv[1], grpc::InsecureServerCredentials());
  builder.RegisterService(&asker);
  // a thread per stream beside the pollers (the default two pollers leave two blocked streams none)
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 2);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 8);
  auto server = builder.BuildAndStart();
  server->Wait();
}
